"""What a lead's bulk decisions store, field by field.

``approve_agreed`` and ``decide_flagged`` write their decisions, audit events and
statuses through ``reviewer.adjudication.store_bulk_decisions``;
each stores exactly what it stored before they shared it.
"""

from __future__ import annotations

from helpers import item_status, store_decision, store_item, store_judgment, store_person
from sqlmodel import col, select

from db.audit import read_audit
from db.decisions import latest_decision, newest_decisions
from db.engine import Database
from db.models import Decision, Item
from db.settings import set_setting
from db.vocabulary import Role
from reviewer.adjudication import approve_agreed, undo_decision
from reviewer.flag_decisions import decide_flagged


def test_bulk_decisions_store_each_path_s_decision_audit_and_status(database: Database) -> None:
    store_person(database, "lena", Role.LEAD)
    with database.transaction() as session:
        set_setting(session, "overlap", "1")
    store_item(database, "o:1", key="ABCD")
    store_judgment(database, "o:1", "alice", "ABCD")  # one keep with the key: agreed
    store_item(database, "o:2", key="ABCD", prompt="Order the events in the following table.")
    store_item(database, "o:3", key="BCDA", prompt="Order the events in <b>bold</b>.")

    assert approve_agreed(database, "lena") == 1
    assert decide_flagged(database, "lena", "needs-media", "rejected", reason="flawed") == ["o:2"]
    assert decide_flagged(database, "lena", "html", "approved", comment="  fine  ") == ["o:3"]

    with database.session() as session:
        decisions = session.exec(select(Decision).order_by(col(Decision.id))).all()
        events = read_audit(session, actions=["decide"])
    assert [
        (d.item_id, d.status, d.revision_number, d.final_key, d.reason, d.comment)
        for d in decisions
    ] == [
        ("o:1", "approved", 1, "ABCD", None, "approved as agreed"),
        ("o:2", "rejected", 1, None, "flawed", "decided for the flag needs-media"),
        ("o:3", "approved", 1, "BCDA", None, "fine"),
    ]
    assert len({d.lead_id for d in decisions}) == 1
    assert [(e.actor, e.target, e.changes) for e in events] == [
        (
            "lena",
            "o:1",
            {
                "status": "approved",
                "revision": 1,
                "final_key": "ABCD",
                "previous_status": "agreed",
                "bulk": True,
            },
        ),
        (
            "lena",
            "o:2",
            {
                "status": "rejected",
                "revision": 1,
                "final_key": None,
                "reason": "flawed",
                "previous_status": "pending",
                "bulk": True,
                "flag": "needs-media",
            },
        ),
        (
            "lena",
            "o:3",
            {
                "status": "approved",
                "revision": 1,
                "final_key": "BCDA",
                "reason": None,
                "previous_status": "pending",
                "bulk": True,
                "flag": "html",
            },
        ),
    ]
    # the keys in the order they were always stored (``vetbench audit`` lists them so)
    assert [list(e.changes) for e in events] == [
        ["status", "revision", "final_key", "previous_status", "bulk"],
        ["status", "revision", "final_key", "reason", "previous_status", "bulk", "flag"],
        ["status", "revision", "final_key", "reason", "previous_status", "bulk", "flag"],
    ]
    assert [item_status(database, item) for item in ("o:1", "o:2", "o:3")] == [
        "approved",
        "rejected",
        "approved",
    ]


def test_newest_decisions_give_each_item_s_newest_decision_not_undone(database: Database) -> None:
    """What ``latest_decision`` gives one item, for many at once: the status rule's input."""
    for item_id in ("o:1", "o:2", "o:3", "o:4"):
        store_item(database, item_id, key="ABCD")
    store_decision(database, "o:4", "lena", "approved", "ABCD")  # not asked about
    store_decision(database, "o:1", "lena", "approved", "ABCD")
    store_decision(database, "o:1", "lena", "rejected", None)  # the newer one counts
    store_decision(database, "o:2", "lena", "approved", "ABCD")
    store_decision(database, "o:2", "lena", "rejected", None)
    undo_decision(database, "lena", "o:2")  # the approval holds again
    with database.session() as session:
        newest = newest_decisions(session, col(Item.id).in_(["o:1", "o:2", "o:3"]))
        one_by_one = {
            item_id: (decision.status, decision.revision_number)
            for item_id in ("o:1", "o:2", "o:3")
            if (decision := latest_decision(session, item_id)) is not None
        }
    assert newest == {"o:1": ("rejected", 1), "o:2": ("approved", 1)}  # o:3: never decided
    assert newest == one_by_one

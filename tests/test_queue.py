"""The annotator queue: who gets which item, overlap k, claims, history, restarts."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest
from helpers import judge_flawed_then_edit, store_item, store_ordering_items
from sqlalchemy import text
from sqlmodel import select

from db.engine import Database, open_database
from db.item_status import refresh_open_statuses
from db.models import Claim, utcnow
from db.settings import set_setting
from reviewer.judging import ItemEdit, edit_item, retract_last_judgment, submit_judgment
from reviewer.queue import CLAIM_TTL, QueueError, QueueFilter, ReviewQueue


def keep(db: Database, who: str, item_id: str) -> None:
    submit_judgment(db, who, item_id, revision_number=None, blind_answer="DABC", verdict="keep")


def drain(queue: ReviewQueue, who: str) -> list[str]:
    """Judge everything the queue offers; returns the ids in the order served."""
    served = []
    while (item := queue.fetch_next()) is not None:
        served.append(item.id)
        keep(queue.db, who, item.id)
    return served


def offered(queue: ReviewQueue) -> list[str]:
    """Every item the queue offers, moving on without judging, until one comes back."""
    seen: list[str] = []
    while (item := queue.next_item()) is not None and item.id not in seen:
        seen.append(item.id)
    return seen


def test_two_annotators_at_once_get_different_items(database: Database) -> None:
    store_ordering_items(database, 10)
    alice, bob = ReviewQueue(database, "alice"), ReviewQueue(database, "bob")
    first_alice, first_bob = alice.fetch_next(), bob.fetch_next()
    assert first_alice is not None and first_bob is not None
    assert first_alice.id != first_bob.id  # alice's claim keeps bob away


def test_claims_expire(database: Database) -> None:
    store_item(database, "econ:only")
    with database.transaction() as session:
        set_setting(session, "overlap", "1")  # alice's open claim would complete the item
    alice = ReviewQueue(database, "alice")
    assert alice.fetch_next() is not None
    bob_now = ReviewQueue(database, "bob")
    assert bob_now.fetch_next() is None
    later = utcnow() + CLAIM_TTL + timedelta(seconds=1)
    bob_later = ReviewQueue(database, "bob", clock=lambda: later)
    item = bob_later.fetch_next()
    assert item is not None and item.id == "econ:only"


def test_an_item_another_annotator_has_open_is_served_when_it_needs_both(
    database: Database,
) -> None:
    """k = 2: claims spread work, but the last item open elsewhere still needs bob too."""
    store_item(database, "econ:only")
    assert ReviewQueue(database, "alice").fetch_next() is not None
    item = ReviewQueue(database, "bob").fetch_next()
    assert item is not None and item.id == "econ:only"
    assert ReviewQueue(database, "carol").fetch_next() is None  # two claims fill k = 2


def test_overlap_k_is_respected(database: Database) -> None:
    ids = store_ordering_items(database, 4)
    assert sorted(drain(ReviewQueue(database, "alice"), "alice")) == ids
    assert sorted(drain(ReviewQueue(database, "bob"), "bob")) == ids
    # k = 2 judgments each: carol has nothing to do ...
    assert ReviewQueue(database, "carol").fetch_next() is None
    # ... until k is raised.
    with database.transaction() as session:
        set_setting(session, "overlap", "3")
    assert refresh_open_statuses(database) == 4
    assert sorted(drain(ReviewQueue(database, "carol"), "carol")) == ids
    assert ReviewQueue(database, "dave").fetch_next() is None


def test_started_items_come_first(database: Database) -> None:
    ids = store_ordering_items(database, 20)
    keep(database, "alice", ids[13])
    item = ReviewQueue(database, "bob").fetch_next()
    assert item is not None and item.id == ids[13]


def test_annotators_start_in_different_places(database: Database) -> None:
    store_ordering_items(database, 200)
    starts = set()
    for name in ("alice", "bob", "carol", "dave"):
        queue = ReviewQueue(database, name)
        item = queue.fetch_next()
        assert item is not None
        queue.release_claim()
        starts.add(item.id)
    assert len(starts) >= 3


def test_judged_items_are_not_served_again_until_undone_or_edited(database: Database) -> None:
    store_item(database, "econ:1")
    alice = ReviewQueue(database, "alice")
    assert drain(alice, "alice") == ["econ:1"]
    retract_last_judgment(database, "alice")
    item = alice.fetch_next()
    assert item is not None and item.id == "econ:1"
    keep(database, "alice", "econ:1")
    assert alice.fetch_next() is None
    edit_item(database, "bob", "econ:1", ItemEdit(note="key was wrong", key="ABCD"))
    item = alice.fetch_next()
    assert item is not None and (item.id, item.revision) == ("econ:1", 2)


def test_skip_puts_an_item_aside_for_the_session_and_frees_it(database: Database) -> None:
    ids = store_ordering_items(database, 3)
    alice = ReviewQueue(database, "alice")
    first = alice.fetch_next()
    assert first is not None
    second = alice.skip()
    assert second is not None and second.id != first.id
    # The skipped item is free for others at once: only the claim on the new item is left.
    with database.session() as session:
        assert [claim.item_id for claim in session.exec(select(Claim))] == [second.id]
    keep(database, "alice", second.id)
    third = alice.fetch_next()
    assert third is not None and third.id not in (first.id, second.id)
    keep(database, "alice", third.id)
    # Only the skipped item is left, so it comes back.
    again = alice.fetch_next()
    assert again is not None and again.id == first.id
    assert set(ids) == {first.id, second.id, third.id}


def test_previous_and_next_walk_the_session_history(database: Database) -> None:
    store_ordering_items(database, 5)
    queue = ReviewQueue(database, "alice")
    shown = [queue.next_item() for _ in range(3)]
    ids = [item.id for item in shown if item is not None]
    back1, back2 = queue.previous_item(), queue.previous_item()
    assert back1 is not None and back2 is not None
    assert [back1.id, back2.id] == [ids[1], ids[0]]
    assert queue.previous_item() is None  # at the start
    forward = queue.next_item()
    assert forward is not None and forward.id == ids[1]
    assert queue.next_item().id == ids[2]  # type: ignore[union-attr]
    fresh = queue.next_item()
    assert fresh is not None and fresh.id not in ids


def test_jump_to_an_item_and_browse_judged_items(database: Database) -> None:
    ids = store_ordering_items(database, 3)
    queue = ReviewQueue(database, "alice")
    assert queue.open_item(f" {ids[2]} ").id == ids[2]
    with pytest.raises(QueueError, match="there is no item 'nope'"):
        queue.open_item("nope")
    keep(database, "alice", ids[2])
    keep(database, "alice", ids[0])
    judged = queue.judged_items()
    assert [j.item_id for j in judged] == [ids[0], ids[2]]
    own = queue.own_judgment(ids[2])
    assert own is not None and own.verdict == "keep" and own.blind_answer == "DABC"
    assert queue.own_judgment(ids[1]) is None


def test_filters_by_kind_source_and_status(database: Database) -> None:
    store_ordering_items(database, 3, prefix="econ", source="econ")
    store_item(database, "mcq:1", kind="single", key="A", source="cflue")
    store_item(database, "mcq:2", kind="multi", key="AB", source="cflue")
    by_kind = ReviewQueue(database, "alice", QueueFilter(kinds=("multi",)))
    assert offered(by_kind) == ["mcq:2"]
    by_kind.release_claim()
    by_source = ReviewQueue(database, "bob", QueueFilter(sources=("cflue",)))
    served = []
    while (item := by_source.fetch_next()) is not None:
        served.append(item.id)
        submit_judgment(
            database,
            "bob",
            item.id,
            revision_number=None,
            blind_answer="A",
            verdict="flawed",
            comment="choice B is unclear",
        )
    assert sorted(served) == ["mcq:1", "mcq:2"]
    in_review_only = ReviewQueue(database, "carol", QueueFilter(statuses=("in_review",)))
    assert sorted(offered(in_review_only)) == ["mcq:1", "mcq:2"]
    with pytest.raises(QueueError, match="not agreed"):
        QueueFilter(statuses=("agreed",))


def test_progress_figures(database: Database) -> None:
    store_ordering_items(database, 4)
    queue = ReviewQueue(database, "alice")
    item = queue.fetch_next()
    assert item is not None
    receipt = submit_judgment(
        database,
        "alice",
        item.id,
        revision_number=1,
        blind_answer="DABC",
        verdict="keep",
        seconds=20,
    )
    queue.record_submitted(receipt.judgment_id)
    queue.fetch_next()
    progress = queue.progress()
    assert (progress.session_done, progress.session_assigned) == (1, 2)
    assert (progress.overall_done, progress.items_left, progress.median_seconds) == (1, 3, 20)


def test_queue_survives_a_restart(db_path: Path) -> None:
    first = open_database(db_path)
    ids = store_ordering_items(first, 3)
    queue = ReviewQueue(first, "alice")
    served = queue.fetch_next()
    assert served is not None
    keep(first, "alice", served.id)
    claimed = queue.fetch_next()
    assert claimed is not None
    first.dispose()

    reopened = open_database(db_path)
    again = ReviewQueue(reopened, "alice")
    # Nothing judged comes back, and the annotator's own claim does not block them.
    remaining = drain(again, "alice")
    assert sorted(remaining) == sorted(set(ids) - {served.id})
    # Bob still finds alice's judged item to finish it (k = 2).
    assert served.id in drain(ReviewQueue(reopened, "bob"), "bob")
    reopened.dispose()


def test_next_item_query_is_an_index_range_scan(database: Database) -> None:
    if not database.is_sqlite:
        pytest.skip("the plan check reads SQLite's EXPLAIN QUERY PLAN")
    store_ordering_items(database, 3)
    queue = ReviewQueue(database, "alice")
    statements: list[str] = []

    from sqlalchemy import event

    def remember(_conn, _cursor, statement, _params, _context, _many) -> None:  # type: ignore[no-untyped-def]
        if statement.lstrip().startswith("SELECT item.id") and "item.status =" in statement:
            statements.append(statement)

    event.listen(database.engine, "before_cursor_execute", remember)
    try:
        queue.fetch_next()
    finally:
        event.remove(database.engine, "before_cursor_execute", remember)
    assert statements
    with database.engine.connect() as connection:
        cursor = connection.connection.driver_connection.cursor()  # type: ignore[union-attr]
        for statement in statements:
            params = ["x"] * statement.count("?")  # the values do not change the plan
            plan = " | ".join(
                row[3] for row in cursor.execute(f"EXPLAIN QUERY PLAN {statement}", params)
            )
            assert "ix_item_status_id" in plan, plan
            assert "TEMP B-TREE" not in plan, plan
        connection.execute(text("SELECT 1"))


def test_an_editor_is_not_served_their_own_revision(database: Database) -> None:
    store_item(database, "econ:1")
    edit = ItemEdit(note="key was wrong", key="ABCD")
    judge_flawed_then_edit(database, "alice", "econ:1", edit, comment="the key is wrong")
    assert ReviewQueue(database, "alice").fetch_next() is None  # alice knows the new key
    item = ReviewQueue(database, "bob").fetch_next()
    assert item is not None and item.revision == 2

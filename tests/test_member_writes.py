# ruff: noqa: F811  (tests take the fixture `team` imported from test_privileges)
"""Writes a member made with psql around vetbench's rules (db.guards, migration 0017), run
as real PostgreSQL login roles with raw SQL; and vetbench's own paths, which still work."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import sqlalchemy as sa
from test_guards import EVENT_SQL, REVISION_SQL, RUN_SQL
from test_privileges import JUDGE_EVENT_SQL, JUDGMENT_SQL, Team, raw, run, team  # noqa: F401  (team: the fixture)

from db.engine import open_database
from reviewer.judging import ItemEdit, edit_item

pytestmark = pytest.mark.postgres
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"

GOLD_JUDGMENT_SQL = JUDGMENT_SQL.replace(", retracted)", ", retracted, gold_id)").replace(
    ", false)", ", false, :gold)"
)
KNOWN_SQL = "SELECT g.item_id, k.answer FROM gold_item g, vetbench_gold_known(g.id) k"


def in_one_transaction(url: str, *statements: str, **params: object) -> None:
    """``statements`` in one transaction, as ``url``'s role."""
    engine = sa.create_engine(url)
    try:
        with engine.begin() as connection:
            for statement in statements:
                connection.execute(sa.text(statement), params)
    finally:
        engine.dispose()


def assert_undo_is_final(
    url: str, update: str, changes: tuple[str, ...], event: str, refusal: str, **params: object
) -> None:
    """``update`` with each of ``changes`` as its ``{change}``, written as psql would, in
    one transaction with its audit ``event``, is refused with ``refusal``: an undo is
    never taken back nor re-dated, even with the event the guard asks of an undo."""
    for change in changes:
        with pytest.raises(sa.exc.ProgrammingError, match=refusal):
            in_one_transaction(url, update.format(change=change), event, **params)


def test_a_judgment_names_only_the_gold_of_its_own_item(team: Team) -> None:
    # A judgment of o:1 naming o:2's gold, then vetbench_gold_known told o:2's answer.
    marked = run(
        team.url(team.lena), "gold", "add", "o:2", "--verdict", "wrong-key", "--answer", "DCBA"
    )
    assert marked.exit_code == 0, marked.output
    alice = team.url(team.alice)
    gold = raw(alice, "SELECT id FROM gold_item WHERE item_id = 'o:2'").scalar_one()
    with pytest.raises(sa.exc.ProgrammingError, match="names gold item .* of item o:2 revision 1"):
        raw(alice, GOLD_JUDGMENT_SQL, annotator=team.person_id(team.alice), gold=gold)
    assert raw(alice, KNOWN_SQL).all() == []
    # vetbench's own calibration judgment of o:2 names its gold and is then told.
    judged = run(alice, "judge", "o:2", "--answer", "ABCD", "--verdict", "keep")
    assert judged.exit_code == 0, judged.output
    assert "your answer ✗ differs" in judged.output
    assert raw(alice, KNOWN_SQL).all() == [("o:2", "DCBA")]


def test_a_judgment_names_the_revision_it_judges(team: Team) -> None:
    # o:1's judgment naming o:2's revision counted for o:1's status and in o:2's agreement.
    alice = team.url(team.alice)
    other = JUDGMENT_SQL.replace("WHERE item_id = 'o:1'", "WHERE item_id = 'o:2'")
    annotator = team.person_id(team.alice)
    refused = "a judgment of item o:1 revision [12] names revision id .*, which is not it"
    with pytest.raises(sa.exc.IntegrityError, match=refused):
        raw(alice, other, annotator=annotator)
    with pytest.raises(sa.exc.IntegrityError, match=refused):  # nor another number of it
        raw(alice, JUDGMENT_SQL.replace("'o:1'), 1,", "'o:1'), 2,"), annotator=annotator)
    assert raw(alice, "SELECT count(*) FROM judgment").scalar_one() == 0
    # its own revision, with its audit event: stored
    in_one_transaction(alice, JUDGMENT_SQL, JUDGE_EVENT_SQL, annotator=annotator, item="o:1")
    assert raw(alice, "SELECT count(*) FROM judgment").scalar_one() == 1


ID_INSERTS = {
    "audit_event": EVENT_SQL.format(action="judge")
    .replace("(actor,", "(id, actor,")
    .replace("VALUES (", "VALUES (:id, "),
    "item_flag": "INSERT INTO item_flag (id, item_id, revision_number, name, source, evidence, "
    "created_at) VALUES (:id, 'o:1', 1, 'html', 'auto', '{}', now())",
    "item_revision": REVISION_SQL.replace("(item_id,", "(id, item_id,").replace(
        "SELECT item_id,", "SELECT :id, item_id,"
    ),
    "generation_reject": "INSERT INTO generation_reject (id, source, article_id, sample_index, "
    "kind, model, prompt_hash, raw_response, reason, created_at) "
    "VALUES (:id, 's', 'a', 0, 'single', 'm', 'h', '', 'r', now())",
    "eval_run": RUN_SQL.replace("(model,", "(id, model,").replace("VALUES (", "VALUES (:id, "),
    "prediction": "INSERT INTO prediction (id, run_id, item_id, revision_number, prompt_hash, "
    "prompt, raw_output, scores, latency_s, created_at) VALUES (:id, :run, 'o:1', 1, 'x', '', "
    "'', '{}', 0, now())",
}


def test_ids_come_only_from_their_sequences(team: Team) -> None:
    # An audit event inserted with an id ahead of the sequence made every later vetbench
    # write fail on a duplicate key, and the append-only trail kept it there.
    alice = team.url(team.alice)
    run_id = raw(alice, RUN_SQL, claimed="").scalar_one()
    for table, statement in ID_INSERTS.items():
        ahead = raw(alice, f"SELECT last_value + 5 FROM {table}_id_seq").scalar_one()
        with pytest.raises(
            sa.exc.ProgrammingError, match=f"{table} ids come from their sequence: .* id {ahead}"
        ):
            raw(alice, statement, id=ahead, run=run_id, number=2, item="o:1", author=team.alice,
                claimed="")  # fmt: skip
    lena = team.url(team.lena)
    with pytest.raises(sa.exc.ProgrammingError, match="decision ids come from their sequence"):
        raw(
            lena,
            "INSERT INTO decision (id, item_id, lead_id, status, revision_number, final_key, "
            "comment, created_at) VALUES (99, 'o:1', :lead, 'approved', 1, 'ABCD', '', now())",
            lead=team.person_id(team.lena),
        )
    # A person registering themselves takes an id from the sequence too.
    carol = team.roles.name("carol")
    raw(team.owner_url, f'CREATE ROLE "{carol}" LOGIN IN ROLE vetbench_annotator')
    with pytest.raises(sa.exc.ProgrammingError, match="person ids come from their sequence"):
        raw(
            team.url(carol),
            "INSERT INTO person (id, name, role, created_at) VALUES (99, :name, 'annotator', now())",
            name=carol,
        )
    # vetbench's own writes, bulk ones included, still get their ids.
    imported = run(alice, "import", str(FIXTURES / "econ_ordering.csv"))
    assert imported.exit_code == 0, imported.output
    judged = run(team.url(carol), "judge", "o:1", "--answer", "ABCD", "--verdict", "keep")
    assert judged.exit_code == 0, judged.output
    recomputed = run(lena, "flags", "recompute")
    assert recomputed.exit_code == 0, recomputed.output


ITEM_SQL = (
    "INSERT INTO item (id, kind, source, source_ref, language, status, current_revision, "
    "meta, created_at) VALUES ('bare:1', 'ordering', 'psql', '', 'en', 'pending', 1, '{}', now())"
)
IMPORT_EVENT_SQL = (
    "INSERT INTO audit_event (actor, action, target, payload, os_login, host, created_at) "
    "VALUES ('x', 'import', 'psql.csv', CAST(:payload AS json), '', '', now())"
)
"""An import's event, of a file whose records' source ``:payload`` names (``{"source": ..}``)."""
NEW_ITEM_REVISION_SQL = REVISION_SQL.replace(
    "WHERE item_id = :item", "WHERE item_id = 'o:1'"
).replace("SELECT item_id,", "SELECT 'bare:1',")


def test_an_item_is_stored_only_with_its_revision(team: Team) -> None:
    # An item with current_revision 1 and no revision at all committed: the app and the
    # exports then found no text for it.
    alice = team.url(team.alice)
    with pytest.raises(sa.exc.IntegrityError, match="item bare:1 has no revision 1"):
        raw(alice, ITEM_SQL)
    # With its revision and the audit event of its import, in the same transaction (as the
    # importer writes them): stored.
    in_one_transaction(
        alice,
        ITEM_SQL,
        NEW_ITEM_REVISION_SQL,
        IMPORT_EVENT_SQL,
        number=1,
        author=team.alice,
        payload='{"source": "psql"}',
    )
    assert raw(alice, "SELECT count(*) FROM item_revision WHERE item_id = 'bare:1'").scalar() == 1
    imported = run(alice, "import", str(FIXTURES / "econ_ordering.csv"))
    assert imported.exit_code == 0, imported.output


def test_every_revision_a_member_writes_is_in_the_audit_trail(team: Team) -> None:
    # With psql an annotator rewrote a pending item (a new revision, the item moved to it)
    # and `vetbench audit --item` showed no change.
    alice = team.url(team.alice)
    revision = (REVISION_SQL, "UPDATE item SET current_revision = 2 WHERE id = :item")
    unrecorded = 'revision 2 of item o:2 comes with its audit event "revise"'
    with pytest.raises(sa.exc.ProgrammingError, match=unrecorded):
        in_one_transaction(alice, *revision, number=2, author=team.alice, item="o:2")
    with pytest.raises(sa.exc.ProgrammingError, match=unrecorded):  # an event of another item
        in_one_transaction(
            alice,
            *revision,
            EVENT_SQL.format(action="revise"),
            number=2,
            author=team.alice,
            item="o:2",
        )
    # A new item: its revisions come with the event of its import or generation.
    with pytest.raises(sa.exc.ProgrammingError, match="new item bare:1 comes with the audit event"):
        in_one_transaction(alice, ITEM_SQL, NEW_ITEM_REVISION_SQL, number=1, author=team.alice)
    assert raw(alice, "SELECT max(number) FROM item_revision WHERE item_id = 'o:2'").scalar() == 1
    # With its own event: stored, and the trail shows it.
    revise_o2 = EVENT_SQL.format(action="revise").replace("'o:1'", "'o:2'")
    in_one_transaction(alice, *revision, revise_o2, number=2, author=team.alice, item="o:2")
    trail = run(team.url(team.lena), "audit", "--item", "o:2")
    assert trail.exit_code == 0 and "revise" in trail.output, trail.output
    # vetbench's own revisions record their events: an edit, then a lead's key correction.
    member = open_database(alice)
    try:
        edit_item(
            member,
            team.alice,
            "o:2",
            ItemEdit("clearer explanation", explanation="Rates rise first."),
        )
    finally:
        member.dispose()
    corrected = run(team.url(team.lena), "decide", "o:2", "--status", "approved", "--key", "ABCD")
    assert corrected.exit_code == 0, corrected.output
    revisions = raw(team.owner_url, "SELECT max(number) FROM item_revision WHERE item_id = 'o:2'")
    assert revisions.scalar() == 4


def test_an_annotator_cannot_forge_a_leads_or_anothers_audit_event(team: Team) -> None:
    # "flags" read as a lead's `flags recompute`; a "register" event as a lead's making.
    alice = team.url(team.alice)
    event = (
        "INSERT INTO audit_event (actor, action, target, payload, os_login, host, created_at) "
        "VALUES ('x', :action, :target, CAST(:payload AS json), '', '', now())"
    )
    for action, target, payload in (
        ("flags", "recompute", "{}"),
        ("register", team.alice, '{"role": "lead"}'),
        ("register", "mallory", '{"role": "annotator"}'),
        ("register", team.alice, "{}"),
    ):
        with pytest.raises(sa.exc.ProgrammingError, match="row-level security"):
            raw(alice, event, action=action, target=target, payload=payload)
    raw(alice, event, action="register", target=team.alice, payload='{"role": "annotator"}')
    # vetbench's own: a lead's recompute, and a new role registering itself.
    recomputed = run(team.url(team.lena), "flags", "recompute")
    assert recomputed.exit_code == 0, recomputed.output
    carol = team.roles.name("carol")
    raw(team.owner_url, f'CREATE ROLE "{carol}" LOGIN IN ROLE vetbench_annotator')
    joined = run(
        team.url(carol), "judge", "o:1", "--answer", "ABCD", "--verdict", "keep", "--new-user"
    )
    assert joined.exit_code == 0, joined.output
    registered = (
        "SELECT payload ->> 'role' FROM audit_event WHERE action = 'register' AND target = :c"
    )
    assert raw(team.owner_url, registered, c=carol).scalars().all() == ["annotator"]


RETRACT_EVENT = (
    "INSERT INTO audit_event (actor, action, target, payload, os_login, host, created_at) "
    "VALUES ('x', 'retract', 'o:1', CAST(:payload AS json), '', '', now())"
)


def test_a_judgment_is_retracted_only_by_undo_once_and_dated_by_the_server(team: Team) -> None:
    # With psql an annotator retracted a judgment unrecorded and dated it 1999, inserted
    # judgments already retracted or with negative time spent.
    alice = team.url(team.alice)
    mine = {"annotator": team.person_id(team.alice)}
    for statement in (
        JUDGMENT_SQL.replace(", false)", ", true)"),
        JUDGMENT_SQL.replace("'', 0, now()", "'', -5, now()"),
    ):
        with pytest.raises(sa.exc.ProgrammingError, match="seconds >= 0, not retracted"):
            raw(alice, statement, **mine)
    judged = run(alice, "judge", "o:1", "--answer", "ABCD", "--verdict", "keep")
    assert judged.exit_code == 0, judged.output
    judgment = raw(alice, "SELECT max(id) FROM judgment").scalar_one()
    retract = "UPDATE judgment SET retracted = true, retracted_at = '1999-01-01' WHERE id = :j"
    with pytest.raises(sa.exc.ProgrammingError, match='with its audit event "retract"'):
        raw(alice, retract, j=judgment)
    in_one_transaction(
        alice, retract, RETRACT_EVENT, j=judgment, payload=f'{{"judgment_id": {judgment}}}'
    )
    dated = "SELECT retracted, extract(year FROM retracted_at) FROM judgment WHERE id = :j"
    assert raw(alice, dated, j=judgment).one() != (True, 1999)
    assert raw(alice, dated, j=judgment).one()[0] is True
    assert_undo_is_final(
        alice,
        "UPDATE judgment SET {change} WHERE id = :j",
        ("retracted = false, retracted_at = NULL", "retracted_at = '1999-01-01'"),
        RETRACT_EVENT,
        "an undo is never taken back",
        j=judgment,
        payload=f'{{"judgment_id": {judgment}}}',
    )
    # vetbench's own undo.
    again = run(alice, "judge", "o:1", "--answer", "ABCD", "--verdict", "keep")
    assert again.exit_code == 0, again.output
    undone = run(alice, "undo")
    assert undone.exit_code == 0, undone.output
    assert raw(alice, "SELECT count(*) FROM judgment WHERE retracted").scalar_one() == 2


UNDO_DECISION_EVENT = (
    "INSERT INTO audit_event (actor, action, target, payload, os_login, host, created_at) "
    "VALUES ('x', 'undo-decision', 'o:1', CAST(:payload AS json), '', '', now())"
)


def test_a_decision_is_undone_only_once_dated_by_the_server_and_the_item_follows(
    team: Team,
) -> None:
    # With psql a lead undid a decision, dated any day, and left the item approved with
    # no decision in force; then took the undo back.
    lena = team.url(team.lena)
    decided = run(lena, "decide", "o:1", "--status", "approved")
    assert decided.exit_code == 0, decided.output
    decision = raw(lena, "SELECT max(id) FROM decision").scalar_one()
    mine = {
        "d": decision,
        "lead": team.person_id(team.lena),
        "payload": f'{{"decision_id": {decision}}}',
    }
    undo = "UPDATE decision SET retracted_at = '1999-01-01', retracted_by_id = :lead WHERE id = :d"
    with pytest.raises(sa.exc.ProgrammingError, match='with its audit event "undo-decision"'):
        raw(lena, undo, **mine)
    with pytest.raises(sa.exc.IntegrityError, match="item o:1 is approved at revision 1, but"):
        in_one_transaction(lena, undo, UNDO_DECISION_EVENT, **mine)
    status = "SELECT status FROM item WHERE id = 'o:1'"
    assert raw(lena, status).scalar_one() == "approved"
    # vetbench's own undo, then the undo is never taken back nor re-dated.
    undone = run(lena, "undo-decision", "o:1")
    assert undone.exit_code == 0, undone.output
    assert raw(lena, status).scalar_one() != "approved"
    dated = "SELECT extract(year FROM retracted_at) FROM decision WHERE id = :d"
    assert raw(lena, dated, **mine).scalar_one() != 1999
    assert_undo_is_final(
        lena,
        "UPDATE decision SET {change}, retracted_by_id = :lead WHERE id = :d",
        ("retracted_at = NULL", "retracted_at = '1999-01-01'"),
        UNDO_DECISION_EVENT,
        "a decision's undo is never taken back",
        **mine,
    )
    again = run(
        lena, "decide", "o:1", "--status", "rejected", "--reason", "other", "--comment", "x"
    )
    assert again.exit_code == 0, again.output
    assert raw(lena, status).scalar_one() == "rejected"


def test_what_only_an_undo_sets_is_refused_on_a_row_in_force(team: Team) -> None:
    # The judgment's and the decision's undo guards are one builder
    # (db.review_guards._one_way_undo): each refuses, on a row not undone, the column that
    # only its undo sets, naming the table and the column.
    alice = team.url(team.alice)
    judged = run(alice, "judge", "o:1", "--answer", "ABCD", "--verdict", "keep")
    assert judged.exit_code == 0, judged.output
    judgment = raw(alice, "SELECT max(id) FROM judgment").scalar_one()
    with pytest.raises(
        sa.exc.ProgrammingError, match=f"judgment {judgment}: retracted_at is set by its undo only"
    ):
        raw(alice, "UPDATE judgment SET retracted_at = now() WHERE id = :j", j=judgment)
    lena = team.url(team.lena)
    decided = run(lena, "decide", "o:1", "--status", "approved")
    assert decided.exit_code == 0, decided.output
    decision = raw(lena, "SELECT max(id) FROM decision").scalar_one()
    with pytest.raises(
        sa.exc.ProgrammingError,
        match=f"decision {decision}: retracted_by_id is set by its undo only",
    ):
        raw(
            lena,
            "UPDATE decision SET retracted_by_id = :lead WHERE id = :d",
            lead=team.person_id(team.lena),
            d=decision,
        )
    in_force = "SELECT retracted, retracted_at FROM judgment WHERE id = :j"
    assert raw(alice, in_force, j=judgment).one() == (False, None)
    assert raw(lena, "SELECT retracted_by_id FROM decision WHERE id = :d", d=decision).one() == (
        None,
    )


def test_an_annotators_edit_of_an_original_brings_its_copys_flag_up_to_date(team: Team) -> None:
    # o:2 repeats o:1.  An annotator's edit of o:1 writes o:2's duplicate flag again (she
    # may add flags, not remove them: the newest is the revision's word); it stayed the
    # one the copy had before, describing o:1's old text.
    recomputed = run(team.url(team.lena), "flags", "recompute")
    assert recomputed.exit_code == 0, recomputed.output
    member = open_database(team.url(team.alice))
    try:
        edit_item(member, team.alice, "o:1", ItemEdit("key fixed", key="BACD"))
    finally:
        member.dispose()
    shown = run(team.url(team.alice), "flags", "show", "o:2", "--json")
    assert shown.exit_code == 0, shown.output
    flags = json.loads(shown.output)["revisions"][0]["flags"]
    assert [flag["name"] for flag in flags] == ["duplicate", "order-leak"], flags
    assert flags[0]["evidence"]["of"] == "o:1" and "a different key" in flags[0]["summary"]

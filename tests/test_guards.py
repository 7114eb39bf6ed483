# ruff: noqa: F811  (tests take the fixture `team` imported from test_privileges)
"""The rules the database keeps for every client (db.guards): attacks from issue 22, run
as real PostgreSQL login roles with raw SQL, and SQLite's triggers with a plain sqlite3
connection."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
import sqlalchemy as sa
from alembic import command
from helpers import decide_items, run_cli, store_item, store_person
from sqlmodel import select
from test_privileges import Team, raw, run, team  # noqa: F401  (team: the fixture)

from db.engine import Database, make_engine, open_database
from db.items import get_item
from db.migrate import alembic_config, upgrade_to
from db.models import EvalRun, Item
from db.releases import SQLITE_RELEASE_TRIGGERS
from db.vocabulary import Role
from evaluator.backends.scripted import ScriptedBackend
from evaluator.runner import RunSetupError, execute_run

RUN_SQL = (
    "INSERT INTO eval_run (model, backend, mode, shots, params, filters, item_ids, status, "
    "host, started_at, db_role) VALUES ('scripted', 'scripted', 'generate', 0, '{}', '{}', '[]', "
    "'running', 'h', now(), :claimed) RETURNING id"
)
PREDICTION_SQL = (
    "INSERT INTO prediction (run_id, item_id, revision_number, prompt_hash, prompt, raw_output, "
    "scores, latency_s, created_at) VALUES (:run, 'o:1', 1, 'x', '', '', '{}', 0, now())"
)
AUDIT_SQL = (
    "INSERT INTO audit_event (actor, action, target, payload, os_login, host, created_at) "
    "VALUES ('lena', 'decide', 'o:1', '{}', '', '', '2026-01-01')"
)
REVISION_SQL = (
    "INSERT INTO item_revision (item_id, number, kind, prompt, choices, key, author, "
    "change_note, provenance, created_at) SELECT item_id, :number, kind, prompt, choices, "
    "'CABD', :author, 'x', '{}', now() FROM item_revision WHERE item_id = :item AND number = 1"
)


def _owner_item(team: Team, item_id: str) -> tuple[str, str, str, int, str]:
    owner = open_database(team.owner_url)
    try:
        with owner.session() as session:
            item = session.get(Item, item_id)
            snapshot = get_item(session, item_id)
    finally:
        owner.dispose()
    assert item is not None and snapshot is not None
    return item.kind, item.source, item.status, item.current_revision, snapshot.key


pytestmark_pg = pytest.mark.postgres


@pytestmark_pg
def test_an_annotator_cannot_rewrite_an_approved_item_with_raw_sql(team: Team) -> None:
    assert run(team.url(team.lena), "decide", "o:1", "--status", "approved").exit_code == 0
    before = _owner_item(team, "o:1")
    alice = team.url(team.alice)
    # A new revision in the lead's name, or in her own, of an approved item.
    for author in (team.lena, team.alice):
        with pytest.raises(sa.exc.ProgrammingError, match="only|own name"):
            raw(alice, REVISION_SQL, number=2, author=author, item="o:1")
    # The source is nobody's to change but the owner's; the kind is the current revision's.
    with pytest.raises(sa.exc.ProgrammingError, match="permission denied for table item"):
        raw(alice, "UPDATE item SET source = 'other' WHERE id = 'o:1'")
    with pytest.raises(sa.exc.IntegrityError, match="not the kind of its current revision"):
        raw(alice, "UPDATE item SET kind = 'truefalse' WHERE id = 'o:2'")
    # An order never becomes a choice of answers, even in a new revision of one's own.
    with pytest.raises(sa.exc.IntegrityError, match="an order never becomes"):
        raw(
            alice,
            REVISION_SQL.replace(
                "SELECT item_id, :number, kind", "SELECT item_id, :number, 'single'"
            ),
            number=2,
            author=team.alice,
            item="o:2",
        )
    # A revision that does not exist, on an item nobody decided.
    with pytest.raises(sa.exc.IntegrityError, match="has no revision 999"):
        raw(alice, "UPDATE item SET current_revision = 999 WHERE id = 'o:2'")
    # Someone else's name on a pending item's new revision.
    with pytest.raises(sa.exc.ProgrammingError, match="only in their own name"):
        raw(alice, REVISION_SQL, number=2, author=team.lena, item="o:2")
    # Even the lead cannot move an approved item to a revision nobody decided.
    lena = sa.create_engine(team.url(team.lena))
    with (
        pytest.raises(sa.exc.IntegrityError, match="come only from a lead's decision"),
        lena.begin() as connection,
    ):
        connection.execute(sa.text(REVISION_SQL), {"number": 2, "author": team.lena, "item": "o:1"})
        connection.execute(sa.text("UPDATE item SET current_revision = 2 WHERE id = 'o:1'"))
        connection.execute(sa.text(EVENT_SQL.format(action="revise")))  # recorded, yet refused
    lena.dispose()
    assert _owner_item(team, "o:1") == before
    assert _owner_item(team, "o:2")[3] == 1
    # In her own name, on a pending item, with its audit event, an annotator's revision is
    # an edit like any other (tests/test_member_writes.py: without the event, refused).
    revised = sa.create_engine(alice)
    with revised.begin() as connection:
        connection.execute(
            sa.text(REVISION_SQL), {"number": 2, "author": team.alice, "item": "o:2"}
        )
        connection.execute(sa.text("UPDATE item SET current_revision = 2 WHERE id = 'o:2'"))
        connection.execute(sa.text(EVENT_SQL.format(action="revise").replace("'o:1'", "'o:2'")))
    revised.dispose()
    assert _owner_item(team, "o:2")[3:] == (2, "CABD")


@pytestmark_pg
def test_a_lead_cannot_approve_without_a_decision(team: Team) -> None:
    with pytest.raises(sa.exc.IntegrityError, match="come only from a lead's decision"):
        raw(team.url(team.lena), "UPDATE item SET status = 'approved' WHERE id = 'o:1'")
    with pytest.raises(sa.exc.IntegrityError, match="come only from a lead's decision"):
        raw(team.owner_url, "UPDATE item SET status = 'rejected' WHERE id = 'o:1'")
    assert _owner_item(team, "o:1")[2] == "pending"
    decided = run(team.url(team.lena), "decide", "o:1", "--status", "approved")
    assert decided.exit_code == 0, decided.output
    assert _owner_item(team, "o:1")[2] == "approved"
    undone = run(team.url(team.lena), "undo-decision", "o:1")
    assert undone.exit_code == 0, undone.output
    assert _owner_item(team, "o:1")[2] == "pending"


@pytestmark_pg
def test_members_change_only_their_own_runs_and_predictions(team: Team) -> None:
    alice, bob = team.url(team.alice), team.url(team.bob)
    # She claims to be bob; the server stamps who she is.
    run_id = raw(alice, RUN_SQL, claimed=team.bob).scalar_one()
    owner = open_database(team.owner_url)
    with owner.session() as session:
        stored = session.get(EvalRun, run_id)
        assert stored is not None and stored.db_role == team.alice
    owner.dispose()
    touched = raw(bob, "UPDATE eval_run SET status = 'failed' WHERE id = :run", run=run_id)
    assert touched.rowcount == 0
    with pytest.raises(sa.exc.ProgrammingError, match="row-level security policy"):
        raw(bob, PREDICTION_SQL, run=run_id)
    raw(alice, PREDICTION_SQL, run=run_id)
    assert raw(bob, "UPDATE prediction SET correct = true").rowcount == 0
    assert raw(alice, "UPDATE prediction SET correct = true").rowcount == 1
    mine = raw(
        alice,
        "UPDATE eval_run SET status = 'done', db_role = :bob WHERE id = :run",
        bob=team.bob,
        run=run_id,
    )
    assert mine.rowcount == 1
    assert raw(team.owner_url, "SELECT db_role FROM eval_run").scalar_one() == team.alice
    # Resuming her run is refused before any work, in one line.
    bob_db = open_database(bob)
    try:
        with pytest.raises(RunSetupError, match=f"was started by {team.alice}"):
            execute_run(bob_db, run_id, ScriptedBackend({}))
    finally:
        bob_db.dispose()


@pytestmark_pg
def test_a_malformed_flag_row_is_refused_for_members(team: Team) -> None:
    with pytest.raises(sa.exc.IntegrityError, match="not one vetbench writes"):
        raw(
            team.url(team.alice),
            "INSERT INTO item_flag (item_id, revision_number, name, source, evidence, "
            "created_at) VALUES ('o:1', 1, 'html', 'auto', '[1,2]', now())",
        )


FLAG_SQL = (
    "INSERT INTO item_flag (item_id, revision_number, name, source, evidence, created_at) "
    "VALUES ('o:1', 1, :name, :source, '{\"summary\": \"planted\"}', now())"
)
EVENT_SQL = (
    "INSERT INTO audit_event (actor, action, target, payload, os_login, host, created_at) "
    "VALUES ('x', '{action}', 'o:1', '{{}}', '', '', now())"
)


def with_its_event(url: str, statement: str, action: str, **params: object) -> None:
    """``statement`` and an audit event ``action`` on o:1 in one transaction, as ``url``'s role."""
    engine = sa.create_engine(url)
    try:
        with engine.begin() as connection:
            connection.execute(sa.text(statement), params)
            connection.execute(sa.text(EVENT_SQL.format(action=action)))
    finally:
        engine.dispose()


@pytestmark_pg
def test_a_members_flag_comes_with_what_it_is_about(team: Team, tmp_path: Path) -> None:
    # With psql a member planted a well-formed flag with made-up evidence on any item;
    # the review app and triage showed it as the rules' or a second opinion's finding.
    alice = team.url(team.alice)
    for name, source in (
        ("html", "auto"),
        ("model-disagrees", "model"),
        ("second-opinion", "check"),
    ):
        with pytest.raises(sa.exc.ProgrammingError, match="added it alone"):
            raw(alice, FLAG_SQL, name=name, source=source)
    # a second opinion's, with its audit event: taken
    with_its_event(alice, FLAG_SQL, "flag", name="second-opinion", source="check")
    raw(team.url(team.lena), FLAG_SQL, name="html", source="auto")  # a lead recomputes flags
    stored = "SELECT name, source FROM item_flag WHERE evidence::text LIKE '%planted%' ORDER BY 1"
    assert raw(team.owner_url, stored).all() == [("html", "auto"), ("second-opinion", "check")]
    # vetbench's own paths still flag: an import's new revisions (an edit's in
    # test_privileges), the near-duplicate link included.
    path = tmp_path / "flagged.jsonl"
    prompt = "Which tool of monetary policy sets the share of deposits banks hold?<br>"
    records = [
        {
            "id": f"h:{n}",
            "kind": "single",
            "prompt": prompt + "!" * n,
            "choices": {"A": "reserve ratio", "B": "tariffs"},
            "key": "A",
        }  # fmt: skip
        for n in (1, 2)
    ]
    path.write_text("".join(json.dumps(record) + "\n" for record in records), encoding="utf-8")
    imported = run(alice, "import", str(path))
    assert imported.exit_code == 0, imported.output
    flags = "SELECT item_id, name FROM item_flag WHERE item_id LIKE 'h:%' ORDER BY 1, 2"
    assert raw(alice, flags).all() == [("h:1", "html"), ("h:2", "duplicate"), ("h:2", "html")]


@pytestmark_pg
def test_an_annotators_second_opinion_flags_and_caches_within_the_rules(
    team: Team, monkeypatch: pytest.MonkeyPatch
) -> None:
    # `vetbench check` run by an annotator: its flags commit with their audit event, and
    # the answers it cached are hers, asked again from the cache by her alone.
    from fake_openai_server import FakeOpenAIServer, ItemReview, second_opinion

    monkeypatch.setenv("VETBENCH_GUARDS_TEST_KEY", "sk-guards")
    review = {"o:1": ItemReview(sensitive=True, reasons="It mocks a named group.")}
    with FakeOpenAIServer(default=second_opinion(review)) as server:
        options = server.cli_options("openai:reviewer-1", "VETBENCH_GUARDS_TEST_KEY")
        for person in (team.alice, team.alice, team.bob):
            checked = run(team.url(person), "check", *options, "--item", "o:1", "--json")
            assert checked.exit_code == 0, checked.output
        asked = len(server.chat_requests())
    assert asked == 2  # alice's second run read her cache; bob's asked the model again
    flags = "SELECT name, source FROM item_flag WHERE item_id = 'o:1' AND source = 'check'"
    assert raw(team.owner_url, flags).all() == [("second-opinion", "check")]
    cached = "SELECT db_role FROM api_response ORDER BY db_role"
    assert raw(team.owner_url, cached).scalars().all() == sorted([team.alice, team.bob])


@pytestmark_pg
def test_the_migration_takes_each_runs_starter_from_the_audit_trail() -> None:
    from conftest import fresh_postgres_database, postgres_server

    server = postgres_server()
    for url in fresh_postgres_database(server):
        engine = make_engine(url)
        upgrade_to(engine, "0006_guidelines_gold_search")
        with engine.begin() as connection:
            run_id = connection.execute(
                sa.text(RUN_SQL.replace(", db_role", "").replace(", :claimed", ""))
            ).scalar_one()
            connection.execute(
                sa.text(
                    "INSERT INTO audit_event (actor, action, target, payload, os_login, host, "
                    "created_at) VALUES ('x', 'eval-run', :target, '{}', '', '', now())"
                ),
                {"target": f"run:{run_id}"},
            )
            starter = connection.execute(sa.text("SELECT session_user")).scalar_one()
        upgrade_to(engine, "head")
        with engine.connect() as connection:
            assert connection.execute(sa.text("SELECT db_role FROM eval_run")).scalar_one() == (
                starter
            )
        engine.dispose()


@pytestmark_pg
def test_annotators_cannot_read_gold_answers_until_they_judged_one(team: Team) -> None:
    marked = run(team.url(team.lena), "gold", "add", "o:2", "--verdict", "keep", "--answer", "ABCD")
    assert marked.exit_code == 0, marked.output
    alice = team.url(team.alice)
    for column in ("answer", "verdict", "note", "*"):
        with pytest.raises(sa.exc.ProgrammingError, match="permission denied for table gold_item"):
            raw(alice, f"SELECT {column} FROM gold_item")
    gold_id = raw(alice, "SELECT id FROM gold_item WHERE item_id = 'o:2'").scalar_one()
    known = "SELECT answer FROM vetbench_gold_known(:gold)"
    assert raw(alice, known, gold=gold_id).all() == []
    listed = run(alice, "gold", "list")
    assert (
        listed.exit_code == 1
        and "ABCD" not in listed.output
        and "A, B, C, D" not in (listed.output)
    )
    judged = run(alice, "judge", "o:2", "--answer", "ABCD", "--verdict", "keep")
    assert judged.exit_code == 0, judged.output
    assert "gold item: your answer ✓ matches, your verdict ✓ matches" in judged.output
    assert raw(alice, known, gold=gold_id).scalar_one() == "ABCD"
    assert raw(team.url(team.bob), known, gold=gold_id).all() == []
    lead_list = run(team.url(team.lena), "gold", "list")
    assert lead_list.exit_code == 0 and "A, B, C, D" in lead_list.output
    agreement = run(team.url(team.bob), "agreement")
    assert agreement.exit_code == 0, agreement.output


@pytestmark_pg
def test_annotators_do_not_read_gold_answers_in_the_audit_trail(team: Team) -> None:
    # The gold-add event holds the known verdict and answer: `vetbench audit` showed them
    # to any annotator, and so did SELECT on audit_event.
    lena, alice = team.url(team.lena), team.url(team.alice)
    marked = run(lena, "gold", "add", "o:2", "--verdict", "wrong-key", "--answer", "DCBA")
    assert marked.exit_code == 0, marked.output
    judged = run(alice, "judge", "o:1", "--answer", "ABCD", "--verdict", "keep")
    assert judged.exit_code == 0, judged.output

    trail = run(alice, "audit")
    assert trail.exit_code == 0, trail.output
    assert "gold-add" not in trail.output and "DCBA" not in trail.output
    assert f"{team.alice}  judge o:1" in trail.output  # the rest of the trail, as before
    hidden = (
        "SELECT count(*) FROM audit_event WHERE action = 'gold-add' OR payload::text LIKE '%DCBA%'"
    )
    assert raw(alice, hidden).scalar_one() == 0
    assert raw(team.url(team.bob), hidden).scalar_one() == 0

    lead_trail = run(lena, "audit", "--item", "o:2")
    assert lead_trail.exit_code == 0, lead_trail.output
    assert "gold-add o:2" in lead_trail.output and "answer=DCBA" in lead_trail.output


@pytestmark_pg
def test_annotators_do_not_read_anothers_calibration_answers(team: Team) -> None:
    # Bob's blind answer to a gold item, beside whether it matched (which every member
    # reads: vetbench_calibration_outcomes), told the known answer and verdict to anyone.
    lena, alice, bob = team.url(team.lena), team.url(team.alice), team.url(team.bob)
    marked = run(lena, "gold", "add", "o:2", "--verdict", "wrong-key", "--answer", "DCBA")
    assert marked.exit_code == 0, marked.output
    calibrated = run(
        bob, "judge", "o:2", "--answer", "DCBA", "--verdict", "wrong-key", "--corrected", "DCBA"
    )
    assert calibrated.exit_code == 0, calibrated.output
    judged = run(bob, "judge", "o:1", "--answer", "BACD", "--verdict", "flawed", "--comment", "x")
    assert judged.exit_code == 0, judged.output

    answers = "SELECT item_id, blind_answer, verdict FROM judgment ORDER BY item_id"
    assert raw(alice, answers).all() == [("o:1", "BACD", "flawed")]  # ordinary: read as before
    assert raw(bob, answers).all() == [("o:1", "BACD", "flawed"), ("o:2", "DCBA", "wrong-key")]
    assert len(raw(lena, answers).all()) == 2
    outcomes = "SELECT matched FROM vetbench_calibration_outcomes()"
    assert raw(alice, outcomes).scalars().all() == [True]  # the outcome stays public
    told = "SELECT count(*) FROM audit_event WHERE payload::text LIKE '%DCBA%'"
    assert raw(alice, told).scalar_one() == 0
    assert raw(bob, told).scalar_one() == 1  # their own judgment's event
    trail = run(alice, "audit")
    assert trail.exit_code == 0, trail.output
    assert "DCBA" not in trail.output and f"{team.bob}  judge o:1" in trail.output

    # Alice's own calibration judgment is hers to read; her session's consensus weighs
    # no calibration judgment (it knows no gold truth) and still reads o:1's: one item,
    # counted (each item's consensus is a lead's to read), and bob among its raters.
    mine = run(alice, "judge", "o:2", "--answer", "ABCD", "--verdict", "keep")
    assert mine.exit_code == 0, mine.output
    assert raw(alice, answers).all() == [("o:1", "BACD", "flawed"), ("o:2", "ABCD", "keep")]
    consensus = run(alice, "consensus", "--json")
    assert consensus.exit_code == 0, consensus.output
    weighed = json.loads(consensus.output)
    assert "DCBA" not in consensus.output and weighed["items"] == 1
    assert [rater["name"] for rater in weighed["raters"]] == [team.bob]


@pytestmark_pg
def test_a_database_downgraded_before_calibration_lets_members_read_judgments_again(
    team: Team,
) -> None:
    # Below 0006 there is no gold_id, so the policy that hides calibration answers cannot
    # stand; the downgrade puts back the one that revision had, or members read nothing.
    judged = run(team.url(team.bob), "judge", "o:1", "--answer", "BACD", "--verdict", "keep")
    assert judged.exit_code == 0, judged.output
    answers = "SELECT blind_answer FROM judgment"
    policies = "SELECT policyname FROM pg_policies WHERE tablename = 'judgment' AND cmd = 'SELECT'"
    engine = make_engine(team.owner_url)
    try:
        command.downgrade(alembic_config(engine), "0005_item_flags")
        assert raw(team.owner_url, policies).scalars().all() == ["members_read"]
        assert raw(team.url(team.alice), answers).scalars().all() == ["BACD"]
        upgrade_to(engine, "head")
    finally:
        engine.dispose()
    assert raw(team.owner_url, policies).scalars().all() == [
        "read_judgments_but_others_calibration"
    ]
    assert raw(team.url(team.alice), answers).scalars().all() == ["BACD"]


@pytestmark_pg
def test_an_items_metadata_changes_only_with_its_audit_event(team: Team, tmp_path: Path) -> None:
    # The language picks the evaluation prompt, meta holds CFLUE's exam: with psql a
    # member changed them without a trace in the audit trail.
    alice = team.url(team.alice)
    for change in ("language = 'fr'", "source_ref = 'line 9'", 'meta = \'{"exam": "x"}\''):
        with pytest.raises(sa.exc.ProgrammingError, match="changes only with an audit event"):
            raw(alice, f"UPDATE item SET {change} WHERE id = 'o:1'")
    raw(alice, "UPDATE item SET meta = meta, language = language WHERE id = 'o:1'")  # no change
    # recorded, in the same transaction: taken
    with_its_event(alice, "UPDATE item SET language = 'fr' WHERE id = 'o:1'", "metadata")
    assert raw(alice, "SELECT language FROM item WHERE id = 'o:1'").scalar_one() == "fr"

    # vetbench's own path, a re-import that changes only metadata, records the event.
    path = tmp_path / "gen.jsonl"
    for meta in ({"model": "m1"}, {"model": "m2"}):
        record = {"id": "gen:1", "kind": "single", "prompt": "Which tool is monetary policy?",
                  "choices": {"A": "reserve ratio", "B": "tariffs"}, "key": "A", "meta": meta}  # fmt: skip
        path.write_text(json.dumps(record) + "\n", encoding="utf-8")
        imported = run(alice, "import", str(path))
        assert imported.exit_code == 0, imported.output
    trail = run(alice, "audit", "--item", "gen:1")
    assert "metadata gen:1" in trail.output, trail.output


CACHE_SQL = (
    "INSERT INTO api_response (key, db_role, model, response, created_at) "
    "VALUES ('k', :role, 'm', '{\"text\": \"planted\"}', now())"
)


@pytestmark_pg
def test_a_cached_model_answer_is_read_only_by_the_role_that_cached_it(team: Team) -> None:
    # Any member could plant or rewrite a cached response, which a later evaluation took
    # as the model's answer.
    from evaluator.response_cache import ResponseCache

    def cache(url: str) -> tuple[ResponseCache, Database]:
        database = open_database(url)
        return ResponseCache(database), database

    raw(team.url(team.bob), CACHE_SQL, role=team.alice)  # stamped with bob's role instead
    with pytest.raises(sa.exc.ProgrammingError, match="permission denied for table api_response"):
        raw(team.url(team.bob), "UPDATE api_response SET response = '{}'")
    opened = [cache(url) for url in (team.url(team.alice), team.url(team.bob), team.owner_url)]
    try:
        (alice, _), (bob, _), (owner, _) = opened
        assert alice.get("k") is None and owner.get("k") is None
        assert bob.get("k") == {"text": "planted"}
        assert alice.put("k", "m", {"text": "the model's"})
        assert alice.get("k") == {"text": "the model's"}
        assert bob.get("k") == {"text": "planted"} and owner.get("k") is None
        roles = "SELECT db_role FROM api_response ORDER BY db_role"
        assert raw(team.owner_url, roles).scalars().all() == sorted([team.alice, team.bob])
    finally:
        for _, database in opened:
            database.dispose()


GOLD_JUDGMENT_SQL = (
    "INSERT INTO judgment ({id}item_id, revision_id, revision_number, annotator_id, "
    "blind_answer, verdict, alternative_orders, comment, seconds, created_at, retracted, "
    "gold_id) SELECT {value}'o:2', r.id, 1, :annotator, 'DCBA', 'wrong-key', '[]', '', 0, "
    "'2000-01-01', false, :gold FROM item_revision r WHERE r.item_id = 'o:2' RETURNING id"
)


@pytestmark_pg
def test_no_gold_answer_is_told_for_a_judgment_a_rollback_takes_back(team: Team) -> None:
    # An annotator inserted a judgment of a gold item with psql, read the known answer
    # (or whether theirs matched) and rolled back: no trace, then a "first" answer right.
    lena, alice = team.url(team.lena), team.url(team.alice)
    marked = run(lena, "gold", "add", "o:2", "--verdict", "wrong-key", "--answer", "DCBA")
    assert marked.exit_code == 0, marked.output
    gold_id = raw(alice, "SELECT id FROM gold_item WHERE item_id = 'o:2'").scalar_one()
    mine = {"annotator": team.person_id(team.alice), "gold": gold_id}
    engine = sa.create_engine(alice)
    try:
        with engine.connect() as connection, connection.begin() as transaction:
            judgment = connection.execute(
                sa.text(GOLD_JUDGMENT_SQL.format(id="", value="")), mine
            ).scalar_one()
            told = connection.execute(
                sa.text("SELECT answer FROM vetbench_gold_known(:gold)"), mine
            ).all()
            matched = connection.execute(
                sa.text(
                    "SELECT matched FROM vetbench_calibration_outcomes() WHERE judgment_id = :j"
                ),
                {"j": judgment},
            ).all()
            stamped = connection.execute(
                sa.text("SELECT extract(year FROM created_at) FROM judgment WHERE id = :j"),
                {"j": judgment},
            ).scalar_one()
            transaction.rollback()
    finally:
        engine.dispose()
    assert told == [] and matched == []
    assert stamped != 2000  # the server's time, not the one written
    # Nor does anyone place a judgment before their first answer by choosing its id.
    with pytest.raises(sa.exc.ProgrammingError, match="judgment ids come from their sequence"):
        raw(alice, GOLD_JUDGMENT_SQL.format(id="id, ", value="-1, "), **mine)

    judged = run(alice, "judge", "o:2", "--answer", "ABCD", "--verdict", "keep")
    assert judged.exit_code == 0, judged.output
    assert "your answer ✗ differs, your verdict ✗ differs (known: wrong-key, D, C, B, A)" in (
        judged.output
    )
    assert raw(alice, "SELECT answer FROM vetbench_gold_known(:gold)", **mine).scalar_one() == (
        "DCBA"
    )


@pytestmark_pg
def test_a_members_claim_is_dated_by_the_server(team: Team) -> None:
    # A claim dated 2100 with psql never expired: the item stayed claimed, its holder at work.
    alice = team.url(team.alice)
    mine = {"person": team.person_id(team.alice)}
    raw(
        alice,
        "INSERT INTO claim (item_id, person_id, claimed_at) VALUES ('o:1', :person, '2100-01-01')",
        **mine,
    )
    raw(alice, "UPDATE claim SET claimed_at = '2100-01-01' WHERE person_id = :person", **mine)
    year = (
        "SELECT extract(year FROM claimed_at), claimed_at <= now() FROM claim WHERE item_id = 'o:1'"
    )
    stored_year, not_ahead = raw(alice, year).one()
    assert stored_year != 2100 and not_ahead


@pytestmark_pg
def test_a_decision_dated_ahead_does_not_outlive_a_later_one(team: Team) -> None:
    # The newest decision counts: one a lead dated 2100 with psql beat every later one.
    other_lead = team.roles.name("lena2")
    added = run(team.owner_url, "users", "add", other_lead, "--role", "lead", "--no-password")
    assert added.exit_code == 0, added.output
    raw(
        team.url(other_lead),
        "INSERT INTO decision (item_id, lead_id, status, revision_number, final_key, comment, "
        "created_at) VALUES ('o:1', :lead, 'approved', 1, 'ABCD', '', '2100-01-01')",
        lead=team.person_id(other_lead),
    )
    later = run(
        team.url(team.lena),
        "decide",
        "o:1",
        "--status",
        "rejected",
        "--reason",
        "other",
        "--comment",
        "the key is disputed",
    )
    assert later.exit_code == 0, later.output
    assert _owner_item(team, "o:1")[2] == "rejected"


def _password(team: Team, name: str) -> str | None:
    return raw(
        team.owner_url, "SELECT rolpassword FROM pg_authid WHERE rolname = :name", name=name
    ).scalar_one()


@pytestmark_pg
def test_users_add_keeps_other_roles_and_passwords_unless_told(team: Team) -> None:
    other = team.roles.name("otherapp")
    raw(team.owner_url, f"CREATE ROLE \"{other}\" LOGIN PASSWORD 'theirs'")
    theirs = _password(team, other)
    refused = run(team.owner_url, "users", "add", other, "--password-stdin", stdin="mine\n")
    assert refused.exit_code == 1 and "is not a member of a vetbench group" in refused.output
    assert "--adopt" in refused.output and _password(team, other) == theirs
    adopted = run(team.owner_url, "users", "add", other, "--adopt")
    assert adopted.exit_code == 0, adopted.output
    assert "password changed" not in adopted.output and _password(team, other) == theirs
    # A vetbench person's password too is kept unless --reset-password.
    again = run(team.owner_url, "users", "add", other, "--password-stdin", stdin="mine\n")
    assert again.exit_code == 1 and "--reset-password" in again.output
    assert _password(team, other) == theirs
    reset = run(
        team.owner_url, "users", "add", other, "--reset-password", "--password-stdin",
        stdin="mine\n",
    )  # fmt: skip
    assert reset.exit_code == 0 and "password changed" in reset.output
    assert _password(team, other) != theirs
    # A superuser's name: one line, nothing changed.
    root = team.roles.name("root")
    raw(team.owner_url, f'CREATE ROLE "{root}" SUPERUSER LOGIN')
    superuser = run(team.owner_url, "users", "add", root, "--password-stdin", stdin="x\n")
    assert superuser.exit_code == 1 and "is a superuser" in superuser.output
    assert _password(team, root) is None


# --- SQLite ---------------------------------------------------------------------------------


def test_sqlite_refuses_a_bare_approval_and_takes_a_decided_one(db_path: Path) -> None:
    database = open_database(db_path)
    store_item(database, "o:1")
    database.dispose()
    connection = sqlite3.connect(db_path)
    with pytest.raises(sqlite3.DatabaseError, match="come only from a lead's decision"):
        connection.execute("UPDATE item SET status = 'approved' WHERE id = 'o:1'")
    connection.close()
    database = open_database(db_path)
    decide_items(database, ["o:1"])
    with database.session() as session:
        assert session.exec(select(Item.status)).one() == "approved"
    database.dispose()


def test_sqlite_refuses_insert_or_replace_of_an_audit_event(db_path: Path) -> None:
    database = open_database(db_path)
    store_item(database, "o:1")
    database.dispose()
    connection = sqlite3.connect(db_path)
    connection.execute(AUDIT_SQL)
    connection.commit()
    with pytest.raises(sqlite3.DatabaseError, match="INSERT OR REPLACE"):
        connection.execute(
            "INSERT OR REPLACE INTO audit_event (id, actor, action, target, payload, os_login, "
            "host, created_at) VALUES (1, 'mallory', 'x', 'o:1', '{}', '', '', '2026-01-01')"
        )
    assert connection.execute("SELECT actor FROM audit_event").fetchall() == [("lena",)]
    connection.close()


def tamper_with(db_path: Path, *statements: str) -> None:
    """Run ``statements`` on the SQLite file with sqlite3 itself, as someone holding the
    file (or restoring a doctored backup by ``cp``) would, and commit."""
    connection = sqlite3.connect(db_path)
    try:
        for statement in statements:
            connection.execute(statement)
        connection.commit()
    finally:
        connection.close()


def test_init_restores_dropped_triggers_and_says_so(db_path: Path) -> None:
    open_database(db_path).dispose()
    tamper_with(
        db_path,
        AUDIT_SQL,
        "DROP TRIGGER audit_event_no_update",
        "DROP TRIGGER item_status_from_decision",
    )
    result = run_cli(db_path, "init")
    assert result.exit_code == 0, result.output
    assert "restored missing triggers: audit_event_no_update, item_status_from_decision" in (
        result.output
    )
    again = run_cli(db_path, "init")
    assert "restored" not in again.output and "up to date" in again.output
    connection = sqlite3.connect(db_path)
    with pytest.raises(sqlite3.DatabaseError, match="append-only"):
        connection.execute("UPDATE audit_event SET actor = 'x'")
    connection.close()


def test_init_restores_the_release_triggers_and_names_items_no_decision_holds(
    db_path: Path,
) -> None:
    """With the release and status triggers dropped by sqlite3 (a backup restored by
    `cp`), a release could be emptied and an item approved with no decision, silently:
    `init` put back only the audit and status triggers and said nothing of the item."""
    database = open_database(db_path)
    for item_id in ("o:1", "o:2", "o:3", "o:4"):
        store_item(database, item_id)
    decide_items(database, ["o:1", "o:2"])
    store_person(database, "lena", Role.LEAD)
    database.dispose()
    assert run_cli(db_path, "release", "create", "v1", "--as", "lena").exit_code == 0
    release_triggers = sorted(SQLITE_RELEASE_TRIGGERS)
    assert release_triggers == [
        "release_complete",
        "release_item_no_delete",
        "release_item_no_update",
        "release_item_sealed",
        "release_no_delete",
        "release_no_update",
    ]
    tamper_with(
        db_path,
        *(f"DROP TRIGGER {name}" for name in (*release_triggers, "item_status_from_decision")),
        # What the dropped triggers let through: a bare approval and a rejection of an
        # item approved by decision, neither with a decision that holds.
        "UPDATE item SET status = 'approved' WHERE id = 'o:3'",
        "UPDATE item SET status = 'rejected' WHERE id = 'o:2'",
    )
    result = run_cli(db_path, "init")
    assert result.exit_code == 0, result.output
    restored = result.output.split("restored missing triggers: ")[1].split("\n")[0]
    assert sorted(restored.split(", ")) == sorted((*release_triggers, "item_status_from_decision"))
    assert (
        "2 items approved or rejected with no decision in force: o:2, o:3; a lead decides "
        "each again (vetbench decide ITEM_ID --status ...)"
    ) in result.output
    assert "up to date" in result.output
    # The release is frozen again.
    connection = sqlite3.connect(db_path)
    with pytest.raises(sqlite3.DatabaseError, match="a release never changes"):
        connection.execute("DELETE FROM release_item")
    with pytest.raises(sqlite3.DatabaseError, match="a release never changes"):
        connection.execute("UPDATE release SET note = 'rewritten'")
    connection.close()
    # Decided again by a lead, the items are held by a decision: nothing more to say.
    for item_id, status in (("o:2", "rejected"), ("o:3", "approved")):
        decided = run_cli(
            db_path, "decide", item_id, "--status", status, "--as", "lena",
            *(("--reason", "flawed") if status == "rejected" else ()),
        )  # fmt: skip
        assert decided.exit_code == 0, decided.output
    again = run_cli(db_path, "init")
    assert "restored" not in again.output and "no decision" not in again.output

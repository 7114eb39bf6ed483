# ruff: noqa: F811  (tests take the fixture `team` imported from test_privileges)
"""Writes an adversarial probe made with psql as an annotator or a lead around vetbench's
rules (db.guards, db.review_guards, db.privileges, migration 0023), run as real
PostgreSQL login roles with raw SQL; and vetbench's own paths, which still work."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

import pytest
import sqlalchemy as sa
from fake_openai_server import FakeOpenAIServer, RecordedRequest, Reply
from helpers import store_item
from test_generation import ARTICLES_CSV, KEY_ENV, SECRET, ordering_answer
from test_guards import EVENT_SQL
from test_member_writes import IMPORT_EVENT_SQL, ITEM_SQL, NEW_ITEM_REVISION_SQL, in_one_transaction
from test_privileges import JUDGE_EVENT_SQL, Team, raw, run, team  # noqa: F401  (team: the fixture)

from db.engine import make_engine, open_database
from db.migrate import upgrade_to
from reviewer.judging import ItemEdit, edit_item

pytestmark = pytest.mark.postgres  # (the upgrade test runs on SQLite as well)
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"

PROBE_JUDGMENT_SQL = (
    "INSERT INTO judgment (annotator_id, item_id, revision_number, revision_id, blind_answer, "
    "verdict, alternative_orders, comment, seconds, retracted) SELECT :annotator, item_id, 1, id, "
    ":answer, :verdict, CAST(:others AS json), '', 1, false FROM item_revision "
    "WHERE item_id = :item"
)


def judge_raw(url: str, annotator: int, item: str, answer: str, *, event: bool = True) -> None:
    """A well-formed judgment (verdict keep) written as psql would, with its ``judge``
    event in the same transaction unless ``event`` is False."""
    statements = (PROBE_JUDGMENT_SQL, JUDGE_EVENT_SQL) if event else (PROBE_JUDGMENT_SQL,)
    in_one_transaction(
        url, *statements, annotator=annotator, item=item, answer=answer, verdict="keep", others="[]"
    )


def test_a_members_judgment_holds_vetbench_values_comes_audited_and_once(team: Team) -> None:
    # The probe: a judgment with no audit event, a made-up verdict and answer, stored;
    # and several judgments in force of one revision by one annotator.
    owner = open_database(team.owner_url)
    try:
        store_item(owner, "m:1", kind="multi", key="AC", choices=4)
        store_item(owner, "t:1", kind="truefalse", key="A")
    finally:
        owner.dispose()
    alice = team.url(team.alice)
    mine = {"annotator": team.person_id(team.alice), "item": "o:1", "others": "[]"}
    probe = {**mine, "answer": "not-an-answer", "verdict": "bogusverdict", "others": '{"x": 1}'}
    with pytest.raises(sa.exc.IntegrityError, match="has verdict bogusverdict"):
        raw(alice, PROBE_JUDGMENT_SQL, **probe)
    with pytest.raises(sa.exc.IntegrityError, match="other orders a list"):
        raw(alice, PROBE_JUDGMENT_SQL, **{**probe, "verdict": "keep"})
    not_answers = {
        "o:1": ("not-an-answer", "", "ABC", "ABCDE", "AABC", "abcd", "ABCE"),
        "m:1": ("CA", "AA", "AE", "", "ABCDE"),
        "t:1": ("AB", "C", ""),
    }
    for item, answers in not_answers.items():
        for answer in answers:
            with pytest.raises(sa.exc.IntegrityError, match="which is not an answer to it"):
                raw(alice, PROBE_JUDGMENT_SQL, **{**mine, "item": item, "answer": answer,
                                                  "verdict": "keep"})  # fmt: skip
    assert raw(alice, "SELECT count(*) FROM judgment").scalar_one() == 0
    # Well-formed but unrecorded; or with the event of another item: refused at commit.
    unrecorded = 'judgment .* of item o:1 is stored only with its audit event "judge"'
    with pytest.raises(sa.exc.ProgrammingError, match=unrecorded):
        judge_raw(alice, mine["annotator"], "o:1", "DCBA", event=False)
    with pytest.raises(sa.exc.ProgrammingError, match=unrecorded):
        in_one_transaction(
            alice,
            PROBE_JUDGMENT_SQL,
            JUDGE_EVENT_SQL.replace(":item", "'o:2'"),
            **mine,
            answer="DCBA",
            verdict="keep",
        )
    # With its event: stored, each canonical form of its kind; once per revision.
    for item, answer in (("o:1", "DCBA"), ("m:1", "AC"), ("t:1", "B")):
        judge_raw(alice, mine["annotator"], item, answer)
    with pytest.raises(sa.exc.ProgrammingError, match="already judged item m:1 revision 1"):
        judge_raw(alice, mine["annotator"], "m:1", "B")
    assert raw(alice, "SELECT count(*) FROM judgment").scalar_one() == 3
    # vetbench's own judgments and re-judging (an undo, then a judgment) still work.
    bob = team.url(team.bob)
    judged = run(bob, "judge", "o:1", "--answer", "A, B, C, D", "--verdict", "keep")
    assert judged.exit_code == 0, judged.output
    assert run(bob, "undo").exit_code == 0
    again = run(bob, "judge", "o:1", "--answer", "DCBA", "--verdict", "keep")
    assert again.exit_code == 0, again.output
    active = "SELECT count(*) FROM judgment WHERE annotator_id = :b AND NOT retracted"
    assert raw(bob, active, b=team.person_id(team.bob)).scalar_one() == 1


def test_a_new_item_is_written_in_its_writers_name_with_an_event_naming_it(
    team: Team, tmp_path: Path
) -> None:
    # The probe: an "import" event about any file, then an item and its first revision
    # as the lead's, committed; the queue never served the lead "her" item.
    alice = team.url(team.alice)
    new_item = (ITEM_SQL, NEW_ITEM_REVISION_SQL)
    as_lena = {"number": 1, "author": team.lena, "payload": '{"source": "psql"}'}
    with pytest.raises(
        sa.exc.ProgrammingError, match=f"only in their own name, not as {team.lena}"
    ):
        in_one_transaction(alice, IMPORT_EVENT_SQL, *new_item, **as_lena)
    # Nor as a login that is no person yet, nor anyone's with a lead's own "import".
    carol = team.roles.name("carol")
    raw(team.owner_url, f'CREATE ROLE "{carol}" LOGIN IN ROLE vetbench_annotator')
    with pytest.raises(sa.exc.ProgrammingError, match=f"not as {carol}"):
        in_one_transaction(alice, IMPORT_EVENT_SQL, *new_item, **{**as_lena, "author": carol})
    with pytest.raises(sa.exc.ProgrammingError, match=f"not as {team.alice}"):
        in_one_transaction(
            team.url(team.lena), IMPORT_EVENT_SQL, *new_item, **{**as_lena, "author": team.alice}
        )
    # Her own, with an event that names another source (or nothing): refused at commit.
    as_alice = {**as_lena, "author": team.alice}
    unnamed = "new item bare:1 comes with the audit event .* naming it or its source psql"
    for payload in ("{}", '{"source": "elsewhere"}', '{"source": "x", "sources": ["y"]}'):
        with pytest.raises(sa.exc.ProgrammingError, match=unnamed):
            in_one_transaction(
                alice, IMPORT_EVENT_SQL, *new_item, **{**as_alice, "payload": payload}
            )
    assert raw(alice, "SELECT count(*) FROM item WHERE id = 'bare:1'").scalar_one() == 0
    # Naming its source, or among the sources of a file's records: stored.
    in_one_transaction(alice, IMPORT_EVENT_SQL, *new_item, **as_alice)
    second = [statement.replace("bare:1", "bare:2") for statement in new_item]
    in_one_transaction(
        alice,
        IMPORT_EVENT_SQL,
        *second,
        **{**as_alice, "payload": '{"source": "x", "sources": ["psql"]}'},
    )
    # A generated item is its model's, which is no one here, with the event naming it.
    generated = [statement.replace("bare:1", "bare:3") for statement in new_item]
    generate_event = EVENT_SQL.format(action="generate").replace("'o:1'", "'bare:3'")
    in_one_transaction(alice, *generated, generate_event, **{**as_alice, "author": "gpt-test"})
    authors = "SELECT item_id, author FROM item_revision WHERE item_id LIKE 'bare:%' ORDER BY 1"
    assert raw(alice, authors).all() == [
        ("bare:1", team.alice),
        ("bare:2", team.alice),
        ("bare:3", "gpt-test"),
    ]
    # vetbench's own imports: a CSV, and JSONL whose records name their own source.
    imported = run(alice, "import", str(FIXTURES / "econ_ordering.csv"))
    assert imported.exit_code == 0, imported.output
    exported = run(
        alice, "export", "--status", "all", "--source", "psql", str(tmp_path / "all.jsonl")
    )
    assert exported.exit_code == 0, exported.output
    renamed = (tmp_path / "all.jsonl").read_text(encoding="utf-8").replace('"bare:', '"copy:')
    renamed = renamed.replace('"source":"psql"', '"source":"copied"')
    (tmp_path / "copies.jsonl").write_text(renamed, encoding="utf-8")
    copied = run(alice, "import", str(tmp_path / "copies.jsonl"))
    assert copied.exit_code == 0, copied.output
    assert raw(alice, "SELECT count(*) FROM item WHERE source = 'copied'").scalar_one() == 3
    # A history naming a lead as an author is hers to vouch for, not an annotator's.
    forged = renamed.replace('"copy:', '"forged:').replace(
        f'"author":"{team.alice}"', f'"author":"{team.lena}"'
    )
    (tmp_path / "forged.jsonl").write_text(forged, encoding="utf-8")
    refused = run(alice, "import", str(tmp_path / "forged.jsonl"))
    assert refused.exit_code == 1
    assert f"of item forged:1 only in their own name, not as {team.lena}" in refused.output
    assert raw(alice, "SELECT count(*) FROM item WHERE id LIKE 'forged:%'").scalar_one() == 0


OTHER_EVENTS = {
    "A": "A drought ruins the wheat harvest.",
    "B": "Bread prices climb in the shops.",
    "C": "The government cuts import duties on grain.",
    "D": "Bakeries switch to imported flour.",
}
UNLINK_SQL = (
    "UPDATE item SET suspected_duplicate_of = NULL, duplicate_similarity = NULL "
    "WHERE suspected_duplicate_of IS NOT NULL"
)


def test_an_items_duplicate_link_changes_only_with_the_event_that_moved_it(team: Team) -> None:
    # The probe: an annotator cleared every duplicate link, approved items' included.
    lena, alice = team.url(team.lena), team.url(team.alice)
    recomputed = run(lena, "flags", "recompute")  # o:2 repeats o:1: linked
    assert recomputed.exit_code == 0, recomputed.output
    approved = run(lena, "decide", "o:2", "--status", "approved")
    assert approved.exit_code == 0, approved.output
    link = "SELECT suspected_duplicate_of FROM item WHERE id = 'o:2'"
    assert raw(alice, link).scalar_one() == "o:1"
    unrecorded = "the duplicate link of item o:2 .* changes only with the audit event"
    with pytest.raises(sa.exc.ProgrammingError, match=unrecorded):
        raw(alice, UNLINK_SQL)
    # Nor with an event of another kind naming it, or one about another item.
    for action, target in (("flag", "o:2"), ("revise", "o:3"), ("import", "o:3")):
        event = EVENT_SQL.format(action=action).replace("'o:1'", f"'{target}'")
        with pytest.raises(sa.exc.ProgrammingError, match=unrecorded):
            in_one_transaction(alice, UNLINK_SQL, event)
    # A lead's raw change too, unless it comes with a recompute's event.
    with pytest.raises(sa.exc.ProgrammingError, match=unrecorded):
        raw(lena, "UPDATE item SET duplicate_similarity = 0.5 WHERE id = 'o:2'")
    assert raw(alice, link).scalar_one() == "o:1"
    similarity = "SELECT duplicate_similarity FROM item WHERE id = 'o:2'"
    before = raw(alice, similarity).one()
    # vetbench's own: an edit of the original rewrites the copy's link (its similarity).
    member = open_database(alice)
    try:
        edit_item(member, team.alice, "o:1", ItemEdit("other events", choices=OTHER_EVENTS))
    finally:
        member.dispose()
    # Kept, with the similarity of the texts as they are now (apart).
    assert raw(alice, similarity).one() < before


def one_article(request: RecordedRequest) -> Reply:
    """The same item, whichever article was asked about: every one after the first repeats it."""
    told = {"role": "user", "content": "Article title: Harbor Roasters"}
    return ordering_answer(replace(request, body={**(request.body or {}), "messages": [told]}))


def test_a_members_generation_links_its_near_copies_with_an_event(
    team: Team, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Generated items that repeat each other are linked once the run ends, in a
    # transaction of its own: it records a "generate" event naming their source.
    monkeypatch.setenv(KEY_ENV, SECRET)
    alice = team.url(team.alice)
    with FakeOpenAIServer(default=one_article) as server:
        options = server.cli_options("fake-model", KEY_ENV)
        generated = run(
            alice, "generate", *options, "--max-wait", "0.01", "--kind", "ordering",
            "--articles", str(ARTICLES_CSV),
        )  # fmt: skip
    assert generated.exit_code == 0, generated.output
    linked = "SELECT count(*) FROM item WHERE suspected_duplicate_of IS NOT NULL"
    assert raw(alice, linked).scalar_one() > 0
    events = "SELECT payload ->> 'sources' FROM audit_event WHERE target = 'duplicates'"
    assert raw(alice, events).scalars().all() == ['["articles-ordering"]']


def test_vetbench_functions_run_only_for_its_members(team: Team) -> None:
    # The probe: a login outside vetbench read who passed which gold item through a
    # function that runs as its owner, and could index any item's text.
    marked = run(team.url(team.lena), "gold", "add", "o:2", "--verdict", "keep", "--answer", "ABCD")
    assert marked.exit_code == 0, marked.output
    judged = run(team.url(team.alice), "judge", "o:2", "--answer", "ABCD", "--verdict", "keep")
    assert judged.exit_code == 0, judged.output
    outsider = team.roles.name("outsider")
    raw(team.owner_url, f'CREATE ROLE "{outsider}" LOGIN')
    calls = {
        "vetbench_calibration_outcomes": "SELECT * FROM vetbench_calibration_outcomes()",
        "vetbench_gold_known": "SELECT * FROM vetbench_gold_known(1)",
        "vetbench_index_item_text": "SELECT vetbench_index_item_text('o:1')",
        "vetbench_session_person_id": "SELECT vetbench_session_person_id()",
    }
    for function, call in calls.items():
        with pytest.raises(
            sa.exc.ProgrammingError, match=f"permission denied for function {function}"
        ):
            raw(team.url(outsider), call)
    # Members run those they need; the index only through the triggers of their writes.
    outcomes = "SELECT count(*) FROM vetbench_calibration_outcomes()"
    assert raw(team.url(team.bob), outcomes).scalar_one() == 1
    with pytest.raises(sa.exc.ProgrammingError, match="permission denied for function"):
        raw(team.url(team.bob), calls["vetbench_index_item_text"])
    # Nothing runs for everyone: every vetbench function has an explicit grant list.
    public = (
        "SELECT p.proname FROM pg_proc p WHERE p.proname LIKE 'vetbench\\_%' "
        "AND has_function_privilege('public', p.oid, 'EXECUTE')"
    )
    assert raw(team.owner_url, public).scalars().all() == []


PLANTED_ITEM_SQL = (
    "INSERT INTO release_item (release_name, item_id, revision_number, content_hash, language, "
    "source_ref, meta, status) VALUES ('v2', 'o:1', 1, 'deadbeef', 'en', '', '{}', 'approved')"
)
# As a database of 0022 took it, before release items kept their metadata (0024).
OLD_PLANTED_ITEM_SQL = (
    "INSERT INTO release_item (release_name, item_id, revision_number, content_hash, language, "
    "status) VALUES ('v2', 'o:1', 1, 'deadbeef', 'en', 'approved')"
)


def test_a_releases_items_come_only_with_the_release(team: Team) -> None:
    # The probe: a lead planted items of a release not made yet, unrecorded; then
    # `release create v2` said "a release named 'v2' was made meanwhile", for good.
    lena = team.url(team.lena)
    alone = "item o:1 of release v2 is stored only by the transaction that makes the release"
    with pytest.raises(sa.exc.ProgrammingError, match=alone):
        raw(lena, PLANTED_ITEM_SQL)
    # Nor with a release row of its own but no audit event, nor with the event of another.
    release_sql = (
        "INSERT INTO release (name, hash, note, selection, item_count, figures, created_by_id, "
        "created_at) VALUES ('v2', :hash, '', '{}', 1, '{}', :person, now())"
    )
    event = EVENT_SQL.format(action="release")
    for statements in ((PLANTED_ITEM_SQL, release_sql), (PLANTED_ITEM_SQL, release_sql, event)):
        with pytest.raises(sa.exc.ProgrammingError, match=alone):
            in_one_transaction(lena, *statements, hash="0" * 64, person=team.person_id(team.lena))
    made = run(lena, "release", "create", "v2", "--status", "pending")
    assert made.exit_code == 0, made.output
    verified = run(lena, "release", "verify", "v2")
    assert verified.exit_code == 0 and "matches release v2: 2 items" in verified.output


OLD_ITEM_SQL = (
    "INSERT INTO item (id, kind, source, source_ref, language, status, current_revision, meta, "
    "created_at) VALUES ('o:1', 'ordering', 's', '', 'en', 'pending', 1, '{}', CURRENT_TIMESTAMP)",
    "INSERT INTO item_revision (item_id, number, kind, prompt, choices, key, author, "
    "change_note, provenance, created_at) VALUES ('o:1', 1, 'ordering', 'Order them.', "
    "'{\"A\": \"a\", \"B\": \"b\"}', 'AB', 'x', 'import', '{}', CURRENT_TIMESTAMP)",
)


def upgrade_past(engine: sa.Engine, revision: str, statements: Sequence[str]) -> None:
    """The database made at ``revision``, ``statements`` run there (rows as that schema
    took them), then upgraded to the head."""
    upgrade_to(engine, revision)
    with engine.begin() as connection:
        for statement in statements:
            connection.execute(sa.text(statement))
    upgrade_to(engine, "head")


def test_the_upgrade_removes_release_items_no_release_holds(database_url: str) -> None:
    # Planted before the guard: a name taken by items of no release is free again.
    engine = make_engine(database_url)
    try:
        # As a database of 0022 was: without the guard.
        unguarded = ["DROP TRIGGER IF EXISTS release_item_with_release ON release_item"]
        before = unguarded if engine.dialect.name == "postgresql" else []
        upgrade_past(engine, "0022_status_judged", [*before, *OLD_ITEM_SQL, OLD_PLANTED_ITEM_SQL])
        with engine.connect() as connection:
            left = connection.execute(sa.text("SELECT count(*) FROM release_item")).scalar_one()
        assert left == 0
        # The trigger that refuses deletes is back.
        triggers = (
            "SELECT name FROM sqlite_master WHERE type = 'trigger'"
            if engine.dialect.name == "sqlite"
            else "SELECT tgname FROM pg_trigger WHERE tgrelid = 'release_item'::regclass"
        )
        with engine.connect() as connection:
            names = set(connection.execute(sa.text(triggers)).scalars())
        assert {"release_item_no_delete", "release_item_frozen"} & names
    finally:
        engine.dispose()


def test_two_sessions_judging_one_revision_at_once_store_one_judgment(team: Team) -> None:
    # Each session's check read before the other committed: both judgments were stored.
    alice = team.url(team.alice)
    mine = {"annotator": team.person_id(team.alice), "item": "o:1", "others": "[]"}
    values = {**mine, "answer": "DCBA", "verdict": "keep"}
    first, second = sa.create_engine(alice), sa.create_engine(alice)
    refused: list[BaseException] = []

    def judge_second() -> None:
        try:
            with second.begin() as connection:
                connection.execute(sa.text(PROBE_JUDGMENT_SQL), values)
                connection.execute(sa.text(JUDGE_EVENT_SQL), values)
        except sa.exc.ProgrammingError as error:
            refused.append(error)

    try:
        with first.begin() as connection:
            connection.execute(sa.text(PROBE_JUDGMENT_SQL), values)
            connection.execute(sa.text(JUDGE_EVENT_SQL), values)
            other = threading.Thread(target=judge_second)
            other.start()
            other.join(timeout=1)
            assert other.is_alive()  # waiting for this transaction to end
        other.join(timeout=30)
    finally:
        first.dispose()
        second.dispose()
    assert len(refused) == 1 and "already judged item o:1 revision 1" in str(refused[0])
    assert raw(alice, "SELECT count(*) FROM judgment").scalar_one() == 1

"""The key a person saw before judging (db.reveals): stored when the key is shown, served
first and revealed in any later session, and the blind answer every judgment path
stores; on PostgreSQL each member's own, which nobody changes.  (The review app's side:
tests/test_tui_review.py.)"""

# ruff: noqa: F811  (tests take the fixture `team` imported from test_privileges)
from __future__ import annotations

import csv
import io
import json
import shlex
from pathlib import Path

import pytest
import sqlalchemy as sa
from click.testing import CliRunner
from helpers import (
    EXPLANATION,
    item_status,
    run_at_80_columns,
    run_cli,
    store_item,
    store_person,
    stored_judgments,
)
from test_member_writes import in_one_transaction
from test_privileges import JUDGE_EVENT_SQL, Team, raw, team  # noqa: F401  (team: the fixture)

from db.audit import read_audit
from db.engine import Database, open_database
from db.items import ItemSnapshot, get_item
from db.people import find_person
from db.reveals import StoredReveal, store_reveal, stored_reveal
from db.vocabulary import REVEAL_ACTION
from reviewer.cli import cli
from reviewer.judging import ItemEdit, edit_item, retract_last_judgment, submit_judgment
from reviewer.queue import ReviewQueue


@pytest.fixture
def three(database: Database) -> Database:
    """Ordering items o:1, o:2, o:3 (key DABC); alice and bob."""
    for item_id in ("o:1", "o:2", "o:3"):
        store_item(database, item_id, key="DABC")
    for name in ("alice", "bob"):
        store_person(database, name)
    return database


def item(db: Database, item_id: str) -> ItemSnapshot:
    with db.session() as session:
        found = get_item(session, item_id)
    assert found is not None
    return found


def item_of(served: ItemSnapshot | None) -> str:
    assert served is not None
    return served.id


def reveal(db: Database, who: str, item_id: str, answer: str = "ABCD") -> StoredReveal:
    return store_reveal(db, who, item(db, item_id), answer, 7.5)


def test_the_first_reveal_of_a_revision_is_the_one_kept(three: Database) -> None:
    first = reveal(three, "alice", "o:1", "a, b, c, d")
    assert (first.blind_answer, first.seconds) == ("ABCD", 7.5)  # canonical, as a judgment
    assert reveal(three, "alice", "o:1", "DABC") == first  # a second one changes nothing
    with three.session() as session:
        assert stored_reveal(session, "alice", "o:1", 1) == first
        assert stored_reveal(session, "bob", "o:1", 1) is None  # another person's own
        events = read_audit(session, actions=[REVEAL_ACTION])
    # One event per reveal, naming the revision, never the answer (every member reads it).
    assert [(e.actor, e.target, e.changes) for e in events] == [("alice", "o:1", {"revision": 1})]


def test_a_revealed_item_comes_first_in_a_later_queue_until_it_is_judged(
    three: Database,
) -> None:
    walk = ReviewQueue(three, "alice")
    last = [item_of(walk.skip()) for _ in range(3)][-1]  # the one a queue serves last
    reveal(three, "alice", last)
    queue = ReviewQueue(three, "alice")  # a later session
    served = queue.fetch_next()
    assert served is not None and served.id == last
    assert queue.revealed_key(served) == reveal(three, "alice", last)
    assert ReviewQueue(three, "bob").fetch_next() is not None  # bob's queue: as before
    submit_judgment(
        three, "alice", last, revision_number=1, blind_answer="ABCD", verdict="no-order"
    )
    again = ReviewQueue(three, "alice").fetch_next()
    assert again is not None and again.id != last  # judged: its reveal no longer counts
    retract_last_judgment(three, "alice")  # undone: the key was seen all the same
    back = ReviewQueue(three, "alice").fetch_next()
    assert back is not None and back.id == last


def test_a_new_revision_is_a_new_question(three: Database) -> None:
    reveal(three, "alice", "o:1")
    edit_item(three, "bob", "o:1", ItemEdit(key="ABCD", note="the key was wrong"))
    queue = ReviewQueue(three, "alice")
    revised = item(three, "o:1")
    assert revised.revision == 2 and queue.revealed_key(revised) is None
    # Its revision 2 is judged blind, with any answer.
    receipt = submit_judgment(
        three, "alice", "o:1", revision_number=2, blind_answer="DCBA", verdict="keep"
    )
    assert receipt.blind_answer == "DCBA"


def test_judge_keeps_the_blind_answer_given_before_the_key(three: Database, tmp_path: Path) -> None:
    reveal(three, "alice", "o:1")  # alice answered A, B, C, D, then saw the key D, A, B, C
    refused = run_cli(
        three, "judge", "o:1", "--as", "alice", "--answer", "DABC", "--verdict", "keep"
    )
    assert refused.exit_code == 1
    assert (
        "alice saw the key of item o:1 revision 1 after answering A, B, C, D blind; an "
        "answer given after the key is not blind, so a judgment of it keeps A, B, C, D"
    ) in " ".join(refused.output.split())
    batch = tmp_path / "alice.jsonl"
    rows = [{"item_id": "o:1", "answer": "DABC", "verdict": "keep"}]
    batch.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    from_file = run_cli(three, "judge", "--from", str(batch), "--as", "alice")
    assert from_file.exit_code == 1
    assert "line 1: answer: alice saw the key of item o:1" in " ".join(from_file.output.split())
    assert stored_judgments(three) == []
    # bob saw no key: his answer is his own
    kept = run_cli(three, "judge", "o:1", "--as", "bob", "--answer", "DABC", "--verdict", "keep")
    assert kept.exit_code == 0, kept.output
    saved = run_cli(three, "judge", "o:1", "--as", "alice", "--answer", "ABCD", "--verdict", "keep")
    assert saved.exit_code == 0, saved.output
    assert [(j.blind_answer, j.verdict) for j in stored_judgments(three)] == [
        ("DABC", "keep"),
        ("ABCD", "keep"),
    ]


ORDERING_VERDICTS = (
    "  verdicts: keep, ambiguous --alt ORDER (each other valid one), no-order, wrong-key "
    "--corrected KEY, flawed, sensitive, duplicate --duplicate-of ITEM_ID"
)


def test_judge_in_two_steps_shows_the_key_between_the_answer_and_the_verdict(
    three: Database,
) -> None:
    """`judge ITEM --answer X` alone stores the blind answer (a reveal, no judgment) and
    shows the key and explanation with the line that gives the verdict; pasted with a
    verdict, that line judges with the stored answer."""
    answered = run_cli(three, "judge", "o:1", "--as", "alice", "--answer", "b,a,c,d")
    assert answered.exit_code == 0, answered.output
    lines = answered.output.splitlines()
    assert lines[:4] == [
        "stored alice's blind answer to o:1 revision 1: B, A, C, D",
        "key: D, A, B, C (the blind answer differs)",
        "explanation:",
        EXPLANATION,
    ]
    assert lines[4].startswith("give the verdict: vetbench --db ") and lines[4].endswith(
        " judge o:1 --revision 1 --as alice --verdict keep|…"
    )
    assert lines[5:] == [ORDERING_VERDICTS]
    assert stored_judgments(three) == [] and item_status(three, "o:1") == "pending"
    with three.session() as session:
        assert stored_reveal(session, "alice", "o:1", 1) is not None
        assert len(read_audit(session, actions=[REVEAL_ACTION])) == 1

    again = run_cli(three, "judge", "o:1", "--as", "alice", "--answer", "BACD", "--json")
    assert json.loads(again.output) == {
        "annotator": "alice",
        "item_id": "o:1",
        "revision": 1,
        "blind_answer": "B, A, C, D",
        "key": "D, A, B, C",
        "matches_key": False,
        "explanation": EXPLANATION,
        "stored_now": False,  # the same answer again: the reveal stored first
    }
    other = run_cli(three, "judge", "o:1", "--as", "alice", "--answer", "DABC")
    assert other.exit_code == 1 and "after answering B, A, C, D blind" in other.output

    pasted = shlex.split(lines[4].removeprefix("give the verdict: ").replace("keep|…", "wrong-key"))
    judged = CliRunner().invoke(cli, [*pasted[1:], "--corrected", "BACD"])
    assert judged.exit_code == 0, judged.output
    assert "verdict wrong-key; blind answer differs from the key" in judged.output
    assert [(j.blind_answer, j.verdict, j.corrected_key) for j in stored_judgments(three)] == [
        ("BACD", "wrong-key", "BACD")
    ]
    twice = run_cli(three, "judge", "o:1", "--as", "alice", "--answer", "BACD")
    assert twice.exit_code == 1 and "alice already judged item o:1 revision 1" in twice.output


def test_the_verdicts_offered_after_the_key_are_those_of_the_items_kind(
    three: Database,
) -> None:
    """A multiple-choice item takes no no-order, and its other valid answers are answers;
    on an 80-column terminal the list wraps under its heading, each option whole."""
    store_item(three, "s:1", kind="single", key="B")
    answered = run_cli(three, "judge", "s:1", "--as", "alice", "--answer", "A")
    assert answered.exit_code == 0, answered.output
    assert answered.output.splitlines()[-1] == (
        "  verdicts: keep, ambiguous --alt ANSWER (each other valid one), wrong-key "
        "--corrected KEY, flawed, sensitive, duplicate --duplicate-of ITEM_ID"
    )
    status, shown = run_at_80_columns(three, "judge", "o:1", "--as", "alice", "--answer", "ABCD")
    assert status == 0, shown
    lines = shown.splitlines()
    listed = lines[next(i for i, line in enumerate(lines) if line.startswith("  verdicts: ")) :]
    assert len(listed) > 1 and all(line.startswith("    ") for line in listed[1:])
    assert all(len(line) <= 80 for line in listed), listed
    assert " ".join(line.strip() for line in listed) == ORDERING_VERDICTS.strip()
    assert all(word in " ".join(listed).split() for word in ("--alt", "--duplicate-of"))


def test_a_verdict_alone_needs_a_blind_answer_stored_first(three: Database) -> None:
    alone = run_cli(three, "judge", "o:2", "--as", "bob", "--verdict", "keep")
    assert alone.exit_code == 1
    assert "not saved: bob has not answered o:2 blind yet: give --answer with the verdict" in (
        " ".join(alone.output.split())
    )
    details = run_cli(three, "judge", "o:2", "--as", "bob", "--answer", "DABC", "--comment", "ok")
    assert details.exit_code == 1 and "--comment go with --verdict" in details.output
    unknown = run_cli(three, "judge", "o:9", "--as", "bob", "--verdict", "keep")
    assert unknown.exit_code == 1 and "there is no item 'o:9'" in unknown.output
    newcomer = run_cli(three, "judge", "o:9", "--as", "cy", "--new-user", "--answer", "DABC")
    assert newcomer.exit_code == 1  # refused: registers no one
    with three.session() as session:
        assert stored_reveal(session, "bob", "o:2", 1) is None
        assert find_person(session, "cy") is None
    assert stored_judgments(three) == []

    # an edit after the answer: the answer was to the old revision, the verdict too
    run_cli(three, "judge", "o:2", "--as", "bob", "--answer", "DABC")
    edit_item(three, "alice", "o:2", ItemEdit(note="clearer", prompt="Order these events."))
    stale = run_cli(three, "judge", "o:2", "--as", "bob", "--revision", "1", "--verdict", "keep")
    assert stale.exit_code == 1 and "item o:2 is now at revision 2, not revision 1" in (
        " ".join(stale.output.split())
    )
    fresh = run_cli(three, "judge", "o:2", "--as", "bob", "--verdict", "keep")
    assert fresh.exit_code == 1 and "bob has not answered o:2 blind yet" in fresh.output
    assert stored_judgments(three) == []


def test_next_serves_an_item_whose_key_was_shown_with_its_key(three: Database) -> None:
    """`next` says how to answer a fresh item blind; one whose key the person saw (here
    by `judge --answer`) it serves with that answer and key, for the verdict."""
    fresh = run_cli(three, "next", "--as", "alice")
    served = fresh.output.split()[0]
    assert fresh.output.splitlines()[-1].endswith(
        f' judge {served} --revision 1 --as alice --answer "…"'
    )
    assert "key" not in fresh.output.lower().replace("the key is shown", "")
    ok = run_cli(three, "judge", served, "--as", "alice", "--answer", "DABC")
    assert ok.exit_code == 0, ok.output
    shown = run_cli(three, "next", "--as", "alice").output.splitlines()
    assert shown[0].startswith(f"{served}  ordering, revision 1")
    assert shown[-6:-2] == [
        "alice answered it blind before: D, A, B, C",
        "key: D, A, B, C (the blind answer is the key)",
        "explanation:",
        EXPLANATION,
    ]
    assert shown[-2].endswith(f" judge {served} --revision 1 --as alice --verdict keep|…")
    assert shown[-1] == ORDERING_VERDICTS
    as_json = json.loads(run_cli(three, "next", "--as", "alice", "--json").output)
    assert as_json["item"]["item_id"] == served
    assert as_json["revealed"] == {
        "blind_answer": "D, A, B, C",
        "key": "D, A, B, C",
        "explanation": EXPLANATION,
    }
    assert "revealed" not in json.loads(run_cli(three, "next", "--as", "bob", "--json").output)


REVEAL_SQL = (
    "INSERT INTO key_reveal (person_id, item_id, revision_number, blind_answer, seconds, "
    "revealed_at) VALUES (:person, 'o:1', 1, :answer, 0, now())"
)


@pytest.mark.postgres
def test_a_member_reads_and_writes_only_their_own_reveals(team: Team) -> None:
    alice, bob = team.url(team.alice), team.url(team.bob)
    alice_id, bob_id = team.person_id(team.alice), team.person_id(team.bob)
    # vetbench's own path, as alice's login
    as_alice = open_database(alice)
    try:
        kept = reveal(as_alice, team.alice, "o:1")
    finally:
        as_alice.dispose()
    # Planted in bob's name, bob's next judgment would store it as his blind answer.
    with pytest.raises(sa.exc.ProgrammingError, match="row-level security"):
        raw(alice, REVEAL_SQL, person=bob_id, answer="DABC")
    for change in (
        "UPDATE key_reveal SET blind_answer = 'DABC'",  # her own answer, after the key
        "DELETE FROM key_reveal",  # to answer "blind" again
    ):
        with pytest.raises(sa.exc.ProgrammingError, match="permission denied"):
            raw(alice, change)
    raw(bob, REVEAL_SQL, person=bob_id, answer="BCDA")
    # Each reads only their own: nobody reads another's answer before its verdict.
    mine = "SELECT person_id, blind_answer FROM key_reveal ORDER BY person_id"
    assert raw(alice, mine).all() == [(alice_id, kept.blind_answer)]
    assert raw(bob, mine).all() == [(bob_id, "BCDA")]
    assert raw(team.owner_url, mine).all() == [(alice_id, "ABCD"), (bob_id, "BCDA")]


def judgment_sql(answer: str) -> str:
    """A judgment of o:1 revision 1 by ``:annotator`` giving ``answer``, as psql would store it."""
    return (
        "INSERT INTO judgment (item_id, revision_id, revision_number, annotator_id, "
        "blind_answer, verdict, alternative_orders, comment, seconds, created_at, retracted) "
        "VALUES ('o:1', (SELECT id FROM item_revision WHERE item_id = 'o:1' AND number = 1), "
        f"1, :annotator, '{answer}', 'keep', '[]', '', 0, now(), false)"
    )


@pytest.mark.postgres
def test_a_members_judgment_by_sql_keeps_their_blind_answer(team: Team) -> None:
    alice, bob = team.url(team.alice), team.url(team.bob)
    alice_id, bob_id = team.person_id(team.alice), team.person_id(team.bob)
    raw(alice, REVEAL_SQL, person=alice_id, answer="DABC")  # then she saw the key ABCD
    with pytest.raises(
        sa.exc.ProgrammingError,
        match="a judgment of item o:1 revision 1 gives the blind answer ABCD, but its "
        "annotator saw the key after answering DABC blind",
    ):
        raw(alice, judgment_sql("ABCD"), annotator=alice_id)
    # With their judge events, as a member's judgment commits only with one (db.review_guards).
    in_one_transaction(alice, judgment_sql("DABC"), JUDGE_EVENT_SQL, annotator=alice_id, item="o:1")
    in_one_transaction(bob, judgment_sql("ABCD"), JUDGE_EVENT_SQL, annotator=bob_id, item="o:1")
    owner = open_database(team.owner_url)
    try:
        judged = [(j.blind_answer, j.annotator_id) for j in stored_judgments(owner)]
    finally:
        owner.dispose()
    assert judged == [("DABC", alice_id), ("ABCD", bob_id)]


@pytest.mark.postgres
def test_a_member_answers_a_sheet_blind_with_their_own_login(team: Team, tmp_path: Path) -> None:
    alice = team.url(team.alice)
    sheet = tmp_path / "alice.csv"
    assert run_cli(alice, "export", "--format", "judging", "--out", str(sheet)).exit_code == 0
    rows = list(csv.DictReader(sheet.open(encoding="utf-8")))
    assert [(row["item_id"], row["key"]) for row in rows] == [("o:1", ""), ("o:2", "")]
    rows[0]["answer"] = "DABC"
    with sheet.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    loaded = run_cli(alice, "judge", "--from", str(sheet))
    assert loaded.exit_code == 0, loaded.output
    assert loaded.output.startswith(f"stored 1 blind answer by {team.alice} from {sheet}")
    again = run_cli(alice, "export", "--format", "judging", "--out", "-")
    assert again.exit_code == 0, again.output
    second = list(csv.DictReader(io.StringIO(again.stdout)))
    assert [(row["item_id"], row["answer"], row["key"]) for row in second] == [
        ("o:1", "D, A, B, C", "A, B, C, D"),  # her stored answer, and now the key
        ("o:2", "", ""),
    ]
    owner = open_database(team.owner_url)
    try:
        with owner.session() as session:
            assert stored_reveal(session, team.alice, "o:1", 1) is not None
    finally:
        owner.dispose()


@pytest.mark.postgres
def test_a_member_answers_one_item_blind_then_judges_it_with_their_own_login(team: Team) -> None:
    alice = team.url(team.alice)
    answered = run_cli(alice, "judge", "o:1", "--answer", "BACD")
    assert answered.exit_code == 0, answered.output
    assert answered.output.startswith(f"stored {team.alice}'s blind answer to o:1 revision 1")
    assert "key: A, B, C, D (the blind answer differs)" in answered.output
    # the line to paste names no one: on PostgreSQL the login is the person
    assert answered.output.splitlines()[-2].endswith(" judge o:1 --revision 1 --verdict keep|…")
    bob = run_cli(team.url(team.bob), "judge", "o:1", "--verdict", "keep")
    assert bob.exit_code == 1 and "has not answered o:1 blind yet" in bob.output  # hers only
    judged = run_cli(alice, "judge", "o:1", "--verdict", "keep")
    assert judged.exit_code == 0, judged.output
    assert "blind answer differs from the key" in judged.output

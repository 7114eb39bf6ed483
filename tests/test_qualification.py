# ruff: noqa: F811  (a test takes the fixture `team` imported from test_privileges)
"""Issue 25, the qualification gate (db.qualification): a pass mark on the calibration
gold items, a second attempt on other gold items, and until a person passes their
judgments count toward no decision (item status, agreement, approve-agreed, conflicts,
triage); the lead sees who failed (users list, F2) and lets them try again.  With the
gate off, everything is as before."""

from __future__ import annotations

import json

import pytest
from conftest import BuiltDatabases
from helpers import (
    agreement_shown,
    item_status,
    notices,
    press,
    run_cli,
    running,
    screen_text,
    store_item,
    store_person,
)
from test_privileges import Team, run, team  # noqa: F401  (team: the fixture)

from db.engine import Database, open_database
from db.gold import add_gold
from db.qualification import (
    counted_judgments,
    qualification_of,
    standing_of,
    uncounted_annotators,
)
from db.settings import set_setting
from db.vocabulary import QualificationStatus, Role
from reviewer.adjudication import approve_agreed
from reviewer.agreement import compute_agreement
from reviewer.conflict_cases import conflict_queue
from reviewer.judging import retract_last_judgment, submit_judgment
from reviewer.queue import ReviewQueue
from reviewer.triage import rank_items
from reviewer.tui.app import make_app

GOLD = [f"g:{number}" for number in range(1, 8)]  # seven gold items, key ABCD, kept
RIGHT, WRONG = "A,B,C,D", "D,C,B,A"


def settings(db: Database, **values: str) -> None:
    with db.transaction() as session:
        for name, value in values.items():
            set_setting(session, name, value)


@pytest.fixture
def project(database: Database, built_databases: BuiltDatabases) -> Database:
    """``store_project``'s state, built once per test process and backend and copied."""
    built_databases.fill(database, store_project)
    return database


def store_project(database: Database) -> None:
    """A lead, ordinary items o:1-o:4 (key DACB), seven gold items; gate: 3 gold items per
    attempt, 2 of 3 to pass; overlap 2."""
    store_person(database, "lea", Role.LEAD)
    for number in range(1, 5):
        store_item(database, f"o:{number}", key="DACB")
    for item_id in GOLD:
        store_item(database, item_id, key="ABCD")
    with database.transaction() as session:
        for item_id in GOLD:
            add_gold(session, "lea", item_id, verdict="keep", answer=RIGHT)
    settings(database, calibration_items="3", calibration_pass="0.6", overlap="2")


def take_attempt(db: Database, who: str, answers: list[bool]) -> list[str]:
    """``who`` answers what the queue serves, right or wrong as ``answers`` say; every
    item served must be a gold item.  Returns the ids served."""
    queue = ReviewQueue(db, who)
    served = []
    for right in answers:
        item = queue.fetch_next()
        assert item is not None and item.id in GOLD, (who, served, item)
        served.append(item.id)
        submit_judgment(
            db,
            who,
            item.id,
            revision_number=item.revision,
            blind_answer=RIGHT if right else WRONG,
            verdict="keep",
        )
    return served


def keep(db: Database, who: str, item_id: str, verdict: str = "keep") -> None:
    """``who`` judges an ordinary item (as ``vetbench judge`` can, whatever the queue says)."""
    corrected = {"corrected_key": "ABCD"} if verdict == "wrong-key" else {}
    submit_judgment(
        db,
        who,
        item_id,
        revision_number=1,
        blind_answer="D,A,C,B",
        verdict=verdict,
        **corrected,  # type: ignore[arg-type]
    )


def standing(db: Database, who: str) -> QualificationStatus:
    with db.session() as session:
        return qualification_of(session, who).status


def test_a_person_who_passes_the_first_attempt_gets_normal_work(project: Database) -> None:
    store_person(project, "ann")
    assert standing(project, "ann") is QualificationStatus.IN_PROGRESS
    take_attempt(project, "ann", [True, False, True])
    with project.session() as session:
        passed = qualification_of(session, "ann")
    assert passed.status is QualificationStatus.PASSED and passed.counts
    assert passed.attempt == 1 and passed.gold_judged == 3 and passed.score == pytest.approx(2 / 3)
    item = ReviewQueue(project, "ann").fetch_next()
    assert item is not None and item.id.startswith("o:")


def test_a_failed_first_attempt_gets_a_second_on_other_gold_items(project: Database) -> None:
    store_person(project, "bob")
    first = take_attempt(project, "bob", [False, False, True])
    with project.session() as session:
        after_first = qualification_of(session, "bob")
    assert after_first.status is QualificationStatus.IN_PROGRESS and after_first.attempt == 2
    assert [a.matched for a in after_first.attempts] == [1, 0]
    second = take_attempt(project, "bob", [True, False, True])
    assert not set(first) & set(second)
    assert standing(project, "bob") is QualificationStatus.PASSED
    with project.session() as session:
        assert qualification_of(session, "bob").attempt == 2
    item = ReviewQueue(project, "bob").fetch_next()
    assert item is not None and item.id.startswith("o:")


def test_an_undone_calibration_answer_still_counts(project: Database) -> None:
    """The known answer is shown after the verdict: a second try at the same gold would
    prove nothing, so the first answer stands, and the queue never serves that gold again."""
    store_person(project, "cy")
    [first] = take_attempt(project, "cy", [False])
    retract_last_judgment(project, "cy")
    submit_judgment(project, "cy", first, revision_number=1, blind_answer=RIGHT, verdict="keep")
    with project.session() as session:
        state = qualification_of(session, "cy")
    assert state.attempts[0].judged == 1 and state.attempts[0].matched == 0
    served = take_attempt(project, "cy", [True, True])
    assert first not in served
    assert standing(project, "cy") is QualificationStatus.PASSED


def test_someone_who_fails_twice_counts_toward_nothing(project: Database) -> None:
    store_person(project, "dan")
    store_person(project, "cat")
    take_attempt(project, "dan", [True, True, True])
    take_attempt(project, "cat", [False, False, False, True, False, False])
    assert standing(project, "cat") is QualificationStatus.FAILED
    # o:1: both keep it as keyed; o:2: cat says the key is wrong, dan keeps it.
    for item_id in ("o:1", "o:2"):
        keep(project, "dan", item_id)
    keep(project, "cat", "o:1")
    keep(project, "cat", "o:2", verdict="wrong-key")
    with project.session() as session:
        assert uncounted_annotators(session) == {"cat"}
        assert counted_judgments(session)  # a condition leaves cat out
    # One counted judgment each, with k = 2: neither agreed nor a conflict.
    assert item_status(project, "o:1") == item_status(project, "o:2") == "in_review"
    assert approve_agreed(project, "lea") == 0
    assert conflict_queue(project) == []
    report = compute_agreement(project, resamples=0)
    assert [stats.name for stats in report.per_annotator] == ["dan"]
    assert report.figures.judgments == 2
    ranked = {entry.item_id: entry for entry in rank_items(project)}
    assert "o:2" not in ranked  # cat's wrong-key is no reason for suspicion
    # The app serves cat nothing and says why.
    assert ReviewQueue(project, "cat").fetch_next() is None
    notice = standing_of(project, "cat").notice("all items")
    assert notice is not None and "did not pass the qualification" in notice
    assert "vetbench users requalify cat" in notice
    # The lead sees who failed.
    listed = run_cli(project, "users", "list")
    assert listed.exit_code == 0
    [cat_line] = [line for line in listed.output.splitlines() if line.startswith("cat")]
    assert "qualification failed (attempts 0/3, 1/3; pass mark 0.6)" in cat_line
    as_json = {
        entry["name"]: entry
        for entry in json.loads(run_cli(project, "users", "list", "--json").output)
    }
    assert as_json["cat"]["qualification"]["status"] == "failed"
    assert as_json["dan"]["qualification"]["status"] == "passed"
    assert as_json["lea"]["qualification"]["status"] == "not-gated"
    assert {"name", "role", "created_at"} <= set(as_json["cat"])


async def test_the_app_serves_gold_until_a_fail_then_says_why(project: Database) -> None:
    store_person(project, "cat")
    take_attempt(project, "cat", [False] * 5)
    async with running(make_app(project, "cat")) as app:
        item = app.review_screen.item
        assert item is not None and item.id in GOLD  # the last answer of attempt 2
        await press(app, *"dcba", "enter", "k")
        assert app.review_screen.item is None
        shown = screen_text(app)
        said = " ".join(notices(app))
    assert "qualification failed (attempts 0/3, 0/3; pass mark 0.6)" in said
    assert "Qualification" in shown and "You did not pass the qualification" in shown
    assert "vetbench users requalify cat --as LEAD" in shown
    assert ReviewQueue(project, "cat").progress().items_left == 0  # "0 waiting for you"


async def test_f2_names_who_does_not_count_and_why(project: Database) -> None:
    for who, answers in (("dan", [True] * 3), ("cat", [False] * 6), ("eve", [True])):
        store_person(project, who)
        take_attempt(project, who, answers)
    keep(project, "dan", "o:1")
    async with agreement_shown(project, "lea") as (screen, _pilot):
        note = str(screen.query_one("#qualification-note").render())
    assert note.startswith("Not counted until they pass the qualification: ")
    assert "cat failed (attempts 0/3, 0/3; pass mark 0.6)" in note
    assert "eve in-progress (attempt 1: 1 of 3 gold items; pass mark 0.6)" in note
    assert "dan" not in note


def test_a_lead_lets_someone_who_failed_try_again_on_unseen_gold(project: Database) -> None:
    store_person(project, "cat")
    seen = take_attempt(project, "cat", [False] * 6)
    refused = run_cli(project, "users", "requalify", "cat", "--as", "cat")
    assert refused.exit_code == 1 and "only leads" in refused.output
    assert standing(project, "cat") is QualificationStatus.FAILED
    done = run_cli(project, "users", "requalify", "cat", "--as", "lea")
    assert done.exit_code == 0, done.output
    assert "cat may try the qualification again: in-progress (attempt 1: 0 of 3" in done.output
    events = json.loads(run_cli(project, "audit", "--person", "lea", "--json").output)
    assert any(event["action"] == "requalify" and event["target"] == "cat" for event in events)
    again = run_cli(project, "users", "requalify", "cat", "--as", "lea")
    assert again.exit_code == 1 and "has not failed" in again.output
    # Only one gold item is left that cat has not seen: it is served, then nothing.
    [last] = take_attempt(project, "cat", [True])
    assert last not in seen
    assert ReviewQueue(project, "cat").fetch_next() is None
    notice = standing_of(project, "cat").notice("all items")
    assert notice is not None and "no gold item you have not seen is left" in notice


def test_judgments_made_before_passing_count_once_the_person_passes(project: Database) -> None:
    store_person(project, "dan")
    store_person(project, "eve")
    take_attempt(project, "dan", [True, True, True])
    keep(project, "dan", "o:1")
    keep(project, "eve", "o:1")  # eve has not qualified yet: o:1 waits for a second judgment
    assert item_status(project, "o:1") == "in_review"
    take_attempt(project, "eve", [True, True, False])
    assert item_status(project, "o:1") == "agreed"
    assert approve_agreed(project, "lea") == 1


def test_with_the_gate_off_everyone_counts_as_before(project: Database) -> None:
    settings(project, calibration_pass="0")
    store_person(project, "fay")
    store_person(project, "gus")
    take_attempt(project, "fay", [False, False, False])  # the first three items are gold, as before
    item = ReviewQueue(project, "fay").fetch_next()
    assert item is not None and item.id.startswith("o:")
    keep(project, "fay", "o:1")
    keep(project, "gus", "o:1")
    with project.session() as session:
        assert qualification_of(session, "fay").status is QualificationStatus.NOT_GATED
        assert counted_judgments(session) == [] and uncounted_annotators(session) == frozenset()
    assert item_status(project, "o:1") == "agreed"
    assert standing_of(project, "fay").notice("all items") is None
    listed = run_cli(project, "users", "list")
    assert "qualification" not in listed.output


def test_turning_the_gate_on_and_off_recomputes_statuses(project: Database) -> None:
    settings(project, calibration_pass="0")
    for who in ("hal", "ida"):
        store_person(project, who)
        keep(project, who, "o:1")
    assert item_status(project, "o:1") == "agreed"
    on = run_cli(project, "config", "set", "calibration_pass", "0.8", "--as", "lea")
    assert on.exit_code == 0, on.output
    assert "item statuses recomputed for the qualification gate: 1 changed" in on.output
    assert item_status(project, "o:1") == "pending"  # neither has qualified
    off = run_cli(project, "config", "set", "calibration_pass", "0", "--as", "lea")
    assert off.exit_code == 0 and item_status(project, "o:1") == "agreed"


@pytest.mark.parametrize(
    ("value", "refusal"),
    [
        ("1.5", "calibration_pass must be a number from 0 to 1 (such as 0.8), got '1.5'"),
        ("most", "calibration_pass must be a number from 0 to 1 (such as 0.8), got 'most'"),
        ("nan", "calibration_pass must be a number from 0 to 1 (such as 0.8), got 'nan'"),
    ],
)
def test_a_pass_mark_that_is_not_a_share_is_refused(
    project: Database, value: str, refusal: str
) -> None:
    result = run_cli(project, "config", "set", "calibration_pass", value, "--as", "lea")
    assert result.exit_code == 1 and refusal in result.output
    assert run_cli(project, "config", "get", "calibration_pass").output.strip() == "0.6"


def test_annotators_cannot_change_the_gate(project: Database) -> None:
    store_person(project, "jo")
    result = run_cli(project, "config", "set", "calibration_pass", "0", "--as", "jo")
    assert result.exit_code == 1 and "only leads change settings" in result.output


@pytest.mark.postgres
def test_on_postgresql_an_annotators_own_writes_apply_the_gate(team: Team) -> None:
    """alice and bob log in as themselves and may not read gold answers: the statuses
    their judgments refresh still leave out bob, who failed; the lead sees it."""
    lena = team.url(team.lena)
    for item_id in ("g:1", "g:2"):
        owner = open_database(team.owner_url)
        store_item(owner, item_id, key="ABCD")
        owner.dispose()
        assert (
            run(lena, "gold", "add", item_id, "--verdict", "keep", "--answer", "ABCD").exit_code
            == 0
        )
    for name, value in (("calibration_items", "1"), ("calibration_pass", "1"), ("overlap", "2")):
        assert run(lena, "config", "set", name, value).exit_code == 0
    alice, bob = team.url(team.alice), team.url(team.bob)
    assert run(alice, "judge", "g:1", "--answer", "ABCD", "--verdict", "keep").exit_code == 0
    for gold in ("g:1", "g:2"):
        assert run(bob, "judge", gold, "--answer", "DCBA", "--verdict", "keep").exit_code == 0
    assert run(bob, "config", "set", "calibration_pass", "0").exit_code == 1
    assert run(bob, "users", "requalify", team.bob).exit_code == 1
    for who in (bob, alice):  # alice's write refreshes o:1 last
        assert run(who, "judge", "o:1", "--answer", "ABCD", "--verdict", "keep").exit_code == 0
    owner = open_database(team.owner_url)
    try:
        assert item_status(owner, "o:1") == "in_review"
    finally:
        owner.dispose()
    listed = json.loads(run(lena, "users", "list", "--json").output)
    status = {entry["name"]: (entry["qualification"] or {}).get("status") for entry in listed}
    assert status[team.bob] == "failed" and status[team.alice] == "passed"
    assert run(lena, "users", "requalify", team.bob).exit_code == 0

"""Issue 12, point 11: gold items for calibration — marked by leads, mixed into queues at a
set rate and for a new annotator's first items, told after the verdict, counted as gold
accuracy and nowhere else (not in agreement, conflicts or triage)."""

from __future__ import annotations

import pytest
from helpers import (
    agreement_shown,
    decide_items,
    item_status,
    judge_flawed_then_edit,
    notices,
    press,
    run_cli,
    running,
    store_item,
    store_person,
    stored_judgments,
)
from textual.widgets import DataTable

from db.audit import read_audit
from db.engine import Database
from db.gold import GoldError, add_gold, list_gold
from db.settings import set_setting
from db.vocabulary import Role
from reviewer.adjudication import decide
from reviewer.agreement import compute_agreement
from reviewer.judging import ItemEdit, submit_judgment
from reviewer.queue import ReviewQueue
from reviewer.triage import rank_items
from reviewer.tui.app import make_app


def settings(db: Database, **values: int) -> None:
    with db.transaction() as session:
        for name, value in values.items():
            set_setting(session, name, str(value))


def mark(db: Database, item_id: str, verdict: str, answer: str) -> None:
    with db.transaction() as session:
        add_gold(session, "lea", item_id, verdict=verdict, answer=answer)


@pytest.fixture
def project(database: Database) -> Database:
    """Four ordinary items o:1-o:4, two gold items g:1 (keep) and g:2 (wrong key), a lead."""
    store_person(database, "lea", Role.LEAD)
    for number in range(1, 5):
        store_item(database, f"o:{number}", key="DACB")
    store_item(database, "g:1", key="ABCD")
    store_item(database, "g:2", key="ABCD")
    mark(database, "g:1", "keep", "A,B,C,D")
    mark(database, "g:2", "wrong-key", "D,C,B,A")
    return database


def served_and_judged(db: Database, who: str, count: int) -> list[str]:
    queue = ReviewQueue(db, who)
    served = []
    for _ in range(count):
        item = queue.fetch_next()
        if item is None:
            break
        served.append(item.id)
        submit_judgment(
            db, who, item.id, revision_number=item.revision, blind_answer=item.key, verdict="keep"
        )
    return served


def test_gold_commands_mark_list_and_remove(project: Database) -> None:
    added = run_cli(
        project, "gold", "add", "o:1", "--verdict", "keep", "--answer", "D,A,C,B", "--as", "lea"
    )
    assert (
        added.exit_code == 0
        and "o:1 revision 1 is gold: verdict keep, answer D, A, C, B" in added.output
    )
    listed = run_cli(project, "gold", "list", "--as", "lea")
    assert [line.split()[0] for line in listed.output.splitlines()] == ["g:1", "g:2", "o:1"]
    removed = run_cli(project, "gold", "remove", "o:1", "--as", "lea")
    assert removed.exit_code == 0 and "o:1 is no longer gold" in removed.output
    assert "o:1" not in run_cli(project, "gold", "list", "--as", "lea").output
    assert "removed" in run_cli(project, "gold", "list", "--all", "--as", "lea").output
    with project.session() as session:
        actions = [event.action for event in read_audit(session, target="o:1")]
    assert actions == ["gold-add", "gold-remove"]


@pytest.mark.parametrize(
    "arguments, refusal",
    [
        (
            ["o:1", "--verdict", "keep", "--answer", "A,B,C,D"],
            "has its key as the answer (D, A, C, B)",
        ),
        (["o:1", "--verdict", "wrong-key", "--answer", "D,A,C,B"], "differs from the key"),
        (["o:1", "--verdict", "flawed"], "needs --verdict and --answer (--verdict keep alone"),
        (["o:1", "--answer", "D,A,C,B"], "needs --verdict and --answer"),
        (["o:1", "--from-approved"], "is not approved"),
        (["g:1", "--verdict", "keep", "--answer", "A,B,C,D"], "is gold already"),
        (["nope", "--verdict", "keep", "--answer", "A"], "there is no item 'nope'"),
        (["o:1", "--verdict", "keep", "--answer", "D,A,Z,B"], "answer 'D,A,Z,B'"),
    ],
)
def test_bad_gold_is_refused(project: Database, arguments: list[str], refusal: str) -> None:
    result = run_cli(project, "gold", "add", *arguments, "--as", "lea")
    assert result.exit_code == 1 and refusal in result.output
    assert len(list_gold_now(project)) == 2


@pytest.mark.parametrize(
    "item_id, refusal",
    [("o:99", "there is no item 'o:99'"), ("o:1", "item o:1 is not a gold item")],
)
def test_gold_remove_says_whether_the_item_exists(
    project: Database, item_id: str, refusal: str
) -> None:
    """An unknown item was said to be "not a gold item", as if it existed."""
    removed = run_cli(project, "gold", "remove", item_id, "--as", "lea")
    assert (removed.exit_code, removed.output.strip()) == (1, f"error: {refusal}")
    assert len(list_gold_now(project)) == 2


def test_a_gold_item_kept_as_it_is_needs_no_answer(project: Database) -> None:
    """With the verdict keep the right answer can only be the key: it is taken."""
    done = run_cli(project, "gold", "add", "o:1", "--verdict", "keep", "--as", "lea")
    assert done.exit_code == 0 and "o:1 revision 1 is gold: verdict keep, answer D, A, C, B" in (
        done.output
    )
    assert len(list_gold_now(project)) == 3


def list_gold_now(db: Database) -> list[str]:
    with db.session() as session:
        return [gold.item_id for gold in list_gold(session, "lea")]


def test_only_leads_mark_gold_and_from_approved_takes_the_approval(project: Database) -> None:
    store_person(project, "alice")
    refused = run_cli(project, "gold", "add", "o:1", "--from-approved", "--as", "alice")
    assert refused.exit_code == 1 and "only leads can mark gold items" in refused.output
    decide(project, "lea", "o:1", "approved")
    assert run_cli(project, "gold", "add", "o:1", "--from-approved", "--as", "lea").exit_code == 0
    with project.session() as session:
        gold = next(g for g in list_gold(session, "lea") if g.item_id == "o:1")
    assert (gold.verdict.value, gold.answer, gold.note) == (
        "keep",
        "DACB",
        "from the approval of revision 1",
    )


def test_gold_is_served_only_at_the_rate_and_never_as_an_ordinary_item(project: Database) -> None:
    assert sorted(served_and_judged(project, "alice", 10)) == ["o:1", "o:2", "o:3", "o:4"]
    settings(project, gold_rate=50)
    served = served_and_judged(project, "bob", 10)
    gold_positions = [index for index, item_id in enumerate(served) if item_id.startswith("g:")]
    assert gold_positions == [1, 3]  # every second item
    assert sorted(served) == ["g:1", "g:2", "o:1", "o:2", "o:3", "o:4"]


def test_a_new_annotators_first_items_are_gold(project: Database) -> None:
    settings(project, calibration_items=2)
    served = served_and_judged(project, "carol", 3)
    assert sorted(served[:2]) == ["g:1", "g:2"] and served[2].startswith("o:")


def test_an_edited_gold_item_is_no_longer_served(project: Database) -> None:
    settings(project, calibration_items=5)
    edit = ItemEdit(note="typo", prompt="Order these events.")
    judge_flawed_then_edit(project, "lea", "g:1", edit, comment="x")
    served = served_and_judged(project, "carol", 1)
    assert served == ["g:2"]
    listed = run_cli(project, "gold", "list", "--as", "lea")
    assert "stale: the item is at revision 2, not served" in listed.output


def test_a_rejected_gold_item_is_no_longer_served_and_the_lead_is_told(
    project: Database,
) -> None:
    settings(project, calibration_items=5)
    decide_items(project, ["g:1"], "rejected")
    assert served_and_judged(project, "carol", 1) == ["g:2"]
    listed = run_cli(project, "gold", "list", "--as", "lea")
    assert "g:1" in listed.output and "rejected: not served" in listed.output


def test_annotators_are_not_shown_the_gold_answers(project: Database) -> None:
    store_person(project, "alice", Role.ANNOTATOR)
    for arguments in ((), ("--json",), ("--all",)):
        refused = run_cli(project, "gold", "list", *arguments, "--as", "alice")
        assert refused.exit_code == 1 and "only leads can list gold items" in refused.output
        assert "A, B, C, D" not in refused.output and "keep" not in refused.output


def test_gold_judgments_count_in_gold_accuracy_only(project: Database) -> None:
    settings(project, overlap=1)
    for who, answer, verdict in (("ann", "ABCD", "keep"), ("bo", "DCBA", "wrong-key")):
        corrected = {"corrected_key": "DCBA"} if verdict == "wrong-key" else {}
        receipt = submit_judgment(
            project,
            who,
            "g:2",
            revision_number=1,
            blind_answer=answer,
            verdict=verdict,
            **corrected,
        )
        assert receipt.gold is not None
    assert item_status(project, "g:2") == "pending"  # not moved by calibration judgments
    submit_judgment(project, "ann", "o:1", revision_number=1, blind_answer="DACB", verdict="keep")
    report = compute_agreement(project, resamples=0)
    assert report.figures.judgments == 1  # the gold judgments are not in the figures
    accuracy = {entry.name: entry for entry in report.gold}
    assert accuracy["ann"].both.value == 0.0 and accuracy["bo"].both.value == 1.0
    assert accuracy["ann"].judged == 1
    output = run_cli(project, "agreement", "--bootstrap", "0").output
    assert "Gold items (calibration judgments; not in the figures above)" in output
    assert run_cli(project, "conflicts", "--as", "lea").output.strip() == "no conflicts"
    # bo's wrong-key verdict measured bo against the gold answer: no sign about g:2 itself
    signs = {entry.item_id: {r.sign for r in entry.reasons} for entry in rank_items(project)}
    assert "annotators" not in signs.get("g:2", set())


async def test_after_the_verdict_the_annotator_hears_how_they_did(project: Database) -> None:
    settings(project, calibration_items=1)
    async with running(make_app(project, "alice")) as app:
        item = app.review_screen.item
        assert item is not None and item.id.startswith("g:")
        assert "gold" not in str(app.screen.query_one("#reveal-panel").render()).casefold()
        await press(app, *item.key.lower(), "enter", "k")
        said = notices(app)
    expected = (
        "gold item: your answer ✓ matches, your verdict ✓ matches (known: keep, A, B, C, D)"
        if item.id == "g:1"
        else "gold item: your answer ✗ differs, your verdict ✗ differs (known: wrong-key, D, C, B, A)"
    )
    assert expected in said
    [judgment] = stored_judgments(project)
    assert judgment.gold_id is not None


async def test_f2_shows_each_annotators_gold_accuracy(project: Database) -> None:
    submit_judgment(project, "ann", "g:1", revision_number=1, blind_answer="ABCD", verdict="keep")
    submit_judgment(project, "ann", "o:1", revision_number=1, blind_answer="DACB", verdict="keep")
    async with agreement_shown(project, "lea") as (screen, _pilot):
        table = screen.query_one("#annotator-table", DataTable)
        row = table.get_row_at(0)
        assert str(row[0]) == "ann" and row[3] == "100% of 1"


def test_gold_add_refuses_a_second_active_gold(project: Database) -> None:
    with pytest.raises(GoldError, match="is gold already"), project.transaction() as session:
        add_gold(session, "lea", "g:1", verdict="keep", answer="ABCD")


def test_a_rejected_item_is_refused_as_gold_and_undecided_or_approved_ones_are_not(
    project: Database,
) -> None:
    decide_items(project, ["o:1"], "rejected")
    decide_items(project, ["o:2"], "approved")
    refused = run_cli(project, "gold", "add", "o:1", "--verdict", "keep", "--as", "lea")
    assert refused.exit_code == 1
    assert refused.output.strip().splitlines() == [
        "error: item o:1 is rejected (a lead's decision on revision 1): a rejected item is "
        "never served as gold; mark another item, or decide this one again first"
    ]
    assert list_gold_now(project) == ["g:1", "g:2"]
    decide_items(project, ["o:4"], "conflict")
    for item_id in ("o:2", "o:3", "o:4"):  # approved, pending, in conflict
        added = run_cli(project, "gold", "add", item_id, "--verdict", "keep", "--as", "lea")
        assert added.exit_code == 0, added.output
    assert list_gold_now(project) == ["g:1", "g:2", "o:2", "o:3", "o:4"]

"""Issue 12, points 7-9: a lead's decisions are chosen and can be undone with their history
kept, F3 and `conflicts` show everything needed to decide, and the agreement figures are
explained in words (the kappa paradox) with each annotator's keep rate."""

from __future__ import annotations

import json

import pytest
from helpers import (
    ScreenHost,
    agreement_shown,
    item_status,
    notices,
    run_cli,
    screen_text,
    store_item,
    store_person,
    wait_until,
)
from sqlmodel import col, select
from textual.widgets import DataTable, OptionList, Static

from db.audit import read_audit
from db.engine import Database
from db.models import Decision
from db.settings import set_setting
from db.vocabulary import ItemKind, Role
from reviewer.adjudication import AdjudicationError, decide, undo_decision
from reviewer.agreement import compute_agreement
from reviewer.conflict_cases import load_case
from reviewer.judging import submit_judgment
from reviewer.tui.screens.adjudication import AdjudicationScreen
from reviewer.tui.screens.lead_modals import ReasonModal


def judge(
    db: Database, who: str, item_id: str, answer: str, verdict: str = "keep", **extra: object
) -> None:
    submit_judgment(
        db,
        who,
        item_id,
        revision_number=None,
        blind_answer=answer,
        verdict=verdict,
        **extra,  # type: ignore[arg-type]
    )


@pytest.fixture
def conflict(database: Database) -> Database:
    """o:1 in conflict: ann proposes another key with a comment, bo keeps it; o:2 and m:1
    in conflict too (several valid orders; several valid sets)."""
    store_person(database, "lea", Role.LEAD)
    store_person(database, "max", Role.LEAD)
    with database.transaction() as session:
        set_setting(session, "overlap", "2")
    store_item(database, "o:1", key="DACB", prompt="Rates rise; order the events.")
    store_item(database, "o:2", key="DACB")
    store_item(database, "m:1", kind="multi", key="AB", prompt="Which are monetary tools?")
    judge(
        database, "ann", "o:1", "ADCB", "wrong-key", corrected_key="ADCB", comment="A comes first"
    )
    judge(database, "bo", "o:1", "DACB")
    judge(database, "ann", "o:2", "DCAB", "ambiguous", alternative_orders=["DCAB"])
    judge(database, "bo", "o:2", "DACB")
    judge(database, "ann", "m:1", "AB", "ambiguous", alternative_orders=["ABC"], comment="C too")
    judge(database, "bo", "m:1", "AB")
    return database


# --- 7. reasons and confirmation: a reason the lead saw, and undo -------------------------


async def test_a_rejection_needs_a_reason_the_lead_chose(conflict: Database) -> None:
    """With no reason pointed to, none is highlighted and Enter asks for one; the reason
    the verdicts point to is highlighted, named, and the lead may choose another."""
    screen = AdjudicationScreen(conflict, "lea")
    app = ScreenHost(screen)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: len(screen.cases) == 3, "the queue")
        await app.push_screen(ReasonModal("o:1", ItemKind.ORDERING, None))  # none pointed to
        await pilot.pause()
        assert app.screen.query_one("#reasons", OptionList).highlighted is None
        await pilot.press("enter")  # Enter on no reason rejects nothing, and says what to do
        await pilot.pause()
        problem = app.screen.query_one("#reject-problem", Static)
        assert "Choose a reason first: ↑↓ then Enter, or its number" in str(problem.render())
        await pilot.press("tab", *"hmm", "enter")  # nor does Enter in the comment
        await pilot.pause()
        assert isinstance(app.screen, ReasonModal)
        assert "Choose a reason first" in str(
            app.screen.query_one("#reject-problem", Static).render()
        )
        await pilot.press("escape")
        await wait_until(pilot, lambda: app.screen is screen, "the queue again")
        assert reasons(conflict) == []

        await pilot.press("x")  # o:1: its annotator says the key is wrong
        await wait_until(pilot, lambda: isinstance(app.screen, ReasonModal), "the reasons")
        modal = app.screen
        assert isinstance(modal, ReasonModal)
        highlighted = modal.query_one("#reasons", OptionList).highlighted
        assert highlighted is not None and modal.reasons[highlighted] == "wrong-key"
        assert "The annotators' verdicts point to wrong-key (3)" in screen_text(app)
        await pilot.press("1", "tab", *"hmm", "enter")  # the lead chooses another
        await wait_until(pilot, lambda: not isinstance(app.screen, ReasonModal), "the decision")
        await wait_until(pilot, lambda: len(screen.cases) == 2, "the queue after it")
    assert reasons(conflict) == [("rejected", "several-valid-orders", "hmm")]


def reasons(database: Database) -> list[tuple[str, str | None, str]]:
    with database.session() as session:
        decisions = session.exec(select(Decision).order_by(col(Decision.id))).all()
        return [(decision.status, decision.reason, decision.comment) for decision in decisions]


async def test_u_in_f3_undoes_the_last_decision_and_keeps_it_in_the_history(
    conflict: Database,
) -> None:
    decide(conflict, "lea", "m:1", "approved")  # in an earlier session: u leaves it be
    screen = AdjudicationScreen(conflict, "lea")
    app = ScreenHost(screen)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: len(screen.cases) == 2, "the queue")
        first = screen.current
        assert first is not None
        await pilot.press("u")
        made_here = "lea has made no decision here to undo"
        await wait_until(pilot, lambda: any(made_here in n for n in notices(app)), "the refusal")
        await pilot.press("a")
        await wait_until(pilot, lambda: len(screen.cases) == 1, "the approval")
        assert item_status(conflict, first.item.id) == "approved"
        await pilot.press("u")
        await wait_until(pilot, lambda: len(screen.cases) == 2, "the item back in the queue")
        assert item_status(conflict, first.item.id) == "conflict"
        assert any("undid lea's approval" in notice for notice in notices(app))
        screen.query_one("#queue", DataTable).move_cursor(
            row=list(screen.cases).index(first.item.id)
        )
        await pilot.pause()
        assert "(undone)" in str(screen.query_one("#case-history", Static).render())
        app.clear_notifications()
        await pilot.press("u")  # nothing more was decided here
        await wait_until(pilot, lambda: any(made_here in n for n in notices(app)), "the refusal")
    assert item_status(conflict, "m:1") == "approved"
    with conflict.session() as session:
        decision = session.exec(select(Decision).where(Decision.item_id == first.item.id)).one()
        assert decision.retracted_at is not None  # kept, marked undone
    assert [e.action for e in read_audit_of(conflict, first.item.id)] == ["decide", "undo-decision"]


def read_audit_of(db: Database, item_id: str) -> list:  # type: ignore[type-arg]
    with db.session() as session:
        return [
            entry
            for entry in read_audit(session, target=item_id)
            if entry.action in ("decide", "undo-decision")
        ]


def test_undo_decision_on_the_cli_falls_back_to_the_earlier_decision(conflict: Database) -> None:
    decide(conflict, "lea", "o:2", "rejected", reason="several-valid-orders")
    decide(conflict, "lea", "o:2", "approved")
    assert item_status(conflict, "o:2") == "approved"
    result = run_cli(conflict, "undo-decision", "o:2", "--as", "lea")
    assert result.exit_code == 0, result.output
    assert "lea's earlier rejected counts again" in result.output
    assert item_status(conflict, "o:2") == "rejected"
    assert run_cli(conflict, "undo-decision", "o:2", "--as", "lea").exit_code == 0
    assert item_status(conflict, "o:2") == "conflict"  # back to what its judgments say
    refused = run_cli(conflict, "undo-decision", "o:2", "--as", "lea")
    assert refused.exit_code == 1 and "has no decision to undo" in refused.output
    case = load_case(conflict, "o:2")
    assert case is not None and case.decisions == [] and len(case.undone_decisions) == 2
    annotator = run_cli(conflict, "undo-decision", "o:1", "--as", "ann")
    assert annotator.exit_code == 1 and "only leads can undo decisions" in annotator.output


def test_only_the_deciding_lead_undoes_a_decision(conflict: Database) -> None:
    decide(conflict, "lea", "o:1", "approved")
    with pytest.raises(AdjudicationError, match="is lea's; only they can undo it"):
        undo_decision(conflict, "max", "o:1")
    assert item_status(conflict, "o:1") == "approved"


def test_undoing_a_corrected_key_keeps_the_revision(conflict: Database) -> None:
    decide(conflict, "lea", "o:1", "approved", key="ADCB")
    undone = undo_decision(conflict, "lea", "o:1")
    assert "revision 2 with the corrected key stays and goes back to review" in undone.describe()
    assert item_status(conflict, "o:1") == "pending"  # revision 2 has no judgments yet

    # Decided twice with the corrected key: undoing the second leaves the first in force,
    # so revision 2 stays approved and the undo does not say it goes back to review.
    decide(conflict, "lea", "o:1", "approved", key="ADCB")
    decide(conflict, "lea", "o:1", "approved", key="ADCB", comment="checked again")
    again = undo_decision(conflict, "lea", "o:1").describe()
    assert "lea's earlier approved counts again; the item is approved" in again
    assert "back to review" not in again and item_status(conflict, "o:1") == "approved"


# --- 8. everything needed to decide, without scrolling -------------------------------------


async def test_f3_shows_every_judgment_in_full_at_80_by_24(conflict: Database) -> None:
    screen = AdjudicationScreen(conflict, "lea")
    app = ScreenHost(screen)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_until(pilot, lambda: len(screen.cases) == 3, "the queue")
        for item_id, expected in (
            ("o:1", ["wrong key", "proposes the key A, D, C, B", "A comes first", "keep"]),
            ("o:2", ["several valid", "also valid orders: D, C, A, B"]),
            ("m:1", ["several valid", "also valid answers: ABC", "C too"]),
        ):
            screen.query_one("#queue", DataTable).move_cursor(row=list(screen.cases).index(item_id))
            await pilot.pause()
            summary = screen.query_one("#judgments", Static)
            shown = screen_text(app)
            for fragment in expected:
                assert fragment in shown, (item_id, fragment)  # on screen, not scrolled away
            assert summary.region.bottom <= app.size.height - 1


def test_conflicts_shows_the_item_text_and_the_judgments(conflict: Database) -> None:
    result = run_cli(conflict, "conflicts", "--as", "lea")
    assert result.exit_code == 0, result.output
    block = result.output.split("o:1  [")[1].split("\n\n")[0]
    assert "Rates rise; order the events." in block
    assert "A. The central bank raises interest rates." in block
    assert "explanation: Inflation comes first" in block
    assert "key should be A, D, C, B" in block and "“A comes first”" in block
    assert result.output.rstrip().endswith(
        "3 conflicts; resolve with `vetbench decide ITEM_ID --status ...`"
    )


# --- 9. figures explained ------------------------------------------------------------------


@pytest.fixture
def one_sided(database: Database) -> Database:
    """The case from the issue: alice keeps every item; bo drops a few.  Raw agreement is
    high while kappa and alpha are about zero."""
    verdicts_of_bo = ["keep"] * 7 + ["flawed", "sensitive"]
    for number, bo_verdict in enumerate(verdicts_of_bo):
        item_id = f"o:{number}"
        store_item(database, item_id, key="DACB")
        judge(database, "alice", item_id, "DACB")
        judge(
            database, "bo", item_id, "DACB", bo_verdict, comment="" if bo_verdict == "keep" else "x"
        )
    return database


def test_agreement_explains_the_kappa_paradox_with_keep_rates(one_sided: Database) -> None:
    report = compute_agreement(one_sided, resamples=0)
    raw = report.figures.keep_drop.percent.value
    assert raw is not None and raw > 0.7
    # one note for both codings: their reason is the same, and said twice it read as two
    [paradox] = [note for note in report.notes if "kappa paradox" in note]
    # the figures as the table above it gives them (0.778), not rounded again (0.78)
    alpha = report.figures.verdict.alpha.value
    assert alpha is not None
    assert paradox.startswith(f"Raw agreement on verdicts is {raw:.3f} but alpha is {alpha:.3f}")
    assert f"; on keep/drop it is {raw:.3f} but alpha is" in paradox
    assert "alice kept every item they judged (keep rate 100%)" in paradox
    assert "kappa paradox" in paradox
    result = run_cli(one_sided, "agreement", "--bootstrap", "0")
    assert result.exit_code == 0, result.output
    assert "What the figures mean" in result.output and "kappa paradox" in result.output
    assert "keep rate" in result.output
    rows = {
        line.split()[0]: line
        for line in result.output.splitlines()
        if line.startswith(("alice", "bo "))
    }
    assert "100%" in rows["alice"] and "78%" in rows["bo"]
    assert "9 items compared of 9 judged; 18 judgments by 2 annotators" in result.output


def test_a_cohens_kappa_of_zero_from_a_one_sided_annotator_is_explained(
    one_sided: Database,
) -> None:
    """Alice keeps every item: Cohen's kappa of the pair is 0.000 [0.000, 0.000] whatever
    bo does, which read as no agreement at all; a note says why, by name."""
    report = compute_agreement(one_sided, resamples=0)
    (pair,) = report.figures.keep_drop.cohen
    assert pair.kappa.value == 0
    expected = (
        "Cohen's kappa of alice and bo is 0 on verdicts and keep/drop: alice kept every "
        "item they judged, and kappa is 0 whenever one rater never varies"
    )
    assert any(note.startswith(expected) for note in report.reader_notes)
    assert not any(note.startswith(expected) for note in report.notes)  # the JSON's, as were
    result = run_cli(one_sided, "agreement", "--bootstrap", "0")
    assert "whenever one rater never varies" in " ".join(result.output.split())


def test_release_show_gives_alpha_its_interval_and_the_paradox_note(one_sided: Database) -> None:
    """`release show` printed `Krippendorff's alpha, verdicts: -0.067` alone: no interval,
    no raw agreement, no word of the kappa paradox the agreement report explains.  It
    now shows them from the figures the release stored (its JSON is as it was)."""
    store_person(one_sided, "lea", Role.LEAD)
    made = run_cli(one_sided, "release", "create", "r1", "--status", "all", "--as", "lea")
    assert made.exit_code == 0, made.output
    shown = run_cli(one_sided, "release", "show", "r1")
    assert shown.exit_code == 0, shown.output
    stored = json.loads(run_cli(one_sided, "release", "show", "r1", "--json").output)
    alpha = stored["figures"]["agreement"]["krippendorff_alpha"]["verdict"]
    low, high = alpha["ci95"]
    raw = stored["figures"]["agreement"]["percent_agreement"]["verdict"]["value"]
    assert (
        f"  Krippendorff's alpha, verdicts: {alpha['value']:.3f} [{low:.3f}, {high:.3f}] "
        f"(raw agreement {raw:.3f})"
    ) in shown.output.splitlines()
    (note,) = [line for line in shown.output.splitlines() if "how to read it" in line]
    # the raw agreement as the line above says it (0.778), not rounded again (0.78)
    assert note.startswith(
        f"  how to read it: Raw agreement on verdicts is {raw:.3f} but alpha is {alpha['value']:.3f}"
    )
    assert "kappa paradox" in note
    assert set(stored["figures"]["agreement"]) >= {"krippendorff_alpha", "percent_agreement"}


def test_one_annotator_says_annotator(database: Database) -> None:
    store_item(database, "o:1", key="DACB")
    judge(database, "alice", "o:1", "DACB")
    result = run_cli(database, "agreement", "--bootstrap", "0")
    assert "0 items compared of 1 judged; 1 judgment by 1 annotator;" in result.output


async def test_f2_explains_the_figures_and_shows_keep_rates(one_sided: Database) -> None:
    store_person(one_sided, "lea", Role.LEAD)
    async with agreement_shown(one_sided, "lea") as (screen, _pilot):
        notes = str(screen.query_one("#agreement-notes", Static).render())
        assert "kappa paradox" in notes and "keep rate 100%" in notes
        table = screen.query_one("#annotator-table", DataTable)
        rows = {str(table.get_row_at(i)[0]): table.get_row_at(i) for i in range(table.row_count)}
        assert rows["alice"][2] == "100%" and rows["bo"][2] == "78%"
        assert [str(column.label) for column in table.columns.values()][2] == "keep\nrate"


def test_undone_decisions_leave_agreement_and_the_report(conflict: Database) -> None:
    decide(conflict, "lea", "o:2", "rejected", reason="several-valid-orders")
    undo_decision(conflict, "lea", "o:2")
    report = compute_agreement(conflict, resamples=0)
    assert all(stats.decision_agreement.value is None for stats in report.per_annotator)
    from reviewer.report import build_report

    assert (
        "several valid"
        not in build_report(conflict, resamples=0).split("Removed")[1].split("\n\n")[0]
    )
    with conflict.session() as session:
        assert len(session.exec(select(Decision).where(col(Decision.item_id) == "o:2")).all()) == 1

"""The lead screens, driven with Pilot: a lead resolves every conflict in the adjudication
screen (assertions on the stored decisions), non-leads are refused, and the agreement
screen shows the figures and recomputes when judgments arrive."""

from __future__ import annotations

import threading
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from typing import Any

import pytest
from helpers import (
    ScreenHost,
    agreement_shown,
    notices,
    run_cli,
    screen_text,
    store_item,
    store_judgment,
    store_person,
    wait_until,
)
from rich.text import Text
from sqlmodel import col, select
from textual.pilot import Pilot
from textual.widgets import Button, DataTable, Static, TabbedContent

from db.engine import Database
from db.items import get_item
from db.models import Decision, Item
from db.settings import set_setting
from db.vocabulary import Role
from reviewer.judging import submit_judgment
from reviewer.tui.screens.adjudication import AdjudicationScreen
from reviewer.tui.screens.agreement import AgreementScreen, kappa_colour
from reviewer.tui.screens.lead_modals import ConfirmModal, ReasonModal
from reviewer.tui.screens.prompt import PromptScreen
from reviewer.tui.widgets.titles import PanelTitle


@asynccontextmanager
async def adjudicating(
    db: Database,
) -> AsyncIterator[tuple[AdjudicationScreen, ScreenHost, Pilot[None]]]:
    """Lea's adjudication screen alone at 140 x 45, once its three conflicts are listed."""
    screen = AdjudicationScreen(db, "lea")
    app = ScreenHost(screen)
    async with app.run_test(size=(140, 45)) as pilot:
        await wait_until(pilot, lambda: len(screen.cases) == 3, "the conflict queue")
        yield screen, app, pilot


def judge(
    db: Database, who: str, item_id: str, answer: str, verdict: str = "keep", **extra
) -> None:  # type: ignore[no-untyped-def]
    submit_judgment(
        db, who, item_id, revision_number=None, blind_answer=answer, verdict=verdict, **extra
    )


@pytest.fixture
def review(database: Database) -> Database:
    """Three conflicts and two agreed items, judged by two annotators; one lead."""
    store_person(database, "lea", Role.LEAD)
    with database.transaction() as session:
        set_setting(session, "overlap", "2")
    for item_id in ("o:1", "o:2", "o:3", "o:4"):
        store_item(
            database,
            item_id,
            key="DACB",
            source="econ",
            prompt="Rates rise [bold]fast[/bold]; order the events.",
        )
    store_item(database, "s:1", kind="single", key="B", source="cflue")
    judge(database, "ann", "o:1", "ADCB", "wrong-key", corrected_key="ADCB", comment="A first")
    judge(database, "bo", "o:1", "ADCB", "wrong-key", corrected_key="A D C B", seconds=40)
    judge(database, "ann", "o:2", "DCAB", "ambiguous", alternative_orders=["DCAB"])
    judge(database, "bo", "o:2", "DACB", "no-order")
    for item_id in ("o:3", "o:4"):
        judge(database, "ann", item_id, "DACB")
        judge(database, "bo", item_id, "DACB")
    judge(database, "ann", "s:1", "B", "flawed", comment="typo in C")
    judge(database, "bo", "s:1", "B")
    return database


def decisions(db: Database) -> dict[str, tuple[str, str | None, str | None, int]]:
    with db.session() as session:
        rows = session.exec(select(Decision).order_by(col(Decision.id)))
        return {d.item_id: (d.status, d.final_key, d.reason, d.revision_number) for d in rows}


async def test_a_lead_resolves_every_conflict(review: Database) -> None:
    async with adjudicating(review) as (screen, app, pilot):
        assert screen.current is not None and screen.current.item.id == "o:1"
        judgments = str(screen.query_one("#judgments", Static).render())
        assert "ann  wrong key  ·  answered A, D, C, B (≠ key)" in judgments
        assert "proposes the key A, D, C, B" in judgments and "“A first”" in judgments
        case_text = screen.query_one("#case-text", Static).render()
        assert "[bold]fast[/bold]" in str(case_text)  # item text is shown as it is, not as markup

        # o:1: approve with the key both annotators proposed (prefilled).
        await pilot.press("c")
        await wait_until(pilot, lambda: isinstance(app.screen, PromptScreen), "the key dialog")
        await pilot.press("enter")
        await wait_until(pilot, lambda: "o:1" in decisions(review), "the o:1 decision")
        await wait_until(pilot, lambda: len(screen.cases) == 2, "the queue after o:1")
        # the key as every other place writes an order (it said "with key ADCB")
        assert "o:1 approved with key A, D, C, B · u undoes it" in notices(app)

        # o:2: reject; the lead chooses the reason (not the one highlighted); add a comment.
        assert screen.current is not None and screen.current.item.id == "o:2"
        await pilot.press("x")
        await wait_until(pilot, lambda: isinstance(app.screen, ReasonModal), "the reason dialog")
        await pilot.press("1", "tab", *"two orders", "enter")
        await wait_until(pilot, lambda: "o:2" in decisions(review), "the o:2 decision")
        await wait_until(pilot, lambda: len(screen.cases) == 1, "the queue after o:2")

        # s:1: approve as it is.
        assert screen.current is not None and screen.current.item.id == "s:1"
        await pilot.press("a")
        await wait_until(pilot, lambda: not screen.cases, "an empty queue")

        # Approve all agreed items after seeing how many.
        await pilot.press("A")
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmModal), "the confirmation")
        assert "Approve all 2 agreed items as lea?" in str(
            app.screen.query_one(PanelTitle).render()
        )
        labels = [str(button.label) for button in app.screen.query(Button)]
        assert labels == ["Yes (y)", "No (n, Esc)"]  # the keys that answer it
        await pilot.press("y")
        await wait_until(pilot, lambda: len(decisions(review)) == 5, "the approved agreed items")
        await pilot.press("A")  # none is left: said so, nothing asked
        await wait_until(pilot, lambda: "No agreed items to approve." in notices(app), "a notice")
        assert app.screen is screen

    assert decisions(review) == {
        "o:1": ("approved", "ADCB", "wrong-key", 2),
        "o:2": ("rejected", None, "several-valid-orders", 1),
        "s:1": ("approved", "B", None, 1),
        "o:3": ("approved", "DACB", None, 1),
        "o:4": ("approved", "DACB", None, 1),
    }
    with review.session() as session:
        assert get_item(session, "o:1").key == "ADCB"
        statuses = {item.id: item.status for item in session.exec(select(Item))}
        comment = session.exec(select(Decision).where(Decision.item_id == "o:2")).one().comment
    assert comment == "two orders"
    assert statuses == {
        "o:1": "approved",
        "o:2": "rejected",
        "o:3": "approved",
        "o:4": "approved",
        "s:1": "approved",
    }


async def test_cancelled_dialogs_and_bad_keys_decide_nothing(review: Database) -> None:
    async with adjudicating(review) as (screen, app, pilot):
        await pilot.press("c")
        await wait_until(pilot, lambda: isinstance(app.screen, PromptScreen), "the key dialog")
        key_input = app.screen.query_one("#prompt-input")
        key_input.value = "A, B, C"  # one event missing
        await pilot.press("enter")
        problem = str(app.screen.query_one("#prompt-problem", Static).render())
        assert "missing D" in problem and isinstance(app.screen, PromptScreen)
        await pilot.press("escape")
        await pilot.press("x")
        await wait_until(pilot, lambda: isinstance(app.screen, ReasonModal), "the reason dialog")
        await pilot.press("escape")
        await wait_until(pilot, lambda: app.screen is screen, "the screen again")
        await pilot.press("A")
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmModal), "the confirmation")
        await pilot.press("n")
        await wait_until(pilot, lambda: app.screen is screen, "the screen again")
    assert decisions(review) == {}


@pytest.fixture
def held_consensus(monkeypatch: pytest.MonkeyPatch) -> Iterator[threading.Event]:
    """The screens' consensus held back until the event is set (then estimated for real):
    what a lead sees in the second or more a real estimate takes."""
    import db.consensus

    released = threading.Event()
    estimate = db.consensus.consensus_of

    def held(*args: Any, **kwargs: Any) -> db.consensus.Consensus:
        assert released.wait(60), "the test never released the consensus"
        return estimate(*args, **kwargs)

    monkeypatch.setattr(db.consensus, "consensus_of", held)
    yield released
    released.set()  # a worker still waiting ends with the test


async def test_f3_says_the_consensus_is_on_its_way_until_it_is_read(
    review: Database, held_consensus: threading.Event
) -> None:
    async with adjudicating(review) as (screen, app, pilot):
        assert screen.consensus_pending
        summary = screen.query_one("#queue-summary", Static)
        assert str(summary.render()).startswith("estimating the consensus")
        # What the screen shows is drawn a refresh after the handler that updated it.
        await shows(pilot, app, "consensus  being estimated…")
        held_consensus.set()
        await wait_until(pilot, lambda: not screen.consensus_pending, "the consensus")
        await shows(pilot, app, "consensus  p(key right)")
        assert "being estimated" not in screen_text(app)
        assert str(summary.render()).startswith("3 conflicts to resolve")


async def test_an_empty_queue_waits_for_the_consensus_before_saying_nothing_to_resolve(
    database: Database, held_consensus: threading.Event
) -> None:
    store_person(database, "lea", Role.LEAD)
    screen = AdjudicationScreen(database, "lea")
    app = ScreenHost(screen)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_until(pilot, lambda: screen.consensus_pending, "the queue")
        await shows(pilot, app, "the consensus is being estimated and may refer items")
        assert "nothing to resolve" not in screen_text(app)
        held_consensus.set()
        await wait_until(pilot, lambda: not screen.consensus_pending, "the consensus")
        await shows(pilot, app, "No conflicts: nothing to resolve.")


async def shows(pilot: Pilot[None], app: ScreenHost, text: str) -> None:
    """Wait until ``text`` is on the screen as drawn."""
    await wait_until(pilot, lambda: text in screen_text(app), repr(text))


async def test_f2_shows_the_figures_without_waiting_for_the_reliability(
    review: Database, held_consensus: threading.Event
) -> None:
    screen = AgreementScreen(review, "lea", resamples=0)
    async with ScreenHost(screen).run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: screen.computations == 1, "the figures")
        assert screen.query_one("#agreement-figures", DataTable).row_count > 0
        title = screen.query_one("#reliability-title", Static)
        assert screen.reliability_pending
        assert str(title.render()).endswith("· being estimated…")
        held_consensus.set()
        await wait_until(pilot, lambda: not screen.reliability_pending, "the reliability")
        assert "being estimated" not in str(title.render())
        table = screen.query_one("#reliability-table", DataTable)
        assert {str(row.value) for row in table.rows} == {"person:ann", "person:bo"}


async def test_non_leads_are_refused_and_see_no_judgments(review: Database) -> None:
    screen = AdjudicationScreen(review, "ann")
    app = ScreenHost(screen)
    async with app.run_test(size=(140, 45)) as pilot:
        await wait_until(pilot, lambda: screen.refusal is not None, "the refusal")
        summary = str(screen.query_one("#queue-summary", Static).render())
        assert "only leads can decide" in summary
        assert screen.query_one("#queue", DataTable).row_count == 0
        assert "ann" not in str(screen.query_one("#judgments", Static).render())
        await pilot.press("a", "A")
        await pilot.pause()
    assert decisions(review) == {}


async def test_agreement_screen_shows_figures_and_follows_new_judgments(review: Database) -> None:
    from reviewer.agreement import compute_agreement

    shown = agreement_shown(review, "lea", resamples=50, size=(140, 45), poll_seconds=0.1)
    async with shown as (screen, pilot):
        figures = screen.query_one("#agreement-figures", DataTable)
        expected = compute_agreement(review, resamples=50).figures.verdict.alpha
        first_row = figures.get_row_at(0)
        assert str(first_row[0]) == "Krippendorff's alpha, verdicts"
        assert first_row[1] == f"{expected.value:.3f}"
        heat_map = screen.query_one("#kappa-map", DataTable)
        assert heat_map.row_count == 2 and len(heat_map.columns) == 3
        cell = heat_map.get_row_at(0)[2]
        assert isinstance(cell, Text) and " on #" in str(cell.style)
        await pilot.press("k")  # k recodes the heat map on its tab only
        assert "keep/drop" not in str(screen.query_one("#heatmap-title", Static).render())
        screen.query_one(TabbedContent).active = "annotators-tab"
        await pilot.pause()
        await pilot.press("k")
        assert "keep/drop" in str(screen.query_one("#heatmap-title", Static).render())
        wrong_keys = screen.query_one("#wrong-keys", DataTable)
        assert [str(cell) for cell in wrong_keys.get_row_at(0)[:5:4]] == [
            "o:1",
            "A, D, C, B",
        ]

        store_item(review, "o:5", key="ABCD")
        store_judgment(review, "o:5", "ann", "ABCD")
        store_judgment(review, "o:5", "cy", "ABCD")
        # The screen may recompute between the two stores (seeing two annotators);
        # what matters is that it settles on the third annotator without a key press.
        await wait_until(
            pilot,
            lambda: screen.report is not None and screen.report.figures.annotators == 3,
            "a recomputation that sees the third annotator",
        )
        assert screen.computations >= 2
        assert screen.query_one("#kappa-map", DataTable).row_count == 3


async def test_the_cli_the_report_and_the_screen_show_the_same_annotator_cells(
    review: Database,
) -> None:
    """ARCHITECTURE.md: reviewer/agreement/rows.py makes the cells of every table that
    lists annotators; each interface only picks the columns it has room for."""
    import re

    from reviewer.agreement import compute_agreement
    from reviewer.agreement.rows import annotator_cells
    from reviewer.report import build_report

    per_annotator = compute_agreement(review, resamples=0).per_annotator
    expected = {stats.name: annotator_cells(stats) for stats in per_annotator}
    assert set(expected) == {"ann", "bo"}
    printed = run_cli(review, "agreement", "--as", "lea", "--bootstrap", "0").output
    table = printed.split("Per annotator")[1].split("\n\n")[0].splitlines()[2:]
    markdown = build_report(review, resamples=0).split("Per annotator")[1]
    async with agreement_shown(review, "lea", size=(140, 45)) as (screen, _pilot):
        shown = screen.query_one("#annotator-table", DataTable)
        for name, cells in expected.items():
            numbers = [cells.judged, *cells.agreement, cells.median_seconds]
            cli_line = next(line for line in table if line.startswith(name + " "))
            assert re.split(r"\s{2,}", cli_line) == [
                name,
                *numbers[:1],
                cells.keep_rate,
                *numbers[1:],
                cells.verdicts_given,
            ]
            assert f"| {' | '.join([name, *numbers])} |" in markdown
            row = [str(cell) for cell in shown.get_row(name)]
            assert row[:3] == [name, cells.judged, cells.keep_rate]
            assert row[4:] == [*numbers[1:], cells.verdicts_given]


async def test_annotators_see_figures_but_not_others_answers(review: Database) -> None:
    async with agreement_shown(review, "ann", size=(140, 45)) as (screen, _pilot):
        assert screen.query_one("#agreement-figures", DataTable).row_count > 0
        wrong_keys = screen.query_one("#wrong-keys", DataTable)
        assert wrong_keys.row_count == 1
        assert "only leads see the list" in str(wrong_keys.get_row_at(0)[0])


def test_heat_map_colours_run_from_red_to_green() -> None:
    assert kappa_colour(-0.3) == kappa_colour(0.0) == "#c0392b"
    assert kappa_colour(0.4) == "#e6a23c"
    assert kappa_colour(0.8) == kappa_colour(1.0) == "#2e9e4f"
    assert kappa_colour(None) == "#555555"


async def test_an_undo_puts_the_cursor_back_on_the_item_undone(review: Database) -> None:
    async with adjudicating(review) as (screen, app, pilot):
        table = screen.query_one("#queue", DataTable)
        await pilot.press("down")  # o:2, the second row
        assert screen.current is not None and screen.current.item.id == "o:2"
        await pilot.press("x")
        await wait_until(pilot, lambda: isinstance(app.screen, ReasonModal), "the reason dialog")
        await pilot.press("1", "enter")
        await wait_until(pilot, lambda: len(screen.cases) == 2, "the queue after o:2")
        assert screen.current is not None and screen.current.item.id != "o:2"
        await pilot.press("u")
        await wait_until(pilot, lambda: len(screen.cases) == 3, "o:2 back in the queue")
        await pilot.pause()
        key = table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value
        assert key == "o:2" and screen.current is not None and screen.current.item.id == "o:2"


async def test_an_undo_takes_back_the_notice_of_the_decision_it_undoes(
    review: Database,
) -> None:
    """After an undo, "o:1 approved ... · u undoes it" stayed above "Undone ..." until it
    timed out: two notices that contradict each other.  The notice of a decision the undo
    did not undo stays."""
    async with adjudicating(review) as (screen, app, pilot):
        await pilot.press("a")  # o:1
        await wait_until(pilot, lambda: len(screen.cases) == 2, "the queue after o:1")
        await pilot.press("a")  # o:2
        await wait_until(pilot, lambda: len(screen.cases) == 1, "the queue after o:2")
        decided = [said for said in notices(app) if said.endswith("· u undoes it")]
        assert [said.split()[0] for said in decided] == ["o:1", "o:2"], decided
        await pilot.press("u")  # undoes o:2
        await wait_until(pilot, lambda: len(screen.cases) == 2, "o:2 back in the queue")
        await wait_until(pilot, lambda: len(notices(app)) == 2, "the undo's notice")
        said = notices(app)
        assert said[0] == decided[0] and "o:2" in said[1] and decided[1] not in said, said


async def test_a_median_time_of_some_judgments_says_of_how_many(database: Database) -> None:
    """carol's median read 20 s though seven of her eight judgments had no time (0 s:
    sheet rows without seconds, `judge` without --seconds), which the median leaves out:
    every place it shows (F2's table and chart, `agreement`, the report) now says so."""
    from reviewer.report import build_report
    from reviewer.tui.widgets.bars import BarChart

    store_person(database, "lena", Role.LEAD)
    for number in range(8):
        store_item(database, f"o:{number}", key="DABC")
        store_judgment(database, f"o:{number}", "carol", "DABC", seconds=0 if number else 20)
        store_judgment(database, f"o:{number}", "bo", "DABC", seconds=12)
    store_item(database, "o:8", key="DABC")
    store_judgment(database, "o:8", "ann", "DABC", seconds=0)
    shown = {"carol": "20 (1 of 8 timed)", "bo": "12", "ann": "— (0 of 1 timed)"}
    printed = run_cli(database, "agreement", "--as", "lena", "--bootstrap", "0").output
    report = build_report(database, resamples=0)
    async with agreement_shown(database, "lena", size=(140, 45)) as (screen, _pilot):
        table = screen.query_one("#annotator-table", DataTable)
        bars = {
            bar.label: bar.figure.strip()
            for bar in screen.query_one("#seconds-bars", BarChart).bars
        }
        assert bars == {"carol": "20 s (1 of 8 timed)", "bo": "12 s", "ann": "— (0 of 1 timed)"}
        for name, median in shown.items():
            assert str(table.get_row(name)[8]) == median
            assert any(
                line.startswith(name) and f"  {median}  " in line for line in printed.splitlines()
            )
            assert f"| {median} |" in report

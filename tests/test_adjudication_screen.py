"""F3 at 120 x 35, as a lead meets it: the queue's rows one line each with their source
whole, ``o`` shows the item a case is said to duplicate (read-only), and the reject
dialog has the reason the verdicts point to ready for Enter."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import pytest
from helpers import (
    ScreenHost,
    footer_keys,
    rendered_lines,
    settle,
    store_item,
    store_person,
    wait_until,
)
from sqlmodel import col, select
from textual.containers import VerticalScroll
from textual.pilot import Pilot
from textual.widgets import DataTable, OptionList, Static

from db.engine import Database
from db.models import Decision
from db.settings import set_setting
from db.vocabulary import DecisionReason, Role
from reviewer.judging import submit_judgment
from reviewer.tui.app import make_app
from reviewer.tui.screens.adjudication import AdjudicationScreen
from reviewer.tui.screens.lead_modals import OtherItemsModal, ReasonModal

ORIGINAL = "Coffee bean prices rise sharply; order the events."


def conflicts(database: Database, count: int, prompt: str | None = None) -> None:
    """``count`` conflicts from econ_ordering (with ``prompt``, when given): the first is
    called a duplicate of econ_ordering:0."""
    store_person(database, "lea", Role.LEAD)
    with database.transaction() as session:
        set_setting(session, "overlap", "2")
    store_item(database, "econ_ordering:0", key="DACB", source="econ_ordering", prompt=ORIGINAL)
    for number in range(1, count + 1):
        item_id = f"econ_ordering:{number}"
        text = {"prompt": prompt} if prompt else {}
        store_item(database, item_id, key="DACB", source="econ_ordering", **text)
        details = {"duplicate_of": "econ_ordering:0"} if number == 1 else {}
        for who, verdict in (("ann", "duplicate" if number == 1 else "flawed"), ("bo", "keep")):
            submit_judgment(
                database,
                who,
                item_id,
                revision_number=None,
                blind_answer="DACB",
                verdict=verdict,
                comment="see econ_ordering:0" if who == "ann" else "",
                **(details if who == "ann" else {}),
            )


def reasons_decided(database: Database) -> list[tuple[str, str, str | None]]:
    with database.session() as session:
        rows = session.exec(select(Decision).order_by(col(Decision.id)))
        return [(row.item_id, row.status, row.reason) for row in rows]


async def open_case(pilot: Pilot[None], screen: AdjudicationScreen, item_id: str) -> None:
    """Move the queue's cursor to ``item_id``'s case and wait for its pane."""
    table = screen.query_one("#queue", DataTable)
    table.move_cursor(row=table.get_row_index(item_id))
    await wait_until(
        pilot,
        lambda: screen.current is not None and screen.current.item.id == item_id,
        item_id,
    )


async def test_the_queue_at_120_columns_lists_one_line_rows_with_whole_sources(
    database: Database,
) -> None:
    conflicts(database, 12)
    screen = AdjudicationScreen(database, "lea")
    async with ScreenHost(screen).run_test(size=(120, 35)) as pilot:
        await wait_until(pilot, lambda: len(screen.cases) == 12, "the conflict queue")
        await pilot.pause()
        table = screen.query_one("#queue", DataTable)
        labels = [str(column.label) for column in table.columns.values()]
        # the ids leave "why" no room: it goes (the case pane says why) rather than sit
        # out of sight making every row as tall as its lines
        assert labels == ["item", "score", "kind", "source"]
        assert table.virtual_size.width <= table.size.width, labels  # nothing out of sight
        source = labels.index("source")
        assert all(str(table.get_row_at(row)[source]) == "econ_ordering" for row in range(12))
        assert [row.height for row in table.rows.values()] == [1] * 12, (
            labels,
            table.get_row_at(0),
        )
        assert table.size.height >= 13  # every conflict in view, under the header


@asynccontextmanager
async def at_conflict_case(
    database: Database, item_id: str
) -> AsyncIterator[tuple[Pilot[None], ScreenHost, AdjudicationScreen]]:
    """F3 at 120x35 on two conflicts (econ_ordering:1 said to duplicate econ_ordering:0),
    opened at ``item_id``'s case."""
    conflicts(database, 2)
    screen = AdjudicationScreen(database, "lea")
    app = ScreenHost(screen)
    async with app.run_test(size=(120, 35)) as pilot:
        await wait_until(pilot, lambda: len(screen.cases) == 2, "the conflict queue")
        await open_case(pilot, screen, item_id)
        yield pilot, app, screen


async def test_o_shows_the_item_a_case_is_said_to_duplicate(database: Database) -> None:
    async with at_conflict_case(database, "econ_ordering:1") as (pilot, app, screen):
        assert "o shows econ_ordering:0" in str(screen.query_one("#case-history", Static).render())
        await pilot.press("o")
        await wait_until(pilot, lambda: isinstance(app.screen, OtherItemsModal), "the item")
        shown = app.screen.query_one("#other-items", Static)
        await wait_until(pilot, lambda: ORIGINAL in str(shown.render()), "econ_ordering:0's text")
        assert "key D, A, C, B" in str(shown.render())
        await pilot.press("escape")
        await wait_until(pilot, lambda: app.screen is screen, "the case again")
        # a case that names no other item: o is not offered, and does nothing
        await open_case(pilot, screen, "econ_ordering:2")
        assert "other_items" not in {b.binding.action for b in screen.active_bindings.values()}
        await pilot.press("o")
        await pilot.pause()
        assert app.screen is screen
    assert reasons_decided(database) == []  # reading decides nothing


async def test_enter_rejects_for_the_reason_the_verdicts_point_to(database: Database) -> None:
    async with at_conflict_case(database, "econ_ordering:1") as (pilot, app, screen):
        await pilot.press("x")
        await wait_until(pilot, lambda: isinstance(app.screen, ReasonModal), "the reason dialog")
        modal = app.screen
        assert isinstance(modal, ReasonModal)
        highlighted = modal.query_one("#reasons", OptionList).highlighted
        assert highlighted is not None
        assert modal.reasons[highlighted] is DecisionReason.DUPLICATE
        await pilot.press("enter")
        await wait_until(pilot, lambda: bool(reasons_decided(database)), "the decision")
    assert reasons_decided(database) == [("econ_ordering:1", "rejected", "duplicate")]


@pytest.mark.parametrize("size", [(80, 24), (120, 35)])
async def test_the_next_case_opens_at_its_top_whatever_the_last_was_scrolled_to(
    database: Database, size: tuple[int, int]
) -> None:
    # At 80x24 the case pane shows a few lines: a lead who paged down one case, then
    # moved to the next (or decided, which moves on), saw the middle of the next one.
    conflicts(database, 2, prompt=" ".join([ORIGINAL] * 40))  # taller than the pane
    screen = AdjudicationScreen(database, "lea")
    async with ScreenHost(screen).run_test(size=size) as pilot:
        await wait_until(pilot, lambda: len(screen.cases) == 2, "the conflict queue")
        await open_case(pilot, screen, "econ_ordering:1")
        case = screen.query_one("#case-scroll", VerticalScroll)
        await wait_until(pilot, lambda: case.max_scroll_y > 0, "a case taller than its pane")
        await pilot.press("space")
        await wait_until(pilot, lambda: case.scroll_y > 0, "the case paged on")
        await open_case(pilot, screen, "econ_ordering:2")
        await pilot.pause()
        assert case.scroll_y == 0
        # the same case shown again (the consensus read, v) keeps where the lead is
        await pilot.press("space")
        await wait_until(pilot, lambda: case.scroll_y > 0, "the case paged on")
        scrolled = case.scroll_y
        await pilot.press("v")
        await pilot.pause()
        assert case.scroll_y == scrolled


def test_f3s_help_writes_each_scroll_key_once_with_its_others(database: Database) -> None:
    # It listed "pagedown" and "pageup" as bound, each on a row of its own under "Space"
    # and "Shift+Space" with the same words; the review help writes "Space / PgDn".
    rows = AdjudicationScreen(database, "lea").help_rows()
    keys = {row.description: row.keys for row in rows}
    assert keys["Scroll the case on"] == "Space / PgDn"
    assert keys["Scroll the case back"] == "Shift+Space / PgUp"
    assert len(rows) == len(keys)  # one row for each thing a key does


async def test_the_queue_is_fitted_again_when_the_terminal_is_resized(database: Database) -> None:
    # Fitted once, to the width it had: "why", left out at 120 columns (the case beside
    # the queue), stayed out at 80 (the case below it, room for "why"), and back at 120
    # the "why" taken in at 80 sat out of sight, each row as tall as its lines.
    conflicts(database, 12)
    app = make_app(database, "lea")  # the app's breakpoints: the case goes below at 80
    async with app.run_test(size=(120, 35)) as pilot:
        await settle(pilot)
        await pilot.press("f3")
        screen = app.screen
        assert isinstance(screen, AdjudicationScreen)
        await wait_until(pilot, lambda: len(screen.cases) == 12, "the conflict queue")
        await open_case(pilot, screen, "econ_ordering:2")
        table = screen.query_one("#queue", DataTable)

        def labels() -> list[str]:
            return [str(column.label) for column in table.columns.values()]

        assert labels() == ["item", "score", "kind", "source"]
        await pilot.resize_terminal(80, 24)
        await wait_until(pilot, lambda: "why" in labels(), "the queue fitted to 80 columns")
        await pilot.pause()
        assert screen.current is not None and screen.current.item.id == "econ_ordering:2"
        assert table.cursor_row == table.get_row_index("econ_ordering:2")
        await pilot.resize_terminal(120, 35)
        await wait_until(pilot, lambda: "why" not in labels(), "the queue fitted to 120")
        assert table.virtual_size.width <= table.size.width
        assert [row.height for row in table.rows.values()] == [1] * 12
        await pilot.pause()
        assert screen.current is not None and screen.current.item.id == "econ_ordering:2"


@pytest.mark.parametrize("size", [(80, 24), (120, 35)])
async def test_the_footer_shows_a_leads_keys_at_both_widths(
    database: Database, size: tuple[int, int]
) -> None:
    # At 80 columns the footer dropped u (undo) and o (the named items): only ? listed them,
    # and a new lead did not know they were there.  At 120 it dropped v, A and r.
    conflicts(database, 2)
    app = make_app(database, "lea")
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        await pilot.press("f3")
        screen = app.screen
        assert isinstance(screen, AdjudicationScreen)
        await wait_until(pilot, lambda: len(screen.cases) == 2, "the conflict queue")
        await open_case(pilot, screen, "econ_ordering:1")  # said to duplicate econ_ordering:0
        await wait_until(pilot, lambda: not screen.consensus_pending, "the consensus")
        await pilot.pause()
        shown = footer_keys(app)
        needed = {"a", "c", "x", "u", "o", "escape", "f2", "f4", "question_mark", "q"}
        assert needed <= set(shown), shown
        if size[0] >= 120:
            assert {"v", "A", "r"} <= set(shown), shown
        footer = rendered_lines(app)[-1]
        assert "u Undo" in footer and "o Others" in footer, footer
        # the labels are short; ? and the palette say what each key does in full
        palette = {title: said for title, said, _run in screen.palette_commands()}
        assert "corrected key" in palette["Key… (c)"], palette
        help_rows = {row.keys: row.description for row in screen.help_rows()}
        assert "Undo your last decision" in help_rows["u"], help_rows

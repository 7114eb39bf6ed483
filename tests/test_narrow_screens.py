"""Issue 23, point 9: at 80×24 nothing the annotator needs is cut: the status line,
the reveal (Space / PageDown scroll it without Tab, and `?` says so), F2's notes and
F3's reasons (every annotator's).  The pictures are in tests/test_tui_snapshots.py."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import replace
from pathlib import Path

import pytest
from helpers import (
    REVIEW_GROUPS,
    cflue_record,
    footer_keys,
    notices,
    rendered_lines,
    screen_text,
    settle,
    store_item,
    store_judgment,
    store_person,
    wait_until,
)
from rich.text import Text
from textual.geometry import Region
from textual.pilot import Pilot
from textual.widgets import DataTable, OptionList, Static

from db.engine import Database
from db.importer import import_files
from db.items import get_item
from db.vocabulary import Role
from reviewer.queue import QueueProgress
from reviewer.tui.app import make_app
from reviewer.tui.screens.adjudication import AdjudicationScreen
from reviewer.tui.screens.help import HelpScreen
from reviewer.tui.screens.jump import FilterScreen
from reviewer.tui.widgets.item_view import (
    MORE_BELOW,
    ChoiceRow,
    ItemTextPanel,
    ItemView,
    MoreBelow,
    item_heading,
)
from reviewer.tui.widgets.progress import ProgressLine, between_parts, progress_text
from reviewer.tui.widgets.reveal import RevealPanel

LONG_EVENTS = {
    label: f"Event {label}: " + "a long description of what happens next in the economy " * 2
    for label in "ABCDEF"
}


def choices_in_sight(view: ItemView) -> str:
    """The letters of the item's choices (events) wholly in sight: in the view, not under
    its last line while that says more is below."""
    mark = view.query_one(MoreBelow)
    bottom = mark.region.y if mark.display else view.content_region.bottom
    return "".join(
        row.label
        for row in view.query(ChoiceRow)
        if row.display
        and view.content_region.contains_region(row.region)
        and row.region.bottom <= bottom
    )


def says_more_below(panel: ItemTextPanel) -> bool:
    """Whether ``panel``'s last line, on screen, says that its text runs on below."""
    mark = panel.query_one(MoreBelow)
    if not mark.display:
        return False
    bottom = panel.content_region.bottom - 1
    assert mark.region.y == bottom and MORE_BELOW.strip() in str(mark.render())
    return True


async def test_space_and_page_down_scroll_the_reveal_without_tab(database: Database) -> None:
    store_item(database, "long:1", choices=LONG_EVENTS, key="ABCDEF", explanation="why " * 600)
    app = make_app(database, "alice")
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press(*"abcdef", "enter")
        await settle(pilot)
        reveal = app.review_screen.query_one(RevealPanel)
        view = app.review_screen.query_one(ItemView)
        assert reveal.max_scroll_y > 0 and reveal.scroll_y == 0
        # Neither panel is cut silently: both say more is below, and Space is the key.
        assert view.max_scroll_y > 0 and says_more_below(view) and says_more_below(reveal)
        focused = app.focused
        await pilot.press("space")
        await pilot.pause()
        first = reveal.scroll_y
        assert first > 0
        # One Space took the item to its end: its last event is in sight, and no mark.
        assert view.scroll_y == view.max_scroll_y and not says_more_below(view)
        assert choices_in_sight(view).endswith("F")
        await pilot.press("pagedown")
        await pilot.pause()
        assert reveal.scroll_y > first
        assert app.focused is focused  # no Tab, no focus moved
        await pilot.press("pageup")
        await pilot.pause()
        assert reveal.scroll_y < reveal.max_scroll_y or first == reveal.max_scroll_y
        await pilot.press("shift+space", "shift+space")
        await pilot.pause()
        assert reveal.scroll_y == 0
        assert says_more_below(view) and says_more_below(reveal)  # back at the top
        assert not [n for n in app._notifications if "not now" in str(n.message)]
        footer = " ".join(str(key.render()) for key in app.screen.query("FooterKey"))
        assert "Space" in footer and "Scroll" in footer
        await pilot.press("question_mark")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        rows = app.help_rows()
        assert any("Space / PgDn" in row.keys and "no Tab" in row.description for row in rows)
        assert any(
            "not:LONGER" in row.description and "next session" in row.description for row in rows
        )


async def test_the_help_shows_every_key_whole_at_80_columns(database: Database) -> None:
    """A key longer than its column ("Shift+Space / PgUp", "Ctrl+Shift+Z or Ctrl+Y") wraps
    at its spaces; it was cut to "Shift+Space / P…" at every terminal width."""
    store_item(database, "item:1")
    app = make_app(database, "alice")
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("question_mark")
        await settle(pilot)
        assert isinstance(app.screen, HelpScreen)
        table = app.screen.query_one("#help-table", Static)
        whole = Region(0, 0, table.size.width, table.size.height)  # scrolled or not
        shown = "\n".join(strip.text for strip in table.render_lines(whole))
        long_keys = [row.keys for row in app.screen.rows if len(row.keys) > 16]
    assert "Shift+Space /" in shown and "…" not in shown
    assert {"Shift+Space / PgUp", "Ctrl+Shift+Z or Ctrl+Y"} <= set(long_keys)
    words = shown.split()
    for keys in long_keys:
        assert all(word in words for word in keys.split()), keys


async def test_a_cflue_items_heading_keeps_its_revision_at_80_columns(
    database: Database, tmp_path: Path
) -> None:
    """``knowledge:1 · multiple answers · 证券专项考试 · knowledge (record 1) · revision 1``
    is wider than 80 columns: it was cut after "(record"; the compact form leaves out the
    source the id already names, and the wide screen keeps the whole heading.

    Revealed, its five choices are all in sight at both sizes, with their marks: at 80x24
    the reveal below the item took the rows of D and E, and nothing said so.  Below the
    item, the reveal no longer repeats the key's choices in words (the item marks them);
    beside it, it still has them."""
    choices = {"A": "货币市场", "B": "债券市场", "C": "商品市场", "D": "期货市场", "E": "外汇市场"}
    record = cflue_record(
        task="多项选择题", answer="AB", choices=str(choices), **{"名称": "证券专项考试"}
    )
    path = tmp_path / "knowledge.json"
    path.write_text(json.dumps([record], ensure_ascii=False), encoding="utf-8")
    import_files(database, [path])
    headings = {}
    for size in ((80, 24), (120, 35)):
        app = make_app(database, f"alice-{size[0]}")
        async with app.run_test(size=size) as pilot:
            await settle(pilot)
            heading = app.review_screen.query_one("#item-heading", Static)
            region = Region(0, 0, heading.size.width, 1)
            headings[size] = heading.render_lines(region)[0].text.strip()
            await pilot.press("a", "c", "enter")
            await settle(pilot)
            view = app.review_screen.query_one(ItemView)
            reveal = app.review_screen.query_one(RevealPanel)
            assert reveal.display
            assert choices_in_sight(view) == "ABCDE", size
            assert reveal.query_one("#reveal-key").display is (size == (120, 35)), size
    assert (
        headings[(80, 24)]
        == "knowledge:1 · multiple answers · 证券专项考试 · record 1 · revision 1"
    )
    assert headings[(120, 35)] == (
        "knowledge:1  ·  multiple answers  ·  证券专项考试  ·  knowledge (record 1)  ·  revision 1"
    )
    with database.session() as session:
        item = get_item(session, "knowledge:1")
    assert item is not None
    # An id that does not name its source keeps the source in the compact form.
    other = item_heading(replace(item, id="q-17"), width=40).plain
    assert other == "q-17 · multiple answers · 证券专项考试 · knowledge (record 1) · revision 1"


def test_the_status_line_has_a_short_form_that_fits_80_columns() -> None:
    progress = QueueProgress(
        session_done=12,
        session_assigned=40,
        overall_done=120,
        items_left=1_234,
        median_seconds=38.0,
        items_complete=2_340,
        items_total=3_864,
    )
    long = progress_text("alice", progress, "all items").plain
    short = progress_text("alice", progress, "all items", short=True).plain
    assert "waiting for you" in long and len(long) > 78
    assert short == "alice · 12 done now · 1,234 left · 2,340/3,864 complete · 38 s/item"
    filtered = progress_text("alice", progress, "text “增值税”", short=True).plain
    assert filtered.endswith("· filter: text “增值税”")
    assert Text(short).cell_len <= 78  # with a filter it may wrap to a second line


async def test_the_status_line_is_whole_at_80_columns(database: Database) -> None:
    for n in range(12):
        store_item(database, f"item:{n}")
    app = make_app(database, "alice")
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        line = app.review_screen.query_one("#review-progress")
        await wait_until(pilot, lambda: "left" in str(line.render()), "the count")
        shown = str(line.render())
        assert "left" in shown and "complete" in shown and "…" not in shown
        assert line.size.height == 1

    # After a save the note comes first; what does not fit goes on a second line, whole.
    for n in range(3):
        store_item(database, f"a-rather-long-source-name:item-{n}", source="long-source-name")
    app = make_app(database, "alice", source="long-source-name")
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        line = app.review_screen.query_one("#review-progress")
        await pilot.press("a", "b", "c", "d", "enter", "k")
        await settle(pilot)
        # The new text is laid out on the next refresh: its height is read once it is.
        await wait_until(
            pilot,
            lambda: "saved keep" in str(line.render()) and line.size.height > 1,
            "the note laid out",
        )
        strips = line.render_lines(Region(0, 0, line.size.width, line.size.height))
        rows = [strip.text.strip() for strip in strips]
        assert len(rows) == 2 and rows[0].startswith("✓ saved keep on a-rather-long")
        assert rows[1].startswith(("alice", "1 done", "2 left", "0/", "1/", "filter")), rows


async def test_a_note_too_long_for_two_lines_gives_way_to_the_figures(database: Database) -> None:
    """A long note (a saved revision's) pushed the filter in force off the status line."""
    store_item(database, "item:0", source="long-source-name")
    app = make_app(database, "alice", source="long-source-name")
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        line = app.review_screen.query_one("#review-progress", ProgressLine)
        await wait_until(pilot, lambda: "left" in str(line.render()), "the count")
        line.show_note(
            "✓ saved revision 2 of h:weird key/../x; it goes to the other annotators "
            "(you know its key) and to nobody else before them"
        )
        await settle(pilot)
        strips = line.render_lines(Region(0, 0, line.size.width, line.size.height))
        rows = [strip.text.strip() for strip in strips]
        assert len(rows) == 2 and rows[0].startswith("✓ saved revision 2") and rows[0][-1] == "…"
        assert rows[1].startswith("alice · ") and rows[1].endswith("long-source-name"), rows


def test_a_status_line_too_wide_breaks_between_parts_never_inside_one() -> None:
    note = Text("✓ saved keep on cflue30:25", style="bold green")
    line = note + Text("   alice · 1 done · 29 waiting · 0/30 complete · 10 s/item")
    assert line.cell_len > 78
    broken = between_parts(line, 78)
    first, second = broken.plain.split("\n")
    assert first == "✓ saved keep on cflue30:25   alice · 1 done · 29 waiting · 0/30 complete"
    assert second == "10 s/item"
    assert broken.spans[0].style == "bold green"  # the note keeps its colour
    assert (
        between_parts(line, 30).plain
        == "✓ saved keep on cflue30:25\nalice · 1 done · 29 waiting · 0/30 complete · 10 s/item"
    )
    assert between_parts(line, 200) is line  # it fits: as it was
    assert (
        between_parts(Text("a-very-long-word-with-no-gap"), 10).plain
        == "a-very-long-word-with-no-gap"
    )


async def test_f3_lists_every_annotators_reason_at_80_columns(database: Database) -> None:
    store_person(database, "lena", Role.LEAD)
    store_item(database, "c:1", kind="single", key="A")
    store_judgment(database, "c:1", "ann", "B", "wrong-key")
    store_judgment(database, "c:1", "bo", "C", "ambiguous")
    app = make_app(database, "lena")
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("f3")
        for _ in range(100):
            await pilot.pause()
            tables = list(app.screen.query("#queue"))
            if (
                tables
                and tables[0].row_count
                and not any(w.is_running for w in app.workers if w.group not in REVIEW_GROUPS)
            ):
                break
        queue = app.screen.query_one("#queue", DataTable)
        await pilot.pause()
        why = str(queue.get_row_at(0)[-1])
        assert "ann:" in why and "bo:" in why
        widths = sum(column.get_render_width(queue) for column in queue.ordered_columns)
        assert widths <= queue.size.width
        assert queue.rows[next(iter(queue.rows))].height >= 2  # wrapped, not cut
        # the decisions, and the ways to the other screens, all in the footer
        keys = footer_keys(app)
        assert {"a", "c", "x", "f2", "f4", "escape", "question_mark", "q"} <= set(keys), keys


async def test_every_filter_field_and_apply_are_on_screen_at_both_sizes(
    database: Database, tmp_path: Path
) -> None:
    """At 80×24 the filter showed Search, Kind and Source only: Exam, Flag and Apply were
    below the screen, and Tab moved the focus there unseen."""
    record = cflue_record(task="多项选择题", answer="AB", **{"名称": "证券专项考试"})
    path = tmp_path / "knowledge.json"
    path.write_text(json.dumps([record], ensure_ascii=False), encoding="utf-8")
    import_files(database, [path])
    for size in ((80, 24), (120, 35)):
        app = make_app(database, "alice")
        async with app.run_test(size=size) as pilot:
            await settle(pilot)
            await pilot.press("slash")
            await settle(pilot)
            dialog = app.screen
            assert isinstance(dialog, FilterScreen)
            screen = Region(0, 0, *size)
            wanted = [f"#filter-{name}" for name in ("text", "kinds", "sources", "statuses")]
            wanted += ["#filter-exams", "#filter-flags", "#filter-apply"]
            for selector in wanted:
                assert screen.contains_region(dialog.query_one(selector).region), (size, selector)


CFLUE_EXAMS = ["中国精算师", "中级经济师", "保险从业资格", "初级会计职称", "初级经济师",
               "反假货币知识", "基金从业资格", "期货从业资格", "注册会计师", "证券专项考试",
               "证券从业资格", "金融理财师（AFP）", "银从中级资格", "银行初级资格"]  # fmt: skip


@pytest.mark.parametrize("size", [(80, 24), (120, 35)], ids=["80x24", "120x35"])
async def test_the_exam_list_shows_every_name_whole_over_the_buttons(
    database: Database, tmp_path: Path, size: tuple[int, int]
) -> None:
    """The filter's Exam list drawn over Apply showed 初    济师 for 初级经济师 (and
    期    业资格, 中    算师): Textual cuts each line at every widget's edge, the
    buttons' under the list too, and a cut through a wide character leaves spaces."""
    records = [cflue_record(**{"名称": exam}) for exam in CFLUE_EXAMS]
    path = tmp_path / "knowledge.json"
    path.write_text(json.dumps(records, ensure_ascii=False), encoding="utf-8")
    import_files(database, [path])
    app = make_app(database, "alice")
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        await pilot.press("slash", "tab", "tab", "tab", "tab", "enter")
        await settle(pilot)
        overlay = app.screen.query_one("#filter-exams SelectOverlay", OptionList)
        names = [str(overlay.get_option_at_index(i).prompt) for i in range(overlay.option_count)]
        assert len(names) == len(CFLUE_EXAMS) + 1  # "any exam (名称)" and each exam
        for _ in range(len(names)):  # down the whole list: every name passes every row
            area = overlay.content_region
            lines = rendered_lines(app)
            for y in range(area.y, area.bottom):
                name = names[overlay.scroll_offset.y + y - area.y]
                assert name in lines[y], (lines[y], name)
            await pilot.press("down")
            await settle(pilot)


async def test_f2s_annotators_table_fits_80_columns(database: Database) -> None:
    """It ran 192 cells wide and scrolled sideways.  At 80 columns the columns the charts
    under it show too (judged, keep rate, median time) give way, the headings take two
    lines and the verdicts given wrap; at 120 every column is there."""
    from helpers import agreement_shown
    from textual.widgets import TabbedContent

    store_person(database, "lena", Role.LEAD)
    verdicts = ("keep", "ambiguous", "wrong-key", "flawed", "no-order", "keep", "duplicate")
    for number, verdict in enumerate(verdicts):
        store_item(database, f"o:{number}", key="DABC")
        store_judgment(database, f"o:{number}", "annotator-with-a-long-name", "DABC", verdict)
        store_judgment(database, f"o:{number}", "bo", "DABC")
    for size, columns in (((80, 24), 7), ((120, 35), 10)):
        async with agreement_shown(database, "lena", size=size) as (screen, pilot):
            screen.query_one(TabbedContent).active = "annotators-tab"
            await settle(pilot)
            await pilot.pause()
            table = screen.query_one("#annotator-table", DataTable)
            assert table.size.width > 0 and table.virtual_size.width <= table.size.width, size
            assert len(table.columns) == columns
            row = [str(cell) for cell in table.get_row("annotator-with-a-long-name")]
            assert "duplicate 1" in row[-1] and table.rows[next(iter(table.rows))].height > 1


@pytest.mark.parametrize("size", [(80, 24), (120, 35)])
async def test_the_first_use_notice_leaves_the_verdict_keys_in_sight(
    database: Database, size: tuple[int, int]
) -> None:
    """The "Who you are" notice (the first person of a database, registered on first use)
    was a toast that lay over the m, w, x and d verdict keys for 10 s.  It shows in the status line,
    above the figures, in the layout: the verdict bar stays whole, at 80x24 and 120x35,
    until the first verdict's outcome takes its place."""
    from reviewer.tui.widgets.verdict_bar import VerdictBar

    store_item(database, "o:1")
    said = (
        "zhang is the first person in this database and is registered as an annotator; add "
        "the others with `vetbench users add NAME --role annotator|lead`"
    )
    app = make_app(database, "zhang", notice=said)
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        line = app.review_screen.query_one(ProgressLine)
        await wait_until(pilot, lambda: line.notice == f"Who you are: {said}", "the notice")
        assert not [n for n in app._notifications if "zhang" in str(n.message)]
        await pilot.press(*"dabc", "enter")
        bar = app.review_screen.query_one(VerdictBar)
        await wait_until(pilot, lambda: bar.display and bar.region.height > 0, "the verdicts")
        await settle(pilot)
        assert Region(0, 0, *size).contains_region(bar.region), size
        assert not bar.region.overlaps(line.region), size
        # at 80x24 it gives way to the key (the next test); at 120x35 there is room
        assert ("Who you are: zhang" in str(line.render())) is (size == (120, 35)), size
        await pilot.press("k")
        await wait_until(pilot, lambda: not line.notice, "the outcome in its place")


FIRST_USE = (
    "zhang is the first person in this database and is registered as an annotator; add "
    "the others with `vetbench users add NAME --role annotator|lead`"
)


async def test_at_80x24_the_notice_gives_way_to_the_events_and_the_key(
    database: Database,
) -> None:
    """At 80x24 the three lines of the first-use notice were, once the key showed, the
    rows of the item's events: none was in sight for up to 10 s.  The notice shows while
    the item is blind, gives way while the key is shown, and shows again, for the time it
    had left, with the next blind item."""
    store_item(database, "o:1")
    store_item(database, "o:2")
    app = make_app(database, "zhang", notice=FIRST_USE)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        line = app.review_screen.query_one(ProgressLine)
        await wait_until(pilot, lambda: "Who you are" in str(line.render()), "the notice")
        first = app.review_screen.item.id if app.review_screen.item else None
        await pilot.press(*"dabc", "enter")
        reveal = app.review_screen.query_one(RevealPanel)
        await wait_until(pilot, lambda: reveal.display, "the key")
        await settle(pilot)
        shown = screen_text(app)
        assert "The central bank raises interest rates." in shown  # the first event
        assert "Mortgage costs rise for new buyers." in shown
        assert "Key         D, A, B, C" in shown
        assert reveal.query_one("#reveal-key").display  # an order's key in words stays
        assert "Who you are" not in shown and line.notice  # held, not ended
        await pilot.press("s")  # skipped: the next item, blind, and the notice again
        await wait_until(pilot, lambda: "Who you are" in str(line.render()), "the notice back")
        await settle(pilot)
        assert app.review_screen.item is not None and app.review_screen.item.id != first


async def test_the_notice_counts_its_time_only_in_sight(database: Database) -> None:
    """A new annotator's guidelines open over the first item: the notice's 10 s ran out
    behind them, so "Who you are" was gone by the time they were closed."""
    store_item(database, "o:1")
    app = make_app(database, "zhang")
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        line = app.review_screen.query_one(ProgressLine)
        line.show_notice("Soon gone", "for 2 s in sight", seconds=2.0)
        await pilot.press("g")
        await wait_until(pilot, lambda: app.screen is not app.review_screen, "the guidelines")
        assert "Soon gone" not in str(line.render())
        await pilot.pause(3.0)
        assert "Soon gone" in line.notice  # its time stood still behind the guidelines
        await pilot.press("escape")
        await wait_until(pilot, lambda: "Soon gone" in str(line.render()), "the notice in sight")
        await wait_until(pilot, lambda: not line.notice, "its time up, in sight")


@pytest.mark.parametrize("size", [(80, 24), (120, 35)])
async def test_a_key_that_does_nothing_says_so_above_the_status_line(
    database: Database, size: tuple[int, int]
) -> None:
    """The "Nothing done" notice was a toast that lay over the verdict keys for 4 s: it is said
    above the status line, in the layout, with the same words; the next one replaces it,
    and a verdict's outcome (or the next phase) takes its place."""
    from reviewer.tui.widgets.verdict_bar import VerdictBar

    store_item(database, "o:1")
    store_item(database, "o:2")
    app = make_app(database, "alice")
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        line = app.review_screen.query_one(ProgressLine)
        await pilot.press("d", "d")
        said = "Nothing done: D is already in your order; Backspace takes back the last step"
        await wait_until(pilot, lambda: said in str(line.render()), "the warning")
        await pilot.press(*"abc", "enter")
        bar = app.review_screen.query_one(VerdictBar)
        await wait_until(pilot, lambda: bar.display, "the verdicts")
        assert not line.warning  # it was about the blind answer
        await pilot.press("e")
        await settle(pilot)
        assert line.warning.startswith("Nothing done: e edits an item after your verdict")
        assert line.warning in str(line.render())
        assert Region(0, 0, *size).contains_region(bar.region), size
        assert not bar.region.overlaps(line.region), size
        assert notices(app) == []  # no toast
        await pilot.press("k")
        await wait_until(pilot, lambda: line.note.startswith("✓ saved keep"), "the outcome")
        assert not line.warning


async def test_every_compact_list_is_framed_when_open(database: Database) -> None:
    """F4's start form and the editor's kind had compact lists without a frame when open
    (only the filter's was framed): their options lay over the fields below and read as
    their values."""
    from textual.widgets import Select
    from textual.widgets._select import SelectOverlay

    from reviewer.tui.screens.edit import EditScreen
    from reviewer.tui.screens.evaluation import EvaluationScreen

    store_item(database, "mcq:1", kind="multi", key="AB")

    async def opened(select: Select[str]) -> SelectOverlay:
        select.focus()
        await pilot.press("enter")
        await wait_until(pilot, lambda: select.expanded, f"{select.id}'s list to open")
        await pilot.pause()
        return select.query_one(SelectOverlay)

    app = make_app(database, "alice")
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("f4")
        await wait_until(pilot, lambda: isinstance(app.screen, EvaluationScreen), "F4")
        for select_id in ("#protocol", "#kind"):
            overlay = await opened(app.screen.query_one(select_id, Select))
            assert all(edge[0] for edge in overlay.styles.border), (select_id, overlay.styles)
            await pilot.press("escape")
        await pilot.press("escape")
        await wait_until(pilot, lambda: app.screen is app.review_screen, "the review screen")
        await pilot.press("a", "enter", "f")
        await wait_until(pilot, lambda: isinstance(app.screen, EditScreen), "the editor")
        overlay = await opened(app.screen.query_one("#edit-kind", Select))
        assert all(edge[0] for edge in overlay.styles.border), overlay.styles.border


@pytest.mark.parametrize("person", ["lena", "alice"])
@pytest.mark.parametrize("size", [(80, 24), (120, 35)])
async def test_the_footer_keeps_next_and_undo_at_every_step(
    database: Database, person: str, size: tuple[int, int]
) -> None:
    """At 80 columns the footer dropped its keys from the last one back, and `n Next` went
    first of all for a lead (F2 F3 F4 take room): the key used at every item."""
    store_person(database, "lena", Role.LEAD)
    for n in range(3):
        store_item(database, f"econ:{n}", key="DABC")
    app = make_app(database, person)
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        steps = {"blind": (), "revealed": (*"abcd", "enter"), "judged": ("k", "p")}
        for step, keys in steps.items():
            await pilot.press(*keys)
            await settle(pilot)
            shown = footer_keys(app)
            assert {"n", "u", "space", "question_mark", "q"} <= set(shown), (step, shown)
            if person == "lena":
                assert {"f2", "f3", "f4"} <= set(shown), (step, shown)
        assert shown[:2] == ["e", "space"]  # the keys keep their order, only fewer go


@pytest.mark.parametrize("size", [(80, 24), (120, 35)])
async def test_f2s_breakdown_by_kind_and_source_fits_the_width(
    database: Database, size: tuple[int, int]
) -> None:
    """It ran about 150 cells wide (a figure and its interval on one line, one-line
    headings) and scrolled sideways at both sizes: now its figures wrap at their spaces."""
    from helpers import agreement_shown, random_study
    from textual.widgets import TabbedContent

    store_person(database, "lena", Role.LEAD)
    random_study(database, 7, items=24, sources=("econ_ordering_5events", "cflue_mcq"))
    async with agreement_shown(database, "lena", resamples=50, size=size) as (screen, pilot):
        screen.query_one(TabbedContent).active = "breakdown-tab"
        await settle(pilot)
        await pilot.pause()
        table = screen.query_one("#breakdown", DataTable)
        assert table.size.width > 0 and table.virtual_size.width <= table.size.width
        assert len(table.columns) == 7 and table.row_count == 6  # 4 kinds, 2 sources
        cells = [str(cell) for cell in table.get_row_at(0)]
        assert cells[0] == "kind: multi" and "[" in cells[2]  # the interval kept


@asynccontextmanager
async def f3_with_long_cases(
    database: Database, size: tuple[int, int]
) -> AsyncIterator[tuple[AdjudicationScreen, Pilot[None]]]:
    """F3 in the app (its styles), notices shown, once its two long conflicts are listed."""
    store_person(database, "lena", Role.LEAD)
    for item_id in ("c:1", "c:2"):
        store_item(
            database,
            item_id,
            kind="single",
            key="A",
            prompt="A long question about money. " * 30,
            explanation="Why the key is right. " * 40,
        )
        store_judgment(database, item_id, "ann", "B", "wrong-key")
        store_judgment(database, item_id, "bo", "A")
    app = make_app(database, "lena")
    async with app.run_test(size=size, notifications=True) as pilot:
        await settle(pilot)
        await pilot.press("f3")
        screen = app.screen
        assert isinstance(screen, AdjudicationScreen)
        await wait_until(pilot, lambda: len(screen.cases) == 2, "the conflict queue")
        await wait_until(pilot, lambda: not screen.consensus_pending, "the consensus")
        await pilot.pause()
        yield screen, pilot


@pytest.mark.parametrize("size", [(80, 24), (120, 35)])
async def test_f3_scrolls_the_case_without_tab(database: Database, size: tuple[int, int]) -> None:
    """PgDn moved the queue's cursor (it has the focus), and only Tab into the case made it
    scroll: now PgDn and Space scroll the case, and ↑↓ still choose it."""
    from textual.containers import VerticalScroll

    async with f3_with_long_cases(database, size) as (screen, pilot):
        queue = screen.query_one("#queue", DataTable)
        case = screen.query_one("#case-scroll", VerticalScroll)
        await pilot.pause()
        assert screen.focused is queue and case.max_scroll_y > 0 and case.scroll_y == 0
        first = screen.current
        await pilot.press("pagedown")
        await pilot.pause()
        assert case.scroll_y > 0 and queue.cursor_row == 0 and screen.current is first
        scrolled = case.scroll_y
        await pilot.press("space")
        await pilot.pause()
        assert case.scroll_y > scrolled or case.scroll_y == case.max_scroll_y
        await pilot.press("pageup", "shift+space", "pageup")
        await pilot.pause()
        assert case.scroll_y == 0 and screen.focused is queue
        await pilot.press("down")  # the arrows still choose the case
        await pilot.pause()
        assert screen.current is not first
        rows = screen.help_rows()
        assert any("pagedown" in row.keys.lower() or "pgdn" in row.keys.lower() for row in rows)


async def test_f3s_notices_at_80_columns_cover_no_case(database: Database) -> None:
    """They were drawn over the header, the summary and the queue: a notice of four lines
    covered the first case.  Now they take rows of their own, and the queue moves down."""
    from textual.widgets._toast import Toast, ToastRack  # no public module (8.2.8)

    async with f3_with_long_cases(database, (80, 24)) as (screen, pilot):
        await pilot.press("a")  # approved: "c:1 approved · u undoes it"
        await wait_until(pilot, lambda: len(screen.cases) == 1, "the decision")
        await pilot.press("u")  # undone: a notice with a title, over three lines and more
        await wait_until(pilot, lambda: len(screen.cases) == 2, "the undo")
        await pilot.pause()
        toasts = list(screen.get_child_by_type(ToastRack).query(Toast))
        # the undo took back the notice of the decision it undid
        assert len(toasts) == 1 and sum(toast.region.height for toast in toasts) >= 3
        queue = screen.query_one("#queue", DataTable)
        summary = screen.query_one("#queue-summary")
        for toast in toasts:
            assert not toast.region.overlaps(queue.region), (toast.region, queue.region)
            assert not toast.region.overlaps(summary.region)
        assert "u undoes it" not in screen_text(screen.app) and "undid" in screen_text(screen.app)


async def test_f3_gives_back_the_rows_of_a_notice_taken_back(database: Database) -> None:
    """An undo takes back its decision's notice ("c:1 approved · u undoes it"): its toast
    went, but not the holder Textual wraps a toast in, and in F3 at 80 columns, where the
    notices take rows of their own, that empty holder kept a blank row under the header
    once every notice had gone.  Now the screen is row for row what it was before."""
    async with f3_with_long_cases(database, (80, 24)) as (screen, pilot):
        app = screen.app
        before = rendered_lines(app)
        await pilot.press("a")
        await wait_until(pilot, lambda: len(screen.cases) == 1, "the decision")
        await pilot.press("u")
        await wait_until(pilot, lambda: len(screen.cases) == 2, "the undo")
        await wait_until(pilot, lambda: not screen.consensus_pending, "the consensus")
        await wait_until(pilot, lambda: "▌ Undone" in "".join(rendered_lines(app)), "the notice")
        row = next(y for y, line in enumerate(rendered_lines(app)) if "▌ Undone" in line)
        await pilot.click(offset=(4, row))  # a click dismisses a notice (as its timeout does)
        await wait_until(pilot, lambda: not notices(app), "the notice dismissed")
        await pilot.pause()
        assert rendered_lines(app) == before

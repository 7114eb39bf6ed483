"""The layout at 80×24 and below 100 columns, the raw-form key, the plots, and real CFLUE
text read back from every panel that shows item or model text.

The line checks read the lines a widget really rendered (``render_lines``) and hand
them to ``tests/line_checks.py``, written apart from the code under test: no line of
Chinese text starts with closing punctuation, ends with opening punctuation, or
splits a number from its digits or its unit.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from helpers import (
    APPROVED_ITEMS,
    ScreenType,
    decide_items,
    settle,
    store_item,
    store_judgment,
    store_person,
    wait_until,
)
from line_checks import line_problems
from rich.cells import cell_len, chop_cells
from rich.style import Style
from rich.table import Table
from rich.text import Text
from sqlmodel import select
from textual.geometry import Region
from textual.pilot import Pilot
from textual.widget import Widget
from textual.widgets import Button, DataTable, Static
from textual.widgets._footer import FooterKey

from db.engine import Database, open_database
from db.importer import import_files
from db.items import ItemSnapshot, get_item
from db.models import Item
from db.vocabulary import ItemKind, Role
from evaluator.backends.scripted import ScriptedBackend
from evaluator.runner import create_run, execute_run
from reviewer.judging import ItemEdit, edit_item, submit_judgment
from reviewer.tui.app import make_app
from reviewer.tui.literal import literal_item
from reviewer.tui.screens.adjudication import AdjudicationScreen
from reviewer.tui.screens.evaluation import EvaluationScreen
from reviewer.tui.screens.review import ReviewScreen
from reviewer.tui.screens.revisions import RevisionsScreen
from reviewer.tui.widgets.accuracy_curve import curve_title, item_ticks, thinned
from reviewer.tui.widgets.bars import Bar, BarStyles, bar_rows, bar_track
from reviewer.tui.widgets.item_view import ChoiceRow, ItemView
from reviewer.tui.widgets.reveal import RevealPanel, compare_answers
from reviewer.tui.widgets.verdict_bar import VERDICT_KEYS

NARROW = (80, 24)
WIDE = (120, 35)

# --- reading what a widget rendered -------------------------------------------------------


def rendered_lines(widget: Widget) -> list[str]:
    """Every line the widget renders inside its padding, trailing spaces removed."""
    region = Region(0, 0, widget.size.width, widget.size.height)
    left = widget.styles.padding.left
    return [strip.crop(left).text.rstrip() for strip in widget.render_lines(region)]


def paragraph_lines(paragraph: str, lines: Iterator[str]) -> list[str]:
    """Take from ``lines`` the rendered lines of ``paragraph``, as slices of it (a break's
    spaces stay with the line before, as the wrapper cut them)."""
    starts: list[int] = []
    position = 0
    while paragraph[position:].strip() or not starts:
        line = next(lines, None)
        if line is None:  # the rest lies below the widget's visible rows (it scrolls there)
            ends = [*starts[1:], position] if starts else []
            return [paragraph[a:b] for a, b in zip(starts, ends, strict=True)]
        while position < len(paragraph) and paragraph[position] == " " and line[:1] != " ":
            position += 1
        assert paragraph.startswith(line, position), (paragraph[position:], line)
        starts.append(position)
        position += len(line)
        if not line:
            break
    return [paragraph[a:b] for a, b in zip(starts, [*starts[1:], len(paragraph)], strict=True)]


def wrapping_problems(static: Static) -> list[str]:
    """Every objection to how ``static`` wrapped its text (one Text, paragraphs by line)."""
    content = static.content
    assert isinstance(content, Text), type(content)
    width = static.content_region.width
    lines = iter(rendered_lines(static))
    problems = []
    for paragraph in content.plain.split("\n"):
        pieces = paragraph_lines(paragraph, lines)
        problems += [
            f"{problem}: {paragraph[:30]}" for problem in line_problems(paragraph, pieces, width)
        ]
    return problems


def wraps_cleanly(static: Static) -> bool:
    """Whether ``static`` wraps its text cleanly now (False also while it is laid out)."""
    try:
        return wrapping_problems(static) == []
    except AssertionError:  # a line of the text before: the new one is not rendered yet
        return False


def table_column_problems(static: Static, texts: list[str], indent: int) -> list[str]:
    """The same for a grid whose last column, ``indent`` cells in, holds ``texts`` (one per
    row: the key in words)."""
    assert isinstance(static.content, Table)
    shown = iter(
        "".join(chop_cells(line, indent)[1:]).rstrip() if cell_len(line) > indent else ""
        for line in rendered_lines(static)
    )
    width = static.content_region.width - indent
    problems = []
    for text in texts:
        problems += line_problems(text, paragraph_lines(text, shown), width)
    return problems


# --- real CFLUE items -----------------------------------------------------------------------


def record_text(record: dict[str, Any]) -> str:
    return record["question"] + record["choices"] + (record["analysis"] or "")


def chosen_records(path: Path) -> list[dict[str, Any]]:
    """Long multiple-choice questions with numbers and explanations, and some with LaTeX."""
    records = json.loads(path.read_text(encoding="utf-8"))
    long_ones = [
        record
        for record in records
        if record["task"] != "判断题"
        and len(record["question"]) >= 150
        and len(record["analysis"] or "") >= 80
        and any(character.isdigit() for character in record["question"])
    ]
    latex = [
        record
        for record in records
        if any(mark in record_text(record) for mark in ("\\begin{", "\\frac"))
        and record not in long_ones[:8]
    ]
    return long_ones[:8] + latex[:2]


@pytest.fixture
def real_db(cflue_knowledge: Path, tmp_path: Path, db_path: Path) -> Database:
    subset = tmp_path / "cflue-subset.json"
    subset.write_text(
        json.dumps(chosen_records(cflue_knowledge), ensure_ascii=False), encoding="utf-8"
    )
    db = open_database(db_path)
    report = import_files(db, [subset])
    assert report.files[0].error is None and len(item_ids(db)) == 10, report
    store_person(db, "alice")
    store_person(db, "lena", Role.LEAD)
    return db


def item_ids(db: Database) -> list[str]:
    with db.session() as session:
        return [item.id for item in session.exec(select(Item).order_by(Item.id))]


async def open_item(pilot: Pilot[None], item_id: str) -> ReviewScreen:
    screen = pilot.app.screen
    assert isinstance(screen, ReviewScreen)
    screen.request(lambda queue: queue.open_item(item_id))
    await settle(pilot)
    return screen


def explanation_of(db: Database, item_id: str) -> str:
    with db.session() as session:
        item = get_item(session, item_id)
        assert item is not None and item.explanation
        return item.explanation


@pytest.mark.slow
async def test_real_chinese_items_wrap_cleanly_in_the_item_view_and_the_reveal(
    real_db: Database,
) -> None:
    ids = item_ids(real_db)
    app = make_app(real_db, "alice")
    async with app.run_test(size=NARROW) as pilot:
        await settle(pilot)
        for item_id in ids:
            screen = await open_item(pilot, item_id)
            item = screen.item
            assert item is not None and item.id == item_id
            view = screen.query_one(ItemView)
            assert wrapping_problems(view.query_one("#item-prompt", Static)) == [], item_id
            for row in view.query(ChoiceRow):
                if row.display:
                    text = row.query_one(".choice-text", Static)
                    assert wrapping_problems(text) == [], (item_id, row.label)
            await pilot.press(item.labels[0].lower(), "enter")
            await settle(pilot)
            reveal = screen.query_one(RevealPanel)
            assert wrapping_problems(reveal.query_one("#reveal-explanation", Static)) == []
            # stacked, the item marks its key's choices: the key in words would repeat them
            assert not reveal.query_one("#reveal-key").display, item_id

        # a judged item shows its judgment: a long Chinese comment wraps the same way
        submit_judgment(
            real_db,
            "alice",
            ids[0],
            revision_number=1,
            blind_answer="A",
            verdict="flawed",
            comment=explanation_of(real_db, ids[1]),
        )
        screen = await open_item(pilot, ids[0])
        summary = screen.query_one(RevealPanel).query_one("#reveal-judgment", Static)
        assert "comment: " in str(summary.content)
        assert wrapping_problems(summary) == []

        # Side by side, the reveal has the key in words: a hanging indent, in a column
        # narrower than at 80 columns.  Every item comes back with its key (each has its
        # blind answer stored).
        await pilot.resize_terminal(*WIDE)
        for item_id in ids:
            screen = await open_item(pilot, item_id)
            item = screen.item
            assert item is not None and item.id == item_id
            key_texts = [literal_item(item.choices[letter]).plain for letter in item.key]
            key_table = screen.query_one(RevealPanel).query_one("#reveal-key", Static)
            assert key_table.display, item_id
            indent = len("• A ") if item.kind.is_mcq else len("1. A ")
            assert table_column_problems(key_table, key_texts, indent) == [], item_id


@pytest.mark.slow
async def test_real_chinese_text_wraps_cleanly_in_the_revision_diff(real_db: Database) -> None:
    ids = item_ids(real_db)[:4]
    for item_id in ids:  # a new revision whose explanation gains a sentence, numbers and all
        explanation = explanation_of(real_db, item_id)
        edit = ItemEdit(note="补充说明", explanation=explanation + "另：增值税税额为0.09万元。")
        edit_item(real_db, "lena", item_id, edit, base_revision=1)
    app = make_app(real_db, "alice")
    async with app.run_test(size=NARROW) as pilot:
        await settle(pilot)
        for item_id in ids:
            screen = RevisionsScreen(real_db, item_id)
            await app.push_screen(screen)
            await wait_until(pilot, lambda s=screen: len(s.revisions) == 2, "the revisions")
            await pilot.pause()
            diff = screen.query_one("#revision-diff", Static)
            assert "revision 2" in str(diff.content)
            assert wrapping_problems(diff) == [], item_id
            screen.dismiss(None)
            await pilot.pause()


async def filled_table(
    pilot: Pilot[None], key: str, screen_type: type[ScreenType], table: str, rows: int
) -> tuple[ScreenType, DataTable[Any]]:
    """Press ``key``, which must open a ``screen_type``; wait until its ``table`` holds ``rows``
    rows, and return both."""
    await pilot.press(key)
    screen = pilot.app.screen
    assert isinstance(screen, screen_type), screen
    data = screen.query_one(table, DataTable)
    await wait_until(pilot, lambda: data.row_count == rows, f"{rows} rows in {table}")
    return screen, data


def showing(screen: AdjudicationScreen, item_id: str) -> bool:
    return screen.current is not None and screen.current.item.id == item_id


@pytest.mark.slow
async def test_real_chinese_text_wraps_cleanly_in_adjudication(real_db: Database) -> None:
    ids = item_ids(real_db)
    for item_id in ids:  # two annotators who disagree: every item is a conflict
        store_judgment(real_db, item_id, "ann", "A", "keep")
        store_judgment(
            real_db, item_id, "bo", "B", "flawed", comment=explanation_of(real_db, item_id)
        )
    app = make_app(real_db, "lena")
    async with app.run_test(size=NARROW) as pilot:
        await settle(pilot)
        screen, queue = await filled_table(pilot, "f3", AdjudicationScreen, "#queue", len(ids))
        for item_id in ids:
            queue.move_cursor(row=queue.get_row_index(item_id))
            shown = functools.partial(showing, screen, item_id)
            await wait_until(pilot, shown, f"the case of {item_id}")
            await pilot.pause()
            for selector in ("#case-text", "#case-history"):
                assert wrapping_problems(screen.query_one(selector, Static)) == [], item_id
            await pilot.press("v")  # the stored text wraps as well
            await pilot.pause()
            assert wrapping_problems(screen.query_one("#case-text", Static)) == [], item_id
            await pilot.press("v")


@pytest.mark.slow
async def test_real_chinese_text_wraps_cleanly_in_the_evaluation_predictions(
    real_db: Database,
) -> None:
    ids = item_ids(real_db)
    decide_items(real_db, ids)
    # the model explains itself at length, in Chinese, before its answer
    outputs = {item_id: explanation_of(real_db, item_id) + "\n答案：A" for item_id in ids}
    backend = ScriptedBackend(outputs, model="chatty-model")
    run_id = create_run(real_db, backend.info, mode="generate", shots=0, item_filter=APPROVED_ITEMS)
    execute_run(real_db, run_id, backend)
    app = make_app(real_db, "alice")
    async with app.run_test(size=NARROW) as pilot:
        await settle(pilot)
        screen, predictions = await filled_table(
            pilot, "f4", EvaluationScreen, "#predictions", len(ids)
        )
        for item_id in ids:
            predictions.move_cursor(row=predictions.get_row_index(item_id))
            await pilot.pause()
            detail = screen.query_one("#prediction-detail", Static)
            assert item_id in str(detail.content)
            # On a loaded machine the new text can be read before the panel is laid out
            # for it (its last lines not rendered yet): wait for that, then judge.
            await wait_until(pilot, functools.partial(wraps_cleanly, detail), item_id)
            assert wrapping_problems(detail) == [], item_id


# --- 80×24: the keys, the footer, stacking --------------------------------------------------


@pytest.fixture
def small_db(db_path: Path) -> Database:
    db = open_database(db_path)
    store_person(db, "alice")
    store_item(db, "econ:1")
    store_item(
        db,
        "cflue:1",
        kind="single",
        prompt="某企业2019年6月1日购入设备，价款为100万元，增值税税额为13万元&amp;nbsp;（&lt;含运费&gt;）。",
        choices={"A": "100", "B": "113", "C": "\\frac{1}{2}"},
        key="A",
        explanation="入账价值为$\\frac{100}{1}$万元。",
        language="zh",
    )
    return db


def visible_keys(pilot: Pilot[None]) -> list[FooterKey]:
    return [key for key in pilot.app.screen.query(FooterKey) if key.display and key.region]


@pytest.mark.parametrize("width", [60, 80, 99, 100, 120, 160])
async def test_after_the_reveal_all_seven_verdicts_and_help_and_quit_are_on_screen(
    small_db: Database, width: int
) -> None:
    app = make_app(small_db, "alice", kind="ordering")
    async with app.run_test(size=(width, 24)) as pilot:
        await settle(pilot)
        await pilot.press("d", "a", "b", "c", "enter")
        await settle(pilot)
        screen = app.screen
        for verdict, (key, label) in VERDICT_KEYS.items():
            button = screen.query_one(f"#verdict-{verdict.value}", Button)
            region = button.region
            assert region.right <= width and region.bottom <= 24, (label, region)
            assert str(button.label) == f"{key} {label}"  # the whole label, not cut
            assert cell_len(str(button.label)) <= region.width
            widget, _ = screen.get_widget_at(region.x + region.width // 2, region.y)
            assert widget is button, (label, widget)  # nothing covers it: a click reaches it
        keys = visible_keys(pilot)
        shown = [key.key for key in keys]
        assert "question_mark" in shown and "q" in shown
        assert all(key.region.right <= width for key in keys)
        # only whole keys: every visible key is shown in full, none overlaps another
        starts = sorted((key.region.x, key.region.right) for key in keys)
        assert all(
            a_right <= b_x for (_, a_right), (b_x, _) in zip(starts, starts[1:], strict=False)
        )
        # a click on a verdict button gives that verdict
        await pilot.click("#verdict-keep")
        await settle(pilot)
    with small_db.session() as session:
        from db.models import Judgment

        (judgment,) = session.exec(select(Judgment)).all()
        assert judgment.verdict == "keep"


async def test_below_100_columns_the_panels_stack_and_the_blind_answer_is_one_line(
    small_db: Database,
) -> None:
    app = make_app(small_db, "alice", kind="ordering")
    async with app.run_test(size=(99, 24)) as pilot:
        await settle(pilot)
        screen = app.screen
        item, side = screen.query_one("#item-view").region, screen.query_one("#side").region
        assert side.y >= item.bottom and side.width == item.width  # below it, as wide
        answer = screen.query_one("#answer-panel")
        assert answer.region.height <= 3
        # every event of the item fits above the answer
        rows = [row for row in screen.query(ChoiceRow) if row.display]
        assert len(rows) == 4 and all(row.region.bottom <= item.bottom for row in rows)
        await pilot.resize_terminal(100, 24)
        await pilot.pause()
        item, side = screen.query_one("#item-view").region, screen.query_one("#side").region
        assert side.x >= item.right and side.y == item.y  # beside it


async def test_the_raw_key_shows_the_stored_text_and_back(small_db: Database) -> None:
    app = make_app(small_db, "alice", kind="single")
    async with app.run_test(size=NARROW) as pilot:
        await settle(pilot)
        screen = app.screen
        prompt = screen.query_one("#item-prompt", Static)
        choice = screen.query_one("#choice-C .choice-text", Static)
        assert "（<含运费>）" in str(prompt.content) and "&amp;" not in str(prompt.content)
        assert str(choice.content) == "1/2"
        await pilot.press("a", "v")
        assert "&amp;nbsp;（&lt;含运费&gt;）" in str(prompt.content)
        assert str(choice.content) == "\\frac{1}{2}"
        assert screen.query_one(ItemView).border_title
        assert screen.query_one("#choice-A", ChoiceRow).has_class("-chosen")
        await pilot.press("enter")  # the reveal comes raw too, while the key is on
        await settle(pilot)
        explanation = screen.query_one("#reveal-explanation", Static)
        assert str(explanation.content) == "入账价值为$\\frac{100}{1}$万元。"
        await pilot.press("v")
        assert str(explanation.content) == "入账价值为100/1万元。"
        assert "&" not in str(prompt.content) and not screen.query_one(ItemView).border_title


async def test_the_raw_key_is_in_the_footer_and_the_help(small_db: Database) -> None:
    app = make_app(small_db, "alice", kind="single")
    async with app.run_test(size=(120, 35)) as pilot:
        await settle(pilot)
        assert "v" in [key.key for key in visible_keys(pilot)]
        rows = {row.keys: row.description for row in app.help_rows()}
        assert "as stored" in rows["v"]


# --- the plots ------------------------------------------------------------------------------

PLAIN = BarStyles(Style(), Style(color="green"), Style(color="yellow"), Style())


def test_the_reveal_names_missing_and_extra_choices_only_for_sets() -> None:
    """A multi-answer comparison names the letters each side lacks; a single answer or a
    true/false one is a letter against a letter, which the two rows above already show
    (two rows more, repeated, where 80×24 has fewest)."""
    choices = {"A": "a", "B": "b", "C": "c", "D": "d"}
    item = ItemSnapshot(
        "m:1", ItemKind.MULTI, "m", "", "en", "pending", 1, "Q", choices, "ABD", None
    )
    multi = compare_answers(item, "AC").plain
    assert "in the key, not in your answer: B D" in multi
    assert "in your answer, not in the key: C" in multi
    single = compare_answers(replace(item, kind=ItemKind.SINGLE, key="C"), "A").plain
    assert single.splitlines() == [
        "Your answer  A",
        "Key          C",
        "",
        "✗ Your answer differs from the key.",
    ]


def test_a_bar_runs_to_its_value_and_its_whisker_across_its_interval() -> None:
    track = bar_track(Bar("all", 0.5, "50%", (0.3, 0.7)), 1.0, 10, PLAIN).plain
    assert track == "███├───┤  "
    # the part of the whisker inside the bar is drawn on the bar's colour
    text = bar_track(Bar("all", 0.5, "50%", (0.3, 0.7)), 1.0, 10, PLAIN)
    inside = [span for span in text.spans if span.start == 4]
    assert inside and Style.parse(str(inside[0].style)).bgcolor is not None
    assert bar_track(Bar("x", 1.0, "", None), 1.0, 8, PLAIN).plain == "█" * 8
    assert bar_track(Bar("x", None, "—"), 1.0, 8, PLAIN).plain == " " * 8
    assert bar_track(Bar("x", 20.0, "20 s"), 40.0, 8, PLAIN).plain == "████    "


def test_rows_fit_the_width_and_show_labels_literally() -> None:
    bars = [
        Bar("[bold]ann[/bold]", 0.9, "90% of 20"),
        Bar("a-very-long-annotator-name-indeed", 0.1, "10% of 2"),
    ]
    lines = bar_rows(bars, 60, 1.0, PLAIN).plain.split("\n")
    assert all(cell_len(line) <= 60 for line in lines)
    assert lines[0].startswith("[bold]ann[/bold]") and lines[0].endswith("90% of 20")
    assert "…" in lines[1]


def test_a_long_run_is_thinned_for_the_curve_keeping_its_last_point() -> None:
    values = [index / 1000 for index in range(1000)]
    xs, ys = thinned(values, 100)
    assert len(xs) <= 101 and xs[0] == 1 and xs[-1] == 1000 and ys[-1] == values[-1]
    assert thinned([0.5, 1.0], 100) == ([1, 2], [0.5, 1.0])
    assert item_ticks(8) == [1, 3, 5, 6, 8] and item_ticks(3) == [1, 2, 3]


def test_the_curve_says_its_accuracy_after_how_many_items() -> None:
    assert curve_title([]) == "Accuracy as the run goes: no answers yet"
    assert curve_title([1.0]) == "Accuracy as the run goes: 100.0% after 1 item"
    assert curve_title([0.0, 0.5, 2 / 3]) == "Accuracy as the run goes: 66.7% after 3 items"

"""Small frictions of the review screen, driven with Pilot on a real database: an undo
that brings its judgment's details back, notices and the status line at 80 columns, and
long choices in the editor."""

from __future__ import annotations

import pytest
from helpers import (
    EXPLANATION,
    pilot_of,
    press,
    running,
    settle,
    store_item,
    stored_judgments,
    wait_until,
)
from rich.text import Text
from textual.geometry import Region
from textual.widgets import Input

from db.engine import Database
from reviewer.queue import QueueProgress
from reviewer.tui.app import ReviewApp, make_app
from reviewer.tui.screens.edit import ChoiceEditor, EditScreen
from reviewer.tui.screens.prompt import PromptScreen
from reviewer.tui.screens.review import Phase
from reviewer.tui.screens.verdict import AlternativesScreen
from reviewer.tui.widgets.progress import ProgressLine


@pytest.fixture
def one_item(database: Database) -> Database:
    store_item(database, "econ:1", key="DABC", explanation=EXPLANATION)
    return database


async def test_an_undone_flawed_verdict_offers_its_comment_again(one_item: Database) -> None:
    async with running(make_app(one_item, "alice")) as app:
        await press(app, "a", "b", "c", "d", "enter", "f")
        assert isinstance(app.screen, EditScreen)
        await press(app, *"选项D描述有误", "ctrl+s")
        assert app.review_screen.phase is Phase.EMPTY
        await press(app, "u", "f")
        assert isinstance(app.screen, EditScreen)
        assert app.screen.query_one("#edit-comment", Input).value == "选项D描述有误"
        await press(app, "ctrl+s")  # the comment alone records the verdict again
    rows = stored_judgments(one_item)
    assert [(j.verdict, j.comment, j.retracted) for j in rows] == [
        ("flawed", "选项D描述有误", True),
        ("flawed", "选项D描述有误", False),
    ]


async def test_an_undone_comment_is_offered_not_taken_as_what_is_sensitive(
    one_item: Database,
) -> None:
    """The comment an undo puts back was written for another verdict: x asks what is
    sensitive, offering it, instead of storing it as the reason unasked."""
    async with running(make_app(one_item, "alice")) as app:
        await press(app, "a", "b", "c", "d", "enter", "f")
        await press(app, *"选项D描述有误", "ctrl+s")
        await press(app, "u", "x")
        assert isinstance(app.screen, PromptScreen)
        assert app.screen.query_one(Input).value == "选项D描述有误"
        await press(app, *["backspace"] * 7, *"含不当内容", "enter")
    rows = stored_judgments(one_item)
    assert [(j.verdict, j.comment, j.retracted) for j in rows] == [
        ("flawed", "选项D描述有误", True),
        ("sensitive", "含不当内容", False),
    ]


async def test_an_undone_wrong_key_offers_its_corrected_key_again(one_item: Database) -> None:
    async with running(make_app(one_item, "alice")) as app:
        await press(app, "a", "b", "c", "d", "enter", "w")
        assert isinstance(app.screen, PromptScreen)
        await press(app, *["backspace"] * 10, *"DACB", "enter")  # not the blind answer
        await press(app, "u", "w")
        assert isinstance(app.screen, PromptScreen)
        assert app.screen.query_one(Input).value == "D, A, C, B"
        await press(app, "enter")
    rows = stored_judgments(one_item)
    assert [(j.corrected_key, j.retracted) for j in rows] == [("DACB", True), ("DACB", False)]


async def test_an_undone_ambiguous_verdict_offers_its_orders_again(one_item: Database) -> None:
    async with running(make_app(one_item, "alice")) as app:
        await press(app, "a", "d", "b", "c", "enter", "m", "enter")  # its own answer ...
        await press(app, *"DACB", "enter", "ctrl+s")  # ... and one more
        await press(app, "u", "m")
        assert isinstance(app.screen, AlternativesScreen)
        assert "A, D, B, C  |  D, A, C, B" in str(
            app.screen.query_one("#alternative-list").render()
        )
        await press(app, "ctrl+s")
    rows = stored_judgments(one_item)
    assert [(j.alternative_orders, j.retracted) for j in rows] == [
        (["ADBC", "DACB"], True),
        (["ADBC", "DACB"], False),
    ]


def status_rows(app: ReviewApp) -> list[str]:
    """The status line's rows as shown (notices, the note and the figures)."""
    line = app.review_screen.query_one("#review-progress", ProgressLine)
    strips = line.render_lines(Region(0, 0, line.size.width, line.size.height))
    return [strip.text.strip() for strip in strips]


async def test_at_80_columns_an_undos_note_ends_with_what_to_do(database: Database) -> None:
    store_item(database, "knowledge:1604", key="DABC")
    async with running(make_app(database, "alice"), size=(80, 24)) as app:
        pilot = pilot_of(app)
        await press(app, "a", "b", "c", "d", "enter", "f", *"D is wrong", "ctrl+s", "u")
        await wait_until(pilot, lambda: app.review_screen.phase is Phase.REVEALED, "the undo")
        rows = status_rows(app)
        assert rows[0].startswith("↶ undid your flawed on knowledge:1604: give your verdict again")
        assert not any("…" in row for row in rows), rows


async def test_at_80_columns_a_saved_revisions_note_is_whole_and_ends_with_the_next_item(
    database: Database,
) -> None:
    for n in range(4):
        store_item(database, f"knowledge:160{n}", key="DABC")
    async with running(make_app(database, "alice"), size=(80, 24)) as app:
        pilot = pilot_of(app)
        await press(app, "a", "b", "c", "d", "enter", "k", "p", "e")
        edit = app.screen
        assert isinstance(edit, EditScreen)
        edit.query_one("#edit-key", Input).value = "D, A, C, B"
        edit.query_one("#edit-note", Input).value = "C before B"
        await press(app, "ctrl+s", "y")
        edited = edit.item.id
        await wait_until(pilot, lambda: "saved revision" in " ".join(status_rows(app)), "saved")
        said = f"✓ saved revision 2 of {edited}; others judge it (you know its key)"
        assert status_rows(app)[0].startswith(said), status_rows(app)
        await press(app, "s")  # the next item: the note was about an earlier one
        await wait_until(pilot, lambda: " left · " in status_rows(app)[0], "the figures alone")
        assert not any("saved revision" in row for row in status_rows(app))


@pytest.mark.parametrize(
    "annotator",
    ["alice", "alexandra-konstantinova-papadopoulou"],
)
async def test_at_80_columns_the_status_line_says_done_is_this_sessions(
    database: Database, annotator: str
) -> None:
    """After a restart "0 done" read as nothing done at all: it counts this session
    ("done now"); "left" for "waiting" pays for "now" in the width."""
    store_item(database, "econ:1")
    big = QueueProgress(
        session_done=12_345,
        session_assigned=20_000,
        overall_done=99_999,
        items_left=123_456,
        median_seconds=999.0,
        items_complete=1_234_567,
        items_total=2_345_678,
    )
    async with running(make_app(database, "alice"), size=(80, 24)) as app:
        line = app.review_screen.query_one("#review-progress", ProgressLine)
        await wait_until(pilot_of(app), lambda: " left · " in str(line.render()), "the count")
        line.show(annotator, big, "all items")
        await settle(pilot_of(app))
        rows = status_rows(app)
        assert any("12,345 done now" in row for row in rows), rows
        assert len(rows) <= 2 and all(Text(row).cell_len <= 78 for row in rows), rows
        assert "999 s/item" in rows[-1] and "…" not in " ".join(rows)


LONG_D = "在自动化生产线上，机器人按照预先设定的程序依次完成焊接、喷涂、装配和检测，工件沿流水线"


async def test_at_80x24_a_choice_longer_than_its_field_says_which_side_is_hidden(
    database: Database,
) -> None:
    choices = {"A": "焊接", "B": "喷涂", "C": "装配", "D": LONG_D}
    store_item(database, "knowledge:1604", kind="single", key="D", choices=choices)
    async with running(make_app(database, "alice"), size=(80, 24)) as app:
        await press(app, "a", "enter", "f")
        edit = app.screen
        assert isinstance(edit, EditScreen)
        a, *_middle, d = edit.query(ChoiceEditor)
        assert a.border_subtitle == ""  # short: nothing hidden, nothing said
        assert d.border_subtitle == "more (End) ▸"  # unvisited: its start shows
        d.focus()  # the cursor at the end, in sight: the start is out of sight
        await settle(pilot_of(app))
        assert d.border_subtitle == "◂ more (Home)"
        await press(app, "home")
        assert d.border_subtitle == "more (End) ▸"
        await press(app, *["right"] * 20)  # the cursor in the middle, the view still at the start
        assert d.border_subtitle == "more (End) ▸"
        await press(app, "end", "left", "left", *["backspace"] * 30)  # short enough now
        assert d.border_subtitle == "", d.value


async def test_undo_on_an_older_judged_item_undoes_that_items_judgment(
    database: Database,
) -> None:
    """Opened from the judged list (l), an older item's u undid the newest judgment,
    another item's, and showed that item instead of the one the screen showed."""
    from reviewer.tui.screens.judged import JudgedScreen

    store_item(database, "econ:1", key="DABC")
    store_item(database, "econ:2", key="DABC")
    async with running(make_app(database, "alice"), size=(80, 24)) as app:
        pilot = pilot_of(app)
        await press(app, *"abcd", "enter", "k", *"abcd", "enter", "k", "l")
        judged = app.screen
        assert isinstance(judged, JudgedScreen)
        await wait_until(pilot, lambda: judged.query_one("DataTable").row_count == 2, "list")
        first = stored_judgments(database)[0].item_id
        await press(app, "down", "enter")  # newest first: the second row is the older one
        assert app.review_screen.item is not None and app.review_screen.item.id == first
        assert app.review_screen.phase is Phase.JUDGED
        await press(app, "u")
        await wait_until(pilot, lambda: app.review_screen.phase is Phase.REVEALED, "the undo")
        assert app.review_screen.item is not None and app.review_screen.item.id == first
        assert status_rows(app)[0].startswith(f"↶ undid your keep on {first}")
    assert [(j.item_id, j.retracted) for j in stored_judgments(database)] == [
        (first, True),
        ("econ:2" if first == "econ:1" else "econ:1", False),
    ]


def test_undoing_a_judgment_no_longer_in_force_is_refused_and_undoes_nothing(
    database: Database,
) -> None:
    from reviewer.judging import JudgmentRefused, retract_judgment, submit_judgment

    store_item(database, "econ:1", key="DABC")
    store_item(database, "econ:2", key="DABC")
    for item_id in ("econ:1", "econ:2"):
        submit_judgment(
            database, "alice", item_id, revision_number=None, blind_answer="DABC", verdict="keep"
        )
    first, second = (judgment.id for judgment in stored_judgments(database))
    assert first is not None and second is not None
    assert retract_judgment(database, "alice", first).item_id == "econ:1"
    with pytest.raises(JudgmentRefused, match=f"judgment {first} is not one of alice's"):
        retract_judgment(database, "alice", first)
    with pytest.raises(JudgmentRefused, match="not one of bob's"):
        retract_judgment(database, "bob", second)  # not bob's to undo
    assert [j.retracted for j in stored_judgments(database)] == [True, False]

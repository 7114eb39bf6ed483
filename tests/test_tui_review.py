"""The review TUI driven with Pilot on a real database: assertions on what was stored."""

from __future__ import annotations

import re

import pytest
import sqlalchemy as sa
from helpers import (
    EXPLANATION,
    judge_flawed_then_edit,
    notices,
    open_screen,
    pilot_of,
    press,
    rendered_lines,
    running,
    screen_text,
    settle,
    store_item,
    stored_judgments,
    wait_until,
)
from rich.color import Color
from sqlalchemy import text
from sqlmodel import col, select
from textual.content import Content
from textual.style import Style
from textual.widgets import Button, DataTable, Input, Static, TextArea
from textual.widgets._footer import FooterKey

from db.engine import ConnectionSettings, Database, open_database
from db.models import Claim, ItemRevision
from db.people import ensure_person
from db.reveals import stored_reveal
from db.vocabulary import Role
from reviewer.tui.app import ReviewApp, make_app
from reviewer.tui.screens.edit import EditScreen
from reviewer.tui.screens.help import HelpScreen
from reviewer.tui.screens.judged import JudgedScreen
from reviewer.tui.screens.lead_modals import ConfirmModal
from reviewer.tui.screens.prompt import PromptScreen
from reviewer.tui.screens.review import Phase
from reviewer.tui.screens.verdict import AlternativesScreen
from reviewer.tui.widgets.item_view import ChoiceRow, ItemView
from reviewer.tui.widgets.progress import ProgressLine
from reviewer.tui.widgets.titles import PanelTitle

MARKUP_PROMPT = (
    "Order [bold]these[/] [link=https://example.com]events[/link] [@click=app.quit]now[/] "
    "\x1b[31mred\x1b[0m \x1b]0;new title\x07 done"
)


@pytest.fixture
def one_item(database: Database) -> Database:
    store_item(database, "econ:1", key="DABC", explanation=EXPLANATION)
    return database


async def test_blind_then_reveal_then_keep(one_item: Database) -> None:
    database = one_item
    async with running(make_app(database, "alice")) as app:
        screen = app.review_screen
        assert screen.phase is Phase.BLIND and screen.item is not None
        text = screen_text(app)
        assert "The central bank raises interest rates." in text
        assert "Inflation comes first" not in text and "Key in words" not in text
        await press(app, "d", "a")
        assert "D, A, ·, ·" in screen_text(app)
        await press(app, "backspace", "1", "2")  # digits count events from 1
        assert "D, A, B, ·" in screen_text(app)
        assert stored_judgments(database) == []  # nothing is stored before the verdict
        await press(app, "enter")  # one event left: Enter places it
        assert screen.phase is Phase.REVEALED
        text = screen_text(app)
        assert "Inflation comes first" in text and "Your order is the key" in text
        await press(app, "k")
        [judgment] = stored_judgments(database)
        assert (judgment.item_id, judgment.blind_answer, judgment.verdict) == (
            "econ:1",
            "DABC",
            "keep",
        )
        assert judgment.revision_number == 1 and judgment.seconds >= 0
        assert screen.phase is Phase.EMPTY
        assert "Nothing left to review" in screen_text(app)


async def test_an_empty_database_says_how_to_import(database: Database) -> None:
    async with running(make_app(database, "alice")) as app:
        assert app.review_screen.phase is Phase.EMPTY
        text = screen_text(app)
        assert "This database has no items yet" in text and "vetbench --db" in text
        assert "Nothing left to review" not in text
        store_item(database, "econ:1")  # someone imports meanwhile; n looks again
        await press(app, "n")
        assert app.review_screen.phase is Phase.BLIND


async def test_reveal_marks_differences(one_item: Database) -> None:
    async with running(make_app(one_item, "alice")) as app:
        await press(app, "a", "b", "c", "d", "enter")
        text = screen_text(app)
        assert "positions differ" in text
        assert "key: D before A" in text and "you: A before D" in text


@pytest.mark.parametrize("verdict_key, verdict", [("o", "no-order"), ("x", "sensitive")])
async def test_simple_verdicts_with_a_comment(
    one_item: Database, verdict_key: str, verdict: str
) -> None:
    async with running(make_app(one_item, "alice")) as app:
        await press(app, "a", "b", "c", "d", "enter", "c")
        assert isinstance(app.focused, Input)
        await press(app, *"two orders [b]fit", "enter")
        await press(app, verdict_key)
    [judgment] = stored_judgments(one_item)
    assert (judgment.verdict, judgment.blind_answer, judgment.comment) == (
        verdict,
        "ABCD",
        "two orders [b]fit",
    )


async def test_ambiguous_records_every_alternative(one_item: Database) -> None:
    async with running(make_app(one_item, "alice")) as app:
        await press(app, "a", "d", "b", "c", "enter", "m")
        assert isinstance(app.screen, AlternativesScreen)
        # The own blind answer is offered first; Enter adds it.
        assert app.screen.query_one(Input).value == "A, D, B, C"
        await press(app, "enter")
        await press(app, *"D,A,B,C", "enter")  # the key itself is refused ...
        assert "the key itself" in screen_text(app)
        await press(app, *["backspace"] * 7, *"DACB", "enter")
        await press(app, "ctrl+s")
    [judgment] = stored_judgments(one_item)
    assert judgment.verdict == "ambiguous" and judgment.alternative_orders == ["ADBC", "DACB"]


async def test_wrong_key_records_the_corrected_key(one_item: Database) -> None:
    async with running(make_app(one_item, "alice")) as app:
        await press(app, "d", "a", "c", "b", "enter", "w")
        assert isinstance(app.screen, PromptScreen)
        await press(app, "enter")  # offered: the own answer D, A, C, B
    [judgment] = stored_judgments(one_item)
    assert (judgment.verdict, judgment.corrected_key) == ("wrong-key", "DACB")


async def test_duplicate_asks_for_an_existing_item(one_item: Database) -> None:
    store_item(one_item, "econ:2")
    async with running(make_app(one_item, "alice")) as app:
        first = app.review_screen.item
        assert first is not None
        other = "econ:2" if first.id == "econ:1" else "econ:1"
        await press(app, "d", "a", "b", "c", "enter", "d", *"nope", "enter")
        assert "there is no item 'nope'" in screen_text(app)
        await press(app, *["backspace"] * 4, *other, "enter")
    [judgment] = stored_judgments(one_item)
    assert (judgment.verdict, judgment.duplicate_of) == ("duplicate", other)


async def test_flawed_opens_edit_and_saves_a_new_revision(one_item: Database) -> None:
    async with running(make_app(one_item, "alice")) as app:
        await press(app, "d", "a", "b", "c", "enter", "f")
        assert isinstance(app.screen, EditScreen)
        assert app.focused is app.screen.query_one("#edit-comment", Input)
        await press(app, "tab")  # the blind answer was the key: the scenario is next
        assert isinstance(app.focused, TextArea)
        await press(app, *" (revised)")  # the cursor starts at the end of the text
        await press(app, "ctrl+r")  # show changes
        assert "+  Order the events of a rate rise cycle. (revised)" in screen_text(app)
        await press(app, "escape", "ctrl+s")
        await press(app, "y")  # words added at the end: kept in the scenario, as meant
        assert "note: say briefly what you changed and why" in screen_text(app)
        assert stored_judgments(one_item) == []  # nothing until the form is saved
        app.screen.query_one("#edit-note", Input).focus()
        await press(app, *"fixed text", "ctrl+s", "y")  # the diff, stored
        assert not isinstance(app.screen, EditScreen)
        # The editor knows the new key, so the new revision is not served to them.
        assert app.review_screen.phase is Phase.EMPTY
    [judgment] = stored_judgments(one_item)
    assert (judgment.verdict, judgment.revision_number) == ("flawed", 1)
    with one_item.session() as session:
        revisions = session.exec(select(ItemRevision).order_by(col(ItemRevision.number))).all()
    assert [(r.number, r.prompt, r.author) for r in revisions] == [
        (1, "Order the events of a rate rise cycle.", "test"),
        (2, "Order the events of a rate rise cycle. (revised)", "alice"),
    ]
    assert revisions[1].change_note == "fixed text"


async def test_edit_refuses_a_bad_key_and_can_be_cancelled(one_item: Database) -> None:
    async with running(make_app(one_item, "alice")) as app:
        await press(app, "d", "a", "b", "c", "enter", "f")
        app.screen.query_one("#edit-key", Input).value = "D, A, X, C"
        await press(app, "ctrl+s")
        assert isinstance(app.screen, EditScreen)
        assert "'X' is not one of the events" in screen_text(app)
        await press(app, "escape")  # unsaved changes: asks first
        assert isinstance(app.screen, ConfirmModal)
        await press(app, "y")
        assert not isinstance(app.screen, EditScreen)
        assert app.review_screen.phase is Phase.REVEALED  # still to judge
    with one_item.session() as session:
        assert len(session.exec(select(ItemRevision)).all()) == 1
    assert stored_judgments(one_item) == []  # cancelling the flawed form records nothing


async def test_c_again_adds_to_the_comment(one_item: Database) -> None:
    async with running(make_app(one_item, "alice")) as app:
        await press(app, "d", "a", "b", "c", "enter", "c", *"first words", "escape")
        await press(app, "c")  # back in: the cursor at the end, nothing selected
        comment = app.review_screen.query_one("#comment", Input)
        assert comment.selection.is_empty and comment.cursor_position == len("first words")
        await press(app, *" more", "enter", "k")
    [judgment] = stored_judgments(one_item)
    assert judgment.comment == "first words more"


def footer_keys(app: ReviewApp) -> list[str]:
    return [key.key for key in app.review_screen.query(FooterKey) if key.display]


async def test_the_footer_shows_only_keys_that_work_while_typing_a_comment(
    one_item: Database,
) -> None:
    async with running(make_app(one_item, "alice")) as app:
        await press(app, "d", "a", "b", "c", "enter")
        assert {"c", "slash", "q"} <= set(footer_keys(app)) and "escape" not in footer_keys(app)
        await press(app, "c")
        assert footer_keys(app) == ["escape", "ctrl+p"]  # / and q type into the comment
        await press(app, *"a/q")
        assert app.review_screen.query_one("#comment", Input).value == "a/q"
        assert app.screen is app.review_screen  # / opened no filter
        await press(app, "escape")
        assert "slash" in footer_keys(app) and "escape" not in footer_keys(app)


async def test_quitting_asks_first_while_a_typed_comment_is_unsaved(one_item: Database) -> None:
    async with running(make_app(one_item, "alice")) as app:
        await press(app, "d", "a", "b", "c", "enter", "c", *"abc", "escape", "q")
        assert isinstance(app.screen, ConfirmModal)
        # y and n answer it, and its buttons say so (they read only "Yes" and "No")
        buttons = [str(button.label) for button in app.screen.query(Button)]
        assert buttons == ["Yes (y)", "No (n, Esc)"]
        assert question_asked(app) == (
            "You saw the key of econ:1 and gave no verdict. Its blind answer is stored in the "
            "database: it comes back to you revealed, with that answer, until you give one, "
            "in the app's next session too. Quitting loses your comment: a comment is stored "
            "only with its verdict. Quit anyway?"
        )
        await press(app, "n")  # stays, the comment kept
        assert app.is_running and app.screen is app.review_screen
        assert app.review_screen.query_one("#comment", Input).value == "abc"
        await press(app, "c", "ctrl+q")  # Ctrl+Q asks too, even from inside the comment
        assert isinstance(app.screen, ConfirmModal)
        await pilot_of(app).press("y")
        await pilot_of(app).pause()
        assert not app.is_running
    assert stored_judgments(one_item) == []


@pytest.mark.parametrize("key", ["q", "ctrl+q"])
async def test_quitting_with_nothing_unsaved_asks_nothing(one_item: Database, key: str) -> None:
    async with running(make_app(one_item, "alice")) as app:
        await press(app, "d", "a", "b")  # a blind answer begun: its key is not shown
        await pilot_of(app).press(key)
        await pilot_of(app).pause()
        assert not app.is_running


async def test_an_item_left_after_its_key_was_shown_comes_back_revealed(
    one_item: Database,
) -> None:
    """Leaving the reveal before a verdict (n, s, p ...) dropped the blind answer and the
    comment, and the item came back blind to someone who had seen its key: a second
    "blind" answer, equal to the key, was then stored as the blind one."""
    store_item(one_item, "econ:2", key="ABCD")
    async with running(make_app(one_item, "alice")) as app:
        screen = app.review_screen
        assert screen.item is not None
        first = screen.item.id
        await press(app, "a", "b", "c", "d", "enter", "c", *"unsure", "escape", "s")
        assert screen.item.id != first and screen.phase is Phase.BLIND
        await press(app, "p")  # back: revealed, the blind answer and the comment as left
        assert screen.item.id == first and screen.phase is Phase.REVEALED
        assert "Your order A, B, C, D" in " ".join(screen_text(app).split())
        assert screen.query_one("#comment", Input).value == "unsure"
        await press(app, "n", "q")  # quitting while it waits asks, naming it
        assert question_asked(app).startswith(f"You saw the key of {first} and gave no verdict.")
        await press(app, "n")  # stay
        await press(app, "s")  # the other one skipped: the first comes round again, revealed
        assert screen.item.id == first and screen.phase is Phase.REVEALED
        await press(app, "k")
    [judgment] = stored_judgments(one_item)
    assert (judgment.item_id, judgment.blind_answer, judgment.verdict, judgment.comment) == (
        first,
        "ABCD",
        "keep",
        "unsure",
    )


async def test_an_item_whose_key_was_shown_comes_back_revealed_after_quitting(
    one_item: Database,
) -> None:
    """Kept in memory only, a revealed item left without a verdict came back blind in the
    next session to someone who had seen its key, and their second "blind" answer (the
    key, D, A, B, C) was stored as the blind one.  The blind answer is stored as the key
    is shown; the next session brings the item back revealed with it, first."""
    for item_id in ("econ:2", "econ:3"):
        store_item(one_item, item_id, key="ABCD")
    async with running(make_app(one_item, "alice")) as app:
        screen = app.review_screen
        assert screen.item is not None
        first = screen.item.id
        await press(app, "a", "b", "c", "d", "enter")
        # Stored at the reveal, not at quitting: a kill from here on loses nothing.
        with one_item.session() as session:
            seen = stored_reveal(session, "alice", first, 1)
        assert seen is not None and seen.blind_answer == "ABCD"
        await press(app, "n", "q")
        assert "Its blind answer is stored in the database" in question_asked(app)
        await pilot_of(app).press("y")
    async with running(make_app(one_item, "alice")) as app:
        screen = app.review_screen
        assert screen.item is not None and screen.item.id == first  # it comes first
        assert screen.phase is Phase.REVEALED
        assert "Your order A, B, C, D" in " ".join(screen_text(app).split())
        await press(app, "o")
    [judgment] = stored_judgments(one_item)
    assert (judgment.item_id, judgment.blind_answer, judgment.verdict) == (
        first,
        "ABCD",
        "no-order",
    )
    assert judgment.seconds >= seen.seconds


async def test_the_key_is_not_shown_when_the_blind_answer_cannot_be_stored(
    one_item: Database,
) -> None:
    """The reveal is recorded before the key is drawn: while another writer holds the
    lock the record needs, the key stays hidden and the notice says why; Enter again,
    once the lock is gone, shows it."""
    url = one_item.engine.url.render_as_string(hide_password=False)
    impatient = open_database(url, settings=ConnectionSettings(lock_timeout_s=0.5))
    holder = sa.create_engine(url)
    try:
        async with running(make_app(impatient, "alice")) as app:
            with holder.connect() as connection:
                if holder.dialect.name == "sqlite":
                    connection.exec_driver_sql("BEGIN IMMEDIATE")
                else:
                    connection.execute(text("LOCK TABLE key_reveal IN ACCESS EXCLUSIVE MODE"))
                await press(app, "a", "b", "c", "d", "enter")
                assert app.review_screen.phase is Phase.BLIND
                assert "lock" in all_notices(app)  # SQLite: "is locked", PostgreSQL: "held a lock"
                assert "Inflation comes first" not in screen_text(app)
                connection.rollback()
            await press(app, "enter")
            assert app.review_screen.phase is Phase.REVEALED
            assert "Inflation comes first" in screen_text(app)
    finally:
        holder.dispose()
        impatient.dispose()


async def test_undo_from_a_revealed_item_keeps_it_revealed(one_item: Database) -> None:
    """``u`` on an item whose key is shown brings the undone judgment's item instead,
    revealed (its key was seen): the revealed one comes back revealed afterwards, as after
    n, p or s."""
    store_item(one_item, "econ:2", key="ABCD")
    async with running(make_app(one_item, "alice")) as app:
        screen = app.review_screen
        assert screen.item is not None
        first = screen.item.id
        await press(app, "a", "b", "c", "d", "enter", "k")  # the first judged
        assert screen.item.id != first
        second = screen.item.id
        await press(app, "d", "c", "b", "a", "enter", "u")  # the second revealed, then undo
        assert screen.item.id == first and screen.phase is Phase.REVEALED
        await press(app, "o")  # judged again: the second comes
        assert screen.item.id == second and screen.phase is Phase.REVEALED
        assert "Your order D, C, B, A" in " ".join(screen_text(app).split())


def question_asked(app: ReviewApp) -> str:
    """The question of the confirmation on screen, on one line."""
    assert isinstance(app.screen, ConfirmModal), app.screen
    return " ".join(str(app.screen.query_one(PanelTitle).render()).split())


def all_notices(app: ReviewApp) -> str:
    """Every notice shown, in one string (a toast says one of several things)."""
    return " | ".join(notices(app))


async def test_edit_adds_and_removes_events_and_the_key_must_follow(one_item: Database) -> None:
    async with running(make_app(one_item, "alice")) as app:
        await press(app, "d", "a", "b", "c", "enter", "f")
        edit = app.screen
        assert isinstance(edit, EditScreen)
        # Remove B: C and D move up to B and C, and the key D, A, B, C follows.
        edit.query(Input).filter(".choice-input")[1].focus()
        await press(app, "ctrl+o")
        assert "B removed" in all_notices(app) and "Key now: C, A, B" in all_notices(app)
        assert edit.query_one("#edit-key", Input).value == "C, A, B"
        await press(app, "ctrl+n", *"Wages rise")  # a new fourth event, D
        assert " D " in screen_text(app) and "Wages rise" in screen_text(app)
        await press(app, "ctrl+s")
        assert app.screen is edit  # the key does not place the new event yet
        assert "the order must place all 4 events; missing D" in screen_text(app)
        edit.query_one("#edit-key", Input).value = "C, A, B, D"
        edit.query_one("#edit-note", Input).value = "B was the same as C"
        await press(app, "ctrl+s", "y")
        assert not isinstance(app.screen, EditScreen)
    with one_item.session() as session:
        revisions = session.exec(select(ItemRevision).order_by(col(ItemRevision.number))).all()
    first, second = revisions
    assert second.choices == {
        "A": first.choices["A"],
        "B": first.choices["C"],
        "C": first.choices["D"],
        "D": "Wages rise",
    }
    assert second.key == "CABD"


async def test_removing_the_keyed_choice_empties_the_key(database: Database) -> None:
    store_item(database, "mcq:1", kind="single", key="B")  # choices Yes, No, Maybe
    async with running(make_app(database, "alice")) as app:
        await press(app, "b", "enter", "f")
        edit = app.screen
        assert isinstance(edit, EditScreen)
        edit.query(Input).filter(".choice-input")[1].focus()
        await press(app, "ctrl+o")  # No goes: the key must not silently become Maybe
        assert edit.query_one("#edit-key", Input).value == ""
        assert "Key now: empty (give the new key)" in all_notices(app)
        await press(app, "ctrl+s")
        assert app.screen is edit


async def test_edit_keeps_the_number_of_events_within_bounds(database: Database) -> None:
    store_item(database, "tf:1", kind="truefalse", key="A", language="zh", prompt="对吗？")
    async with running(make_app(database, "alice")) as app:
        await press(app, "a", "enter", "f")
        edit = app.screen
        assert isinstance(edit, EditScreen)
        await press(app, "ctrl+n")
        assert "at most 2 choices" in all_notices(app)
        await press(app, "ctrl+o")  # the cursor is in the question, not a choice
        assert "move to the event or choice to remove first" in all_notices(app)
        edit.query(Input).filter(".choice-input")[0].focus()
        await press(app, "ctrl+o")
        assert "an item needs at least 2" in all_notices(app)
        assert len(edit.query(Input).filter(".choice-input")) == 2


async def test_undo_retracts_and_shows_the_item_again(one_item: Database) -> None:
    async with running(make_app(one_item, "alice")) as app:
        await press(app, "a", "b", "c", "d", "enter", "k")
        assert app.review_screen.phase is Phase.EMPTY
        await press(app, "u")
        # Its key was seen: back revealed with the blind answer given before it (it came
        # back blind, and the "blind" answer then given was the key, D, A, B, C).
        assert app.review_screen.phase is Phase.REVEALED
        assert app.review_screen.item is not None and app.review_screen.item.id == "econ:1"
        text = " ".join(screen_text(app).split())
        assert "Your order A, B, C, D" in text and "give your verdict again" in text
        await press(app, "o")
    rows = stored_judgments(one_item)
    assert [(j.blind_answer, j.verdict, j.retracted) for j in rows] == [
        ("ABCD", "keep", True),
        ("ABCD", "no-order", False),
    ]


async def test_undo_with_nothing_to_undo_says_so_over_the_status_line(one_item: Database) -> None:
    """It said "alice has no judgment to undo" in a toast over the answer line, where
    every other key that does nothing says "Nothing done: …" over the status line."""
    async with running(make_app(one_item, "alice"), size=(80, 24)) as app:
        await press(app, "u")
        said = app.review_screen.query_one(ProgressLine).warning
        assert said == "Nothing done: alice has no judgment to undo", said
        assert notices(app) == []


async def test_markup_and_escapes_are_shown_literally(database: Database) -> None:
    store_item(
        database,
        "econ:[red]x[/]",
        prompt=MARKUP_PROMPT,
        choices={
            "A": "[bold red]loud[/bold red]",
            "B": "[@click=app.quit]quit[/]",
            "C": "\x1b[2J cleared?",
            "D": "[link=file:///etc/passwd]link[/link]",
        },
        key="ABCD",
        explanation="[blink]explained[/blink] \x1b]8;;http://x\x07",
    )
    async with running(make_app(database, "alice")) as app:
        text = screen_text(app)
        assert "Order [bold]these[/] [link=https://example.com]events[/link]" in text
        assert "[@click=app.quit]now[/]" in text and "␛[31mred␛[0m" in text
        assert "[bold red]loud[/bold red]" in text and "␛[2J cleared?" in text
        assert "econ:[red]x[/]" in text
        await press(app, "b", "enter")  # click-markup text in a choice does not quit the app
        await press(app, "a", "c", "d", "enter")
        assert "[blink]explained[/blink] ␛]8;;http://x␇" in screen_text(app)
        await press(app, "k")
        assert app.is_running
    [judgment] = stored_judgments(database)
    assert (judgment.item_id, judgment.blind_answer) == ("econ:[red]x[/]", "BACD")


async def test_chinese_text_wraps_inside_the_view(database: Database) -> None:
    question = "下列关于货币政策工具的说法中，正确的是哪一项？" * 6
    store_item(
        database,
        "cflue:1",
        kind="single",
        prompt=question,
        choices={"A": "中央银行调整存款准备金率", "B": "财政部决定利率", "C": "以上都不对"},
        key="A",
        explanation="存款准备金率属于货币政策工具。",
        language="zh",
    )
    async with running(make_app(database, "alice")) as app:
        view = app.review_screen.query_one(ItemView)
        prompt = app.review_screen.query_one("#item-prompt", Static)
        assert prompt.size.height >= 3  # wrapped onto several lines ...
        assert prompt.size.width <= view.size.width  # ... within the view
        text = screen_text(app)
        assert "中央银行调整存款准备金率" in text and "下列关于货币政策工具的说法中" in text
        await press(app, "a", "enter")
        assert "存款准备金率属于货币政策工具。" in screen_text(app)
        await press(app, "k")
    [judgment] = stored_judgments(database)
    assert (judgment.blind_answer, judgment.verdict) == ("A", "keep")


async def test_multi_and_truefalse_choices(database: Database) -> None:
    store_item(database, "mcq:1", kind="multi", key="AC", source="a")
    store_item(database, "tf:1", kind="truefalse", key="B", source="b", language="zh")
    async with running(make_app(database, "alice", source="a")) as app:
        await press(app, "a", "b", "c", "b", "enter")  # toggles: A, C
        assert "Your answer is the key" in screen_text(app)
        await press(app, "k")
    async with running(make_app(database, "alice", kind="truefalse")) as app:
        assert "(对)" in screen_text(app) or "对" in screen_text(app)
        await press(app, "1", "2", "enter")  # a single choice: the last press counts
        await press(app, "k")
    answers = {j.item_id: j.blind_answer for j in stored_judgments(database)}
    assert answers == {"mcq:1": "AC", "tf:1": "B"}


def choice_marks(app: ReviewApp) -> dict[str, tuple[str, str, bool]]:
    """Each shown choice's mark beside its letter (``"✓"``, ``"✗"`` or ``""``), the
    mark's colour (``""`` for the text's own) and whether the row is highlighted as part
    of the answer."""
    marks = {}
    for row in app.review_screen.query(ChoiceRow):
        if row.display:
            cell = row.query_one(".choice-letter", Static).render()
            assert isinstance(cell, Content)
            start = len(f" {row.label} ")
            styles = [span.style for span in cell.spans if span.start >= start]
            marks[row.label] = (cell.plain[start:], _colour(styles), row.has_class("-chosen"))
    return marks


def _colour(styles: list[Style | str]) -> str:
    """The standard colour's name (the app's theme renders ``green`` as ``color(2)``)."""
    colour = styles[0].rich_style.color if styles and isinstance(styles[0], Style) else None
    if colour is None:
        return ""
    return {Color.parse(name).number: name for name in ("green", "red")}[colour.number]


async def test_after_the_reveal_the_marks_say_what_the_key_says(database: Database) -> None:
    store_item(database, "mcq:1", kind="multi", key="AC")
    async with running(make_app(database, "alice")) as app:
        await press(app, "a", "b")
        assert choice_marks(app) == {
            "A": ("✓", "", True),
            "B": ("✓", "", True),
            "C": ("", "", False),
        }
        await press(app, "enter")
        revealed = {
            "A": ("✓", "green", True),
            "B": ("✗", "red", True),  # chosen, not in the key: no tick
            "C": ("✓", "green", False),  # in the key, not chosen
        }
        assert choice_marks(app) == revealed
        await press(app, "k")
        await press(app, "j", *"mcq:1", "enter")  # the judged item, browsed: the same marks
        assert app.review_screen.phase is Phase.JUDGED
        assert choice_marks(app) == revealed


async def test_skip_previous_next_and_jump(database: Database) -> None:
    for index in range(3):
        store_item(database, f"econ:{index}")
    async with running(make_app(database, "alice")) as app:
        screen = app.review_screen
        first = screen.item
        assert first is not None
        await press(app, "s")
        second = screen.item
        assert second is not None and second.id != first.id
        await press(app, "p")
        assert screen.item is not None and screen.item.id == first.id
        await press(app, "n")
        assert screen.item is not None and screen.item.id == second.id
        await press(app, "j", *first.id, "enter")
        assert screen.item is not None and screen.item.id == first.id
        await press(app, "d", "a", "b", "c", "enter", "k")
        await press(app, "j", *first.id, "enter")  # a judged item opens in browse mode
        assert screen.phase is Phase.JUDGED
        assert "Your verdict: keep" in screen_text(app)


async def test_mouse_picks_and_verdict_buttons(one_item: Database) -> None:
    async with running(make_app(one_item, "alice")) as app:
        pilot = app.pilot  # type: ignore[attr-defined]
        for label in "DABC":
            await pilot.click(f"#choice-{label}")
        await pilot.click("#answer-submit")
        await settle(pilot)
        assert app.review_screen.phase is Phase.REVEALED
        await pilot.click("#verdict-keep")
        await settle(pilot)
    [judgment] = stored_judgments(one_item)
    assert (judgment.blind_answer, judgment.verdict) == ("DABC", "keep")


async def test_help_screen_and_command_palette_list_the_actions(one_item: Database) -> None:
    async with running(make_app(one_item, "alice")) as app:
        await press(app, "question_mark")
        assert isinstance(app.screen, HelpScreen)
        said = " ".join(f"{row.keys} {row.description}" for row in app.screen.rows)
        for phrase in (
            "take back the last step",
            "defensible",
            "retract your judgment of the item shown",
            "Ctrl+P",
        ):
            assert phrase in said
        assert said.count("Shift+Space / PgUp") == 1  # it was in Space's line and its own
        edit_keys = {row.keys for row in app.screen.rows if row.section.startswith("Edit form")}
        assert edit_keys == {
            "Ctrl+S",
            "Ctrl+R",
            "Ctrl+N",
            "Ctrl+O",
            "Ctrl+Z",
            "Ctrl+Shift+Z or Ctrl+Y",
            "Esc",
        }
        await press(app, "escape")
        titles = [command.title for command in app.get_system_commands(app.screen)]
        assert any(title.startswith("Skip") for title in titles)
        assert any("Undo" in title for title in titles)
        assert not any("Keep" in title for title in titles)  # not before the reveal
        await press(app, "a", "b", "c", "d", "enter")
        titles = [command.title for command in app.get_system_commands(app.screen)]
        assert "Verdict: Keep (k)" in titles
        keep = next(c for c in app.get_system_commands(app.screen) if "Keep" in c.title)
        await keep.callback()
        await settle(app.pilot)  # type: ignore[attr-defined]
    assert [j.verdict for j in stored_judgments(one_item)] == ["keep"]


async def test_adjudication_is_for_leads_and_f3_says_so(one_item: Database) -> None:
    async with running(make_app(one_item, "alice")) as app:
        assert not app.may_open("adjudication")
        titles = [command.title for command in app.get_system_commands(app.screen)]
        assert not any(title.startswith("Adjudication") for title in titles)
        await press(app, "f3")
        assert app.screen is app.review_screen  # not opened ...
        said = app.review_screen.query_one(ProgressLine).warning  # ... and it says why,
        assert said.startswith("For leads only: F3 (adjudication) is for leads")
        assert "alice is an annotator" in said
        assert not notices(app)  # above the status line, not in a toast over the verdicts


async def test_leaving_mid_item_frees_it_for_others(one_item: Database) -> None:
    async with running(make_app(one_item, "alice")) as app:
        assert app.review_screen.item is not None
        with one_item.session() as session:
            assert len(session.exec(select(Claim)).all()) == 1
    with one_item.session() as session:
        assert session.exec(select(Claim)).all() == []


async def test_other_areas_open_from_the_review_app(one_item: Database) -> None:
    with one_item.transaction() as session:
        ensure_person(session, "lea", Role.LEAD)
    async with running(make_app(one_item, "lea")) as app:
        assert app.may_open("adjudication")
        await press(app, "d", "a", "b", "c", "enter", "c", *"abc", "escape")  # not saved yet
        await press(app, "f2")
        assert type(app.screen).__name__ == "AgreementScreen"
        # ? lists the keys of the screen on top, not the review screen's
        for area_key, title, own_key in (
            ("", "Agreement", "Recompute"),
            ("f3", "Adjudication", "Refresh"),
        ):
            if area_key:
                await press(app, area_key)
            await press(app, "question_mark")
            assert isinstance(app.screen, HelpScreen) and app.screen.page.title == f"{title} — keys"
            shown = {(row.section, row.description) for row in app.screen.rows}
            assert (title, own_key) in shown and (title, "Back") in shown
            assert ("Esc", "Back") in {(row.keys, row.description) for row in app.screen.rows}
            assert not {"Focus Next", "Copy selected text"} & {text for _, text in shown}
            assert not any(section in ("Blind answer", "Verdict") for section, _ in shown)
            assert ("App", "this help") in shown
            await press(app, "escape")
            assert type(app.screen).__name__ == f"{title}Screen"
            await press(app, "q")  # the comment typed on the review screen is asked about
            assert isinstance(app.screen, ConfirmModal)
            await press(app, "n", "escape")
        assert app.screen is app.review_screen
        assert app.review_screen.query_one("#comment", Input).value == "abc"


def test_keys_in_the_help_are_written_as_the_review_help_writes_them() -> None:
    from textual.binding import Binding

    from reviewer.tui.screens.help import key_label

    written = {key: key_label(Binding(key, "act", "what")) for key in BOUND_KEYS}
    assert written == dict(zip(BOUND_KEYS, WRITTEN_KEYS, strict=True))
    assert key_label(Binding("question_mark", "help", "Help", key_display="?")) == "?"


BOUND_KEYS = ("ctrl+s", "escape", "f4", "f", "A", "shift+tab", "question_mark", "enter")
WRITTEN_KEYS = ("Ctrl+S", "Esc", "F4", "f", "A", "Shift+Tab", "?", "Enter")


async def test_command_palette_runs_review_actions(database: Database) -> None:
    for index in range(3):
        store_item(database, f"econ:{index}")
    async with running(make_app(database, "alice")) as app:
        first = app.review_screen.item
        await press(app, "ctrl+p")
        await press(app, *"skip")
        assert "Skip (s)" in screen_text(app)
        await press(app, "enter")
        assert app.is_running and app.screen is app.review_screen
        assert app.review_screen.item is not None and app.review_screen.item != first


async def test_browse_judged_items_lists_every_revision(one_item: Database) -> None:
    from reviewer.judging import ItemEdit, submit_judgment

    edit = ItemEdit(note="typo", prompt="Order the events (fixed).")
    judge_flawed_then_edit(one_item, "alice", "econ:1", edit, comment="a typo", editor="bob")
    submit_judgment(
        one_item, "alice", "econ:1", revision_number=2, blind_answer="DABC", verdict="keep"
    )
    async with running(make_app(one_item, "alice")) as app:
        await press(app, "l")
        text = screen_text(app)
        assert text.count("econ:1") >= 2 and "flawed" in text and "keep" in text
        assert "D, A, B, C" in text and "DABC" not in text  # an order, as the app writes one
        await press(app, "enter")  # the newest judgment opens, in browse mode
        assert app.review_screen.phase is Phase.JUDGED
        assert "Your verdict: keep" in screen_text(app)


async def test_judged_items_show_what_each_verdict_proposed_and_the_whole_comment(
    one_item: Database,
) -> None:
    """At 80 columns the list cut comments at 40 characters, off the screen, and left out
    the corrected key; a judgment from the command line said it took 0 seconds."""
    from reviewer.judging import submit_judgment

    store_item(one_item, "econ:2", key="ABCD")
    comment = "第二个事件应当排在最前面，因为利率先上升，然后才是借贷成本的变化 and the end"
    submit_judgment(
        one_item, "alice", "econ:1", revision_number=1, blind_answer="DABC",
        verdict="wrong-key", corrected_key="DACB", comment=comment,
    )  # fmt: skip
    submit_judgment(
        one_item, "alice", "econ:2", revision_number=1, blind_answer="ABCD",
        verdict="duplicate", duplicate_of="econ:1",
    )  # fmt: skip
    async with running(make_app(one_item, "alice"), size=(80, 24)) as app:
        judged = await open_screen(app, "l", JudgedScreen)
        table = judged.query_one(DataTable)
        await wait_until(pilot_of(app), lambda: table.row_count == 2, "the judged items")
        rows = [
            [cell if isinstance(cell, str) else cell.plain for cell in table.get_row_at(index)]
            for index in range(2)
        ]  # newest first
        assert [row[2] for row in rows] == [
            "duplicate\nduplicate of: econ:1",
            "wrong-key\ncorrected key: D, A, C, B",
        ]
        assert [row[4] for row in rows] == ["untimed", "untimed"] and rows[1][6] == comment
        # Every column on the screen, the comment wrapped to its end
        assert table.max_scroll_x == 0, (table.virtual_size, table.size)
        assert "the end" in screen_text(app)


async def judged_table(app: ReviewApp, rows: int) -> DataTable[object]:
    """The judged list (``l``), once its ``rows`` judgments are in it and laid out."""
    judged = await open_screen(app, "l", JudgedScreen)
    table = judged.query_one(DataTable)
    await wait_until(pilot_of(app), lambda: table.row_count == rows, "the judged items")
    await pilot_of(app).pause()
    return table


async def test_the_judged_list_keeps_when_on_one_line_at_80_columns(one_item: Database) -> None:
    """At 80 columns "when" went onto two lines (the date, then the time) while "comment",
    empty in every row, kept its room at the right edge, cut: now the empty column gives
    its room, each judgment's date and time are one line, and the title says the year."""
    from reviewer.judging import submit_judgment

    for number in (1, 2):
        item_id = f"econ_ordering_5events:{number}"
        store_item(one_item, item_id, key="EDACB", choices=5)
        submit_judgment(
            one_item, "alice", item_id, revision_number=1, blind_answer="EDACB",
            verdict="keep", seconds=42,
        )  # fmt: skip
    async with running(make_app(one_item, "alice"), size=(80, 24)) as app:
        table = await judged_table(app, rows=2)
        labels = [str(column.label) for column in table.columns.values()]
        assert labels == ["item", "rev", "verdict", "your answer", "time", "when"]
        year = stored_judgments(one_item)[0].created_at.year
        for judgment, row in zip(stored_judgments(one_item)[::-1], range(2), strict=True):
            assert str(table.get_row_at(row)[-1]) == judgment.created_at.strftime("%m-%d %H:%M")
        assert [row.height for row in table.rows.values()] == [1, 1]
        assert table.max_scroll_x == 0, (table.virtual_size, table.size)
        assert f"Items you have judged in {year} (Enter opens" in screen_text(app)


LONG_COMMENT = (
    "The key puts the rate cut before the inflation report, which the scenario "
    "contradicts outright; see cflue_mcq:2 too."
)


async def test_the_judged_list_fits_80_columns_with_comments_and_long_ids(
    one_item: Database,
) -> None:
    """At 80x24 a person who wrote comments got a list that scrolled sideways: the comment
    cut at the right edge, "when" on two lines, "cflue_mcq:" over "2" in the verdict.
    Now every cell is whole on screen, the comment wrapped at words, an id broken only
    after an underscore, "when" one line, the heading "your answer" wrapped, not cut."""
    from reviewer.judging import submit_judgment

    for number in (1, 2, 3):
        store_item(one_item, f"econ_ordering_5events:{number}", key="EDACB", choices=5)
    store_item(one_item, "cflue_mcq:2", kind="single", key="A")
    store_item(one_item, "cflue_mcq:3", kind="single", key="A")
    judgments = [
        ("econ_ordering_5events:1", "EDACB", {"verdict": "keep", "comment": LONG_COMMENT}),
        ("econ_ordering_5events:2", "BADCE", {"verdict": "wrong-key", "corrected_key": "BADCE"}),
        ("econ_ordering_5events:3", "EDACB",
         {"verdict": "duplicate", "duplicate_of": "econ_ordering_5events:1", "comment": "Same."}),
        ("cflue_mcq:3", "A", {"verdict": "duplicate", "duplicate_of": "cflue_mcq:2"}),
    ]  # fmt: skip
    for item_id, answer, fields in judgments:
        submit_judgment(
            one_item, "alice", item_id, revision_number=1, blind_answer=answer, seconds=130,
            **fields,  # type: ignore[arg-type]
        )  # fmt: skip
    async with running(make_app(one_item, "alice"), size=(80, 24)) as app:
        table = await judged_table(app, rows=4)
        assert table.max_scroll_x == 0, (table.virtual_size, table.size)  # no sideways scroll
        assert [str(column.label) for column in table.columns.values()][3] == "your\nanswer"
        for row in range(4):
            table.move_cursor(row=row)  # the row in view
            await pilot_of(app).pause()
            lines = rendered_lines(app)
            assert all(len(line) <= 80 for line in lines)
            for cell in table.get_row_at(row):
                text = cell if isinstance(cell, str) else cell.plain
                # every piece of every cell whole on one line: words, ids broken only
                # after an underscore ("mcq:2", never "mcq:" over "2"), "when" entire
                when = [text] if re.fullmatch(r"\d\d-\d\d \d\d:\d\d", text) else []
                pieces = [p for word in text.split() for p in re.split(r"(?<=[a-z]_)", word)]
                for piece in when or pieces:
                    assert any(piece in line for line in lines), (piece, lines)


async def test_revisions_screen_shows_the_difference(one_item: Database) -> None:
    from reviewer.judging import ItemEdit, edit_item

    edit_item(one_item, "bob", "econ:1", ItemEdit(note="key was wrong", key="DACB"))
    async with running(make_app(one_item, "alice")) as app:
        await press(app, "r")  # not before the blind answer: the diff would show the key
        assert app.screen is app.review_screen
        await press(app, "d", "a", "c", "b", "enter", "r")
        text = screen_text(app)
        assert "rev 2" in text and "key was wrong" in text
        assert "-key: D, A, B, C" in text and "+key: D, A, C, B" in text
        await press(app, "escape")
        assert app.screen is app.review_screen

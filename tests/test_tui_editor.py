"""Issue 23, point 1 and the editor's part of point 10: the flawed-text editor puts typing
where the annotator means it, names every field, shows and confirms what it stores, asks
again when a comment went into the question, changes an item's kind within what its key
allows, and shows the changed lines of Ctrl+R at every size.

Pilot tests on real SQLite files (the domain tests on both backends); assertions on what
the screen shows and the database holds."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
from helpers import press, screen_text, settle, store_item, stored_judgments
from sqlmodel import col, select
from textual.widgets import Input, Select, Static, TextArea

from db.audit import read_audit
from db.engine import Database, open_database
from db.models import Item, ItemRevision
from reviewer.revisions import (
    DiffLine,
    comment_like_growth,
    compact_diff,
)
from reviewer.tui.app import ReviewApp, make_app
from reviewer.tui.screens.edit import EditScreen
from reviewer.tui.screens.edit_confirm import ChangesScreen, CommentInTextScreen
from reviewer.tui.screens.lead_modals import ConfirmModal

QUESTION = "某公司当月应纳增值税（）万元。"
COMMENT = "选项C应为0.404 另外本题是单选题"  # the teacher's (the pilot types no full-width comma)


@pytest.fixture
def mcq(db_path: Path) -> Database:
    """One multi-answer item whose key holds one letter (CFLUE knowledge:2775's case)."""
    db = open_database(db_path)
    choices = {"A": "0", "B": "0.4", "C": "0.404", "D": "0.416"}
    store_item(db, "k:1", kind="multi", key="C", choices=choices, prompt=QUESTION)
    return db


@pytest.fixture
def ordering(db_path: Path) -> Database:
    db = open_database(db_path)
    store_item(db, "econ:1", key="DABC")
    return db


@asynccontextmanager
async def app_at(db: Database, size: tuple[int, int] = (120, 40)) -> AsyncIterator[ReviewApp]:
    app = make_app(db, "alice")
    async with app.run_test(size=size) as pilot:
        app.pilot = pilot  # type: ignore[attr-defined]
        await settle(pilot)
        yield app


async def flawed(app: ReviewApp, blind: str) -> EditScreen:
    await press(app, *blind, "enter", "f")
    assert isinstance(app.screen, EditScreen)
    return app.screen


def problems(edit: EditScreen) -> str:
    """What the form says is wrong (the whole line, however little of it fits)."""
    return str(edit.query_one("#edit-problems", Static).render())


def revisions(db: Database) -> list[ItemRevision]:
    with db.session() as session:
        return list(session.exec(select(ItemRevision).order_by(col(ItemRevision.number))))


# --- where typing lands ---------------------------------------------------------------


async def test_typing_after_f_lands_in_the_comment_then_tab_reaches_the_question(
    mcq: Database,
) -> None:
    async with app_at(mcq) as app:
        edit = await flawed(app, "c")  # the blind answer is the key: the text is the suspect
        comment = edit.query_one("#edit-comment", Input)
        await press(app, *"C is right")
        assert comment.value == "C is right" and app.focused is comment
        await press(app, "tab")
        assert app.focused is edit.query_one("#edit-prompt", TextArea)
        assert edit.query_one("#edit-prompt", TextArea).text == QUESTION  # untouched


async def test_a_blind_answer_other_than_the_key_puts_the_key_second(mcq: Database) -> None:
    async with app_at(mcq) as app:
        edit = await flawed(app, "b")
        assert app.focused is edit.query_one("#edit-comment", Input)
        await press(app, "tab")
        assert app.focused is edit.query_one("#edit-key", Input)
        await press(app, "tab")  # then the rest, in the order they are shown
        assert app.focused is edit.query_one("#edit-prompt", TextArea)
        await press(app, "shift+tab", "shift+tab")
        assert app.focused is edit.query_one("#edit-comment", Input)


async def test_the_plain_edit_key_starts_in_the_question(mcq: Database) -> None:
    async with app_at(mcq) as app:
        store_item(mcq, "k:2", kind="single", key="A")
        await press(app, "c", "enter", "k", "p", "e")  # e edits an item once judged
        edit = app.screen
        assert isinstance(edit, EditScreen) and not edit.query("#edit-comment")
        assert app.focused is edit.query_one("#edit-prompt", TextArea)
        await press(app, "tab")
        assert app.focused is edit.query(Input).filter(".choice-input")[0]


async def test_every_field_names_itself_in_its_border(mcq: Database) -> None:
    async with app_at(mcq) as app:
        edit = await flawed(app, "c")
        titles = {
            widget.id or "choice": str(widget.border_title)
            for widget in edit.query("Input, TextArea, Select")
            if widget.id != "edit-kind" or isinstance(widget, Select)
        }
        assert titles == {
            "edit-comment": "Comment",
            "edit-prompt": "Question",
            "choice": "D",  # each choice its own letter (the last one read here)
            "edit-key": "Key",
            "edit-kind": "Kind",
            "edit-explanation": "Explanation",
            "edit-note": "Note",
        }
        letters = [str(row.border_title) for row in edit.query(Input).filter(".choice-input")]
        assert letters == ["A", "B", "C", "D"]
        shown = screen_text(app)
        for title in ("─ Comment ─", "─ Question ─", "─ A ─", "─ Key ─", "─ Kind ─"):
            assert title in shown


async def test_a_save_refused_for_its_note_alone_moves_to_the_note(ordering: Database) -> None:
    async with app_at(ordering, (80, 24)) as app:
        edit = await flawed(app, "abcd")  # the key is the second stop
        await press(app, "tab", *["backspace"] * 10, *"A, C, D, B", "ctrl+s")
        assert "note: say briefly what you changed and why" in problems(edit)
        note = edit.query_one("#edit-note", Input)
        assert app.focused is note and "─ Note ─" in screen_text(app)  # scrolled into view
        await press(app, *"the key was wrong", "ctrl+s", "y")
    assert revisions(ordering)[-1].key == "ACDB"
    assert revisions(ordering)[-1].change_note == "the key was wrong"


async def test_a_save_refused_for_the_key_stays_in_the_key(ordering: Database) -> None:
    async with app_at(ordering) as app:
        edit = await flawed(app, "abcd")
        await press(app, "tab", *["backspace"] * 10, *"A, X", "ctrl+s")
        assert "note:" in problems(edit) and "'X'" in problems(edit)
        assert app.focused is edit.query_one("#edit-key", Input)  # the key is to fix first


# --- quitting: asked first, as Esc asks ------------------------------------------------


async def test_quitting_the_editor_with_unsaved_changes_asks_first(mcq: Database) -> None:
    async with app_at(mcq) as app:
        edit = await flawed(app, "b")  # the key is the second stop
        await press(app, "tab", *", D", "ctrl+q")
        assert isinstance(app.screen, ConfirmModal)  # what Esc asks, for quitting
        assert app.screen.question == (
            "Your changes are not saved: the flawed verdict is not recorded. Quit and lose them?"
        )
        await press(app, "escape")  # no: back in the form, the typing kept
        assert app.screen is edit and edit.query_one("#edit-key", Input).value == "C, D"
        await press(app, "ctrl+q")
        await app.pilot.press("y")  # type: ignore[attr-defined]
        await app.pilot.pause()  # type: ignore[attr-defined]
        assert not app.is_running
    assert stored_judgments(mcq) == [] and len(revisions(mcq)) == 1


async def test_quitting_an_untouched_editor_asks_nothing(mcq: Database) -> None:
    async with app_at(mcq) as app:
        store_item(mcq, "k:2", kind="single", key="A")
        await press(app, "c", "enter", "k", "p", "e")  # the plain editor: nothing typed
        assert isinstance(app.screen, EditScreen)
        await app.pilot.press("ctrl+q")  # type: ignore[attr-defined]
        await app.pilot.pause()  # type: ignore[attr-defined]
        assert not app.is_running


# --- saving: the diff first, and once more for comment-like text in the question --------


async def test_saving_shows_the_diff_and_going_back_stores_nothing(mcq: Database) -> None:
    async with app_at(mcq) as app:
        edit = await flawed(app, "c")
        edit.query(Input).filter(".choice-input")[2].value = "0.404 万元"
        edit.query_one("#edit-note", Input).value = "unit"
        await press(app, "ctrl+s")
        assert isinstance(app.screen, ChangesScreen)
        shown = screen_text(app)
        assert "Store this as revision 2?" in shown
        assert "-C: 0.404" in shown and "+C: 0.404 万元" in shown
        await press(app, "n")  # back to the form: nothing stored
        assert app.screen is edit
        assert stored_judgments(mcq) == [] and len(revisions(mcq)) == 1
        await press(app, "ctrl+s", "y")  # a fix inside the text is not asked about again
        assert app.screen is app.review_screen
    assert [r.choices["C"] for r in revisions(mcq)] == ["0.404", "0.404 万元"]


NOTE = "[bold]unit[/bold] added to C: the source 原题 gives 0.404 万元, and every other choice is in 万元 too"


@pytest.mark.parametrize("size", [(80, 24), (120, 35)])
async def test_the_confirmation_shows_the_note_and_the_comment_as_typed(
    mcq: Database, size: tuple[int, int]
) -> None:
    """The confirmation showed the diff and the comment, not the note stored with the new
    revision: the annotator said yes to a write without seeing all of it.  The note is
    shown too, as typed (markup stays characters), whole, with the buttons on screen."""
    async with app_at(mcq, size) as app:
        edit = await flawed(app, "c")
        await press(app, *"C is right")
        edit.query(Input).filter(".choice-input")[2].value = "0.404 万元"
        edit.query_one("#edit-note", Input).value = NOTE
        await press(app, "ctrl+s")
        assert isinstance(app.screen, ChangesScreen)
        shown = screen_text(app)
        assert "Your note: [bold]unit[/bold] added" in shown and "C is right" in shown
        assert all(word in shown for word in NOTE.split())  # wherever its lines broke
        said = str(app.screen.query_one("#changes-said", Static).render())
        assert said == f"Your note: {NOTE}\nYour comment for the lead: C is right"
        assert "Store it (y, Enter)" in shown and "+C: 0.404 万元" in shown
        await press(app, "y")
        assert app.screen is app.review_screen
    assert [r.change_note for r in revisions(mcq)][-1] == NOTE


async def test_a_comment_typed_into_the_question_asks_and_can_be_moved(mcq: Database) -> None:
    async with app_at(mcq) as app:
        edit = await flawed(app, "c")
        await press(app, "tab", *COMMENT)  # the teacher's slip: the comment went to the question
        edit.query_one("#edit-note", Input).value = "see comment"
        await press(app, "ctrl+s")  # asked first, before the diff
        asked = app.screen
        assert isinstance(asked, CommentInTextScreen)
        assert (asked.field, asked.text, asked.is_the_comment) == ("question", COMMENT, False)
        assert "Store this in the question?" in screen_text(app)
        await press(app, "n")  # back to the form, nothing stored
        assert app.screen is edit and len(revisions(mcq)) == 1
        await press(app, "ctrl+s", "m")  # move it to the comment
        assert app.screen is edit
        assert edit.query_one("#edit-prompt", TextArea).text == QUESTION
        assert edit.query_one("#edit-comment", Input).value == COMMENT
        await press(app, "ctrl+s")  # only a comment now: recorded without a revision
        assert app.screen is app.review_screen
    [judgment] = stored_judgments(mcq)
    assert (judgment.verdict, judgment.comment) == ("flawed", COMMENT)
    assert [r.prompt for r in revisions(mcq)] == [QUESTION]


async def test_the_comments_own_text_in_the_question_asks_even_with_a_comment(
    mcq: Database,
) -> None:
    async with app_at(mcq) as app:
        edit = await flawed(app, "c")
        await press(app, *"C is right", "tab")
        edit.query_one("#edit-prompt", TextArea).load_text("C is right. " + QUESTION)
        edit.query_one("#edit-note", Input).value = "x"
        await press(app, "ctrl+s")
        assert isinstance(app.screen, CommentInTextScreen)
        assert "holds the text of your comment" in screen_text(app)
        await press(app, "y")  # meant: kept in the question; then the diff, as for any edit
        assert isinstance(app.screen, ChangesScreen)
        await press(app, "y")
        assert app.screen is app.review_screen
    assert [r.prompt for r in revisions(mcq)] == [QUESTION, "C is right. " + QUESTION]


async def test_comment_text_in_the_question_is_asked_about_before_the_note(
    mcq: Database,
) -> None:
    """The note was asked for first, then the diff, and only then whether the text was a
    comment: moved there, it left no edit, and the note typed for it was for nothing."""
    async with app_at(mcq, (80, 24)) as app:
        edit = await flawed(app, "c")
        await press(app, "tab", *COMMENT, "ctrl+s")  # no note written
        assert isinstance(app.screen, CommentInTextScreen)  # the first question
        assert "note:" not in problems(edit)
        await press(app, "m")  # a comment after all: nothing left to note
        assert app.screen is edit and edit.query_one("#edit-comment", Input).value == COMMENT
        await press(app, "ctrl+s")
        assert app.screen is app.review_screen
    [judgment] = stored_judgments(mcq)
    assert (judgment.verdict, judgment.comment) == ("flawed", COMMENT)
    assert len(revisions(mcq)) == 1


async def test_text_kept_in_the_question_then_asks_for_the_note_and_not_again(
    mcq: Database,
) -> None:
    async with app_at(mcq, (80, 24)) as app:
        edit = await flawed(app, "c")
        await press(app, "tab", *COMMENT, "ctrl+s")
        assert isinstance(app.screen, CommentInTextScreen)
        await press(app, "y")  # it belongs in the question: now the note
        assert app.screen is edit and "note: say briefly" in problems(edit)
        assert app.focused is edit.query_one("#edit-note", Input)
        await press(app, *"clarified", "ctrl+s")
        assert isinstance(app.screen, ChangesScreen)  # not asked about the text again
        await press(app, "y")
        assert app.screen is app.review_screen
    assert [r.prompt for r in revisions(mcq)] == [QUESTION, QUESTION + COMMENT]
    assert revisions(mcq)[-1].change_note == "clarified"


def test_comment_like_growth() -> None:
    assert comment_like_growth(QUESTION, QUESTION + COMMENT, "") == COMMENT
    assert comment_like_growth(QUESTION, QUESTION + " 另外", "C wrong") == "另外"
    assert comment_like_growth(QUESTION, "X" + QUESTION, "X") == "X"
    assert comment_like_growth(QUESTION, QUESTION.replace("公司", "企业"), "") == ""
    assert comment_like_growth(QUESTION, QUESTION, "") == ""


# --- the kind --------------------------------------------------------------------------


async def test_changing_the_kind_makes_an_audited_revision(mcq: Database) -> None:
    async with app_at(mcq) as app:
        edit = await flawed(app, "c")
        await press(app, *"numeric: one answer")
        edit.query_one("#edit-kind", Select).value = "single"
        edit.query_one("#edit-note", Input).value = "one number is right"
        await press(app, "ctrl+s")
        assert "-kind: multi" in screen_text(app) and "+kind: single" in screen_text(app)
        await press(app, "y")
        assert app.screen is app.review_screen
    first, second = revisions(mcq)
    assert (first.kind, second.kind, second.key, second.prompt) == (
        "multi",
        "single",
        "C",
        QUESTION,
    )
    with mcq.session() as session:
        item = session.get(Item, "k:1")
        assert item is not None and item.kind == "single"
    with mcq.session() as session:
        [revise] = read_audit(session, target="k:1", actions=["revise"])
    assert revise.changes["changed"] == ["kind"]
    assert (revise.changes["old_kind"], revise.changes["new_kind"]) == ("multi", "single")
    [judgment] = stored_judgments(mcq)
    assert (judgment.revision_number, judgment.comment) == (1, "numeric: one answer")


async def test_an_impossible_kind_is_refused_in_the_form(mcq: Database) -> None:
    async with app_at(mcq) as app:
        edit = await flawed(app, "c")
        kinds = edit.query_one("#edit-kind", Select)
        key = edit.query_one("#edit-key", Input)
        edit.query_one("#edit-note", Input).value = "kind"
        key.value = "BC"
        kinds.value = "single"
        await press(app, "ctrl+s")
        assert app.screen is edit
        assert "a single item takes exactly one letter, got BC" in problems(edit)
        key.value = "C"
        kinds.value = "truefalse"  # four numbers are not 对/错
        await press(app, "ctrl+s")
        assert app.screen is edit
        assert "a true/false item has exactly 2 choices" in problems(edit)
        assert "A true and B false" in problems(edit)
    assert len(revisions(mcq)) == 1


async def test_an_ordering_item_offers_no_kind(ordering: Database) -> None:
    async with app_at(ordering) as app:
        edit = await flawed(app, "dabc")
        assert not edit.query("#edit-kind")


# --- Ctrl+R: the changed lines, at every size --------------------------------------------


@pytest.mark.parametrize("size", [(80, 24), (120, 35)])
async def test_ctrl_r_shows_the_changed_lines_at_every_size(
    ordering: Database, size: tuple[int, int]
) -> None:
    async with app_at(ordering, size) as app:
        edit = await flawed(app, "dabc")
        edit.query(Input).filter(".choice-input")[1].value = "Loans get dearer"
        await press(app, "tab", *" Now.", "ctrl+r")
        assert isinstance(app.screen, ChangesScreen)
        shown = screen_text(app)
        assert "--- revision 1" in shown
        assert "+  Order the events of a rate rise cycle. Now." in shown
        # (the changed characters are marked, so the screenshot splits the line there)
        assert "+B:Loansgetdearer" in shown.replace(" ", "")
        await press(app, "escape")
        assert app.screen is edit


async def test_ctrl_r_shows_a_typed_key_as_saving_would(ordering: Database) -> None:
    async with app_at(ordering) as app:
        edit = await flawed(app, "abcd")  # not the key: the key is the second stop
        await press(app, "tab", *["backspace"] * 10, *"a, c, d, b", "ctrl+r")
        assert "+key: A, C, D, B" in screen_text(app)  # canonical, as Ctrl+S's diff shows it
        await press(app, "escape", *["backspace"] * 10, *"b, a", "ctrl+r")
        assert "+key: b, a" in screen_text(app)  # not a key yet: shown as typed
        await press(app, "escape", *["backspace"] * 4, *"A, C, D, B", "tab")
        edit.query_one("#edit-note", Input).value = "the key was wrong"
        await press(app, "ctrl+s")
        assert isinstance(app.screen, ChangesScreen)
        assert "+key: A, C, D, B" in screen_text(app)


LONG_QUESTION = "北京某货运公司（增值税一般纳税人）2019年11月发生如下业务。" * 8 + QUESTION


@pytest.mark.parametrize("size", [(80, 24), (120, 35)])
async def test_a_long_question_shows_its_changed_end_at_every_size(
    db_path: Path, size: tuple[int, int]
) -> None:
    db = open_database(db_path)
    store_item(db, "k:1", kind="single", key="C", choices=4, prompt=LONG_QUESTION)
    async with app_at(db, size) as app:
        await flawed(app, "c")
        await press(app, "tab", "ctrl+end", *"C is 0.404", "ctrl+r")
        assert isinstance(app.screen, ChangesScreen)
        shown = screen_text(app).replace(" ", "")
        assert "万元。Cis0.404" in shown  # the change, on screen without scrolling
        assert "…" in shown  # the unchanged start of the question is cut


def test_compact_diff_keeps_what_changed_and_cuts_the_rest() -> None:
    old = "  " + "x" * 100 + "END"
    lines = [
        DiffLine("context", " " + "c" * 200),
        DiffLine("removed", "-" + old, ((106, 106),)),
        DiffLine("added", "+" + old + " new", ((106, 110),)),
        DiffLine("added", "+B: short", ((3, 8),)),
    ]
    context, removed, added, short = compact_diff(lines, context=10)
    assert context.text == " " + "c" * 19 + "…"
    assert removed.text == "-  …" + "x" * 7 + "END" and removed.changes == (
        (len(removed.text),) * 2,
    )
    assert added.text == "+  …" + "x" * 7 + "END new"
    assert [added.text[a:b] for a, b in added.changes] == [" new"]
    assert short == lines[3]  # short enough: unchanged


# --- adding an event or choice ----------------------------------------------------------


@pytest.mark.parametrize("size", [(80, 24), (120, 35)])
async def test_ctrl_n_scrolls_the_new_choice_into_view_and_types_into_it(
    db_path: Path, size: tuple[int, int]
) -> None:
    """The new row was focused below the form's fold: typing went out of sight."""
    db = open_database(db_path)
    choices = {letter: f"choice {letter}" for letter in "ABCDE"}
    for item_id in ("k:1", "k:2"):
        store_item(db, item_id, kind="single", key="A", choices=choices, prompt="Why? " * 40)
    async with app_at(db, size) as app:
        await press(app, "a", "enter", "k", "p", "e")  # e edits an item once judged
        edit = app.screen
        assert isinstance(edit, EditScreen)
        await press(app, "ctrl+n", *"new one")
        new = edit.query(Input).filter(".choice-input")[-1]
        assert str(new.border_title) == "F" and app.focused is new and new.value == "new one"
        form = edit.query_one("#edit-form")
        assert form.content_region.contains_region(new.region)  # wholly in sight
        assert "─ F ─" in screen_text(app)

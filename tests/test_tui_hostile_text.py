"""Hostile text on every screen: Rich markup, terminal escape sequences, other control
characters and very long unbroken strings in items, names, notes and comments.

Each screen must show such text as typed (control characters as the visible stand-ins
of ``reviewer.tui.literal``), interpret none of it (no style, link or action from
markup) and keep running.  Item text reaches the screens through the queue, the
judgments, revisions and decisions stored in a real SQLite file.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest
from helpers import (
    agreement_settled,
    open_screen,
    pilot_of,
    press,
    running,
    screen_text,
    settle,
    store_item,
    wait_until,
)
from rich.text import Text
from textual.app import App
from textual.content import Content
from textual.widgets import DataTable, Input, OptionList, Select, Static, TabbedContent, TextArea

from db.engine import Database, open_database
from db.models import Person
from db.releases import ReleaseRequest
from db.settings import set_setting
from db.vocabulary import Role
from reviewer.judging import ItemEdit, edit_item, submit_judgment
from reviewer.releases import create_release
from reviewer.tui.app import make_app
from reviewer.tui.literal import visible_text
from reviewer.tui.screens.adjudication import AdjudicationScreen
from reviewer.tui.screens.agreement import AgreementScreen
from reviewer.tui.screens.edit import EditScreen
from reviewer.tui.screens.evaluation import EvaluationScreen
from reviewer.tui.screens.help import HelpScreen
from reviewer.tui.screens.judged import JudgedScreen
from reviewer.tui.screens.jump import FilterScreen
from reviewer.tui.screens.lead_modals import ConfirmModal, ReasonModal
from reviewer.tui.screens.prompt import PromptScreen
from reviewer.tui.screens.revisions import RevisionsScreen

MARKUP = ("[bold red]x[/]", "[link=http://e]y[/link]", "[@click=app.quit]z[/]")
CONTROLS = "\x1b]52;c;SGVsbG8=\x07\x1b[31m\x01\x08\x7f\x9b"
"""An OSC 52 clipboard write, a colour change, SOH, backspace, DEL and a C1 CSI (NUL
cannot be stored: validation refuses it, as PostgreSQL would)."""
CONTROLS_SHOWN = "␛]52;c;SGVsbG8=␇␛[31m␁␈␡\ufffd"
LONG = "W" * 3000
RAW_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def hostile(label: str) -> str:
    """``label`` followed by markup that would style, link and act, and control sequences."""
    return f"{label} {' '.join(MARKUP)} {CONTROLS}"


def hostile_fragments(label: str) -> list[str]:
    """What the screen must show for ``hostile(label)``."""
    return [label, *MARKUP, CONTROLS_SHOWN]


# Ids and names are shown in narrow places: markup and one escape sequence each.
CONFLICT_ID = "[b]o[/b]:1\x1b[2J"
FRESH_ID = "[i]n[/i]:2\x1b]0;t\x07"
AGREED_ID = "[u]a[/u]:3"
SOURCE = "[reverse]src[/]\x1b[5m"
LEAD = "[b]lea[/b]\x1b]0;x\x07"
ANN = "[red]ann[/red]\x1b[31m"
BO = "[@click=app.quit]bo[/]"
CY = "[i]cy[/i]\x1b[7m"


def shown(app: App[None]) -> str:
    """What the screen shows (toasts included), plus the whole content of its text widgets
    and tables: what is scrolled out of sight is on screen all the same."""
    parts = [screen_text(app)]
    for notification in app._notifications:  # toasts wrap: read what they were given
        assert not notification.markup, notification.message
        parts += [notification.title, notification.message]
    for widget in app.screen.query(Static):
        content = widget.render()
        parts.append(content.plain if isinstance(content, Content | Text) else str(content))
    for table in app.screen.query(DataTable):
        cells = [column.label for column in table.columns.values()]
        for row in range(table.row_count):
            cells += table.get_row_at(row)
        for cell in cells:
            # DataTable reads a str cell as markup: user text must come as Text.
            assert isinstance(cell, Text) or "[" not in str(cell), cell
            parts.append(cell.plain if isinstance(cell, Text) else str(cell))
    return "\n".join(parts)


def assert_literal(app: App[None], *fragments: str) -> None:
    text = shown(app)
    missing = [fragment for fragment in fragments if fragment not in text]
    assert missing == [], f"not shown as typed: {missing}"
    assert RAW_CONTROL.findall(text) == []  # every control character was made visible
    assert app.is_running  # nothing asked the app to quit


@pytest.fixture
def hostile_db(db_path: Path) -> Database:
    """A conflict, an agreed item and a fresh edited item, with hostile text everywhere."""
    db = open_database(db_path)
    # vetbench refuses such names now (db.people.check_person_name); a database made
    # before that, or written by hand, may hold them, and the app still shows them as typed.
    with db.transaction() as session:
        session.add(Person(name=LEAD, role=Role.LEAD))
        session.add_all(Person(name=name, role=Role.ANNOTATOR) for name in (ANN, CY))
    with db.transaction() as session:
        set_setting(session, "overlap", "2")
    choices = {label: hostile(f"event {label}") for label in "ABCD"}
    store_item(
        db,
        CONFLICT_ID,
        prompt=hostile("scenario"),
        choices=choices,
        key="DACB",
        explanation=f"{hostile('because')}\n{LONG}",
        source=SOURCE,
    )
    edit_item(db, LEAD, CONFLICT_ID, ItemEdit(note=hostile("note"), key="ADCB"))  # shown as history
    edit_item(db, LEAD, CONFLICT_ID, ItemEdit(note="back to the first key", key="DACB"))
    for name, comment in ((ANN, hostile("comment")), (BO, LONG)):
        submit_judgment(
            db,
            name,
            CONFLICT_ID,
            revision_number=3,
            blind_answer="ADCB",
            verdict="wrong-key",
            corrected_key="ADCB",
            comment=comment,
        )
    store_item(db, AGREED_ID, source=SOURCE)
    for name in (ANN, BO):
        submit_judgment(db, name, AGREED_ID, revision_number=1, blind_answer="DABC", verdict="keep")
    store_item(
        db,
        FRESH_ID,
        prompt=f"{hostile('question')} {LONG}",
        choices=choices,
        explanation=hostile("explained"),
        source=SOURCE,
    )
    edit_item(
        db, LEAD, FRESH_ID, ItemEdit(note=hostile("edit note"), prompt=hostile("edited question"))
    )
    submit_judgment(
        db,
        CY,
        AGREED_ID,
        revision_number=1,
        blind_answer="DABC",
        verdict="keep",
        comment=hostile("own comment"),
    )
    return db


async def test_review_blind_revealed_revisions_and_edit_show_hostile_text_literally(
    hostile_db: Database,
) -> None:
    async with running(make_app(hostile_db, CY)) as app:
        # Blind: the fresh item (the only one still open for cy), its id, source, choices.
        assert app.review_screen.item is not None and app.review_screen.item.id == FRESH_ID
        assert_literal(
            app,
            visible_text(FRESH_ID),
            visible_text(SOURCE),
            visible_text(CY),
            *hostile_fragments("edited question"),
            *hostile_fragments("event A"),
        )
        # Revealed: the explanation and the key in words.
        await press(app, "d", "a", "b", "c", "enter")
        assert_literal(app, *hostile_fragments("explained"), *hostile_fragments("event D"))
        # Revisions: the author, the change note and the diff of the text.
        revisions = await open_screen(app, "r", RevisionsScreen)
        await wait_until(pilot_of(app), lambda: bool(revisions.revisions), "the revisions")
        await settle(pilot_of(app))
        assert_literal(
            app,
            visible_text(LEAD),
            *hostile_fragments("edit note"),
            *hostile_fragments("edited question"),
        )
        await press(app, "escape")
        # The edit form (after a flawed verdict): every field shows the stored text visibly.
        edit = await open_screen(app, "f", EditScreen)
        prompt = edit.query_one("#edit-prompt", TextArea).text
        choice = edit.query(Input).filter(".choice-input")[0].value
        for value, label in ((prompt, "edited question"), (choice, "event A")):
            assert all(fragment in value for fragment in hostile_fragments(label))
            assert RAW_CONTROL.findall(value) == []
        assert_literal(app, visible_text(FRESH_ID), visible_text(SOURCE))
        await press(app, "escape")
        assert app.is_running


async def test_judged_list_jump_help_and_filter_show_hostile_text_literally(
    hostile_db: Database,
) -> None:
    async with running(make_app(hostile_db, CY)) as app:
        judged = await open_screen(app, "l", JudgedScreen)
        table = judged.query_one(DataTable)
        await wait_until(pilot_of(app), lambda: table.row_count == 1, "the judged items")
        comment = visible_text(hostile("own comment"))[:40]
        assert_literal(app, visible_text(AGREED_ID), comment)
        await press(app, "escape")
        # Jump to an id that does not exist: the refusal names it as typed.
        await open_screen(app, "j", PromptScreen)
        await press(app, *"[b]no[/b]", "enter")
        assert_literal(app, "there is no item '[b]no[/b]'")
        await press(app, "escape")
        await open_screen(app, "question_mark", HelpScreen)
        assert_literal(app, "vetbench review — keys", visible_text(CY))
        await press(app, "escape")
        # The queue filter lists the sources: open the source list.
        filters = await open_screen(app, "slash", FilterScreen)
        await press(app, "tab", "tab", "enter")  # past the search text and the kind
        listed = filters.query_one("#filter-sources", Select).query_one(OptionList)
        assert listed.has_focus  # the list is open
        shown_sources = [listed.get_option_at_index(i).prompt for i in range(listed.option_count)]
        assert [str(prompt) for prompt in shown_sources] == ["any source", visible_text(SOURCE)]
        assert all(isinstance(prompt, Text) for prompt in shown_sources)  # never markup
        assert_literal(app, visible_text(SOURCE))


async def test_evaluation_screen_lists_hostile_release_names_literally(
    hostile_db: Database,
) -> None:
    """A release named with markup (``[/]`` closing nothing) ended the app with a
    MarkupError when F4's Items list was opened."""
    statuses = ("pending", "in_review", "conflict", "agreed")
    for name in ("bad [/] close", "[bold]v1[/] [@click=app.quit]q[/]"):
        create_release(hostile_db, ReleaseRequest(name, statuses=statuses), lead=LEAD)
    async with running(make_app(hostile_db, LEAD)) as app:
        screen = await open_screen(app, "f4", EvaluationScreen)
        items = screen.query_one("#items", Select)
        items.focus()
        await press(app, "enter")
        listed = items.query_one(OptionList)
        assert listed.has_focus  # the list is open, drawn
        prompts = [listed.get_option_at_index(i).prompt for i in range(listed.option_count)]
        assert [str(prompt) for prompt in prompts[1:]] == [
            "release [bold]v1[/] [@click=app.quit]q[/]",
            "release bad [/] close",
        ]
        assert all(isinstance(prompt, Text) for prompt in prompts[1:])
        assert_literal(app, "release bad [/] close")


async def test_agreement_screen_shows_hostile_names_sources_and_ids_literally(
    hostile_db: Database,
) -> None:
    async with running(make_app(hostile_db, LEAD)) as app:
        screen = await open_screen(app, "f2", AgreementScreen)
        await wait_until(pilot_of(app), lambda: agreement_settled(screen), "the figures")
        for tab in ("annotators-tab", "breakdown-tab", "wrong-keys-tab"):
            screen.query_one(TabbedContent).active = tab
            await settle(pilot_of(app))
            assert_literal(app)
        assert_literal(
            app,
            visible_text(ANN),
            visible_text(BO),
            f"source: {visible_text(SOURCE)}",
            visible_text(CONFLICT_ID),
        )


async def test_conflict_list_case_and_lead_dialogs_show_hostile_text_literally(
    hostile_db: Database,
) -> None:
    async with running(make_app(hostile_db, LEAD)) as app:
        screen = await open_screen(app, "f3", AdjudicationScreen)
        pilot = pilot_of(app)
        await wait_until(pilot, lambda: screen.current is not None, "the conflict queue")
        await settle(pilot)
        assert_literal(
            app,
            visible_text(CONFLICT_ID),
            visible_text(SOURCE),
            visible_text(ANN),
            visible_text(BO),
            *hostile_fragments("scenario"),
            *hostile_fragments("event C"),
            *hostile_fragments("because"),
            *hostile_fragments("note"),
            *hostile_fragments("comment"),
            LONG,
        )
        # The lead's dialogs name the item and the lead as typed.
        await pilot.press("x")
        await wait_until(pilot, lambda: isinstance(app.screen, ReasonModal), "the reasons")
        assert_literal(app, f"Reject {visible_text(CONFLICT_ID)} because")
        await pilot.press("escape")
        await pilot.press("c")
        await wait_until(pilot, lambda: isinstance(app.screen, PromptScreen), "the key prompt")
        await pilot.press(*"[b]A[/b]", "enter")
        await pilot.pause()
        assert_literal(app, visible_text(CONFLICT_ID), "[b]A[/b]")
        await pilot.press("escape")
        await pilot.press("A")
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmModal), "the question")
        assert_literal(app, f"Approve all 1 agreed item as {visible_text(LEAD)}?")
        await pilot.press("n")
        await pilot.pause()
        assert app.is_running


def test_no_screen_notifies_but_through_the_literal_helper() -> None:
    """A notification may carry user text; ``notify_literally`` shows it as typed."""
    tui = Path(__file__).resolve().parent.parent / "reviewer" / "tui"
    offenders = []
    for path in sorted(tui.rglob("*.py")):
        if path.name == "literal.py":
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for function in ast.walk(tree):
            if not isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            for node in ast.walk(function):
                if (
                    isinstance(node, ast.Call)
                    and isinstance(node.func, ast.Attribute)
                    and node.func.attr == "notify"
                ):
                    offenders.append(f"{path.name}:{node.lineno}")
    assert offenders == []

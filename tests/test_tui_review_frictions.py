"""Small frictions of the review screen, driven with Pilot on a real database: an undo
that brings its judgment's details back, notices and the status line at 80 columns, and
long choices in the editor."""

from __future__ import annotations

import pytest
from helpers import EXPLANATION, press, running, store_item, stored_judgments
from textual.widgets import Input

from db.engine import Database
from reviewer.tui.app import make_app
from reviewer.tui.screens.edit import EditScreen
from reviewer.tui.screens.prompt import PromptScreen
from reviewer.tui.screens.review import Phase
from reviewer.tui.screens.verdict import AlternativesScreen


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

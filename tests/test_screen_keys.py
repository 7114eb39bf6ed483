"""Finding the screens and their tabs: [ and ] switch F2's and F4's tabs from anywhere
(Textual's Left and Right only while the tab bar has focus, which Tab takes away), the
footer says so at 80 columns, ``?`` lists them, and a lead's footers show F2, F3 and F4
at 80 columns."""

from __future__ import annotations

import pytest
from helpers import (
    ScreenHost,
    footer_keys,
    pilot_of,
    press,
    running,
    store_item,
    store_person,
    wait_until,
)
from textual.widgets import TabbedContent, Tabs

from db.engine import Database
from db.vocabulary import Role
from reviewer.tui.app import make_app
from reviewer.tui.screens.agreement import AgreementScreen
from reviewer.tui.screens.area import AreaScreen


@pytest.mark.parametrize("key", ["f2", "f4"])
async def test_brackets_switch_tabs_from_anywhere_and_the_footer_says_so_at_80_columns(
    database: Database, key: str
) -> None:
    store_person(database, "lea", Role.LEAD)
    store_item(database, "o:1", key="DACB")
    async with running(make_app(database, "lea")) as app:
        pilot = pilot_of(app)
        await pilot.resize_terminal(80, 24)
        await press(app, key)
        screen = app.screen
        assert isinstance(screen, AreaScreen)
        tabs = screen.query_one(TabbedContent)
        first = tabs.active
        await pilot.press("tab")  # what people do first: focus leaves the tab bar
        await pilot.pause()
        assert not isinstance(screen.focused, Tabs)
        await pilot.press("right_square_bracket")
        await wait_until(pilot, lambda: tabs.active != first, "the next tab")
        second = tabs.active
        await pilot.press("left_square_bracket")
        await wait_until(pilot, lambda: tabs.active == first, "the first tab again")
        await pilot.press("left_square_bracket")  # before the first: the last
        await wait_until(pilot, lambda: tabs.active not in (first, second), "the last tab")
        tabs.active = first
        await pilot.pause()
        shown = footer_keys(app)
        assert "Tabs" in shown and {"escape", "question_mark", "q"} <= set(shown), shown
        # ... and the lead's ways to the other screens, this one's own left out
        others = {"f2", "f3", "f4"} - {key}
        assert others <= set(shown) and key not in shown and "Screens" in shown, shown


async def test_the_help_of_a_screen_with_tabs_says_how_to_switch_them(database: Database) -> None:
    screen = AgreementScreen(database, "lea")
    async with ScreenHost(screen).run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        rows = {(row.keys, row.description) for row in screen.help_rows()}
        assert {("[", "Previous tab"), ("]", "Next tab")} <= rows
        assert ("← →", "switch tabs while the tab bar has focus") in rows


async def test_the_help_lists_keys_that_do_not_apply_at_the_moment(database: Database) -> None:
    """F3's o (the items a case names) was missing from its help while the case in sight
    named none: the help lists every key, with what it does."""
    from reviewer.tui.screens.adjudication import AdjudicationScreen

    screen = AdjudicationScreen(database, "lea")
    async with ScreenHost(screen).run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        assert not screen.check_action("other_items", ())  # no case: o does not apply
        described = {row.keys: row.description for row in screen.help_rows()}
        assert described["o"].startswith("The items the case names side by side")
        assert {"a", "c", "x", "u", "v", "r"} <= set(described)


@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)  # no SQL difference
@pytest.mark.parametrize(("role", "shown"), [(Role.LEAD, True), (Role.ANNOTATOR, False)])
async def test_a_leads_review_footer_shows_f3(database: Database, role: Role, shown: bool) -> None:
    """The lead opens on a blind item: F3 (the items waiting for decisions), with F2 and
    F4, is in the footer however narrow (at 80 columns it was the first key to go, in
    sight only from about 160); an annotator's footer has none (their F3 says it is for
    leads; F2 and F4 are in ``?``)."""
    store_person(database, "lea", role)
    store_item(database, "o:1", key="DACB")
    async with running(make_app(database, "lea")) as app:
        for size in ((200, 40), (80, 24)):
            await pilot_of(app).resize_terminal(*size)
            await pilot_of(app).pause()
            keys = footer_keys(app)
            assert ("f3" in keys) is shown, (size, keys)
            assert ({"f2", "f4"} <= set(keys)) is shown and {"question_mark", "q"} <= set(keys)

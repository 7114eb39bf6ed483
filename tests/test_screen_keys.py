"""Finding the screens and their tabs: [ and ] switch F2's and F4's tabs from anywhere
(Textual's Left and Right only while the tab bar has focus, which Tab takes away), the
footer says so at 80 columns, ``?`` lists them, and a lead's review footer shows F3."""

from __future__ import annotations

import pytest
from helpers import ScreenHost, pilot_of, press, running, store_item, store_person, wait_until
from textual.app import App
from textual.widgets import TabbedContent, Tabs
from textual.widgets._footer import FooterKey, FooterLabel  # no public module (8.2.8)

from db.engine import Database
from db.vocabulary import Role
from reviewer.tui.app import make_app
from reviewer.tui.screens.agreement import AgreementScreen
from reviewer.tui.screens.area import AreaScreen
from reviewer.tui.widgets.footer import KeyFooter


def footer_keys(app: App[None]) -> list[str]:
    """The keys and group labels the footer shows now, in order."""
    shown = []
    for child in app.screen.query_one(KeyFooter).query("*"):
        if not child.display or not child.parent or not child.parent.display:
            continue
        if isinstance(child, FooterKey) and child.parent is app.screen.query_one(KeyFooter):
            shown.append(child.key)
        elif isinstance(child, FooterLabel):
            shown.append(str(child.render()))
    return shown


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


async def test_the_help_of_a_screen_with_tabs_says_how_to_switch_them(database: Database) -> None:
    screen = AgreementScreen(database, "lea")
    async with ScreenHost(screen).run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        rows = {(row.keys, row.description) for row in screen.help_rows()}
        assert {("[", "Previous tab"), ("]", "Next tab")} <= rows
        assert ("← →", "switch tabs while the tab bar has focus") in rows


@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)  # no SQL difference
@pytest.mark.parametrize(("role", "shown"), [(Role.LEAD, True), (Role.ANNOTATOR, False)])
async def test_a_leads_review_footer_shows_f3(database: Database, role: Role, shown: bool) -> None:
    """The lead opens on a blind item: F3 (the items waiting for decisions) is in the footer
    where it fits; an annotator's footer has no F3 (their F3 says it is for leads)."""
    store_person(database, "lea", role)
    store_item(database, "o:1", key="DACB")
    async with running(make_app(database, "lea")) as app:
        await pilot_of(app).resize_terminal(200, 40)
        await pilot_of(app).pause()
        assert ("f3" in footer_keys(app)) is shown, footer_keys(app)

"""The test processes' settings of Textual (tests/textual_speed.py) are in force and change
no result: the CSS rules every app reads from the process's one cache are the rules
Textual's own parse makes of the same text, and a stylesheet under other variables gets
rules of its own; a headless screen drawn only for screenshots shows what one drawn after
every change shows."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from helpers import EXPLANATION, pilot_of, press, running, store_item
from textual._compositor import Compositor
from textual.css.model import RuleSet
from textual.css.stylesheet import Stylesheet
from textual_speed import drawing_every_update, parse_rules_per_app

from db.engine import Database, open_database
from reviewer.tui.app import ReviewApp, make_app
from reviewer.tui.timer import ActiveTimer


def described(rule: RuleSet) -> tuple[object, ...]:
    """What a parsed rule says (its ``css`` property fails on some of Textual's own rules,
    and a layout compares by identity, so by its repr)."""
    return (rule.selectors, repr(rule.styles.get_rules()), rule.is_default_rules, rule.tie_breaker)


async def test_two_apps_share_the_rules_textual_itself_parses(database: Database) -> None:
    async with running(make_app(database, "alice")) as app:
        first = app.stylesheet
        rules_of_first = list(first.rules)
    async with running(make_app(database, "alice")) as app:
        second = app.stylesheet
        assert second is not first
        assert [id(rule) for rule in second.rules] == [id(rule) for rule in rules_of_first]
    sources = list(second.source.items())
    assert len(sources) > 20  # every widget's DEFAULT_CSS and the app's own
    for read_from, source in sources:
        fresh = Stylesheet(variables=second._variables)
        where = (source.content, read_from, source.is_defaults, source.tie_breaker, source.scope)
        parsed = parse_rules_per_app(fresh, *where)
        shared = second._parse_rules(*where)
        assert [described(rule) for rule in shared] == [described(rule) for rule in parsed], (
            read_from
        )


def test_other_variables_parse_anew() -> None:
    css = "Label { color: $accent; }"
    blue = Stylesheet(variables={"accent": "blue"})._parse_rules(css, ("t", "Label"))
    red = Stylesheet(variables={"accent": "red"})._parse_rules(css, ("t", "Label"))
    assert blue is not red
    assert "#0000FF" in blue[0].css and "#FF0000" in red[0].css


async def screenshots_of_a_review(database: Database) -> list[str]:
    """What the review app shows, as SVG, after each of a reviewer's steps on two items:
    keys on the blind item, the reveal, a verdict, the help, a resize."""
    store_item(database, "econ:1", key="DABC", explanation=EXPLANATION)
    store_item(database, "econ:2", key="ABCD", prompt="Order the [bold]second[/] set.")
    steps = [(), ("d", "a"), ("backspace", "1", "2"), ("enter",), ("k",), ("b", "a")]
    steps += [("question_mark",), ("escape",)]
    shots = []
    # The item clock stands still: the seconds an item took are the same in both runs.
    app = make_app(database, "alice", timer=ActiveTimer(clock=lambda: 0.0))
    async with running(app, size=(80, 24)) as app:
        for keys in steps:
            await press(app, *keys)
            shots.append(await counted_screenshot(app))
        await pilot_of(app).resize_terminal(120, 35)
        await press(app)
        shots.append(await counted_screenshot(app))
    return shots


async def counted_screenshot(app: ReviewApp) -> str:
    """The screenshot once the progress line has its figures: the app counts them a moment
    after each step (a timer), which a quick step's screenshot came before ("counting…")."""
    app.review_screen.count_progress()
    await press(app)  # waits for the count
    return app.export_screenshot()


async def test_a_headless_screen_drawn_only_when_looked_at_looks_the_same(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The tests' headless screens skip drawing between screenshots (tests/textual_speed.py);
    every screenshot along a review is the one Textual's drawing after every change gives."""
    draws: list[bool] = []  # each update the compositor renders: a screenshot's or not
    render_update = Compositor.render_update

    def counted(compositor: Compositor, full: bool = False, **options: Any) -> Any:
        draws.append(full)
        return render_update(compositor, full, **options)

    monkeypatch.setattr(Compositor, "render_update", counted)
    skipped = await screenshots_of_a_review(open_database(tmp_path / "skipping.db"))
    assert draws == [True] * 9  # the screenshots alone
    with drawing_every_update():
        drawn = await screenshots_of_a_review(open_database(tmp_path / "drawing.db"))
    assert draws.count(False) > 20
    assert len(set(skipped)) >= 7  # the steps change what is shown
    for step, (one, other) in enumerate(zip(skipped, drawn, strict=True)):
        assert one == other, step

"""The test processes' setting of Textual (tests/textual_speed.py) is in force and changes
no result: the CSS rules every app reads from the process's one cache are the rules
Textual's own parse makes of the same text, and a stylesheet under other variables gets
rules of its own."""

from __future__ import annotations

from helpers import running
from textual.css.model import RuleSet
from textual.css.stylesheet import Stylesheet
from textual_speed import parse_rules_per_app

from db.engine import Database
from reviewer.tui.app import make_app


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

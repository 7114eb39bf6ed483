"""Two settings of Textual (8.2.8) for the test processes, which start the review app
hundreds of times each; ``tests/conftest.py`` applies them with :func:`apply` before any
test runs, and ``tests/test_textual_speed.py`` checks that they change no result.

- **Idle waits in 5 ms slices.**  Textual's pilot waits for the app to go idle twice
  after every key it presses and once in every pause: it sleeps in slices of 1/50 s until
  one slice in which the process used under a twentieth of the slice in CPU
  (``textual._wait``, whose constants are read at each call).  So each key slept at least
  40 ms however little the app had to do: half the wall time of a review-app test.
  Slices of 5 ms keep the same test (under a twentieth of the slice) and took the review
  tests from 76 s to 55 s on one process, the whole suite 9 min 17 s to 8 min 17 s
  (2026-12-06).  Slices of 1 ms were slower: the event loop's own work in a slice then
  passes the threshold, and each wait runs on to its one-second limit.
- **CSS parsed once a process.**  Each app has a stylesheet of its own that parses every
  widget's ``DEFAULT_CSS`` and the app's CSS again, with a cache that lives as long as the
  app: a fifth of the CPU of starting the review app.  The parsed rules of one text, at
  one place, under the same variables are the same for every app, so one cache for the
  process serves them all (Textual reads the rules it parsed and never changes them).
"""

from __future__ import annotations

from typing import Any

from textual import _wait as textual_wait
from textual.css.model import RuleSet
from textual.css.stylesheet import Stylesheet

IDLE_SLICE_S = 0.005

_parse_rules_per_app = Stylesheet._parse_rules
_rules_parsed: dict[tuple[Any, ...], list[RuleSet]] = {}


def _parse_rules_once(
    stylesheet: Stylesheet,
    css: str,
    read_from: Any,
    is_default_rules: bool = False,
    tie_breaker: int = 0,
    scope: str = "",
) -> list[RuleSet]:
    """``Stylesheet._parse_rules`` with the cache shared by every stylesheet of the process:
    its own key (the text, where it was read, its kind, tie-breaker, scope) and the
    variables the text was parsed under."""
    key = (
        css,
        read_from,
        is_default_rules,
        tie_breaker,
        scope,
        tuple(sorted(stylesheet._variables.items())),
    )
    rules = _rules_parsed.get(key)
    if rules is None:
        rules = _parse_rules_per_app(
            stylesheet, css, read_from, is_default_rules, tie_breaker, scope
        )
        _rules_parsed[key] = rules
    return rules


def apply() -> None:
    """Set both; refuse loudly where this version of Textual no longer has what they set."""
    assert hasattr(textual_wait, "SLEEP_GRANULARITY") and hasattr(textual_wait, "SLEEP_IDLE"), (
        "textual._wait changed: see tests/textual_speed.py"
    )
    assert hasattr(Stylesheet, "_parse_rules") and hasattr(Stylesheet(), "_variables"), (
        "textual.css.stylesheet changed: see tests/textual_speed.py"
    )
    textual_wait.SLEEP_GRANULARITY = IDLE_SLICE_S
    textual_wait.SLEEP_IDLE = IDLE_SLICE_S / 20
    Stylesheet._parse_rules = _parse_rules_once  # type: ignore[method-assign]


def parse_rules_per_app(
    stylesheet: Stylesheet,
    css: str,
    read_from: Any,
    is_default_rules: bool,
    tie_breaker: int,
    scope: str,
) -> list[RuleSet]:
    """Textual's own parse, for the test that compares the two."""
    return _parse_rules_per_app(stylesheet, css, read_from, is_default_rules, tie_breaker, scope)

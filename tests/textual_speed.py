"""Two settings of Textual (8.2.8) for the test processes, which start the review app
hundreds of times each; ``tests/conftest.py`` applies them with :func:`apply` before any
test runs, and ``tests/test_textual_speed.py`` checks that they change no result.

**CSS parsed once a process.**  Each app has a stylesheet of its own that parses every
widget's ``DEFAULT_CSS`` and the app's CSS again, with a cache that lives as long as the
app: a fifth of the CPU of starting the review app.  The parsed rules of one text, at one
place, under the same variables are the same for every app, so one cache for the process
serves them all (Textual reads the rules it parsed and never changes them).

**A headless screen drawn only when a test looks at it.**  After every change a screen
renders the cells that changed into an update for the terminal; a headless app's driver
then throws that update away (``App._display``).  A test sees the screen only through a
screenshot (``App.export_screenshot``: the whole screen, rendered anew) and the widgets'
own state, which rendering does not change, so the headless top screen skips making the
update and forgets what was dirty, as the render would have.  Layout, focus, mouse-over
and every message are as before.  The review app's, the narrow screens' and the snapshot
tests (165 SQLite tests, one process) took 13% less CPU: 191 and 179 CPU-s against 221
and 203 drawing every update, runs taken in turn (2026-12-07).  Apps that run in a real
terminal (``vetbench serve``'s, tmux) are drawn as always.

**Idle waits left as Textual has them.**  The pilot waits for the app to go idle twice
after every key: it sleeps in slices of 1/50 s until one slice in which the process used
under a twentieth of it in CPU (``textual._wait``), so each key sleeps 40 ms at least,
half the wall time of a review-app test.  Slices of 5 ms took the whole suite from 9 min
17 s to 8 min 17 s (2026-12-06), but a slice shorter than the screen's update period
(1/60 s) can end before a pending layout or notice is made, and tests that read the
screen right after a wait then failed now and then (three of them in two runs of the
app's tests on a busy machine).  A sure wait needs to know the app's own pending work,
which Textual's pilot does not say; until it does, the slices stay 1/50 s.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from textual.css.model import RuleSet
from textual.css.stylesheet import Stylesheet
from textual.screen import Screen

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


_draw_screen = Screen._compositor_refresh


def _draw_unless_headless(screen: Screen[Any]) -> None:
    """``Screen._compositor_refresh`` without the update no terminal would get: for the
    headless app's top screen, what was dirty is forgotten (as rendering it would) and
    the mouse-over is brought up to date (as after a render)."""
    app = screen.app
    if app.is_headless and not app.is_inline and screen is app.screen:
        screen._compositor._dirty_regions.clear()
        screen._dirty_widgets.clear()
        app._update_mouse_over(screen)
        return
    _draw_screen(screen)


def apply() -> None:
    """Share the parse and skip the headless draw; refuse loudly where this version of
    Textual no longer has what they replace."""
    assert hasattr(Stylesheet, "_parse_rules") and hasattr(Stylesheet(), "_variables"), (
        "textual.css.stylesheet changed: see tests/textual_speed.py"
    )
    screen_sets = Screen.__init__.__code__.co_names
    assert hasattr(Screen, "_compositor_refresh") and "_dirty_widgets" in screen_sets, (
        "textual.screen changed: see tests/textual_speed.py"
    )
    Stylesheet._parse_rules = _parse_rules_once  # type: ignore[method-assign]
    Screen._compositor_refresh = _draw_unless_headless  # type: ignore[method-assign,assignment]


def drawing_every_update() -> contextlib.AbstractContextManager[None]:
    """Headless screens drawn after every change, as Textual itself does (for the test
    that compares the two)."""
    return _replaced(Screen, "_compositor_refresh", _draw_screen)


@contextlib.contextmanager
def _replaced(owner: type, name: str, value: Any) -> Iterator[None]:
    before = owner.__dict__[name]
    setattr(owner, name, value)
    try:
        yield
    finally:
        setattr(owner, name, before)


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

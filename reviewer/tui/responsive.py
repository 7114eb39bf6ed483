"""Where the layout changes with the terminal's size: the classes every screen gets.

Textual sets one class of each list on the screen from its width and height
(``App.HORIZONTAL_BREAKPOINTS``); the style sheets say what changes.  Below
``STACK_BELOW`` columns the review screen stacks its panels (the item above, the
answer or the reveal below); below ``FOLD_BELOW`` rows the blank lines between
parts fold away first, so the item, the answer and the keys still fit at 80×24.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from textual.screen import Screen

STACK_BELOW = 100
FOLD_BELOW = 30

WIDTH_CLASSES: list[tuple[int, str]] = [(0, "-narrow"), (STACK_BELOW, "-wide")]
HEIGHT_CLASSES: list[tuple[int, str]] = [(0, "-short"), (FOLD_BELOW, "-tall")]


def size_classes(width: int, height: int) -> dict[str, bool]:
    """Which of the classes above apply at ``width`` × ``height`` (as Textual picks them)."""
    chosen: dict[str, bool] = {}
    for breakpoints, size in ((WIDTH_CLASSES, width), (HEIGHT_CLASSES, height)):
        applying = [name for minimum, name in breakpoints if size >= minimum][-1:]
        chosen.update({name: name in applying for _minimum, name in breakpoints})
    return chosen


def apply_size_classes(screen: Screen[Any]) -> None:
    """Give ``screen`` its classes now, from the app's size: call it first thing in its
    ``compose`` (or on its ``Compose`` event), before it has widgets.

    Textual sets them at the screen's first resize, after a first layout without
    them; a text area wrapped at that first width kept stale lines.  Given before the
    widgets exist, they are styled once, with the classes; given when mounted, every
    widget on the screen was styled again (a sixth of the stylesheet applications in
    the snapshot tests)."""
    screen.update_classes(size_classes(*screen.app.size))

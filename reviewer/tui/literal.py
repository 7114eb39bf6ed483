"""Item text is user data: show it literally, as plain ``rich.text.Text``.

Rich markup in ``Text`` is never parsed, so ``[bold]`` or ``[@click=app.quit]``
stay characters.  Control characters are another matter: an ESC or BEL sent to
the terminal could restyle the screen or retitle the window, so they are swapped
for visible stand-ins (ESC becomes ``␛``, from the Unicode "control pictures"
block) before any widget sees the text.  Newlines and tabs keep their meaning.

The ``Text`` wraps where a typesetter would (never inside "1.77万元", never a line
starting with "，": :mod:`reviewer.tui.line_broken_text`).  Item and model text goes
through :func:`literal_item`, which shows its display form (HTML entities decoded,
LaTeX as Unicode: :mod:`reviewer.display_text`) unless ``raw`` is asked for.

Widgets get :func:`literal` (a ``Text``) or :func:`visible_text` (for an input's
value); notifications go through :func:`notify_literally`.  No screen calls
``notify`` itself (``tests/test_tui_hostile_text.py`` checks).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rich.text import Text

from db.visible_text import visible_text
from reviewer.display_text import display_text
from reviewer.tui.line_broken_text import LineBrokenText, line_broken

if TYPE_CHECKING:
    from textual.app import App
    from textual.notifications import SeverityLevel
    from textual.widget import Widget

__all__ = [
    "line_broken",
    "literal",
    "literal_item",
    "notify_literally",
    "visible_text",
    "withdraw_notice",
]


def literal(value: str, style: str = "") -> Text:
    """A ``Text`` that shows ``value`` exactly as typed: no markup, no terminal controls."""
    return LineBrokenText(visible_text(value), style=style, end="")


def none_row(columns: int) -> list[Text]:
    """The cells of the one row an empty table shows: "none", dimmed, then blanks."""
    return [Text("none", style="dim"), *(Text() for _ in range(columns - 1))]


def literal_item(value: str, style: str = "", *, raw: bool = False) -> Text:
    """Item or model text as shown: its display form, or exactly as stored when ``raw``."""
    return literal(display_text(value, raw=raw), style)


def notify_literally(
    node: Widget | App[Any],
    message: str,
    *,
    title: str = "",
    severity: SeverityLevel = "information",
    timeout: float | None = None,
) -> None:
    """``node.notify(message)`` for a message that may hold user text (item ids, names,
    a database error): shown as typed, never read as markup, controls made visible."""
    node.notify(
        visible_text(message),
        title=visible_text(title),
        severity=severity,
        timeout=timeout,
        markup=False,
    )


def withdraw_notice(app: App[Any], message: str) -> None:
    """Take back the notices that say ``message`` (as :func:`notify_literally` said it):
    one that what happened next contradicts.  Textual 8.2.8 (pinned) has no public call
    for one notice; this does what a click on its toast does (``Toast._expire``): the app
    forgets the notice, and its toast goes with the holder Textual wraps a toast in.

    ``App._unnotify`` alone has the toast rack remove the toast but keep its holder,
    empty: in F3 at 80 columns, where the notices take rows of their own, that holder
    kept a blank row under the header once every notice had gone."""
    from textual.widgets._toast import ToastHolder, ToastRack  # no public module (8.2.8)

    said = visible_text(message)
    for notification in list(app._notifications):
        if notification.message == said:
            app._unnotify(notification, refresh=False)
            held = ToastRack._toast_id(notification)
            for screen in app.screen_stack:
                for holder in screen.query(ToastHolder):
                    if holder.id == held:
                        holder.remove()

"""Item text is user data: show it literally, as plain ``rich.text.Text``.

Rich markup in ``Text`` is never parsed, so ``[bold]`` or ``[@click=app.quit]``
stay characters.  Control characters are another matter: an ESC or BEL sent to
the terminal could restyle the screen or retitle the window, so they are swapped
for visible stand-ins (ESC becomes ``␛``, from the Unicode "control pictures"
block) before any widget sees the text.  Newlines and tabs keep their meaning.

Widgets get :func:`literal` (a ``Text``) or :func:`visible_text` (for an input's
value); notifications go through :func:`notify_literally`.  No screen calls
``notify`` itself (``tests/test_tui_hostile_text.py`` checks).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rich.text import Text

if TYPE_CHECKING:
    from textual.app import App
    from textual.notifications import SeverityLevel
    from textual.widget import Widget

_KEEP = {"\n", "\t"}
_DEL_PICTURE = "\u2421"  # ␡
_C1_PICTURE = "\ufffd"  # no control pictures exist for C1 codes; show a replacement mark


def _visible(char: str) -> str:
    code = ord(char)
    if char in _KEEP:
        return char
    if code < 0x20:
        return chr(0x2400 + code)  # ␀ .. ␟, e.g. ESC -> ␛
    if code == 0x7F:
        return _DEL_PICTURE
    if 0x80 <= code < 0xA0:
        return _C1_PICTURE
    return char


_TABLE = {code: _visible(chr(code)) for code in [*range(0x20), 0x7F, *range(0x80, 0xA0)]}


def visible_text(value: str) -> str:
    """``value`` with control characters replaced by visible symbols (``\\x1b`` -> ``␛``)."""
    return value.replace("\r\n", "\n").translate(_TABLE)


def literal(value: str, style: str = "") -> Text:
    """A ``Text`` that shows ``value`` exactly as typed: no markup, no terminal controls."""
    return Text(visible_text(value), style=style, end="")


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

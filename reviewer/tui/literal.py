"""Item text is user data: show it literally, as plain ``rich.text.Text``.

Rich markup in ``Text`` is never parsed, so ``[bold]`` or ``[@click=app.quit]``
stay characters.  Control characters are another matter: an ESC or BEL sent to
the terminal could restyle the screen or retitle the window, so they are swapped
for visible stand-ins (ESC becomes ``␛``, from the Unicode "control pictures"
block) before any widget sees the text.  Newlines and tabs keep their meaning.
"""

from __future__ import annotations

from rich.text import Text

from db.visible_text import visible_text

__all__ = ["literal", "visible_text"]


def literal(value: str, style: str = "") -> Text:
    """A ``Text`` that shows ``value`` exactly as typed: no markup, no terminal controls."""
    return Text(visible_text(value), style=style, end="")

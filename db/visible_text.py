"""Untrusted text made safe to show: control characters become visible stand-ins.

An ESC, BEL or OSC sequence sent to a terminal can restyle the screen, retitle the
window or write to the clipboard, and a newline inside a name can forge a table
line.  Both interfaces show user and model text through this one mapping: the
review app (``reviewer.tui.literal``) and the command line
(``reviewer.cli.output.terminal_text``).  Standard library only, so either side
imports it without loading the other.

- C0 controls become the Unicode "control pictures" (ESC -> ``␛``, NUL -> ``␀``);
- DEL becomes ``␡``; C1 controls (U+0080-U+009F, which some terminals obey as CSI
  and OSC) and the bidirectional overrides and isolates (which reorder what is shown)
  become ``�``, since no pictures exist for them;
- :func:`visible_text` keeps newlines and tabs (multi-line text);
  :func:`one_line` shows them too, so a value always stays on its line;
- :func:`east_asian_cell_len` counts the terminal cells text takes (Chinese two a
  character), for columns that line up; the line breaking of item text and the
  evaluator's figures both measure with it.
"""

from __future__ import annotations

import unicodedata

KEPT_IN_TEXT = frozenset({"\n", "\t"})
DEL_PICTURE = "\u2421"  # ␡
NO_PICTURE = "\ufffd"  # for C1 codes and bidirectional controls
ELLIPSIS = "…"
_BIDI_CONTROLS = [*range(0x202A, 0x202F), *range(0x2066, 0x206A)]


def _picture(code: int) -> str:
    if code < 0x20:
        return chr(0x2400 + code)  # ␀ .. ␟, e.g. ESC -> ␛, LF -> ␊
    if code == 0x7F:
        return DEL_PICTURE
    return NO_PICTURE


# Every character that must never reach a screen as itself -> what is shown instead.
CONTROL_PICTURES: dict[int, str] = {
    code: _picture(code) for code in [*range(0x20), 0x7F, *range(0x80, 0xA0), *_BIDI_CONTROLS]
}
_MULTI_LINE = {code: p for code, p in CONTROL_PICTURES.items() if chr(code) not in KEPT_IN_TEXT}


def visible_text(value: str) -> str:
    """``value`` with control characters shown (``\\x1b`` -> ``␛``); newlines and tabs kept."""
    return value.replace("\r\n", "\n").translate(_MULTI_LINE)


def one_line(value: str, width: int | None = None) -> str:
    """``value`` on one line, every control character shown (a newline is ``␊``).

    With ``width``, a longer value is cut to ``width`` characters ending in ``…``.
    """
    shown = value.translate(CONTROL_PICTURES)
    if width is not None and len(shown) > width:
        return shown[: max(0, width - 1)] + ELLIPSIS
    return shown


def east_asian_cell_len(text: str) -> int:
    """Terminal cells ``text`` takes: wide and full-width characters two, marks none."""
    cells = 0
    for character in text:
        if unicodedata.combining(character) or unicodedata.category(character) in ("Mn", "Me"):
            continue
        if character in "\u200b\u200c\u200d\u2060\ufeff":
            continue
        cells += 2 if unicodedata.east_asian_width(character) in ("W", "F") else 1
    return cells

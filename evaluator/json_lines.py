"""The evaluator's small input files (shots, scripts, articles): their text read as UTF-8;
their lines are parsed by :func:`db.json_input.json_lines`, and each caller words its own
problems, naming the file and line."""

from __future__ import annotations

from pathlib import Path

from db.formats.base import FormatError, first_bad_utf8_line, read_text

__all__ = ["read_input_text"]


def read_input_text(path: Path) -> str:
    """The file's text (see :func:`db.formats.base.read_text`); a :class:`FormatError` when it
    cannot be read, is empty, or holds bytes that are not UTF-8 (``error.line``: the first)."""
    text = read_text(path)
    bad_line = first_bad_utf8_line(text)
    if bad_line is not None:
        raise FormatError(str(path), "not valid UTF-8 text", bad_line)
    return text

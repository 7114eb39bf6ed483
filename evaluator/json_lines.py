"""The evaluator's small input files (shots, scripts, articles): their text, and JSON Lines
read line by line; each caller words its own problems, naming the file and line."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from db.formats.base import FormatError, first_bad_utf8_line, read_text

__all__ = ["JsonLine", "json_lines", "read_input_text"]


def read_input_text(path: Path) -> str:
    """The file's text (see :func:`db.formats.base.read_text`); a :class:`FormatError` when it
    cannot be read, is empty, or holds bytes that are not UTF-8 (``error.line``: the first)."""
    text = read_text(path)
    bad_line = first_bad_utf8_line(text)
    if bad_line is not None:
        raise FormatError(str(path), "not valid UTF-8 text", bad_line)
    return text


@dataclass(frozen=True)
class JsonLine:
    """One non-blank line: its parsed value, or why it is not JSON."""

    number: int  # 1-based, counting blank lines too
    value: Any  # as ``json.loads`` gives it; None when ``error`` is set
    error: json.JSONDecodeError | None = None


def json_lines(lines: Iterable[str]) -> Iterator[JsonLine]:
    """Every non-blank line parsed as JSON; a malformed line comes with its error."""
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            parsed = json.loads(line)
        except json.JSONDecodeError as error:
            yield JsonLine(number, None, error)
        else:
            yield JsonLine(number, parsed)

"""JSON Lines read line by line, for the evaluator's small input files (shots, scripts,
articles): each caller words its own problems, naming the file and line."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

__all__ = ["JsonLine", "json_lines"]


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

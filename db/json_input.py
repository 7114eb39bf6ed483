"""JSON a user hands vetbench, read strictly: the one decoder every JSON input goes through
(item files, judging sheets, shot, script and article files, exports read back).

Besides malformed text it refuses what Python's ``json`` lets through without a word: a
key given twice in one object (the last would win, the first be lost), ``NaN``,
``Infinity`` and ``-Infinity`` (and numbers too large for a float, which read as
infinity), none of which is JSON, a whole number longer than Python converts (4,300
digits), and a ``\\uD800``-``\\uDFFF`` escape that is not half of a pair (no character at
all).  Each refusal is a :class:`JsonInputError` with the line and column it
was found at, as a malformed text's is; each reader says it with its file and line.
"""

from __future__ import annotations

import json
import math
import re
import sys
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from json import decoder, scanner
from typing import Any

__all__ = ["JsonInputError", "JsonLine", "json_lines", "loads", "repeated_key"]

# Python's own limit on converting digits to an int (``sys.set_int_max_str_digits``).
MAX_INT_DIGITS = sys.int_info.default_max_str_digits
_SPACE = re.compile(r"[ \t\n\r]*")


class JsonInputError(ValueError):
    """Why a text is not JSON vetbench takes: ``msg``, and where (``lineno``, 1-based, and
    ``colno``, None when the place is not known: a text nested too deeply)."""

    def __init__(self, msg: str, lineno: int | None = None, colno: int | None = None) -> None:
        super().__init__(msg)
        self.msg = msg
        self.lineno = lineno
        self.colno = colno

    @property
    def described(self) -> str:
        """The reason and its column: ``Expecting value (column 5)``."""
        return f"{self.msg} (column {self.colno})" if self.colno is not None else self.msg


def repeated_key(key: str) -> str:
    """What is said of an object that gives ``key`` twice."""
    return f"key {json.dumps(key, ensure_ascii=False)} is given twice in one object"


class _Refused(Exception):
    """Well-formed JSON vetbench does not take; ``pos``: where, once known."""

    def __init__(self, msg: str) -> None:
        super().__init__(msg)
        self.msg = msg
        self.pos: int | None = None


def _object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    value = dict(pairs)
    if len(value) != len(pairs):
        seen: set[str] = set()
        key = next(key for key, _ in pairs if key in seen or seen.add(key))  # type: ignore[func-returns-value]
        raise _Refused(repeated_key(key))
    return value


def _constant(name: str) -> float:
    raise _Refused(f"{name} is not a JSON number")


def _float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise _Refused(f"the number {text[:20]}{'…' if len(text) > 20 else ''} is too large")
    return value


def _int(text: str) -> int:
    digits = len(text.lstrip("-"))
    if digits > MAX_INT_DIGITS:
        raise _Refused(
            f"a whole number of {digits:,} digits is longer than {MAX_INT_DIGITS:,} digits"
        )
    return int(text)


_HOOKS: dict[str, Any] = {
    "object_pairs_hook": _object,
    "parse_constant": _constant,
    "parse_float": _float,
    "parse_int": _int,
}
_DECODER = json.JSONDecoder(**_HOOKS)


def loads(text: str) -> Any:
    """``text`` as JSON; a :class:`JsonInputError` when it is not JSON vetbench takes."""
    try:
        value = _DECODER.decode(text)
    except json.JSONDecodeError as error:
        raise JsonInputError(error.msg, error.lineno, error.colno) from None
    except RecursionError:
        raise JsonInputError("nested too deeply") from None
    except _Refused as refused:
        raise _located(text, refused) from None
    if "\\u" in text and (lone := _lone_surrogate_escape(text)) is not None:
        escape, position = lone
        where = json.JSONDecodeError("", text, position)
        raise JsonInputError(
            f"\\u{escape} is half of a surrogate pair, not a character", where.lineno, where.colno
        )
    return value


# Every escape of a JSON text already decoded (so each backslash starts one): a ``\\uXXXX``
# with its four digits, or a one-character escape.
_ESCAPE = re.compile(r"\\(?:u([0-9a-fA-F]{4})|.)")


def _lone_surrogate_escape(text: str) -> tuple[str, int] | None:
    """The first ``\\uD800``-``\\uDFFF`` escape of ``text`` that is not one half of a pair
    (a high one right before a low one), and where it is.  Python decodes such a string
    to a lone surrogate, which is no character: stored, it was said as "not valid UTF-8
    text", sending the user to re-save a file that is UTF-8 already."""
    pending: tuple[str, int, int] | None = None  # a high surrogate escape: digits, start, end
    for match in _ESCAPE.finditer(text):
        digits = match.group(1)
        code = int(digits, 16) if digits else None
        is_low = code is not None and 0xDC00 <= code <= 0xDFFF
        if pending is not None:
            if is_low and match.start() == pending[2]:
                pending = None
                continue
            return pending[0], pending[1]
        if code is not None and 0xD800 <= code <= 0xDBFF:
            pending = (digits, match.start(), match.end())
        elif is_low:
            return digits, match.start()
    return None if pending is None else (pending[0], pending[1])


def _located(text: str, refused: _Refused) -> JsonInputError:
    """The refusal with its line and column: the text read again, slowly, by the
    pure-Python scanner, which can say where each value starts (only a refused text is)."""
    start = _SPACE.match(text)
    try:
        _LocatingDecoder().scan_once(text, start.end() if start else 0)
    except _Refused as again:
        refused = again
    except (RecursionError, StopIteration, ValueError):
        pass
    if refused.pos is None:
        return JsonInputError(refused.msg)
    where = json.JSONDecodeError(refused.msg, text, refused.pos)
    return JsonInputError(refused.msg, where.lineno, where.colno)


def _locating(scan_once: Any) -> Any:
    def scan(text: str, index: int) -> Any:
        try:
            return scan_once(text, index)
        except _Refused as refused:
            if refused.pos is None:
                refused.pos = index
            raise

    return scan


def _located_object(
    s_and_end: tuple[str, int], strict: bool, scan_once: Any, *args: Any, **kwargs: Any
) -> Any:
    try:
        return decoder.JSONObject(  # type: ignore[attr-defined]
            s_and_end, strict, _locating(scan_once), *args, **kwargs
        )
    except _Refused as refused:
        if refused.pos is None:  # a key given twice: the object's opening brace
            refused.pos = s_and_end[1] - 1
        raise


def _located_array(s_and_end: tuple[str, int], scan_once: Any, *args: Any, **kwargs: Any) -> Any:
    return decoder.JSONArray(s_and_end, _locating(scan_once), *args, **kwargs)  # type: ignore[attr-defined]


class _LocatingDecoder(json.JSONDecoder):
    def __init__(self) -> None:
        super().__init__(**_HOOKS)
        self.parse_object = _located_object
        self.parse_array = _located_array
        self.scan_once = _locating(scanner.py_make_scanner(self))  # type: ignore[attr-defined]


@dataclass(frozen=True)
class JsonLine:
    """One non-blank line: its parsed value, or why it is not JSON vetbench takes."""

    number: int  # 1-based, counting blank lines too
    value: Any  # as :func:`loads` gives it; None when ``error`` is set
    error: JsonInputError | None = None


def json_lines(lines: Iterable[str]) -> Iterator[JsonLine]:
    """Every non-blank line parsed as JSON; a line that is not comes with its error."""
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            # Without its line break: an error at the end of the line is then told at its
            # column, not at "column 1" of the next line.
            parsed = loads(line.rstrip("\r\n"))
        except JsonInputError as error:
            yield JsonLine(number, None, error)
        else:
            yield JsonLine(number, parsed)

"""EconLogicQA CSV: ``Question,A,B,C,D,Answer`` with the key written like ``D, A, C, B``.

More event columns (``E``, ``F``, ...) are allowed, and so is an ``Explanation``
column.  A row may leave trailing event cells empty when it has fewer events than
the header.  Columns the format does not know are kept in the item's meta and
written back on export.  An empty cell there, as an empty Explanation, is no value:
the CSV cannot tell it from a row without the column.  Meta from elsewhere that would
not read back as the same columns (``extra_columns_problems``) is refused on import
and on export.
"""

from __future__ import annotations

import csv
import difflib
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any, TextIO

from db.answers import LETTERS, format_answer
from db.formats.base import (
    ARTICLES_NOT_ITEMS,
    STAMP_FIELDS,
    FormatError,
    InputFile,
    ParsedRecord,
    Place,
    UnwritableItem,
    allow_long_csv_fields,
    check_csv_header,
    is_article,
    read_lines,
    stamp_fields,
    stated_explanation,
)
from db.json_types import JsonObject
from db.validation import ItemDraft, Problem, language_of
from db.visible_text import one_line
from db.vocabulary import ItemKind

NAME = "econlogicqa"
KINDS = frozenset({ItemKind.ORDERING})
QUESTION, ANSWER, EXPLANATION = "Question", "Answer", "Explanation"
EXTRA_COLUMNS_META = "extra_columns"  # meta key for columns the format does not know


def is_own_column(name: str) -> bool:
    """A column the format reads itself (an event letter included), never an extra one."""
    own = (QUESTION, ANSWER, EXPLANATION, *STAMP_FIELDS)
    return name in own or (len(name) == 1 and name in LETTERS)


def extra_columns_problems(meta: JsonObject) -> list[Problem]:
    """Why ``meta``'s extra columns cannot be written as CSV columns that read back as they
    are (fields under ``meta``): an object of text values, no name one of the format's own."""
    extra = meta.get(EXTRA_COLUMNS_META, {})
    if not isinstance(extra, dict):
        got = type(extra).__name__
        return [
            Problem(EXTRA_COLUMNS_META, f"must be an object of column names and text, got {got}")
        ]
    problems: list[Problem] = []
    for name, value in extra.items():
        where = f"{EXTRA_COLUMNS_META}.{name}"
        if is_own_column(name):
            problems.append(Problem(where, f"{name} is a column of EconLogicQA CSV itself"))
        elif not isinstance(value, str):
            problems.append(Problem(where, f"must be text, got {type(value).__name__}"))
    return problems


def _event_columns(header: list[str]) -> list[str]:
    """The event columns A, B, C, ... present in the header, which must run without gaps."""
    present = [name for name in header if len(name) == 1 and name in LETTERS]
    expected = list(LETTERS[: len(present)])
    return present if sorted(present) == expected else []


HEADER_FORM = "Question,A,B,Answer, with more event columns C, D, ... and Explanation optional"


def _header_problems(header: list[str]) -> list[str]:
    """What is wrong with a header, each named: a column missing (and a near miss beside
    it), or event columns short or with a gap (``check_csv_header`` said the rest)."""
    if is_article(header, QUESTION):
        return [ARTICLES_NOT_ITEMS]
    problems = []
    for name in (QUESTION, ANSWER):
        if name not in header:
            lowered = {cell.strip().lower(): cell for cell in header}
            near = difflib.get_close_matches(name.lower(), list(lowered), n=1, cutoff=0.75)
            hint = ""
            if near:
                hint = f" ({lowered[near[0]]!r} is not it: names are exact, capitals included)"
            problems.append(f"no {name} column{hint}")
    letters = [name for name in header if len(name) == 1 and name in LETTERS]
    if letters and not _event_columns(header):
        problems.append(
            f"the event columns must run A, B, C, ... without a gap; got {', '.join(letters)}"
        )
    elif len(letters) < 2:
        problems.append("fewer than two event columns (A and B at least)")
    return problems


def _check_header(shown: str, header: list[str]) -> list[str]:
    check_csv_header(shown, header)
    problems = _header_problems(header)
    if problems:
        said = "; ".join(problems)
        raise FormatError(
            shown,
            f"{said}. The header must be {HEADER_FORM}; got {one_line(','.join(header), 120)}",
            1,
        )
    return _event_columns(header)


def read(source: InputFile) -> Iterator[ParsedRecord]:
    """Yield one record per data row as it is read; rows with the wrong number of cells are problems."""
    shown = source.shown
    allow_long_csv_fields()
    reader = csv.reader(read_lines(source), strict=True)
    try:
        header = next(reader)
    except (csv.Error, StopIteration) as error:
        raise FormatError(shown, f"malformed CSV header: {error}", 1) from None
    events = _check_header(shown, header)
    known = {QUESTION, ANSWER, EXPLANATION, *events, *STAMP_FIELDS}
    # Problems name the CSV's own columns: "Answer", not the validator's "key".
    field_names = {
        "scenario": QUESTION,
        "key": ANSWER,
        "explanation": EXPLANATION,
        **{f"event {label}": f"column {label}" for label in events},
    }
    ordinal = 0
    start_line = reader.line_num + 1
    while True:
        try:
            row = next(reader)
        except StopIteration:
            break
        except csv.Error as error:
            # Unterminated quotes and the like: the file cannot be read past here.
            raise FormatError(shown, f"malformed CSV: {error}", start_line) from None
        line = start_line
        start_line = reader.line_num + 1
        if not any(cell.strip() for cell in row):
            continue  # blank line between records
        ordinal += 1
        place = Place(shown, line=line)
        if len(row) != len(header):
            problem = Problem("", f"has {len(row)} cells; the header has {len(header)}")
            yield ParsedRecord(place, ordinal, problems=[problem])
            continue
        cells = dict(zip(header, row, strict=True))
        choices = {label: cells[label] for label in events}
        while choices and not choices[next(reversed(choices))].strip():
            choices.popitem()  # a row with fewer events than the header has columns
        if emptied := _emptied_yet_named(events, choices, cells[ANSWER]):
            message = "is empty, yet the Answer names it: fill the event in, or leave it out of the Answer"
            yield ParsedRecord(
                place, ordinal, problems=[Problem(label, message) for label in emptied]
            )
            continue
        # An empty cell is no value: the writer leaves one for a row without the column.
        extra: JsonObject = {
            name: cells[name] for name in header if name not in known and cells[name]
        }
        draft = ItemDraft(
            kind=ItemKind.ORDERING.value,
            prompt=cells[QUESTION],
            choices=choices,
            key=cells[ANSWER],
            explanation=stated_explanation(cells.get(EXPLANATION)),
            language=language_of(cells[QUESTION], *choices.values()),
            source_ref=place.source_ref,
            meta={EXTRA_COLUMNS_META: extra} if extra else {},
            provenance={"file": source.file_name, "line": line, "format": NAME},
            field_names=field_names,
        )
        yield ParsedRecord(place, ordinal, draft=draft)
    if ordinal == 0:
        raise FormatError(shown, "the file has a header but no records")


def _emptied_yet_named(events: Sequence[str], kept: Mapping[str, str], key: str) -> list[str]:
    """The event columns left empty on a row (dropped as its fewer events) that its
    Answer names all the same: the empty cell, not the Answer, is what to point at."""
    compact = key.strip().upper()
    if compact.isascii() and compact.isalpha():  # "DABC"
        named = set(compact)
    else:  # "D, A, B, C", "D > A > B > C"
        named = {token for token in re.split(r"[^A-Z]+", compact) if len(token) == 1}
    return [label for label in events if label not in kept and label in named]


def write(items: Iterable[Any], out: TextIO, *, stamp: dict[str, str] | None = None) -> int:
    """Write ordering items (``ItemSnapshot``-like) as EconLogicQA CSV; returns the row count.

    ``stamp`` (a release export's name and hash) adds columns naming the release and
    each row's item (``db.formats.base.STAMP_FIELDS``)."""
    rows = list(items)
    for item in rows:
        problems = extra_columns_problems(item.meta)
        if problems:
            raise UnwritableItem(item.id, NAME, problems[0])
    width = max((len(item.choices) for item in rows), default=4)
    events = list(LETTERS[: max(width, 4)])
    extra_names: list[str] = []
    for item in rows:
        for name in item.meta.get(EXTRA_COLUMNS_META, {}):
            if name not in extra_names:
                extra_names.append(name)
    with_explanation = any(item.explanation for item in rows)
    header = [QUESTION, *events, ANSWER]
    if with_explanation:
        header.append(EXPLANATION)
    header += extra_names
    if stamp:
        header += list(stamp_fields("", stamp))
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(header)
    for item in rows:
        extra = item.meta.get(EXTRA_COLUMNS_META, {})
        row = [item.prompt, *(item.choices.get(label, "") for label in events)]
        row.append(format_answer(ItemKind.ORDERING, item.key))
        if with_explanation:
            row.append(item.explanation or "")
        row += [extra.get(name, "") for name in extra_names]
        row += list(stamp_fields(item.id, stamp).values())
        writer.writerow(row)
    return len(rows)

"""Judgments in files: a sheet of items to judge offline, and a batch of judgments read back.

``vetbench export --format judging --as NAME`` writes the items waiting for NAME (what
the review queue would still serve them: ``ReviewQueue.waiting_conditions``) as CSV,
one row per item: the item's text in the columns ``item_id``, ``revision``, ``kind``,
``question``, ``A``…``H``; the columns to fill (:data:`INPUT_COLUMNS`); then ``key``
and ``explanation``, and ``annotator``.  Answers stay blind, as in the review app
(``db.reveals``), in two passes:

1. an item whose key NAME has not seen is written with ``key`` and ``explanation``
   empty and nothing filled in: NAME answers it blind;
2. ``judge --from`` stores each row that gives an answer and no verdict as NAME's blind
   answer, the key NAME may now see; the next sheet writes those items with their key,
   explanation and the stored answer in ``answer`` (changing it is refused), for NAME to
   give the verdict.

The header is the same in both passes and as before the two passes, so every sheet
reads back alike.  A row with answer and verdict is a judgment, in either pass (as
``vetbench judge ITEM --answer --verdict`` is).

``vetbench judge --from FILE`` reads such a CSV, or JSON Lines with the same names,
checks every row the way an import does (every problem named by file, line and field,
all of them), and stores all of it or nothing through ``reviewer.judging.submit_judgments``
(the rules, audit events and statuses of single judgments, and the ``reveal`` events of
blind answers).  A row whose answer, verdict and details are all empty was not judged:
it is counted and left out.  The columns the sheet shows for reading are ignored on the
way back; any other column is refused, and so is a decision (``status``, ``reason``…): a
batch holds judgments and blind answers only.
"""

from __future__ import annotations

import contextlib
import csv
import math
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from sqlalchemy import select
from sqlmodel import col

from db import json_input
from db.answers import LETTERS, format_answer
from db.engine import Database
from db.formats.base import (
    FormatError,
    InputFile,
    allow_long_csv_fields,
    check_csv_header,
    open_input,
    read_lines,
)
from db.items import ItemSnapshot, iter_items
from db.json_types import JsonObject
from db.models import Item
from db.reveals import StoredReveal, reveals_by
from db.validation import nul_problems
from reviewer.judging import (
    BatchProblem,
    BatchStored,
    JudgmentInput,
    submit_judgments,
)
from reviewer.queue import QueueFilter, ReviewQueue

__all__ = [
    "FILE_FORMATS",
    "INPUT_COLUMNS",
    "BatchReceipt",
    "SheetRow",
    "judge_from_file",
    "read_judgment_file",
    "waiting_items",
    "write_judging_sheet",
]

FILE_FORMATS = ("auto", "csv", "jsonl")
INPUT_COLUMNS = ("answer", "verdict", "alt", "corrected", "duplicate_of", "comment", "seconds")
"""The columns an annotator fills; all empty: the row was not judged."""
ITEM_COLUMNS = ("item_id", "revision")
SHOWN_COLUMNS = ("kind", "question", *LETTERS, "key", "explanation")
"""Written for reading (the key and explanation once the answer is blind no more); ignored
when the file comes back."""
DETAIL_COLUMNS = ("alt", "corrected", "duplicate_of", "comment")
"""What goes with a verdict only: a row without a verdict leaves them empty."""
ANNOTATOR = "annotator"
KNOWN_COLUMNS = frozenset((*ITEM_COLUMNS, *INPUT_COLUMNS, *SHOWN_COLUMNS, ANNOTATOR))
DECISION_COLUMNS = frozenset(("status", "decision", "reason", "final_key", "lead"))
REQUIRED_COLUMNS = ("item_id", "answer", "verdict")
ALT_SEPARATOR = "|"


@dataclass(frozen=True)
class JudgmentFile:
    """A batch file as read: its rows by line, what was wrong with others, rows left blank,
    and the lines of rows that give a blind answer without a verdict."""

    file: str
    rows: tuple[tuple[int, JudgmentInput], ...]
    problems: tuple[BatchProblem, ...]
    blank: int
    blind_lines: frozenset[int] = frozenset()


@dataclass(frozen=True)
class BatchReceipt:
    """What ``judge --from`` did with a file: what the batch stored (its judgments, the blind
    answers given without a verdict, the rows given again as stored before), and the rows
    the file left blank."""

    file: str
    stored: BatchStored
    blank: int

    def to_json(self) -> JsonObject:
        """As ``judge --from --json`` prints it."""
        return {
            "file": self.file,
            "stored": len(self.stored.judgments),
            "blank": self.blank,
            "judgments": [receipt.to_json() for receipt in self.stored.judgments],
        }


# --- the sheet -------------------------------------------------------------------------------


@dataclass(frozen=True)
class SheetRow:
    """An item on a judging sheet, with the blind answer its reader gave to this revision
    before (then the key is theirs to see), if any."""

    item: ItemSnapshot
    seen: StoredReveal | None = None


def waiting_items(
    db: Database, annotator: str, *, kinds: Sequence[str] = (), sources: Sequence[str] = ()
) -> list[SheetRow]:
    """The open items ``annotator`` could still judge (their queue, gold items apart), in
    import order, each with the blind answer they gave to it; ``kinds`` and ``sources``
    narrow them."""
    queue = ReviewQueue(db, annotator, QueueFilter(kinds=tuple(kinds), sources=tuple(sources)))
    with db.session() as session:
        # A subquery of its own: the queue's conditions correlate with ``Item`` alone.
        waiting = select(col(Item.id)).where(*queue.waiting_conditions(session)).correlate(None)
        seen = reveals_by(session, annotator)
        return [
            SheetRow(item, seen.get((item.id, item.revision)))
            for item in iter_items(session, where=[col(Item.id).in_(waiting)])
        ]


def write_judging_sheet(rows: Iterable[SheetRow], out: TextIO, *, annotator: str) -> int:
    """Write ``rows`` as a judging sheet for ``annotator`` (CSV); returns the row count.

    An item whose key the annotator has not seen shows no key nor explanation; one they
    answered blind shows both, with that answer and its seconds filled in."""
    rows = list(rows)
    width = max((len(row.item.choices) for row in rows), default=4)
    letters = list(LETTERS[: max(width, 2)])
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(
        [*ITEM_COLUMNS, "kind", "question", *letters, *INPUT_COLUMNS, "key", "explanation"]
        + [ANNOTATOR]
    )
    for row in rows:
        item, seen = row.item, row.seen
        filled = dict.fromkeys(INPUT_COLUMNS, "")
        shown = ["", ""]  # the key and explanation, not before the blind answer
        if seen is not None:
            filled.update(answer=format_answer(item.kind, seen.blind_answer))
            filled.update(seconds=f"{seen.seconds:g}")
            shown = [format_answer(item.kind, item.key), item.explanation or ""]
        writer.writerow(
            [item.id, item.revision, item.kind.value, item.prompt]
            + [item.choices.get(label, "") for label in letters]
            + list(filled.values())
            + shown
            + [annotator]
        )
    return len(rows)


# --- reading a batch -------------------------------------------------------------------------


def _format_of(source: InputFile, asked: str) -> str:
    if asked != "auto":
        return asked
    suffix = Path(source.file_name).suffix.lower()
    if suffix in (".jsonl", ".ndjson", ".json"):
        return "jsonl"
    if suffix == ".csv":
        return "csv"
    return "jsonl" if source.head.lstrip().startswith(b"{") else "csv"


class _Row:
    """One record's fields, checked one by one; problems are collected, not raised."""

    def __init__(self, file: str, line: int, fields: dict[str, object]) -> None:
        self.file, self.line, self.fields = file, line, fields
        self.problems: list[BatchProblem] = []
        self.blind_only = False  # an answer without a verdict: a blind answer to store

    def problem(self, field: str, message: str) -> None:
        self.problems.append(BatchProblem(self.file, self.line, field, message))

    def text(self, name: str) -> str:
        value = self.fields.get(name)
        if value is None:
            return ""
        if isinstance(value, bool) or not isinstance(value, (str, int, float)):
            self.problem(name, f"must be text, got {type(value).__name__}")
            return ""
        text = str(value)
        if any("\udc80" <= char <= "\udcff" for char in text):
            self.problem(name, "is not valid UTF-8 text")
            return ""
        for problem in nul_problems(name, text):
            self.problem(problem.field, problem.message)
        return text.strip()

    def number(self, name: str, *, whole: bool) -> float | None:
        value = self.fields.get(name)
        if value is None or (isinstance(value, str) and not value.strip()):
            return None
        what = "a whole number" if whole else "a number"
        number = math.nan
        if isinstance(value, (str, int, float)) and not isinstance(value, bool):
            with contextlib.suppress(ValueError):
                number = float(value)
        if not math.isfinite(number) or (whole and (number != int(number) or number < 1)):
            self.problem(name, f"must be {what}{' from 1' if whole else ''}, got {value!r}")
            return None
        return number

    def alternatives(self) -> tuple[str, ...]:
        value = self.fields.get("alt")
        if isinstance(value, list):
            if not all(isinstance(entry, str) for entry in value):
                self.problem("alt", "must be a list of orders or answers, as text")
                return ()
            parts = [str(entry) for entry in value]
        else:
            parts = self.text("alt").split(ALT_SEPARATOR)
        return tuple(part.strip() for part in parts if part.strip())

    def judgment(self, annotator: str) -> JudgmentInput | None:
        """The row as a judgment, to check against the database even when some field is
        wrong or missing (one missing is given empty), so that every problem is found;
        None when blank."""
        for name in sorted(set(self.fields) - KNOWN_COLUMNS):
            if name in DECISION_COLUMNS:
                self.problem(
                    name, "a batch holds judgments; decisions are a lead's (vetbench decide)"
                )
            else:
                self.problem(name, f"is not a judgment field ({', '.join(INPUT_COLUMNS)})")
        item_id = self.text("item_id")
        given = {name: self.text(name) for name in INPUT_COLUMNS if name not in ("alt", "seconds")}
        alternatives = self.alternatives()
        seconds = self.number("seconds", whole=False)
        revision = self.number("revision", whole=True)
        owner = self.text(ANNOTATOR)
        if not any(given.values()) and not alternatives and not self.problems:
            return None  # not judged
        if not item_id:
            self.problem("item_id", "is missing")
        details = alternatives or any(given[name] for name in DETAIL_COLUMNS if name != "alt")
        self.blind_only = bool(given["answer"]) and not given["verdict"] and not details
        if not given["answer"]:
            self.problem("answer", "is missing")
        if not given["verdict"] and not self.blind_only:
            self.problem("verdict", "is missing")
        if revision is None and not any(p.field == "revision" for p in self.problems):
            # A batch is made from text read earlier: the revision says which text that was.
            self.problem("revision", "is missing (the revision of the text you judged)")
        if owner and owner != annotator:
            self.problem(
                ANNOTATOR,
                f"this row is {owner}'s; a batch is stored in your own name ({annotator}) "
                f"only: {owner} loads it as themselves",
            )
        return JudgmentInput(
            item_id,
            given["answer"],
            given["verdict"],
            None if revision is None else int(revision),
            alternatives,
            given["corrected"] or None,
            given["duplicate_of"] or None,
            given["comment"],
            seconds or 0.0,
        )


def _csv_records(source: InputFile) -> Iterator[tuple[int, dict[str, object]]]:
    allow_long_csv_fields()
    reader = csv.reader(read_lines(source), strict=True)
    try:
        header = [name.strip() for name in next(reader)]
    except (csv.Error, StopIteration) as error:
        raise FormatError(source.shown, f"malformed CSV header: {error}", 1) from None
    check_csv_header(source.shown, header)
    decisions = [name for name in header if name in DECISION_COLUMNS]
    if decisions:
        raise FormatError(
            source.shown,
            f"column {', '.join(decisions)}: a batch holds judgments; decisions are a lead's "
            "(vetbench decide)",
            1,
        )
    unknown = [name for name in header if name not in KNOWN_COLUMNS]
    if unknown:
        raise FormatError(
            source.shown,
            f"unknown column {', '.join(unknown)}; a judging sheet fills "
            f"{', '.join(INPUT_COLUMNS)}",
            1,
        )
    missing = [name for name in REQUIRED_COLUMNS if name not in header]
    if missing:
        raise FormatError(
            source.shown,
            f"the header lacks {', '.join(missing)}; a judging sheet has the columns "
            f"{', '.join(ITEM_COLUMNS + INPUT_COLUMNS)} (vetbench export --format judging "
            "writes one)",
            1,
        )
    start = reader.line_num + 1
    while True:
        try:
            row = next(reader)
        except StopIteration:
            return
        except csv.Error as error:
            raise FormatError(source.shown, f"malformed CSV: {error}", start) from None
        line, start = start, reader.line_num + 1
        if not any(cell.strip() for cell in row):
            continue
        if len(row) != len(header):
            yield line, {"": f"has {len(row)} cells; the header has {len(header)}"}
            continue
        yield line, dict(zip(header, row, strict=True))


def _jsonl_records(source: InputFile) -> Iterator[tuple[int, dict[str, object]]]:
    for line, text in enumerate(read_lines(source), start=1):
        if not text.strip():
            continue
        try:
            record = json_input.loads(text)
        except json_input.JsonInputError as error:
            yield line, {"": f"is not JSON: {error.described}"}
            continue
        if not isinstance(record, dict):
            yield line, {"": f"must be a JSON object, got {type(record).__name__}"}
            continue
        yield line, record


def read_judgment_file(path: str, *, annotator: str, format: str = "auto") -> JudgmentFile:
    """Read a batch (``-``: standard input) for ``annotator``; raises ``FormatError`` when
    the file as a whole cannot be read (``format``: auto, csv or jsonl)."""
    if format not in FILE_FORMATS:
        raise FormatError(path, f"unknown format '{format}' (known: {', '.join(FILE_FORMATS)})")
    rows: list[tuple[int, JudgmentInput]] = []
    problems: list[BatchProblem] = []
    blank = 0
    blind_lines: set[int] = set()
    with open_input(path) as source:
        records = _csv_records if _format_of(source, format) == "csv" else _jsonl_records
        for line, fields in records(source):
            if "" in fields:  # the record could not be split into fields
                problems.append(BatchProblem(source.shown, line, "", str(fields[""])))
                continue
            row = _Row(source.shown, line, fields)
            judgment = row.judgment(annotator)
            problems += row.problems
            if judgment is not None:
                rows.append((line, judgment))
                if row.blind_only:
                    blind_lines.add(line)
            elif not row.problems:
                blank += 1
        if not rows and not problems:
            raise FormatError(source.shown, _no_judgments(blank))
        return JudgmentFile(
            source.shown, tuple(rows), tuple(problems), blank, frozenset(blind_lines)
        )


def _no_judgments(blank: int) -> str:
    """Why a judging file without problems gave no judgment: it has no rows, or every
    row leaves answer and verdict blank."""
    if not blank:
        return "the file has no rows"
    rows = "its one row leaves" if blank == 1 else f"every one of its {blank:,} rows leaves"
    return f"no judgments: {rows} answer and verdict empty"


def judge_from_file(
    db: Database, annotator: str, path: str, *, format: str = "auto"
) -> BatchReceipt:
    """Read a batch and store every judgment and blind answer in it, or none
    (``BatchRefused`` lists why)."""
    batch = read_judgment_file(path, annotator=annotator, format=format)
    stored = submit_judgments(
        db,
        annotator,
        batch.rows,
        file=batch.file,
        problems=batch.problems,
        blind_lines=batch.blind_lines,
    )
    return BatchReceipt(batch.file, stored, batch.blank)

"""What every item-file format shares: where a record came from, what a reader yields,
file-level errors, and the tolerant decoding that lets validation name bad bytes.

A reader turns a file into :class:`ParsedRecord` values, one per record, each
holding either an :class:`~db.validation.ItemDraft` or the problems that kept it
from becoming one.  Problems of the whole file (malformed CSV or JSON, an empty
file) raise :class:`FormatError`, which names the file and the line.
"""

from __future__ import annotations

import csv
import re
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from db.validation import ItemDraft, Problem

UTF8_BOM = b"\xef\xbb\xbf"


@dataclass(frozen=True)
class Place:
    """Where a record sits in its file: a line (CSV, JSONL) or a 1-based record index (JSON)."""

    file: str
    line: int | None = None
    record: int | None = None

    @property
    def source_ref(self) -> str:
        """The short reference stored with the item: ``"line 18"`` or ``"record 3"``."""
        if self.line is not None:
            return f"line {self.line}"
        if self.record is not None:
            return f"record {self.record}"
        return ""

    def __str__(self) -> str:
        ref = self.source_ref
        return f"{self.file}: {ref}" if ref else self.file


@dataclass
class RevisionRecord:
    """One stored revision as the native format carries it."""

    number: int
    prompt: str
    choices: dict[str, str]
    key: str
    explanation: str | None
    author: str
    change_note: str
    provenance: dict[str, Any]
    created_at: datetime | None


@dataclass
class NativeItem:
    """Everything the native JSONL format says about an item besides its current text."""

    item_id: str
    source: str
    status: str
    current_revision: int
    revisions: list[RevisionRecord]
    created_at: datetime | None
    suspected_duplicate_of: str | None
    duplicate_similarity: float | None
    # True when the record states its duplicate fields (even as null): then they are
    # kept as given instead of being worked out again on import.
    states_duplicate: bool


@dataclass
class ParsedRecord:
    """One record of a file: a draft to validate, or the problems that prevent one."""

    place: Place
    ordinal: int  # 1-based data-row number (CSV, JSONL) or record index (JSON), for ids
    draft: ItemDraft | None = None
    problems: list[Problem] = field(default_factory=list)
    native: NativeItem | None = None  # JSONL only


class FormatError(ValueError):
    """The file as a whole cannot be read (malformed, empty, no records); names file and line."""

    def __init__(self, file: str, message: str, line: int | None = None) -> None:
        self.file = file
        self.line = line
        self.reason = message
        where = f"{file}: line {line}" if line is not None else file
        super().__init__(f"{where}: {message}")


def read_text(path: Path) -> str:
    """The file's text as UTF-8, without a leading byte-order mark.

    Bytes that are not UTF-8 are kept as lone surrogates (``surrogateescape``), so
    the record holding them still parses and validation reports the field as
    "not valid UTF-8 text" with its line, instead of the whole file failing
    without saying where.
    """
    try:
        data = path.read_bytes()
    except OSError as error:
        raise FormatError(str(path), f"cannot read the file: {error.strerror or error}") from None
    if data.startswith(UTF8_BOM):
        data = data[len(UTF8_BOM) :]
    if not data.strip():
        raise FormatError(str(path), "the file is empty")
    return data.decode("utf-8", errors="surrogateescape")


def csv_reader_limit_for(text: str) -> None:
    """Let the csv module read any field of ``text``, which is already in memory.

    Its default limit (131,072 characters) would call a long but well-formed field
    "malformed"; lifted, validation can say which field is too long and by how much.
    """
    if len(text) > csv.field_size_limit():
        csv.field_size_limit(len(text))


def first_bad_utf8_line(text: str) -> int | None:
    """The 1-based line of the first byte that was not UTF-8 (see :func:`read_text`), if any."""
    match = _SURROGATE.search(text)
    return None if match is None else text.count("\n", 0, match.start()) + 1


_SURROGATE = re.compile("[\udc80-\udcff]")

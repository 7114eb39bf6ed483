"""What every item-file format shares: where a record came from, what a reader yields,
file-level errors, reading an input once, and the tolerant decoding that lets
validation name bad bytes.

A reader turns an :class:`InputFile` into :class:`ParsedRecord` values, one per
record, as it reads (memory stays bounded however long the file is), each holding
either an :class:`~db.validation.ItemDraft` or the problems that kept it from
becoming one.  Problems of the whole file (malformed CSV or JSON, an empty file)
raise :class:`FormatError`, which names the file and the line.

:func:`open_input` opens a path, or ``-`` for standard input, exactly once: the
first bytes used to detect the format are served again to the reader, so a pipe
loses nothing.  Regular files and pipes are read; a device, a socket or a folder
is refused (a symlink to ``/dev/zero`` would otherwise be read forever).
"""

from __future__ import annotations

import codecs
import csv
import io
import os
import re
import stat
import sys
from collections import Counter
from collections.abc import Collection, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, BinaryIO, TextIO

from db.errors import VetbenchError
from db.validation import ItemDraft, Problem, RevisionContent, is_utf8_text
from db.words import few_of

UTF8_BOM = b"\xef\xbb\xbf"
UTF16_BOMS = (codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)
STDIN = "-"
STDIN_NAME = "<stdin>"
SNIFF_BYTES = 4096
# The csv module refuses longer fields as "malformed"; one a little longer than any
# valid field is read whole, so validation says which field is too long.
CSV_FIELD_LIMIT = 8 * 1024 * 1024
# One record (a line, a CSV row, a JSON array element) may be at most this long: a
# file that never ends a record (a symlink to a huge blob) stops here, memory bounded.
MAX_RECORD_BYTES = 64 * 1024 * 1024


# A release export (``vetbench export --release``) stamps every record with these
# fields: the item's id (formats without ids), the release's name and hash, and the
# part of the release selected (compact JSON, ``{"kinds": [...], "sources": [...]}``,
# an empty list: every one; exports made before it was recorded lack it).  Readers
# keep them out of an item's meta; ``vetbench release verify --export`` reads them.
STAMP_ITEM = "vetbench_item"
STAMP_RELEASE = "vetbench_release"
STAMP_RELEASE_HASH = "vetbench_release_hash"
STAMP_SELECTION = "vetbench_selection"
STAMP_FIELDS = (STAMP_ITEM, STAMP_RELEASE, STAMP_RELEASE_HASH, STAMP_SELECTION)


# Articles (``vetbench generate --articles``) are not items, yet sit beside them in
# fixtures/ and in users' folders: import names the mix-up instead of listing every
# item field an article lacks.
ARTICLE_FIELDS = ("title", "text")
ARTICLES_NOT_ITEMS = (
    "these are articles (title, text), not items: `vetbench generate --kind ordering "
    "--articles FILE` (or --kind mcq) writes items from them"
)


def is_article(fields: Collection[str], *item_fields: str) -> bool:
    """Whether a header or a record with ``fields`` is an article's: a title and a text,
    and none of ``item_fields`` (those an item of the format always has)."""
    names = {name.strip().lower() for name in fields}
    return set(ARTICLE_FIELDS) <= names and not names & {name.lower() for name in item_fields}


def stamp_fields(item_id: str, stamp: dict[str, str] | None) -> dict[str, str]:
    """The stamp of one record of a release export (nothing without a stamp)."""
    return {STAMP_ITEM: item_id, **stamp} if stamp else {}


def stated_explanation(text: str | None) -> str | None:
    """An explanation as a new item stores it: an empty one is none (EconLogicQA CSV cannot
    tell the two apart, so an item exported there reads back as it was stored)."""
    return text or None


class UnwritableItem(VetbenchError, ValueError):
    """A stored item a format cannot write (meta another way of storing let in); names the
    item and the field."""

    def __init__(self, item_id: str, format_name: str, problem: Problem) -> None:
        super().__init__(
            f"item {item_id}: meta.{problem.field}: {problem.message}; "
            f"it cannot be exported as {format_name} (fix the item's meta, or export as jsonl)"
        )


class RecordTooLong(Exception):
    """More than ``MAX_RECORD_BYTES`` were read without a record ending."""


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


@dataclass(frozen=True)
class RevisionRecord(RevisionContent):
    """One stored revision as the native format carries it."""

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


class FormatError(VetbenchError, ValueError):
    """The file as a whole cannot be read (malformed, empty, no records); names file and line."""

    def __init__(self, file: str, message: str, line: int | None = None) -> None:
        self.file = file
        self.line = line
        self.reason = message
        where = f"{file}: line {line}" if line is not None else file
        super().__init__(f"{where}: {message}")


class _HeadThenRest(io.RawIOBase):
    """A raw stream that serves the already-read ``head`` again, then the rest; counts bytes."""

    def __init__(self, head: bytes, rest: BinaryIO) -> None:
        self._head = memoryview(head)
        self._rest = rest
        self.consumed = 0
        self.record_started = 0  # ``consumed`` when the current record began

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        if len(self._head):
            count = min(len(buffer), len(self._head))
            buffer[:count] = self._head[:count]
            self._head = self._head[count:]
        else:
            read1 = getattr(self._rest, "read1", self._rest.read)
            data = read1(len(buffer))
            count = len(data)
            buffer[:count] = data
        self.consumed += count
        if self.consumed - self.record_started > MAX_RECORD_BYTES:
            raise RecordTooLong()
        return count


@dataclass
class InputFile:
    """One input, opened once: its name for messages, its first bytes, and a text stream."""

    shown: str  # the path as given, or "<stdin>"
    file_name: str  # the bare file name: provenance, the default source, the audit log
    head: bytes  # the first bytes (up to SNIFF_BYTES), for format detection
    size: int | None  # bytes in a regular file; None for a pipe
    _raw: _HeadThenRest
    text: TextIO = field(init=False)

    binary: BinaryIO = field(init=False)

    def __post_init__(self) -> None:
        self.binary = io.BufferedReader(self._raw, buffer_size=1 << 16)
        # utf-8-sig drops a byte-order mark; bytes that are not UTF-8 stay lone
        # surrogates so that validation names the field and line that hold them.
        # A reader uses either ``text`` or ``binary``, never both.
        self.text = io.TextIOWrapper(
            self.binary, encoding="utf-8-sig", errors="surrogateescape", newline=""
        )

    @property
    def bytes_read(self) -> int:
        return self._raw.consumed

    def record_ended(self) -> None:
        """A record is complete: the next may again be ``MAX_RECORD_BYTES`` long."""
        self._raw.record_started = self._raw.consumed

    def too_long(self, where: str) -> FormatError:
        limit = MAX_RECORD_BYTES // (1024 * 1024)
        return FormatError(self.shown, f"{where} is longer than {limit} MB; is this an item file?")

    @property
    def stem(self) -> str:
        return Path(self.file_name).stem


def _refuse_special(shown: str, mode: int) -> None:
    if stat.S_ISREG(mode) or stat.S_ISFIFO(mode):
        return
    if stat.S_ISDIR(mode):
        raise FormatError(shown, "is a folder; name the files inside it")
    what = "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) else "not a regular file"
    raise FormatError(shown, f"is {what}; vetbench reads regular files and pipes (or - for stdin)")


def _read_head(stream: BinaryIO) -> bytes:
    head = b""
    read1 = getattr(stream, "read1", stream.read)
    while len(head) < SNIFF_BYTES:
        chunk = read1(SNIFF_BYTES - len(head))
        if not chunk:
            break
        head += chunk
    return head


@contextmanager
def open_input(path: str | os.PathLike[str]) -> Iterator[InputFile]:
    """Open ``path`` (``-``: standard input) once for reading; see the module docstring."""
    shown = os.fspath(path)
    if shown == STDIN:
        stdin = sys.stdin.buffer
        if sys.stdin.isatty():
            raise FormatError(
                STDIN_NAME, "is a terminal; pipe a file into it (… | vetbench import -)"
            )
        mode = os.fstat(stdin.fileno()).st_mode
        _refuse_special(STDIN_NAME, mode)
        size = os.fstat(stdin.fileno()).st_size if stat.S_ISREG(mode) else None
        head = _read_head(stdin)
        yield _checked(InputFile(STDIN_NAME, "stdin", head, size, _raw_after_bom(head, stdin)))
        return
    try:
        _refuse_special(shown, os.stat(shown).st_mode)
        handle = open(shown, "rb")  # noqa: SIM115 - closed below, after the reader is done
    except FileNotFoundError:
        raise FormatError(shown, "cannot read the file: no such file") from None
    except OSError as error:
        raise FormatError(shown, f"cannot read the file: {error.strerror or error}") from None
    with handle:
        mode = os.fstat(handle.fileno()).st_mode
        _refuse_special(shown, mode)  # it may have changed since the stat above
        size = os.fstat(handle.fileno()).st_size if stat.S_ISREG(mode) else None
        try:
            head = _read_head(handle)
        except OSError as error:
            raise FormatError(shown, f"cannot read the file: {error.strerror or error}") from None
        name = Path(shown).name
        yield _checked(InputFile(shown, name, head, size, _raw_after_bom(head, handle)))


def _raw_after_bom(head: bytes, rest: BinaryIO) -> _HeadThenRest:
    return _HeadThenRest(head.removeprefix(UTF8_BOM), rest)


def _checked(source: InputFile) -> InputFile:
    """Refuse an empty input, and UTF-16 text (its NUL bytes would only confuse a message)."""
    head = source.head
    if head.startswith(UTF16_BOMS) or (len(head) >= 4 and head[1:4:2] == b"\0\0"):
        raise FormatError(
            source.shown, "the file is UTF-16 text; vetbench reads UTF-8: save it as UTF-8"
        )
    if not head.removeprefix(UTF8_BOM).strip():
        raise FormatError(source.shown, "the file is empty")
    return source


def read_lines(source: InputFile) -> Iterator[str]:
    """The text's lines, each ended by ``\n`` (never split at U+2028 and friends, as
    ``str.splitlines`` would); a line longer than ``MAX_RECORD_BYTES`` is a :class:`FormatError`."""
    line_number = 0
    while True:
        try:
            line = source.text.readline()
        except RecordTooLong:
            raise source.too_long(f"line {line_number + 1}") from None
        if not line:
            return
        line_number += 1
        source.record_ended()
        yield line


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


def check_csv_header(shown: str, header: list[str]) -> None:
    """What every CSV header must be: UTF-8 text (one saved in another encoding is said as
    such, not as column names of escaped bytes), columns separated by commas (a header read
    as one cell holding semicolons, European Excel's default, or tabs is said as such, not
    as an unknown column), and no column named twice."""
    if not all(is_utf8_text(name) for name in header):
        raise FormatError(shown, "the header is not UTF-8 text; save the file as UTF-8", 1)
    if len(header) == 1 and (separator := other_separator(header[0])) is not None:
        raise FormatError(
            shown,
            f"the columns are separated by {separator}; save the file as comma-separated CSV",
            1,
        )
    repeated = sorted(name for name, count in Counter(header).items() if count > 1)
    if repeated:
        raise FormatError(shown, f"the header repeats {few_of(repeated, 5)}", 1)


def other_separator(line: str) -> str | None:
    """``semicolons`` or ``tabs``: what separates the cells of a header line that holds no
    comma; None for a comma-separated one."""
    if "," in line:
        return None
    return "semicolons" if ";" in line else "tabs" if "\t" in line else None


def allow_long_csv_fields() -> None:
    """Let the csv module read fields up to ``CSV_FIELD_LIMIT`` (see there)."""
    if csv.field_size_limit() < CSV_FIELD_LIMIT:
        csv.field_size_limit(CSV_FIELD_LIMIT)


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

"""Item file formats: one module per format, each with ``read(path)`` and ``write(items, out)``.

- ``econlogicqa``: EconLogicQA CSV (ordering items).
- ``cflue``: CFLUE knowledge JSON (single, multi and true/false items).
- ``jsonl``: vetbench's native JSONL (every kind, every field, every revision).

:func:`detect_format` picks one from the file name and its first bytes.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

from db.formats import cflue, econlogicqa, jsonl
from db.formats.base import FormatError, ParsedRecord, Place
from db.vocabulary import ItemKind

__all__ = [
    "FORMATS",
    "FileFormat",
    "FormatError",
    "ParsedRecord",
    "Place",
    "detect_format",
    "get_format",
    "read_records",
]


@dataclass(frozen=True)
class FileFormat:
    name: str
    module: ModuleType
    kinds: frozenset[ItemKind]
    extensions: tuple[str, ...]
    description: str


FORMATS: dict[str, FileFormat] = {
    f.name: f
    for f in (
        FileFormat(econlogicqa.NAME, econlogicqa, econlogicqa.KINDS, (".csv",), "EconLogicQA CSV"),
        FileFormat(cflue.NAME, cflue, cflue.KINDS, (".json",), "CFLUE knowledge JSON"),
        FileFormat(jsonl.NAME, jsonl, jsonl.KINDS, (".jsonl", ".ndjson"), "vetbench JSONL"),
    )
}
AUTO = "auto"
SNIFF_BYTES = 4096


def get_format(name: str) -> FileFormat:
    try:
        return FORMATS[name]
    except KeyError:
        raise ValueError(f"unknown format '{name}' (known: {', '.join(FORMATS)})") from None


def _sniff(head: str) -> str | None:
    """Guess from content: ``[`` opens a CFLUE array, ``{`` a JSONL line, a ``Question`` header a CSV."""
    stripped = head.lstrip()
    if stripped.startswith("["):
        return cflue.NAME
    if stripped.startswith("{"):
        return jsonl.NAME
    first_line = stripped.split("\n", 1)[0]
    if econlogicqa.QUESTION in first_line and "," in first_line:
        return econlogicqa.NAME
    return None


def detect_format(path: Path) -> str:
    """The format of ``path``: content first (it cannot lie), then the extension."""
    try:
        with path.open("rb") as handle:
            head = handle.read(SNIFF_BYTES)
    except OSError as error:
        raise FormatError(str(path), f"cannot read the file: {error.strerror or error}") from None
    sniffed = _sniff(head.removeprefix(b"\xef\xbb\xbf").decode("utf-8", errors="replace"))
    if sniffed is not None:
        return sniffed
    suffix = path.suffix.lower()
    for file_format in FORMATS.values():
        if suffix in file_format.extensions:
            return file_format.name
    if not head.strip():
        raise FormatError(str(path), "the file is empty")
    known = ", ".join(FORMATS)
    raise FormatError(str(path), f"cannot tell the file's format; pass --format ({known})")


def read_records(path: Path, format_name: str = AUTO) -> Iterator[ParsedRecord]:
    """Read ``path`` in the named format (or the detected one)."""
    name = detect_format(path) if format_name == AUTO else format_name
    return get_format(name).module.read(path)

"""Item file formats: one module per format, each with ``read(source)`` and ``write(items, out)``.

``read`` takes an :class:`~db.formats.base.InputFile` (``open_input``: a path or
``-``, opened once) and yields records as it reads them.

- ``econlogicqa``: EconLogicQA CSV (ordering items).
- ``cflue``: CFLUE knowledge JSON (single, multi and true/false items).
- ``jsonl``: vetbench's native JSONL (every kind, every field, every revision).

:func:`detect_format` picks one from the file name and its first bytes.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

from db.errors import VetbenchError
from db.formats import cflue, econlogicqa, jsonl
from db.formats.base import (
    SNIFF_BYTES,
    UTF8_BOM,
    FormatError,
    InputFile,
    ParsedRecord,
    Place,
    open_input,
    other_separator,
)
from db.vocabulary import ItemKind

__all__ = [
    "FORMATS",
    "SNIFF_BYTES",
    "FileFormat",
    "FormatError",
    "InputFile",
    "ParsedRecord",
    "Place",
    "UnknownFormat",
    "detect_format",
    "detect_input_format",
    "detected_against_name",
    "format_of_name",
    "get_format",
    "open_input",
    "read_records",
]


@dataclass(frozen=True)
class FileFormat:
    name: str
    module: ModuleType
    kinds: frozenset[ItemKind]
    extensions: tuple[str, ...]
    description: str
    shape: str  # what a file of the format does ("be one JSON array ..."), for notes


FORMATS: dict[str, FileFormat] = {
    f.name: f
    for f in (
        FileFormat(
            econlogicqa.NAME,
            econlogicqa,
            econlogicqa.KINDS,
            (".csv",),
            "EconLogicQA CSV",
            "start with the header line Question,A,B,...,Answer",
        ),
        FileFormat(
            cflue.NAME,
            cflue,
            cflue.KINDS,
            (".json",),
            "CFLUE knowledge JSON",
            "be one JSON array of objects, [{...}, {...}]",
        ),
        FileFormat(
            jsonl.NAME,
            jsonl,
            jsonl.KINDS,
            (".jsonl", ".ndjson"),
            "vetbench JSONL",
            "hold one JSON object per line",
        ),
    )
}
AUTO = "auto"


class UnknownFormat(VetbenchError, ValueError):
    """A format name that no item file format has."""


def get_format(name: str) -> FileFormat:
    try:
        return FORMATS[name]
    except KeyError:
        raise UnknownFormat(f"unknown format '{name}' (known: {', '.join(FORMATS)})") from None


def _sniff(head: str) -> str | None:
    """Guess from content: ``[`` opens a CFLUE array, ``{`` a JSONL line, a ``Question`` header a CSV."""
    stripped = head.lstrip()
    if stripped.startswith("["):
        return cflue.NAME
    if stripped.startswith("{"):
        return jsonl.NAME
    first_line = stripped.split("\n", 1)[0]
    # Separated by semicolons or tabs it is still meant as one: its reader says to save it
    # with commas.
    separated = "," in first_line or other_separator(first_line) is not None
    if econlogicqa.QUESTION in first_line and separated:
        return econlogicqa.NAME
    return None


def format_of_name(file_name: str) -> str | None:
    """The format a file's extension names (``.csv``, ``.json``, ``.jsonl``), if any."""
    suffix = Path(file_name).suffix.lower()
    for file_format in FORMATS.values():
        if suffix in file_format.extensions:
            return file_format.name
    return None


def detected_against_name(source: InputFile, name: str) -> str | None:
    """A note for an input whose content chose the format ``name`` against what its
    extension says (a CFLUE object without its array in ``.json`` is read as JSONL), so
    that a refused file says how it was read and what the other format needs."""
    by_name = format_of_name(source.file_name)
    if by_name is None or by_name == name:
        return None
    read_as, named = FORMATS[name], FORMATS[by_name]
    return (
        f"{source.shown}: read as {read_as.description}, as its content says; as "
        f"{named.description}, as its name says, it would {named.shape} (--format {named.name})"
    )


def detect_input_format(source: InputFile) -> str:
    """The format of an opened input: content first (it cannot lie), then the extension."""
    sniffed = _sniff(source.head.removeprefix(UTF8_BOM).decode("utf-8", errors="replace"))
    if sniffed is not None:
        return sniffed
    by_name = format_of_name(source.file_name)
    if by_name is not None:
        return by_name
    known = ", ".join(FORMATS)
    raise FormatError(source.shown, f"cannot tell the file's format; pass --format ({known})")


def detect_format(path: str | os.PathLike[str]) -> str:
    """The format of the file at ``path`` (see :func:`detect_input_format`)."""
    with open_input(path) as source:
        return detect_input_format(source)


def read_records(path: str | os.PathLike[str], format_name: str = AUTO) -> Iterator[ParsedRecord]:
    """Read ``path`` in the named format (or the detected one), record by record."""
    with open_input(path) as source:
        name = detect_input_format(source) if format_name == AUTO else format_name
        yield from get_format(name).module.read(source)

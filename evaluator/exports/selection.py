"""What every export shares: which items to export, how it refuses, and what it wrote."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from db.errors import VetbenchError
from db.formats.base import STAMP_RELEASE, STAMP_RELEASE_HASH, STAMP_SELECTION
from db.vocabulary import ALL, ItemStatus

ALL_STATUSES = ALL
DEFAULT_STATUS = ItemStatus.APPROVED.value


class ExportError(VetbenchError, ValueError):
    """The selection cannot be exported as asked; the message says why and what to do."""


@dataclass(frozen=True)
class Selection:
    """Which items to export: a status (or ``all``), kinds and sources (empty: any); or the
    items of a release (``release``, its ``release_hash``), as frozen, of those kinds and
    sources.  The caller asks with one (no hash); the export resolves it (the release's hash)."""

    status: str = DEFAULT_STATUS
    kinds: tuple[str, ...] = ()
    sources: tuple[str, ...] = ()
    release: str | None = None
    release_hash: str | None = None

    @property
    def stamp(self) -> dict[str, str] | None:
        """What a release export writes into every record (None: not a release export)."""
        if self.release is None or self.release_hash is None:
            return None
        chosen = json.dumps(self.chosen(), ensure_ascii=False, separators=(",", ":"))
        return {
            STAMP_RELEASE: self.release,
            STAMP_RELEASE_HASH: self.release_hash,
            STAMP_SELECTION: chosen,
        }

    def chosen(self) -> dict[str, list[str]]:
        """The kinds and sources selected (an empty list: every one)."""
        return {"kinds": list(self.kinds), "sources": list(self.sources)}

    def manifest(self) -> dict[str, object]:
        """The release's name and hash and the part of it selected, for a folder's manifest
        (empty: not a release)."""
        if self.release is None or self.release_hash is None:
            return {}
        return {"release": self.release, "release_hash": self.release_hash, **self.chosen()}

    @property
    def statuses(self) -> list[str] | None:
        return None if self.status == ALL_STATUSES else [self.status]

    def describe(self) -> str:
        if self.release is not None:
            parts = [f"release {self.release} ({(self.release_hash or '')[:12]})"]
        else:
            parts = ["any status" if self.status == ALL_STATUSES else f"status {self.status}"]
        if self.kinds:
            parts.append(f"kind {', '.join(self.kinds)}")
        if self.sources:
            parts.append(f"source {', '.join(self.sources)}")
        return ", ".join(parts)


APPROVED_ITEMS = Selection()
"""What an export takes when not told: the approved items."""


@dataclass(frozen=True)
class ExportSummary:
    """What an export wrote: the file or folder, how many items of each kind, and (for
    the folder exports) its files and how to use it."""

    path: Path
    format: str
    count: int
    by_kind: dict[str, int]
    files: list[str] = field(default_factory=list)  # relative to ``path``
    tasks: list[str] = field(default_factory=list)  # lm-eval task and group names
    command: str = ""  # how to evaluate or load the export

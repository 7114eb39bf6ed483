"""What every export shares: which items to export, how it refuses, and what it wrote."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from db.errors import VetbenchError
from db.formats.base import STAMP_RELEASE, STAMP_RELEASE_HASH, STAMP_SELECTION
from db.vocabulary import ItemStatus, values


class ExportError(VetbenchError, ValueError):
    """The selection cannot be exported as asked; the message says why and what to do."""


@dataclass(frozen=True)
class Selection:
    """Which items to export: statuses, kinds and sources (each empty: any; by default the
    approved items); or the items of a release (``release``, its ``release_hash``), as
    frozen, of those kinds and sources (the status is not asked).  The caller asks with
    one (no hash); the export resolves it (the release's hash)."""

    statuses: tuple[str, ...] = (ItemStatus.APPROVED.value,)
    kinds: tuple[str, ...] = ()
    sources: tuple[str, ...] = ()
    release: str | None = None
    release_hash: str | None = None

    def __post_init__(self) -> None:
        if isinstance(self.statuses, str):  # a string is a sequence too: of letters
            raise TypeError(f"statuses takes a tuple of statuses, not {self.statuses!r}")
        known = values(ItemStatus)
        for status in self.statuses:
            if status not in known:
                raise ExportError(f"unknown status '{status}' (known: {', '.join(known)})")

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

    def describe(self) -> str:
        if self.release is not None:
            parts = [f"release {self.release} ({(self.release_hash or '')[:12]})"]
        else:
            parts = [f"status {', '.join(self.statuses)}" if self.statuses else "any status"]
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

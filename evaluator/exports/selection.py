"""What every export shares: which items to export, how it refuses, and what it wrote."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from db.errors import VetbenchError
from db.vocabulary import ALL, ItemStatus

ALL_STATUSES = ALL
DEFAULT_STATUS = ItemStatus.APPROVED.value


class ExportError(VetbenchError, ValueError):
    """The selection cannot be exported as asked; the message says why and what to do."""


@dataclass(frozen=True)
class Selection:
    """Which items to export: a status (or ``all``), kinds and sources (empty: any)."""

    status: str = DEFAULT_STATUS
    kinds: tuple[str, ...] = ()
    sources: tuple[str, ...] = ()

    @property
    def statuses(self) -> list[str] | None:
        return None if self.status == ALL_STATUSES else [self.status]

    def describe(self) -> str:
        parts = ["any status" if self.status == ALL_STATUSES else f"status {self.status}"]
        if self.kinds:
            parts.append(f"kind {', '.join(self.kinds)}")
        if self.sources:
            parts.append(f"source {', '.join(self.sources)}")
        return ", ".join(parts)


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

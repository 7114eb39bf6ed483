"""Exporting items to a file format: the approved set (or any selection) as CSV, JSON or JSONL.

Exporting what was imported gives back the same records.  A format that cannot
hold the selected kinds (EconLogicQA holds ordering items only, CFLUE holds
multiple-choice ones) is refused before anything is written, and the file is
written to a temporary name and renamed, so a failed export leaves no half file.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from sqlalchemy import func
from sqlmodel import Session, col, select

from db.engine import Database
from db.formats import get_format
from db.formats.base import RevisionRecord
from db.formats.jsonl import FullItem
from db.items import iter_items
from db.models import Item, ItemRevision
from db.vocabulary import ItemStatus

ALL_STATUSES = "all"
DEFAULT_STATUS = ItemStatus.APPROVED.value
_BATCH = 1000


class ExportError(ValueError):
    """The selection cannot be exported as asked; the message says why and what to do."""


@dataclass(frozen=True)
class ExportSummary:
    path: Path
    format: str
    count: int
    by_kind: dict[str, int]


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


def count_by_kind(session: Session, selection: Selection) -> dict[str, int]:
    query = select(Item.kind, func.count()).group_by(Item.kind)
    if selection.statuses:
        query = query.where(col(Item.status).in_(selection.statuses))
    if selection.kinds:
        query = query.where(col(Item.kind).in_(selection.kinds))
    if selection.sources:
        query = query.where(col(Item.source).in_(selection.sources))
    return {kind: count for kind, count in session.execute(query)}


def iter_full_items(session: Session, selection: Selection) -> Iterator[FullItem]:
    """Selected items with every revision, in creation order, loaded in batches."""
    query = select(Item).order_by(col(Item.created_at), col(Item.id))
    if selection.statuses:
        query = query.where(col(Item.status).in_(selection.statuses))
    if selection.kinds:
        query = query.where(col(Item.kind).in_(selection.kinds))
    if selection.sources:
        query = query.where(col(Item.source).in_(selection.sources))
    batch: list[Item] = []
    for item in session.exec(query.execution_options(yield_per=_BATCH)):
        batch.append(item)
        if len(batch) == _BATCH:
            yield from _with_revisions(session, batch)
            batch = []
    if batch:
        yield from _with_revisions(session, batch)


def _with_revisions(session: Session, items: list[Item]) -> Iterator[FullItem]:
    revisions: dict[str, list[RevisionRecord]] = {item.id: [] for item in items}
    rows = session.exec(
        select(ItemRevision)
        .where(col(ItemRevision.item_id).in_(list(revisions)))
        .order_by(col(ItemRevision.item_id), col(ItemRevision.number))
    )
    for row in rows:
        revisions[row.item_id].append(
            RevisionRecord(
                number=row.number,
                prompt=row.prompt,
                choices=dict(row.choices),
                key=row.key,
                explanation=row.explanation,
                author=row.author,
                change_note=row.change_note,
                provenance=dict(row.provenance),
                created_at=row.created_at,
            )
        )
    for item in items:
        yield FullItem(
            id=item.id,
            kind=item.kind,
            source=item.source,
            source_ref=item.source_ref,
            language=item.language,
            status=item.status,
            meta=dict(item.meta),
            current_revision=item.current_revision,
            suspected_duplicate_of=item.suspected_duplicate_of,
            duplicate_similarity=item.duplicate_similarity,
            created_at=item.created_at,
            revisions=revisions[item.id],
        )


def export_items(
    db: Database,
    out: str | Path,
    *,
    format: str,
    status: str = DEFAULT_STATUS,
    kinds: Sequence[str] = (),
    sources: Sequence[str] = (),
) -> ExportSummary:
    """Write the selected items to ``out`` in ``format``; raises :class:`ExportError`."""
    try:
        file_format = get_format(format)
    except ValueError as error:
        raise ExportError(str(error)) from None
    if status != ALL_STATUSES and status not in {s.value for s in ItemStatus}:
        raise ExportError(f"unknown status '{status}' (known: all, {', '.join(ItemStatus)})")
    selection = Selection(status, tuple(kinds), tuple(sources))
    out_path = Path(out)
    with db.session() as session:
        by_kind = count_by_kind(session, selection)
        if not by_kind:
            hint = " (try --status all)" if status != ALL_STATUSES else ""
            raise ExportError(f"no items match {selection.describe()}{hint}")
        unfit = {kind: n for kind, n in by_kind.items() if kind not in file_format.kinds}
        if unfit:
            held = ", ".join(sorted(file_format.kinds))
            listed = ", ".join(f"{n} {kind}" for kind, n in sorted(unfit.items()))
            also = " also" if len(unfit) < len(by_kind) else ""
            raise ExportError(
                f"{format} holds {held} items only; the selection{also} has {listed} items. "
                f"Choose kinds with --kind, or export as jsonl"
            )
        items = (
            iter_full_items(session, selection)
            if format == "jsonl"
            else iter_items(
                session,
                statuses=selection.statuses,
                kinds=selection.kinds or None,
                sources=selection.sources or None,
            )
        )
        count = _write_atomically(out_path, lambda handle: file_format.module.write(items, handle))
    return ExportSummary(out_path, format, count, by_kind)


def _write_atomically(path: Path, write: Callable[[TextIO], int]) -> int:
    """Write to a temporary file beside ``path`` and rename it into place when complete."""
    temporary = path.with_name(f".{path.name}.{os.getpid()}.partial")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with temporary.open("w", encoding="utf-8", newline="") as out:
            count = write(out)
        os.replace(temporary, path)
    except OSError as error:
        temporary.unlink(missing_ok=True)
        raise ExportError(f"cannot write {path}: {error.strerror or error}") from None
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise
    return count

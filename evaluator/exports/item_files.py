"""Exporting items in the import formats: the approved set (or any selection) as CSV, JSON or JSONL.

Exporting what was imported gives back the same records.  A format that cannot
hold the selected kinds (EconLogicQA holds ordering items only, CFLUE holds
multiple-choice ones) is refused before anything is written.  The file is written
through ``evaluator.exports.atomic_write``: ``-`` is standard output, a regular
file is replaced whole or not at all, a FIFO or device is written directly.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import replace
from pathlib import Path

from sqlalchemy import ColumnElement, func
from sqlmodel import Session, col, select

from db.engine import Database
from db.formats import get_format
from db.formats.base import RevisionRecord
from db.formats.jsonl import FullItem
from db.items import ItemSnapshot, item_conditions, iter_items
from db.models import Item, ItemRevision
from db.rows import from_row
from evaluator.exports.atomic_write import WriteError, write_file
from evaluator.exports.folder import release_selection
from evaluator.exports.selection import (
    APPROVED_ITEMS,
    ExportError,
    ExportSummary,
    Selection,
)

__all__ = ["ExportError", "ExportSummary", "Selection", "export_items", "iter_full_items"]

_BATCH = 1000


def _conditions(selection: Selection) -> list[ColumnElement[bool]]:
    return item_conditions(
        statuses=selection.statuses, kinds=selection.kinds, sources=selection.sources
    )


def count_by_kind(session: Session, selection: Selection) -> dict[str, int]:
    query = select(Item.kind, func.count()).group_by(Item.kind).where(*_conditions(selection))
    return {kind: count for kind, count in session.execute(query)}


def iter_full_items(session: Session, selection: Selection) -> Iterator[FullItem]:
    """Selected items with every revision, in creation order, loaded in batches."""
    query = select(Item).where(*_conditions(selection)).order_by(col(Item.created_at), col(Item.id))
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
            from_row(
                RevisionRecord, row, choices=dict(row.choices), provenance=dict(row.provenance)
            )
        )
    for item in items:
        yield from_row(FullItem, item, meta=dict(item.meta), revisions=revisions[item.id])


def _as_frozen(item: FullItem, frozen: ItemSnapshot) -> FullItem:
    """An item's history up to the revision a release froze, as it stood then."""
    return replace(
        item,
        kind=frozen.kind.value,  # an edit since may have changed the item's
        status=frozen.status,
        language=frozen.language,
        source_ref=frozen.source_ref,
        meta=frozen.meta,
        current_revision=frozen.revision,
        revisions=[r for r in item.revisions if r.number <= frozen.revision],
    )


def _release_full_items(session: Session, items: Sequence[ItemSnapshot]) -> Iterator[FullItem]:
    """A release's items with their history up to the frozen revision, in release order."""
    for start in range(0, len(items), _BATCH):
        batch = items[start : start + _BATCH]
        rows = session.exec(select(Item).where(col(Item.id).in_([item.id for item in batch])))
        by_id = {full.id: full for full in _with_revisions(session, list(rows))}
        yield from (_as_frozen(by_id[item.id], item) for item in batch)


def _check_kinds(format_name: str, kinds: frozenset[str], by_kind: dict[str, int]) -> None:
    unfit = {kind: n for kind, n in by_kind.items() if kind not in kinds}
    if unfit:
        held = ", ".join(sorted(kinds))
        listed = ", ".join(f"{n} {kind}" for kind, n in sorted(unfit.items()))
        also = " also" if len(unfit) < len(by_kind) else ""
        raise ExportError(
            f"{format_name} holds {held} items only; the selection{also} has others ({listed}). "
            f"Choose kinds with --kind, or export as jsonl"
        )


def export_items(
    db: Database,
    out: str | Path,
    *,
    format: str,
    selection: Selection = APPROVED_ITEMS,
) -> ExportSummary:
    """Write the selected items to ``out`` (``-``: standard output) in ``format``; with a
    release, that release's items as frozen, every record stamped with its name and hash.

    Raises :class:`ExportError`, before anything is written when the selection is wrong.
    """
    try:
        file_format = get_format(format)
    except ValueError as error:
        raise ExportError(str(error)) from None
    release = selection.release
    frozen: list[ItemSnapshot] = []
    if release is not None:
        selection, frozen = release_selection(
            db, release, kinds=selection.kinds, sources=selection.sources
        )
    out_path = Path(out)
    with db.session() as session:
        if release is not None:
            by_kind = dict(Counter(item.kind.value for item in frozen))
        else:
            by_kind = count_by_kind(session, selection)
        if not by_kind:
            hint = " (try --status all)" if selection.statuses else ""
            raise ExportError(f"no items match {selection.describe()}{hint}")
        _check_kinds(format, file_format.kinds, by_kind)
        items: Iterable[object]
        if release is not None:
            items = _release_full_items(session, frozen) if format == "jsonl" else frozen
        elif format == "jsonl":
            items = iter_full_items(session, selection)
        else:
            items = iter_items(
                session,
                statuses=selection.statuses,
                kinds=selection.kinds or None,
                sources=selection.sources or None,
            )
        stamp = selection.stamp
        try:
            count = write_file(
                out_path,
                lambda handle: file_format.module.write(items, handle, stamp=stamp),
            )
        except WriteError as error:
            raise ExportError(str(error)) from None
    return ExportSummary(out_path, format, count, by_kind)

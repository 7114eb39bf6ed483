"""Stored item flags, read back: every row checked as it is read.

A flag row vetbench did not write (inserted by hand: an unknown name, evidence that is
not a JSON object) is skipped, never raised on: triage, ``flags show``, ``items --flag``
and the review app go on without it.  Skipped rows are remembered and reported once
(:func:`malformed_notice`; the command line prints it as a note at its end), and a lead's
``vetbench flags recompute`` removes them (:func:`malformed_flag_ids`).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import ColumnElement, Select, exists, func, select
from sqlmodel import Session, col

from db.bulk_reads import id_chunks
from db.json_types import JsonObject, JsonValue
from db.models import Item, StoredFlag
from db.vocabulary import FlagName, FlagSource
from db.words import counted

__all__ = [
    "ItemFlag",
    "all_current_flags",
    "current_flags",
    "flag_counts",
    "flag_json",
    "flagged_condition",
    "malformed_flag_ids",
    "malformed_notice",
    "revision_flags",
]


@dataclass(frozen=True)
class ItemFlag:
    """One flag of one item revision, as plain data."""

    item_id: str
    revision: int
    name: FlagName
    source: FlagSource
    evidence: JsonObject
    created_at: datetime | None = None

    @property
    def summary(self) -> str:
        """The one line a reviewer reads."""
        return str(self.evidence.get("summary", ""))

    def to_json(self) -> JsonObject:
        evidence = {key: value for key, value in self.evidence.items() if key != "summary"}
        return {
            "name": self.name.value,
            "source": self.source.value,
            "revision": self.revision,
            "summary": self.summary,
            "evidence": evidence,
        }


_skipped: set[int] = set()  # ids of the malformed rows met since the last notice


def _flag(row: StoredFlag) -> ItemFlag | None:
    """The row as an :class:`ItemFlag`, or None (remembered, for :func:`malformed_notice`)
    when it is not one vetbench writes: an unknown name or source, evidence that is not
    a JSON object or a summary that is not text (a hand-inserted row)."""
    try:
        name, source = FlagName(row.name), FlagSource(row.source)
    except ValueError:
        name = None
    evidence = row.evidence
    if (
        name is None
        or not isinstance(evidence, dict)
        or not isinstance(evidence.get("summary", ""), str)
        or not isinstance(row.revision_number, int)
    ):
        if row.id is not None:
            _skipped.add(row.id)
        return None
    return ItemFlag(
        item_id=row.item_id,
        revision=row.revision_number,
        name=name,
        source=source,
        evidence=dict(evidence),
        created_at=row.created_at,
    )


def _valid(rows: Iterable[StoredFlag]) -> Iterator[ItemFlag]:
    """The rows vetbench wrote, as flags; of a revision's ``duplicate`` flags only the
    newest: an edit of the copy's original adds one beside the old (``db.copy_flags``)."""
    rows = list(rows)
    newest: dict[tuple[str, int], int] = {}
    for row in rows:
        if row.name == FlagName.DUPLICATE.value and row.id is not None:
            key = (row.item_id, row.revision_number)
            newest[key] = max(newest.get(key, row.id), row.id)
    for row in rows:
        if (
            row.name == FlagName.DUPLICATE.value
            and row.id is not None
            and newest[(row.item_id, row.revision_number)] != row.id
        ):
            continue
        flag = _flag(row)
        if flag is not None:
            yield flag


def malformed_notice() -> str | None:
    """One line about the malformed flag rows skipped since the last notice (each row
    counted once however often it was read), or None."""
    new = sorted(_skipped)
    _skipped.clear()
    if not new:
        return None
    shown = ", ".join(str(row_id) for row_id in new[:5]) + (" ..." if len(new) > 5 else "")
    return (
        f"{counted(len(new), 'malformed flag row')} skipped (item_flag id {shown}); "
        "a lead's `vetbench flags recompute` removes them"
    )


def malformed_flag_ids(session: Session) -> list[int]:
    """Every stored flag row that :func:`_flag` would skip (``flags recompute`` removes them)."""
    rows = session.execute(select(StoredFlag)).scalars()
    return [row.id for row in rows if row.id is not None and _flag(row) is None]


_ORDER = {name: position for position, name in enumerate(FlagName)}


def _sorted(flags: Iterable[ItemFlag]) -> list[ItemFlag]:
    return sorted(flags, key=lambda flag: (_ORDER[flag.name], flag.source.value, flag.summary))


def revision_flags(session: Session, item_id: str, revision: int) -> list[ItemFlag]:
    """The flags of one revision, in vocabulary order."""
    rows = session.execute(
        select(StoredFlag).where(
            col(StoredFlag.item_id) == item_id, col(StoredFlag.revision_number) == revision
        )
    ).scalars()
    return _sorted(_valid(rows))


def _current_rows() -> Select[StoredFlag]:
    """Stored flags of items' current revisions."""
    return (
        select(StoredFlag)
        .join(Item, col(Item.id) == col(StoredFlag.item_id))
        .where(col(StoredFlag.revision_number) == col(Item.current_revision))
    )


def _by_item(flags: Iterable[ItemFlag]) -> dict[str, list[ItemFlag]]:
    found: dict[str, list[ItemFlag]] = defaultdict(list)
    for flag in flags:
        found[flag.item_id].append(flag)
    return {item_id: _sorted(flags) for item_id, flags in found.items()}


def current_flags(session: Session, item_ids: Sequence[str]) -> dict[str, list[ItemFlag]]:
    """The flags of each item's current revision (items without flags are left out)."""
    return _by_item(
        flag
        for chunk in id_chunks(list(dict.fromkeys(item_ids)))
        for flag in _valid(
            session.execute(_current_rows().where(col(StoredFlag.item_id).in_(chunk))).scalars()
        )
    )


def all_current_flags(session: Session) -> dict[str, list[ItemFlag]]:
    """The flags of every item's current revision (triage reads them all at once)."""
    return _by_item(_valid(session.execute(_current_rows()).scalars()))


def flagged_condition(names: Sequence[str | FlagName]) -> ColumnElement[bool]:
    """SQL condition on ``item``: its current revision has one of these flags."""
    return exists().where(
        col(StoredFlag.item_id) == col(Item.id),
        col(StoredFlag.revision_number) == col(Item.current_revision),
        col(StoredFlag.name).in_([str(name) for name in names]),
    )


def flag_counts(session: Session) -> dict[str, int]:
    """How many items' current revisions carry each flag, in vocabulary order (0 included)."""
    rows = session.execute(
        select(col(StoredFlag.name), func.count(func.distinct(col(StoredFlag.item_id))))
        .join(Item, col(Item.id) == col(StoredFlag.item_id))
        .where(col(StoredFlag.revision_number) == col(Item.current_revision))
        .group_by(col(StoredFlag.name))
    )
    counted = Counter({str(name): int(count) for name, count in rows})
    return {name.value: counted.get(name.value, 0) for name in FlagName}


def flag_json(flags: Sequence[ItemFlag]) -> list[JsonValue]:
    """Flags as ``items --json`` and ``triage --json`` print them."""
    return [flag.to_json() for flag in flags]

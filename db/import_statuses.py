"""Statuses an item file states (a vetbench JSONL export's ``"status": "approved"``).

An item is approved or rejected only by a lead's decision (``db.guards`` refuses a
bare status), so an import never writes such a status itself: every new item starts
pending, and the records that said approved or rejected are collected here.  At the
end of the file's transaction:

- when the importing person is a lead, each becomes a decision in the lead's name
  about the item's current revision (its comment names the file and line), with its
  ``decide`` audit event, and the item takes the status;
- otherwise nothing is decided, and the import's notes say how many statuses were left
  for a lead (importing the same file again as a lead restores them: the items are
  unchanged, so only their statuses are decided).

Items that already have the stated status are left alone and not counted; the notes say
what was decided, or left, so an import that adds no item still says what it did.

Other statuses (pending, in review, agreed, conflict) are a cache of the judgments,
which an item file does not carry: a new item starts pending.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from sqlalchemy import select
from sqlmodel import Session, col

from db.bulk_reads import id_chunks
from db.decisions import NewDecision, write_decisions
from db.models import Item, Person
from db.vocabulary import DECISION_STATUSES, Role
from db.words import agreeing, counted

__all__ = ["StatedStatus", "decide_as", "restore_stated_statuses"]

_DECIDED = {status.value for status in DECISION_STATUSES}


@dataclass(frozen=True)
class StatedStatus:
    """A record's approved or rejected status, and where it was stated."""

    item_id: str
    status: str
    place: str  # "items.jsonl: line 4"

    @classmethod
    def of(cls, item_id: str, status: str, place: str) -> StatedStatus | None:
        return cls(item_id, status, place) if status in _DECIDED else None


def restore_stated_statuses(
    session: Session, actor: str, stated: Sequence[StatedStatus], file_name: str
) -> tuple[int, str | None]:
    """Decide ``stated`` as ``actor`` when they are a lead; returns how many were decided
    and a note for the import's summary (None when there is nothing to say).  Items
    that have the status already (decided before) are left alone."""
    if not stated:
        return 0, None
    wanted = {entry.item_id: entry for entry in stated}
    revisions: dict[str, tuple[int, str]] = {}
    for chunk in id_chunks(list(wanted)):
        rows = session.execute(
            select(col(Item.id), col(Item.current_revision), col(Item.status)).where(
                col(Item.id).in_(chunk)
            )
        )
        revisions.update({item_id: (number, status) for item_id, number, status in rows})
    todo = [
        entry
        for entry in wanted.values()
        if entry.item_id in revisions and revisions[entry.item_id][1] != entry.status
    ]
    if not todo:
        return 0, None
    person = session.execute(select(Person).where(col(Person.name) == actor)).scalar_one_or_none()
    if person is None or person.role != Role.LEAD.value or person.id is None:
        return 0, (
            f"{file_name}: {counted(len(todo), 'record')} {agreeing(len(todo), 'states', 'state')} "
            f"a decision {agreeing(len(todo), 'its item lacks', 'their items lack')} "
            f"({_tallied(todo)}; first: {todo[0].place}); only a lead's decision approves or "
            "rejects: a lead importing the file again (--as LEAD) decides them"
        )
    write_decisions(
        session,
        person,
        [
            NewDecision(
                entry.item_id,
                entry.status,
                revisions[entry.item_id][0],
                f"status stated by {entry.place}",
                {
                    "status": entry.status,
                    "revision": revisions[entry.item_id][0],
                    "previous_status": revisions[entry.item_id][1],
                    "stated_by": entry.place,
                },
            )
            for entry in todo
        ],
    )
    return len(todo), (
        f"{file_name}: decided {counted(len(todo), 'item')} as the file states "
        f"({_tallied(todo)}), in {actor}'s name; each decision's comment names its line"
    )


def _tallied(entries: Sequence[StatedStatus]) -> str:
    """``approved 36, rejected 1``."""
    counts = Counter(entry.status for entry in entries)
    return ", ".join(f"{status} {count}" for status, count in sorted(counts.items()))


def decide_as(session: Session, lead: str, item_ids: Sequence[str], status: str, why: str) -> int:
    """Decide ``item_ids`` as ``lead`` (registered as a lead when new), audited, each
    decision's comment naming ``why``; for scripts that need approved items (``bench/``).
    Returns how many were decided."""
    from db.people import ensure_person

    ensure_person(session, lead, Role.LEAD)
    session.flush()
    entries = [StatedStatus(item_id, status, why) for item_id in item_ids]
    return restore_stated_statuses(session, lead, entries, why)[0]

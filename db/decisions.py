"""Which decisions count: a lead's newest decision on an item that was not undone.

Undo (``reviewer.adjudication.undo_decision``) sets ``retracted_at`` and keeps the
row, so every reader of decisions asks :func:`in_force` (or :func:`latest_decision`)
instead of reading the table bare.  Decisions made in bulk (a lead approving the
agreed items, deciding a flag, an import restoring stated statuses) are written by
:func:`write_decisions`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from sqlalchemy import ColumnElement, insert, update
from sqlmodel import Session, col, func, select

from db.audit import record_audits
from db.bulk_reads import id_chunks
from db.json_types import JsonObject
from db.models import Decision, Item, Person, utcnow
from db.vocabulary import DECISION_STATUSES

__all__ = [
    "NewDecision",
    "decided_without_decision",
    "in_force",
    "latest_decision",
    "newest_decision_id",
    "newest_decisions",
    "write_decisions",
]


def in_force() -> ColumnElement[bool]:
    """Decisions not undone."""
    return col(Decision.retracted_at).is_(None)


def newest_decision_id(session: Session) -> int:
    """The id of the newest decision stored, undone or not (0: none yet): every decision
    written after this read has a larger one."""
    return session.exec(select(func.max(col(Decision.id)))).one() or 0


def latest_decision(session: Session, item_id: str) -> Decision | None:
    """The item's newest decision that was not undone (None: undecided)."""
    return session.exec(
        select(Decision)
        .where(col(Decision.item_id) == item_id, in_force())
        .order_by(col(Decision.created_at).desc(), col(Decision.id).desc())
    ).first()


def newest_decisions(session: Session, items: ColumnElement[bool]) -> dict[str, tuple[str, int]]:
    """Each item's newest decision not undone, as (status, revision number decided), of the
    items the condition ``items`` (on :class:`Item`) chooses, in one statement; an item
    without one is left out.  What :func:`latest_decision` gives one item, for many: the
    status rule's input."""
    newest: dict[str, tuple[str, int]] = {}
    rows = session.execute(  # oldest first: the newest wins
        select(col(Decision.item_id), col(Decision.status), col(Decision.revision_number))
        .join(Item, col(Item.id) == col(Decision.item_id))
        .where(items, in_force())
        .order_by(col(Decision.created_at), col(Decision.id))
    )
    for item_id, status, revision in rows:
        newest[item_id] = (status, revision)
    return newest


def decided_without_decision(session: Session) -> list[str]:
    """The ids of items approved or rejected that no decision in force holds: the newest
    decision not undone is missing, says another status, or is about another revision.

    The status rule (triggers on SQLite, ``db.guards`` on PostgreSQL) refuses such a
    status; one is there only if the rule was taken away (a dropped SQLite trigger, a
    superuser's ``ALTER TABLE ... DISABLE TRIGGER``) while it was written."""
    decided = [status.value for status in DECISION_STATUSES]
    items = session.execute(
        select(col(Item.id), col(Item.status), col(Item.current_revision))
        .where(col(Item.status).in_(decided))
        .order_by(col(Item.id))
    ).all()
    newest = newest_decisions(session, col(Item.status).in_(decided))
    return [
        item_id for item_id, status, revision in items if newest.get(item_id) != (status, revision)
    ]


@dataclass(frozen=True)
class NewDecision:
    """One decision to write: the item's revision decided, the status it gets, and
    the changes its ``decide`` audit event records."""

    item_id: str
    status: str
    revision: int
    comment: str
    audit: JsonObject
    final_key: str | None = None
    reason: str | None = None


def write_decisions(session: Session, lead: Person, decisions: Sequence[NewDecision]) -> None:
    """Write ``decisions`` in ``lead``'s name, each with its audit event, and set the
    items' status, in bulk statements: tens of thousands of items are decided in
    seconds.  The caller read the items inside this transaction."""
    now = utcnow()
    session.execute(
        insert(Decision),
        [
            {
                "item_id": decision.item_id,
                "lead_id": lead.id,
                "status": decision.status,
                "revision_number": decision.revision,
                "final_key": decision.final_key,
                "reason": decision.reason,
                "comment": decision.comment,
                "created_at": now,
            }
            for decision in decisions
        ],
    )
    record_audits(
        session, lead.name, "decide", [(decision.item_id, decision.audit) for decision in decisions]
    )
    # These decisions are now the newest, so the status rule gives the decided status.
    for status in sorted({decision.status for decision in decisions}):
        ids = [decision.item_id for decision in decisions if decision.status == status]
        for chunk in id_chunks(ids):
            session.execute(
                update(Item).where(col(Item.id).in_(chunk)).values(status=status),
                execution_options={"synchronize_session": False},
            )

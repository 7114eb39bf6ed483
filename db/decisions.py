"""Which decisions count: a lead's newest decision on an item that was not undone.

Undo (``reviewer.adjudication.undo_decision``) sets ``retracted_at`` and keeps the
row, so every reader of decisions asks :func:`in_force` (or :func:`latest_decision`)
instead of reading the table bare.
"""

from __future__ import annotations

from sqlalchemy import ColumnElement
from sqlmodel import Session, col, select

from db.models import Decision

__all__ = ["in_force", "latest_decision"]


def in_force() -> ColumnElement[bool]:
    """Decisions not undone."""
    return col(Decision.retracted_at).is_(None)


def latest_decision(session: Session, item_id: str) -> Decision | None:
    """The item's newest decision that was not undone (None: undecided)."""
    return session.exec(
        select(Decision)
        .where(col(Decision.item_id) == item_id, in_force())
        .order_by(col(Decision.created_at).desc(), col(Decision.id).desc())
    ).first()

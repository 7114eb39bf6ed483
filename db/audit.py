"""The append-only audit log: one call, used by every writer."""

from __future__ import annotations

from typing import Any

from sqlmodel import Session

from db.models import AuditEvent


def record_event(
    session: Session, actor: str, action: str, target: str = "", **payload: Any
) -> None:
    """Add an audit event to the caller's transaction (it commits with the change it records)."""
    session.add(AuditEvent(actor=actor, action=action, target=target, payload=payload))

"""The append-only audit trail: one call for every writer, one query for every reader.

Every write a person makes (judgments, retractions, edits, decisions, settings,
people, imports; evaluation runs and generated items too) adds an :class:`AuditEvent`
in the same transaction as the change, through :func:`record_audit`.  Each event
says who acted (the person), what they did to what, what changed, and where from:
the operating-system login that ran the command and the host.  On PostgreSQL the
server also stamps the database role (``session_user``) and the time, so neither
can be claimed by the client.

Nothing updates or deletes an event: triggers refuse it on SQLite and PostgreSQL,
and on PostgreSQL no role is granted UPDATE or DELETE (``db.privileges``).  A reader
who is not a lead reads another's judgment event without its verdict and blind answer
(:meth:`AuditEntry.as_read_by`), so that annotators judge blind.
"""

from __future__ import annotations

import functools
import getpass
import os
import socket
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any, TypedDict

from sqlalchemy import Connection, insert
from sqlmodel import Session, col, select

from db.json_types import JsonObject
from db.models import AuditEvent, utcnow
from db.rows import from_row
from db.vocabulary import JUDGE_ACTION

__all__ = [
    "SQLITE_APPEND_ONLY_TRIGGERS",
    "SQLITE_AUDIT_TRIGGERS",
    "AuditEntry",
    "origin",
    "protect_audit_trail_on_sqlite",
    "read_audit",
    "record_audit",
    "record_audits",
    "record_event",
]

_FIELD_LIMIT = 255  # the width of the actor, target, login and host columns
JUDGMENT_CONTENT = (
    "verdict",
    "blind_answer",
    "corrected_key",
    "duplicate_of",
    "alternative_orders",
)
"""What a judgment's event says of the judgment itself: shown to leads and its author."""


@dataclass(frozen=True)
class Origin:
    """Where a command runs: the operating-system login and the host name."""

    os_login: str
    host: str


@functools.cache
def origin() -> Origin:
    """This process's login (from its user id, not from $USER, which anyone can set) and host."""
    try:
        import pwd

        login = pwd.getpwuid(os.getuid()).pw_name
    except (ImportError, KeyError):  # no passwd entry (containers), or not POSIX
        try:
            login = getpass.getuser()
        except Exception:
            login = ""
    return Origin(os_login=login[:_FIELD_LIMIT], host=socket.gethostname()[:_FIELD_LIMIT])


class _EventValues(TypedDict):
    """The columns of one new ``audit_event`` row (the server fills ``db_role`` on PostgreSQL)."""

    actor: str
    action: str
    target: str
    payload: JsonObject
    os_login: str
    host: str
    created_at: datetime


def _event_values(actor: str, action: str, target: str, changes: JsonObject) -> _EventValues:
    where = origin()
    return {
        "actor": actor[:_FIELD_LIMIT],
        "action": action,
        "target": target[:_FIELD_LIMIT],
        "payload": changes,
        "os_login": where.os_login,
        "host": where.host,
        "created_at": utcnow(),
    }


def record_audit(
    session: Session, actor: str, action: str, target: str = "", **changes: Any
) -> None:
    """Add one audit event to the caller's transaction; it commits with the change it records.

    ``actor`` is the person acting (as ``db.identity.resolve_identity`` resolved
    them), ``action`` a short verb ("judge", "decide", "config"), ``target`` what was
    acted on (an item id, a file name, "run:3", a person), ``changes`` what changed,
    as JSON-ready values (old and new values where there are any).
    """
    session.add(AuditEvent(**_event_values(actor, action, target, changes)))


record_event = record_audit
"""The earlier name of :func:`record_audit`, still used by ``evaluator/`` and the importer."""


def record_audits(
    session: Session,
    actor: str,
    action: str,
    changes_by_target: Sequence[tuple[str, JsonObject]],
) -> None:
    """Many events of one action in one statement (a lead approving thousands of items)."""
    if changes_by_target:
        session.execute(
            insert(AuditEvent),
            [
                _event_values(actor, action, target, changes)
                for target, changes in changes_by_target
            ],
        )


@dataclass(frozen=True)
class AuditEntry:
    """One audit event, as plain data."""

    id: int
    created_at: datetime
    actor: str
    action: str
    target: str
    changes: JsonObject
    os_login: str
    host: str
    db_role: str | None

    def as_read_by(self, reader: str, *, lead: bool) -> AuditEntry:
        """The event as ``reader`` may read it: whole for a lead and for its own actor;
        for anyone else a judgment's event without its verdict and blind answer, since who
        answered what is for leads, as in the conflict queue, so that annotators judge
        blind (``is_withheld`` then says so)."""
        if lead or self.actor == reader or self.action != JUDGE_ACTION:
            return self
        kept = {key: value for key, value in self.changes.items() if key not in JUDGMENT_CONTENT}
        return replace(self, changes=kept)

    @property
    def is_withheld(self) -> bool:
        """A judgment's event read without its verdict and blind answer (:meth:`as_read_by`)."""
        return self.action == JUDGE_ACTION and not set(JUDGMENT_CONTENT) & set(self.changes)

    def to_json(self) -> JsonObject:
        return {
            "id": self.id,
            "at": self.created_at.isoformat(),
            "person": self.actor,
            "action": self.action,
            "target": self.target,
            "changes": self.changes,
            "os_login": self.os_login,
            "host": self.host,
            "db_role": self.db_role,
        }


def read_audit(
    session: Session,
    *,
    target: str | None = None,
    person: str | None = None,
    since: datetime | None = None,
    actions: Iterable[str] = (),
    limit: int | None = None,
) -> list[AuditEntry]:
    """Audit events, oldest first; ``limit`` keeps the newest ones."""
    query = select(AuditEvent)
    if target is not None:
        query = query.where(col(AuditEvent.target) == target)
    if person is not None:
        query = query.where(col(AuditEvent.actor) == person)
    if since is not None:
        query = query.where(col(AuditEvent.created_at) >= since)
    if actions := list(actions):
        query = query.where(col(AuditEvent.action).in_(actions))
    query = query.order_by(col(AuditEvent.created_at).desc(), col(AuditEvent.id).desc())
    if limit is not None:
        query = query.limit(limit)
    rows = list(session.exec(query))
    rows.reverse()
    return [from_row(AuditEntry, row, id=row.id or 0, changes=dict(row.payload)) for row in rows]


SQLITE_AUDIT_TRIGGERS: dict[str, str] = {
    **{
        f"audit_event_no_{operation.lower()}": f"CREATE TRIGGER IF NOT EXISTS "
        f"audit_event_no_{operation.lower()} BEFORE {operation} ON audit_event BEGIN SELECT "
        f"RAISE(ABORT, 'the audit trail is append-only: {operation} on audit_event refused'); END"
        for operation in ("UPDATE", "DELETE")
    },
    # INSERT OR REPLACE deletes the old row without firing the DELETE trigger (SQLite
    # fires it only with recursive triggers on), so an insert may not reuse an id.
    "audit_event_no_replace": "CREATE TRIGGER IF NOT EXISTS audit_event_no_replace "
    "BEFORE INSERT ON audit_event WHEN NEW.id IS NOT NULL AND EXISTS "
    "(SELECT 1 FROM audit_event WHERE id = NEW.id) BEGIN SELECT RAISE(ABORT, "
    "'the audit trail is append-only: INSERT OR REPLACE of an existing event refused'); END",
}
"""SQLite's guard of the audit trail, by trigger name.  A migration that rebuilds the
``audit_event`` table (Alembic's batch mode copies it) must create these again afterwards."""

SQLITE_APPEND_ONLY_TRIGGERS: tuple[str, ...] = tuple(SQLITE_AUDIT_TRIGGERS.values())


def protect_audit_trail_on_sqlite(connection: Connection) -> None:
    """Create :data:`SQLITE_APPEND_ONLY_TRIGGERS` (a no-op on other databases)."""
    if connection.dialect.name == "sqlite":
        for statement in SQLITE_APPEND_ONLY_TRIGGERS:
            connection.exec_driver_sql(statement)

"""identity and audit: where each audit event came from; an append-only trail;
PostgreSQL group roles, grants and row-level security

The audit trail gains the operating-system login, the host and (PostgreSQL) the
database role of each event, and indexes for reading it by person, target and
time.  Triggers refuse UPDATE and DELETE of audit events on both backends.

On PostgreSQL the group roles ``vetbench_annotator`` and ``vetbench_lead`` are
created when missing, and every table gets the grants and policies declared in
``db.privileges.TABLES``; all of it is idempotent.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlmodel.sql.sqltypes import AutoString

from db.audit import protect_audit_trail_on_sqlite
from db.privileges import apply_privileges, remove_privileges

revision: str = "0003_identity_audit"
down_revision: str | None = "0002_review"

_NEW_INDEXES = ("actor", "target", "created_at")


def upgrade() -> None:
    with op.batch_alter_table("audit_event", schema=None) as batch_op:
        for name in ("os_login", "host"):
            batch_op.add_column(
                sa.Column(name, AutoString(length=255), nullable=False, server_default="")
            )
        batch_op.add_column(sa.Column("db_role", AutoString(length=255), nullable=True))
        for column in _NEW_INDEXES:
            batch_op.create_index(f"ix_audit_event_{column}", [column], unique=False)
    bind = op.get_bind()
    protect_audit_trail_on_sqlite(bind)
    apply_privileges(bind)


def downgrade() -> None:
    bind = op.get_bind()
    remove_privileges(bind)
    if bind.dialect.name == "sqlite":
        for operation in ("update", "delete"):
            op.execute(f"DROP TRIGGER IF EXISTS audit_event_no_{operation}")
    with op.batch_alter_table("audit_event", schema=None) as batch_op:
        for column in _NEW_INDEXES:
            batch_op.drop_index(f"ix_audit_event_{column}")
        batch_op.drop_column("db_role")
        batch_op.drop_column("host")
        batch_op.drop_column("os_login")

"""guards the database keeps for every client: statuses from decisions, item content,
flags, evaluation runs by their starter, an audit trail no insert can replace

- SQLite and PostgreSQL: an item is approved or rejected only while its newest
  decision says so about its current revision (``db.guards``).
- SQLite: ``INSERT OR REPLACE`` cannot rewrite an audit event
  (``db.audit.SQLITE_AUDIT_TRIGGERS``).
- PostgreSQL: members no longer change an item's kind or source; revisions are
  appended in their author's own name; ``current_revision`` names a revision; flag rows
  are well-formed; ``eval_run.db_role`` (new) is stamped with the role that started the
  run, taken for existing runs from their ``eval-run`` audit event, and only that role
  changes the run and its predictions; an audit event's actor is the role that wrote
  it; annotators no longer read gold items' known verdicts and answers
  (``db.privileges``).
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlmodel.sql.sqltypes import AutoString

from db.audit import SQLITE_AUDIT_TRIGGERS
from db.guards import POSTGRES_GUARD_FUNCTIONS, POSTGRES_GUARD_TRIGGERS, SQLITE_STATUS_TRIGGERS
from db.privileges import ANNOTATOR_GROUP, TABLES, apply_privileges, run_statements

revision: str = "0007_guards"
down_revision: str | None = "0006_guidelines_gold_search"

_NEW_SQLITE_TRIGGERS = {
    **SQLITE_STATUS_TRIGGERS,
    "audit_event_no_replace": SQLITE_AUDIT_TRIGGERS["audit_event_no_replace"],
}
_RUN_TABLES = ("eval_run", "prediction")


def upgrade() -> None:
    with op.batch_alter_table("eval_run", schema=None) as batch_op:
        batch_op.add_column(sa.Column("db_role", AutoString(length=255), nullable=True))
    bind = op.get_bind()
    if bind.dialect.name == "sqlite":
        for statement in _NEW_SQLITE_TRIGGERS.values():
            bind.exec_driver_sql(statement)
        return
    if bind.dialect.name == "postgresql":
        # Who started each existing run: the server stamped its eval-run event.
        bind.execute(
            sa.text(
                "UPDATE eval_run r SET db_role = (SELECT a.db_role FROM audit_event a "
                "WHERE a.action = 'eval-run' AND a.target = 'run:' || r.id "
                "ORDER BY a.id LIMIT 1)"
            )
        )
    apply_privileges(bind)


def downgrade() -> None:
    bind = op.get_bind()
    if bind.dialect.name == "sqlite":
        for name in _NEW_SQLITE_TRIGGERS:
            bind.exec_driver_sql(f"DROP TRIGGER IF EXISTS {name}")
    elif bind.dialect.name == "postgresql":
        policies = [
            f"DROP POLICY IF EXISTS {policy.name} ON {entry.table}"
            for entry in TABLES
            if entry.table in _RUN_TABLES
            for policy in entry.policies
        ]
        run_statements(
            bind,
            [
                *(
                    f"DROP TRIGGER IF EXISTS {name} ON {table}"
                    for table, name, *_ in POSTGRES_GUARD_TRIGGERS
                ),
                *policies,
                *(f"ALTER TABLE {table} DISABLE ROW LEVEL SECURITY" for table in _RUN_TABLES),
                *(f"DROP FUNCTION IF EXISTS {name}" for name in POSTGRES_GUARD_FUNCTIONS),
                # 0006's grant: members read every column of a gold item.
                f"GRANT SELECT ON gold_item TO {ANNOTATOR_GROUP}",
                # 0006's grant: members updated every column of an item.
                f"GRANT UPDATE ON item TO {ANNOTATOR_GROUP}",
            ],
        )
    with op.batch_alter_table("eval_run", schema=None) as batch_op:
        batch_op.drop_column("db_role")

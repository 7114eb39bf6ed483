"""private gold events: on PostgreSQL only leads read the audit events that mark gold items

- ``audit_event``: row-level security.  A ``gold-add`` event holds the gold item's known
  verdict and answer, which annotators must not read (``gold_item``'s columns are kept
  from them); every member still reads every other event and records events as before.
  Nothing changes on SQLite, where anyone holding the file reads everything.
"""

from __future__ import annotations

from alembic import op

from db.privileges import apply_privileges

revision: str = "0015_private_gold_events"
down_revision: str | None = "0014_same_choices_flag"


def upgrade() -> None:
    apply_privileges(op.get_bind())


def downgrade() -> None:
    # The policies stay: they hide only gold answers, which no earlier code shows members.
    pass

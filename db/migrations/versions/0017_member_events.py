"""member events: on PostgreSQL an annotator cannot record a lead's action in the audit trail

- ``audit_event``: the insert policy refuses, for members who are not leads, the actions
  of writes only leads make (``db.vocabulary.LEAD_AUDIT_ACTIONS``: decide, config,
  gold-add ...).  The actor was already their own name; now an event of theirs cannot
  read as a decision or a setting they could never make.  Nothing changes on SQLite.
"""

from __future__ import annotations

from alembic import op

from db.privileges import apply_privileges

revision: str = "0017_member_events"
down_revision: str | None = "0016_judgment_stamp"


def upgrade() -> None:
    apply_privileges(op.get_bind())


def downgrade() -> None:
    # The policy stays: it refuses only events no annotator's vetbench writes.
    pass

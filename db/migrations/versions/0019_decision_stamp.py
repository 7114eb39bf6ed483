"""decision stamp: on PostgreSQL a lead's decision is dated by the server

- ``decision``: the trigger ``decision_stamp`` sets ``created_at`` to the server's time
  when a lead (a member, not the owner) inserts a decision.  The newest decision not
  undone is the one that counts (``db.decisions``): a decision dated in the future, with
  psql or from a clock that runs ahead, outlived every later decision of another lead.
  Nothing changes on SQLite.
"""

from __future__ import annotations

from alembic import op

from db.privileges import apply_privileges

revision: str = "0019_decision_stamp"
down_revision: str | None = "0018_claim_stamp"


def upgrade() -> None:
    apply_privileges(op.get_bind())


def downgrade() -> None:
    # The trigger stays: it changes only a date vetbench sets to the present anyway.
    pass

"""claim stamp: on PostgreSQL a member's claim is dated by the server

- ``claim``: the trigger ``claim_stamp`` sets ``claimed_at`` to the server's time when a
  member makes or renews a claim.  A claim a member dated in the future (with psql) never
  expired: the item stayed claimed and its holder counted as at work for good
  (``reviewer.queue``).  Nothing changes on SQLite.
"""

from __future__ import annotations

from alembic import op

from db.privileges import apply_privileges

revision: str = "0018_claim_stamp"
down_revision: str | None = "0017_member_events"


def upgrade() -> None:
    apply_privileges(op.get_bind())


def downgrade() -> None:
    # The trigger stays: it changes only a date no vetbench client sets otherwise.
    pass

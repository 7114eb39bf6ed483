"""undo stays: on PostgreSQL a member cannot take back the undo of a judgment

- ``judgment``: the policy ``retract_own`` lets a member set ``retracted`` on their own
  judgments, and now only to true.  An annotator could set it back to false with psql
  (no audit event), leaving two active judgments of one revision in their name, which
  vetbench refuses everywhere else.  Nothing changes on SQLite.
"""

from __future__ import annotations

from alembic import op

from db.privileges import apply_privileges

revision: str = "0020_undo_stays"
down_revision: str | None = "0019_decision_stamp"


def upgrade() -> None:
    apply_privileges(op.get_bind())


def downgrade() -> None:
    # The policy stays: it refuses only what no vetbench client does.
    pass

"""judgment stamp: on PostgreSQL no gold answer is told for a judgment a rollback takes back

- ``judgment``: the trigger ``judgment_stamp`` gives a member's judgment the server's time
  (its transaction's start) and refuses an id not drawn from the sequence, so no one
  backdates a judgment or places it before their first answer to a gold item.
- ``vetbench_gold_known`` and ``vetbench_calibration_outcomes`` tell a member about their
  own judgment only once an earlier transaction stored it: inserting a judgment, reading
  the known answer and rolling back told it without a trace (``db.guards``).
Nothing changes on SQLite.
"""

from __future__ import annotations

from alembic import op

from db.privileges import apply_privileges

revision: str = "0016_judgment_stamp"
down_revision: str | None = "0015_private_gold_events"


def upgrade() -> None:
    apply_privileges(op.get_bind())


def downgrade() -> None:
    # The trigger and the functions stay: they refuse only what no vetbench client does.
    pass

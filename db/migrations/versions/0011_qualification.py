"""the qualification gate: leads let someone who failed try again; calibration outcomes

- ``person.calibration_reset_after``: the newest judgment id when a lead let this person
  try the qualification again (``vetbench users requalify``); only calibration answers
  after it count (``db.qualification``).  PostgreSQL: leads may update it.
- PostgreSQL: ``vetbench_calibration_outcomes()`` tells every member whether each
  calibration judgment matched its gold (the known answers stay hidden), so any
  member's write refreshes item statuses by the gate's rule (``db.guards``).
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from db.privileges import apply_privileges, drop_policies_using, run_statements

revision: str = "0011_qualification"
down_revision: str | None = "0008_releases"


def upgrade() -> None:
    with op.batch_alter_table("person", schema=None) as batch_op:
        batch_op.add_column(sa.Column("calibration_reset_after", sa.Integer(), nullable=True))
    apply_privileges(op.get_bind())


def downgrade() -> None:
    bind = op.get_bind()
    drop_policies_using(bind, "person", ("calibration_reset_after",))
    if bind.dialect.name == "postgresql":
        run_statements(bind, ["DROP FUNCTION IF EXISTS vetbench_calibration_outcomes()"])
    with op.batch_alter_table("person", schema=None) as batch_op:
        batch_op.drop_column("calibration_reset_after")

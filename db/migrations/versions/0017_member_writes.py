"""member writes: on PostgreSQL writes a member made with psql around vetbench are refused

The rules are in ``db.guards`` and ``db.table_privileges``; this migration applies them.
Nothing changes on SQLite, where anyone holding the file reads and writes all.

- ``judgment``: a calibration judgment names the gold item of the item and revision it
  judges (``vetbench_stamp_judgment``).  A judgment of any item naming each gold item
  made ``vetbench_gold_known`` tell every known answer to any member.
"""

from __future__ import annotations

from alembic import op

from db.privileges import apply_privileges

revision: str = "0017_member_writes"
down_revision: str | None = "0016_own_answers"


def upgrade() -> None:
    apply_privileges(op.get_bind())


def downgrade() -> None:
    # Nothing in the schema to take back.  The functions, triggers and policies are put
    # in place as the newest vetbench declares them (apply_privileges always does): they
    # refuse only what no vetbench client writes.
    apply_privileges(op.get_bind())

"""item flags: why a revision looks suspicious, with the evidence, per revision

A new table ``item_flag`` holds the flags of each item revision (``db.vocabulary.FlagName``:
duplicate, needs-media, html, key-mismatch, order-leak, model-disagrees,
second-opinion), where each came from (``auto``, ``model``, ``check``) and its
evidence.  Existing items get theirs at once: the automatic flags of every current
revision, the duplicate links explained, and the model flags from the runs already
stored (``db.flag_recompute.recompute_flags``; seconds for tens of thousands of items).

On PostgreSQL members may read and add flags (imports, edits, generation and
``vetbench check`` add them) and leads may remove them (``vetbench flags recompute``
replaces stale ones); see ``db.privileges.TABLES``.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlmodel import Session
from sqlmodel.sql.sqltypes import AutoString

from db.flag_recompute import recompute_flags
from db.privileges import apply_privileges

revision: str = "0005_item_flags"
# There is no 0004 (it was never merged): the chain is 0003 -> 0005 -> 0006.
down_revision: str | None = "0003_identity_audit"


def upgrade() -> None:
    op.create_table(
        "item_flag",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("item_id", AutoString(length=255), nullable=False),
        sa.Column("revision_number", sa.Integer(), nullable=False),
        sa.Column("name", AutoString(length=32), nullable=False),
        sa.Column("source", AutoString(length=16), nullable=False),
        sa.Column("evidence", sa.JSON(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["item_id"], ["item.id"]),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("item_flag", schema=None) as batch_op:
        batch_op.create_index("ix_item_flag_item_revision", ["item_id", "revision_number"])
        batch_op.create_index(batch_op.f("ix_item_flag_name"), ["name"], unique=False)
    bind = op.get_bind()
    # Flags for what is stored already; the session joins the migration's transaction.
    with Session(bind=bind) as session:
        recompute_flags(session, "migration")
        session.flush()
    apply_privileges(bind)


def downgrade() -> None:
    with op.batch_alter_table("item_flag", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_item_flag_name"))
        batch_op.drop_index("ix_item_flag_item_revision")
    op.drop_table("item_flag")

"""revision kind: each revision carries the kind its key is written in and was judged under

``item_revision.kind`` is filled from its item's kind (until now no edit could change
it); ``item.kind`` stays, as the kind of the item's current revision, which an edit may
now change (multi → single: CFLUE labels some single-answer questions multi).  On
PostgreSQL members may update ``item.kind``, and the guards keep it equal to the
current revision's and refuse a revision that turns an order into a choice of answers
or back (``db.guards``).
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlmodel.sql.sqltypes import AutoString

from db.privileges import apply_privileges

revision: str = "0012_revision_kind"
down_revision: str | None = "0011_qualification"


def upgrade() -> None:
    bind = op.get_bind()
    # A NOT NULL column with a default is added in place on SQLite (no table rebuild,
    # so the search triggers on item_revision stay); every insert names the kind.
    op.add_column(
        "item_revision",
        sa.Column("kind", AutoString(length=16), nullable=False, server_default=""),
    )
    bind.execute(
        sa.text("UPDATE item_revision SET kind = (SELECT kind FROM item WHERE item.id = item_id)")
    )
    if bind.dialect.name == "postgresql":
        op.alter_column("item_revision", "kind", server_default=None)
    apply_privileges(bind)


def downgrade() -> None:
    bind = op.get_bind()
    # Back to one kind per item: the current revision's, which item.kind already holds.
    if bind.dialect.name == "postgresql":
        op.drop_column("item_revision", "kind")
    else:
        bind.exec_driver_sql("ALTER TABLE item_revision DROP COLUMN kind")
    apply_privileges(bind)

"""key reveals: the key a person saw is remembered across sessions

- ``key_reveal``: one row per person and item revision whose key they saw before
  judging it (``db.reveals``), with the blind answer they gave first and the seconds it
  took, written when the review app shows the key.  The item comes back to them revealed,
  with that answer, in any later session, and a judgment of the revision stores that
  answer as the blind one.  On PostgreSQL each member reads and adds only their own rows;
  nobody updates or deletes one (``db.table_privileges``).
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlmodel.sql.sqltypes import AutoString

from db.models import UTCDateTime
from db.privileges import apply_privileges

revision: str = "0020_key_reveals"
down_revision: str | None = "0019_revision_audited"


def upgrade() -> None:
    op.create_table(
        "key_reveal",
        sa.Column("person_id", sa.Integer(), nullable=False),
        sa.Column("item_id", AutoString(), nullable=False),
        sa.Column("revision_number", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("blind_answer", AutoString(length=32), nullable=False),
        sa.Column("seconds", sa.Float(), nullable=False),
        sa.Column("revealed_at", UTCDateTime(timezone=True), nullable=False),
        sa.CheckConstraint("seconds >= 0", name="ck_key_reveal_seconds"),
        sa.ForeignKeyConstraint(["item_id"], ["item.id"]),
        sa.ForeignKeyConstraint(["person_id"], ["person.id"]),
        sa.PrimaryKeyConstraint("person_id", "item_id", "revision_number"),
    )
    apply_privileges(op.get_bind())


def downgrade() -> None:
    op.drop_table("key_reveal")

"""review filters: the filter each person last chose with ``/`` in the review app

- ``review_filter``: one row per person (``db.review_filters``), written by the app when
  the person applies a filter and read when they open it again.  On PostgreSQL each
  member reads and writes only their own row.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from db.models import UTCDateTime
from db.privileges import apply_privileges

revision: str = "0013_review_filters"
down_revision: str | None = "0012_revision_kind"


def upgrade() -> None:
    op.create_table(
        "review_filter",
        sa.Column("person_id", sa.Integer(), nullable=False),
        sa.Column("value", sa.JSON(), nullable=False),
        sa.Column("updated_at", UTCDateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["person_id"], ["person.id"]),
        sa.PrimaryKeyConstraint("person_id"),
    )
    apply_privileges(op.get_bind())


def downgrade() -> None:
    op.drop_table("review_filter")

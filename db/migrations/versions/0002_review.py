"""review queue: index items by (status, id)

The annotator's queue asks for the first open item of one status after a
starting id; with this index that is a range scan that stops at the first match
instead of a sort of every open item.
"""

from __future__ import annotations

from alembic import op

revision: str = "0002_review"
down_revision: str | None = "0001"


def upgrade() -> None:
    with op.batch_alter_table("item", schema=None) as batch_op:
        batch_op.create_index("ix_item_status_id", ["status", "id"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("item", schema=None) as batch_op:
        batch_op.drop_index("ix_item_status_id")

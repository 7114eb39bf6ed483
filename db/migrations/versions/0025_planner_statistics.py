"""planner statistics: a SQLite database imported before imports gathered them gets them

Since this revision every import gathers SQLite's query planner statistics
(``db.planner_statistics``): without them the review queue walked every open item to find
one whose key the person had seen (40,000 items: about 30 ms a move against 10).  A
database imported before has none until its next import, so they are gathered once here,
where it holds items.  Nothing on PostgreSQL, which keeps its own.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from db.planner_statistics import gather_statistics

revision: str = "0025_planner_statistics"
down_revision: str | None = "0024_release_item_metadata"


def upgrade() -> None:
    bind = op.get_bind()
    if bind.execute(sa.text("SELECT EXISTS (SELECT 1 FROM item)")).scalar():
        gather_statistics(bind)


def downgrade() -> None:
    """Statistics are no part of the schema: an older vetbench plans with them as they are."""

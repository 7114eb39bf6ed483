"""status judged: on PostgreSQL an item nobody judged stays pending

A member's raw SQL may write an undecided status (each member's session stores the
statuses its judgments move), but an item in review, agreed or in conflict now has a
judgment of its current revision, checked at commit (``vetbench_guard_item_judged``,
``db.guards``).  With psql an annotator marked every pending item agreed, and the review
queue served nothing.  Nothing changes on SQLite, where anyone holding the file reads
and writes all.
"""

from __future__ import annotations

from alembic import op

from db.privileges import apply_privileges

revision: str = "0022_status_judged"
down_revision: str | None = "0021_judgment_blind"


def upgrade() -> None:
    apply_privileges(op.get_bind())


# Nothing in the schema to take back: apply_privileges puts the functions and triggers in
# place as the newest vetbench declares them, and they refuse only what no client of it
# writes.
downgrade = upgrade

"""judged revision: on PostgreSQL a judgment's revision_id is the revision it names

A member's judgment (``vetbench_stamp_judgment``, ``db.guards``) names by
``revision_id`` the item's revision of its ``revision_number``.  With psql an annotator
inserted a judgment of one item whose ``revision_id`` was another item's revision: the
status rule, which reads the number, counted it for the one item, and the agreement
figures, which read the id, for the other, which the annotator had judged already.
Nothing changes on SQLite, where anyone holding the file reads and writes all.
"""

from __future__ import annotations

from alembic import op

from db.privileges import apply_privileges

revision: str = "0018_judged_revision"
down_revision: str | None = "0017_member_writes"


def upgrade() -> None:
    apply_privileges(op.get_bind())


# Nothing in the schema to take back: apply_privileges puts the functions in place as the
# newest vetbench declares them, and they refuse only what no client of it writes.
downgrade = upgrade

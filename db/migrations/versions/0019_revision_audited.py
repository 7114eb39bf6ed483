"""revision audited: on PostgreSQL every revision a member writes is in the audit trail

A stored item's new revision commits only with a ``revise`` audit event naming the
item, and a new item's revisions only with the ``import`` or ``generate`` event of
their transaction, in the writer's name (``vetbench_guard_revision_audited``,
``db.guards``).  With psql an annotator added a revision of a pending item and moved
the item to it: the item read otherwise, and ``vetbench audit --item`` showed no change.
vetbench's own writes (edits, key corrections, imports, generation) record these
events already.  Nothing changes on SQLite, where anyone holding the file reads and
writes all.
"""

from __future__ import annotations

from alembic import op

from db.privileges import apply_privileges

revision: str = "0019_revision_audited"
down_revision: str | None = "0018_judged_revision"


def upgrade() -> None:
    apply_privileges(op.get_bind())


# Nothing in the schema to take back: apply_privileges puts the functions and triggers in
# place as the newest vetbench declares them, and they refuse only what no client of it
# writes.
downgrade = upgrade

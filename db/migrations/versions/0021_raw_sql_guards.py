"""raw SQL guards: what an annotator or lead could still write around vetbench with psql

On PostgreSQL (``db.guards``, ``db.review_guards``, ``db.privileges``):

- a member's judgment commits only with its ``judge`` audit event naming it, holds a
  verdict of the vocabulary and a blind answer in canonical form for the judged
  revision, and is their only judgment in force of that revision;
- a revision is written in its writer's own name, a new item's too (or under a name
  that is no one's on the team, such as a generating model's), and a new item's
  ``import`` or ``generate`` event names the item or its source;
- an item's duplicate link changes only with an audit event naming the item;
- vetbench's functions run only for the two groups, not for every login;
- a release's items are written only by the transaction that makes the release.

Nothing changes on SQLite, where anyone holding the file reads and writes all.
"""

from __future__ import annotations

from alembic import op

from db.privileges import apply_privileges

revision: str = "0021_raw_sql_guards"
down_revision: str | None = "0020_key_reveals"


def upgrade() -> None:
    apply_privileges(op.get_bind())


# Nothing in the schema to take back: apply_privileges puts the functions and triggers in
# place as the newest vetbench declares them, and they refuse only what no client of it
# writes.
downgrade = upgrade

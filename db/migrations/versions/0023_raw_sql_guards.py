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

Release items that no release holds (written before, with psql) are removed, on both
backends: a release is stored after its items in one transaction, so such rows are part
of no release, and they kept their name from ever being used ("a release named 'v2' was
made meanwhile").  Nothing else changes on SQLite, where anyone holding the file reads
and writes all.
"""

from __future__ import annotations

from alembic import op
from sqlalchemy import Connection

from db.privileges import apply_privileges
from db.releases import lift_release_item_guard, protect_releases_on_sqlite

revision: str = "0023_raw_sql_guards"
down_revision: str | None = "0022_status_judged"

_ORPHANS = "FROM release_item WHERE release_name NOT IN (SELECT name FROM release)"


def _remove_orphan_release_items(bind: Connection) -> None:
    """Remove the release items no release holds, past the trigger that refuses deletes
    (created again right after: ``apply_privileges``, ``protect_releases_on_sqlite``)."""
    if not bind.exec_driver_sql(f"SELECT count(*) {_ORPHANS}").scalar():
        return
    lift_release_item_guard(bind, "DELETE")
    bind.exec_driver_sql(f"DELETE {_ORPHANS}")
    protect_releases_on_sqlite(bind)


def upgrade() -> None:
    bind = op.get_bind()
    _remove_orphan_release_items(bind)
    apply_privileges(bind)


def downgrade() -> None:
    # Nothing in the schema to take back: apply_privileges puts the functions and triggers
    # in place as the newest vetbench declares them, and they refuse only what no client
    # of it writes; the orphans removed were part of no release.
    apply_privileges(op.get_bind())

"""judgment blind: on PostgreSQL a member's judgment keeps the answer given before the key

A judgment a member inserts of an item revision whose key they saw (their ``key_reveal``
row, migration 0020) gives the blind answer stored with that row
(``vetbench_guard_judgment_blind``, ``db.review_guards``).  With psql an annotator
stored, as blind, an answer given after seeing the key, which every vetbench path
refuses (``reviewer.judgment_checks``).  Nothing changes on SQLite, where anyone holding
the file reads and writes all.
"""

from __future__ import annotations

from alembic import op

from db.privileges import apply_privileges

revision: str = "0021_judgment_blind"
down_revision: str | None = "0020_key_reveals"


def upgrade() -> None:
    apply_privileges(op.get_bind())


# Nothing in the schema to take back: apply_privileges puts the functions and triggers in
# place as the newest vetbench declares them, and they refuse only what no client of it
# writes.
downgrade = upgrade

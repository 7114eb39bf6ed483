"""releases: frozen, hashed versions of the benchmark; runs record their item set

- ``release``: a named version (hash, note, selection, review figures, who, when);
- ``release_item``: its items, each frozen at one revision with its content hash;
- ``eval_run.release_name`` and ``eval_run.item_set_hash``: the release a run evaluated,
  and the hash of the items it evaluated (``db.releases.item_set_hash``); runs made
  before get the hash of the revisions their predictions answered.

A release never changes: triggers refuse UPDATE and DELETE on both tables and items
added after their release (SQLite: ``db.releases.SQLITE_RELEASE_TRIGGERS``;
PostgreSQL: ``db.privileges``, where only leads may insert).
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlmodel.sql.sqltypes import AutoString

from db.models import UTCDateTime
from db.privileges import apply_privileges
from db.releases import backfill_item_sets, protect_releases_on_sqlite

revision: str = "0009_releases"
down_revision: str | None = "0007_guards"


def upgrade() -> None:
    op.create_table(
        "release",
        sa.Column("name", AutoString(length=255), nullable=False),
        sa.Column("hash", AutoString(length=64), nullable=False),
        sa.Column("note", AutoString(), nullable=False),
        sa.Column("selection", sa.JSON(), nullable=False),
        sa.Column("item_count", sa.Integer(), nullable=False),
        sa.Column("figures", sa.JSON(), nullable=False),
        sa.Column("created_by_id", sa.Integer(), nullable=False),
        sa.Column("created_at", UTCDateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["created_by_id"], ["person.id"]),
        sa.PrimaryKeyConstraint("name"),
    )
    op.create_table(
        "release_item",
        sa.Column("release_name", AutoString(length=255), nullable=False),
        sa.Column("item_id", AutoString(length=255), nullable=False),
        sa.Column("revision_number", sa.Integer(), nullable=False),
        sa.Column("content_hash", AutoString(length=64), nullable=False),
        sa.Column("language", AutoString(length=16), nullable=False),
        sa.Column("status", AutoString(length=16), nullable=False),
        sa.ForeignKeyConstraint(["item_id"], ["item.id"]),
        sa.PrimaryKeyConstraint("release_name", "item_id"),
    )
    with op.batch_alter_table("eval_run", schema=None) as batch_op:
        batch_op.add_column(sa.Column("release_name", AutoString(length=255), nullable=True))
        batch_op.add_column(sa.Column("item_set_hash", AutoString(length=64), nullable=True))
        batch_op.create_index(batch_op.f("ix_eval_run_item_set_hash"), ["item_set_hash"])
        batch_op.create_index(batch_op.f("ix_eval_run_release_name"), ["release_name"])
    bind = op.get_bind()
    backfill_item_sets(bind)  # runs made before: the items they evaluated, hashed
    protect_releases_on_sqlite(bind)
    apply_privileges(bind)


def downgrade() -> None:
    with op.batch_alter_table("eval_run", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_eval_run_release_name"))
        batch_op.drop_index(batch_op.f("ix_eval_run_item_set_hash"))
        batch_op.drop_column("item_set_hash")
        batch_op.drop_column("release_name")
    # Dropping a table drops its triggers (both backends); the guards refuse rows only.
    op.drop_table("release_item")
    op.drop_table("release")

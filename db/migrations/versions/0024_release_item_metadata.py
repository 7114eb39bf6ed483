"""release item metadata: a release freezes each item's source reference and metadata too

``release_item.source_ref`` and ``release_item.meta`` keep what the item held when the
release was made, as ``language`` already did: a metadata import changes an item's
without a new revision, and ``export --release`` took them from the item as it is now,
so an export of a release made later differed from one made before.

Releases made before this revision recorded neither: their items get what the items hold
at the upgrade (the best record there is), past the trigger that refuses updates, which is
created again right after.  The release hash covers neither, so every release still
verifies.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlmodel.sql.sqltypes import AutoString

from db.privileges import apply_privileges
from db.releases import lift_release_item_guard, protect_releases_on_sqlite

revision: str = "0024_release_item_metadata"
down_revision: str | None = "0023_raw_sql_guards"

_COLUMNS = ("source_ref", "meta")


def upgrade() -> None:
    bind = op.get_bind()
    # NOT NULL columns with a default are added in place on SQLite (no table rebuild, so
    # the release triggers stay); every insert names both.
    op.add_column(
        "release_item",
        sa.Column("source_ref", AutoString(length=255), nullable=False, server_default=""),
    )
    op.add_column("release_item", sa.Column("meta", sa.JSON(), nullable=False, server_default="{}"))
    lift_release_item_guard(bind, "UPDATE")
    bind.execute(
        sa.text(
            "UPDATE release_item SET "
            + ", ".join(
                f"{name} = (SELECT item.{name} FROM item WHERE item.id = release_item.item_id)"
                for name in _COLUMNS
            )
        )
    )
    if bind.dialect.name == "postgresql":
        for name in _COLUMNS:
            op.alter_column("release_item", name, server_default=None)
    protect_releases_on_sqlite(bind)
    apply_privileges(bind)


def downgrade() -> None:
    bind = op.get_bind()
    for name in _COLUMNS:
        if bind.dialect.name == "postgresql":
            op.drop_column("release_item", name)
        else:  # in place: a batch rebuild would drop the release triggers
            bind.exec_driver_sql(f"ALTER TABLE release_item DROP COLUMN {name}")
    apply_privileges(bind)

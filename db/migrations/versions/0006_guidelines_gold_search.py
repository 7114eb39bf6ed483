"""guidelines, gold items, undoable decisions, full-text search

- ``guidelines``: versions of the review guidelines (Markdown), written by leads;
  ``judgment.guidelines_version`` records the version each judgment was made under.
- ``gold_item``: item revisions with a known verdict and answer, mixed into
  annotators' queues for calibration; ``judgment.gold_id`` marks the judgments made
  of them (counted in gold accuracy only).
- ``decision.retracted_at`` / ``retracted_by_id``: a lead's undo keeps the row.
- ``item_search``: the full-text index of every item's current text, kept by
  triggers (``db.search``): SQLite FTS5 with the trigram tokenizer; PostgreSQL a
  table with a pg_trgm GIN index when the extension can be created.

On PostgreSQL the new tables get their grants and policies (``db.privileges``).
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlmodel.sql.sqltypes import AutoString

from db.models import UTCDateTime
from db.privileges import apply_privileges, drop_policies_using
from db.search import create_search_index, drop_search_index

revision: str = "0006_guidelines_gold_search"
down_revision: str | None = "0005_item_flags"

_ACTIVE_GOLD = sa.text("removed_at IS NULL")


def upgrade() -> None:
    op.create_table(
        "gold_item",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("item_id", AutoString(), nullable=False),
        sa.Column("revision_number", sa.Integer(), nullable=False),
        sa.Column("verdict", AutoString(length=16), nullable=False),
        sa.Column("answer", AutoString(length=32), nullable=False),
        sa.Column("note", AutoString(), nullable=False),
        sa.Column("lead_id", sa.Integer(), nullable=False),
        sa.Column("created_at", UTCDateTime(timezone=True), nullable=False),
        sa.Column("removed_at", UTCDateTime(timezone=True), nullable=True),
        sa.Column("removed_by_id", sa.Integer(), nullable=True),
        sa.ForeignKeyConstraint(["item_id"], ["item.id"]),
        sa.ForeignKeyConstraint(["lead_id"], ["person.id"]),
        sa.ForeignKeyConstraint(["removed_by_id"], ["person.id"]),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("gold_item", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_gold_item_item_id"), ["item_id"], unique=False)
        batch_op.create_index(
            "ux_gold_item_active",
            ["item_id"],
            unique=True,
            sqlite_where=_ACTIVE_GOLD,
            postgresql_where=_ACTIVE_GOLD,
        )
    op.create_table(
        "guidelines",
        sa.Column("version", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("text", AutoString(), nullable=False),
        sa.Column("sha256", AutoString(length=64), nullable=False),
        sa.Column("file_name", AutoString(length=255), nullable=False),
        sa.Column("author_id", sa.Integer(), nullable=False),
        sa.Column("created_at", UTCDateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["author_id"], ["person.id"]),
        sa.PrimaryKeyConstraint("version"),
    )
    with op.batch_alter_table("decision", schema=None) as batch_op:
        batch_op.add_column(sa.Column("retracted_at", UTCDateTime(timezone=True), nullable=True))
        batch_op.add_column(sa.Column("retracted_by_id", sa.Integer(), nullable=True))
        batch_op.create_foreign_key(
            "fk_decision_retracted_by_id_person", "person", ["retracted_by_id"], ["id"]
        )
    with op.batch_alter_table("judgment", schema=None) as batch_op:
        batch_op.add_column(sa.Column("guidelines_version", sa.Integer(), nullable=True))
        batch_op.add_column(sa.Column("gold_id", sa.Integer(), nullable=True))
        batch_op.create_foreign_key(
            "fk_judgment_gold_id_gold_item", "gold_item", ["gold_id"], ["id"]
        )
    bind = op.get_bind()
    create_search_index(bind)
    apply_privileges(bind)


def downgrade() -> None:
    bind = op.get_bind()
    drop_search_index(bind)
    drop_policies_using(bind, "decision", ("retracted_at", "retracted_by_id"))
    drop_policies_using(bind, "judgment", ("gold_id",))
    with op.batch_alter_table("judgment", schema=None) as batch_op:
        batch_op.drop_constraint("fk_judgment_gold_id_gold_item", type_="foreignkey")
        batch_op.drop_column("gold_id")
        batch_op.drop_column("guidelines_version")
    with op.batch_alter_table("decision", schema=None) as batch_op:
        batch_op.drop_constraint("fk_decision_retracted_by_id_person", type_="foreignkey")
        batch_op.drop_column("retracted_by_id")
        batch_op.drop_column("retracted_at")
    op.drop_table("guidelines")
    with op.batch_alter_table("gold_item", schema=None) as batch_op:
        batch_op.drop_index("ux_gold_item_active")
        batch_op.drop_index(batch_op.f("ix_gold_item_item_id"))
    op.drop_table("gold_item")
    # The policies of the revision this returns to (members read every judgment again).
    apply_privileges(bind)

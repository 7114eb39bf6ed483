"""own answers: on PostgreSQL a calibration answer and a cached model answer are their author's, and metadata changes and flags are accounted for

Both were readable, or writable, by every member with psql; the rules are in
``db.table_privileges`` and ``db.guards``, and this migration applies them.  Nothing
changes on SQLite, where anyone holding the file reads and writes all.

- ``judgment``: another annotator's calibration judgment (of a gold item) is for leads
  only.  Its blind answer, beside the outcome every member reads
  (``vetbench_calibration_outcomes``: whether it matched), told the gold item's known
  answer and verdict.  Ordinary judgments stay readable: each member's session
  computes the item statuses from them.  The policy that read them all is dropped.
- ``audit_event``: likewise the ``judge`` event of another's calibration judgment.
- ``api_response``: the response cache gets ``db_role``, stamped by the server, and it
  joins the primary key: each role reads and adds only its own cached responses.  Any
  member could add or rewrite one, which a later evaluation took as the model's answer.
  Rows cached before this carry no role (``""``): kept, but no PostgreSQL role reads
  them, as nobody can tell who stored them.  ``vetbench_stamp_run`` becomes
  ``vetbench_stamp_role``, which stamps runs and responses alike.
- ``item``: its metadata (``meta``, ``source_ref``, ``language``) changes only with a
  ``metadata`` audit event of the same transaction, as the importer writes one
  (trigger ``item_metadata_audited``): with psql a member changed it without a trace.
- ``item_flag``: a member's flag comes with what it is about, in the same transaction
  (trigger ``item_flag_origin``): a text rule's with a new revision or the item's
  duplicate link, a second opinion's with its ``flag`` audit event; model flags only
  from a lead.  A member planted flags, with made-up evidence, on any item.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlmodel.sql.sqltypes import AutoString

from db.privileges import apply_privileges, drop_policies_using

revision: str = "0016_own_answers"
down_revision: str | None = "0015_member_limits"


def _primary_key(*columns: str) -> None:
    """Make ``columns`` api_response's primary key (``db_role`` among them or not there)."""
    if op.get_bind().dialect.name == "postgresql":
        op.drop_constraint("api_response_pkey", "api_response", type_="primary")
        op.create_primary_key("api_response_pkey", "api_response", list(columns))
        return
    # SQLite changes no primary key in place: a new table, the rows copied over.
    with_role = "db_role" in columns
    op.create_table(
        "_api_response_new",
        sa.Column("key", AutoString(length=64), nullable=False),
        *(
            [sa.Column("db_role", AutoString(length=255), nullable=False, server_default="")]
            if with_role
            else []
        ),
        sa.Column("model", AutoString(length=512), nullable=False),
        sa.Column("response", sa.JSON(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint(*columns, name="api_response_pkey"),
    )
    names = ", ".join(
        ["key", *(["db_role"] if with_role else []), "model", "response", "created_at"]
    )
    op.execute(f"INSERT INTO _api_response_new ({names}) SELECT {names} FROM api_response")
    op.drop_table("api_response")
    op.rename_table("_api_response_new", "api_response")


def upgrade() -> None:
    bind = op.get_bind()
    op.add_column(
        "api_response",
        sa.Column("db_role", AutoString(length=255), nullable=False, server_default=""),
    )
    _primary_key("key", "db_role")
    if bind.dialect.name == "postgresql":
        op.alter_column("api_response", "db_role", server_default=None)
        op.execute("DROP POLICY IF EXISTS members_read ON judgment")
        op.execute("DROP TRIGGER IF EXISTS eval_run_stamp ON eval_run")
        op.execute("DROP FUNCTION IF EXISTS vetbench_stamp_run()")
    apply_privileges(bind)


def downgrade() -> None:
    bind = op.get_bind()
    drop_policies_using(bind, "api_response", ["db_role"])
    if bind.dialect.name == "postgresql":
        op.execute("DROP TRIGGER IF EXISTS api_response_stamp ON api_response")
    # One response per request again: the other roles' copies of a request go.
    bind.execute(
        sa.text(
            "DELETE FROM api_response WHERE EXISTS (SELECT 1 FROM api_response AS kept "
            "WHERE kept.key = api_response.key AND kept.db_role < api_response.db_role)"
        )
    )
    _primary_key("key")
    if bind.dialect.name == "postgresql":
        op.drop_column("api_response", "db_role")
    apply_privileges(bind)

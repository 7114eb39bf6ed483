"""member limits: on PostgreSQL what a member may write and read is narrowed where psql went around vetbench

Each change below is in ``db.table_privileges`` and ``db.guards``; the migration applies
them.  Nothing changes on SQLite, where anyone holding the file reads and writes all.

- ``audit_event``: row-level security.  A ``gold-add`` event holds the gold item's known
  verdict and answer, which only leads read now (``gold_item``'s columns were already kept
  from annotators); every member still reads every other event.  A member who is not a
  lead cannot record the actions of writes only leads make
  (``db.vocabulary.LEAD_AUDIT_ACTIONS``: decide, config, gold-add ...), so an event of
  theirs never reads as a decision or a setting they could not make.
- ``judgment``: the trigger ``judgment_stamp`` gives a member's judgment the server's time
  and refuses an id not drawn from the sequence, so no one backdates a judgment or places
  it before their first answer to a gold item; ``vetbench_gold_known`` and
  ``vetbench_calibration_outcomes`` tell a member about their own judgment only once an
  earlier transaction stored it (inserting a judgment, reading the known answer and
  rolling back told it without a trace).  The policy ``retract_own`` lets a member set
  ``retracted`` only to true: an undo is never taken back.
- ``claim`` and ``decision``: the triggers ``claim_stamp`` and ``decision_stamp`` date a
  member's claim and a lead's decision by the server.  A claim dated in the future never
  expired, and a decision dated in the future outlived every later decision of another
  lead.
"""

from __future__ import annotations

from alembic import op

from db.privileges import apply_privileges

revision: str = "0015_member_limits"
down_revision: str | None = "0014_same_choices_flag"


def upgrade() -> None:
    apply_privileges(op.get_bind())


def downgrade() -> None:
    # The policies, triggers and functions stay: they refuse or re-date only what no
    # vetbench client does, and hide only what no earlier vetbench showed members.
    pass

"""member writes: on PostgreSQL writes a member made with psql around vetbench are refused

The rules are in ``db.guards`` and ``db.table_privileges``; this migration applies them.
Nothing changes on SQLite, where anyone holding the file reads and writes all.

- ``judgment``: a calibration judgment names the gold item of the item and revision it
  judges (``vetbench_stamp_judgment``).  A judgment of any item naming each gold item
  made ``vetbench_gold_known`` tell every known answer to any member.
- every table with a serial ``id`` that members insert into (``db.guards.SERIAL_ID_TABLES``:
  ``audit_event``, ``item_revision``, ``item_flag``, ``eval_run``, ``prediction``,
  ``generation_reject``, ``person``, and the leads' ``decision`` and ``gold_item``): a
  member's row takes the id its insert drew from the sequence (``vetbench_serial_id``,
  which also takes over ``judgment``'s check from ``vetbench_stamp_judgment``).  An
  audit event inserted with ids ahead of the sequence made every later write fail on a
  duplicate key, and the append-only trail kept it there.
- ``item``: every new item is checked at commit (trigger ``item_state_on_insert``), not
  only one inserted approved or at a revision after 1: an item with
  ``current_revision`` 1 and no revision at all was stored.  The importer writes an item
  and its revisions in one transaction; items already stored are not checked again.
- ``audit_event``: ``flags`` (``flags recompute``) joins the actions only leads record
  (``db.vocabulary.LEAD_AUDIT_ACTIONS``), and a member who is not a lead records a
  ``register`` event only of themselves as an annotator (policy ``record_events``), as
  ``--new-user`` and a first write register them.  Forged, they read as a lead's recompute
  and as someone made a lead.
- ``judgment``: a member's new judgment is not undone and took ``seconds >= 0``; an undo
  (``retracted``) is one way, dated by the server, and commits only with its ``retract``
  audit event naming the judgment (triggers ``judgment_undo``, ``judgment_undo_audited``).
  With psql a member undid a judgment unrecorded and dated it 1999.
- ``decision``: likewise a lead's undo (``retracted_at``), with its ``undo-decision``
  event (``decision_undo``); and a decision made or undone checks its item's status at
  commit (``decision_change``): an undo by hand left the item approved with no
  decision in force.
"""

from __future__ import annotations

from alembic import op

from db.privileges import apply_privileges

revision: str = "0017_member_writes"
down_revision: str | None = "0016_own_answers"


def upgrade() -> None:
    apply_privileges(op.get_bind())


def downgrade() -> None:
    # Nothing in the schema to take back.  The functions, triggers and policies are put
    # in place as the newest vetbench declares them (apply_privileges always does): they
    # refuse only what no vetbench client writes.
    apply_privileges(op.get_bind())

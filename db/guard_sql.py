"""PL/pgSQL building blocks the guards share (``db.guards``, ``db.review_guards``): a
trigger function's frame, the test for an audit event of the same transaction, and the
status rule, which the item checks and the decision checks both hold."""

from __future__ import annotations

from db.vocabulary import DECISION_STATUSES

DECIDED = ", ".join(f"'{status.value}'" for status in DECISION_STATUSES)


def audited_here(action: str, target: str, row_key: str | None = None) -> str:
    """A condition: this transaction recorded the audit event ``action`` on ``target`` (a
    column) in the logged-in role's name (the server stamps both: db.privileges); with
    ``row_key``, an event whose payload names the row (``NEW.id``) under that key."""
    about_row = f" AND payload ->> '{row_key}' = NEW.id::text" if row_key else ""
    return (
        f"EXISTS (SELECT FROM audit_event WHERE action = '{action}' AND target = {target} "
        f"AND db_role = session_user AND created_at = now(){about_row})"
    )


# The newest decision not undone, as db.decisions.latest_decision orders them.
NEWEST_DECISION = (
    "SELECT status, revision_number FROM decision WHERE item_id = {item} "
    "AND retracted_at IS NULL ORDER BY created_at DESC, id DESC LIMIT 1"
)
# A judgment stored by an earlier transaction: a member's judgment is stamped with its
# transaction's start (vetbench_stamp_judgment), so one of this transaction, which a
# rollback would leave no trace of, is never taken as judged.
COMMITTED_BEFORE = "j.created_at < now()"
STATUS_REFUSAL = "approved and rejected come only from a lead''s decision of the current revision"

# The status rule, for the item in ``current_item`` (its row) with ``decided`` a record:
# approved or rejected only while its newest decision not undone says so, about its
# current revision.
STATUS_HOLDS = f"""  IF current_item.status IN ({DECIDED}) THEN
    SELECT status, revision_number INTO decided FROM decision
    WHERE item_id = current_item.id AND retracted_at IS NULL
    ORDER BY created_at DESC, id DESC LIMIT 1;
    IF NOT FOUND OR decided.status <> current_item.status
       OR decided.revision_number <> current_item.current_revision THEN
      RAISE EXCEPTION 'item % is % at revision %, but %', current_item.id,
        current_item.status, current_item.current_revision, '{STATUS_REFUSAL}'
        USING ERRCODE = 'check_violation';
    END IF;
  END IF;
"""


def plpgsql_trigger(name: str, path: str, body: str) -> str:
    """A PL/pgSQL trigger function ``name`` whose ``body`` (DECLARE ... BEGIN ... END)
    runs under ``path``."""
    return f"""CREATE OR REPLACE FUNCTION {name}() RETURNS trigger
LANGUAGE plpgsql {path} AS $$
{body}
$$"""

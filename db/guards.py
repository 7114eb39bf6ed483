"""Rules the database keeps itself, for every client (vetbench, psql, a script).

- **Statuses come only from decisions** (SQLite and PostgreSQL): an item is approved
  or rejected only while its newest decision not undone says so, about its current
  revision (``reviewer.item_status`` computes the same rule).  A bare
  ``UPDATE item SET status = 'approved'`` is refused, whoever runs it.
- **Item content** (PostgreSQL): ``current_revision`` names one of the item's
  revisions, a new item's too (checked at commit: an import writes the item, then its
  revisions), and moves only to its newest; revisions are only ever appended, in their
  writer's own name (``session_user``; a new item's may carry a name that is no
  person's and no login's, such as a generating model's); only leads revise an
  approved or rejected item.  An item's
  ``kind`` is its current revision's (an edit may make a multi item single, never an
  order a choice of answers); members may not change ``source`` at all (no UPDATE
  grant: ``db.privileges``).  Every revision is in the audit trail: a stored item's new
  revision commits only with a ``revise`` event naming the item, a new item's with an
  ``import`` or ``generate`` event naming the item or its source (an import's event
  names the file's source and, in ``sources``, those its records name), of the same
  transaction in the writer's name.
- **Judged statuses** (PostgreSQL): a member may store an undecided status (their
  session refreshes the statuses their judgments move), but an item in review, agreed or
  in conflict has a judgment of its current revision (``vetbench_guard_item_judged``):
  a member's raw SQL cannot take items nobody judged out of the queue.  Which of those
  statuses the judgments give is Python's rule (the consensus is a fitted model), so a
  forged one among judged items is put back by ``vetbench init``.
- **Item metadata** (PostgreSQL): ``meta``, ``source_ref`` and ``language`` change only
  with a ``metadata`` audit event of the same transaction in the changer's name; the
  duplicate link (``suspected_duplicate_of``, ``duplicate_similarity``) only with the
  event of what moved it: a ``revise`` of the item or its original, its ``import`` or
  ``generate`` (naming it or its source), a lead's ``flags`` recompute.
- **Flags** (PostgreSQL): a member's flag row names a known flag and source, a
  revision that exists, and its evidence is a JSON object; and it comes with what it is
  about, in the same transaction: a text rule's with a new revision or the item's
  duplicate link, a second opinion's with its ``flag`` audit event; model flags come
  only from a lead's ``flags recompute``.
- **Gold answers** (PostgreSQL): annotators cannot read a gold item's known verdict and
  answer; ``vetbench_gold_known`` gives them to a lead, or to someone who has judged that
  gold in an earlier transaction (the review app shows the outcome after the verdict is
  stored), never for a judgment a rollback could take back; and a member's judgment that
  names a gold item names the one of the item and revision it judges (one of another
  item named every gold, and was told every known answer), and its ``revision_id`` is the
  revision it names by number (agreement reads the one, the status rule the other).  A
  member's judgment gets its time from the server (``vetbench_stamp_judgment``).
- **Judgments** (PostgreSQL): a member's judgment holds a verdict of the vocabulary, a
  blind answer in canonical form for the judged revision's kind and choices
  (``db.answers``) and a list of other orders; it is the person's only judgment in force
  of that revision (re-judging is an undo, then a judgment); and it commits only with
  its ``judge`` audit event naming it, of the same transaction
  (``vetbench_guard_judgment``, ``vetbench_guard_judgment_audited``).
- **Blind answers** (PostgreSQL): a member's judgment of a revision whose key they saw
  (their ``key_reveal`` row, ``db.reveals``) gives the blind answer stored with it
  (``vetbench_guard_judgment_blind``): an answer given after the key is never stored
  as blind, by psql either.
- **Ids** (PostgreSQL): a row a member inserts into a table with a serial ``id``
  (:data:`SERIAL_ID_TABLES`) takes the id this very insert drew from the sequence
  (``vetbench_serial_id``): an audit event with an id ahead of the sequence made every
  later write fail on a duplicate key (and the append-only trail kept it), and a
  judgment with a chosen id placed it before the first answers to a gold item (the
  first answer is the lowest id).  A trigger rather than column grants that leave out
  ``id``: one function for every table, which a migration adding a column need not
  touch, and a refusal that says why.
- **Claims and decisions** (PostgreSQL): a member's claim is dated by the server when it
  is made or renewed (``vetbench_stamp_claim``), so it expires as every claim does; a
  lead's decision too (``vetbench_stamp_decision``), so the newest is the latest made.
- **Undo** (PostgreSQL): a member's new judgment is not undone and took ``seconds >= 0``;
  undoing a judgment or a decision is one way (never taken back, never dated again),
  dated by the server, and comes with its audit event naming the row (``retract``,
  ``undo-decision``) in the same transaction (``vetbench_guard_judgment_undo``,
  ``vetbench_guard_decision_undo``; the events checked at commit).  A decision made or
  undone checks its item's status at commit, as an item update does
  (``vetbench_guard_decision_change``): an undo by hand left the item approved with no
  decision in force.
- **Evaluation runs** (PostgreSQL): each run is stamped with the role that started it
  (``eval_run.db_role``); members change only their own runs and predictions
  (policies in ``db.privileges``).  A cached API response is stamped likewise
  (``api_response.db_role``), and each role reads only its own.
- **SQLite's triggers** (the audit trail's, the status rule's, the releases', the search
  index's) can be dropped by anyone holding the file; :func:`restore_sqlite_triggers`
  puts missing ones back (``vetbench init``) and names them.

The PostgreSQL functions pin their ``search_path`` (see ``db.privileges``); the owner
and superusers, whom row-level security does not bind either, pass the item-content
and flag checks, never the status rule.
"""

from __future__ import annotations

from sqlalchemy import Connection, text

from db.guard_sql import (
    DECIDED,
    NEWEST_DECISION,
    STATUS_HOLDS,
    STATUS_REFUSAL,
    audited_here,
    plpgsql_trigger,
)
from db.review_guards import review_guard_functions
from db.vocabulary import (
    FLAG_ACTION,
    FLAGS_ACTION,
    GENERATE_ACTION,
    IMPORT_ACTION,
    METADATA_ACTION,
    REVISE_ACTION,
    UNDECIDED_STATUSES,
    FlagName,
    FlagSource,
    ItemStatus,
)

__all__ = [
    "POSTGRES_GUARD_FUNCTIONS",
    "POSTGRES_GUARD_TRIGGERS",
    "SERIAL_ID_TABLES",
    "SQLITE_STATUS_TRIGGERS",
    "missing_sqlite_triggers",
    "postgres_guard_functions",
    "restore_sqlite_triggers",
]

_JUDGED = ", ".join(
    f"'{status.value}'" for status in UNDECIDED_STATUSES if status is not ItemStatus.PENDING
)
"""The statuses judgments give an item, SQL's way."""
_FLAG_NAMES = ", ".join(f"'{name.value}'" for name in FlagName)
_FLAG_SOURCES = ", ".join(f"'{source.value}'" for source in FlagSource)

SQLITE_STATUS_TRIGGERS: dict[str, str] = {
    "item_status_from_decision_on_insert": f"""CREATE TRIGGER IF NOT EXISTS
item_status_from_decision_on_insert BEFORE INSERT ON item WHEN NEW.status IN ({DECIDED})
BEGIN SELECT RAISE(ABORT, 'a new item cannot be approved or rejected: {STATUS_REFUSAL}'); END""",
    "item_status_from_decision": f"""CREATE TRIGGER IF NOT EXISTS
item_status_from_decision BEFORE UPDATE OF status ON item
WHEN NEW.status IN ({DECIDED}) AND NEW.status IS NOT OLD.status AND NOT EXISTS (
  SELECT 1 FROM ({NEWEST_DECISION.format(item="NEW.id")}) AS newest
  WHERE newest.status = NEW.status AND newest.revision_number = NEW.current_revision)
BEGIN SELECT RAISE(ABORT, 'refused: item status {STATUS_REFUSAL}'); END""",
}
"""SQLite's status rule: (trigger name, statement) for each trigger."""


def _names_source(source: str) -> str:
    """A condition on an audit event: it names ``source`` (a column or variable) as its
    ``source``, or among its ``sources`` (an import of records naming their own)."""
    return f"(payload ->> 'source' = {source} OR (payload::jsonb -> 'sources') ? {source})"


_KIND_OF_ITEM = """  IF current_item.kind IS DISTINCT FROM (SELECT kind FROM item_revision
      WHERE item_id = current_item.id AND number = current_item.current_revision) THEN
    RAISE EXCEPTION 'item % is %, not the kind of its current revision %: an item''s kind '
      'is its current revision''s', current_item.id, current_item.kind,
      current_item.current_revision USING ERRCODE = 'check_violation';
  END IF;
"""
_KIND_OF_REVISION = """  IF EXISTS (SELECT FROM item_revision WHERE item_id = NEW.item_id
             AND (kind = 'ordering') <> (NEW.kind = 'ordering')) THEN
    RAISE EXCEPTION 'revision % of item % is %: an order never becomes a choice of answers, '
      'nor the other way round', NEW.number, NEW.item_id, NEW.kind
      USING ERRCODE = 'check_violation';
  END IF;
"""


def postgres_guard_functions(path: str, *, revision_kind: bool = True) -> list[str]:
    """The guard trigger functions (PL/pgSQL), each running under ``path``;
    ``revision_kind``: the schema has ``item_revision.kind`` (0012 on), so the item's kind
    must be its current revision's and no revision turns an order into a choice."""
    kind_of_item = _KIND_OF_ITEM if revision_kind else ""
    kind_of_revision = _KIND_OF_REVISION if revision_kind else ""
    return [
        plpgsql_trigger(
            "vetbench_guard_item_state",
            path,
            f"""DECLARE
  current_item item%ROWTYPE;
  newest integer;
  decided record;
BEGIN
  SELECT * INTO current_item FROM item WHERE id = NEW.id;
  IF NOT FOUND THEN
    RETURN NULL;
  END IF;
  SELECT max(number) INTO newest FROM item_revision WHERE item_id = current_item.id;
  IF NOT EXISTS (SELECT FROM item_revision
                 WHERE item_id = current_item.id AND number = current_item.current_revision) THEN
    RAISE EXCEPTION 'item % has no revision %: current_revision names one of its revisions',
      current_item.id, current_item.current_revision USING ERRCODE = 'check_violation';
  END IF;
{kind_of_item}  IF TG_OP = 'UPDATE' AND OLD.current_revision IS DISTINCT FROM NEW.current_revision
     AND current_item.current_revision <> newest AND NOT vetbench_session_is_admin() THEN
    RAISE EXCEPTION 'item % moves only to its newest revision (%), not %',
      current_item.id, newest, current_item.current_revision USING ERRCODE = 'check_violation';
  END IF;
{STATUS_HOLDS}  RETURN NULL;
END""",
        ),
        plpgsql_trigger(
            "vetbench_guard_revision",
            path,
            f"""BEGIN
  IF vetbench_session_is_admin() THEN
    RETURN NEW;
  END IF;
{kind_of_revision}  IF EXISTS (SELECT FROM item_revision WHERE item_id = NEW.item_id AND number >= NEW.number) THEN
    RAISE EXCEPTION 'revision % of item % is not after its newest: revisions are only added',
      NEW.number, NEW.item_id USING ERRCODE = 'insufficient_privilege';
  END IF;
  -- A revision is the session's own: of a stored item (one with a revision written
  -- before this transaction) always; a new item's may bring another author only where
  -- that name is no one's here, no person and no login (a generating model's, an
  -- imported history's from elsewhere).  With psql an annotator planted a new item as a
  -- lead's, whom the queue then never served it.
  IF NEW.author IS DISTINCT FROM session_user AND (EXISTS (
      SELECT FROM item_revision WHERE item_id = NEW.item_id AND xmin <> pg_current_xact_id()::xid)
    OR EXISTS (SELECT FROM person WHERE name = NEW.author)
    OR EXISTS (SELECT FROM pg_roles WHERE rolname = NEW.author))
  THEN
    RAISE EXCEPTION '% may add revisions of item % only in their own name, not as %',
      session_user, NEW.item_id, NEW.author USING ERRCODE = 'insufficient_privilege';
  END IF;
  IF (SELECT status FROM item WHERE id = NEW.item_id) IN ({DECIDED})
     AND NOT vetbench_session_is_lead() THEN
    RAISE EXCEPTION 'only leads revise an approved or rejected item: % may not revise %',
      session_user, NEW.item_id USING ERRCODE = 'insufficient_privilege';
  END IF;
  RETURN NEW;
END""",
        ),
        # A revision is in the audit trail: a stored item's new revision comes with its
        # "revise" event naming the item (as an edit, a key correction and a re-import
        # record it), a new item's with the event of its import or generation, of the
        # same transaction in the writer's name.  With psql a member rewrote an item
        # that `vetbench audit` then showed unchanged.  Checked at commit: an edit
        # records its event after the revision, the importer before it.
        plpgsql_trigger(
            "vetbench_guard_revision_audited",
            path,
            f"""DECLARE
  item_source varchar;
BEGIN
  IF vetbench_session_is_admin() THEN
    RETURN NULL;
  END IF;
  IF EXISTS (SELECT FROM item_revision WHERE item_id = NEW.item_id
             AND xmin <> pg_current_xact_id()::xid) THEN
    IF {audited_here(REVISE_ACTION, "NEW.item_id")} THEN
      RETURN NULL;
    END IF;
    RAISE EXCEPTION 'revision % of item % comes with its audit event "{REVISE_ACTION}" of the '
      'same transaction: % added it unrecorded', NEW.number, NEW.item_id, session_user
      USING ERRCODE = 'insufficient_privilege';
  END IF;
  -- The event names the item (a generation's) or its source (an import's, one event for
  -- a whole file: its source, or the sources its records name): an event about another
  -- file let a new item of any source pass.
  SELECT source INTO item_source FROM item WHERE id = NEW.item_id;
  IF EXISTS (SELECT FROM audit_event WHERE action IN ('{IMPORT_ACTION}', '{GENERATE_ACTION}')
             AND db_role = session_user AND created_at = now()
             AND (target = NEW.item_id OR {_names_source("item_source")})) THEN
    RETURN NULL;
  END IF;
  RAISE EXCEPTION 'new item % comes with the audit event of its import or generation '
    '("{IMPORT_ACTION}", "{GENERATE_ACTION}") of the same transaction, naming it or its source '
    '%: % added it unrecorded', NEW.item_id, item_source, session_user
    USING ERRCODE = 'insufficient_privilege';
END""",
        ),
        plpgsql_trigger(
            "vetbench_guard_flag",
            path,
            f"""BEGIN
  IF vetbench_session_is_admin() THEN
    RETURN NEW;
  END IF;
  IF NEW.name NOT IN ({_FLAG_NAMES}) OR NEW.source NOT IN ({_FLAG_SOURCES})
     OR json_typeof(NEW.evidence::json) IS DISTINCT FROM 'object'
     OR NOT EXISTS (SELECT FROM item_revision
                    WHERE item_id = NEW.item_id AND number = NEW.revision_number) THEN
    RAISE EXCEPTION 'flag % (%) of item % revision % is not one vetbench writes',
      NEW.name, NEW.source, NEW.item_id, NEW.revision_number USING ERRCODE = 'check_violation';
  END IF;
  RETURN NEW;
END""",
        ),
        # Where a member's flag comes from (leads, who recompute every flag, pass): a text
        # rule's comes with the change it is about, a new revision or the item's duplicate
        # link, written by the same transaction; a second opinion's with its audit event
        # "flag"; a model flag only from a lead's recompute.  With psql a member planted
        # a flag, with made-up evidence, on any item.  Checked at commit.
        plpgsql_trigger(
            "vetbench_guard_flag_origin",
            path,
            f"""DECLARE
  this_transaction xid := pg_current_xact_id()::xid;
BEGIN
  IF vetbench_session_is_lead() THEN
    RETURN NULL;
  END IF;
  IF NEW.source = '{FlagSource.AUTO.value}' AND (
       EXISTS (SELECT FROM item_revision WHERE item_id = NEW.item_id
               AND number = NEW.revision_number AND xmin = this_transaction)
       OR EXISTS (SELECT FROM item WHERE id = NEW.item_id AND xmin = this_transaction))
     OR NEW.source = '{FlagSource.CHECK.value}'
        AND {audited_here(FLAG_ACTION, "NEW.item_id")} THEN
    RETURN NULL;
  END IF;
  RAISE EXCEPTION 'flag % (%) of item % revision %: a member''s flag comes with the change '
    'it is about (a text rule''s), or with its audit event "{FLAG_ACTION}" (a second '
    'opinion''s); % added it alone', NEW.name, NEW.source, NEW.item_id, NEW.revision_number,
    session_user USING ERRCODE = 'insufficient_privilege';
END""",
        ),
        # A member's row takes the id its insert drew from the sequence (the module's
        # docstring says why: an audit event's id ahead of it made later inserts fail).
        plpgsql_trigger(
            "vetbench_serial_id",
            path,
            """DECLARE
  drawn bigint;
BEGIN
  IF vetbench_session_is_admin() THEN
    RETURN NEW;
  END IF;
  BEGIN
    drawn := currval(pg_get_serial_sequence(
      quote_ident(TG_TABLE_SCHEMA) || '.' || quote_ident(TG_TABLE_NAME), 'id'));
  EXCEPTION WHEN object_not_in_prerequisite_state THEN
    drawn := NULL;
  END;
  IF NEW.id IS DISTINCT FROM drawn THEN
    RAISE EXCEPTION '% ids come from their sequence: % may not choose id %',
      TG_TABLE_NAME, session_user, NEW.id USING ERRCODE = 'insufficient_privilege';
  END IF;
  RETURN NEW;
END""",
        ),
        # An item's metadata (meta, source_ref, language: the language picks the
        # evaluation prompt) changes only with a "metadata" audit event of the same
        # transaction in the changer's name, as the importer records one: with psql it
        # changed without a trace.  Checked at commit, whichever was written first.
        plpgsql_trigger(
            "vetbench_guard_item_metadata",
            path,
            f"""BEGIN
  IF NOT vetbench_session_is_admin()
     AND NOT {audited_here(METADATA_ACTION, "NEW.id")} THEN
    RAISE EXCEPTION 'the metadata of item % (meta, source_ref, language) changes only with '
      'an audit event "{METADATA_ACTION}" of the same transaction: % changed it unrecorded',
      NEW.id, session_user USING ERRCODE = 'insufficient_privilege';
  END IF;
  RETURN NULL;
END""",
        ),
        # An item's duplicate link (which item it nearly repeats, how closely: the review
        # app and triage show it, few-shot examples leave its original out) changes only
        # with the event of what moved it, of the same transaction in the changer's name:
        # a revision of the item or of its original ("revise"), its import or generation
        # (naming it or its source), a lead's "flags" recompute.  With psql an annotator
        # cleared every link, approved items' included.  Checked at commit.
        plpgsql_trigger(
            "vetbench_guard_duplicate_link",
            path,
            f"""BEGIN
  IF vetbench_session_is_admin() OR EXISTS (SELECT FROM audit_event
      WHERE db_role = session_user AND created_at = now() AND (
        action IN ('{REVISE_ACTION}', '{IMPORT_ACTION}', '{GENERATE_ACTION}')
          AND target IN (NEW.id, OLD.suspected_duplicate_of, NEW.suspected_duplicate_of)
        OR action IN ('{IMPORT_ACTION}', '{GENERATE_ACTION}') AND {_names_source("NEW.source")}
        OR action = '{FLAGS_ACTION}')) THEN
    RETURN NULL;
  END IF;
  RAISE EXCEPTION 'the duplicate link of item % (suspected_duplicate_of, duplicate_similarity) '
    'changes only with the audit event of what moved it, of the same transaction: a revision '
    'of it or of its original ("{REVISE_ACTION}"), its import or generation ("{IMPORT_ACTION}", '
    '"{GENERATE_ACTION}"), a lead''s recompute ("{FLAGS_ACTION}"); % changed it unrecorded',
    NEW.id, session_user USING ERRCODE = 'insufficient_privilege';
END""",
        ),
        # An item judged (in review, agreed, conflict) has a judgment of its current
        # revision: every status rule (fixed overlap or the consensus, whatever the
        # qualification gate counts) leaves one nobody judged pending.  With psql a member
        # marked every pending item agreed, and the queue served nothing.  Which status
        # judgments give is the rule's in db.item_status, not SQL's (the consensus fit is
        # Python's): a forged one among judged items is put back by `vetbench init`.
        plpgsql_trigger(
            "vetbench_guard_item_judged",
            path,
            f"""DECLARE
  current_item item%ROWTYPE;
BEGIN
  IF vetbench_session_is_admin() THEN
    RETURN NULL;
  END IF;
  SELECT * INTO current_item FROM item WHERE id = NEW.id;
  IF FOUND AND current_item.status IN ({_JUDGED}) AND NOT EXISTS (SELECT FROM judgment
      WHERE item_id = current_item.id AND revision_number = current_item.current_revision
        AND NOT retracted) THEN
    RAISE EXCEPTION 'item % is % at revision %, which has no judgment: an item nobody has '
      'judged is pending (its status follows its judgments)', current_item.id,
      current_item.status, current_item.current_revision USING ERRCODE = 'check_violation';
  END IF;
  RETURN NULL;
END""",
        ),
        # A run's or a cached response's role is the one that logged in, for good.
        plpgsql_trigger(
            "vetbench_stamp_role",
            path,
            """BEGIN
  IF TG_OP = 'INSERT' THEN
    NEW.db_role := session_user;
  ELSE
    NEW.db_role := OLD.db_role;
  END IF;
  RETURN NEW;
END""",
        ),
        *review_guard_functions(path, revision_kind=revision_kind),
    ]


POSTGRES_GUARD_FUNCTIONS = (
    "vetbench_guard_item_state()",
    "vetbench_guard_revision()",
    "vetbench_guard_revision_audited()",
    "vetbench_guard_flag()",
    "vetbench_guard_flag_origin()",
    "vetbench_guard_item_metadata()",
    "vetbench_guard_duplicate_link()",
    "vetbench_guard_item_judged()",
    "vetbench_gold_known(integer)",
    "vetbench_calibration_outcomes()",
    "vetbench_stamp_role()",
    "vetbench_stamp_judgment()",
    "vetbench_guard_judgment()",
    "vetbench_guard_judgment_audited()",
    "vetbench_guard_judgment_blind()",
    "vetbench_serial_id()",
    "vetbench_guard_judgment_undo()",
    "vetbench_guard_judgment_undo_audited()",
    "vetbench_guard_decision_undo()",
    "vetbench_guard_decision_change()",
    "vetbench_stamp_claim()",
    "vetbench_stamp_decision()",
)
"""The functions above, with their argument types (for DROP FUNCTION)."""

SERIAL_ID_TABLES = (
    *("audit_event", "decision", "eval_run", "generation_reject", "gold_item"),
    *("item_flag", "item_revision", "judgment", "person", "prediction"),
)
"""The tables with a serial ``id`` that members (leads among them) insert into: ids only
from the sequence (``vetbench_serial_id``)."""

_STATE_CHECK = (
    "AFTER {event} ON item DEFERRABLE INITIALLY DEFERRED FOR EACH ROW {when}"
    "EXECUTE FUNCTION vetbench_guard_item_state()"
)

POSTGRES_GUARD_TRIGGERS: tuple[tuple[str, str, str, tuple[str, ...]], ...] = (
    # (table, trigger name, definition after "CREATE [CONSTRAINT] TRIGGER name", columns
    # it needs).  The item checks wait for the commit: an edit moves the item to its
    # new revision before storing it, and refreshes the status last; an import writes
    # a new item before its revisions.  Every new item is checked: one with
    # current_revision 1 and no revision at all once passed.
    (
        "item",
        "item_state_on_insert",
        _STATE_CHECK.format(event="INSERT", when=""),
        (),
    ),
    (
        "item",
        "item_state_on_update",
        _STATE_CHECK.format(
            event="UPDATE OF status, current_revision, kind",
            when="WHEN (NEW.current_revision IS DISTINCT FROM OLD.current_revision OR "
            "NEW.kind IS DISTINCT FROM OLD.kind OR "
            f"(NEW.status IS DISTINCT FROM OLD.status AND NEW.status IN ({DECIDED}))) ",
        ),
        (),
    ),
    (
        "item",
        "item_metadata_audited",
        "AFTER UPDATE OF meta, source_ref, language ON item DEFERRABLE INITIALLY DEFERRED "
        "FOR EACH ROW WHEN (NEW.meta::jsonb IS DISTINCT FROM OLD.meta::jsonb OR "
        "NEW.source_ref IS DISTINCT FROM OLD.source_ref OR "
        "NEW.language IS DISTINCT FROM OLD.language) "
        "EXECUTE FUNCTION vetbench_guard_item_metadata()",
        (),
    ),
    (
        "item",
        "item_duplicate_link_audited",
        "AFTER UPDATE OF suspected_duplicate_of, duplicate_similarity ON item "
        "DEFERRABLE INITIALLY DEFERRED FOR EACH ROW WHEN "
        "(NEW.suspected_duplicate_of IS DISTINCT FROM OLD.suspected_duplicate_of OR "
        "NEW.duplicate_similarity IS DISTINCT FROM OLD.duplicate_similarity) "
        "EXECUTE FUNCTION vetbench_guard_duplicate_link()",
        (),
    ),
    (
        # Deferred: an edit moves the item to its new revision before its status follows.
        "item",
        "item_status_judged",
        "AFTER INSERT OR UPDATE OF status, current_revision ON item DEFERRABLE INITIALLY "
        f"DEFERRED FOR EACH ROW WHEN (NEW.status IN ({_JUDGED})) "
        "EXECUTE FUNCTION vetbench_guard_item_judged()",
        (),
    ),
    (
        "item_revision",
        "item_revision_guard",
        "BEFORE INSERT ON item_revision FOR EACH ROW EXECUTE FUNCTION vetbench_guard_revision()",
        (),
    ),
    (
        "item_revision",
        "item_revision_audited",
        "AFTER INSERT ON item_revision DEFERRABLE INITIALLY DEFERRED FOR EACH ROW "
        "EXECUTE FUNCTION vetbench_guard_revision_audited()",
        (),
    ),
    (
        "item_flag",
        "item_flag_guard",
        "BEFORE INSERT ON item_flag FOR EACH ROW EXECUTE FUNCTION vetbench_guard_flag()",
        (),
    ),
    (
        "item_flag",
        "item_flag_origin",
        "AFTER INSERT ON item_flag DEFERRABLE INITIALLY DEFERRED FOR EACH ROW "
        "EXECUTE FUNCTION vetbench_guard_flag_origin()",
        (),
    ),
    (
        "judgment",
        "judgment_stamp",
        "BEFORE INSERT ON judgment FOR EACH ROW EXECUTE FUNCTION vetbench_stamp_judgment()",
        (),
    ),
    (
        # After judgment_stamp (triggers of one event run in name order).
        "judgment",
        "judgment_values",
        "BEFORE INSERT ON judgment FOR EACH ROW EXECUTE FUNCTION vetbench_guard_judgment()",
        (),
    ),
    (
        "judgment",
        "judgment_audited",
        "AFTER INSERT ON judgment DEFERRABLE INITIALLY DEFERRED FOR EACH ROW "
        "EXECUTE FUNCTION vetbench_guard_judgment_audited()",
        (),
    ),
    (
        "judgment",
        "judgment_blind_answer",
        "BEFORE INSERT ON judgment FOR EACH ROW EXECUTE FUNCTION vetbench_guard_judgment_blind()",
        (),
    ),
    (
        "claim",
        "claim_stamp",
        "BEFORE INSERT OR UPDATE ON claim FOR EACH ROW EXECUTE FUNCTION vetbench_stamp_claim()",
        (),
    ),
    (
        "decision",
        "decision_stamp",
        "BEFORE INSERT ON decision FOR EACH ROW EXECUTE FUNCTION vetbench_stamp_decision()",
        (),
    ),
    (
        "judgment",
        "judgment_undo",
        "BEFORE UPDATE ON judgment FOR EACH ROW EXECUTE FUNCTION vetbench_guard_judgment_undo()",
        (),
    ),
    (
        "judgment",
        "judgment_undo_audited",
        "AFTER UPDATE OF retracted ON judgment DEFERRABLE INITIALLY DEFERRED FOR EACH ROW "
        "WHEN (NEW.retracted AND NOT OLD.retracted) "
        "EXECUTE FUNCTION vetbench_guard_judgment_undo_audited()",
        (),
    ),
    (
        "decision",
        "decision_undo",
        "BEFORE UPDATE ON decision FOR EACH ROW EXECUTE FUNCTION vetbench_guard_decision_undo()",
        ("retracted_at", "retracted_by_id"),
    ),
    (
        # No column list: a downgrade before 0006 drops retracted_at.
        "decision",
        "decision_change",
        "AFTER INSERT OR UPDATE ON decision DEFERRABLE INITIALLY DEFERRED "
        "FOR EACH ROW EXECUTE FUNCTION vetbench_guard_decision_change()",
        ("retracted_at", "retracted_by_id"),
    ),
    *(
        (
            table,
            f"{table}_serial_id",
            f"BEFORE INSERT ON {table} FOR EACH ROW EXECUTE FUNCTION vetbench_serial_id()",
            (),
        )
        for table in SERIAL_ID_TABLES
    ),
    (
        "eval_run",
        "eval_run_stamp",
        "BEFORE INSERT OR UPDATE ON eval_run FOR EACH ROW EXECUTE FUNCTION vetbench_stamp_role()",
        ("db_role",),
    ),
    (
        "api_response",
        "api_response_stamp",
        "BEFORE INSERT OR UPDATE ON api_response FOR EACH ROW "
        "EXECUTE FUNCTION vetbench_stamp_role()",
        ("db_role",),
    ),
)
"""The guard triggers; those on ``item`` are constraint triggers (deferred)."""


def _sqlite_triggers() -> dict[str, str]:
    """The audit trail's, the status rule's and the releases' triggers: name -> its CREATE
    statement."""
    from db.audit import SQLITE_AUDIT_TRIGGERS
    from db.releases import SQLITE_RELEASE_TRIGGERS

    return {**SQLITE_AUDIT_TRIGGERS, **SQLITE_STATUS_TRIGGERS, **SQLITE_RELEASE_TRIGGERS}


def missing_sqlite_triggers(connection: Connection) -> list[str]:
    """The names of vetbench's SQLite triggers the file lacks (none on other databases);
    the search index's count only where the file has the index."""
    from db.search import SEARCH_TABLE, SQLITE_TRIGGER_NAMES

    if connection.dialect.name != "sqlite":
        return []
    present = set(
        connection.execute(
            text("SELECT name FROM sqlite_master WHERE type IN ('trigger', 'table')")
        ).scalars()
    )
    expected = list(_sqlite_triggers())
    if SEARCH_TABLE in present:
        expected += SQLITE_TRIGGER_NAMES
    return [name for name in expected if name not in present]


def restore_sqlite_triggers(connection: Connection) -> list[str]:
    """Create the SQLite triggers that are missing; returns their names (empty: none were).

    A missing search trigger means the index may have missed changes: it is rebuilt.
    """
    from db.search import SQLITE_TRIGGER_NAMES, create_search_index

    missing = missing_sqlite_triggers(connection)
    statements = _sqlite_triggers()
    for name in missing:
        if name in statements:
            connection.exec_driver_sql(statements[name])
    if set(missing) & set(SQLITE_TRIGGER_NAMES):
        create_search_index(connection)
    return missing

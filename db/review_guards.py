"""The PostgreSQL guards of review's own rows: judgments, decisions, claims and gold
answers.  ``db.guards``'s docstring says what every guard keeps and why;
``db.guards.postgres_guard_functions`` puts these with the item guards."""

from __future__ import annotations

from db.guard_sql import COMMITTED_BEFORE, STATUS_HOLDS, audited_here, plpgsql_trigger
from db.vocabulary import (
    JUDGE_ACTION,
    RETRACT_ACTION,
    UNDO_DECISION_ACTION,
    ItemKind,
    Verdict,
)

_VERDICTS = ", ".join(f"'{verdict.value}'" for verdict in Verdict)
_ONE_LETTER = f"'{ItemKind.SINGLE.value}', '{ItemKind.TRUEFALSE.value}'"


def _audited_judgment(name: str, path: str, action: str, done: str, did: str) -> str:
    """The check, at commit, that a member's judgment ``done`` (stored, undone) comes with
    its audit event ``action`` naming it, of the same transaction."""
    return plpgsql_trigger(
        name,
        path,
        f"""BEGIN
  IF NOT vetbench_session_is_admin()
     AND NOT {audited_here(action, "NEW.item_id", "judgment_id")} THEN
    RAISE EXCEPTION 'judgment % of item % is {done} only with its audit event "{action}" '
      'of the same transaction: % {did} unrecorded', NEW.id, NEW.item_id, session_user
      USING ERRCODE = 'insufficient_privilege';
  END IF;
  RETURN NULL;
END""",
    )


def _dated_now(name: str, path: str, column: str) -> str:
    """The trigger that dates a row by the server: ``column`` is now, whatever the writer
    gave (an administrator's write excepted, as every guard excepts it)."""
    return plpgsql_trigger(
        name,
        path,
        f"""BEGIN
  IF NOT vetbench_session_is_admin() THEN
    NEW.{column} := now();
  END IF;
  RETURN NEW;
END""",
    )


def _one_way_undo(
    name: str, path: str, *, table: str, mark: str, undone: str, by_undo: str, taken_back: str
) -> str:
    """The trigger that keeps an undo of a ``table`` row one way and dated by the server:
    once ``undone`` holds of the row (a template: ``{}`` is ``OLD`` or ``NEW``), ``mark``
    (what says it is undone) and ``by_undo`` (set by the undo only) never change again,
    which is refused with ``taken_back`` (the message and its arguments); an undo is
    dated now, whatever the writer gave."""
    return plpgsql_trigger(
        name,
        path,
        f"""BEGIN
  IF vetbench_session_is_admin() THEN
    RETURN NEW;
  END IF;
  IF {undone.format("OLD")} THEN
    IF NEW.{mark} IS DISTINCT FROM OLD.{mark}
       OR NEW.{by_undo} IS DISTINCT FROM OLD.{by_undo} THEN
      RAISE EXCEPTION {taken_back}
        USING ERRCODE = 'insufficient_privilege';
    END IF;
  ELSIF {undone.format("NEW")} THEN
    NEW.retracted_at := now();
  ELSIF NEW.{by_undo} IS DISTINCT FROM OLD.{by_undo} THEN
    RAISE EXCEPTION '{table} %: {by_undo} is set by its undo only', OLD.id
      USING ERRCODE = 'insufficient_privilege';
  END IF;
  RETURN NEW;
END""",
    )


def review_guard_functions(path: str, *, revision_kind: bool = True) -> list[str]:
    """The functions that guard judgments, decisions, claims and gold answers, each
    running under ``path``; ``revision_kind``: the schema has ``item_revision.kind``
    (before 0012 an item's kind is the item's)."""
    kind_query = (
        "SELECT kind FROM item_revision WHERE item_id = NEW.item_id "
        "AND number = NEW.revision_number"
        if revision_kind
        else "SELECT kind FROM item WHERE id = NEW.item_id"
    )
    return [
        # The known verdict and answer of a gold item, for a lead or for someone who has
        # judged it (annotators cannot read those columns: db.privileges).
        f"""CREATE OR REPLACE FUNCTION vetbench_gold_known(gold integer)
RETURNS TABLE (verdict varchar, answer varchar)
LANGUAGE plpgsql STABLE SECURITY DEFINER {path} AS $$
BEGIN
  RETURN QUERY SELECT g.verdict, g.answer FROM gold_item g
  WHERE g.id = gold AND (vetbench_session_is_lead() OR EXISTS (SELECT FROM judgment j
    WHERE j.gold_id = g.id AND j.annotator_id = vetbench_session_person_id()
      AND {COMMITTED_BEFORE}));
END
$$""",
        # Whether each calibration judgment matched its gold, for every member: item
        # statuses leave out the judgments of people who have not qualified, and any
        # member's write refreshes them (db.qualification).  The answers stay hidden,
        # and a member's own judgment of this transaction is not told.
        f"""CREATE OR REPLACE FUNCTION vetbench_calibration_outcomes()
RETURNS TABLE (judgment_id integer, annotator_id integer, gold_id integer, matched boolean)
LANGUAGE plpgsql STABLE SECURITY DEFINER {path} AS $$
BEGIN
  RETURN QUERY SELECT j.id, j.annotator_id, j.gold_id,
    (j.blind_answer = g.answer AND j.verdict = g.verdict)
  FROM judgment j JOIN gold_item g ON g.id = j.gold_id
  WHERE vetbench_session_is_lead() OR j.annotator_id IS DISTINCT FROM
    vetbench_session_person_id() OR {COMMITTED_BEFORE};
END
$$""",
        plpgsql_trigger(
            "vetbench_stamp_judgment",
            path,
            """DECLARE
  gold record;
BEGIN
  IF vetbench_session_is_admin() THEN
    RETURN NEW;
  END IF;
  -- A calibration judgment names the gold of the very revision it judges: one of another
  -- item naming each gold item made vetbench_gold_known tell every known answer.
  IF NEW.gold_id IS NOT NULL THEN
    SELECT item_id, revision_number INTO gold FROM gold_item WHERE id = NEW.gold_id;
    IF gold.item_id IS DISTINCT FROM NEW.item_id
       OR gold.revision_number IS DISTINCT FROM NEW.revision_number THEN
      RAISE EXCEPTION 'a judgment of item % revision % names gold item % of item % revision %: '
        'a calibration judgment names the gold of the revision it judges', NEW.item_id,
        NEW.revision_number, NEW.gold_id, gold.item_id, gold.revision_number
        USING ERRCODE = 'insufficient_privilege';
    END IF;
  END IF;
  -- revision_id is the revision it names by number (agreement reads the one, statuses both)
  IF NOT EXISTS (SELECT FROM item_revision WHERE id = NEW.revision_id
                 AND item_id = NEW.item_id AND number = NEW.revision_number) THEN
    RAISE EXCEPTION 'a judgment of item % revision % names revision id %, which is not it',
      NEW.item_id, NEW.revision_number, NEW.revision_id USING ERRCODE = 'check_violation';
  END IF;
  -- A new judgment is in force and took no negative time: an undo is vetbench_undo's.
  IF NEW.retracted IS DISTINCT FROM false OR NEW.retracted_at IS NOT NULL
     OR NOT (NEW.seconds >= 0 AND NEW.seconds < 'Infinity') THEN
    RAISE EXCEPTION 'a new judgment comes with seconds >= 0, not retracted: % inserted one '
      'retracted %, with % seconds', session_user, NEW.retracted, NEW.seconds
      USING ERRCODE = 'insufficient_privilege';
  END IF;
  NEW.created_at := now();
  RETURN NEW;
END""",
        ),
        # A member's judgment holds what vetbench stores (db.answers, db.vocabulary): a
        # verdict of the vocabulary, the blind answer in canonical form for the judged
        # revision's kind and choices, other orders as a list; and it is their only
        # judgment in force of that revision (re-judging is an undo, then a judgment).
        # With psql an annotator stored 'bogusverdict' with the answer 'not-an-answer',
        # several times over.  Runs after vetbench_stamp_judgment (trigger names sort so),
        # which checked the revision exists.
        plpgsql_trigger(
            "vetbench_guard_judgment",
            path,
            f"""DECLARE
  judged_kind varchar;
  labels text[];
  given text[] := regexp_split_to_array(NEW.blind_answer, '');
  answers boolean;
BEGIN
  IF vetbench_session_is_admin() THEN
    RETURN NEW;
  END IF;
  IF NEW.verdict IS NULL OR NEW.verdict NOT IN ({_VERDICTS})
     OR json_typeof(NEW.alternative_orders::json) IS DISTINCT FROM 'array' THEN
    RAISE EXCEPTION 'a judgment of item % revision % has verdict % and other orders %: '
      'a verdict is one of {_VERDICTS.replace("'", "")}, other orders a list', NEW.item_id,
      NEW.revision_number, NEW.verdict, NEW.alternative_orders USING ERRCODE = 'check_violation';
  END IF;
  judged_kind := ({kind_query});
  labels := ARRAY(SELECT label FROM item_revision r,
    json_object_keys(r.choices::json) WITH ORDINALITY AS k(label, place)
    WHERE r.item_id = NEW.item_id AND r.number = NEW.revision_number ORDER BY place);
  -- An order places every label once; a choice set names labels in the choices' order,
  -- each once, one of them for a single or true/false item.
  answers := NEW.blind_answer <> '' AND CASE
    WHEN judged_kind = '{ItemKind.ORDERING.value}' THEN
      ARRAY(SELECT unnest(given) ORDER BY 1) = ARRAY(SELECT unnest(labels) ORDER BY 1)
    ELSE given = ARRAY(SELECT label FROM unnest(labels) WITH ORDINALITY AS l(label, place)
                       WHERE label = ANY (given) ORDER BY place)
      AND (judged_kind NOT IN ({_ONE_LETTER}) OR cardinality(given) = 1)
  END;
  IF answers IS NOT TRUE THEN
    RAISE EXCEPTION 'a judgment of item % revision % has blind answer %, which is not an answer '
      'to it: a % item with choices % is answered in canonical form (db.answers)', NEW.item_id,
      NEW.revision_number, NEW.blind_answer, judged_kind, array_to_string(labels, '')
      USING ERRCODE = 'check_violation';
  END IF;
  -- One in force per person and revision, also when two of their sessions judge at once:
  -- one lock per person (a batch of thousands takes it once, not a lock table's worth).
  PERFORM pg_advisory_xact_lock(hashtext('vetbench_judgment'), NEW.annotator_id);
  IF EXISTS (SELECT FROM judgment WHERE annotator_id = NEW.annotator_id
             AND item_id = NEW.item_id AND revision_number = NEW.revision_number
             AND NOT retracted) THEN
    RAISE EXCEPTION '% already judged item % revision %: undo it first to judge again',
      session_user, NEW.item_id, NEW.revision_number USING ERRCODE = 'insufficient_privilege';
  END IF;
  RETURN NEW;
END""",
        ),
        # A member's judgment keeps the blind answer they gave before seeing the key of
        # that revision (their key_reveal row, db.reveals): with psql an annotator stored
        # an answer given after the key as blind.  Run as the member, who reads their own
        # reveals only, and inserts judgments only in their own name (db.table_privileges).
        # Before migration 0020 there is no key_reveal: nothing to keep.
        plpgsql_trigger(
            "vetbench_guard_judgment_blind",
            path,
            """DECLARE
  seen varchar;
BEGIN
  IF vetbench_session_is_admin() OR to_regclass('key_reveal') IS NULL THEN
    RETURN NEW;
  END IF;
  SELECT blind_answer INTO seen FROM key_reveal WHERE person_id = NEW.annotator_id
    AND item_id = NEW.item_id AND revision_number = NEW.revision_number;
  IF FOUND AND seen IS DISTINCT FROM NEW.blind_answer THEN
    RAISE EXCEPTION 'a judgment of item % revision % gives the blind answer %, but its '
      'annotator saw the key after answering % blind: a judgment keeps the answer given '
      'before the key (key_reveal); % may not store another', NEW.item_id,
      NEW.revision_number, NEW.blind_answer, seen, session_user
      USING ERRCODE = 'insufficient_privilege';
  END IF;
  RETURN NEW;
END""",
        ),
        # A member's judgment comes with its audit event "judge" naming it, as an undo with
        # its "retract": with psql an annotator judged with no trace in the trail.
        _audited_judgment(
            "vetbench_guard_judgment_audited", path, JUDGE_ACTION, "stored", "judged"
        ),
        # An undo (a judgment's, a decision's) is one way, dated by the server, and comes
        # with its audit event (checked at commit): with psql a member undid a judgment
        # unrecorded and dated it 1999, a lead undid a decision and took the undo back.
        _one_way_undo(
            "vetbench_guard_judgment_undo",
            path,
            table="judgment",
            mark="retracted",
            undone="{}.retracted",
            by_undo="retracted_at",
            taken_back="'judgment % was undone at %: an undo is never taken back nor dated "
            "again', OLD.id, OLD.retracted_at",
        ),
        _audited_judgment(
            "vetbench_guard_judgment_undo_audited", path, RETRACT_ACTION, "undone", "undid it"
        ),
        _one_way_undo(
            "vetbench_guard_decision_undo",
            path,
            table="decision",
            mark="retracted_at",
            undone="{}.retracted_at IS NOT NULL",
            by_undo="retracted_by_id",
            taken_back="'decision % of item % was undone at %: a decision''s undo is never "
            "taken back nor dated again', OLD.id, OLD.item_id, OLD.retracted_at",
        ),
        # A decision made or undone: its item's status still follows the decisions at
        # commit (the status rule ran on item updates only, so an undo by hand left the
        # item approved with no decision in force); a member's undo has its audit event.
        plpgsql_trigger(
            "vetbench_guard_decision_change",
            path,
            f"""DECLARE
  current_item item%ROWTYPE;
  decided record;
BEGIN
  IF TG_OP = 'UPDATE' AND NEW.retracted_at IS NOT DISTINCT FROM OLD.retracted_at THEN
    RETURN NULL;
  END IF;
  IF TG_OP = 'UPDATE' AND OLD.retracted_at IS NULL AND NEW.retracted_at IS NOT NULL
     AND NOT vetbench_session_is_admin()
     AND NOT {audited_here(UNDO_DECISION_ACTION, "NEW.item_id", "decision_id")} THEN
    RAISE EXCEPTION 'decision % of item % is undone only with its audit event '
      '"{UNDO_DECISION_ACTION}" of the same transaction: % undid it unrecorded', NEW.id,
      NEW.item_id, session_user USING ERRCODE = 'insufficient_privilege';
  END IF;
  SELECT * INTO current_item FROM item WHERE id = NEW.item_id;
  IF NOT FOUND THEN
    RETURN NULL;
  END IF;
{STATUS_HOLDS}  RETURN NULL;
END""",
        ),
        # A claim is made or renewed now: a claim dated in the future never expired, so
        # its holder was "at work" for good and kept others from the item (reviewer.queue).
        _dated_now("vetbench_stamp_claim", path, "claimed_at"),
        # A decision is dated now: the newest one counts (db.decisions), so one dated in
        # the future outlived every later decision of another lead.
        _dated_now("vetbench_stamp_decision", path, "created_at"),
    ]

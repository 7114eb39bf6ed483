"""Lead adjudication: approve agreed items, resolve conflicts, revise and undo decisions.

Every decision is a new ``Decision`` row (the newest one not undone counts; older
ones are history), written with an audit event and the refreshed item status in ONE
transaction; the same decision given again by the same lead is not written twice.
Undo (:func:`undo_decision`) retracts a lead's own decision: the row stays with
``retracted_at`` set, and the item's status falls back to the decision before it, or
to what its judgments say.  Approving with a corrected key first makes a new revision
with that key.  Only leads decide: anyone else gets ``PermissionDenied`` with a
message saying so, and nothing is written.

What leads read (the conflict queue, each item's case, the decision records) is in
``reviewer.conflict_cases``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from sqlmodel import Session, col, select

from db.answers import AnswerError, format_answer, parse_answer
from db.audit import record_audit
from db.decisions import NewDecision, in_force, latest_decision, write_decisions
from db.engine import Database
from db.errors import VetbenchError
from db.item_scope import EVERY_ITEM, ItemScope
from db.item_status import (
    refresh_item_status,
    refresh_item_statuses,
    statuses_from_judgments,
)
from db.items import add_revision, locked_item, no_item_message
from db.json_types import JsonObject
from db.models import Decision, Item, ItemRevision, Person, is_current_revision, utcnow
from db.people import PermissionDenied, require_lead
from db.rows import from_row
from db.vocabulary import (
    KEY_CORRECTION_NOTE,
    REASON_ALIASES_TEXT,
    UNDO_DECISION_ACTION,
    DecisionReason,
    FlagName,
    ItemKind,
    ItemStatus,
    reason_named,
)
from reviewer.conflict_cases import DecisionRecord, status_conditions

__all__ = [
    "AdjudicationError",
    "BulkDecision",
    "DecisionMade",
    "DecisionUndone",
    "PermissionDenied",
    "approve_agreed",
    "decide",
    "decision_reason",
    "parse_reason",
    "rejection_reasons",
    "store_bulk_decisions",
    "undo_decision",
]

DECIDABLE = (ItemStatus.APPROVED, ItemStatus.REJECTED)


class AdjudicationError(VetbenchError, ValueError):
    """A decision that cannot be made as asked; the message says why."""


@dataclass(frozen=True)
class DecisionMade:
    """What :func:`decide` did: the decision in force on the item now, and whether this
    call stored it (False: the same lead's same decision was in force already, so a
    repeated command, a script run twice, writes nothing and revises nothing)."""

    record: DecisionRecord
    stored: bool = True


def parse_reason(text: str | DecisionReason | None) -> DecisionReason | None:
    """``"wrong-key"`` -> ``DecisionReason.WRONG_KEY``, and the verdict words too
    (``"no-order"`` -> ``DecisionReason.NO_CLEAR_ORDER``: ``db.vocabulary.REASON_ALIASES``);
    refuses unknown reasons, naming the known."""
    if text is None or text == "":
        return None
    if isinstance(text, DecisionReason):
        return text
    try:
        return reason_named(text)
    except ValueError:
        known = ", ".join(reason.value for reason in DecisionReason)
        raise AdjudicationError(
            f"'{text}' is not a reason; use one of {known} (or {REASON_ALIASES_TEXT})"
        ) from None


def decision_reason(
    subject: str, status: ItemStatus, reason: str | DecisionReason | None, *, key: bool = False
) -> DecisionReason | None:
    """The reason of a decision about ``subject`` (``item x:1``): a rejection needs one; an
    approval takes none, ``other``, or ``wrong-key`` with a corrected ``key`` (filled in
    then: :func:`decide`) — a reason to reject would contradict it, as the app offers
    reasons only when rejecting."""
    why = parse_reason(reason)
    known = ", ".join(r.value for r in DecisionReason)
    if status is ItemStatus.REJECTED and why is None:
        raise AdjudicationError(f"rejecting {subject} needs a reason: one of {known}")
    fits_approval = why in (None, DecisionReason.OTHER) or (why is DecisionReason.WRONG_KEY and key)
    if status is ItemStatus.APPROVED and not fits_approval:
        assert why is not None
        raise AdjudicationError(
            f"approving {subject} for the reason {why.value} contradicts itself: that is a "
            "reason to reject it; an approval takes no reason, other, or wrong-key with a "
            "corrected key"
        )
    return why


def rejection_reasons(kind: ItemKind) -> tuple[DecisionReason, ...]:
    """The reasons an item of ``kind`` may be rejected for: "no clear order" is about the
    events of an ordering item, as the annotators' ``no-order`` verdict is."""
    if kind is ItemKind.ORDERING:
        return tuple(DecisionReason)
    return tuple(reason for reason in DecisionReason if reason is not DecisionReason.NO_CLEAR_ORDER)


def _parse_status(text: str | ItemStatus) -> ItemStatus:
    try:
        status = ItemStatus(text)
    except ValueError:
        status = None
    if status not in DECIDABLE:
        raise AdjudicationError(f"a decision is approved or rejected, not '{text}'")
    assert status is not None
    return status


def _decision_record(decision: Decision, lead: str, corrected: bool = False) -> DecisionRecord:
    return from_row(
        DecisionRecord,
        decision,
        lead=lead,
        revision=decision.revision_number,
        corrected_key=corrected,
    )


def decide(
    db: Database,
    lead_name: str,
    item_id: str,
    status: str | ItemStatus,
    *,
    key: str | None = None,
    reason: str | DecisionReason | None = None,
    comment: str = "",
) -> DecisionMade:
    """Record a lead's decision on an item, in one transaction.

    Approving with a ``key`` different from the current one first stores a new
    revision with that key (validated like any key); the decision is about that
    revision.  Rejecting needs a ``reason``.  Deciding an item that already has
    a decision revises it: the earlier decisions stay as history.  The decision in
    force, by the same lead, on the same revision, with the same status, key and
    reason (and no other comment) is not stored again.
    """
    decided = _parse_status(status)
    why = decision_reason(f"item {item_id}", decided, reason, key=bool(key))
    if decided is ItemStatus.REJECTED and key:
        raise AdjudicationError("a corrected key goes with approval only")
    with db.transaction() as session:
        lead = require_lead(session, lead_name.strip())
        item = locked_item(session, item_id)
        if item is None:
            raise AdjudicationError(no_item_message(session, item_id))
        if why is not None and why not in rejection_reasons(item.kind):
            raise AdjudicationError(
                f"item {item_id} is a {item.kind.value} item: the reason {why.value} "
                "is for ordering items"
            )
        final_key = item.key if decided is ItemStatus.APPROVED else None
        revision = item.revision
        corrected = False
        if key:
            try:
                new_key = parse_answer(item.kind, key, item.labels)
            except AnswerError as error:
                raise AdjudicationError(f"item {item_id}: key '{key}': {error}") from None
            if new_key != item.key:
                revision = add_revision(
                    session,
                    item_id,
                    author=lead.name,
                    change_note=(
                        f"{KEY_CORRECTION_NOTE}: {format_answer(item.kind, item.key)} -> "
                        f"{format_answer(item.kind, new_key)}"
                    ),
                    key=new_key,
                ).number
                final_key, corrected = new_key, True
                why = why or DecisionReason.WRONG_KEY
        assert lead.id is not None
        in_force_now = latest_decision(session, item_id)
        if (
            in_force_now is not None
            and in_force_now.lead_id == lead.id
            and (in_force_now.status, in_force_now.revision_number) == (decided.value, revision)
            and in_force_now.final_key == final_key
            # left out, the reason and comment are those in force (a wrong-key approval's too)
            and why in (None, in_force_now.reason)
            and comment.strip() in ("", in_force_now.comment)
        ):
            return DecisionMade(_decision_record(in_force_now, lead.name), stored=False)
        decision = Decision(
            item_id=item_id,
            lead_id=lead.id,
            status=decided.value,
            revision_number=revision,
            final_key=final_key,
            reason=why.value if why else None,
            comment=comment.strip(),
            created_at=utcnow(),
        )
        session.add(decision)
        session.flush()
        record_audit(
            session,
            lead.name,
            "decide",
            item_id,
            status=decided.value,
            revision=revision,
            final_key=final_key,
            reason=decision.reason,
            previous_status=item.status,
            corrected_key=corrected,
        )
        refresh_item_status(session, item_id)
        return DecisionMade(_decision_record(decision, lead.name, corrected))


@dataclass(frozen=True)
class DecisionUndone:
    """What an undo did: the decision retracted, and what the item falls back to."""

    undone: DecisionRecord
    item_status: str
    now_in_force: DecisionRecord | None  # the earlier decision that counts again, if any
    current_revision: int  # a corrected key's revision stays

    def describe(self) -> str:
        """``undid lena's approval of econ:1; it is conflict again``, for the app and CLI."""
        undone = self.undone
        word = "approval" if undone.status == ItemStatus.APPROVED else "rejection"
        text = f"undid {undone.lead}'s {word} of {undone.item_id}"
        if self.now_in_force is not None:
            text += f"; {self.now_in_force.lead}'s earlier {self.now_in_force.status} counts again"
        text += f"; the item is {self.item_status} (the undone decision stays in its history)"
        still_decided = self.item_status in (ItemStatus.APPROVED, ItemStatus.REJECTED)
        if undone.corrected_key and self.current_revision == undone.revision and not still_decided:
            text += (
                f"; revision {undone.revision} with the corrected key stays and goes back to review"
            )
        return text


def undo_decision(
    db: Database, lead_name: str, item_id: str | None = None, *, made_after: int | None = None
) -> DecisionUndone:
    """Retract ``lead_name``'s decision in force on ``item_id`` (None: their newest
    decision in force on any item, of those with an id above ``made_after`` when given:
    F3 undoes only what was decided since it opened), in one transaction with an audit
    event.

    Only the lead who decided may undo it; another lead decides again instead.
    Nothing is deleted: the row keeps its content with ``retracted_at`` set.
    """
    with db.transaction() as session:
        lead = require_lead(session, lead_name.strip(), to="undo decisions")
        assert lead.id is not None
        if item_id is None:
            newest = (
                select(Decision)
                .where(col(Decision.lead_id) == lead.id, in_force())
                .order_by(col(Decision.created_at).desc(), col(Decision.id).desc())
            )
            if made_after is not None:
                newest = newest.where(col(Decision.id) > made_after)
            decision = session.exec(newest).first()
            if decision is None and made_after is not None:
                raise AdjudicationError(
                    f"{lead.name} has made no decision here to undo; an earlier one is undone "
                    "with `vetbench undo-decision ITEM_ID`"
                )
            if decision is None:
                raise AdjudicationError(f"{lead.name} has no decision to undo")
            item_id = decision.item_id
        else:
            if locked_item(session, item_id) is None:
                raise AdjudicationError(no_item_message(session, item_id))
            decision = latest_decision(session, item_id)
            if decision is None:
                raise AdjudicationError(f"item {item_id} has no decision to undo")
            if decision.lead_id != lead.id:
                other = session.get(Person, decision.lead_id)
                raise AdjudicationError(
                    f"the decision in force on {item_id} ({decision.status}) is "
                    f"{other.name if other else 'another lead'}'s; only they can undo it "
                    "(decide again to change it)"
                )
        item = session.get(Item, item_id)
        assert item is not None and decision.id is not None
        previous_status = item.status
        decision.retracted_at = utcnow()
        decision.retracted_by_id = lead.id
        session.add(decision)
        session.flush()
        status = refresh_item_status(session, item_id)
        record_audit(
            session,
            lead.name,
            UNDO_DECISION_ACTION,
            item_id,
            decision_id=decision.id,
            status=decision.status,
            revision=decision.revision_number,
            previous_status=previous_status,
            new_status=status,
        )
        corrected = session.exec(
            select(col(ItemRevision.change_note)).where(
                col(ItemRevision.item_id) == item_id,
                col(ItemRevision.number) == decision.revision_number,
            )
        ).first()
        earlier = latest_decision(session, item_id)
        earlier_lead = session.get(Person, earlier.lead_id) if earlier is not None else None
        return DecisionUndone(
            undone=_decision_record(
                decision, lead.name, bool(corrected and corrected.startswith(KEY_CORRECTION_NOTE))
            ),
            item_status=status,
            now_in_force=(
                _decision_record(earlier, earlier_lead.name if earlier_lead else "")
                if earlier is not None
                else None
            ),
            current_revision=item.current_revision,
        )


def approve_agreed(
    db: Database,
    lead_name: str,
    scope: ItemScope = EVERY_ITEM,
) -> int:
    """Approve every agreed item with its current key, in one transaction; returns how many.

    The set is read inside the write transaction, so an item that stopped being
    agreed since the lead saw the count is not approved.  The status column is only a
    cache: each item's judgments are read again and only items they show agreed are
    approved (a status set by hand, say with psql, approves nothing; such an item gets
    its status back from its judgments).
    """
    with db.transaction() as session:
        lead = require_lead(session, lead_name.strip())
        agreed = status_conditions(ItemStatus.AGREED, scope)
        current = is_current_revision()
        listed = session.execute(
            select(col(Item.id), col(Item.current_revision), col(ItemRevision.key))
            .join(ItemRevision, current)
            .where(*agreed)
        ).all()
        judged = statuses_from_judgments(session, [(i, r, k) for i, r, k in listed])
        rows = [row for row in listed if judged[row[0]] is ItemStatus.AGREED]
        stale = set(listed) - set(rows)
        refresh_item_statuses(session, [item_id for item_id, _revision, _key in stale])
        if not rows:
            return 0
        store_bulk_decisions(
            session,
            lead,
            ItemStatus.APPROVED,
            [
                BulkDecision(item_id, revision, key, ItemStatus.AGREED.value)
                for item_id, revision, key in rows
            ],
            comment="approved as agreed",
        )
        return len(rows)


@dataclass(frozen=True)
class BulkDecision:
    """One item of a bulk decision: the revision decided, its key if approved, and the
    status it had."""

    item_id: str
    revision: int
    final_key: str | None
    previous_status: str
    figures: JsonObject | None = None  # what the decision rests on (the consensus), audited


def store_bulk_decisions(
    session: Session,
    lead: Person,
    decided: ItemStatus,
    decisions: Sequence[BulkDecision],
    *,
    comment: str,
    reason: DecisionReason | None = None,
    flag: FlagName | None = None,
) -> None:
    """Decide each item ``decided`` through :func:`db.decisions.write_decisions`, its
    audit event marked ``bulk`` (decisions made for a ``flag`` also note their reason
    and the flag).  The caller read the items inside this transaction."""

    def audit_changes(decision: BulkDecision) -> JsonObject:
        changes: JsonObject = {
            "status": decided.value,
            "revision": decision.revision,
            "final_key": decision.final_key,
        }
        if flag is not None:  # the keys in the order the trail has always listed them
            changes["reason"] = reason.value if reason else None
        changes |= {"previous_status": decision.previous_status, "bulk": True}
        if decision.figures is not None:
            changes["consensus"] = decision.figures
        if flag is not None:
            changes["flag"] = flag.value
        return changes

    write_decisions(
        session,
        lead,
        [
            NewDecision(
                decision.item_id,
                decided.value,
                decision.revision,
                comment,
                audit_changes(decision),
                final_key=decision.final_key,
                reason=reason.value if reason else None,
            )
            for decision in decisions
        ],
    )

"""Gold items: item revisions whose verdict and answer a lead knows, for calibration.

A lead marks an item as gold with the known verdict and blind answer (``vetbench
gold add ITEM --verdict keep --answer "D,A,C,B"``), or takes both from the item's
approval (``--from-approved``: verdict keep, the approved key).  Gold holds for the
revision that was current when it was marked: a later edit leaves it behind
("stale"), and the item is no longer served as gold.

How gold items are used (the rule a lead can rely on):

- the queue serves them at the rate ``gold_rate`` (percent of the items served) and
  for a new annotator's first ``calibration_items`` items (``reviewer.queue``); they
  are never served as ordinary items;
- a judgment of a gold revision is a *calibration* judgment (``judgment.gold_id``):
  stored, audited and listed like any other, but counted only in the annotator's
  gold accuracy, never in agreement figures, conflicts or the item's status;
- after the verdict the annotator is told whether their blind answer and verdict
  matched the gold.

Removing gold keeps its row (``removed_at``); every change is audited.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime

from sqlalchemy import ColumnElement, and_, text
from sqlalchemy import select as sa_select
from sqlmodel import Session, col, select

from db.answers import AnswerError, format_answer, parse_answer
from db.audit import record_audit
from db.decisions import latest_decision
from db.errors import VetbenchError
from db.items import get_item, no_item_message
from db.json_types import JsonObject
from db.models import GoldItem, Item, Person, utcnow
from db.people import require_lead
from db.vocabulary import GOLD_ADD_ACTION, ItemKind, ItemStatus, Verdict, verdict_applies

__all__ = [
    "GoldError",
    "GoldOutcome",
    "GoldView",
    "active_gold",
    "add_gold",
    "gold_outcome",
    "judged_gold_outcome",
    "served_gold_id",
    "list_gold",
    "remove_gold",
    "serving_gold",
]


class GoldError(VetbenchError, ValueError):
    """A gold item that cannot be added or removed as asked; the message says why."""


@dataclass(frozen=True)
class GoldView:
    """One gold item, as plain data."""

    id: int
    item_id: str
    kind: ItemKind
    revision: int  # the revision the gold holds for
    current_revision: int  # the item's revision now
    verdict: Verdict
    answer: str  # canonical
    note: str
    lead: str
    created_at: datetime
    removed_at: datetime | None = None
    removed_by: str | None = None
    item_status: str | None = None  # the item's status now (``list_gold``)

    @property
    def rejected(self) -> bool:
        """The item was rejected: it is no longer served as gold."""
        return self.item_status == ItemStatus.REJECTED.value

    @property
    def stale(self) -> bool:
        """The item was revised since it was marked: it is no longer served as gold."""
        return self.revision != self.current_revision

    @property
    def answer_text(self) -> str:
        return format_answer(self.kind, self.answer)

    def to_json(self) -> JsonObject:
        """As ``gold list --json`` prints it."""
        return {
            "item_id": self.item_id,
            "revision": self.revision,
            "current_revision": self.current_revision,
            "verdict": self.verdict.value,
            "answer": self.answer,
            "note": self.note,
            "marked_by": self.lead,
            "marked_at": str(self.created_at),
            "removed_at": None if self.removed_at is None else str(self.removed_at),
            "removed_by": self.removed_by,
        }


@dataclass(frozen=True)
class GoldOutcome:
    """How one judgment compares with the gold (shown to the annotator after the verdict)."""

    gold_id: int
    known_verdict: Verdict
    known_answer: str  # formatted ("D, A, C, B")
    answer_matches: bool
    verdict_matches: bool

    @property
    def matches(self) -> bool:
        return self.answer_matches and self.verdict_matches

    def describe(self) -> str:
        """``gold item: your answer ✓ matches, your verdict ✗ differs (known: wrong-key, B)``."""

        def mark(ok: bool) -> str:
            return "✓ matches" if ok else "✗ differs"

        return (
            f"gold item: your answer {mark(self.answer_matches)}, your verdict "
            f"{mark(self.verdict_matches)} (known: {self.known_verdict.value}, "
            f"{self.known_answer})"
        )


def gold_outcome(gold: GoldItem, kind: ItemKind, blind_answer: str, verdict: str) -> GoldOutcome:
    """Compare a judgment (canonical blind answer, verdict) with its gold."""
    assert gold.id is not None
    return GoldOutcome(
        gold_id=gold.id,
        known_verdict=Verdict(gold.verdict),
        known_answer=format_answer(kind, gold.answer),
        answer_matches=blind_answer == gold.answer,
        verdict_matches=verdict == gold.verdict,
    )


def served_gold_id(session: Session, item_id: str, revision: int) -> int | None:
    """The id of the item's gold row for ``revision`` if it is gold now, read from the
    columns annotators may read (on PostgreSQL the known verdict and answer are hidden
    from them: ``db.privileges``)."""
    return session.exec(
        select(GoldItem.id).where(
            col(GoldItem.item_id) == item_id,
            col(GoldItem.revision_number) == revision,
            col(GoldItem.removed_at).is_(None),
        )
    ).first()


def judged_gold_outcome(
    session: Session, gold_id: int, kind: ItemKind, blind_answer: str, verdict: str
) -> GoldOutcome:
    """How a judgment just stored (flushed) compares with gold ``gold_id``.  On PostgreSQL
    the known verdict and answer come from ``vetbench_gold_known``, which gives them only
    to someone who has judged that gold (or a lead)."""
    if session.connection().dialect.name == "postgresql":
        row = session.execute(
            text("SELECT verdict, answer FROM vetbench_gold_known(:gold)"), {"gold": gold_id}
        ).one()
        known_verdict, known_answer = str(row[0]), str(row[1])
    else:
        gold = session.get(GoldItem, gold_id)
        assert gold is not None
        known_verdict, known_answer = gold.verdict, gold.answer
    return GoldOutcome(
        gold_id=gold_id,
        known_verdict=Verdict(known_verdict),
        known_answer=format_answer(kind, known_answer),
        answer_matches=blind_answer == known_answer,
        verdict_matches=verdict == known_verdict,
    )


def active_gold(session: Session, item_id: str, revision: int | None = None) -> GoldItem | None:
    """The item's gold row if it is gold now (and, with ``revision``, for that revision)."""
    row = session.exec(
        select(GoldItem).where(col(GoldItem.item_id) == item_id, col(GoldItem.removed_at).is_(None))
    ).first()
    if row is None or (revision is not None and row.revision_number != revision):
        return None
    return row


def serving_gold() -> ColumnElement[bool]:
    """Gold rows that are served now: not removed, for the item's current revision, and
    the item not rejected (a condition on ``Item`` and ``GoldItem`` for joins and EXISTS
    clauses).  A revised or rejected item stops being served as gold; ``gold list``
    tells the lead."""
    return and_(
        col(GoldItem.item_id) == col(Item.id),
        col(GoldItem.revision_number) == col(Item.current_revision),
        col(GoldItem.removed_at).is_(None),
        col(Item.status) != ItemStatus.REJECTED.value,
    )


def _check_known(kind: ItemKind, key: str, verdict: Verdict, answer: str) -> None:
    if not verdict_applies(verdict, kind):
        raise GoldError("no-order applies to ordering items only")
    if verdict is Verdict.KEEP and answer != key:
        raise GoldError(
            f"a gold item kept as it is has its key as the answer ({format_answer(kind, key)}), "
            f"not {format_answer(kind, answer)}; for a wrong key use --verdict wrong-key"
        )
    if verdict is Verdict.WRONG_KEY and answer == key:
        raise GoldError(
            "with --verdict wrong-key the answer is the right one, which differs from the key "
            f"{format_answer(kind, key)}"
        )


def add_gold(
    session: Session,
    lead: str,
    item_id: str,
    *,
    verdict: str | None = None,
    answer: str | None = None,
    from_approved: bool = False,
    note: str = "",
) -> GoldView:
    """Mark ``item_id``'s current revision as gold (leads only), with an audit event.

    Any item but a rejected one may be gold: a rejected item is never served as gold
    (``serving_gold``), so marking one is refused.  An item still under review may be
    (a gold item's own judgments are calibration judgments, never counted in its status),
    and so may an approved one.

    Either ``verdict`` and ``answer`` are given (the verdict keep alone: its answer can
    only be the key), or ``from_approved`` takes them from the item's approval of this
    revision (keep, the approved key).  The caller commits.
    """
    person = require_lead(session, lead, to="mark gold items")
    item = get_item(session, item_id)
    if item is None:
        raise GoldError(no_item_message(session, item_id))
    if item.status == ItemStatus.REJECTED.value:
        raise GoldError(
            f"item {item_id} is rejected (a lead's decision on revision {item.revision}): a "
            "rejected item is never served as gold; mark another item, or decide this one "
            "again first"
        )
    if from_approved:
        if verdict is not None or answer is not None:
            raise GoldError("--from-approved takes the verdict and answer from the approval")
        decision = latest_decision(session, item_id)
        if (
            decision is None
            or decision.status != ItemStatus.APPROVED
            or decision.revision_number != item.revision
        ):
            raise GoldError(
                f"item {item_id} revision {item.revision} is not approved; give --verdict "
                "and --answer instead"
            )
        known_verdict, known_answer = Verdict.KEEP, decision.final_key or item.key
        note = note or f"from the approval of revision {item.revision}"
    else:
        if verdict == Verdict.KEEP and answer is None:
            answer = item.key  # kept as it is: the key is the right answer (_check_known)
        if verdict is None or answer is None:
            raise GoldError(
                "a gold item needs --verdict and --answer (--verdict keep alone: the key), "
                "or --from-approved"
            )
        try:
            known_verdict = Verdict(verdict)
        except ValueError:
            known = ", ".join(v.value for v in Verdict)
            raise GoldError(f"'{verdict}' is not a verdict; use one of {known}") from None
        try:
            known_answer = parse_answer(item.kind, answer, item.labels)
        except AnswerError as error:
            raise GoldError(f"item {item_id}: answer '{answer}': {error}") from None
        _check_known(item.kind, item.key, known_verdict, known_answer)
    earlier = active_gold(session, item_id)
    if earlier is not None:
        raise GoldError(
            f"item {item_id} is gold already (revision {earlier.revision_number}, "
            f"{earlier.verdict}, {format_answer(item.kind, earlier.answer)}); remove it first "
            f"with `vetbench gold remove {item_id}`"
        )
    assert person.id is not None
    row = GoldItem(
        item_id=item_id,
        revision_number=item.revision,
        verdict=known_verdict.value,
        answer=known_answer,
        note=note.strip(),
        lead_id=person.id,
        created_at=utcnow(),
    )
    session.add(row)
    session.flush()
    record_audit(
        session,
        person.name,
        GOLD_ADD_ACTION,
        item_id,
        gold_id=row.id,
        revision=item.revision,
        verdict=known_verdict.value,
        answer=known_answer,
    )
    return _view(row, item.kind, item.revision, person.name)


def remove_gold(session: Session, lead: str, item_id: str) -> GoldView:
    """Stop serving ``item_id`` as gold (leads only); the row stays, marked removed."""
    person = require_lead(session, lead, to="remove gold items")
    item = session.get(Item, item_id)
    if item is None:
        raise GoldError(no_item_message(session, item_id))
    row = active_gold(session, item_id)
    if row is None:
        raise GoldError(f"item {item_id} is not a gold item")
    assert person.id is not None
    row.removed_at = utcnow()
    row.removed_by_id = person.id
    session.add(row)
    session.flush()
    record_audit(session, person.name, "gold-remove", item_id, gold_id=row.id)
    marked_by = session.get(Person, row.lead_id)
    return _view(
        row,
        ItemKind(item.kind),
        item.current_revision,
        marked_by.name if marked_by else "",
        removed_by=person.name,
    )


def _view(
    row: GoldItem, kind: ItemKind, current: int, lead: str, removed_by: str | None = None
) -> GoldView:
    assert row.id is not None
    return GoldView(
        id=row.id,
        item_id=row.item_id,
        kind=kind,
        revision=row.revision_number,
        current_revision=current,
        verdict=Verdict(row.verdict),
        answer=row.answer,
        note=row.note,
        lead=lead,
        created_at=row.created_at,
        removed_at=row.removed_at,
        removed_by=removed_by,
    )


def list_gold(session: Session, viewer: str, *, include_removed: bool = False) -> list[GoldView]:
    """Gold items in the order they were marked (removed ones too, when asked), each with
    its item's status; for leads only: the known answers are what calibration measures
    annotators against."""
    require_lead(session, viewer, to="list gold items (their answers are kept from annotators)")
    query = (
        sa_select(  # sqlalchemy's select: five columns
            GoldItem, col(Item.kind), col(Item.current_revision), col(Person.name), col(Item.status)
        )
        .join(Item, col(Item.id) == col(GoldItem.item_id))
        .join(Person, col(Person.id) == col(GoldItem.lead_id))
        .order_by(col(GoldItem.created_at), col(GoldItem.id))
    )
    if not include_removed:
        query = query.where(col(GoldItem.removed_at).is_(None))
    names = {p.id: p.name for p in session.exec(select(Person))}
    return [
        replace(
            _view(
                row,
                ItemKind(kind),
                current,
                lead,
                removed_by=names.get(row.removed_by_id) if row.removed_by_id else None,
            ),
            item_status=status,
        )
        for row, kind, current, lead, status in session.execute(query)
    ]

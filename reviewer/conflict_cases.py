"""The conflict queue and the decisions as leads read them: each item's case (its
current revision, earlier revisions, judgments and decisions), read in a few bulk
queries and handed out as plain dataclasses, so the CLI and the TUI never hold ORM
rows.  Deciding, undoing and approving in bulk write through ``reviewer.adjudication``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy import ColumnElement, Result
from sqlmodel import Session, SQLModel, col, func, select

from db.answers import format_answer
from db.bulk_reads import collector_paused, id_chunks
from db.engine import Database
from db.item_scope import EVERY_ITEM, ItemScope
from db.items import ItemSnapshot, item_conditions
from db.json_types import JsonObject, attributes_json
from db.models import Decision, Item, ItemRevision, Judgment, Person
from db.people import PermissionDenied, require_lead
from db.qualification import counted_judgments
from db.rows import copied_fields, row_reader
from db.vocabulary import ItemKind, ItemStatus, Verdict
from reviewer.judging import JudgmentView, proposed_keys
from reviewer.revisions import RevisionSummary

__all__ = [
    "ConflictCase",
    "DecisionRecord",
    "conflict_queue",
    "count_agreed",
    "count_status",
    "decision_history",
    "is_lead",
    "load_case",
    "status_conditions",
]


@dataclass(frozen=True)
class DecisionRecord:
    """A lead's decision on an item."""

    item_id: str
    lead: str
    status: str
    revision: int
    final_key: str | None
    reason: str | None
    comment: str
    created_at: datetime
    corrected_key: bool = False  # this decision made a new revision with a new key


@dataclass(frozen=True)
class ConflictCase:
    """Everything a lead needs to resolve one item."""

    item: ItemSnapshot  # the current revision
    earlier_revisions: list[RevisionSummary]  # oldest first, without the current one
    judgments: list[JudgmentView]  # active judgments of the current revision
    earlier_judgments: list[JudgmentView] = field(default_factory=list)
    decisions: list[DecisionRecord] = field(default_factory=list)  # in force, oldest first
    undone_decisions: list[DecisionRecord] = field(default_factory=list)  # undone, oldest first

    @property
    def key(self) -> str:
        return self.item.key

    def to_json(self) -> JsonObject:
        """As ``conflicts --json`` prints it: the item, then every record by its fields."""
        item_names = ("id", "kind", "source", "status", "revision", "prompt", "choices", "key")
        names = ("disagreements", "judgments", "earlier_judgments", "earlier_revisions")
        return {
            **attributes_json(self.item, *item_names, "explanation"),
            **attributes_json(self, *names, "decisions"),
        }

    @property
    def explanation(self) -> str | None:
        return self.item.explanation

    @property
    def key_to_offer(self) -> str:
        """The key offered to a lead who corrects this one: the other key most asked for
        (``reviewer.judging.proposed_keys``, as triage suggests), else the other answer
        given most, else the key itself."""
        proposed = proposed_keys(self.key, self.judgments)
        asked = [proposal for proposal in proposed if proposal.asked_for]
        return (asked or proposed)[0].answer if proposed else self.key

    @property
    def disagreements(self) -> list[str]:
        """Why the item is not agreed, one line per judgment that differs from keep + key."""
        kind = self.item.kind
        lines = []
        for judgment in self.judgments:
            parts = []
            if judgment.verdict != Verdict.KEEP:
                parts.append(f"verdict {judgment.verdict}")
            if not judgment.matches_key:
                parts.append(f"answered {format_answer(kind, judgment.blind_answer)} blind")
            if judgment.corrected_key:
                parts.append(f"proposes key {format_answer(kind, judgment.corrected_key)}")
            if parts:
                lines.append(f"{judgment.annotator}: {', '.join(parts)}")
        return lines


def status_conditions(status: str, scope: ItemScope) -> list[ColumnElement[bool]]:
    """Items of ``status`` within ``scope`` (its kinds and sources)."""
    return [col(Item.status) == status, *item_conditions(kinds=scope.kinds, sources=scope.sources)]


def count_status(
    db: Database,
    status: str,
    scope: ItemScope = EVERY_ITEM,
) -> int:
    """How many items have ``status``."""
    query = select(func.count()).select_from(Item).where(*status_conditions(status, scope))
    with db.session() as session:
        return int(session.exec(query).one())


def count_agreed(db: Database, scope: ItemScope = EVERY_ITEM) -> int:
    """How many items are agreed (waiting for a lead's approval)."""
    return count_status(db, ItemStatus.AGREED, scope)


def _columns(table: type[SQLModel], *names: str) -> list[Any]:
    """The columns ``names`` of ``table``, for a query whose rows are read by name."""
    return [col(getattr(table, name)) for name in names]


_ITEM_COLUMNS = [
    col(Item.current_revision).label("revision"),
    *_columns(
        Item,
        *copied_fields(
            ItemSnapshot, "revision", "prompt", "choices", "key", "explanation", "revision_id"
        ),
    ),
]
_REVISION_COLUMNS = _columns(ItemRevision, "item_id", "id", *copied_fields(RevisionSummary))
_JUDGMENT_COLUMNS = [
    col(Judgment.annotator_id),
    col(Judgment.item_id),
    col(Person.name).label("annotator"),
    col(Judgment.revision_number).label("revision"),
    *_columns(Judgment, *copied_fields(JudgmentView, "annotator", "revision", "matches_key")),
]
_DECISION_COLUMNS = [
    col(Person.name).label("lead"),
    col(Decision.revision_number).label("revision"),
    *_columns(Decision, *copied_fields(DecisionRecord, "lead", "revision", "corrected_key")),
    col(Decision.retracted_at),
]


def _load_cases(session: Session, item_rows: Result[Any]) -> list[ConflictCase]:
    """Cases for the rows of an ``_ITEM_COLUMNS`` query, from bulk column queries:
    revisions, judgments, decisions.  No ORM objects: a queue of thousands of conflicts
    loads in about a second."""
    items = item_rows.all()
    ids = [row.id for row in items]
    revisions: dict[str, dict[int, tuple[int, RevisionSummary]]] = {item_id: {} for item_id in ids}
    judgments: dict[str, dict[tuple[int, int], JudgmentView]] = {item_id: {} for item_id in ids}
    decisions: dict[str, list[DecisionRecord]] = {item_id: [] for item_id in ids}
    undone: dict[str, list[DecisionRecord]] = {item_id: [] for item_id in ids}
    counted = counted_judgments(session)  # the qualification gate's (db.qualification)
    for chunk in id_chunks(ids):
        result = session.execute(
            select(*_REVISION_COLUMNS).where(col(ItemRevision.item_id).in_(chunk))
        )
        read_revision = row_reader(RevisionSummary, list(result.keys()))
        for row in result:
            item_id, revision_id = row[:2]  # _REVISION_COLUMNS starts with these
            summary = read_revision(row)
            revisions[item_id][summary.number] = (revision_id, summary)
        result = session.execute(
            select(*_JUDGMENT_COLUMNS)
            .join(Person, col(Person.id) == col(Judgment.annotator_id))
            .where(
                col(Judgment.item_id).in_(chunk),
                col(Judgment.retracted).is_(False),
                col(Judgment.gold_id).is_(None),  # calibration judgments: gold accuracy only
                *counted,
            )
            .order_by(col(Judgment.created_at), col(Judgment.id))
        )
        read_judgment = row_reader(
            JudgmentView, list(result.keys()), "alternative_orders", "matches_key"
        )
        for row in result:
            annotator_id, item_id, _annotator, number = row[:4]  # as _JUDGMENT_COLUMNS begin
            revision = revisions[item_id].get(number)
            if revision is None:
                continue
            # Each annotator's latest active judgment per revision (item_status's rule).
            judgments[item_id][(number, annotator_id)] = read_judgment(
                row,
                alternative_orders=tuple(row.alternative_orders),
                matches_key=row.blind_answer == revision[1].key,
            )
        result = session.execute(
            select(*_DECISION_COLUMNS)
            .join(Person, col(Person.id) == col(Decision.lead_id))
            .where(col(Decision.item_id).in_(chunk))
            .order_by(col(Decision.created_at), col(Decision.id))
        )
        read_decision = row_reader(DecisionRecord, list(result.keys()), "corrected_key")
        for row in result:
            record = read_decision(row, corrected_key=False)
            (decisions if row.retracted_at is None else undone)[row.item_id].append(record)
    read_item = row_reader(
        ItemSnapshot,
        list(item_rows.keys()),
        "kind",
        "prompt",
        "choices",
        "key",
        "explanation",
        "meta",
        "revision_id",
    )
    cases = []
    for row in items:
        current = row.revision
        revision_id, text = revisions[row.id][current]
        item = read_item(
            row,
            kind=ItemKind(row.kind),
            prompt=text.prompt,
            choices=dict(text.choices),
            key=text.key,
            explanation=text.explanation,
            meta=dict(row.meta),
            revision_id=revision_id,
        )
        views = sorted(
            judgments[row.id].values(), key=lambda view: (view.revision, view.created_at)
        )
        cases.append(
            ConflictCase(
                item=item,
                earlier_revisions=[
                    view
                    for number, (_, view) in sorted(revisions[row.id].items())
                    if number != current
                ],
                judgments=[view for view in views if view.revision == current],
                earlier_judgments=[view for view in views if view.revision != current],
                decisions=decisions[row.id],
                undone_decisions=undone[row.id],
            )
        )
    return cases


def conflict_queue(
    db: Database,
    scope: ItemScope = EVERY_ITEM,
    *,
    limit: int | None = None,
) -> list[ConflictCase]:
    """Items in conflict, oldest first, each with its revisions, judgments and decisions."""
    query = (
        select(*_ITEM_COLUMNS)
        .where(*status_conditions(ItemStatus.CONFLICT, scope))
        .order_by(col(Item.created_at), col(Item.id))
    )
    if limit is not None:
        query = query.limit(limit)
    with collector_paused(), db.session() as session:
        return _load_cases(session, session.execute(query))


def load_case(db: Database, item_id: str) -> ConflictCase | None:
    """One item's case, whatever its status (None if there is no such item)."""
    with db.session() as session:
        cases = _load_cases(
            session, session.execute(select(*_ITEM_COLUMNS).where(col(Item.id) == item_id))
        )
        return cases[0] if cases else None


def decision_history(db: Database, item_id: str) -> list[DecisionRecord]:
    """Every decision in force on an item, oldest first (undone ones: ``load_case``)."""
    case = load_case(db, item_id)
    return [] if case is None else case.decisions


def is_lead(db: Database, name: str) -> bool:
    """Whether ``name`` is a registered lead (for screens that hide lead-only actions)."""
    with db.session() as session:
        try:
            require_lead(session, name)
        except PermissionDenied:
            return False
        return True

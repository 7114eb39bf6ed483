"""What the consensus model (``db.consensus``) rests on, read in a few bulk queries.

Everything is about each item's *current* revision: the annotators' latest active
judgments of it (their blind answer and verdict), its key, what a lead knows of it
when it is a gold item, and the models' latest parsed answers to it
(``db.model_answers``).  Calibration judgments of gold items count: there the truth is
known, so they measure the annotators best (where the gold answers cannot be read, an
annotator's session on PostgreSQL, neither they nor the truths are weighed).

Only judgments that count are weighed: the qualification gate (``db.qualification``)
leaves out those of annotators who have not passed it, as every decision path does.
Theirs are read apart (``ConsensusInputs.uncounted``), so that their reliability can be
measured against the consensus they had no part in.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass

from sqlalchemy import select as sa_select
from sqlalchemy import text
from sqlmodel import Session, col

from db.bulk_reads import id_chunks
from db.items import item_conditions
from db.model_answers import model_answers
from db.models import GoldItem, Item, ItemRevision, Judgment, Person, is_current_revision
from db.qualification import uncounted_annotators
from db.vocabulary import ItemKind, Verdict

__all__ = [
    "ConsensusInputs",
    "GoldTruth",
    "InputItem",
    "Rating",
    "consensus_inputs",
    "scoped_statuses",
]

KEEPING_VERDICTS = frozenset({Verdict.KEEP.value, Verdict.WRONG_KEY.value})
"""Verdicts that keep the item: a wrong key is corrected, the item stays."""


@dataclass(frozen=True)
class InputItem:
    """An item's current revision: what its ratings are about."""

    item_id: str
    kind: ItemKind
    revision: int
    key: str  # canonical
    choices: int = 4  # how many events or options

    @property
    def possible_answers(self) -> int:
        """How many answers there are to choose from: what guessing is up against (at
        least one, whatever rows not written by vetbench hold)."""
        if self.kind is ItemKind.ORDERING:
            return math.factorial(self.choices)
        if self.kind is ItemKind.MULTI:
            return max(1, 2**self.choices - 1)
        return max(1, self.choices)


@dataclass(frozen=True)
class Rating:
    """One rater's answer to an item's current revision: a person's judgment (with its
    verdict) or a model's parsed answer (no verdict)."""

    item_id: str
    rater: str
    rater_kind: str  # "person" or "model"
    answer: str  # canonical
    verdict: str | None  # Verdict; None for models

    @property
    def keeps(self) -> bool | None:
        """Whether the verdict keeps the item (None: a model gave no verdict)."""
        return None if self.verdict is None else self.verdict in KEEPING_VERDICTS


@dataclass(frozen=True)
class GoldTruth:
    """What a lead knows of a gold item's current revision."""

    item_id: str
    verdict: str  # Verdict
    answer: str  # canonical: the right answer

    @property
    def keeps(self) -> bool:
        return self.verdict in KEEPING_VERDICTS


@dataclass(frozen=True)
class ConsensusInputs:
    """Every rating of every item's current revision, the items, and the gold truths."""

    items: Mapping[str, InputItem]
    ratings: tuple[Rating, ...]
    gold: Mapping[str, GoldTruth]
    uncounted: tuple[Rating, ...] = ()  # judgments of people the gate leaves out: no weight


def _judgment_ratings(session: Session, *, calibration: bool) -> tuple[list[Rating], list[Rating]]:
    """Each person's latest active judgment of each item's current revision: those that
    count, and those of people the qualification gate leaves out.  ``calibration``:
    with the judgments of gold items too."""
    query = (
        sa_select(  # sqlalchemy's select: more columns than sqlmodel's types take
            col(Judgment.item_id),
            col(Person.name),
            col(Judgment.blind_answer),
            col(Judgment.verdict),
        )
        .join(Item, col(Item.id) == col(Judgment.item_id))
        .join(Person, col(Person.id) == col(Judgment.annotator_id))
        .where(
            col(Judgment.retracted).is_(False),
            col(Judgment.revision_number) == col(Item.current_revision),
            *([] if calibration else [col(Judgment.gold_id).is_(None)]),
        )
        .order_by(col(Judgment.created_at), col(Judgment.id))
    )
    latest: dict[tuple[str, str], Rating] = {}
    for item_id, name, answer, verdict in session.execute(query):
        latest[(item_id, name)] = Rating(item_id, name, "person", answer, verdict)
    left_out = uncounted_annotators(session)
    counted = [rating for rating in latest.values() if rating.rater not in left_out]
    return counted, [rating for rating in latest.values() if rating.rater in left_out]


def _gold_readable(session: Session) -> bool:
    """Whether this connection may read the gold answers: on PostgreSQL annotators may
    not (``db.table_privileges``), and the model then runs without the known truths,
    and without the calibration judgments, of which they read only their own."""
    if session.connection().dialect.name != "postgresql":
        return True
    query = text("SELECT has_column_privilege('gold_item', 'answer', 'SELECT')")
    return bool(session.execute(query).scalar())


def _gold_truths(session: Session) -> dict[str, GoldTruth]:
    """Gold rows in force for their item's current revision."""
    query = (
        sa_select(col(GoldItem.item_id), col(GoldItem.verdict), col(GoldItem.answer))
        .join(Item, col(Item.id) == col(GoldItem.item_id))
        .where(
            col(GoldItem.removed_at).is_(None),
            col(GoldItem.revision_number) == col(Item.current_revision),
        )
    )
    return {
        item_id: GoldTruth(item_id, verdict, answer)
        for item_id, verdict, answer in session.execute(query)
    }


def _items(session: Session, item_ids: Collection[str]) -> dict[str, InputItem]:
    """The current revisions of these items (rows not written by vetbench are skipped)."""
    known_kinds = {kind.value for kind in ItemKind}
    found: dict[str, InputItem] = {}
    for chunk in id_chunks(sorted(item_ids)):
        rows = session.execute(
            sa_select(
                col(Item.id),
                col(Item.kind),
                col(Item.current_revision),
                col(ItemRevision.key),
                col(ItemRevision.choices),
            )
            .join(ItemRevision, is_current_revision())
            .where(col(Item.id).in_(chunk))
        )
        for item_id, kind, revision, key, choices in rows:
            if kind in known_kinds:
                found[item_id] = InputItem(item_id, ItemKind(kind), revision, key, len(choices))
    return found


def consensus_inputs(
    session: Session, item_ids: Collection[str] | None = None, *, models: bool = True
) -> ConsensusInputs:
    """Everything the consensus model weighs.  Every rating is read, whatever
    ``item_ids`` asks for (a rater's reliability rests on all their work); the items
    asked for are there even without any rating, so that they get the prior."""
    gold_readable = _gold_readable(session)
    ratings, uncounted = _judgment_ratings(session, calibration=gold_readable)
    if models:
        for answers in model_answers(session):
            ratings.extend(
                Rating(answers.item_id, answer.model, "model", answer.answer, None)
                for answer in answers.answers
                if answer.answer is not None
            )
    gold = _gold_truths(session) if gold_readable else {}
    wanted = {rating.item_id for rating in [*ratings, *uncounted]} | set(gold)
    wanted |= set(item_ids or ())
    items = _items(session, wanted)
    ratings = [rating for rating in ratings if rating.item_id in items]
    gold = {item_id: truth for item_id, truth in gold.items() if item_id in items}
    uncounted = [rating for rating in uncounted if rating.item_id in items]
    return ConsensusInputs(items, tuple(ratings), gold, tuple(uncounted))


def scoped_statuses(
    session: Session,
    *,
    statuses: Sequence[str] | None = None,
    kinds: Sequence[str] | None = None,
    sources: Sequence[str] | None = None,
) -> dict[str, str]:
    """Item id -> status of the items with these statuses, kinds and sources (each
    None: any)."""
    conditions = item_conditions(statuses=statuses, kinds=kinds, sources=sources)
    query = sa_select(col(Item.id), col(Item.status)).where(*conditions)
    return {item_id: status for item_id, status in session.execute(query)}

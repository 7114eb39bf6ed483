"""Stored judgments loaded into numpy arrays, ready for the agreement statistics.

One query reads every non-retracted judgment (joined with its item and the
judged revision's key); numpy then keeps each annotator's latest judgment per
item revision, the rule of :func:`db.item_status.active_judgments`.  The
unit of agreement is an *item revision*: annotators who judged the same text.
Judgments of earlier revisions stay in the statistics, so items a lead later
corrected still count towards agreement.  Calibration judgments (of gold items,
``db.gold``) are left out: they count only in each annotator's gold accuracy.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, fields, replace
from typing import Any

import numpy as np
from numpy.typing import NDArray
from sqlalchemy import Connection, func, select
from sqlmodel import col

from db.bulk_reads import collector_paused
from db.decisions import in_force
from db.engine import Database
from db.items import item_conditions
from db.models import Decision, Item, ItemRevision, Judgment, Person
from db.qualification import counted_judgments
from db.vocabulary import Verdict

VERDICTS: tuple[str, ...] = tuple(verdict.value for verdict in Verdict)
KEEP = VERDICTS.index(Verdict.KEEP.value)

IntArray = NDArray[np.int64]
FloatArray = NDArray[np.float64]
StrArray = NDArray[np.str_]
ObjectArray = NDArray[np.object_]


@dataclass(frozen=True)
class JudgmentData:
    """Active judgments (rows, sorted by unit then annotator) and the units they judged.

    A unit is one item revision with at least one active judgment.  Unit arrays
    are indexed by ``row_unit``; annotator and verdict arrays hold indices into
    ``annotator_names`` and ``verdict_names``.
    """

    row_unit: IntArray
    row_annotator: IntArray
    row_verdict: IntArray
    row_answer: IntArray  # index into answer_values
    row_seconds: FloatArray
    unit_id: IntArray  # the judged revision's database id: identifies a unit across subsets
    unit_item: ObjectArray  # item id
    unit_revision: IntArray  # revision number
    unit_kind: StrArray
    unit_source: ObjectArray
    unit_key: IntArray  # key of the judged revision, an index into answer_values
    unit_is_current: NDArray[np.bool_]
    unit_decision: ObjectArray  # the item's latest decision status, "" without one
    unit_decision_key: ObjectArray  # that decision's final key, "" without one
    annotator_names: tuple[str, ...]
    answer_values: StrArray  # distinct blind answers and keys, in canonical form
    verdict_names: tuple[str, ...] = VERDICTS

    @property
    def n_rows(self) -> int:
        return int(self.row_unit.size)

    @property
    def n_units(self) -> int:
        return int(self.unit_item.size)

    @property
    def n_annotators(self) -> int:
        return len(self.annotator_names)

    def judgments_per_unit(self) -> IntArray:
        return np.bincount(self.row_unit, minlength=self.n_units)

    def fingerprint(self) -> bytes:
        """Identifies this set of units: equal for subsets that select the same units."""
        return hashlib.blake2b(self.unit_id.tobytes(), digest_size=16).digest()

    def row_key(self) -> IntArray:
        """The key (answer code) of the revision each row judged."""
        return self.unit_key[self.row_unit]

    def answer_text(self, codes: IntArray) -> StrArray:
        """Answer codes back to canonical answers (``"DACB"``, ``"ABD"``)."""
        return self.answer_values[codes]

    def subset(self, unit_mask: NDArray[np.bool_]) -> JudgmentData:
        """The same data restricted to the units where ``unit_mask`` is true (renumbered)."""
        new_index = np.cumsum(unit_mask) - 1
        keep_rows = unit_mask[self.row_unit]
        subsets: dict[str, Any] = {}  # arrays of several dtypes, handed to replace()
        for field in fields(self):  # every row_* and unit_* array, by its own mask
            if field.name.startswith(("row_", "unit_")):
                mask = keep_rows if field.name.startswith("row_") else unit_mask
                subsets[field.name] = getattr(self, field.name)[mask]
        subsets["row_unit"] = new_index[subsets["row_unit"]]
        return replace(self, **subsets)


def empty_data() -> JudgmentData:
    """No judgments at all."""
    no_ints = np.zeros(0, dtype=np.int64)
    return JudgmentData(
        row_unit=no_ints,
        row_annotator=no_ints,
        row_verdict=no_ints,
        row_answer=no_ints,
        row_seconds=np.zeros(0, dtype=np.float64),
        unit_id=no_ints,
        unit_item=np.zeros(0, dtype=object),
        unit_revision=no_ints,
        unit_kind=np.zeros(0, dtype="<U1"),
        unit_source=np.zeros(0, dtype=object),
        unit_key=no_ints,
        unit_is_current=np.zeros(0, dtype=bool),
        unit_decision=np.zeros(0, dtype=object),
        unit_decision_key=np.zeros(0, dtype=object),
        annotator_names=(),
        answer_values=np.zeros(0, dtype="<U1"),
    )


def within_unit_pairs(row_unit: IntArray) -> tuple[IntArray, IntArray]:
    """Row indices ``(first, second)`` of every pair of rows in the same unit.

    ``row_unit`` must be sorted; each unordered pair appears once.
    """
    firsts: list[IntArray] = []
    seconds: list[IntArray] = []
    gap = 1
    while gap < row_unit.size:
        same = np.flatnonzero(row_unit[gap:] == row_unit[:-gap])
        if same.size == 0:  # sorted: no unit has more than `gap` rows
            break
        firsts.append(same)
        seconds.append(same + gap)
        gap += 1
    if not firsts:
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty
    return np.concatenate(firsts), np.concatenate(seconds)


def _latest_decisions(connection: Connection) -> dict[str, tuple[str, str]]:
    """Each item's newest decision in force as (status, final key)."""
    query = (
        select(col(Decision.item_id), col(Decision.status), col(Decision.final_key))
        .where(in_force())
        .order_by(col(Decision.created_at), col(Decision.id))
    )
    return {item: (status, key or "") for item, status, key in connection.execute(query)}


def judgments_fingerprint(db: Database) -> tuple[int, ...]:
    """A cheap summary that changes whenever judgments or decisions are added or retracted
    (undone)."""
    with db.engine.connect() as connection:
        # Per table: rows, the newest id, and how many were retracted.
        figures = [
            connection.execute(
                select(
                    func.count(),
                    func.coalesce(func.max(col(table.id)), 0),
                    func.count(col(table.retracted_at)),
                ).select_from(table)
            ).one()
            for table in (Judgment, Decision)
        ]
    return tuple(int(value or 0) for row in figures for value in row)


def _factorize(values: Sequence[str], codes: dict[str, int]) -> IntArray:
    """Integer codes for strings, extending ``codes`` with values not seen before."""
    for value in dict.fromkeys(values):  # the distinct values, in order of appearance
        codes.setdefault(value, len(codes))
    return np.fromiter(map(codes.__getitem__, values), dtype=np.int64, count=len(values))


def load_judgments(
    db: Database, *, kinds: Sequence[str] | None = None, sources: Sequence[str] | None = None
) -> JudgmentData:
    """Every annotator's latest non-retracted judgment per item revision, as arrays.

    Two bulk queries, whatever the number of items: the judgments in the order
    they were made, and the judged revisions with their items' kind and source.
    """
    with collector_paused():
        return _load(db, kinds, sources)


def _load(db: Database, kinds: Sequence[str] | None, sources: Sequence[str] | None) -> JudgmentData:
    with db.session() as session:
        counted = counted_judgments(session)  # the qualification gate's (db.qualification)
    judgment_query = (
        select(
            col(Judgment.revision_id),
            col(Judgment.annotator_id),
            col(Judgment.verdict),
            col(Judgment.blind_answer),
            col(Judgment.seconds),
        )
        # Calibration judgments (of gold items) count in gold accuracy only.
        .where(col(Judgment.retracted).is_(False), col(Judgment.gold_id).is_(None), *counted)
        .order_by(col(Judgment.created_at), col(Judgment.id))
    )
    unit_query = (
        select(
            col(ItemRevision.id),
            col(ItemRevision.item_id),
            col(ItemRevision.number),
            col(ItemRevision.key),
            col(ItemRevision.kind),  # the kind it was judged in (an edit may change it)
            col(Item.source),
            col(Item.current_revision),
        )
        .join(Item, col(Item.id) == col(ItemRevision.item_id))
        .order_by(col(ItemRevision.id))
    )
    unit_query = unit_query.where(*item_conditions(kinds=kinds, sources=sources))
    with db.engine.connect() as connection:
        rows = connection.execute(judgment_query).all()
        units = connection.execute(unit_query).all()
        people: dict[int, str] = {
            int(pid or 0): name
            for pid, name in connection.execute(select(col(Person.id), col(Person.name)))
        }
        decisions = _latest_decisions(connection)
    if not rows or not units:
        return empty_data()
    revision_ids, annotator_ids, verdicts, answers, seconds = zip(*rows, strict=True)
    unit_revision_ids, unit_items, unit_numbers, keys, unit_kinds, unit_sources, currents = zip(
        *units, strict=True
    )
    all_revisions = np.fromiter(unit_revision_ids, dtype=np.int64, count=len(units))
    row_revision = np.fromiter(revision_ids, dtype=np.int64, count=len(rows))
    # Revisions come sorted by id; judgments of filtered-out items find no revision.
    position = np.searchsorted(all_revisions, row_revision)
    position[position == all_revisions.size] = 0
    in_scope = all_revisions[position] == row_revision

    person_ids, row_annotator = np.unique(
        np.fromiter(annotator_ids, dtype=np.int64, count=len(rows)), return_inverse=True
    )
    # Latest judgment per (revision, annotator): rows come oldest first, so the last one wins.
    pair_key = position * person_ids.size + row_annotator
    pair_key[~in_scope] = -1
    distinct, last_from_end = np.unique(pair_key[::-1], return_index=True)
    keep = len(rows) - 1 - last_from_end[distinct >= 0]  # sorted by unit, then annotator
    if keep.size == 0:
        return empty_data()

    judged, row_unit = np.unique(position[keep], return_inverse=True)
    verdict_codes = {name: code for code, name in enumerate(VERDICTS)}
    row_verdict = _factorize(verdicts, verdict_codes)[keep]
    answer_codes: dict[str, int] = {}
    row_answer = _factorize(answers, answer_codes)[keep]
    judged_list = judged.tolist()
    unit_key = _factorize([keys[index] for index in judged_list], answer_codes)
    unit_item = np.array([unit_items[index] for index in judged_list], dtype=object)
    unit_revision = np.array([unit_numbers[index] for index in judged_list], dtype=np.int64)
    current = np.array([currents[index] for index in judged_list], dtype=np.int64)
    no_decision = ("", "")
    unit_decisions = [decisions.get(item, no_decision) for item in unit_item.tolist()]
    seconds_array = np.fromiter(seconds, dtype=np.float64, count=len(rows))
    return JudgmentData(
        row_unit=row_unit.astype(np.int64),
        row_annotator=row_annotator[keep].astype(np.int64),
        row_verdict=row_verdict,
        row_answer=row_answer,
        row_seconds=seconds_array[keep],
        unit_id=all_revisions[judged],
        unit_item=unit_item,
        unit_revision=unit_revision,
        unit_kind=np.array([unit_kinds[index] for index in judged_list], dtype=str),
        unit_source=np.array([unit_sources[index] for index in judged_list], dtype=object),
        unit_key=unit_key,
        unit_is_current=unit_revision == current,
        unit_decision=np.array([status for status, _ in unit_decisions], dtype=object),
        unit_decision_key=np.array([key for _, key in unit_decisions], dtype=object),
        annotator_names=tuple(people.get(int(pid), f"person {pid}") for pid in person_ids),
        answer_values=np.array(list(answer_codes), dtype=str),
        verdict_names=tuple(verdict_codes),
    )

"""Each annotator's accuracy on gold items (``db.gold``): calibration, kept apart from agreement.

A calibration judgment (``judgment.gold_id`` set) matches its gold when the blind
answer is the known answer and the verdict the known verdict.  Each annotator's
latest non-retracted judgment of each gold counts.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from sqlmodel import col

from db.engine import Database
from db.identity import database_account
from db.item_status import named_judgment_rows
from db.items import item_conditions
from db.json_types import JsonObject
from db.models import GoldItem, Judgment
from reviewer.agreement.bootstrap import Figure


@dataclass(frozen=True)
class GoldAccuracy:
    """One annotator on gold items: how many they judged, and how often they matched."""

    name: str
    judged: int
    answer: Figure  # share whose blind answer is the known answer
    verdict: Figure  # share whose verdict is the known verdict
    both: Figure  # share matching both: the gold accuracy

    def to_json(self) -> JsonObject:
        return {
            "name": self.name,
            "judged": self.judged,
            "accuracy": self.both.to_json(),
            "answer": self.answer.to_json(),
            "verdict": self.verdict.to_json(),
        }


def gold_accuracy(
    db: Database, *, kinds: Sequence[str] | None = None, sources: Sequence[str] | None = None
) -> list[GoldAccuracy]:
    """Gold accuracy per annotator with at least one calibration judgment, by name; none
    for an annotator on PostgreSQL, who may not read the known answers (a judgment that
    matched would show them)."""
    account = database_account(db)
    if account is not None and not account.is_lead:
        return []
    query = (
        named_judgment_rows(
            col(Judgment.gold_id),
            col(Judgment.blind_answer),
            col(Judgment.verdict),
            col(GoldItem.answer),
            col(GoldItem.verdict),
        )
        .join(GoldItem, col(GoldItem.id) == col(Judgment.gold_id))
        .where(*item_conditions(kinds=kinds, sources=sources))
    )
    latest: dict[tuple[str, int], tuple[bool, bool]] = {}
    with db.session() as session:
        for name, gold_id, answer, verdict, known_answer, known_verdict in session.execute(query):
            latest[(name, gold_id)] = (answer == known_answer, verdict == known_verdict)
    people: dict[str, list[tuple[bool, bool]]] = {}
    for (name, _gold), matches in latest.items():
        people.setdefault(name, []).append(matches)
    results = []
    for name in sorted(people):
        outcomes = people[name]
        n = len(outcomes)
        results.append(
            GoldAccuracy(
                name=name,
                judged=n,
                answer=Figure.of(sum(a for a, _ in outcomes) / n, n),
                verdict=Figure.of(sum(v for _, v in outcomes) / n, n),
                both=Figure.of(sum(a and v for a, v in outcomes) / n, n),
            )
        )
    return results

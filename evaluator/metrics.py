"""Scores for one prediction and the figures of a set of predictions.

Per prediction (``score_answer``): exact match for every kind; for ordering items
the pairwise accuracy (share of event pairs in the key's relative order, 0 when
unparsed); for multi-answer items the F1 between predicted and key letter sets
(0 when unparsed).

Per set (``summarize_predictions``):

- ``accuracy`` with a Wilson 95% interval (``accuracy_ci``). Unparsed answers count
  as wrong. **Infrastructure failures** (timeouts, exhausted retries) are counted in
  ``infrastructure_failures`` and left out of every denominator: they say nothing
  about the model and are retried when the run resumes.
- ``unparsed_rate``: unparsed answers over the scored predictions.
- ``pairwise_accuracy`` (ordering items), ``weighted_f1`` (multiple-choice items, as
  CFLUE reports it: scikit-learn's weighted F1 with each answer string as a class and
  "unparsed" as a class of its own), ``set_f1`` (multi-answer items).
- ``by_kind`` and ``by_source``: the same figures for each kind and each source.

A figure with nothing to average over is ``None`` (no ordering items -> no pairwise
accuracy), never a made-up 0.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from db.answers import pairwise_accuracy
from db.vocabulary import FailureKind, ItemKind

UNPARSED_LABEL = "<unparsed>"  # the class of unparsed answers in weighted F1
CONFIDENCE_LEVEL = 0.95


@dataclass
class ScoredPrediction:
    """One prediction as the metrics see it: plain data, no ORM row."""

    item_id: str
    kind: ItemKind | str
    source: str
    key: str
    parsed_answer: str | None
    correct: bool | None  # None when the prediction failed for infrastructure reasons
    failure_kind: str | None = None  # FailureKind value, or None for a scored answer
    scores: dict[str, Any] = field(default_factory=dict)

    @property
    def is_infrastructure_failure(self) -> bool:
        return self.failure_kind == FailureKind.INFRASTRUCTURE

    @property
    def is_unparsed(self) -> bool:
        return self.failure_kind == FailureKind.UNPARSED or (
            self.parsed_answer is None and not self.is_infrastructure_failure
        )


def set_f1(predicted: str | None, key: str) -> float:
    """F1 between the letter sets of ``predicted`` and ``key`` (0 when nothing was predicted)."""
    if not predicted:
        return 0.0
    predicted_letters, key_letters = set(predicted), set(key)
    overlap = len(predicted_letters & key_letters)
    if overlap == 0:
        return 0.0
    precision = overlap / len(predicted_letters)
    recall = overlap / len(key_letters)
    return 2 * precision * recall / (precision + recall)


def score_answer(kind: ItemKind | str, parsed: str | None, key: str) -> dict[str, Any]:
    """Scores of one parsed answer against the key: ``correct``, plus ``pairwise`` or ``set_f1``."""
    item_kind = ItemKind(kind)
    scores: dict[str, Any] = {"correct": parsed is not None and parsed == key}
    if item_kind is ItemKind.ORDERING:
        scores["pairwise"] = pairwise_accuracy(parsed, key)
    elif item_kind is ItemKind.MULTI:
        scores["set_f1"] = set_f1(parsed, key)
    return scores


def wilson_interval(successes: int, n: int) -> tuple[float, float]:
    """Wilson score 95% interval for ``successes`` out of ``n`` (``(0, 1)`` when n is 0)."""
    if n <= 0:
        return (0.0, 1.0)
    if not 0 <= successes <= n:
        raise ValueError(f"successes must lie between 0 and n={n}, got {successes}")
    from statsmodels.stats.proportion import proportion_confint

    low, high = proportion_confint(successes, n, alpha=1 - CONFIDENCE_LEVEL, method="wilson")
    return (float(low), float(high))


def weighted_f1(keys: Sequence[str], predictions: Sequence[str | None]) -> float:
    """CFLUE's answer F1: weighted over answer-string classes; unparsed is its own class."""
    from sklearn.metrics import f1_score

    predicted = [UNPARSED_LABEL if answer is None else answer for answer in predictions]
    return float(f1_score(list(keys), predicted, average="weighted", zero_division=0))


def _mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None


def _row_score(row: ScoredPrediction, name: str) -> float:
    """A stored per-item score, recomputed from the answer and key when it was not stored."""
    value = row.scores.get(name)
    if isinstance(value, int | float):
        return float(value)
    return float(score_answer(row.kind, row.parsed_answer, row.key).get(name, 0.0))


def _figures(rows: Sequence[ScoredPrediction]) -> dict[str, Any]:
    scored = [row for row in rows if not row.is_infrastructure_failure]
    correct = sum(1 for row in scored if row.correct)
    unparsed = sum(1 for row in scored if row.is_unparsed)
    low, high = wilson_interval(correct, len(scored))
    ordering = [row for row in scored if ItemKind(row.kind) is ItemKind.ORDERING]
    mcq = [row for row in scored if ItemKind(row.kind).is_mcq]
    multi = [row for row in scored if ItemKind(row.kind) is ItemKind.MULTI]
    return {
        "n": len(rows),
        "scored": len(scored),
        "correct": correct,
        "unparsed": unparsed,
        "infrastructure_failures": len(rows) - len(scored),
        "accuracy": correct / len(scored) if scored else None,
        "accuracy_ci": (low, high) if scored else None,
        "unparsed_rate": unparsed / len(scored) if scored else None,
        "pairwise_accuracy": _mean([_row_score(row, "pairwise") for row in ordering]),
        "weighted_f1": weighted_f1([row.key for row in mcq], [row.parsed_answer for row in mcq])
        if mcq
        else None,
        "set_f1": _mean([_row_score(row, "set_f1") for row in multi]),
    }


def _grouped(
    rows: Sequence[ScoredPrediction], group_of: Callable[[ScoredPrediction], str]
) -> dict[str, dict[str, Any]]:
    groups: dict[str, list[ScoredPrediction]] = defaultdict(list)
    for row in rows:
        groups[group_of(row)].append(row)
    return {name: _figures(groups[name]) for name in sorted(groups)}


def summarize_predictions(rows: Sequence[ScoredPrediction]) -> dict[str, Any]:
    """The figures of a set of predictions, overall and ``by_kind`` / ``by_source``.

    Keys: ``n`` (all rows), ``scored`` (rows less infrastructure failures),
    ``correct``, ``unparsed``, ``infrastructure_failures``, ``accuracy`` and
    ``accuracy_ci`` (Wilson 95%, over scored rows), ``unparsed_rate``,
    ``pairwise_accuracy``, ``weighted_f1``, ``set_f1``, ``by_kind``, ``by_source``.
    """
    figures = _figures(rows)
    figures["by_kind"] = _grouped(rows, lambda row: ItemKind(row.kind).value)
    figures["by_source"] = _grouped(rows, lambda row: row.source)
    return figures

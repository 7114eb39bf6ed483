"""Scores for one prediction and the figures of a set of predictions.

Which figures apply to a kind is part of its specification (``evaluator.kinds``:
``kind_spec(kind).metrics``); the figures come back typed (``evaluator.results``).

Per prediction (``score_answer``, a :class:`~evaluator.results.Score`): exact match
for every kind; for kinds measured by pairwise accuracy (orders) the share of event
pairs in the key's relative order (0 when unparsed); for kinds measured by set F1
(multi-answer items) the F1 between predicted and key letter sets (0 when unparsed).

Per set (``summarize_predictions``, a :class:`~evaluator.results.PredictionSummary`):

- ``accuracy`` with a Wilson 95% interval (``accuracy_ci``). Unparsed answers count
  as wrong. **Infrastructure failures** (timeouts, exhausted retries) are counted in
  ``infrastructure_failures`` and left out of every denominator: they say nothing
  about the model and are retried when the run resumes.
- ``unparsed_rate``: unparsed answers over the scored predictions.
- ``pairwise_accuracy``, ``weighted_f1`` (as CFLUE reports it: scikit-learn's
  weighted F1 with each answer string as a class and "unparsed" as a class of its
  own) and ``set_f1``, each over the predictions whose kind it applies to.
- ``chance``: the accuracy of choosing at random, exact per item and averaged:
  1/n! for an order of n events, 1/k for one of k options (true/false: 1/2),
  1/(2^k - 1) for a non-empty set of k options.
- ``explained``, ``bleu_1``, ``bleu_4``, ``rouge_1``, ``rouge_2``, ``rouge_l``: the
  explanation metrics of CFLUE's protocol (``evaluator.text_metrics``) over the
  predictions that stored them.
- ``extractors``: for each extractor the run recorded (``evaluator.extractors``),
  how many answers it recovered and how many of those are right.
- ``key_positions`` and ``position_bias``: accuracy by the label the key was shown
  under (its first letter for orders; multi-answer items have no one position), and
  the spread between the best and worst position.
- ``truncated``: answers the answer budget cut off before the model ended them.
- ``by_kind`` and ``by_source``: the same figures for each kind and each source.

A figure with nothing to average over is ``None`` (no ordering items -> no pairwise
accuracy), never a made-up 0.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from math import factorial, sqrt
from statistics import mean

from db.answers import pairwise_accuracy
from db.serial_imports import one_thread_importing
from db.vocabulary import FailureKind, ItemKind
from evaluator.kinds import Metric, kind_spec
from evaluator.results import (
    ExtractorFigures,
    Figures,
    PositionFigures,
    PredictionSummary,
    Score,
)
from evaluator.text_metrics import summarize_explanations

UNPARSED_LABEL = "<unparsed>"  # the class of unparsed answers in weighted F1
CONFIDENCE_LEVEL = 0.95


@dataclass(frozen=True)
class ScoredPrediction:
    """One prediction as the metrics see it: plain data, no ORM row."""

    item_id: str
    kind: ItemKind
    source: str
    key: str
    parsed_answer: str | None
    correct: bool | None  # None when the prediction failed for infrastructure reasons
    failure_kind: FailureKind | None = None  # None for a scored answer
    scores: Score | None = None  # as stored; None for a failure
    labels: int = 0  # how many events or options the item has (0: unknown)
    subject: str | None = None  # CFLUE's exam name (名称), when the item has one
    text_length: int = 0  # characters of the item's question and options

    @property
    def is_infrastructure_failure(self) -> bool:
        return self.failure_kind is FailureKind.INFRASTRUCTURE

    @property
    def is_unparsed(self) -> bool:
        return self.failure_kind is FailureKind.UNPARSED or (
            self.parsed_answer is None and not self.is_infrastructure_failure
        )


def chance_accuracy(kind: ItemKind | str, labels: int) -> float | None:
    """The probability that a random answer is right: 1/n! for an order of n events,
    1/k for one of k options, 1/(2^k - 1) for a non-empty set of k options."""
    if labels < 1:
        return None
    kind = ItemKind(kind)
    if kind is ItemKind.ORDERING:
        return 1 / factorial(labels)
    if kind is ItemKind.MULTI:
        return 1 / (2**labels - 1)
    return 1 / labels


def key_position(kind: ItemKind | str, shown_key: str) -> str | None:
    """The label a key was shown under: its letter, an order's first event; None for sets."""
    if ItemKind(kind) is ItemKind.MULTI or not shown_key:
        return None
    return shown_key[0]


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


def score_answer(kind: ItemKind | str, parsed: str | None, key: str) -> Score:
    """Scores of one parsed answer against the key: ``correct``, and the per-item figures
    the kind is measured by (``pairwise`` for orders, ``set_f1`` for multi-answer items)."""
    spec = kind_spec(kind)
    return Score(
        correct=parsed is not None and parsed == key,
        pairwise=pairwise_accuracy(parsed, key)
        if spec.measures(Metric.PAIRWISE_ACCURACY)
        else None,
        set_f1=set_f1(parsed, key) if spec.measures(Metric.SET_F1) else None,
    )


NORMAL_QUANTILE_95 = 1.959963984540054
"""The standard normal quantile of a two-sided interval at ``CONFIDENCE_LEVEL``, exactly as
``scipy.stats.norm.isf((1 - CONFIDENCE_LEVEL) / 2)`` gives it in floating point, which
is the one statsmodels used for the intervals stored so far (tests/test_metrics.py)."""


def wilson_interval(successes: int, n: int) -> tuple[float, float]:
    """Wilson score 95% interval for ``successes`` out of ``n`` (``(0, 1)`` when n is 0).

    The arithmetic of statsmodels' ``proportion_confint(method="wilson")``, step for
    step, so the bounds equal its own to the last bit (tests compare every count of
    every n up to 400 and of three larger n): importing statsmodels (scipy.stats and
    pandas with it) cost every ``vetbench eval`` 1.5 s before its first progress line."""
    if n <= 0:
        return (0.0, 1.0)
    if not 0 <= successes <= n:
        raise ValueError(f"successes must lie between 0 and n={n}, got {successes}")
    share = successes / n
    critical_squared = NORMAL_QUANTILE_95**2
    denominator = 1 + critical_squared / n
    centre = (share + critical_squared / (2 * n)) / denominator
    half_width = NORMAL_QUANTILE_95 * sqrt(
        share * (1.0 - share) / n + critical_squared / (4.0 * n**2)
    )
    half_width /= denominator
    return (min(max(centre - half_width, 0.0), 1.0), min(max(centre + half_width, 0.0), 1.0))


def weighted_f1(keys: Sequence[str], predictions: Sequence[str | None]) -> float:
    """CFLUE's answer F1: weighted over answer-string classes; unparsed is its own class."""
    with one_thread_importing():
        from sklearn.metrics import f1_score

    predicted = [UNPARSED_LABEL if answer is None else answer for answer in predictions]
    return float(f1_score(list(keys), predicted, average="weighted", zero_division=0))


def _mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None


def _item_score(row: ScoredPrediction, read: Callable[[Score], float | None]) -> float:
    """A stored per-item score, recomputed from the answer and key when it was not stored."""
    stored = read(row.scores) if row.scores is not None else None
    if stored is not None:
        return float(stored)
    return float(read(score_answer(row.kind, row.parsed_answer, row.key)) or 0.0)


def _measured(rows: Sequence[ScoredPrediction], metric: Metric) -> list[ScoredPrediction]:
    return [row for row in rows if kind_spec(row.kind).measures(metric)]


def _extractor_figures(rows: Sequence[ScoredPrediction]) -> dict[str, ExtractorFigures]:
    read: dict[str, list[tuple[str | None, str]]] = defaultdict(list)
    for row in rows:
        if row.scores is not None and row.scores.extracted is not None:
            for name, answer in row.scores.extracted.items():
                read[name].append((answer, row.key))
    figures = {}
    for name in sorted(read):
        answers = read[name]
        parsed = sum(1 for answer, _key in answers if answer is not None)
        correct = sum(1 for answer, key in answers if answer is not None and answer == key)
        figures[name] = ExtractorFigures(
            parsed=parsed,
            unparsed=len(answers) - parsed,
            correct=correct,
            accuracy=correct / len(answers),
        )
    return figures


def _shown_key_position(row: ScoredPrediction) -> str | None:
    stored = row.scores.key_position if row.scores is not None else None
    return stored if stored is not None else key_position(row.kind, row.key)


def _position_figures(rows: Sequence[ScoredPrediction]) -> dict[str, PositionFigures]:
    by_label: dict[str, list[bool]] = defaultdict(list)
    for row in rows:
        label = _shown_key_position(row)
        if label is not None:
            by_label[label].append(bool(row.correct))
    return {
        label: PositionFigures(
            n=len(results), correct=sum(results), accuracy=sum(results) / len(results)
        )
        for label, results in sorted(by_label.items())
    }


def _figures(rows: Sequence[ScoredPrediction]) -> Figures:
    scored = [row for row in rows if not row.is_infrastructure_failure]
    correct = sum(1 for row in scored if row.correct)
    unparsed = sum(1 for row in scored if row.is_unparsed)
    ordered = _measured(scored, Metric.PAIRWISE_ACCURACY)
    chosen = _measured(scored, Metric.WEIGHTED_F1)
    letter_sets = _measured(scored, Metric.SET_F1)
    chances = [
        chance for row in scored if (chance := chance_accuracy(row.kind, row.labels)) is not None
    ]
    explained = summarize_explanations(
        [row.scores.explanation for row in scored if row.scores and row.scores.explanation]
    )
    positions = _position_figures(scored)
    position_accuracies = [p.accuracy for p in positions.values() if p.accuracy is not None]
    return Figures(
        n=len(rows),
        scored=len(scored),
        correct=correct,
        unparsed=unparsed,
        infrastructure_failures=len(rows) - len(scored),
        accuracy=correct / len(scored) if scored else None,
        accuracy_ci=wilson_interval(correct, len(scored)) if scored else None,
        unparsed_rate=unparsed / len(scored) if scored else None,
        pairwise_accuracy=_mean([_item_score(row, lambda s: s.pairwise) for row in ordered]),
        weighted_f1=weighted_f1([row.key for row in chosen], [row.parsed_answer for row in chosen])
        if chosen
        else None,
        set_f1=_mean([_item_score(row, lambda s: s.set_f1) for row in letter_sets]),
        chance=mean(chances) if chances else None,
        explained=explained.count if explained else 0,
        bleu_1=explained.bleu_1 if explained else None,
        bleu_4=explained.bleu_4 if explained else None,
        rouge_1=explained.rouge_1 if explained else None,
        rouge_2=explained.rouge_2 if explained else None,
        rouge_l=explained.rouge_l if explained else None,
        extractors=_extractor_figures(scored),
        key_positions=positions,
        position_bias=max(position_accuracies) - min(position_accuracies)
        if len(position_accuracies) > 1
        else None,
        truncated=sum(1 for row in scored if row.scores is not None and row.scores.truncated),
    )


def _grouped(
    rows: Sequence[ScoredPrediction], group_of: Callable[[ScoredPrediction], str]
) -> dict[str, Figures]:
    groups: dict[str, list[ScoredPrediction]] = defaultdict(list)
    for row in rows:
        groups[group_of(row)].append(row)
    return {name: _figures(groups[name]) for name in sorted(groups)}


def figures_of(rows: Sequence[ScoredPrediction]) -> Figures:
    """The figures of any set of predictions (a subject's, a length bucket's ...)."""
    return _figures(rows)


def summarize_predictions(rows: Sequence[ScoredPrediction]) -> PredictionSummary:
    """The figures of a set of predictions, overall and ``by_kind`` / ``by_source``.

    ``n`` (all rows), ``scored`` (rows less infrastructure failures), ``correct``,
    ``unparsed``, ``infrastructure_failures``, ``accuracy`` and ``accuracy_ci``
    (Wilson 95%, over scored rows), ``unparsed_rate``, ``pairwise_accuracy``,
    ``weighted_f1``, ``set_f1``, ``by_kind``, ``by_source``.
    """
    overall = _figures(rows)
    return PredictionSummary(
        **vars(overall),
        by_kind=_grouped(rows, lambda row: ItemKind(row.kind).value),
        by_source=_grouped(rows, lambda row: row.source),
    )

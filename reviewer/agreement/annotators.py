"""Per-annotator figures: how much each person agrees with the others, the key and the leads."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from db.vocabulary import ItemStatus
from reviewer.agreement.bootstrap import Figure
from reviewer.agreement.data import KEEP, JudgmentData, within_unit_pairs

FloatArray = NDArray[np.float64]


@dataclass(frozen=True)
class AnnotatorStats:
    name: str
    judgments: int
    verdict_agreement: Figure  # share of pairs with another annotator that agree on the verdict
    answer_agreement: Figure  # share of pairs with another annotator with the same blind answer
    key_agreement: Figure  # share of own blind answers equal to the key
    decision_agreement: Figure  # share of decided items where keep/drop matches the decision
    median_seconds: float | None  # over judgments with a recorded time
    verdicts: dict[str, int]
    keep_rate: Figure = Figure(value=None, n=0)  # share of own judgments with the verdict keep
    timed: int = 0  # judgments with a recorded time: the ones the median is of


def _shares(hits: NDArray[np.number], totals: NDArray[np.number], reason: str) -> list[Figure]:
    return [
        Figure.of(float(hit / total), int(total)) if total else Figure.undefined(reason)
        for hit, total in zip(hits.tolist(), totals.tolist(), strict=True)
    ]


def annotator_stats(data: JudgmentData) -> list[AnnotatorStats]:
    """One row per annotator with at least one active judgment, in name order."""
    people = data.n_annotators
    if data.n_rows == 0:
        return []
    annotator = data.row_annotator

    first, second = within_unit_pairs(data.row_unit)
    in_pairs = np.concatenate([annotator[first], annotator[second]])
    pair_counts = np.bincount(in_pairs, minlength=people).astype(np.float64)
    same_verdict = np.tile(data.row_verdict[first] == data.row_verdict[second], 2)
    same_answer = np.tile(data.row_answer[first] == data.row_answer[second], 2)
    verdict_hits = np.bincount(in_pairs, weights=same_verdict, minlength=people)
    answer_hits = np.bincount(in_pairs, weights=same_answer, minlength=people)
    alone = "shared no item with another annotator"

    judgments = np.bincount(annotator, minlength=people).astype(np.float64)
    key_hits = np.bincount(annotator, weights=data.row_answer == data.row_key(), minlength=people)

    decision = data.unit_decision[data.row_unit]
    decided = (decision == ItemStatus.APPROVED.value) | (decision == ItemStatus.REJECTED.value)
    kept = data.row_verdict == KEEP
    agrees = kept == (decision == ItemStatus.APPROVED.value)
    decided_counts = np.bincount(annotator, weights=decided, minlength=people)
    decision_hits = np.bincount(annotator, weights=decided & agrees, minlength=people)

    verdict_table = np.bincount(
        annotator * len(data.verdict_names) + data.row_verdict,
        minlength=people * len(data.verdict_names),
    ).reshape(people, len(data.verdict_names))

    verdict_figures = _shares(verdict_hits, pair_counts, alone)
    answer_figures = _shares(answer_hits, pair_counts, alone)
    key_figures = _shares(key_hits, judgments, "no judgments")
    decision_figures = _shares(decision_hits, decided_counts, "no judged item has a decision yet")

    order = np.argsort(annotator, kind="stable")
    timed_by_person = np.split(data.row_seconds[order], np.cumsum(judgments.astype(int))[:-1])
    results = []
    for index, name in enumerate(data.annotator_names):
        if not judgments[index]:
            continue
        timed = timed_by_person[index]
        timed = timed[timed > 0]  # 0 means no time was recorded (e.g. a CLI judgment)
        results.append(
            AnnotatorStats(
                name=name,
                judgments=int(judgments[index]),
                verdict_agreement=verdict_figures[index],
                answer_agreement=answer_figures[index],
                key_agreement=key_figures[index],
                decision_agreement=decision_figures[index],
                median_seconds=float(np.median(timed)) if timed.size else None,
                verdicts={
                    verdict: int(count)
                    for verdict, count in zip(
                        data.verdict_names, verdict_table[index].tolist(), strict=True
                    )
                    if count
                },
                keep_rate=Figure.of(
                    float(verdict_table[index, KEEP] / judgments[index]), int(judgments[index])
                ),
                timed=int(timed.size),
            )
        )
    return sorted(results, key=lambda stats: stats.name)

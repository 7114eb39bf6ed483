"""Turning a backend's outputs into predictions: read the answer, map it back, score it.

An answer is read by each of the run's extractors (the first decides, the others are
reported) in the labels the model was shown, mapped back to the item's own labels
(options may have been permuted), and scored against the key; CFLUE's protocol also
scores the explanation.  Score mode keeps the best-ranked candidate and the best few
log-likelihoods.  Each result is one :class:`~evaluator.results.StoredPrediction`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace

from db.items import ItemSnapshot
from db.vocabulary import FailureKind
from evaluator.backends.base import GenerationResult, ScoringResult
from evaluator.extractors import read_answers
from evaluator.metrics import key_position, score_answer
from evaluator.prompts import answer_text
from evaluator.protocols import ProtocolSpec
from evaluator.results import CandidateRanking, StoredPrediction
from evaluator.run_plan import RunPlan, Shown
from evaluator.text_metrics import score_explanation

__all__ = ["TOP_CANDIDATES_STORED", "generated_prediction", "read_output", "scored_prediction"]

TOP_CANDIDATES_STORED = 10  # score mode keeps the best candidates' log-likelihoods


def generated_prediction(
    plan: RunPlan, item: ItemSnapshot, result: GenerationResult
) -> StoredPrediction:
    """A generated output read, mapped back to the item's labels and scored."""
    if result.error is not None:
        return StoredPrediction.failed(
            item.id,
            result.error,
            prompt=result.prompt_text,
            latency_s=result.latency_s,
            retry_cannot_fix=result.retry_cannot_fix,
        )
    return read_output(
        plan.shown[item.id], item, result, extractors=plan.extractors, protocol=plan.protocol
    )


def read_output(
    shown: Shown,
    item: ItemSnapshot,
    result: GenerationResult,
    *,
    extractors: Sequence[str],
    protocol: ProtocolSpec,
) -> StoredPrediction:
    """What a run reads from a model's output: the answer by each extractor (the first
    decides), mapped back to the item's labels, scored; the explanation too where the
    protocol scores it.  The run loop and ``runs rescore`` read outputs with this."""
    read = read_answers(extractors, item.kind, result.output, shown.item.labels)
    extracted = {name: shown.to_item_labels(answer) for name, answer in read.items()}
    parsed = extracted.get(extractors[0])
    explanation = None
    if protocol.scores_explanations and (item.explanation or "").strip():
        reference = shown.explanation(item.explanation or "")
        explanation = score_explanation(result.output, reference)
    score = replace(
        score_answer(item.kind, parsed, item.key),
        extracted=extracted,
        explanation=explanation,
        key_position=key_position(item.kind, shown.item.key),
        option_order=shown.option_order,
        truncated=result.truncated,
    )
    return StoredPrediction(
        item_id=item.id,
        raw_output=result.output,
        parsed_answer=parsed,
        correct=score.correct,
        scores=score,
        failure_kind=FailureKind.UNPARSED if parsed is None else None,
        error=None,
        prompt=result.prompt_text,
        latency_s=result.latency_s,
    )


def scored_prediction(
    shown: Shown, item: ItemSnapshot, result: ScoringResult, candidates: Sequence[str]
) -> StoredPrediction:
    """Score mode: the best-ranked candidate is the answer."""
    failure = result.error
    if failure is None and len(result.log_likelihoods) != len(candidates):
        failure = f"backend returned {len(result.log_likelihoods)} scores for {len(candidates)} candidates"
    if failure is None and not all(map(math.isfinite, result.log_likelihoods)):
        # any backend: a NaN (a half-precision overflow, a server's) ranks nothing
        failure = "backend returned scores that are not numbers (NaN or infinite)"
    if failure is not None:
        return StoredPrediction.failed(
            item.id,
            failure,
            prompt=result.prompt_text,
            latency_s=result.latency_s,
            retry_cannot_fix=result.error is not None and result.retry_cannot_fix,
        )
    ranked = sorted(
        (
            (shown.to_item_labels(answer) or answer, ll)
            for answer, ll in zip(candidates, result.log_likelihoods, strict=True)
        ),
        key=lambda p: -p[1],
    )
    best = ranked[0][0]
    key_rank = next(
        (rank for rank, (answer, _) in enumerate(ranked, 1) if answer == item.key), None
    )
    score = replace(
        score_answer(item.kind, best, item.key),
        ranking=CandidateRanking(
            candidates=len(candidates),
            log_likelihoods={answer: round(ll, 4) for answer, ll in ranked[:TOP_CANDIDATES_STORED]},
            key_rank=key_rank,
        ),
        key_position=key_position(item.kind, shown.item.key),
        option_order=shown.option_order,
    )
    return StoredPrediction(
        item_id=item.id,
        raw_output=answer_text(item.kind, best),
        parsed_answer=best,
        correct=score.correct,
        scores=score,
        failure_kind=None,
        error=None,
        prompt=result.prompt_text,
        latency_s=result.latency_s,
    )

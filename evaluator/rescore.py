"""``vetbench runs rescore RUN``: a finished run's figures again, from its stored raw outputs,
with today's readers and metrics, and what changed.  The model is never called, and
nothing is written.

Each generated output is read again exactly as the run loop reads it
(``evaluator.run_predict.read_output``: the run's extractors, its option order, its
protocol's explanation metrics) from the revision the run asked; a score-mode answer
(the best-ranked candidate) is scored again against its key.  Infrastructure failures
have no output and stay as they are.  The figures of the stored and of the re-read
predictions are compared key by key, and so is each prediction.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, replace

from sqlmodel import col, select

from db.engine import Database
from db.errors import VetbenchError
from db.items import ItemSnapshot
from db.json_types import FieldsAsJson, JsonObject, JsonValue
from db.models import Prediction
from db.vocabulary import EvalMode, FailureKind, RunStatus
from evaluator.backends.base import GenerationResult
from evaluator.metrics import ScoredPrediction, score_answer, summarize_predictions
from evaluator.protocols import protocol_spec
from evaluator.results import PredictionSummary, Score
from evaluator.run_params import RunParams
from evaluator.run_plan import recorded_items, shown_item
from evaluator.run_predict import read_output
from evaluator.runs import load_run, run_outcomes

__all__ = ["ItemChange", "RescoreError", "Rescored", "rescore_run"]


class RescoreError(VetbenchError, ValueError):
    """A run that cannot be rescored (not finished); the message says why."""


@dataclass(frozen=True)
class ItemChange(FieldsAsJson):
    """One prediction whose reading or score changed."""

    item_id: str
    old_answer: str | None
    new_answer: str | None
    old_correct: bool | None
    new_correct: bool | None
    changed: tuple[str, ...]  # what changed: answer, correct, extracted, explanation, ...


@dataclass(frozen=True)
class Rescored:
    """A run's figures as stored and as read again today, and every difference."""

    run_id: int
    before: PredictionSummary
    after: PredictionSummary
    items: tuple[ItemChange, ...]

    @property
    def figure_changes(self) -> list[tuple[str, JsonValue, JsonValue]]:
        """``(figure, stored, now)`` for every figure that differs (breakdowns as
        ``by_kind.ordering.accuracy``)."""
        old, new = dict(_flatten(self.before.to_json())), dict(_flatten(self.after.to_json()))
        return [
            (name, old.get(name), new.get(name))
            for name in dict.fromkeys([*old, *new])
            if old.get(name) != new.get(name)
        ]

    def to_json(self) -> JsonObject:
        return {
            "run_id": self.run_id,
            "changed": bool(self.items or self.figure_changes),
            "figures": [
                {"figure": name, "stored": old, "now": new}
                for name, old, new in self.figure_changes
            ],
            "predictions": [item.to_json() for item in self.items],
            "before": self.before.to_json(),
            "after": self.after.to_json(),
        }


def _flatten(data: JsonValue, prefix: str = "") -> Iterator[tuple[str, JsonValue]]:
    if isinstance(data, dict):
        for key, value in data.items():
            yield from _flatten(value, f"{prefix}{key}.")
    else:
        yield prefix.rstrip("."), data


def rescore_run(db: Database, run_id: int) -> Rescored:
    """Read every stored output of finished run ``run_id`` again (see the module docstring)."""
    run = load_run(db, run_id)
    if run.status != RunStatus.FINISHED:
        raise RescoreError(
            f"run {run_id} is {run.status}; only a finished run is rescored "
            f"(`vetbench eval --resume {run_id}` finishes it)"
        )
    params = RunParams.from_json(run.params)
    with db.session() as session:
        stored = session.exec(
            select(Prediction).where(Prediction.run_id == run_id).order_by(col(Prediction.id))
        ).all()
        revisions = {p.item_id: p.revision_number for p in stored}  # those answered
        asked = recorded_items(session, run.release_name, revisions)
    outcomes = {outcome.item_id: outcome for outcome in run_outcomes(db, run_id)}
    before, after, changes = [], [], []
    for prediction in stored:
        old = outcomes[prediction.item_id]
        item = asked[prediction.item_id]
        new = _read_again(prediction, item, old, params, run.mode)
        before.append(old)
        after.append(new)
        changed = tuple(
            name
            for name, was, now in (
                ("answer", old.parsed_answer, new.parsed_answer),
                ("correct", old.correct, new.correct),
                ("failure", old.failure_kind, new.failure_kind),
                ("scores", _json(old.scores), _json(new.scores)),
            )
            if was != now
        )
        if changed:
            changes.append(
                ItemChange(
                    prediction.item_id,
                    old.parsed_answer,
                    new.parsed_answer,
                    old.correct,
                    new.correct,
                    changed,
                )
            )
    return Rescored(
        run_id,
        summarize_predictions(before),
        summarize_predictions(after),
        tuple(changes),
    )


def _json(score: Score | None) -> JsonValue:
    return None if score is None else score.to_json()


def _read_again(
    prediction: Prediction,
    item: ItemSnapshot,
    old: ScoredPrediction,
    params: RunParams,
    mode: str,
) -> ScoredPrediction:
    if prediction.failure_kind == FailureKind.INFRASTRUCTURE:
        return old  # no output to read: resuming the run retries it
    if mode == EvalMode.SCORE:
        # The answer is the best-ranked candidate; its score follows today's metrics.
        fresh = score_answer(item.kind, prediction.parsed_answer, item.key)
        kept = old.scores
        score = (
            fresh
            if kept is None
            else replace(kept, correct=fresh.correct, pairwise=fresh.pairwise, set_f1=fresh.set_f1)
        )
        return replace(old, correct=score.correct, scores=score)
    shown = shown_item(item, permute=params.permute_options, seed=params.seed)
    # Whether the budget cut the answer off is the model's doing: kept as stored.
    truncated = old.scores is not None and old.scores.truncated
    result = GenerationResult(
        item.id, prediction.prompt, prediction.raw_output, 0.0, truncated=truncated
    )
    read = read_output(
        shown, item, result, extractors=params.extractors, protocol=protocol_spec(params.protocol)
    )
    return replace(
        old,
        parsed_answer=read.parsed_answer,
        correct=read.correct,
        failure_kind=read.failure_kind,
        scores=read.scores,
    )

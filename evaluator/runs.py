"""Figures about evaluation runs, read from the database (so they follow runs anywhere).

``list_runs`` for the leaderboard, ``run_figures`` for one run's accuracy with its
interval, breakdowns and progress, ``latest_predictions`` for a live feed,
``compare_runs`` for two runs item by item, and ``suspect_keys`` for the lead:
items every model gets wrong with the same answer, which often means the key is wrong.
Every one returns the typed results of :mod:`evaluator.results`.
"""

from __future__ import annotations

import os
import socket
from dataclasses import dataclass
from datetime import datetime
from itertools import accumulate

from sqlalchemy import ColumnElement, and_, case, func
from sqlalchemy import select as sa_select
from sqlmodel import col, select
from sqlmodel.sql.expression import Select

from db.engine import Database
from db.errors import VetbenchError
from db.items import id_order
from db.model_answers import model_answers
from db.models import EvalRun, Item, ItemRevision, Prediction
from db.rows import from_row
from db.serial_imports import one_thread_importing
from db.vocabulary import EvalMode, FailureKind, ItemKind, RunStatus
from db.words import counted
from evaluator.item_filter import filter_differences
from evaluator.item_sets import ItemSet
from evaluator.metrics import ScoredPrediction, summarize_predictions, wilson_interval
from evaluator.results import (
    AnswerDifference,
    ChangedItem,
    PredictionSummary,
    PredictionView,
    RunComparison,
    RunFigures,
    RunIdentity,
    RunOverview,
    RunProgress,
    RunRecord,
    Score,
    SuspectKey,
)
from evaluator.run_params import RunParams

__all__ = [
    "NoSharedItems",
    "RunNotFound",
    "all_predictions",
    "compare_runs",
    "get_prediction",
    "latest_predictions",
    "list_runs",
    "load_run",
    "process_alive",
    "run_figures",
    "run_info",
    "run_outcomes",
    "run_records",
    "suspect_keys",
]


class NoSharedItems(VetbenchError, ValueError):
    """Two runs compared that answered no item in common."""


class RunNotFound(VetbenchError, LookupError):
    """No run with that id."""


def load_run(db: Database, run_id: int) -> EvalRun:
    """The run's row; :class:`RunNotFound` when there is none."""
    with db.session() as session:
        run = session.get(EvalRun, run_id)
        if run is None:
            newest = session.scalar(sa_select(func.max(col(EvalRun.id))))
            there = "no runs yet" if newest is None else f"the newest is run {newest}"
            raise RunNotFound(f"there is no run {run_id} ({there})")
    return run


def run_info(run: EvalRun) -> RunRecord:
    """A run's own record as plain data."""
    return RunRecord(
        **vars(_identity(run)),
        host=run.host,
        error=run.error,
        filters=dict(run.filters),
        params=RunParams.from_json(run.params),
        total=len(run.item_ids),
        started_at=run.started_at,
        finished_at=run.finished_at,
        item_set=ItemSet(run.item_set_hash, run.release_name),
    )


def _identity(run: EvalRun) -> RunIdentity:
    assert run.id is not None  # read from the database
    return RunIdentity(
        id=run.id,
        model=run.model,
        backend=run.backend,
        mode=EvalMode(run.mode),
        shots=run.shots,
        status=RunStatus(run.status),
        stale=_is_stale(run),
    )


def _is_stale(run: EvalRun) -> bool:
    """A run marked running whose process on this host is gone (it was killed)."""
    if run.status != RunStatus.RUNNING or run.host != socket.gethostname()[:255]:
        return False
    session = RunParams.from_json(run.params).session
    return session is not None and session.pid is not None and not process_alive(session.pid)


def process_alive(pid: int) -> bool:
    """Whether process ``pid`` runs on this host (one we may not signal runs too)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _views_query() -> Select[Prediction, str, str, str]:
    return (
        select(Prediction, ItemRevision.kind, Item.source, ItemRevision.key)
        .join(Item, col(Item.id) == col(Prediction.item_id))
        .join(ItemRevision, _predicted_revision())
    )


def _predicted_revision() -> ColumnElement[bool]:
    """The join condition from a prediction to the revision it answered."""
    return and_(
        col(ItemRevision.item_id) == col(Prediction.item_id),
        col(ItemRevision.number) == col(Prediction.revision_number),
    )


def _failure(value: str | None) -> FailureKind | None:
    return None if value is None else FailureKind(value)


def _view(row: tuple[Prediction, str, str, str]) -> PredictionView:
    prediction, kind, source, key = row
    return from_row(
        PredictionView,
        prediction,
        kind=ItemKind(kind),
        source=source,
        revision=prediction.revision_number,
        key=key,
        failure_kind=_failure(prediction.failure_kind),
        scores=Score.from_json(prediction.scores),
    )


def _predictions(db: Database, run_id: int) -> list[PredictionView]:
    with db.session() as session:
        rows = session.exec(
            _views_query().where(Prediction.run_id == run_id).order_by(col(Prediction.id))
        ).all()
    return [_view(row) for row in rows]


@dataclass(frozen=True)
class _Outcome:
    """What figures need of a prediction: no prompt, no raw output (a run may have 40k)."""

    scored: ScoredPrediction
    created_at: datetime


def _outcomes(db: Database, run_id: int) -> list[_Outcome]:
    with db.session() as session:
        rows = session.execute(  # sqlalchemy's select: more columns than sqlmodel's types take
            sa_select(
                col(Prediction.item_id),
                col(ItemRevision.kind),  # the kind of the revision it answered
                col(Item.source),
                col(ItemRevision.key),
                col(Prediction.parsed_answer),
                col(Prediction.correct),
                col(Prediction.failure_kind),
                col(Prediction.scores),
                col(Prediction.created_at),
                func.length(col(ItemRevision.prompt)).label("question_length"),  # not its text
                col(ItemRevision.choices),
                col(Item.meta),
            )
            .join(Item, col(Item.id) == col(Prediction.item_id))
            .join(ItemRevision, _predicted_revision())
            .where(col(Prediction.run_id) == run_id)
            .order_by(col(Prediction.id))
        ).all()
    return [
        _Outcome(
            ScoredPrediction(
                item_id=row.item_id,
                kind=ItemKind(row.kind),
                source=row.source,
                key=row.key,
                parsed_answer=row.parsed_answer,
                correct=row.correct,
                failure_kind=_failure(row.failure_kind),
                scores=Score.from_json(row.scores),
                labels=len(row.choices or {}),
                subject=_subject(row.meta),
                text_length=int(row.question_length or 0)
                + sum(len(str(c)) for c in (row.choices or {}).values()),
            ),
            row.created_at,
        )
        for row in rows
    ]


def _subject(meta: object) -> str | None:
    """CFLUE's exam name (名称), kept in an imported item's meta."""
    from db.formats.cflue import EXAM_NAME

    value = meta.get(EXAM_NAME) if isinstance(meta, dict) else None
    return value if isinstance(value, str) and value.strip() else None


def run_outcomes(db: Database, run_id: int) -> list[ScoredPrediction]:
    """A run's predictions as the metrics read them (no prompts, no raw outputs)."""
    load_run(db, run_id)
    return [outcome.scored for outcome in _outcomes(db, run_id)]


def run_records(db: Database) -> list[RunRecord]:
    """Every run's own record, oldest first."""
    with db.session() as session:
        runs = session.exec(select(EvalRun).order_by(col(EvalRun.id))).all()
    return [run_info(run) for run in runs]


def list_runs(db: Database) -> list[RunOverview]:
    """Every run, newest first, with its progress and accuracy (Wilson 95% interval)."""
    with db.session() as session:
        runs = session.exec(select(EvalRun).order_by(col(EvalRun.id).desc())).all()
        failed = col(Prediction.failure_kind) == FailureKind.INFRASTRUCTURE
        # CASE rather than summing booleans, which PostgreSQL refuses.
        tallies = {
            run_id: (int(rows or 0) - int(failures or 0), int(correct or 0), int(failures or 0))
            for run_id, rows, correct, failures in session.exec(
                select(
                    Prediction.run_id,
                    func.count(),
                    func.sum(case((col(Prediction.correct).is_(True), 1), else_=0)),
                    func.sum(case((failed, 1), else_=0)),
                ).group_by(col(Prediction.run_id))
            ).all()
        }
    listed = []
    for run in runs:
        done, correct, failures = tallies.get(run.id or 0, (0, 0, 0))
        listed.append(
            RunOverview(
                **vars(_identity(run)),
                done=done,
                total=len(run.item_ids),
                infrastructure_failures=failures,
                correct=correct,
                accuracy=correct / done if done else None,
                accuracy_ci=wilson_interval(correct, done) if done else None,
                started_at=run.started_at,
                finished_at=run.finished_at,
                shot_counts=RunParams.stored_shot_counts(run.params, run.shots),
                protocol=RunParams.stored_protocol(run.params),
                error=run.error,
                release=run.release_name,
            )
        )
    return listed


def _session_rate(run: RunRecord, answered: int, last: datetime | None) -> float | None:
    """Items per second of the latest session: what it added over the time it has run."""
    session = run.params.session
    if session is None or session.started_at is None:
        return None
    start = datetime.fromisoformat(session.started_at)
    end = datetime.now(start.tzinfo) if run.is_running else last
    added = answered - session.done_before
    if end is None or added <= 0:
        return None
    seconds = (end - start).total_seconds()
    return added / seconds if seconds > 0 else None


def _progress(run: RunRecord, outcomes: list[_Outcome], summary: PredictionSummary) -> RunProgress:
    answered = [o for o in outcomes if not o.scored.is_infrastructure_failure]
    last = max((o.created_at for o in outcomes), default=None)
    rate = _session_rate(run, len(answered), last)
    remaining = run.total - len(answered)
    return RunProgress(
        done=len(answered),
        total=run.total,
        items_per_second=rate,
        eta_s=remaining / rate if run.is_running and rate else None,
        elapsed_s=(last - run.started_at).total_seconds() if last else None,
        correct=summary.correct,
        unparsed=summary.unparsed,
        infrastructure_failures=summary.infrastructure_failures,
    )


def run_figures(db: Database, run_id: int) -> RunFigures:
    """One run's figures: ``run`` (its record), ``progress``, and the ``summary`` of
    :func:`evaluator.metrics.summarize_predictions` over its stored predictions."""
    run = run_info(load_run(db, run_id))  # params parsed, staleness asked, once
    outcomes = _outcomes(db, run_id)
    summary = summarize_predictions([outcome.scored for outcome in outcomes])
    return RunFigures(
        run=run,
        progress=_progress(run, outcomes, summary),
        summary=summary,
        accuracy_curve=_accuracy_curve(outcomes),
    )


def _accuracy_curve(outcomes: list[_Outcome]) -> tuple[float, ...]:
    """Accuracy after each scored prediction (infrastructure failures are not scored)."""
    right = (
        int(bool(outcome.scored.correct))
        for outcome in outcomes
        if not outcome.scored.is_infrastructure_failure
    )
    return tuple(hits / count for count, hits in enumerate(accumulate(right), start=1))


def latest_predictions(db: Database, run_id: int, n: int = 20) -> list[PredictionView]:
    """The ``n`` most recently stored predictions of a run, newest first."""
    load_run(db, run_id)
    with db.session() as session:
        rows = session.exec(
            _views_query()
            .where(Prediction.run_id == run_id)
            .order_by(col(Prediction.created_at).desc(), col(Prediction.id).desc())
            .limit(n)
        ).all()
    return [_view(row) for row in rows]


def all_predictions(db: Database, run_id: int) -> list[PredictionView]:
    """Every stored prediction of a run, in the order of the run's item set."""
    run = load_run(db, run_id)
    position = {item_id: index for index, item_id in enumerate(run.item_ids)}
    return sorted(_predictions(db, run_id), key=lambda v: position.get(v.item_id, len(position)))


def get_prediction(db: Database, run_id: int, item_id: str) -> PredictionView | None:
    """One item's prediction in a run, or None when it has none (yet)."""
    load_run(db, run_id)
    with db.session() as session:
        row = session.exec(
            _views_query().where(Prediction.run_id == run_id, Prediction.item_id == item_id)
        ).first()
    return None if row is None else _view(row)


def compare_runs(db: Database, run_a: int, run_b: int) -> RunComparison:
    """Two runs item by item, over the items both answered as the same question.

    Which items both got right, both got wrong, or only one got right; the items
    whose parsed answers differ, with both answers; and an exact McNemar test of the
    two accuracies.  A paired comparison pairs one question: a shared item the runs
    evaluated at revisions whose key or text differ is left out of all of these and
    listed in ``changed_items`` with each run's revision, key and answer.
    """
    first_run, second_run = load_run(db, run_a), load_run(db, run_b)
    first = {o.item_id: o for o in (x.scored for x in _outcomes(db, run_a)) if _answered(o)}
    second = {o.item_id: o for o in (x.scored for x in _outcomes(db, run_b)) if _answered(o)}
    shared = [item_id for item_id in first if item_id in second]
    if not shared:  # a table of zeros would read as a comparison
        raise NoSharedItems(
            f"runs {run_a} and {run_b} share no answered items: nothing to compare "
            f"(A answered {counted(len(first), 'item')}, B {counted(len(second), 'item')})"
        )
    revisions, other_prompts = _shared_revisions(db, run_a, run_b, shared)
    changes = _changes(db, revisions)
    both_right: list[str] = []
    both_wrong: list[str] = []
    only_a: list[str] = []
    only_b: list[str] = []
    different = []
    changed = []
    same = 0  # both gave one answer; two unparsed outputs are not the same answer
    for item_id in shared:
        a, b = first[item_id], second[item_id]
        if item_id in changes:
            changed.append(_changed_item(a, b, changes[item_id], revisions[item_id]))
            continue
        if a.correct and b.correct:
            both_right.append(item_id)
        elif a.correct:
            only_a.append(item_id)
        elif b.correct:
            only_b.append(item_id)
        else:
            both_wrong.append(item_id)
        if a.parsed_answer != b.parsed_answer:
            different.append(AnswerDifference(item_id, a.key, a.parsed_answer, b.parsed_answer))
        elif a.parsed_answer is not None:
            same += 1
    paired = len(shared) - len(changed)
    discordant = len(only_a) + len(only_b)
    p_value = None
    if discordant:
        with one_thread_importing():
            from scipy.stats import binomtest

        p_value = float(binomtest(len(only_a), discordant, 0.5).pvalue)
    return RunComparison(
        run_a=run_a,
        run_b=run_b,
        shared_items=len(shared),
        only_in_a=len([i for i in first if i not in second]),
        only_in_b=len([i for i in second if i not in first]),
        both_right=tuple(both_right),
        both_wrong=tuple(both_wrong),
        only_a=tuple(only_a),
        only_b=tuple(only_b),
        different_answers=tuple(different),
        agreement=same / paired if paired else None,
        mcnemar_p=p_value,
        item_set_a=run_info(first_run).item_set,
        item_set_b=run_info(second_run).item_set,
        filter_differences=filter_differences(first_run.filters, second_run.filters),
        other_revisions=tuple(item_id for item_id in shared if item_id in revisions),
        changed_items=tuple(changed),
        other_prompts=tuple(i for i in shared if i in other_prompts and i not in changes),
    )


def _changed_item(
    a: ScoredPrediction, b: ScoredPrediction, changed: tuple[str, ...], revisions: tuple[int, int]
) -> ChangedItem:
    """A shared item asked as another question in B, with each run's own key and answer."""
    return ChangedItem(
        item_id=a.item_id,
        changed=changed,
        revision_a=revisions[0],
        key_a=a.key,
        a=a.parsed_answer,
        correct_a=a.correct,
        revision_b=revisions[1],
        key_b=b.key,
        b=b.parsed_answer,
        correct_b=b.correct,
    )


def _shared_revisions(
    db: Database, run_a: int, run_b: int, shared: list[str]
) -> tuple[dict[str, tuple[int, int]], set[str]]:
    """The shared items the two runs saw at different revisions (edited in between): A's
    revision and B's; and those whose prompts differ (their stored hashes)."""
    with db.session() as session:
        rows = session.exec(
            select(
                Prediction.run_id,
                Prediction.item_id,
                Prediction.revision_number,
                Prediction.prompt_hash,
            ).where(col(Prediction.run_id).in_([run_a, run_b]))
        ).all()
    seen = {(run, item_id): (number, digest) for run, item_id, number, digest in rows}
    pairs = {item_id: (seen[(run_a, item_id)], seen[(run_b, item_id)]) for item_id in shared}
    revisions = {item_id: (a[0], b[0]) for item_id, (a, b) in pairs.items() if a[0] != b[0]}
    return revisions, {item_id for item_id, (a, b) in pairs.items() if a[1] != b[1]}


def _changes(db: Database, revisions: dict[str, tuple[int, int]]) -> dict[str, tuple[str, ...]]:
    """What differs between the two revisions of each item that has any (kind, question,
    options, key); an edit of the explanation or the metadata alone asks the same question,
    so such an item stays paired (and is absent here)."""
    if not revisions:
        return {}
    wanted = {(item_id, number) for item_id, pair in revisions.items() for number in pair}
    with db.session() as session:
        rows = session.exec(
            select(ItemRevision).where(
                col(ItemRevision.item_id).in_(sorted(revisions)),
                col(ItemRevision.number).in_(sorted({number for _, number in wanted})),
            )
        ).all()
    text = {
        (row.item_id, row.number): (row.kind, row.prompt, dict(row.choices), row.key)
        for row in rows
    }
    changes = {}
    for item_id, (rev_a, rev_b) in revisions.items():
        a, b = text[(item_id, rev_a)], text[(item_id, rev_b)]
        differs = tuple(name for name, x, y in zip(_PARTS, a, b, strict=True) if x != y)
        if differs:
            changes[item_id] = differs
    return changes


_PARTS = ("kind", "question", "options", "key")
"""What of a revision makes the question: its kind, prompt, choices and key."""


def _answered(outcome: ScoredPrediction) -> bool:
    return not outcome.is_infrastructure_failure


def suspect_keys(db: Database, *, min_models: int = 2) -> list[SuspectKey]:
    """Items that every model which answered them gets wrong with one and the same answer.

    Only predictions on the item's current revision count, each model's latest run
    speaks for it, and at least ``min_models`` different models must agree (the
    reading is ``db.model_answers``, which triage shares).
    """
    with db.session() as session:
        items = model_answers(session)
    every_model = {answer.model for item in items for answer in item.answers}
    suspects = []
    for item in items:
        if len(item.answers) < min_models:
            continue
        given = {answer.answer for answer in item.answers}
        if len(given) != 1 or any(answer.correct for answer in item.answers):
            continue
        (answer,) = given
        if answer is None or answer == item.key:
            continue
        suspects.append(
            SuspectKey(
                item_id=item.item_id,
                kind=item.kind,
                key=item.key,
                answer=answer,
                models=tuple(sorted(a.model for a in item.answers)),
                runs=tuple(sorted(a.run_id for a in item.answers)),
                other_models=len(every_model) - len(item.answers),
            )
        )
    return sorted(suspects, key=lambda suspect: id_order(suspect.item_id))

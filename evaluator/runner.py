"""The run loop: run a backend over a run's pending items, store each prediction at once.

A run is made in steps, one module each:

- create (``evaluator.run_create``): freeze the evaluated set and the run's settings
  (:class:`~evaluator.run_params.RunParams`); nothing is evaluated yet;
- plan (``evaluator.run_plan``): replay the recorded settings into prompts and requests;
- predict (``evaluator.run_predict``): outputs into scored predictions;
- execute (here): ``execute_run`` evaluates the items that have no answer yet and
  writes every prediction in its own transaction the moment it is finished, so:

  - readers of the database (the TUI, ``vetbench runs show``, another machine)
    follow a run live;
  - a run stopped by Ctrl-C, a crash or ``should_stop`` keeps what it finished, and
    calling ``execute_run`` again resumes it without recomputing anything;
  - predictions that failed for infrastructure reasons (timeouts, exhausted
    retries, out of memory) are retried on resume.

Series of runs (protocols, shots, repeats) are planned by ``evaluator.session``.
This module also gives the steps' public names, so callers import one place.
"""

from __future__ import annotations

import logging
import os
import socket
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

from sqlmodel import select

from db.engine import Database
from db.json_types import JsonValue
from db.models import EvalRun, Prediction, utcnow
from db.vocabulary import EvalMode, FailureKind, RunStatus
from db.words import agreeing, all_of, counted
from evaluator.backends.base import Backend
from evaluator.backends.settings import RECORDED_API_PARAMS, RESPONSE_CACHE_PARAM
from evaluator.prompts import prompt_hash
from evaluator.results import RunProgress, StoredPrediction
from evaluator.run_create import RunSelection, RunSetupError, create_run, select_run_items
from evaluator.run_params import Repeat, RunParams, RunSession
from evaluator.run_plan import (
    RunPlan,
    generation_requests,
    load_run_row,
    pending_item_ids,
    plan_run,
    scoring_requests,
)
from evaluator.run_predict import generated_prediction, scored_prediction
from evaluator.runs import process_alive
from evaluator.served_weights import check_served_weights, facts_to_record

__all__ = [
    "Repeat",
    "RunProgress",
    "RunSelection",
    "RunSetupError",
    "StoredPrediction",
    "create_run",
    "execute_run",
    "pending_item_ids",
    "select_run_items",
]

log = logging.getLogger(__name__)


def _store_prediction(
    db: Database, run_id: int, revision: int, prediction: StoredPrediction
) -> None:
    """Write one prediction in its own transaction (replacing an infrastructure failure)."""
    with db.transaction() as session:
        row = session.exec(
            select(Prediction).where(
                Prediction.run_id == run_id, Prediction.item_id == prediction.item_id
            )
        ).first()
        digest = prompt_hash(prediction.prompt)
        if row is None:
            row = Prediction(
                run_id=run_id,
                item_id=prediction.item_id,
                revision_number=revision,
                prompt_hash=digest,
            )
        row.revision_number = revision
        row.prompt_hash = digest
        row.prompt = prediction.prompt
        row.latency_s = float(prediction.latency_s)
        row.created_at = utcnow()
        row.raw_output = _storable(prediction.raw_output)
        row.parsed_answer = prediction.parsed_answer
        row.correct = prediction.correct
        row.scores = {} if prediction.scores is None else prediction.scores.to_json()
        row.failure_kind = prediction.failure_kind
        row.error = None if prediction.error is None else _storable(prediction.error)
        session.add(row)


def _storable(text: str) -> str:
    """Model text as a text column takes it: PostgreSQL refuses NUL characters, so a NUL
    a model wrote is kept as U+FFFD (the replacement character), on every database alike."""
    return text.replace("\x00", "\ufffd")


def _set_status(
    db: Database,
    run_id: int,
    status: RunStatus,
    *,
    error: str | None = None,
    session_began: RunSession | None = None,
    backend_settings: Mapping[str, JsonValue] | None = None,
) -> None:
    with db.transaction() as session:
        run = session.get(EvalRun, run_id)
        assert run is not None
        run.status = status
        run.error = error
        if session_began is not None:  # a new dict, so the JSON column is saved
            params = RunParams.from_json(run.params)
            run.params = params.with_session(session_began, backend_settings).to_json()
        if status is RunStatus.RUNNING:
            run.finished_at = None
            run.host = socket.gethostname()[:255]
        else:
            run.finished_at = utcnow()
        session.add(run)


def _progress_so_far(db: Database, run_id: int, total: int) -> RunProgress:
    """The run's figures over its stored predictions, before this session adds any."""
    with db.session() as session:
        rows = session.exec(
            select(Prediction.correct, Prediction.failure_kind).where(Prediction.run_id == run_id)
        ).all()
    answered = [row for row in rows if row[1] != FailureKind.INFRASTRUCTURE]
    correct = sum(1 for row in answered if row[0])
    unparsed = sum(1 for row in answered if row[1] == FailureKind.UNPARSED)
    return RunProgress(len(answered), total, correct=correct, unparsed=unparsed)


def _check_started_by_this_role(db: Database, run: EvalRun) -> None:
    """PostgreSQL: only the role that started a run (or the owner) writes to it
    (``db.guards``); anyone else is told so before any work is done."""
    from db.identity import database_account

    account = database_account(db)
    if account is None or account.is_admin or run.db_role in (None, account.name):
        return
    raise RunSetupError(
        f"run {run.id} was started by {run.db_role}; only they (or the database's owner) "
        "may resume it: start a run of your own"
    )


def _check_not_running_elsewhere(run: EvalRun) -> None:
    if run.status != RunStatus.RUNNING:
        return
    recorded = RunParams.from_json(run.params).session
    pid = None if recorded is None else recorded.pid
    here = run.host == socket.gethostname()[:255]
    if here and pid is not None and pid != os.getpid() and process_alive(pid):
        raise RunSetupError(f"run {run.id} is still running (process {pid} on {run.host})")


def execute_run(
    db: Database,
    run_id: int,
    backend: Backend,
    *,
    on_progress: Callable[[RunProgress], None] | None = None,
    should_stop: Callable[[], bool] | None = None,
) -> RunStatus:
    """Evaluate the run's items that have no answer yet; returns the run's final status.

    Each prediction is stored as soon as the backend returns it.  Ctrl-C marks the
    run interrupted (and re-raises); ``should_stop()`` returning True does the same
    quietly; any other error marks it failed (and re-raises).
    """
    run = load_run_row(db, run_id)
    if run.backend != backend.info.backend or run.model != backend.info.model:
        raise RunSetupError(
            f"run {run_id} evaluates {run.backend}:{run.model}, "
            f"not {backend.info.backend}:{backend.info.model}"
        )
    # A resume talks to the weights the run started with, where the server says them.
    recorded = RunParams.from_json(run.params).backend
    check_served_weights(run_id, recorded, backend.info)
    if run.mode == EvalMode.SCORE and not backend.supports_scoring:
        raise RunSetupError(f"the {backend.info.backend} backend cannot score candidates")
    _check_not_running_elsewhere(run)
    _check_started_by_this_role(db, run)
    plan = plan_run(db, run)
    progress = _progress_so_far(db, run_id, plan.total)
    # Readers measure speed over this session: from its start, counting what it adds.
    began = RunSession.begin(
        os.getpid(), utcnow(), progress.done, backend.info.params.get("device")
    )
    # The API settings this session uses (a resume may have been given others) replace
    # the recorded ones, so the run's params say what it last ran with; what the server
    # says it serves is added where the run recorded none, so the next resume is checked.
    api_params = {
        key: backend.info.params[key]
        for key in (*RECORDED_API_PARAMS.values(), RESPONSE_CACHE_PARAM)
        if key in backend.info.params
    } | facts_to_record(recorded, backend.info)
    _set_status(db, run_id, RunStatus.RUNNING, session_began=began, backend_settings=api_params)
    started = time.perf_counter()
    stopped = False
    failure_reasons: Counter[str] = Counter()  # this session's infrastructure failures
    lasting_reasons: set[str] = set()  # those of them that no retry changes
    results = _results(plan, backend)
    try:
        for prediction in results:
            _store_prediction(db, run_id, plan.items[prediction.item_id].revision, prediction)
            if prediction.is_infrastructure_failure:
                reason = prediction.error or "no reason given"
                failure_reasons[reason] += 1
                if prediction.retry_cannot_fix:
                    lasting_reasons.add(reason)
            progress = progress.after(prediction, time.perf_counter() - started)
            if on_progress is not None:
                on_progress(progress)
            if should_stop is not None and should_stop():
                stopped = True
                break
    except KeyboardInterrupt:
        _close_quietly(results)
        _set_status(db, run_id, RunStatus.INTERRUPTED, error="interrupted (Ctrl-C)")
        raise
    except BaseException as error:
        _close_quietly(results)
        _set_status(db, run_id, RunStatus.FAILED, error=f"{type(error).__name__}: {error}")
        raise
    if stopped:
        _close_quietly(results)
        _set_status(db, run_id, RunStatus.INTERRUPTED, error="stopped")
        return RunStatus.INTERRUPTED
    failures = progress.infrastructure_failures
    if not failures:
        _set_status(db, run_id, RunStatus.FINISHED)
        return RunStatus.FINISHED
    every_one = failures == progress.finished_this_session  # nothing was answered
    status = RunStatus.FAILED if every_one else RunStatus.FINISHED
    what = (
        f"{all_of(failures, 'prediction')} failed"
        if every_one
        else counted(failures, "infrastructure failure")
    )
    note = _failures_note(what, failures, failure_reasons, lasting_reasons)
    _set_status(db, run_id, status, error=note)
    return status


def _failures_note(what: str, failures: int, reasons: Counter[str], lasting: set[str]) -> str:
    """``all 8 predictions failed: cannot reach http://... (connection, 3 attempts); resume
    the run to retry them``: the reason most of this session's failures gave, and how
    many gave another, so nobody has to dig through the predictions to learn why.  When
    that reason is one of ``lasting`` (a server's refusal: a wrong model or base URL), a
    resume would be refused the same way, since it keeps the run's model: the note says
    to start a new run instead."""
    reason = ""
    most = None
    if reasons:
        most, count = reasons.most_common(1)[0]
        others = sum(reasons.values()) - count
        reason = f": {most}" + (
            f" ({counted(others, 'other failure')} gave another)" if others else ""
        )
    if most is not None and most in lasting:
        return (
            f"{what}{reason}; a retry cannot fix this: start a new run with the right "
            "--model and --base-url"
        )
    return f"{what}{reason}; resume the run to retry {agreeing(failures, 'it', 'them')}"


def _results(plan: RunPlan, backend: Backend) -> Iterator[StoredPrediction]:
    """Each item's prediction as the backend finishes it."""
    if not plan.items:
        return
    # Only the oracle self-test is told the keys (in the labels each item was shown).
    with_reference = bool(getattr(backend, "wants_reference", False))
    if plan.mode is EvalMode.SCORE:
        requests, candidates_of = scoring_requests(plan, with_reference=with_reference)
        for scored in backend.score(requests):
            item = plan.items[scored.item_id]
            shown = plan.shown[scored.item_id]
            yield scored_prediction(shown, item, scored, candidates_of[scored.item_id])
        return
    for generated in backend.generate(generation_requests(plan, with_reference=with_reference)):
        yield generated_prediction(plan, plan.items[generated.item_id], generated)


def _close_quietly(results: Iterable[Any]) -> None:
    close = getattr(results, "close", None)
    if close is not None:
        try:
            close()
        except Exception:  # closing a broken generator must not hide the original error
            log.debug("closing the result stream failed", exc_info=True)

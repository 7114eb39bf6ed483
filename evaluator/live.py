"""What a live view of evaluation runs shows: one snapshot read from the database, as text.

The evaluation screen (``reviewer/tui/screens/evaluation.py``) reads a
:class:`EvaluationSnapshot` about once a second from its polling worker: every run
(the leaderboard), the followed run's figures and latest predictions, and now and
then the suspect keys.  Whoever writes the runs (this screen, ``vetbench eval`` in
another terminal, another machine) the snapshot looks the same.  Its figures are
written as text by ``evaluator.run_text``, the formatter the CLI uses too.
"""

from __future__ import annotations

from dataclasses import dataclass

from db.engine import Database
from evaluator.results import (
    PredictionView,
    RunFigures,
    RunOverview,
    SuspectKey,
)

__all__ = [
    "LATEST_SHOWN",
    "EvaluationSnapshot",
    "read_snapshot",
]

LATEST_SHOWN = 20  # predictions of the followed run, newest first


@dataclass(frozen=True)
class EvaluationSnapshot:
    """What a live view shows, read from the database in one go."""

    runs: list[RunOverview]  # newest first
    followed: RunFigures | None  # the followed run's figures; None when there is no run
    latest: list[PredictionView]  # the followed run's latest predictions, newest first
    suspects: list[SuspectKey] | None  # None: not read this time (a heavier query)


def _run_state(run: RunOverview) -> tuple[object, ...]:
    """What changes when a run stores a prediction or changes status."""
    return (run.id, run.done, run.infrastructure_failures, run.status, run.stale)


def _state_of(runs: list[RunOverview], run_id: int | None) -> tuple[object, ...] | None:
    return next((_run_state(run) for run in runs if run.id == run_id), None)


def read_snapshot(
    database: Database,
    followed_run_id: int | None,
    *,
    with_suspects: bool,
    previous: EvaluationSnapshot | None = None,
) -> EvaluationSnapshot:
    """Runs, the followed run's figures and latest predictions (the newest running run, or
    the newest run, when none is chosen), and, when asked, the suspect keys.

    The followed run's figures are read again only when it changed since ``previous``
    (the run list's counts say so cheaply), so watching an idle run costs one small query.
    """
    from evaluator.runs import RunNotFound, latest_predictions, list_runs, run_figures, suspect_keys

    runs = list_runs(database)
    run_id = followed_run_id
    if run_id is None and runs:
        running = [run for run in runs if run.is_running]
        run_id = (running or runs)[0].id
    followed: RunFigures | None = None
    latest: list[PredictionView] = []
    state = _state_of(runs, run_id)
    if previous is not None and previous.followed is not None and state is not None:
        unchanged = _state_of(previous.runs, run_id) == state
        if unchanged and previous.followed.run.id == run_id:
            followed, latest = previous.followed, previous.latest
    if followed is None and run_id is not None:
        try:
            followed = run_figures(database, run_id)
            latest = latest_predictions(database, run_id, LATEST_SHOWN)
        except RunNotFound:
            followed = None
    suspects = suspect_keys(database) if with_suspects else None
    return EvaluationSnapshot(runs=runs, followed=followed, latest=latest, suspects=suspects)

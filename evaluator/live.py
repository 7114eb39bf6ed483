"""What a live view of evaluation runs shows: one snapshot read from the database, as text.

The evaluation screen (``reviewer/tui/screens/evaluation.py``) reads a
:class:`EvaluationSnapshot` about once a second from its polling worker: every run
(the leaderboard), the followed run's figures and latest predictions, and now and
then the suspect keys.  Whoever writes the runs (this screen, ``vetbench eval`` in
another terminal, another machine) the snapshot looks the same.  The helpers below
write its figures as the short text the screen shows; they know nothing of widgets.
"""

from __future__ import annotations

from dataclasses import dataclass

from db.engine import Database
from db.vocabulary import EvalProtocol
from evaluator.results import (
    Figures,
    PredictionView,
    RunFigures,
    RunOverview,
    RunRecord,
    SuspectKey,
)

__all__ = [
    "LATEST_SHOWN",
    "EvaluationSnapshot",
    "duration",
    "extraction_summary",
    "interval",
    "percent",
    "position_summary",
    "protocol_note",
    "rate",
    "read_snapshot",
    "secondary_figure",
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


# ------------------------------------------------------------------ as text


def percent(value: float | None) -> str:
    return "—" if value is None else f"{100 * value:.1f}%"


def interval(bounds: tuple[float, float] | None) -> str:
    if not bounds:
        return "—"
    low, high = bounds
    return f"[{100 * low:.1f}, {100 * high:.1f}]"


def duration(seconds: float | None) -> str:
    if seconds is None:
        return "—"
    seconds = round(seconds)
    if seconds < 60:
        return f"{seconds} s"
    minutes, seconds = divmod(seconds, 60)
    if minutes < 60:
        return f"{minutes} min {seconds:02d} s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes:02d} min"


def rate(items_per_second: float | None) -> str:
    return "— items/s" if items_per_second is None else f"{items_per_second:.2f} items/s"


def secondary_figure(figures: Figures) -> str:
    """Pairwise accuracy for ordering, weighted F1 (and set F1) for multiple choice, the
    explanation metrics of CFLUE's protocol, and the accuracy of a random choice."""
    parts = []
    if figures.pairwise_accuracy is not None:
        parts.append(f"pairwise {percent(figures.pairwise_accuracy)}")
    if figures.weighted_f1 is not None:
        parts.append(f"wF1 {figures.weighted_f1:.3f}")
    if figures.set_f1 is not None:
        parts.append(f"set F1 {figures.set_f1:.3f}")
    if figures.bleu_1 is not None and figures.bleu_4 is not None:
        parts.append(f"BLEU-1/4 {100 * figures.bleu_1:.1f}/{100 * figures.bleu_4:.1f}")
    rouge = (figures.rouge_1, figures.rouge_2, figures.rouge_l)
    if all(value is not None for value in rouge):
        parts.append("ROUGE-1/2/L " + "/".join(f"{100 * (value or 0):.1f}" for value in rouge))
    if figures.chance is not None:
        parts.append(f"chance {percent(figures.chance)}")
    return ", ".join(parts) or "—"


def extraction_summary(figures: Figures) -> str:
    """What each extractor recovered so far: ``cflue read 18/20, right 9; lenient ...``."""
    parts = [
        f"{name} read {row.parsed}/{row.parsed + row.unparsed}, right {row.correct}"
        for name, row in figures.extractors.items()
    ]
    return "extractors: " + "; ".join(parts) if parts else ""


def position_summary(figures: Figures) -> str:
    """Accuracy by the label the key was shown under, and the spread between them."""
    if not figures.key_positions:
        return ""
    shown = "  ".join(
        f"{label} {percent(row.accuracy)} (n={row.n})"
        for label, row in figures.key_positions.items()
    )
    bias = figures.position_bias
    return f"by key position: {shown}" + ("" if bias is None else f"   bias {percent(bias)}")


def protocol_note(run: RunRecord) -> str:
    """``cflue protocol, repeat 2/3, options permuted`` (empty for a plain custom run)."""
    parts = []
    params = run.params
    if params.protocol is not EvalProtocol.CUSTOM:
        parts.append(f"{params.protocol.value} protocol")
    if params.repeat is not None:
        parts.append(f"repeat {params.repeat.index + 1}/{params.repeat.count}")
    if params.permute_options:
        parts.append("options permuted")
    return ", ".join(parts)

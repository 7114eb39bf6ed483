"""The evaluation screen's text: figures, predictions and runs as Rich text, cells and bars.

The figures' wording comes from ``evaluator/run_text.py``, the formatter the CLI
uses too (percentages here); item and model text goes through the one
literal-display helper (``reviewer/tui/literal.py``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.text import Text

from db.answers import format_answer
from db.vocabulary import FailureKind, ItemKind
from db.words import agreeing, counted
from evaluator import run_text
from evaluator.run_text import interval
from reviewer.tui.literal import line_broken, literal
from reviewer.tui.widgets.bars import Bar

if TYPE_CHECKING:
    from evaluator.results import Figures, PredictionView, RunFigures, RunOverview, SuspectKey

LEADERBOARD_BARS = 15
FIGURE_COLUMNS = ("kind", "answered", "accuracy", "95% CI", "unparsed", "failed", "also")


def answer_cell(kind: str, answer: str | None, style: str = "") -> Text:
    """An answer as people read it (``D, A, C, B`` for orders, ``ABD`` for choices), literally."""
    return literal(format_answer(kind, answer), style=style)


def answered_item_cells(
    item_id: str, kind: ItemKind, key: str, answer: str | None
) -> tuple[Text, str, Text, Text]:
    """The cells every table of answers to items begins with: item, kind, key, answer."""
    return (literal(item_id), kind.value, answer_cell(kind, key), answer_cell(kind, answer))


def mark(view: PredictionView) -> Text:
    if view.failure_kind is FailureKind.INFRASTRUCTURE:
        return Text("failed", style="bold red")
    if view.failure_kind is FailureKind.UNPARSED:
        return Text("unparsed", style="yellow")
    return Text("right", style="green") if view.correct else Text("wrong", style="red")


def leaderboard_bars(runs: list[RunOverview]) -> list[Bar]:
    """One bar per run with answers (best first): its accuracy, the interval as a whisker."""
    ranked = sorted(
        (run for run in runs if run.accuracy is not None),
        key=lambda run: (-(run.accuracy or 0.0), run.id),
    )[:LEADERBOARD_BARS]
    return [
        Bar(
            f"#{run.id} {run.model_label}",
            run.accuracy,
            f"{percent(run.accuracy):>6} {interval(run.accuracy_ci, percent=True):<12} n={run.done}",
            run.accuracy_ci,
        )
        for run in ranked
    ]


def prediction_detail(view: PredictionView) -> Text:
    """Prompt, raw output, parsed answer and key of one prediction, shown literally."""
    text = Text()
    text.append_text(literal(view.item_id, style="bold"))
    text.append(f"  ({view.kind}, revision {view.revision})\n", style="bold")
    text.append("key ", style="dim")
    text.append_text(answer_cell(view.kind, view.key, style="bold"))
    text.append("   parsed ", style="dim")
    text.append_text(answer_cell(view.kind, view.parsed_answer, style="bold"))
    text.append("   ")
    text.append_text(mark(view))
    text.append(f"   {view.latency_s:.2f} s\n", style="dim")
    if view.error:
        text.append("error: ", style="bold red")
        text.append_text(literal(view.error + "\n"))
    text.append("\nraw output\n", style="bold underline")
    text.append_text(literal((view.raw_output or "(empty)") + "\n"))
    text.append("\nprompt\n", style="bold underline")
    text.append_text(literal(view.prompt))
    return text


def run_title(figures: RunFigures) -> Text:
    """``Run 3  model  backend, mode, shots  status  note``, with the model's name literal."""
    run = figures.run
    title = Text.assemble((f"Run {run.id}  ", "bold"))
    title.append_text(literal(run.model, style="bold"))
    title.append(f"  {run_text.run_how(run)}  ")
    title.append(run_text.run_state(run), style="italic")
    if run.error:
        title.append_text(literal("  " + run.error, style="yellow"))
    return title


def leaderboard_row(run: RunOverview) -> tuple[str | Text, ...]:
    """A run's cells on the leaderboard: run, model, mode, shots, status, done, accuracy,
    its interval, started."""
    return (
        str(run.id),
        literal(run.model_label),
        run.mode.value,
        str(run.shots) if run.shots_got.plain else run.shots_got.label(),
        run.status + (" (stale)" if run.stale else ""),
        f"{run.done}/{run.total}",
        percent(run.accuracy),
        interval(run.accuracy_ci, percent=True),
        run.started_at.strftime("%Y-%m-%d %H:%M"),
    )


def suspect_text(suspect: SuspectKey) -> Text:
    return literal(
        f"{suspect.item_id}: key {suspect.key}, but {suspect.agreement} "
        f"(runs {', '.join(map(str, suspect.runs))})."
    )


def accuracy_bar(name: str, figures: Figures) -> Bar:
    """A kind's accuracy as a bar, its Wilson interval as the whisker."""
    return Bar(
        name,
        figures.accuracy,
        f"{percent(figures.accuracy):>6} {interval(figures.accuracy_ci, percent=True):<12} n={figures.scored}",
        figures.accuracy_ci,
    )


def figure_cells(name: str, figures: Figures) -> tuple[str | Text, ...]:
    """A row of the figures table (:data:`FIGURE_COLUMNS`); "also" as text that wraps."""
    return (
        name,
        str(figures.scored),
        percent(figures.accuracy),
        interval(figures.accuracy_ci, percent=True),
        percent(figures.unparsed_rate),
        str(figures.infrastructure_failures),
        line_broken(Text(run_text.secondary_text(figures, percent=True))),
    )


def percent(value: float | None) -> str:
    return run_text.number(value, percent=True)


def extraction_summary(figures: Figures) -> str:
    """What each extractor recovered so far: ``extractors: cflue read 18 of 20, right 9 ...``."""
    parts = [
        run_text.extractor_text(name, read, percent=True)
        for name, read in figures.extractors.items()
    ]
    return "extractors: " + "; ".join(parts) if parts else ""


def position_summary(figures: Figures) -> str:
    positions = run_text.position_text(figures, percent=True)
    return f"by key position: {positions}" if positions else ""


def series_run(run_id: int | None, position: int, runs: int) -> str:
    """``Run 9 (8 of 40)``: a run and its place in its series (none for a lone run)."""
    if run_id is None:
        return "A run's model"  # loading, before its first run is made
    return f"Run {run_id}" + (f" ({position + 1} of {runs})" if runs > 1 else "")


def run_started(
    run_id: int, model: str, where: tuple[int, int], notes: tuple[str, ...], said: tuple[str, ...]
) -> str | None:
    """The notice a run starts with, at ``where`` (position, runs) in its series; None
    when there is none.  A series has one, at its first run: its later runs are in the
    live tab's title (repeat 2/40); a notice each stacked up over whatever was open (the
    quit question).  A later run has one only for notes other than those ``said``.
    With notes it is one short line that points to them (:func:`run_notes`, under the
    run): a toast of them covered half the run at 80x24, past its bottom edge."""
    position, runs = where
    if position and (not notes or notes == said):
        return None
    if notes:
        what = f"Series of {runs} runs" if runs > 1 and not position else None
        what = what or series_run(run_id, position, runs)
        return f"{what} started: {counted(len(notes), 'note')} below"
    if runs > 1 and not position:
        started = (
            f"Runs of a series of {runs} started: {model}, run {run_id} first; "
            "the live tab follows each."
        )
    else:
        started = f"{series_run(run_id, position, runs)} started: {model}"
    return started


def run_notes(run_id: int, model: str, where: tuple[int, int], notes: tuple[str, ...]) -> Text:
    """What a run started here was told at its start (``vetbench eval``'s notes: shots
    that fell short, items left out ...), shown under the run, in full, literally."""
    heading = literal(f"{series_run(run_id, *where)} started: {model}", style="bold")
    return line_broken(Text("\n").join([heading, *(literal(f"• {note}") for note in notes)]))


def quit_while_running(run_id: int | None, position: int, runs: int) -> str:
    """What quitting asks while this screen runs ``run_id``: what it stops, and what
    ``--resume`` makes of it, which continues the one run (``resume_series``), not the
    runs of its series not started yet, as the command line says after Ctrl-C."""
    resume = f" `vetbench eval --resume {run_id}` finishes it."
    if run_id is None:
        resume = ""
    elif never := runs - position - 1:
        resume = (
            f" `vetbench eval --resume {run_id}` finishes run {run_id} only: "
            f"{counted(never, 'more planned run')} of the series "
            f"{agreeing(never, 'is', 'are')} never started."
        )
    going_on = series_run(run_id, position, runs)
    return f"{going_on} is going: quitting stops it, its answers so far kept.{resume} Quit?"

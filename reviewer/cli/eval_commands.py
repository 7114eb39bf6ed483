"""CLI commands: ``eval`` (evaluate a model on the approved set) and ``runs`` (list, show, compare).

Models are opened by the evaluator's registry (``evaluator.backends.registry``):
``demo`` (the embedded SmolLM2-135M-Instruct), a transformers model directory, a
hub id already in the local cache, a ``.gguf`` file, ``openai:NAME`` for an
OpenAI-compatible API, or ``scripted:FILE``.  The evaluator (and with it torch and
transformers) is imported inside the commands, so ``vetbench --help`` stays instant.
The commands print the evaluator's typed results; ``--json`` writes their ``to_json()``.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from db.vocabulary import ALL, EvalMode, FailureKind, ItemKind, ItemStatus, RunStatus, values
from reviewer.cli.common import (
    TerminalProgressBar,
    backend_options,
    default_user,
    fail,
    open_db,
    print_json,
)

if TYPE_CHECKING:
    from db.engine import Database
    from evaluator.backends.base import Backend
    from evaluator.backends.settings import BackendSettings
    from evaluator.results import Figures, PredictionView, ProgressFigures, RunFigures, RunRecord
    from evaluator.runner import RunProgress

EXIT_INTERRUPTED = 130


# ---------------------------------------------------------------- formatting


def _number(value: float | None, digits: int = 3) -> str:
    return "—" if value is None else f"{value:.{digits}f}"


def _interval(interval: tuple[float, float] | None) -> str:
    if not interval:
        return ""
    low, high = interval
    return f"[{low:.3f}, {high:.3f}]"


def _figure_lines(figures: RunFigures) -> list[str]:
    summary = figures.summary
    lines = [
        f"accuracy      {_number(summary.accuracy)}  {_interval(summary.accuracy_ci)}"
        f"  ({summary.correct} of {summary.scored})",
        f"unparsed      {_number(summary.unparsed_rate)}  ({summary.unparsed})",
    ]
    for label, value in (
        ("pairwise", summary.pairwise_accuracy),
        ("weighted F1", summary.weighted_f1),
        ("set F1", summary.set_f1),
    ):
        if value is not None:
            lines.append(f"{label:<13} {_number(value)}")
    if summary.infrastructure_failures:
        lines.append(
            f"failed        {summary.infrastructure_failures} (infrastructure; "
            "resume the run to retry)"
        )
    for title, breakdown in (("by kind", summary.by_kind), ("by source", summary.by_source)):
        if len(breakdown) > 1 or (breakdown is summary.by_kind and breakdown):
            lines.append(f"{title}:")
            lines += [_breakdown_line(name, group) for name, group in breakdown.items()]
    return lines


def _breakdown_line(name: str, group: Figures) -> str:
    return (
        f"  {name:<18} n={group.scored:<5} acc {_number(group.accuracy)} "
        f"{_interval(group.accuracy_ci)}  unparsed {_number(group.unparsed_rate)}"
    )


def _run_header(figures: RunFigures) -> str:
    run, progress = figures.run, figures.progress
    status = run.status + (" (stale: its process is gone)" if run.stale else "")
    return (
        f"run {run.id}  {run.model}  ({run.backend}, {run.mode}, {run.shots}-shot)"
        f"  {status}  {progress.done}/{progress.total} items"
    )


def _speed_line(progress: ProgressFigures) -> str | None:
    rate = progress.items_per_second
    if rate is None:
        return None
    eta = progress.eta_s
    return f"speed         {rate:.2f} items/s" + (f", about {eta:.0f} s left" if eta else "")


def _print_figures(figures: RunFigures) -> None:
    click.echo(_run_header(figures))
    for line in _figure_lines(figures):
        click.echo(line)
    speed = _speed_line(figures.progress)
    if speed:
        click.echo(speed)
    if figures.run.error:
        click.echo(f"note          {figures.run.error}")


def _mark(correct: bool | None, failure: str | None) -> str:
    if failure == FailureKind.INFRASTRUCTURE:
        return "!"
    if failure == FailureKind.UNPARSED:
        return "?"
    return "✓" if correct else "✗"


# ------------------------------------------------------------------- backend


def _open_backend(database: Database, spec: str, settings: BackendSettings) -> Backend:
    """The backend for SPEC through the evaluator's registry; problems end the command."""
    from evaluator.backends.base import BackendError
    from evaluator.backends.registry import open_backend

    try:
        return open_backend(
            spec, settings, database=database, notify=lambda note: click.echo(note, err=True)
        )
    except BackendError as error:
        fail(str(error))


def _progress_line(progress: RunProgress) -> str:
    from evaluator.metrics import wilson_interval

    parts = []
    if progress.done:
        interval = wilson_interval(progress.correct, progress.done)
        parts.append(f"acc {progress.accuracy:.2f} {_interval(interval)}")
    if progress.unparsed:
        parts.append(f"unparsed {progress.unparsed}")
    if progress.infrastructure_failures:
        parts.append(f"failed {progress.infrastructure_failures}")
    if progress.items_per_second:
        parts.append(f"{progress.items_per_second:.2f} it/s")
    return "  ".join(parts)


# ---------------------------------------------------------------------- eval


@click.command("eval")
@click.option(
    "--model",
    "-m",
    metavar="MODEL",
    help="demo, a transformers model folder, a hub id in the local cache, a .gguf file, "
    "openai:NAME, or scripted:FILE (answers written in advance).",
)
@click.option(
    "--shots",
    type=click.IntRange(0, 20),
    default=5,
    show_default=True,
    help="Solved examples before each question (0, 1, 5 ...).",
)
@click.option(
    "--shot-file",
    type=click.Path(path_type=Path, exists=True, dir_okay=False),
    help="Take the shots from this JSONL file instead of the database.",
)
@click.option(
    "--status",
    "statuses",
    type=click.Choice((ALL, *values(ItemStatus))),
    multiple=True,
    help="Evaluate items with this status (repeatable) [default: approved].",
)
@click.option(
    "--kind", "kinds", type=click.Choice(values(ItemKind)), multiple=True, help="Only this kind."
)
@click.option("--source", "sources", metavar="NAME", multiple=True, help="Only this source.")
@click.option("--limit", type=click.IntRange(1), help="At most this many items.")
@click.option(
    "--mode",
    type=click.Choice(values(EvalMode)),
    default="generate",
    show_default=True,
    help="generate answers, or rank candidate answers by log-likelihood.",
)
@click.option(
    "--templates",
    "templates_dir",
    type=click.Path(path_type=Path, exists=True, file_okay=False),
    help="A folder of prompt templates replacing the built-in ones (see evaluator/templates).",
)
@click.option("--seed", type=int, default=1234, show_default=True, help="Seed of the shot draw.")
@backend_options
@click.option("--resume", "resume_id", type=int, metavar="RUN_ID", help="Continue a stopped run.")
@click.option("--json", "as_json", is_flag=True, help="Print the run id and its figures as JSON.")
@click.pass_context
def eval_command(
    ctx: click.Context,
    model: str | None,
    shots: int,
    shot_file: Path | None,
    statuses: tuple[str, ...],
    kinds: tuple[str, ...],
    sources: tuple[str, ...],
    limit: int | None,
    mode: str,
    templates_dir: Path | None,
    seed: int,
    backend: BackendSettings,
    resume_id: int | None,
    as_json: bool,
) -> None:
    """Evaluate a model on the approved items (or those selected) and store every prediction.

    Each prediction is written to the database as soon as it is finished, so the TUI
    and `vetbench runs show` follow the run live, and an interrupted run continues
    with `vetbench eval --resume RUN_ID` without recomputing anything.
    """
    from evaluator.prompts import ShotFileError, TemplateError
    from evaluator.runner import RunSetupError, create_run
    from evaluator.runs import run_figures

    database = open_db(ctx)
    if resume_id is None and not model:
        fail("give --model MODEL (or --resume RUN_ID)")
    settings = backend
    if resume_id is not None:
        run = _run_to_resume(database, resume_id, model)
        model, mode = _recorded_spec(run), run.mode
        settings = settings.resuming(run.params)
    assert model is not None
    _check_form(model, mode)
    opened = _open_backend(database, model, settings)
    try:
        if resume_id is None:
            if mode == EvalMode.SCORE and not opened.supports_scoring:
                fail("this backend cannot score candidate answers; use --mode generate")
            selected = () if ALL in statuses else (statuses or (ItemStatus.APPROVED,))
            try:
                run_id = create_run(
                    database,
                    opened.info,
                    mode=mode,
                    shots=shots,
                    filters={
                        "status": list(selected),
                        "kind": list(kinds),
                        "source": list(sources),
                        "limit": limit,
                    },
                    shot_file=shot_file,
                    templates_dir=templates_dir,
                    seed=seed,
                    actor=default_user(),
                )
            except (RunSetupError, ShotFileError, TemplateError) as error:
                fail(str(error))
        else:
            run_id = resume_id
        _report_setup(database, run_id, as_json)
        status = _execute(database, run_id, opened)
    finally:
        opened.close()
    figures = run_figures(database, run_id)
    if as_json:
        print_json({"run_id": run_id, **figures.to_json()})
    else:
        _print_figures(figures)
    if status is RunStatus.FAILED:
        sys.exit(1)


def _check_form(spec: str, mode: str) -> None:
    """Refuse a spec of no known form, or score mode for models that cannot score, at once."""
    from evaluator.backends.base import BackendError
    from evaluator.backends.registry import find_provider

    try:
        provider = find_provider(spec)
    except BackendError as error:
        fail(str(error))
    if mode == EvalMode.SCORE and provider.cannot_score:
        fail(f"{provider.cannot_score}; evaluate them with --mode generate")


def _recorded_spec(run: RunRecord) -> str:
    from evaluator.backends.registry import recorded_spec

    return recorded_spec(run.backend, run.model)


def _run_to_resume(database: Database, run_id: int, model: str | None) -> RunRecord:
    from evaluator.runs import RunNotFound, run_figures

    try:
        run = run_figures(database, run_id).run
    except RunNotFound as error:
        fail(str(error))
    recorded = _recorded_spec(run)
    if model and model not in (run.model, recorded):
        fail(f"run {run_id} evaluates {recorded}, not {model}")
    if run.status is RunStatus.FINISHED and not run.error:
        click.echo(f"run {run_id} is already finished", err=True)
    return run


def _report_setup(database: Database, run_id: int, quiet: bool) -> None:
    from evaluator.runs import run_figures

    run = run_figures(database, run_id).run
    for note in run.shot_notes:
        click.echo(f"note: {note}", err=True)
    if run.excluded_count:
        click.echo(
            f"note: {run.excluded_count} item(s) left out of score mode (too many candidates)",
            err=True,
        )
    if not quiet:
        click.echo(f"run {run_id}: {run.total} items", err=True)


def _execute(database: Database, run_id: int, backend: Backend) -> RunStatus:
    """Run the pending items with a progress bar; Ctrl-C keeps what is finished."""
    from evaluator.runner import RunSetupError, execute_run, pending_item_ids

    total = len(_run_item_ids(database, run_id))
    pending = len(pending_item_ids(database, run_id))
    bar = TerminalProgressBar(
        total, f"run {run_id}", describe=_progress_line, done=total - pending, show_eta=True
    )
    try:
        status = execute_run(database, run_id, backend, on_progress=bar.advance)
    except KeyboardInterrupt:
        bar.close()
        click.echo(
            f"interrupted: finished predictions are kept; continue with "
            f"`vetbench eval --resume {run_id}`",
            err=True,
        )
        sys.exit(EXIT_INTERRUPTED)
    except RunSetupError as error:
        bar.close()
        fail(str(error))
    except Exception as error:
        bar.close()
        fail(f"run {run_id} failed: {type(error).__name__}: {error}")
    bar.close()
    return status


def _run_item_ids(database: Database, run_id: int) -> list[str]:
    from db.models import EvalRun

    with database.session() as session:
        run = session.get(EvalRun, run_id)
        return list(run.item_ids) if run is not None else []


# ---------------------------------------------------------------------- runs


@click.group("runs", invoke_without_command=True)
@click.option("--json", "as_json", is_flag=True, help="Print the runs as JSON.")
@click.pass_context
def runs_group(ctx: click.Context, as_json: bool) -> None:
    """List evaluation runs (newest first); `runs show` and `runs compare` look closer."""
    if ctx.invoked_subcommand is not None:
        return
    from evaluator.runs import list_runs

    runs = list_runs(open_db(ctx))
    if as_json:
        print_json([run.to_json() for run in runs])
        return
    if not runs:
        click.echo("no runs yet; start one with `vetbench eval --model demo`")
        return
    click.echo(f"{'run':>4}  {'status':<11} {'done':>9}  {'accuracy':<24} {'mode':<10} model")
    for run in runs:
        accuracy = (
            f"{run.accuracy:.3f} {_interval(run.accuracy_ci)}" if run.accuracy is not None else "—"
        )
        status = run.status + ("*" if run.stale else "")
        shots = f"{run.mode}/{run.shots}"
        click.echo(
            f"{run.id:>4}  {status:<11} {run.done:>4}/{run.total:<4}  {accuracy:<24} "
            f"{shots:<10} {run.model}"
        )
    if any(run.stale for run in runs):
        click.echo("* marked running, but its process is gone: resume it with --resume")


@runs_group.command("show")
@click.argument("run_id", type=int)
@click.option("--item", "item_id", metavar="ID", help="Show one item's prediction in full.")
@click.option("--prompt", "with_prompt", is_flag=True, help="With --item: the exact prompt too.")
@click.option("--json", "as_json", is_flag=True, help="Print as JSON.")
@click.pass_context
def runs_show(
    ctx: click.Context, run_id: int, item_id: str | None, with_prompt: bool, as_json: bool
) -> None:
    """A run's figures and its predictions, or one item's prediction (--item)."""
    from evaluator.runs import RunNotFound, all_predictions, get_prediction, run_figures

    database = open_db(ctx)
    if with_prompt and item_id is None:
        fail("--prompt shows one item's prompt: add --item ID")
    try:
        if item_id is not None:
            view = get_prediction(database, run_id, item_id)
            if view is None:
                fail(f"run {run_id} has no prediction for item {item_id}")
            if as_json:
                print_json(view.to_json(with_prompt=with_prompt))
            else:
                _print_prediction(view, with_prompt)
            return
        figures = run_figures(database, run_id)
        predictions = all_predictions(database, run_id)
    except RunNotFound as error:
        fail(str(error))
    if as_json:
        print_json(
            {
                **figures.to_json(),
                "predictions": [view.to_json(with_prompt=False) for view in predictions],
            }
        )
        return
    _print_figures(figures)
    if predictions:
        click.echo("")
        click.echo(f"  {'item':<28} {'kind':<10} {'key':<8} {'answer':<8} {'s':>6}")
        for view in predictions:
            click.echo(
                f"{_mark(view.correct, view.failure_kind)} {view.item_id:<28} {view.kind:<10} "
                f"{view.key:<8} {view.parsed_answer or '—':<8} {view.latency_s:>6.2f}"
            )


def _print_prediction(view: PredictionView, with_prompt: bool) -> None:
    click.echo(f"item          {view.item_id} (revision {view.revision}, {view.kind})")
    click.echo(f"key           {view.key}")
    click.echo(
        f"answer        {view.parsed_answer or '—'}  {_mark(view.correct, view.failure_kind)}"
    )
    if view.failure_kind:
        click.echo(f"failure       {view.failure_kind}")
    if view.error:
        click.echo(f"error         {view.error}")
    scores = {} if view.scores is None else view.scores.to_json()
    likelihoods = scores.pop("log_likelihoods", None)
    if scores:
        click.echo("scores        " + ", ".join(f"{k} {v}" for k, v in scores.items()))
    for answer, value in (likelihoods if isinstance(likelihoods, dict) else {}).items():
        click.echo(f"  log-lik     {answer:<8} {value}")
    click.echo(f"latency       {view.latency_s:.3f} s")
    click.echo(f"prompt hash   {view.prompt_hash}")
    click.echo("raw output:")
    click.echo(view.raw_output)
    if with_prompt:
        click.echo("prompt:")
        click.echo(view.prompt)


@runs_group.command("compare")
@click.argument("run_a", type=int)
@click.argument("run_b", type=int)
@click.option("--json", "as_json", is_flag=True, help="Print as JSON.")
@click.pass_context
def runs_compare(ctx: click.Context, run_a: int, run_b: int, as_json: bool) -> None:
    """Two runs item by item: both right, both wrong, only one right, different answers."""
    from evaluator.runs import RunNotFound, compare_runs

    try:
        comparison = compare_runs(open_db(ctx), run_a, run_b)
    except RunNotFound as error:
        fail(str(error))
    if as_json:
        print_json(comparison.to_json())
        return
    click.echo(f"runs {run_a} (A) and {run_b} (B): {comparison.shared_items} shared items")
    click.echo(f"both right    {len(comparison.both_right)}")
    click.echo(f"both wrong    {len(comparison.both_wrong)}")
    click.echo(f"only A right  {len(comparison.only_a)}")
    click.echo(f"only B right  {len(comparison.only_b)}")
    if comparison.mcnemar_p is not None:
        click.echo(f"McNemar p     {comparison.mcnemar_p:.4f}")
    if comparison.agreement is not None:
        click.echo(f"same answer   {comparison.agreement:.3f}")
    if comparison.different_answers:
        click.echo("different answers (item: key, A, B):")
        for row in comparison.different_answers:
            click.echo(f"  {row.item_id}: {row.key}, {row.a or '—'}, {row.b or '—'}")


@runs_group.command("suspects")
@click.option(
    "--min-models",
    type=click.IntRange(1),
    default=2,
    show_default=True,
    help="How many different models must give the same wrong answer.",
)
@click.option("--json", "as_json", is_flag=True, help="Print as JSON.")
@click.pass_context
def runs_suspects(ctx: click.Context, min_models: int, as_json: bool) -> None:
    """Items every model gets wrong with the same answer: their key may be wrong."""
    from evaluator.runs import suspect_keys

    suspects = suspect_keys(open_db(ctx), min_models=min_models)
    if as_json:
        print_json([suspect.to_json() for suspect in suspects])
        return
    if not suspects:
        click.echo("no suspect keys")
        return
    for suspect in suspects:
        click.echo(
            f"{suspect.item_id}: key {suspect.key}, every model answers {suspect.answer} "
            f"({', '.join(suspect.models)})"
        )


def register(cli: click.Group) -> None:
    """Add this module's commands to the `vetbench` group."""
    cli.add_command(eval_command)
    cli.add_command(runs_group)

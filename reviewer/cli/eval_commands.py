"""CLI commands: ``eval`` (evaluate a model on the approved set) and ``runs`` (list, show, compare).

Models are opened by the evaluator's registry (``evaluator.backends.registry``):
``demo`` (the embedded SmolLM2-135M-Instruct), a transformers model directory, a
hub id already in the local cache, a ``.gguf`` file, ``openai:NAME`` for an
OpenAI-compatible API, or ``scripted:FILE``.  The evaluator (and with it torch and
transformers) is imported inside the commands, so ``vetbench --help`` stays instant.
The commands print the evaluator's typed results; ``--json`` writes their ``to_json()``.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

import click

from db.vocabulary import (
    ALL,
    EvalMode,
    EvalProtocol,
    FailureKind,
    ItemKind,
    ItemStatus,
    RunStatus,
    values,
)
from reviewer.cli import options
from reviewer.cli.common import (
    TerminalProgressBar,
    fail,
    open_db,
    print_json,
    printed_json_or_empty,
    terminal_block,
    terminal_text,
)
from reviewer.cli.identity import acting_person

if TYPE_CHECKING:
    from db.engine import Database
    from evaluator.backends.base import Backend
    from evaluator.backends.settings import BackendSettings
    from evaluator.results import Figures, PredictionView, RunFigures, RunProgress, RunRecord
    from evaluator.session import EvalChoices

EXIT_INTERRUPTED = 130
DEFAULT_SHOTS = 5  # evaluator.session.DEFAULT_SHOTS
# Repeat the evaluator's names here, so that --help imports nothing heavy.
LAYOUT_NAMES = ("vetbench", "cflue", "econlogicqa")  # evaluator.prompts.LAYOUTS
# evaluator.extractors.EXTRACTORS
EXTRACTOR_NAMES = ("lenient", "cflue", "econlogicqa", "econlogicqa-start")
TABLE_FORMATS = ("text", "md", "csv", "latex")  # evaluator.tables.FORMATS
TABLE_SHAPES = ("econlogicqa", "cflue")  # evaluator.tables.SHAPES


# ---------------------------------------------------------------- formatting


def _number(value: float | None, digits: int = 3) -> str:
    return "—" if value is None else f"{value:.{digits}f}"


def _interval(interval: tuple[float, float] | None) -> str:
    return f"[{_number(interval[0])}, {_number(interval[1])}]" if interval else ""


def _figure_lines(figures: RunFigures) -> list[str]:
    summary = figures.summary
    lines = [
        f"accuracy      {_number(summary.accuracy)}  {_interval(summary.accuracy_ci)}"
        f"  ({summary.correct} of {summary.scored})",
        f"unparsed      {_number(summary.unparsed_rate)}  ({summary.unparsed})",
    ]
    if summary.truncated:
        lines.append(f"truncated     {summary.truncated} answers cut off by the answer budget")
    for label, value in (
        ("chance", summary.chance),
        ("pairwise", summary.pairwise_accuracy),
        ("weighted F1", summary.weighted_f1),
        ("set F1", summary.set_f1),
        ("BLEU-1", summary.bleu_1),
        ("BLEU-4", summary.bleu_4),
        ("ROUGE-1", summary.rouge_1),
        ("ROUGE-2", summary.rouge_2),
        ("ROUGE-L", summary.rouge_l),
    ):
        if value is not None:
            lines.append(f"{label:<13} {_number(value)}")
    if summary.explained:
        lines.append(f"explained     {summary.explained} answers with an analysis to compare")
    for name, read in summary.extractors.items():
        lines.append(
            f"{'extractor':<13} {terminal_text(name):<12} read {read.parsed} of "
            f"{read.parsed + read.unparsed}, right {read.correct} ({_number(read.accuracy)})"
        )
    if summary.key_positions:
        positions = "  ".join(
            f"{terminal_text(label)} {_number(row.accuracy)} (n={row.n})"
            for label, row in summary.key_positions.items()
        )
        lines.append(f"by key position {positions}")
        if summary.position_bias is not None:
            lines.append(f"position bias {_number(summary.position_bias)} (best − worst)")
    if summary.infrastructure_failures:
        lines.append(
            f"failed        {summary.infrastructure_failures} (infrastructure; "
            "resume the run to retry)"
        )
    for title, breakdown in (("by kind", summary.by_kind), ("by source", summary.by_source)):
        if len(breakdown) > 1 or (breakdown is summary.by_kind and breakdown):
            lines.append(f"{title}:")
            lines += _breakdown_lines(breakdown)
    return lines


def _breakdown_lines(breakdown: Mapping[str, Figures]) -> list[str]:
    """One line per kind or source, the figures in one column however long the names."""
    from db.visible_text import east_asian_cell_len  # cells, for Chinese names too

    shown = {name: terminal_text(name) for name in breakdown}
    width = max([18, *(east_asian_cell_len(text) + 1 for text in shown.values())])
    return [
        f"  {shown[name]}{' ' * (width - east_asian_cell_len(shown[name]))}"
        f"n={group.scored:<5} acc {_number(group.accuracy)} {_interval(group.accuracy_ci)}  "
        f"unparsed {_number(group.unparsed_rate)}"
        for name, group in breakdown.items()
    ]


def _run_header(figures: RunFigures) -> str:
    run, progress = figures.run, figures.progress
    status = run.status + (" (stale: its process is gone)" if run.stale else "")
    protocol = run.params.protocol
    how = f"{run.backend}, {run.mode}, {run.shots}-shot"
    if protocol is not EvalProtocol.CUSTOM:
        how += f", {protocol} protocol"
    return (
        f"run {run.id}  {terminal_text(run.model)}  ({how})"
        f"  {status}  {progress.done}/{progress.total} items"
    )


def _speed_line(progress: RunProgress) -> str | None:
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
        click.echo(f"note          {terminal_text(figures.run.error)}")


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
            spec,
            settings,
            database=database,
            notify=lambda note: click.echo(terminal_text(note), err=True),
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


def _shots_by_kind(values_given: tuple[str, ...]) -> dict[str, int]:
    """``--shots-for KIND=N`` options as a mapping; a malformed one ends the command."""
    by_kind: dict[str, int] = {}
    for given in values_given:
        kind, equals, count = given.partition("=")
        kind = kind.strip()
        if not equals or kind not in values(ItemKind) or not count.strip().isdigit():
            fail(
                f"--shots-for '{given}': write KIND=N with KIND one of "
                f"{', '.join(values(ItemKind))} and N a number of shots"
            )
        by_kind[kind] = int(count)
    return by_kind


@click.command("eval")
@click.option(
    "--model",
    "-m",
    metavar="MODEL",
    help="demo, a transformers model folder, a hub id in the local cache, a .gguf file, "
    "openai:NAME, or scripted:FILE (answers written in advance).",
)
@click.option(
    "--protocol",
    type=click.Choice(values(EvalProtocol)),
    default=EvalProtocol.CUSTOM.value,
    show_default=True,
    help="custom: vetbench's prompts; cflue: CFLUE's (zero-shot, answer and explanation, "
    "BLEU/ROUGE); econlogicqa: EconLogicQA's (a 1-shot and a 5-shot run).",
)
@click.option(
    "--shots",
    type=click.IntRange(0, 20),
    default=None,
    help=f"Solved examples before each question (0, 1, 5 ...) [default: {DEFAULT_SHOTS}; "
    "the cflue and econlogicqa protocols fix their own].",
)
@click.option(
    "--shots-for",
    "shots_for",
    metavar="KIND=N",
    multiple=True,
    help="Another number of shots for one kind in the same run (repeatable), e.g. single=0.",
)
@click.option(
    "--shot-file",
    type=options.existing_file,
    help="Take the shots from this JSONL file instead of the database.",
)
@options.statuses("Evaluate items with this status (repeatable) [default: approved].", or_all=True)
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
    "--layout",
    type=click.Choice(LAYOUT_NAMES),
    help="Prompt layout: vetbench's, CFLUE's or EconLogicQA's [default: the protocol's].",
)
@click.option(
    "--templates",
    "templates_dir",
    type=options.existing_folder,
    help="A folder of prompt templates replacing the built-in ones (see evaluator/templates).",
)
@click.option(
    "--extractor",
    type=click.Choice(EXTRACTOR_NAMES),
    help="Which extractor decides the answers; the others are reported beside it "
    "[default: the protocol's].",
)
@click.option(
    "--max-new-tokens",
    type=click.IntRange(1, 8192),
    help="Answer budget in tokens [default: the protocol's: cflue the model's own limit within "
    "its context, econlogicqa 64; a kind's own small budget for custom].",
)
@click.option(
    "--cflue-repo",
    type=click.Path(path_type=Path),
    metavar="PATH",
    help="With --protocol cflue: a clone of CFLUE's repository; its prompt wording is read "
    "(as data, never run) for prompts byte-identical to the official code's.",
)
@click.option(
    "--repeats",
    type=click.IntRange(1, 100),
    default=1,
    show_default=True,
    help="Runs per setting, each with other shots (seed, seed+1, ...): figures as mean ± sd.",
)
@click.option(
    "--permute-options",
    is_flag=True,
    help="Show every item's options in a seeded order, the key remapped (per repeat).",
)
@click.option("--seed", type=int, default=1234, show_default=True, help="Seed of the shot draw.")
@options.backend
@click.option("--resume", "resume_id", type=int, metavar="RUN_ID", help="Continue a stopped run.")
@options.json("Print the run id and its figures as JSON.")
@click.pass_context
def eval_command(
    ctx: click.Context,
    model: str | None,
    protocol: str,
    shots: int | None,
    shots_for: tuple[str, ...],
    shot_file: Path | None,
    statuses: tuple[str, ...],
    kinds: tuple[str, ...],
    sources: tuple[str, ...],
    limit: int | None,
    mode: str,
    layout: str | None,
    templates_dir: Path | None,
    extractor: str | None,
    max_new_tokens: int | None,
    cflue_repo: Path | None,
    repeats: int,
    permute_options: bool,
    seed: int,
    backend: BackendSettings,
    resume_id: int | None,
    as_json: bool,
) -> None:
    """Evaluate a model on the approved items (or those selected) and store every prediction.

    Each prediction is written to the database as soon as it is finished, so the TUI
    and `vetbench runs show` follow the run live, and an interrupted run continues
    with `vetbench eval --resume RUN_ID` without recomputing anything.  A protocol
    with several shot settings, and --repeats, make several runs (one model load).
    """
    from evaluator.backends.base import BackendError
    from evaluator.cflue_wording import WordingError
    from evaluator.run_create import RunSetupError
    from evaluator.session import EvalChoices, check_choices, check_model, protocol_settings

    database = open_db(ctx)
    if resume_id is None and not model:
        fail("give --model MODEL (or --resume RUN_ID)")
    actor = acting_person(ctx, None, register=False).name
    choices = EvalChoices(
        protocol=EvalProtocol(protocol),
        shots=shots,
        shots_by_kind=_shots_by_kind(shots_for),
        shot_file=shot_file,
        statuses=() if ALL in statuses else (statuses or (ItemStatus.APPROVED.value,)),
        kinds=kinds,
        sources=sources,
        limit=limit,
        mode=EvalMode(mode),
        layout=layout,
        templates_dir=templates_dir,
        extractor=extractor,
        max_new_tokens=max_new_tokens,
        cflue_repo=cflue_repo,
        repeats=repeats,
        permute_options=permute_options,
        seed=seed,
    )
    settings = backend
    try:
        if resume_id is not None:
            run = _run_to_resume(database, resume_id, model)
            model = _recorded_spec(run)
            choices = EvalChoices(mode=run.mode)
            settings = settings.resuming(run.params.backend)
        else:  # before a model loads: bad choices and an empty selection are said at once
            check_choices(database, choices)
            settings = protocol_settings(choices, settings)
        assert model is not None
        check_model(model, choices.mode)
    except (RunSetupError, BackendError, WordingError) as error:
        fail(str(error))
    opened = _open_backend(database, model, settings)
    try:
        run_ids = _evaluate(database, opened, choices, actor, resume_id, as_json)
    finally:
        opened.close()
    failed = _print_runs(database, run_ids, as_json)
    if failed:
        sys.exit(1)


def _evaluate(
    database: Database,
    opened: Backend,
    choices: EvalChoices,
    actor: str,
    resume_id: int | None,
    quiet: bool,
) -> tuple[int, ...]:
    """Create (or resume) and execute the runs, a progress bar for each; Ctrl-C keeps
    what is finished, and a setting that cannot be used ends the command with one line."""
    from evaluator.cflue_wording import WordingError
    from evaluator.prompts import ShotFileError, TemplateError
    from evaluator.run_create import RunSetupError
    from evaluator.session import RunFailed, RunUpdate, resume_series, run_series

    bars: dict[int, TerminalProgressBar[RunProgress]] = {}
    current: list[int] = []

    def follow(update: RunUpdate) -> None:
        if update.starting:
            for bar in bars.values():
                bar.close()
            current[:] = [update.run_id]
            for note in update.notes:
                click.echo(f"note: {terminal_text(note)}", err=True)
            progress = update.progress
            if not quiet:
                click.echo(f"run {update.run_id}: {progress.total} items", err=True)
            bars[update.run_id] = TerminalProgressBar(
                progress.total,
                f"run {update.run_id}",
                describe=_progress_line,
                done=progress.done,
                show_eta=True,
            )
        else:
            bars[update.run_id].advance(update.progress)

    try:
        if resume_id is not None:
            outcome = resume_series(database, opened, resume_id, on_update=follow)
        else:
            outcome = run_series(database, opened, choices, actor=actor, on_update=follow)
    except KeyboardInterrupt:
        _close_bars(bars)
        run_id = current[0] if current else resume_id
        click.echo(
            f"interrupted: finished predictions are kept; continue with "
            f"`vetbench eval --resume {run_id}`",
            err=True,
        )
        sys.exit(EXIT_INTERRUPTED)
    except (RunSetupError, ShotFileError, TemplateError, WordingError, RunFailed) as error:
        _close_bars(bars)
        fail(str(error))
    _close_bars(bars)
    return outcome.run_ids


def _close_bars(bars: Mapping[int, TerminalProgressBar[RunProgress]]) -> None:
    for bar in bars.values():
        bar.close()


def _print_runs(database: Database, run_ids: tuple[int, ...], as_json: bool) -> bool:
    """The figures of each run made; with several, their mean ± sd per shot setting.
    True when a run failed."""
    from evaluator.session import series_figures

    series = series_figures(database, run_ids)
    if as_json:
        print_json(series.to_json())
    else:
        for position, figures in enumerate(series.runs):
            if position:
                click.echo("")
            _print_figures(figures)
        for spread in series.spreads:
            if len(spread.run_ids) < 2:
                continue
            click.echo(f"\nmean ± sd over {len(spread.run_ids)} runs ({spread.shots}-shot):")
            for name, value in spread.figures.items():
                if value.mean is not None:
                    click.echo(f"  {name} {_number(value.mean)} ± {_number(value.sd)}")
    return any(figures.run.status is RunStatus.FAILED for figures in series.runs)


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


# ---------------------------------------------------------------------- runs


@click.group("runs", invoke_without_command=True)
@options.json("Print the runs as JSON.")
@click.pass_context
def runs_group(ctx: click.Context, as_json: bool) -> None:
    """List evaluation runs (newest first); `runs show` and `runs compare` look closer."""
    if ctx.invoked_subcommand is not None:
        return
    from evaluator.runs import list_runs

    runs = list_runs(open_db(ctx))
    if printed_json_or_empty(
        runs, as_json=as_json, empty="no runs yet; start one with `vetbench eval --model demo`"
    ):
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
            f"{shots:<10} {terminal_text(run.model)}"
        )
    if any(run.stale for run in runs):
        click.echo("* marked running, but its process is gone: resume it with --resume")


@runs_group.command("show")
@click.argument("run_id", type=int)
@click.option("--item", "item_id", metavar="ID", help="Show one item's prediction in full.")
@click.option("--prompt", "with_prompt", is_flag=True, help="With --item: the exact prompt too.")
@options.json("Print as JSON.")
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
                f"{_mark(view.correct, view.failure_kind)} {terminal_text(view.item_id, 28):<28} "
                f"{view.kind:<10} {terminal_text(view.key):<8} "
                f"{terminal_text(view.parsed_answer or '—', 8):<8} {view.latency_s:>6.2f}"
            )


def _print_prediction(view: PredictionView, with_prompt: bool) -> None:
    click.echo(
        f"item          {terminal_text(view.item_id)} (revision {view.revision}, {view.kind})"
    )
    click.echo(f"key           {terminal_text(view.key)}")
    click.echo(
        f"answer        {terminal_text(view.parsed_answer or '—')}  "
        f"{_mark(view.correct, view.failure_kind)}"
    )
    if view.failure_kind:
        click.echo(f"failure       {view.failure_kind}")
    if view.error:
        click.echo(f"error         {terminal_text(view.error)}")
    scores = {} if view.scores is None else view.scores.to_json()
    likelihoods = scores.pop("log_likelihoods", None)
    if scores:
        click.echo(
            "scores        "
            + ", ".join(
                f"{k} {terminal_text(json.dumps(v, ensure_ascii=False))}" for k, v in scores.items()
            )
        )
    for answer, value in (likelihoods if isinstance(likelihoods, dict) else {}).items():
        click.echo(f"  log-lik     {terminal_text(answer):<8} {value}")
    click.echo(f"latency       {view.latency_s:.3f} s")
    click.echo(f"prompt hash   {view.prompt_hash}")
    click.echo("raw output:")
    click.echo(terminal_block(view.raw_output))
    if with_prompt:
        click.echo("prompt:")
        click.echo(terminal_block(view.prompt))


@runs_group.command("compare")
@click.argument("run_a", type=int)
@click.argument("run_b", type=int)
@options.json("Print as JSON.")
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
            click.echo(
                f"  {terminal_text(row.item_id)}: {terminal_text(row.key)}, "
                f"{terminal_text(row.a or '—')}, {terminal_text(row.b or '—')}"
            )


@runs_group.command("suspects")
@click.option(
    "--min-models",
    type=click.IntRange(1),
    default=2,
    show_default=True,
    help="How many different models must give the same wrong answer.",
)
@options.json("Print as JSON.")
@click.pass_context
def runs_suspects(ctx: click.Context, min_models: int, as_json: bool) -> None:
    """Items every model gets wrong with the same answer: their key may be wrong."""
    from evaluator.runs import suspect_keys

    suspects = suspect_keys(open_db(ctx), min_models=min_models)
    if printed_json_or_empty(suspects, as_json=as_json, empty="no suspect keys"):
        return
    for suspect in suspects:
        click.echo(
            f"{terminal_text(suspect.item_id)}: key {terminal_text(suspect.key)}, every model "
            f"answers {terminal_text(suspect.answer)} ({terminal_text(', '.join(suspect.models))})"
        )


@runs_group.command("table")
@click.option(
    "--shape",
    type=click.Choice(("auto", *TABLE_SHAPES)),
    default="auto",
    show_default=True,
    help="econlogicqa: accuracy by kind × shots; cflue: accuracy, F1, BLEU and ROUGE of "
    "cflue-protocol runs; auto: both, where there are runs for them.",
)
@click.option(
    "--by",
    "breakdowns",
    type=click.Choice(("subject", "length")),
    multiple=True,
    help="Also accuracy by CFLUE subject (名称) or by item length, per model (repeatable).",
)
@click.option(
    "--length-unit",
    type=click.Choice(("tokens", "chars")),
    default="tokens",
    show_default=True,
    help="--by length counts tokens of each run's tokenizer (characters for a run "
    "without a local one), or characters.",
)
@click.option(
    "--protocol",
    type=click.Choice(values(EvalProtocol)),
    help="Only runs of this protocol.",
)
@click.option("--model", "models", metavar="MODEL", multiple=True, help="Only this model.")
@click.option("--run", "run_ids", type=int, metavar="RUN_ID", multiple=True, help="Only this run.")
@click.option(
    "--format",
    "table_format",
    type=click.Choice(TABLE_FORMATS),
    default="text",
    show_default=True,
    help="Aligned text, Markdown, CSV (mean and sd apart) or LaTeX (booktabs).",
)
@options.json("Print the tables as JSON (fractions).")
@click.pass_context
def runs_table(
    ctx: click.Context,
    shape: str,
    breakdowns: tuple[str, ...],
    length_unit: str,
    protocol: str | None,
    models: tuple[str, ...],
    run_ids: tuple[int, ...],
    table_format: str,
    as_json: bool,
) -> None:
    """Paper-style tables: models as rows, mean ± sd over repeats, a random-choice baseline.

    Figures are percentages, as the papers print them (--json keeps fractions).
    """
    from evaluator.tables import SHAPES, paper_tables, render_table

    tables = paper_tables(
        open_db(ctx),
        shapes=SHAPES if shape == "auto" else (shape,),
        breakdowns=breakdowns,
        protocol=protocol,
        models=models,
        run_ids=run_ids,
        length_unit=length_unit,
    )
    if printed_json_or_empty(
        tables,
        as_json=as_json,
        empty="no finished runs to tabulate; start one with `vetbench eval --model demo`",
    ):
        return
    click.echo(
        "\n\n".join(render_table(table, table_format, clean=terminal_text) for table in tables)
    )


COMMANDS: tuple[click.Command, ...] = (eval_command, runs_group)
"""The commands this module adds to the `vetbench` group."""

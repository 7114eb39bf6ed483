"""CLI command: ``eval`` (evaluate a model on the approved set); ``runs`` is in ``runs_commands``.

Models are opened by the evaluator's registry (``evaluator.backends.registry``):
``demo`` (the embedded SmolLM2-135M-Instruct), a transformers model directory, a
hub id already in the local cache, a ``.gguf`` file, ``openai:NAME`` for an
OpenAI-compatible API, or ``scripted:FILE``.  The evaluator (and with it torch and
transformers) is imported inside the commands, so ``vetbench --help`` stays instant.
The commands print the evaluator's typed results; ``--json`` writes their ``to_json()``.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

import click

from db.vocabulary import (
    EvalMode,
    EvalProtocol,
    ItemKind,
    ItemStatus,
    RunStatus,
    values,
)
from db.words import agreeing, counted
from reviewer.cli import options
from reviewer.cli.common import EXIT_FAILURES_LEFT, EXIT_INTERRUPTED, fail, given_options, open_db
from reviewer.cli.identity import acting_person
from reviewer.cli.output import error_text, plainly_wrapped, print_json, terminal_text
from reviewer.cli.runs_commands import print_figures

if TYPE_CHECKING:
    from db.engine import Database
    from evaluator.backends.base import Backend
    from evaluator.backends.settings import BackendSettings
    from evaluator.prompts import ShotFileError
    from evaluator.response_cache import CacheUse
    from evaluator.results import RunProgress, RunRecord
    from evaluator.session import EvalChoices
    from reviewer.cli.live_progress import LiveProgress

DEFAULT_SHOTS = 5  # evaluator.session.DEFAULT_SHOTS
DEFAULT_SEED = 1234  # evaluator.prompts.DEFAULT_SHOT_SEED, EvalChoices' (the app's) seed
# Repeat the evaluator's names here, so that --help imports nothing heavy.
LAYOUT_NAMES = ("vetbench", "cflue", "econlogicqa")  # evaluator.prompts.LAYOUTS
# evaluator.extractors.EXTRACTORS
EXTRACTOR_NAMES = ("lenient", "cflue", "econlogicqa", "econlogicqa-start")


# ------------------------------------------------------------------- backend


def _open_backend(
    database: Database, spec: str, settings: BackendSettings, *, quiet: bool
) -> Backend:
    """The backend for SPEC through the evaluator's registry, its load shown as it goes (a
    model can take minutes); problems end the command."""
    from evaluator.backends.registry import open_backend
    from reviewer.cli.live_progress import LiveProgress

    loading = LiveProgress[None](f"loading the model {terminal_text(spec)}", plain=not quiet)
    try:
        return open_backend(
            spec,
            settings,
            database=database,
            notify=lambda note: loading.echo(terminal_text(note)),
        )
    finally:
        loading.close()


def _progress_line(progress: RunProgress) -> str:
    from evaluator.metrics import wilson_interval
    from evaluator.run_text import interval, number

    parts = []
    if progress.done:
        bounds = wilson_interval(progress.correct, progress.done)
        parts.append(
            f"acc {number(progress.accuracy or 0.0, percent=True)} {interval(bounds, percent=True)}"
        )
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
        if kind in by_kind:  # the last would win unseen
            fail(
                f"--shots-for gives {kind} twice ({kind}={by_kind[kind]}, {given.strip()}): "
                "give each kind once"
            )
        by_kind[kind] = int(count)
    return by_kind


@click.command("eval")
@click.option(
    "--model",
    "-m",
    metavar="MODEL",
    help="demo, a transformers model folder, a hub id in the local cache, a .gguf file, "
    "openai:NAME, or scripted:FILE (answers written in advance; scripted:oracle answers "
    "every item right, a self-test without a model).",
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
    "the cflue protocol runs 0, econlogicqa 1 and 5: --shots picks one of those].",
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
    "shot_files",
    type=options.existing_file,
    multiple=True,
    help="Take the shots from this JSONL file instead of the database (repeatable: "
    "one file per kind, as the repository's fixtures/shots_*.jsonl).",
)
@click.option(
    "--shots-from",
    metavar="SOURCE|STATUS",
    help="Draw the shots from the stored items of this source, or with this status "
    "(e.g. pending), never from the evaluated items [default: any item outside them].",
)
@click.option(
    "--allow-fewer-shots",
    is_flag=True,
    help="Run even when a kind would get fewer shots than asked (the run's label says how "
    "many it got); without it such a run is refused before anything is made.",
)
@options.statuses("Evaluate items with this status (repeatable) [default: approved].", or_all=True)
@click.option(
    "--kind",
    "kinds",
    type=click.Choice(values(ItemKind)),
    multiple=True,
    help="Only items of this kind (repeatable).",
)
@options.source
@options.release(
    "Evaluate release NAME's items exactly as frozen (edits and decisions since ignored)."
)
@click.option(
    "--limit",
    type=click.IntRange(1),
    help="At most this many items: the first N chosen, by item id as text (x:10 before "
    "x:2) with --release, else in the order they were stored.",
)
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
    help="Runs per setting, each with other shots (seed, seed+1, ...) or option order "
    "(--permute-options): figures as mean ± sd; repeats that could not differ are refused.",
)
@click.option(
    "--permute-options",
    is_flag=True,
    help="Show every item's options in a seeded order, the key remapped (per repeat).",
)
@click.option(
    "--seed", type=int, default=DEFAULT_SEED, show_default=True, help="Seed of the shot draw."
)
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
    shot_files: tuple[Path, ...],
    shots_from: str | None,
    allow_fewer_shots: bool,
    statuses: tuple[str, ...],
    kinds: tuple[str, ...],
    sources: tuple[str, ...],
    release: str | None,
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
    from evaluator.prompts import ShotFileError
    from evaluator.session import EvalChoices, check_choices, check_model, protocol_settings

    if resume_id is not None:
        _refuse_plan_options(ctx)
    database = open_db(ctx)
    if resume_id is None and not model:
        fail(
            "give --model MODEL (or --resume RUN_ID): `--model demo` is the bundled demo "
            "model; a model folder, a .gguf file and openai:NAME are the others (--help)"
        )
    if release is not None and statuses:
        fail("--release evaluates the release's items as frozen; --status does not apply")
    if shot_files and shots_from is not None:
        fail("give --shot-file or --shots-from, not both")
    actor = acting_person(ctx, None, register=False).name
    choices = EvalChoices(
        protocol=EvalProtocol(protocol),
        shots=shots,
        shots_by_kind=_shots_by_kind(shots_for),
        shot_files=shot_files,
        shots_from=shots_from,
        allow_fewer_shots=allow_fewer_shots,
        statuses=options.chosen_statuses(statuses, (ItemStatus.APPROVED.value,)),
        kinds=kinds,
        sources=sources,
        release=release,
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
    if resume_id is not None:
        run = _run_to_resume(database, resume_id, model)
        model = _recorded_spec(run)
        choices = EvalChoices(mode=run.mode)
        settings = settings.resuming(
            run.params.backend, given=given_options(ctx, options.API_FLAGS)
        )
        check_model(model, choices.mode, settings)
    else:  # before a model loads: bad choices and an empty selection are said at once
        assert model is not None
        try:
            check_choices(database, choices, model=model, settings=settings)
        except ShotFileError as error:
            _fail_shot_file(error)
        settings = protocol_settings(choices, settings)
    opened = _open_backend(database, model, settings, quiet=as_json)
    from evaluator.response_cache import CacheUse

    cache_use = CacheUse.of(opened)
    try:
        run_ids = _evaluate(database, opened, choices, actor, resume_id, as_json, cache_use)
    finally:
        opened.close()
    failed, failures_left = _print_runs(database, run_ids, as_json, cache_use.notes())
    if failed:
        sys.exit(1)
    if failures_left:
        runs = ", ".join(f"`vetbench eval --resume {run_id}`" for run_id in failures_left)
        click.echo(
            f"note: {agreeing(len(failures_left), 'a run', 'runs')} finished with predictions "
            f"that failed (see above); {runs} {agreeing(len(failures_left), 'asks', 'ask')} again "
            f"for those only (exit status "
            f"{EXIT_FAILURES_LEFT})",
            err=True,
        )
        sys.exit(EXIT_FAILURES_LEFT)


# What a run was planned with: a resumed run keeps it all (how the model runs, and --model
# naming the run's own, may be given again).
_PLAN_OPTIONS = frozenset(
    ("protocol", "shots", "shots_for", "shot_files", "shots_from", "allow_fewer_shots")
    + ("statuses", "kinds", "sources", "release", "limit", "mode", "layout", "templates_dir")
    + ("extractor", "max_new_tokens", "cflue_repo", "repeats", "permute_options", "seed")
)


def _refuse_plan_options(ctx: click.Context) -> None:
    """Refuse, in one line, what --resume cannot change: a run resumes as it was planned."""
    given = list(given_options(ctx, _PLAN_OPTIONS).values())
    if given:
        fail(
            f"--resume continues a run exactly as it was planned; {', '.join(given)} "
            f"{agreeing(len(given), 'does', 'do')} not apply (start a new run to change "
            f"{agreeing(len(given), 'it', 'them')})"
        )


def _evaluate(
    database: Database,
    opened: Backend,
    choices: EvalChoices,
    actor: str,
    resume_id: int | None,
    quiet: bool,
    cache_use: CacheUse,
) -> tuple[int, ...]:
    """Create (or resume) and execute the runs, a progress bar for each; Ctrl-C keeps
    what is finished, and a setting that cannot be used ends the command with one line."""
    from evaluator.cflue_wording import WordingError
    from evaluator.prompts import ShotFileError, TemplateError
    from evaluator.run_create import RunSetupError
    from evaluator.session import RunFailed, RunUpdate, SeriesControls, resume_series, run_series
    from reviewer.cli.live_progress import LiveProgress

    bars: dict[int, LiveProgress[RunProgress]] = {}
    current: list[RunUpdate] = []
    notes_said: dict[tuple[str, ...], int] = {}  # notes printed, and the run they came with

    def follow(update: RunUpdate) -> None:
        if update.starting:
            _close_bars(bars)
            cache_use.starting(update.run_id)
            current[:] = [update]
            progress = update.progress
            if not quiet:  # with --json the notes are in the JSON (run.params.shot_notes)
                # A series' runs start with the same notes: said in full once, not per run.
                if (first := notes_said.get(update.notes)) is not None:
                    click.echo(f"notes: as for run {first}, above", err=True)
                else:
                    for note in update.notes:
                        shown = plainly_wrapped(
                            terminal_text(note), first="note: ", hang="  ", err=True
                        )
                        click.echo(shown, err=True)
                    if update.notes:
                        notes_said[update.notes] = update.run_id
                click.echo(f"run {update.run_id}: {counted(progress.total, 'item')}", err=True)
            bars[update.run_id] = LiveProgress(
                f"run {update.run_id}",
                phase="evaluating",
                total=progress.total,
                done=progress.done,
                describe=_progress_line,
                plain=not quiet,  # --json: stderr stays as quiet as without a terminal
            )
        else:
            bars[update.run_id].advance(update.progress)

    controls = SeriesControls(on_update=follow)  # Ctrl-C stops it
    try:
        if resume_id is not None:
            outcome = resume_series(database, opened, resume_id, controls=controls)
        else:
            outcome = run_series(database, opened, choices, actor=actor, controls=controls)
    except KeyboardInterrupt:
        _close_bars(bars)
        run_id = current[0].run_id if current else resume_id
        never = current[0].never_started if current else 0
        unmade = (  # --resume finishes the one run: say what it will not make
            f"; {counted(never, 'more planned run')} of this series "
            f"{agreeing(never, 'was', 'were')} never started (--resume finishes run {run_id} "
            "only: run the evaluation again for a full series)"
            if never
            else ""
        )
        said = (
            f"interrupted: finished predictions are kept; continue with "
            f"`vetbench eval --resume {run_id}`{unmade}"
        )
        click.echo(plainly_wrapped(said, hang="  ", err=True), err=True)
        sys.exit(EXIT_INTERRUPTED)
    except ShotFileError as error:
        _close_bars(bars)
        _fail_shot_file(error)
    except (RunSetupError, TemplateError, WordingError, RunFailed) as error:
        _close_bars(bars)
        fail(str(error))
    _close_bars(bars)
    return outcome.run_ids


SHOT_FILE_PROBLEMS_SHOWN = 10


def _fail_shot_file(error: ShotFileError) -> NoReturn:
    """A shot file's problems one a line (the first ten, then how many more); one line
    when it has one problem."""
    if not error.problems:
        fail(str(error))
    click.echo(error_text(f"{error.heading}:"), err=True)
    for problem in error.problems[:SHOT_FILE_PROBLEMS_SHOWN]:
        click.echo(f"  {terminal_text(problem)}", err=True)
    more = len(error.problems) - SHOT_FILE_PROBLEMS_SHOWN
    if more > 0:
        click.echo(f"  and {more:,} more", err=True)
    sys.exit(1)


def _close_bars(bars: Mapping[int, LiveProgress[RunProgress]]) -> None:
    for bar in bars.values():
        bar.close()


def _print_runs(
    database: Database, run_ids: tuple[int, ...], as_json: bool, cache_notes: Mapping[int, str]
) -> tuple[bool, list[int]]:
    """The figures of each run made (and how many of its answers came from the response
    cache); with several, their mean ± sd per shot setting.  Whether a run failed, and the
    runs that finished with failed predictions to ask again."""
    from evaluator.run_text import number
    from evaluator.session import series_figures

    series = series_figures(database, run_ids)
    if as_json:
        print_json(series.to_json())
    else:
        for position, figures in enumerate(series.runs):
            if position:
                click.echo("")
            print_figures(figures, legend=position == len(series.runs) - 1)
            if figures.run.id in cache_notes:
                click.echo(f"cache         {cache_notes[figures.run.id]}")
        for spread in series.spreads:
            if len(spread.run_ids) < 2:
                continue
            click.echo(f"\nmean ± sd over {len(spread.run_ids)} runs ({spread.shots}-shot):")
            for name, value in spread.figures.items():
                if value.mean is not None:
                    click.echo(
                        f"  {_spread_label(name)} {number(value.mean, percent=True)} ± "
                        f"{number(value.sd, percent=True)}"
                    )
    failed = any(figures.run.status is RunStatus.FAILED for figures in series.runs)
    failures_left = [
        figures.run.id for figures in series.runs if figures.summary.infrastructure_failures
    ]
    return failed, failures_left


def _recorded_spec(run: RunRecord) -> str:
    from evaluator.backends.registry import recorded_spec

    return recorded_spec(run.backend, run.model)


def _run_to_resume(database: Database, run_id: int, model: str | None) -> RunRecord:
    from evaluator.runs import load_run, run_info

    # the run's record only: its predictions are read when it runs
    run = run_info(load_run(database, run_id))
    recorded = _recorded_spec(run)
    if model and model not in (run.model, recorded):
        fail(f"run {run_id} evaluates {recorded}, not {model}")
    if run.status is RunStatus.FINISHED and not run.error:
        click.echo(f"run {run_id} is already finished", err=True)
    return run


COMMANDS: tuple[click.Command, ...] = (eval_command,)
"""The commands this module adds to the `vetbench` group."""


def _spread_label(metric: str) -> str:
    """A figure's name as the run's own lines and the tables say it (``position bias``,
    ``BLEU-1``), not its JSON key (``position_bias``)."""
    from evaluator.tables import CFLUE_COLUMNS

    said = {
        **dict(CFLUE_COLUMNS[1:]),
        "weighted_f1": "weighted F1",
        "position_bias": "position bias",
    }
    return said.get(metric, metric)

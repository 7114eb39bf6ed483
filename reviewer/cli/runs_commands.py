"""CLI commands: ``runs`` (list, show, compare, suspects, table) and how a run's figures print.

The figures' wording is the evaluator's (``evaluator/run_text.py``, shared with the
app's evaluation screen); ``vetbench eval`` prints its runs with :func:`print_figures`.
The evaluator is imported inside the commands, so ``vetbench --help`` stays instant.
"""

from __future__ import annotations

import textwrap
from collections.abc import Mapping
from typing import TYPE_CHECKING

import click

from db.vocabulary import EvalProtocol, FailureKind, RunStatus, values
from db.words import counted
from reviewer.cli import options
from reviewer.cli.common import fail, open_db
from reviewer.cli.output import (
    column,
    plainly_wrapped,
    print_json,
    printed_json_or_empty,
    terminal_block,
    terminal_text,
    terminal_width,
)

if TYPE_CHECKING:
    from evaluator.results import Figures, PredictionView, RunFigures, RunProgress

MODEL_ROOM = 10  # the fewest cells a wrapped model label keeps in the runs list
# Repeat the evaluator's names here, so that --help imports nothing heavy.
TABLE_FORMATS = ("text", "md", "csv", "latex")  # evaluator.table_render.FORMATS
TABLE_SHAPES = ("econlogicqa", "cflue")  # evaluator.tables.SHAPES
TABLE_BREAKDOWNS = ("subject", "length")  # evaluator.table_breakdowns.BREAKDOWNS


# ---------------------------------------------------------------- formatting


def _figure_lines(figures: RunFigures) -> list[str]:
    from evaluator.run_text import extractor_text, figure_rows, interval, number, position_text

    summary = figures.summary
    lines = [
        f"accuracy      {number(summary.accuracy, percent=True)}  {interval(summary.accuracy_ci, percent=True)}"
        f"  ({summary.correct} of {summary.scored})",
        f"unparsed      {number(summary.unparsed_rate, percent=True)}  ({summary.unparsed})",
        *(
            [f"truncated     {counted(summary.truncated, 'answer')} cut off by the answer budget"]
            if summary.truncated
            else []
        ),
        *(f"{row.label:<13} {row.text(percent=True)}" for row in figure_rows(summary)),
    ]
    if summary.explained:
        lines.append(
            f"explained     {counted(summary.explained, 'answer')} with an analysis to compare"
        )
    deciding = figures.run.params.extractors[:1]
    for name, read in summary.extractors.items():
        decides = ", decides" if name in deciding and len(summary.extractors) > 1 else ""
        lines.append(
            f"{'extractor':<13} {extractor_text(terminal_text(name), read, percent=True)}{decides}"
        )
    positions = position_text(summary, percent=True, with_bias=False)
    if positions:  # a line of its own for the bias: at 80 columns the two would wrap
        lines.append(f"by key position {terminal_text(positions)}")
    if summary.position_bias is not None:
        lines.append(f"position bias {number(summary.position_bias, percent=True)} (best − worst)")
    if summary.infrastructure_failures:
        # A finished or failed run's note says why, and whether a resume can help (a
        # server's refusal, a wrong model or base URL, needs a new run instead).
        noted = figures.run.error and figures.run.status is not RunStatus.INTERRUPTED
        advice = "the note below says why" if noted else "resume the run to retry"
        lines.append(f"failed        {summary.infrastructure_failures} (infrastructure; {advice})")
    for title, breakdown in (("by kind", summary.by_kind), ("by source", summary.by_source)):
        if len(breakdown) > 1 or (breakdown is summary.by_kind and breakdown):
            lines.append(f"{title}:")
            lines += _breakdown_lines(breakdown)
    return lines


def _breakdown_lines(breakdown: Mapping[str, Figures]) -> list[str]:
    """One line per kind or source, the figures in one column however long the names:
    ``n`` counts every prediction (as ``--json`` does), the rates are over those scored,
    and infrastructure failures, left out of them, are counted at the end when any."""
    from evaluator.run_text import interval, number

    names = column([terminal_text(name) + " " for name in breakdown], at_least=18)
    return [
        f"  {shown}"
        f"n={group.n:<5} acc {number(group.accuracy, percent=True):>6} {interval(group.accuracy_ci, percent=True)}  "
        f"unparsed {number(group.unparsed_rate, percent=True)}"
        + (f"  failed {group.infrastructure_failures}" if group.infrastructure_failures else "")
        for shown, group in zip(names, breakdown.values(), strict=True)
    ]


def _run_header(figures: RunFigures) -> str:
    from evaluator.run_text import run_how, run_state

    run, progress = figures.run, figures.progress
    return (
        f"run {run.id}  {terminal_text(run.model)}  ({run_how(run)})"
        f"  {run_state(run)}  {progress.done:,}/{counted(progress.total, 'item')}"
    )


def _speed_line(progress: RunProgress) -> str | None:
    from evaluator.run_text import speed

    if progress.items_per_second is None:
        return None
    return f"speed         {speed(progress)}"


def print_figures(figures: RunFigures, *, legend: bool = True) -> None:
    """A run's figures, one a line; with ``legend``, what the terms beside accuracy mean."""
    from evaluator.run_text import legend_lines

    click.echo(plainly_wrapped(_run_header(figures), hang="  "))
    item_set = figures.run.item_set
    if item_set.release is not None:  # what a comparison of runs will say it was on
        click.echo(f"{'item set':<13} {terminal_text(item_set.label)}")
    for line in _figure_lines(figures):
        click.echo(line)
    speed = _speed_line(figures.progress)
    if speed:
        click.echo(speed)
    if figures.run.error:
        click.echo(f"note          {terminal_text(figures.run.error)}")
    if legend and (meanings := legend_lines(figures.summary)):
        click.echo("what the terms mean:")
        for line in meanings:
            click.echo(textwrap.fill(line, width=80, initial_indent="  ", subsequent_indent="    "))


def _mark(correct: bool | None, failure: str | None) -> str:
    if failure == FailureKind.INFRASTRUCTURE:
        return "!"
    if failure == FailureKind.UNPARSED:
        return "?"
    return "✓" if correct else "✗"


# ---------------------------------------------------------------------- runs


@click.group("runs", invoke_without_command=True)
@options.json("Print the runs as JSON.")
@click.pass_context
def runs_group(ctx: click.Context, as_json: bool) -> None:
    """List evaluation runs (newest first); `runs show` and `runs compare` look closer."""
    from evaluator.run_text import interval, number

    if ctx.invoked_subcommand is not None:
        return
    from evaluator.runs import list_runs

    runs = list_runs(open_db(ctx))
    if printed_json_or_empty(
        runs, as_json=as_json, empty="no runs yet; start one with `vetbench eval --model demo`"
    ):
        return
    # The headings say what a cell holds: the interval, and the mode with its shots.
    click.echo(
        f"{'run':>4}  {'status':<11} {'done':>9}  {'accuracy [95% CI]':<24} "
        f"{'mode/shots':<10} model"
    )
    for run in runs:
        accuracy = (
            f"{number(run.accuracy, percent=True)} {interval(run.accuracy_ci, percent=True)}"
            if run.accuracy is not None
            else "—"
        )
        status = run.status + ("*" if run.stale else "")
        got = run.shots_got
        shots = f"{run.mode}/{got.used_text}"
        # On a terminal a long model label wraps within its column (the demo's ran past 80).
        cells = (
            f"{run.id:>4}  {status:<11} {run.done:>4}/{run.total:<4}  {accuracy:<24} {shots:<10} "
        )
        label = terminal_text(run.model_label)
        click.echo(plainly_wrapped(label, first=cells, hang=" " * len(cells), room=MODEL_ROOM))
        # What the run's items were (a release) and the shots each kind got, where they
        # are not simply N: a line under the run, as a column would leave the model no room.
        under = [f"release {terminal_text(run.release)}"] if run.release is not None else []
        under += [] if got.plain else [got.label()]
        if under:
            click.echo(_under_the_run("; ".join(under)))
        if run.error:  # why it failed or stopped, as `runs show` says it
            click.echo(_under_the_run(f"note: {terminal_text(run.error)}"))
    if any(run.stale for run in runs):
        click.echo("* marked running, but its process is gone: resume it with --resume")


def _under_the_run(text: str) -> str:
    """A line about the run above it in the list: under its status, within 80 columns."""
    indent = " " * 6
    return textwrap.fill(
        text, 80, initial_indent=indent, subsequent_indent=indent, break_on_hyphens=False
    )


@runs_group.command("show")
@click.argument("run_id", type=int)
@click.option("--item", "item_id", metavar="ID", help="Show one item's prediction in full.")
@click.option(
    "--prompt",
    "with_prompt",
    is_flag=True,
    help="The exact prompts too: every prediction in full, or --item's.",
)
@options.json("Print as JSON.")
@click.pass_context
def runs_show(
    ctx: click.Context, run_id: int, item_id: str | None, with_prompt: bool, as_json: bool
) -> None:
    """A run's figures and its predictions, or one item's prediction (--item)."""
    from evaluator.results import RunDetail
    from evaluator.runs import all_predictions, get_prediction, run_figures

    database = open_db(ctx)
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
    if as_json:
        print_json(RunDetail(figures, tuple(predictions), with_prompts=with_prompt).to_json())
        return
    print_figures(figures)
    if with_prompt:  # every prediction in full, as --item shows one
        for view in predictions:
            click.echo("")
            _print_prediction(view, with_prompt=True)
        return
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
    from evaluator.run_text import score_items

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
    items, likelihoods = score_items(view.scores)
    if items:
        scores = ", ".join(terminal_text(item) for item in items)
        click.echo(plainly_wrapped(scores, first="scores        ", hang=" " * 14))
    for answer, value in likelihoods.items():
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
    from evaluator.run_text import number
    from evaluator.runs import compare_runs

    comparison = compare_runs(open_db(ctx), run_a, run_b)
    if as_json:
        print_json(comparison.to_json())
        return
    click.echo(
        f"runs {run_a} (A) and {run_b} (B): {counted(comparison.shared_items, 'shared item')}"
    )
    for line in comparison.item_set_notes():
        click.echo(plainly_wrapped(terminal_text(line), hang="  "))
    if (prompts := comparison.prompt_note()) is not None:
        click.echo(plainly_wrapped(terminal_text(prompts), hang="  "))
    nothing_paired = comparison.nothing_paired()
    if nothing_paired is not None:  # no rows of zeros: they would read as a comparison
        click.echo(plainly_wrapped(terminal_text(nothing_paired), hang="  "))
    else:
        click.echo(f"both right    {len(comparison.both_right)}")
        click.echo(f"both wrong    {len(comparison.both_wrong)}")
        click.echo(f"only A right  {len(comparison.only_a)}")
        click.echo(f"only B right  {len(comparison.only_b)}")
    if comparison.mcnemar_p is not None:
        click.echo(f"McNemar p     {comparison.mcnemar_p:.4f}")
    if comparison.agreement is not None:
        click.echo(f"same answer   {number(comparison.agreement, percent=True)}")
    if comparison.different_answers:
        click.echo("different answers (item: key, A, B):")
        for row in comparison.different_answers:
            click.echo(
                f"  {terminal_text(row.item_id)}: {terminal_text(row.key)}, "
                f"{terminal_text(row.a or '—')}, {terminal_text(row.b or '—')}"
            )
    if comparison.changed_items:
        where = "not compared" if nothing_paired else "left out of the figures above"
        click.echo(
            plainly_wrapped(
                f"{where}: {counted(len(comparison.changed_items), 'item')} "
                "whose key or text differs between the revisions the runs evaluated:",
                hang="  ",
            )
        )
        for changed in comparison.changed_items:
            click.echo(f"  {terminal_text(changed.line())}")


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
        click.echo(terminal_text(f"{suspect.item_id}: key {suspect.key}, {suspect.agreement}"))


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
    type=click.Choice(TABLE_BREAKDOWNS),
    multiple=True,
    help="Also each model's accuracy by item length or by CFLUE subject (名称) (repeatable).",
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
@click.option(
    "--model", "models", metavar="MODEL", multiple=True, help="Only this model (repeatable)."
)
@click.option(
    "--run",
    "run_ids",
    type=int,
    metavar="RUN_ID",
    multiple=True,
    help="Only this run (repeatable).",
)
@options.format_choice(
    "table_format",
    TABLE_FORMATS,
    "Aligned text, Markdown, CSV (mean and sd apart; each table's title and notes on "
    "stderr) or LaTeX (booktabs).",
    default="text",
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
    from evaluator.table_render import render_table
    from evaluator.tables import SHAPES, paper_tables

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
    # Where runs side by side evaluated other items, the table says so.  CSV holds nothing
    # but the table: its title (which says the release and shape, so tables printed one
    # after another can be told apart) and notes go to stderr, each just before its table.
    # Text on a terminal narrower than a table gets its columns in blocks that fit, and its
    # notes broken at blanks; piped, and in the other formats, one line per row and note.
    prefix = {"text": "note: ", "md": "> note: ", "latex": "% note: "}.get(table_format)
    width = terminal_width() if table_format == "text" else None
    for position, table in enumerate(tables):
        notes = [terminal_text(note) for note in table.notes]
        rendered = render_table(table, table_format, clean=terminal_text, width=width)
        if position:
            click.echo("")
        if prefix is None:
            click.echo(f"table: {terminal_text(table.title)}", err=True)
            for note in notes:
                click.echo(f"note: {note}", err=True)
            click.echo(rendered)
        else:
            if table_format == "text":
                hang = " " * len(prefix)
                shown = [plainly_wrapped(note, first=prefix, hang=hang) for note in notes]
            else:
                shown = [f"{prefix}{note}" for note in notes]
            click.echo("\n".join([rendered, *shown]))


COMMANDS: tuple[click.Command, ...] = (runs_group,)
"""The commands this module adds to the `vetbench` group."""

"""CLI commands: ``generate`` (candidate items from an OpenAI-compatible model) and ``rejects``.

The generation machinery (the openai package, the database layer) is imported
inside the commands, so ``vetbench --help`` stays instant.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from db.vocabulary import GenerationKind, values
from db.words import agreeing, all_of, counted
from reviewer.cli import options
from reviewer.cli.common import EXIT_INTERRUPTED, fail, open_db, read_db
from reviewer.cli.identity import acting_person
from reviewer.cli.output import (
    TerminalProgressBar,
    print_json,
    printed_json_or_empty,
    terminal_text,
)

if TYPE_CHECKING:
    from evaluator.backends.settings import ApiSettings
    from evaluator.generation.run import GenerationSummary, GenerationTask
    from evaluator.generation.templates import GenerationMode, GenerationTemplate


def _tally_line(summary: GenerationSummary) -> str:
    return (
        f"ok {summary.stored}  invalid {summary.rejected}  "
        f"retried {summary.retried}  failed {summary.failed}"
    )


def _echo_summary(summary: GenerationSummary, source: str) -> None:
    source = terminal_text(source)
    click.echo(
        f"source {source}: {summary.planned} planned, {summary.skipped} already done, "
        f"{summary.stored} stored as pending, {summary.rejected} invalid, "
        f"{summary.failed} failed"
    )
    click.echo(
        f"  {counted(summary.retried, 'retried request')}, "
        f"{counted(summary.cached, 'answer')} from the cache"
    )
    if summary.duplicates:
        click.echo(
            f"  {counted(summary.duplicates, 'suspected near-duplicate')} flagged for review"
        )
    if summary.reject_reasons:
        reasons = ", ".join(
            f"{terminal_text(name)} {count}" for name, count in summary.reject_reasons.most_common()
        )
        click.echo(f"  invalid by field: {reasons}  (see: vetbench rejects --source {source})")
    for failure in summary.failures:
        click.echo(f"  failed: {terminal_text(failure)}", err=True)
    if summary.interrupted:
        click.echo("  interrupted: run the same command again to continue", err=True)
    elif summary.failed:
        click.echo("  run the same command again to retry the failed requests", err=True)


@click.command("generate")
@click.option(
    "--articles",
    type=options.existing_file,
    help="Articles to write items from: CSV (title,text[,id]) or JSONL.",
)
@click.option(
    "--questions",
    type=options.existing_file,
    help="With --kind mcq: CFLUE JSON questions to reword (options shuffled, key remapped).",
)
@click.option(
    "--kind", type=click.Choice(values(GenerationKind)), required=True, help="Items to write."
)
@click.option("--model", required=True, help="Model name as the server knows it.")
@options.api_client
@click.option(
    "--n",
    "samples",
    type=click.IntRange(1, 100),
    default=1,
    show_default=True,
    help="Items per article or question.",
)
@click.option(
    "--source",
    help="Source name for the items [default: FILE-STEM-KIND]; ids are SOURCE:ARTICLE:N.",
)
@click.option(
    "--templates",
    type=options.existing_folder,
    help="Folder whose generate_*.txt files replace the built-in prompt templates.",
)
@click.option("--temperature", type=click.FloatRange(0, 2), default=0.7, show_default=True)
@click.option("--max-tokens", type=click.IntRange(16, 65536), default=1024, show_default=True)
@click.option(
    "--seed",
    type=int,
    default=0,
    show_default=True,
    help="Seed for the option shuffle of rewritten questions.",
)
@options.structured
@options.json("Print the summary as JSON.")
@click.pass_context
def generate_command(
    ctx: click.Context,
    articles: Path | None,
    questions: Path | None,
    kind: str,
    model: str,
    api: ApiSettings,
    samples: int,
    source: str | None,
    templates: Path | None,
    temperature: float,
    max_tokens: int,
    seed: int,
    structured: bool,
    as_json: bool,
) -> None:
    """Write candidate items with an OpenAI-compatible model; they enter review as pending.

    \b
    Ordering (EconLogicQA):  --kind ordering --articles FILE
    New MCQ from articles:   --kind mcq --articles FILE
    Reworded exam questions: --kind mcq --questions CFLUE.json   (CFLUE)

    Invalid answers are kept with the reason (vetbench rejects). Run the same
    command again to continue after Ctrl-C or failures: finished items are skipped
    and earlier answers come from the response cache.
    """
    from db.importer import source_slug
    from evaluator.generation.run import (
        GenerationAbortedError,
        GenerationSummary,
        run_generation,
        split_done,
    )
    from evaluator.generation.templates import (
        GenerationMode,
        load_generation_template,
    )
    from evaluator.openai_client import ChatClient

    if (articles is None) == (questions is None):
        fail("give either --articles FILE or --questions FILE")
    if questions is not None and kind != GenerationKind.MCQ:
        fail("--questions rewrites multiple-choice questions: use it with --kind mcq")
    if questions is not None:
        mode, input_path = GenerationMode.MCQ_REWRITE, questions
    else:
        assert articles is not None
        mode = (
            GenerationMode.ORDERING
            if kind == GenerationKind.ORDERING
            else GenerationMode.MCQ_ARTICLE
        )
        input_path = articles
    source = source or f"{source_slug(input_path)}-{'rewrite' if questions else kind}"
    if not source.strip() or ":" in source:
        fail(f"--source '{source}': must be non-empty and without ':' (ids are SOURCE:ARTICLE:N)")

    template = load_generation_template(mode, templates)
    tasks = _plan_tasks(mode, input_path, template, source, samples=samples, seed=seed)

    db = open_db(ctx)
    actor = acting_person(ctx, None, register=False).name
    todo, skipped = split_done(db, tasks)
    summary = GenerationSummary(planned=len(tasks), skipped=skipped)
    if not todo:
        if as_json:
            print_json(summary.to_json(source=source, model=model))
        else:
            click.echo(
                f"source {terminal_text(source)}: {all_of(len(tasks), 'item')} "
                f"{agreeing(len(tasks), 'is', 'are')} already stored or rejected"
            )
        return
    client = ChatClient(model, database=db, **api.client_options())

    bar = TerminalProgressBar(len(todo), "generating", describe=_tally_line)

    def stopping() -> None:
        bar.close()
        click.echo(
            "stopping: waiting for requests already sent (their answers are cached)", err=True
        )

    aborted: str | None = None
    try:
        run_generation(
            db,
            client,
            todo,
            actor=actor,
            temperature=temperature,
            max_tokens=max_tokens,
            structured=structured,
            vary_samples=samples > 1,
            summary=summary,
            on_progress=bar.advance,
            on_stopping=stopping,
        )
    except GenerationAbortedError as error:
        aborted = str(error)
    except KeyboardInterrupt:  # a second Ctrl-C while requests in flight were finishing
        summary.interrupted = True
    finally:
        bar.close()
        client.close()

    if as_json:
        print_json(summary.to_json(source=source, model=model))
    else:
        _echo_summary(summary, source)
    if aborted:
        fail(f"stopped: {aborted}")
    if summary.interrupted:
        sys.exit(EXIT_INTERRUPTED)
    if summary.failed:
        sys.exit(1)


def _plan_tasks(
    mode: GenerationMode,
    path: Path,
    template: GenerationTemplate,
    source: str,
    *,
    samples: int,
    seed: int,
) -> list[GenerationTask]:
    """What to ask for: questions to reword (``seed`` shuffles their options), or articles."""
    from evaluator.generation.inputs import read_articles, read_questions
    from evaluator.generation.run import plan_from_articles, plan_rewrites
    from evaluator.generation.templates import GenerationMode

    if mode is GenerationMode.MCQ_REWRITE:
        return plan_rewrites(
            read_questions(path), template=template, source=source, samples=samples, seed=seed
        )
    return plan_from_articles(
        read_articles(path), mode=mode, template=template, source=source, samples=samples
    )


@click.command("rejects")
@click.option("--source", "sources", multiple=True, help="Only these sources (repeatable).")
@options.json("JSON, with the raw responses.")
@click.pass_context
def rejects_command(ctx: click.Context, sources: tuple[str, ...], as_json: bool) -> None:
    """List generated items that failed validation, with the reason each was rejected."""
    from db.listings import rejected_generations

    rejects = read_db(ctx, rejected_generations, sources)
    where = f" for source {terminal_text(', '.join(sources))}" if sources else ""
    if printed_json_or_empty(rejects, as_json=as_json, empty=f"no rejected generations{where}"):
        return
    for reject in rejects:
        click.echo(
            terminal_text(reject.id)
            + f"  [{terminal_text(reject.model)}]  {terminal_text(reject.reason)}"
        )
    click.echo(counted(len(rejects), "rejected generation"))


COMMANDS: tuple[click.Command, ...] = (generate_command, rejects_command)
"""The commands this module adds to the `vetbench` group."""

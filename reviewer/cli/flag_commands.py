"""CLI commands about suspicious items: ``triage``, ``check`` and ``flags``.

- ``triage`` ranks items by suspicion score with the reasons (``reviewer.triage``) and
  prints, for each, the command that acts on it;
- ``check`` asks a strong OpenAI-compatible model for a second opinion
  (``evaluator.second_opinion``); its concerns become flags;
- ``flags names`` lists the vocabulary, ``flags show ITEM_ID`` an item's flags per
  revision, ``flags recompute`` brings every current revision's automatic and model
  flags up to date (``db.flags``).

Only click and the vocabulary are imported at module level: ``--help`` stays instant.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import click

from db.vocabulary import ALL, FLAG_DESCRIPTIONS, UNDECIDED_STATUSES, FlagName, values
from db.words import counted
from reviewer.cli import options
from reviewer.cli.common import EXIT_INTERRUPTED, fail, open_db, read_db
from reviewer.cli.identity import FOR_LEADS, acting_person, as_option
from reviewer.cli.output import (
    TerminalProgressBar,
    print_json,
    printed_json_or_empty,
    terminal_text,
    wrapped,
)

if TYPE_CHECKING:
    from db.flags import ItemFlag
    from db.item_scope import ItemScope
    from evaluator.backends.settings import ApiSettings
    from evaluator.second_opinion import CheckSummary
    from reviewer.triage import TriageEntry
REASONS_SHOWN = 4
NO_BREAK = "\u00a0"
TRIAGE_DEFAULT_LIMIT = 20


def flag_line(flag: ItemFlag, width: int | None = None) -> str:
    """``needs-media: the question refers to …`` for a terminal (model text made safe)."""
    source = "" if flag.source.value == "auto" else f" ({flag.source.value})"
    return f"{flag.name.value}{source}: {terminal_text(flag.summary, width)}"


# --- triage --------------------------------------------------------------------------------


def _echo_entry(rank: int, entry: TriageEntry, lead: str | None) -> None:
    from db.answers import format_answer
    from reviewer.triage import decide_command

    # On a narrow terminal the bracket wraps under the id, an order's key whole (its spaces
    # no-break ones while it is wrapped): "key B, A, D," then "C]" read as two keys.
    first = f"{rank:>3}. {terminal_text(entry.item_id)}  score {entry.score:.2f}  "
    key = format_answer(entry.kind, entry.key).replace(" ", NO_BREAK)
    about = f"[{entry.kind.value}, {entry.status}, revision {entry.revision}, key{NO_BREAK}{key}]"
    header = wrapped(about, first=first, hang=" " * 7)
    click.echo(first + header[len(first) :].replace(NO_BREAK, " "))
    for reason in entry.reasons[:REASONS_SHOWN]:
        # Each reason whole, under its weight on a terminal (at 80 columns a line ran to 168)
        weighted = f"       +{reason.weight:.2f} "
        click.echo(wrapped(terminal_text(reason.text), first=weighted, hang=" " * len(weighted)))
    if len(entry.reasons) > REASONS_SHOWN:
        click.echo(f"       … {len(entry.reasons) - REASONS_SHOWN} more (--json lists them all)")
    command = decide_command(entry, lead)
    if command is not None:
        prefix = "" if lead else "a lead decides: "
        click.echo(f"       → {prefix}{terminal_text(command)}")
    elif entry.compare_with:
        others = ", ".join(terminal_text(item_id) for item_id in entry.compare_with)
        click.echo(f"       → worth a look beside {others}; no decision suggested")


@click.command("triage")
@options.json("Print the ranking as JSON.")
@options.limit("The N most suspicious items.", default=TRIAGE_DEFAULT_LIMIT)
@click.option("--all", "show_all", is_flag=True, help="Every item with a score (no limit).")
@options.statuses(
    "Only items with this status (repeatable; `all` for every item) "
    "[default: those not yet decided].",
    or_all=True,
)
@options.item_filters
@as_option("Who reads it: a lead gets the decide commands in their name.")
@click.pass_context
def triage_command(
    ctx: click.Context,
    as_json: bool,
    limit: int,
    show_all: bool,
    statuses: tuple[str, ...],
    filters: options.ItemFilters,
    name: str | None,
) -> None:
    """Rank items by a suspicion score, with the reasons for each.

    The score adds up models agreeing with one another against the key (each
    model's latest run), annotators disagreeing with the key or the verdict keep
    (and flawed or sensitive verdicts on an earlier revision), and the item's flags.
    Each item comes with the `vetbench decide` command of the decision its signs
    point to (a lead runs it); `vetbench review --order suspicious` serves the same
    items in this order.  Whose judgments say what is shown to leads (--as); anyone
    else reads how many annotators disagree, so that annotators judge blind.
    """
    from reviewer.queue import QueueFilter
    from reviewer.triage import rank_items

    db = open_db(ctx)
    wanted: tuple[str, ...] | None = (
        None if ALL in statuses else (statuses or tuple(s.value for s in UNDECIDED_STATUSES))
    )
    search = filters["search"]
    queue_filter = QueueFilter(
        kinds=filters["kinds"],
        sources=filters["sources"],
        exams=filters["exams"],
        text=search.describe() if search else "",
        flags=filters["flags"],
    )
    reader = acting_person(ctx, name, register=False)
    lead = reader.name if reader.is_lead else None
    entries = rank_items(
        db,
        statuses=wanted,
        limit=None if show_all else limit,
        filters=queue_filter,
        for_lead=lead is not None,
    )
    described = queue_filter.describe()
    narrowed = "" if described == "all items" else f" among {described}"
    if printed_json_or_empty(
        entries,
        as_json=as_json,
        empty=f"no suspicious items{narrowed}: no flags, no disagreeing models or annotators",
    ):
        return
    as_lead = f" --as {terminal_text(lead)}" if lead else ""
    for rank, entry in enumerate(entries, start=1):
        _echo_entry(rank, entry, lead)
    click.echo()
    if not show_all and len(entries) == limit:  # there may be more: say these are the top
        top = counted(limit, "most suspicious item")
        click.echo(f"the {top}{narrowed}; --all lists every item with a score.")
    else:
        click.echo(f"{counted(len(entries), 'item')}{narrowed}.")
    if lead is None and any(entry.suggestion for entry in entries):
        click.echo("Decisions are a lead's: a lead runs the commands above (with --as NAME).")
    if lead is None and any(r.sign == "annotators" for e in entries for r in e.reasons):
        click.echo(wrapped(f"Who judged what is {FOR_LEADS}; here, only how many.", hang="  "))
    click.echo(
        wrapped(
            f"Review them in this order: vetbench review --order suspicious{as_lead} "
            "(then F3 for the conflicts).",
            hang="  ",
        )
    )
    if lead is not None:
        click.echo(
            wrapped(
                "Act on one flag at once: vetbench decide --flag NAME --status rejected "
                f"--reason REASON{as_lead}",
                hang="  ",
            )
        )


# --- check ---------------------------------------------------------------------------------


def _check_tally(summary: CheckSummary) -> str:
    return (
        f"flagged {summary.flagged_items}  unreadable {summary.unreadable}  failed {summary.failed}"
    )


@click.command("check")
@click.option(
    "--model",
    required=True,
    metavar="openai:NAME",
    help="The model to ask, served by an OpenAI-compatible API: openai:NAME.",
)
@options.api_client
@options.statuses(
    "Only items with this status (repeatable; `all` for every item) "
    "[default: those not yet decided]."
)
@options.item_scope
@click.option(
    "--item", "item_ids", multiple=True, metavar="ID", help="Only this item (repeatable)."
)
@options.limit()
@options.structured
@options.json("Print the summary as JSON.")
@as_option("Who asks (recorded with the flags).")
@click.pass_context
def check_command(
    ctx: click.Context,
    model: str,
    api: ApiSettings,
    statuses: tuple[str, ...],
    scope: ItemScope,
    item_ids: tuple[str, ...],
    limit: int | None,
    structured: bool,
    as_json: bool,
    name: str | None,
) -> None:
    """Ask a strong model the reviewers' questions about each item; its concerns become flags.

    Per item: is exactly one order (answer) defensible, or several? Is the key right?
    Does it depend on missing material? Is it sensitive? A wrong key becomes a
    model-disagrees flag, the rest a second-opinion flag, each with the model's
    reasons: hints for reviewers, never verdicts. Answers are cached: run the same
    command again after Ctrl-C or failures to continue; nothing is stored twice.
    """
    from evaluator.openai_client import ChatClient
    from evaluator.second_opinion import plan_checks, run_checks

    backend, _, model_name = model.partition(":")
    if backend != "openai" or not model_name.strip():
        fail(f"--model {model}: check asks an OpenAI-compatible model; write openai:NAME")
    db = open_db(ctx)
    items = plan_checks(
        db,
        statuses=options.chosen_statuses(statuses, values(UNDECIDED_STATUSES)),
        scope=scope,
        ids=item_ids,
        limit=limit,
    )
    if item_ids:
        missing = sorted(set(item_ids) - {item.id for item in items})
        if missing:
            fail(
                f"no such item (or not with that status): {', '.join(map(terminal_text, missing))}"
            )
    if not items:
        fail("no items to check (see --status, --kind, --source)")
    client = ChatClient(model_name, database=db, **api.client_options())
    try:
        # Who asks, registered on first use only once the items and the client are known
        # good: a refused command registers no one.
        actor = acting_person(ctx, name).name
        bar = TerminalProgressBar(len(items), "checking", describe=_check_tally)
        try:
            summary = run_checks(
                db, client, items, actor=actor, structured=structured, on_progress=bar.advance
            )
        finally:
            bar.close()
    finally:
        client.close()
    if as_json:
        print_json(summary.to_json())
    else:
        _echo_check(summary)
    if summary.interrupted:
        sys.exit(EXIT_INTERRUPTED)
    if summary.failed:
        sys.exit(1)


def _echo_check(summary: CheckSummary) -> None:
    click.echo(
        f"{terminal_text(summary.model)}: {summary.answered:,} of "
        f"{counted(summary.planned, 'item')} answered "
        f"({summary.cached} from the cache), {summary.unreadable} unreadable, "
        f"{summary.failed} failed"
    )
    flags = ", ".join(f"{name} {count}" for name, count in sorted(summary.new_flags.items()))
    click.echo(
        f"  {counted(summary.flagged_items, 'item')} got new flags{': ' + flags if flags else ''}"
    )
    for failure in summary.failures:
        click.echo(f"  {terminal_text(failure)}", err=True)
    if summary.failed or summary.interrupted:
        click.echo("  run the same command again to ask about the rest", err=True)
    if summary.flagged_items:
        click.echo("  see them: vetbench triage, or vetbench items --flag NAME")


# --- flags ---------------------------------------------------------------------------------


@click.group("flags")
def flags_group() -> None:
    """Item flags: what raises them, an item's flags, recomputing them."""


@flags_group.command("names")
def flags_names() -> None:
    """The flag vocabulary and what raises each flag."""
    for flag in FlagName:
        click.echo(f"{flag.value:<16} {FLAG_DESCRIPTIONS[flag]}")


@flags_group.command("show")
@click.argument("item_id")
@options.json("Print the flags as JSON.")
@click.pass_context
def flags_show(ctx: click.Context, item_id: str, as_json: bool) -> None:
    """ITEM_ID's flags, revision by revision (the current one first)."""
    from db.items import no_item_message
    from db.listings import flag_history

    history = read_db(ctx, flag_history, item_id)
    if history is None:
        fail(terminal_text(read_db(ctx, no_item_message, item_id)))
    if as_json:
        print_json(history.to_json())
        return
    for entry in history.revisions:
        label = " (current)" if entry.revision == history.current_revision else ""
        click.echo(
            f"revision {entry.revision}{label}: {'no flags' if not entry.flags else ''}".rstrip()
        )
        for flag in entry.flags:
            click.echo(f"  {flag_line(flag)}")


@flags_group.command("recompute")
@as_option("The lead recomputing.")
@click.option("--no-models", is_flag=True, help="Leave the flags from evaluation runs alone.")
@options.json("Print what changed as JSON.")
@click.pass_context
def flags_recompute(ctx: click.Context, name: str | None, no_models: bool, as_json: bool) -> None:
    """Recompute the automatic flags of every item's current revision (and the
    model-disagrees flags from the evaluation runs); leads only.

    Flags are raised when a revision is made; run this after new evaluation runs, or
    after the rules changed. Flags from `vetbench check` are kept.
    """
    from db.flag_recompute import recompute_flags
    from db.people import require_lead

    db = open_db(ctx)
    lead = acting_person(ctx, name, needs_lead=True).name
    with db.transaction() as session:
        require_lead(session, lead, to="recompute flags")
        report = recompute_flags(session, lead, models=not no_models)
    if as_json:
        print_json(report.to_json())
        return
    click.echo(
        f"{counted(report.revisions, 'current revision')}: {counted(report.added, 'flag')} added, "
        f"{report.removed} removed"
    )
    click.echo(
        "items by flag: " + ", ".join(f"{flag} {count}" for flag, count in report.by_flag.items())
    )


COMMANDS: tuple[click.Command, ...] = (triage_command, check_command, flags_group)
"""The commands this module adds to the `vetbench` group."""

"""CLI commands for gold items: ``vetbench gold add|list|remove``.

A gold item is an item revision with a known verdict and answer (``db.gold``); the
review queue mixes gold items in at ``config set gold_rate`` and for a new
annotator's first ``config set calibration_items`` items, and F2 and ``agreement``
show each annotator's gold accuracy.
"""

from __future__ import annotations

import click

from db.vocabulary import Verdict, values
from reviewer.cli import options
from reviewer.cli.common import open_db, read_db
from reviewer.cli.identity import acting_person, as_option
from reviewer.cli.output import column, printed_json_or_empty, terminal_text


@click.group("gold")
def gold_group() -> None:
    """Gold items: known verdicts and answers, mixed into queues for calibration."""


@gold_group.command("add")
@click.argument("item_id")
@click.option("--verdict", type=click.Choice(values(Verdict)), help="The known verdict.")
@click.option(
    "--answer",
    metavar="ANSWER",
    help='The right blind answer: "D,A,C,B" or "ABD" [default with --verdict keep: the key].',
)
@click.option(
    "--from-approved",
    is_flag=True,
    help="Take both from the item's approval: verdict keep, the approved key.",
)
@click.option("--note", default="", help="Why this item is gold (kept with it).")
@as_option("The lead marking it.")
@click.pass_context
def gold_add(
    ctx: click.Context,
    item_id: str,
    verdict: str | None,
    answer: str | None,
    from_approved: bool,
    note: str,
    name: str | None,
) -> None:
    """Mark ITEM_ID's current revision as gold (leads only)."""
    from db.gold import add_gold

    db = open_db(ctx)
    who = acting_person(ctx, name, needs_lead=True)
    with db.transaction() as session:
        gold = add_gold(
            session,
            who.name,
            item_id,
            verdict=verdict,
            answer=answer,
            from_approved=from_approved,
            note=note,
        )
    click.echo(
        f"{terminal_text(gold.item_id)} revision {gold.revision} is gold: verdict "
        f"{gold.verdict.value}, answer {gold.answer_text}"
    )


@gold_group.command("remove")
@click.argument("item_id")
@as_option("The lead removing it.")
@click.pass_context
def gold_remove(ctx: click.Context, item_id: str, name: str | None) -> None:
    """Stop serving ITEM_ID as gold (leads only); its record and judgments stay."""
    from db.gold import remove_gold

    db = open_db(ctx)
    who = acting_person(ctx, name, needs_lead=True)
    with db.transaction() as session:
        gold = remove_gold(session, who.name, item_id)
    click.echo(
        f"{terminal_text(gold.item_id)} is no longer gold (it was: {gold.verdict.value}, "
        f"{gold.answer_text}); judgments already made of it stay calibration judgments"
    )


@gold_group.command("list")
@click.option("--all", "include_removed", is_flag=True, help="Removed gold items too.")
@as_option("The lead listing them.")
@options.json("Print a JSON list.")
@click.pass_context
def gold_list(ctx: click.Context, include_removed: bool, name: str | None, as_json: bool) -> None:
    """The gold items, in the order they were marked (leads only: annotators are not shown
    the known answers)."""
    from db.gold import list_gold

    viewer = acting_person(ctx, name, register=False).name
    entries = read_db(ctx, list_gold, viewer, include_removed=include_removed)
    if printed_json_or_empty(
        entries,
        as_json=as_json,
        empty="none: a lead marks gold items with `vetbench gold add ITEM ...`",
    ):
        return
    ids = column([terminal_text(gold.item_id) for gold in entries])
    for item_id, gold in zip(ids, entries, strict=True):
        state = ""
        if gold.removed_at is not None:
            state = f"  removed {gold.removed_at:%Y-%m-%d} by {terminal_text(gold.removed_by)}"
        elif gold.stale:
            state = f"  stale: the item is at revision {gold.current_revision}, not served"
        elif gold.rejected:
            state = "  rejected: not served (gold remove retires it)"
        click.echo(
            f"{item_id}  r{gold.revision}  "
            f"{gold.verdict.value:<10} {gold.answer_text:<12} by {terminal_text(gold.lead)} "
            f"{gold.created_at:%Y-%m-%d}{state}".rstrip()
        )


COMMANDS: tuple[click.Command, ...] = (gold_group,)
"""The commands this module adds to the `vetbench` group."""

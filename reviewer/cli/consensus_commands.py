"""`vetbench consensus`: what the consensus model (``db.consensus``) says of each item,
and how reliable each annotator and model is.  Read-only: anyone may ask; each item's
consensus is a lead's to read (it shows what the annotators answered), anyone else
reads the outcomes' counts and the raters."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from db.words import agreeing, counted
from reviewer.cli import options
from reviewer.cli.common import open_db
from reviewer.cli.identity import FOR_LEADS, acting_person, as_option
from reviewer.cli.output import print_json, terminal_text, wrapped

if TYPE_CHECKING:
    from collections.abc import Sequence

    from db.consensus import ItemConsensus
    from db.engine import Database
    from reviewer.consensus_decisions import ConsensusStanding

DEFAULT_CONFIDENCE = 0.95  # db.consensus.DEFAULT_CONFIDENCE (imported lazily)

confidence_option = click.option(
    "--min-confidence",
    "confidence",
    type=click.FloatRange(0.5, 1.0, min_open=True, max_open=True),
    default=DEFAULT_CONFIDENCE,
    show_default=True,
    metavar="P",
    help="The confidence a decision needs: the outcome column says what it would decide.",
)


@click.command("consensus")
@options.json("Print every item's consensus and every rater's reliability as JSON.")
@confidence_option
@click.option(
    "--models/--no-models",
    default=True,
    show_default=True,
    help="Count the evaluated models' answers as raters.",
)
@options.item_scope
@options.limit("Show at most N items (the raters are always shown).")
@as_option("Who reads it: each item's consensus is shown to leads.")
@click.pass_context
def consensus_command(
    ctx: click.Context,
    as_json: bool,
    confidence: float,
    models: bool,
    scope: options.ItemScope,
    limit: int | None,
    name: str | None,
) -> None:
    """The consensus on each judged item: the most likely answer, p(key right), p(keep)
    and the judgments it rests on; each annotator's (and model's) reliability with a
    95% interval.

    Annotators' blind answers and verdicts on each item's current revision, gold items
    (known truth) and, unless --no-models, the models' answers are weighed by crowd-kit's
    one-coin Dawid-Skene (answers) and Dawid-Skene (keep or drop).  Each item's row shows
    what its annotators answered: leads (--as) read them, anyone else the counts.

    The outcome of an item a lead decided is that decision (`approved (decided)`); the
    others' outcomes are what `approve-agreed --min-confidence P` would do, and the
    summary counts them apart.  `(not backed)`: the figures would approve, but the
    people do not back the key (one judgment that is not a blind answer equal to the
    key from someone known to beat chance, or several split over it), so the item waits
    for another judgment or the lead.
    """
    from db.answers import format_answer
    from db.consensus import consensus_of
    from reviewer.agreement.rows import RELIABILITY_COLUMNS, reliability_cells
    from reviewer.cli.tables import echo_table
    from reviewer.consensus_decisions import consensus_standing

    lead = acting_person(ctx, name, register=False).is_lead
    db = open_db(ctx)
    consensus = consensus_of(db, scope, models=models)
    if as_json:
        print_json(consensus.to_json(confidence=confidence, item_answers=lead))
        return
    standing = consensus_standing(db, consensus, confidence, scope)

    def outcome_text(item: ItemConsensus) -> str:
        if (decided := standing.decided.get(item.item_id)) is not None:
            return f"{decided} (decided)"
        return (
            item.outcome(confidence).value
            + (" (gold)" if item.gold else "")
            # its figures may read "approve" (a gold answer alone): no such item ever is
            + (" (no person judged: never approved)" if item.judgments == 0 else "")
            + ("" if item.held_back(confidence) is None else " (not backed)")
        )

    items = consensus.items[:limit] if limit is not None else consensus.items
    if not consensus.items:
        # Judgments of an earlier revision do not count: they judged another text.
        click.echo(
            wrapped(
                "no item is judged at its current revision yet: the consensus rests on the "
                "judgments of each item's current text",
                hang="  ",
            )
        )
    elif not lead:
        click.echo(
            wrapped(
                f"{counted(len(consensus.items), 'judged item')}: each one's consensus shows "
                f"what its annotators answered, which is {FOR_LEADS}",
                hang="  ",
            )
        )
    else:
        echo_table(
            [
                (
                    terminal_text(item.item_id),
                    format_answer(item.kind, item.key),
                    format_answer(item.kind, item.consensus_answer),
                    f"{item.p_key_right:.2f}",
                    f"{item.p_keep:.2f}",
                    str(item.judgments) + (f"+{item.models}m" if item.models else ""),
                    outcome_text(item),
                )
                for item in items
            ],
            ("item", "key", "consensus", "p(key)", "p(keep)", "judged", "outcome"),
        )
        if len(items) < len(consensus.items):
            click.echo(f"… and {len(consensus.items) - len(items):,} more (--json lists them all)")
        if any(item.held_back(confidence) is not None for item in items):
            click.echo(wrapped(NOT_BACKED, hang="  ", width=80))
    if consensus.items:
        _echo_standing(standing, confidence, models=models)
        if models and (short := short_of_overlap_note(db, standing.plan.approvable)):
            click.echo(wrapped(short, hang="  "))
    if consensus.raters:
        click.echo()
        click.echo("Reliability (expected share of right answers, 95% interval)")
        echo_table(
            [
                (terminal_text(name), *figures)
                for name, *figures in map(reliability_cells, consensus.raters)
            ],
            RELIABILITY_COLUMNS,
        )


def _echo_standing(standing: ConsensusStanding, confidence: float, *, models: bool) -> None:
    """The outcomes' counts: the undecided items as ``approve-agreed --min-confidence``
    counts them (the same items and rule), the decided ones apart."""
    undecided = standing.undecided_counts()
    parts = [", ".join(f"{outcome} {count:,}" for outcome, count in undecided.items()) or "none"]
    if standing.unjudged:
        parts.append(f"{standing.unjudged:,} no person judged (never approved)")
    acts = f" (what `approve-agreed --min-confidence {confidence:g}` acts on)" if models else ""
    click.echo(
        wrapped(f"at confidence {confidence:g}, undecided: {'; '.join(parts)}{acts}", hang="  ")
    )
    decided = standing.decided_counts()
    if decided:
        counts = ", ".join(f"{status} {count:,}" for status, count in decided.items())
        click.echo(wrapped(f"decided by a lead: {counts}", hang="  "))


SHORT_SHOWN = 10  # ids named in the note on approvals short of the overlap


def short_of_overlap_note(db: Database, approvable: Sequence[ItemConsensus]) -> str | None:
    """What ``approve-agreed --min-confidence`` would approve with fewer judgments than
    fixed routing's ``overlap`` asks of every item (in review: the queue still serves
    them), said before anything is approved; None when there are none (under adaptive
    routing the consensus is the rule, and one judgment can be enough)."""
    from db.routing import routing_settings

    with db.session() as session:
        routing = routing_settings(session)
    short = [item for item in approvable if routing.short_of_overlap(item.judgments)]
    if not short:
        return None
    named = ", ".join(
        f"{terminal_text(item.item_id)} ({item.judgments})" for item in short[:SHORT_SHOWN]
    ) + (f", and {len(short) - SHORT_SHOWN:,} more" if len(short) > SHORT_SHOWN else "")
    return (
        f"Of the {counted(len(approvable), 'item')} to approve, {len(short):,} "
        f"{agreeing(len(short), 'has', 'have')} "
        f"fewer judgments than overlap {routing.overlap} (routing fixed: every item gets "
        f"{routing.overlap}), and the review queue still serves "
        f"{agreeing(len(short), 'it', 'them')}: {named}. The consensus would approve "
        f"{agreeing(len(short), 'it', 'them')} on those judgments alone."
    )


NOT_BACKED = (
    "(not backed): the figures would approve, but the people do not back the key (one "
    "judgment that is not a blind answer equal to the key from someone known to beat "
    "chance, or several split over it): it waits for another judgment or the lead"
)

COMMANDS: tuple[click.Command, ...] = (consensus_command,)
"""The commands this module adds to the `vetbench` group."""

"""CLI commands for reviewing: the review TUI, judging and undo without a screen.

``vetbench judge`` goes through the same service as the TUI
(``reviewer.judging.submit_judgment``), so the rules and messages are the same.
Textual and the service modules are imported inside the commands: ``--help`` stays instant.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from db.vocabulary import OPEN_STATUSES, FlagName, ItemKind, QueueOrder, Verdict, values
from reviewer.cli import options
from reviewer.cli.common import fail, open_db, print_json, terminal_text
from reviewer.cli.identity import acting_person, as_option, new_user_option

if TYPE_CHECKING:
    from db.search_query import SearchQuery
    from evaluator.backends.settings import BackendSettings


@click.command()
@as_option()
@new_user_option
@click.option("--kind", type=click.Choice(values(ItemKind)), help="Only items of this kind.")
@click.option("--source", metavar="NAME", help="Only items from this source.")
@click.option(
    "--status",
    type=click.Choice(values(OPEN_STATUSES)),
    help="Only items with this status (default: both).",
)
@click.option("--flag", type=click.Choice(values(FlagName)), help="Only items with this flag.")
@options.search
@click.option(
    "--order",
    type=click.Choice(values(QueueOrder)),
    default=QueueOrder.DEFAULT.value,
    show_default=True,
    help="suspicious: the items `vetbench triage` ranks highest come first.",
)
@options.backend  # how the evaluation screen (F4) opens models, as `vetbench eval` does
@click.pass_context
def review(
    ctx: click.Context,
    name: str | None,
    new_user: bool,
    kind: str | None,
    source: str | None,
    status: str | None,
    flag: str | None,
    search: SearchQuery | None,
    order: str,
    backend: BackendSettings,
) -> None:
    """Open the review app: answer each item blind, see the key, give a verdict.

    Every judgment is stored the moment it is given. Press ? in the app for the keys.
    The model flags (--device ... --no-chat-template) are for the evaluation screen (F4).
    """
    from reviewer.tui.app import make_app

    db = open_db(ctx)
    if source is not None:
        from db.listings import source_names

        with db.session() as session:
            sources = source_names(session)
        if source not in sources:
            known = ", ".join(sources) or "none yet (import items first: vetbench import FILE)"
            fail(f"no items come from source '{source}'; sources: {known}")
    who = acting_person(ctx, name, new_user=new_user)
    app = make_app(
        db,
        who.name,
        kind=kind,
        source=source,
        status=status,
        notice=who.notice,
        backend_settings=backend,
        flag=flag,
        order=order,
        search=search.describe() if search is not None else None,
    )
    app.run()


@click.command()
@click.argument("item_id")
@as_option()
@new_user_option
@click.option(
    "--answer", required=True, help='Your blind answer: "D,A,C,B" for orders, "ABD" for choices.'
)
@click.option("--verdict", required=True, type=click.Choice(values(Verdict)), help="Your verdict.")
@click.option(
    "--alt",
    "alternatives",
    multiple=True,
    metavar="ORDER",
    help="Another valid order (verdict ambiguous); repeat for each.",
)
@click.option("--corrected", metavar="KEY", help="The corrected key (verdict wrong-key).")
@click.option(
    "--duplicate-of", metavar="ITEM_ID", help="The item this one duplicates (verdict duplicate)."
)
@click.option("--comment", default="", help="A free comment.")
@click.option(
    "--seconds", type=float, default=0.0, show_default=True, help="Time spent on the item."
)
@click.option(
    "--revision",
    type=int,
    default=None,
    help="The revision you judged; refused if the item was edited since (default: current).",
)
@options.json("Print the stored judgment as JSON.")
@click.pass_context
def judge(
    ctx: click.Context,
    item_id: str,
    name: str | None,
    new_user: bool,
    answer: str,
    verdict: str,
    alternatives: tuple[str, ...],
    corrected: str | None,
    duplicate_of: str | None,
    comment: str,
    seconds: float,
    revision: int | None,
    as_json: bool,
) -> None:
    """Judge ITEM_ID without the app (same rules as the app)."""
    from reviewer.judging import JudgmentRefused, submit_judgment

    db = open_db(ctx)
    who = acting_person(ctx, name, new_user=new_user)
    try:
        receipt = submit_judgment(
            db,
            who.name,
            item_id,
            revision_number=revision,
            blind_answer=answer,
            verdict=verdict,
            alternative_orders=alternatives,
            corrected_key=corrected,
            duplicate_of=duplicate_of,
            comment=comment,
            seconds=seconds,
        )
    except JudgmentRefused as error:
        fail(f"not saved: {error}")
    if as_json:
        print_json(receipt.to_json())
        return
    agreement = "matches the key" if receipt.matches_key else "differs from the key"
    click.echo(
        f"saved judgment {receipt.judgment_id}: {receipt.annotator} on {receipt.item_id} "
        f"revision {receipt.revision_number}, verdict {receipt.verdict.value}; "
        f"blind answer {agreement}; item is now {receipt.item_status}"
    )
    if receipt.gold is not None:
        click.echo(receipt.gold.describe())


@click.command()
@as_option()
@click.pass_context
def undo(ctx: click.Context, name: str | None) -> None:
    """Retract your last judgment; its item returns to the queue (nothing is deleted)."""
    from reviewer.judging import JudgmentRefused, retract_last_judgment

    db = open_db(ctx)
    who = acting_person(ctx, name)
    try:
        receipt = retract_last_judgment(db, who.name)
    except JudgmentRefused as error:
        fail(str(error))
    click.echo(
        f"retracted judgment {receipt.judgment_id} ({receipt.verdict}) on {receipt.item_id} "
        f"revision {receipt.revision_number}; item is now {receipt.item_status}"
    )
    if receipt.revision_note:
        click.echo(terminal_text(receipt.revision_note))


COMMANDS: tuple[click.Command, ...] = (review, judge, undo)
"""The commands this module adds to the `vetbench` group."""

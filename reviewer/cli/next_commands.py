"""``vetbench next``: the item the queue serves a person next, claimed, for scripts.

It builds the queue the review app builds (``reviewer.queue.annotator_queue``, with the
same options) and asks it once, so a script, another front end or a simulation sees
exactly what the app would show: the item is claimed for ten minutes as the app claims
it, and only what an annotator sees before answering is printed (never the key, the
explanation or the flags: the answer stays blind).  ``vetbench judge --answer`` then
stores the blind answer and shows the key, ``judge --verdict`` judges it; an item whose
key the person saw already is served as that showed it, for the verdict.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import click

from db.answers import format_answer
from reviewer.cli import options
from reviewer.cli.identity import as_option, new_user_option
from reviewer.cli.output import print_json, terminal_block, terminal_text
from reviewer.cli.review_commands import (
    QueueChoice,
    echo_key_shown,
    judge_command,
    open_queue_for,
    queue_options,
)

if TYPE_CHECKING:
    from db.items import ItemSnapshot
    from db.json_types import JsonObject
    from db.reveals import StoredReveal


@dataclass(frozen=True)
class ServedItem:
    """What ``next`` prints: who asked, within which filters, and the item served to them
    as the blind phase shows it (``None``: nothing waits for them)."""

    annotator: str
    filters: str
    item: ItemSnapshot | None
    revealed: StoredReveal | None = None  # the item's key was shown them after this answer

    def to_json(self) -> JsonObject:
        item = self.item
        shown: JsonObject | None = None
        if item is not None:
            shown = {
                "item_id": item.id,
                "revision": item.revision,
                "kind": item.kind.value,
                "source": item.source,
                "language": item.language,
                "prompt": item.prompt,
                "choices": dict(item.choices),
            }
        served: JsonObject = {"annotator": self.annotator, "filters": self.filters, "item": shown}
        if item is not None and self.revealed is not None:  # only then: the key stays unsaid
            served["revealed"] = {
                "blind_answer": format_answer(item.kind, self.revealed.blind_answer),
                "key": format_answer(item.kind, item.key),
                "explanation": item.explanation,
            }
        return served


@click.command("next")
@as_option()
@new_user_option
@queue_options
@options.json("Print the item (or null) as JSON.")
@click.pass_context
def next_item(
    ctx: click.Context, name: str | None, new_user: bool, queue: QueueChoice, as_json: bool
) -> None:
    """Claim and print the item the review app would show you next (blind: no key).

    Answer it with `vetbench judge ITEM_ID --revision N --answer ...`, which shows the
    key, then give the verdict (`--verdict`); asking again before judging gives the same
    item, with the key once you answered it.  Says so when nothing waits for you.
    """
    from reviewer.queue import annotator_queue

    db, who = open_queue_for(ctx, queue, name, new_user=new_user)
    served_from = annotator_queue(db, who.name, **queue.keywords())
    item = served_from.fetch_next()
    revealed = None if item is None else served_from.revealed_key(item)
    served = ServedItem(served_from.annotator, served_from.filters.describe(), item, revealed)
    if as_json:
        print_json(served.to_json())
        return
    if item is None:
        click.echo(f"nothing waits for {terminal_text(served.annotator)} ({served.filters})")
        if note := served_from.held_note():
            click.echo(note)
        return
    click.echo(
        f"{terminal_text(item.id)}  {item.kind.value}, revision {item.revision}, "
        f"source {terminal_text(item.source)}"
    )
    click.echo(terminal_block(item.prompt))
    for label, text in item.choices.items():
        click.echo(f"  {label}. {terminal_text(text)}")
    if revealed is not None:  # served again after its key was shown: the verdict waits
        given = format_answer(item.kind, revealed.blind_answer)
        click.echo(f"{terminal_text(served.annotator)} answered it blind before: {given}")
        echo_key_shown(ctx, served.annotator, item, revealed.blind_answer)
        return
    judge = judge_command(ctx, served.annotator, item)
    click.echo(f'answer it blind (then the key is shown): {judge} --answer "…"')


COMMANDS: tuple[click.Command, ...] = (next_item,)
"""The commands this module adds to the `vetbench` group."""

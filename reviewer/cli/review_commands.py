"""CLI commands for reviewing: the review TUI, judging and undo without a screen.

``vetbench judge`` goes through the same service as the TUI
(``reviewer.judging.submit_judgment``), so the rules and messages are the same; its
blind answer alone is stored as the app's reveal is (``reviewer.blind_answers``).
Textual and the service modules are imported inside the commands: ``--help`` stays instant.
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypedDict

import click

from db.answers import format_answer
from db.vocabulary import (
    OPEN_STATUSES,
    FlagName,
    ItemKind,
    QueueOrder,
    Verdict,
    values,
    verdict_applies,
)
from db.words import agreeing, counted
from reviewer.cli import options
from reviewer.cli.common import (
    fail,
    given_options,
    open_db,
    remember_filter_sources,
    require_terminal,
    suggested_command,
)
from reviewer.cli.identity import acting_person, as_option, new_user_option, say_held_notice
from reviewer.cli.output import error_text, print_json, terminal_block, terminal_text, wrapped

if TYPE_CHECKING:
    from db.engine import Database
    from db.identity import Identity
    from db.items import ItemSnapshot
    from db.search_query import SearchQuery
    from evaluator.backends.settings import BackendSettings
    from reviewer.blind_answers import BlindAnswerReceipt
    from reviewer.judging import JudgmentReceipt
    from reviewer.judgment_files import BatchReceipt


@dataclass(frozen=True)
class QueueChoice:
    """The queue's options as one value: which items to serve, in which order."""

    kind: str | None
    source: str | None
    status: str | None
    flag: str | None
    order: str

    def keywords(self) -> QueueKeywords:
        """The keyword arguments of ``reviewer.queue.annotator_queue`` (and of ``make_app``,
        which passes them on) that these options set."""
        return QueueKeywords(
            kind=self.kind, source=self.source, status=self.status, flag=self.flag, order=self.order
        )


class QueueKeywords(TypedDict):
    """What :meth:`QueueChoice.keywords` returns, typed for the `**` call."""

    kind: str | None
    source: str | None
    status: str | None
    flag: str | None
    order: str


def queue_options(function: Callable[..., Any]) -> Callable[..., Any]:
    """The queue's options (``--kind --source --status --flag --order``), which
    ``review`` and ``next`` share (both serve from the same queue), received as one
    ``queue: QueueChoice``."""

    @functools.wraps(function)
    def with_queue_choice(
        *args: Any,
        kind: str | None,
        source: tuple[str, ...],
        status: str | None,
        flag: str | None,
        order: str,
        **kwargs: Any,
    ) -> Any:
        # --source's callback is the one every source filter has (checked once the database
        # is open): its second value is refused here.
        one_source = options.once(None, None, source, hint="'--source'")
        queue = QueueChoice(kind, one_source, status, flag, order)
        return function(*args, queue=queue, **kwargs)

    declared: Callable[..., Any] = with_queue_choice
    for option in reversed(
        (
            # Each takes one value (options.once refuses a second).
            options.one_of("--kind", values(ItemKind), "Only items of this kind."),
            click.option(
                "--source",
                metavar="NAME",
                multiple=True,
                callback=remember_filter_sources,
                help="Only items from this source.",
            ),
            options.one_of(
                "--status", values(OPEN_STATUSES), "Only items with this status (default: both)."
            ),
            options.one_of(
                "--flag",
                values(FlagName),
                f"Only items with this flag. {options.FLAG_NAMES}.",
                metavar="NAME",
            ),
            click.option(
                "--order",
                type=click.Choice(values(QueueOrder)),
                default=QueueOrder.DEFAULT.value,
                show_default=True,
                help="suspicious: the items `vetbench triage` ranks highest come first.",
            ),
        )
    ):
        declared = option(declared)
    return declared


def open_queue_for(
    ctx: click.Context, queue: QueueChoice, name: str | None, *, new_user: bool
) -> tuple[Database, Identity]:
    """The database (refusing a ``--source`` no item comes from) and the person ``queue``
    will serve (``--as``/``--new-user``)."""
    return open_db(ctx), acting_person(ctx, name, new_user=new_user)


@click.command()
@as_option()
@new_user_option
@queue_options
@options.search
@options.backend  # how the evaluation screen (F4) opens models, as `vetbench eval` does
@click.pass_context
def review(
    ctx: click.Context,
    name: str | None,
    new_user: bool,
    queue: QueueChoice,
    search: SearchQuery | None,
    backend: BackendSettings,
) -> None:
    """Open the review app: answer each item blind, see the key, give a verdict.

    Every judgment is stored the moment it is given. Press ? in the app for the keys.
    The model flags (--device ... --no-chat-template) are for the evaluation screen (F4).
    """
    require_terminal(
        "the review app",
        "without one, judge an item with `vetbench judge ITEM_ID --answer ... --verdict ...`, "
        "or many with `vetbench judge --from FILE` (a sheet from `vetbench export --format "
        "judging`)",
    )
    from reviewer.tui.app import make_app

    db, who = open_queue_for(ctx, queue, name, new_user=new_user)
    app = make_app(
        db,
        who.name,
        notice=who.notice,
        backend_settings=backend,
        search=search.describe() if search is not None else None,
        **queue.keywords(),
    )
    app.run()


@click.command()
@click.argument("item_id", required=False)
@as_option()
@new_user_option
@click.option("--answer", help='Your blind answer: "D,A,C,B" for orders, "ABD" for choices.')
@click.option("--verdict", type=click.Choice(values(Verdict)), help="Your verdict.")
@click.option(
    "--from",
    "from_file",
    type=click.Path(dir_okay=False, allow_dash=True),
    metavar="FILE|-",
    help="Judge many items at once from a CSV or JSONL file (- reads standard input): "
    "every row is checked first, then all are stored or none (see `export --format judging`). "
    "A row with an answer and no verdict stores your blind answer: export the sheet again to "
    "see its key and give the verdict.",
)
@options.format_choice(
    "file_format",
    ("auto", "csv", "jsonl"),
    "With --from: the file's format; auto goes by the name, then the content.",
    default="auto",
)
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
    item_id: str | None,
    name: str | None,
    new_user: bool,
    answer: str | None,
    verdict: str | None,
    from_file: str | None,
    file_format: str,
    alternatives: tuple[str, ...],
    corrected: str | None,
    duplicate_of: str | None,
    comment: str,
    seconds: float,
    revision: int | None,
    as_json: bool,
) -> None:
    """Judge ITEM_ID without the app (same rules as the app), or many items --from a file.

    \b
    One item in two steps, as the app does it: --answer alone stores your
    blind answer and shows the key and explanation; --verdict then judges
    it (with --alt, --corrected, --duplicate-of, --comment as it needs).
    Both at once judge it without showing the key first.

    \b
    --from reads a judging sheet (`vetbench export --format judging`) in
    two passes, so that answers stay blind: rows with an answer and no
    verdict store your blind answers (the sheet showed no key); export the
    sheet again to see the keys beside your stored answers, fill verdict
    and load it again.  A row with answer and verdict is a judgment; an
    answer other than the blind one you stored is refused."""
    from reviewer.blind_answers import (
        BlindAnswerReceipt,
        stored_blind_answer,
        submit_blind_answer,
    )
    from reviewer.judging import JudgmentRefused, submit_judgment

    if from_file is not None:
        _judge_from(ctx, from_file, file_format, name, new_user, as_json)
        return
    if ctx.get_parameter_source("file_format") is click.core.ParameterSource.COMMANDLINE:
        fail("--format is the format of a --from file")
    if item_id is None:  # judge with no item: one item, or a sheet (--from) of many
        raise click.UsageError(
            "give ITEM_ID (with --answer, --verdict or both), or --from FILE", ctx
        )
    if answer is None and verdict is None:
        raise click.UsageError(
            "give --answer (your blind answer, then the key is shown), --verdict, or both", ctx
        )
    if verdict is None and (alternatives or corrected or duplicate_of or comment):
        fail("--alt, --corrected, --duplicate-of and --comment go with --verdict")
    db = open_db(ctx)
    # A new person is registered with their judgment (or blind answer), in its transaction:
    # a refused one (an unknown item, a bad answer) registers no one.
    who = acting_person(ctx, name, new_user=new_user, registers_with_write=True)
    receipt: BlindAnswerReceipt | JudgmentReceipt
    try:
        if verdict is None:  # the first step: the answer alone, then the key is shown
            assert answer is not None
            receipt = submit_blind_answer(
                db,
                who.name,
                item_id,
                revision_number=revision,
                blind_answer=answer,
                seconds=seconds,
            )
        else:
            if answer is None:  # the second step: the answer stored in the first
                answer = stored_blind_answer(db, who.name, item_id, revision)
            if answer is None:
                fail(
                    f"not saved: {who.name} has not answered {item_id} blind yet: give --answer "
                    "with the verdict, or alone first to see the key"
                )
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
    say_held_notice(who)
    if as_json:
        print_json(receipt.to_json())
    elif isinstance(receipt, BlindAnswerReceipt):
        _echo_blind_answer(ctx, receipt)
    else:
        _echo_judgment(receipt)


def _echo_judgment(receipt: JudgmentReceipt) -> None:
    agreement = "matches the key" if receipt.matches_key else "differs from the key"
    click.echo(
        f"saved judgment {receipt.judgment_id}: {terminal_text(receipt.annotator)} on "
        f"{terminal_text(receipt.item_id)} revision {receipt.revision_number}, "
        f"verdict {receipt.verdict.value}; "
        f"blind answer {agreement}; item is now {receipt.item_status}"
    )
    if receipt.gold is not None:
        click.echo(receipt.gold.describe())


def _echo_blind_answer(ctx: click.Context, receipt: BlindAnswerReceipt) -> None:
    """The first step's receipt: the answer stored, then what the key shows."""
    item, person = receipt.item, terminal_text(receipt.annotator)
    given = format_answer(item.kind, receipt.reveal.blind_answer)
    where = f"{terminal_text(item.id)} revision {item.revision}"
    click.echo(
        f"stored {person}'s blind answer to {where}: {given}"
        if receipt.stored_now
        else f"{person} answered {where} blind before: {given} (the key was shown then)"
    )
    echo_key_shown(ctx, receipt.annotator, item, receipt.reveal.blind_answer)


def echo_key_shown(ctx: click.Context, annotator: str, item: ItemSnapshot, blind: str) -> None:
    """What follows a stored blind answer (``judge --answer``, ``next`` of an item whose
    key was shown): the key beside it, the explanation, and the command for the verdict."""
    same = "the blind answer is the key" if blind == item.key else "the blind answer differs"
    click.echo(f"key: {format_answer(item.kind, item.key)} ({same})")
    if item.explanation:
        click.echo("explanation:")
        click.echo(terminal_block(item.explanation))
    click.echo(f"give the verdict: {judge_command(ctx, annotator, item)} --verdict keep|…")
    click.echo(wrapped(verdict_choices(item.kind), first="  verdicts: ", hang="    "))


def verdict_choices(kind: ItemKind) -> str:
    """The verdicts an item of ``kind`` takes, each with the option it needs."""
    answer = "ORDER" if kind is ItemKind.ORDERING else "ANSWER"
    needs = {
        Verdict.AMBIGUOUS: f"--alt {answer} (each other valid one)",
        Verdict.WRONG_KEY: "--corrected KEY",
        Verdict.DUPLICATE: "--duplicate-of ITEM_ID",
    }
    taken = [verdict for verdict in Verdict if verdict_applies(verdict, kind)]
    return ", ".join(f"{v.value} {needs[v]}" if v in needs else v.value for v in taken)


def judge_command(ctx: click.Context, annotator: str, item: ItemSnapshot) -> str:
    """``vetbench judge ITEM --revision N [--as NAME]``, shown safely, for the person to
    paste: it names the database and the person as the command was given them (``--as``
    only when they gave it)."""
    acting = ("--as", annotator) if ctx.params.get("name") is not None else ()
    return terminal_text(
        suggested_command(ctx, "judge", item.id, "--revision", str(item.revision), *acting)
    )


_SINGLE_ONLY = frozenset(
    ("item_id", "answer", "verdict", "alternatives", "corrected", "duplicate_of")
    + ("comment", "seconds", "revision")
)


def _judge_from(
    ctx: click.Context,
    path: str,
    file_format: str,
    name: str | None,
    new_user: bool,
    as_json: bool,
) -> None:
    """``judge --from``: every row checked, then all stored or none."""
    from reviewer.judging import BatchRefused
    from reviewer.judgment_files import judge_from_file

    given = list(given_options(ctx, _SINGLE_ONLY).values())
    if given:
        fail(
            f"--from reads every judgment from the file; {', '.join(given)} "
            f"{agreeing(len(given), 'does', 'do')} not apply"
        )
    if path == "-" and sys.stdin.isatty():
        fail("standard input is a terminal; pipe the judgments in: … | vetbench judge --from -")
    db = open_db(ctx)
    who = acting_person(ctx, name, new_user=new_user, registers_with_write=True)
    try:
        batch = judge_from_file(db, who.name, path, format=file_format)
    except BatchRefused as error:
        click.echo(error_text(error.summary), err=True)
        for problem in error.problems:
            click.echo(f"  {terminal_text(str(problem))}", err=True)
        sys.exit(1)
    say_held_notice(who)
    if as_json:
        print_json(batch.to_json())
        return
    from collections import Counter

    stored = batch.stored
    statuses = Counter(receipt.item_status for receipt in stored.judgments)
    now = ", ".join(f"{count} {status}" for status, count in sorted(statuses.items()))
    blank = (
        f"; {counted(batch.blank, 'row')} left blank "
        f"{agreeing(batch.blank, 'was', 'were')} not judged"
        if batch.blank
        else ""
    )
    if stored.judged_before:  # a sheet loaded again after more of its rows were filled
        blank += (
            f"; {counted(stored.judged_before, 'row')} already stored "
            f"({agreeing(stored.judged_before, 'its', 'their')} judgment as it is, left alone)"
        )
    if stored.judgments or not (stored.answered or stored.repeated):
        click.echo(
            f"saved {counted(len(stored.judgments), 'judgment')} by {terminal_text(who.name)} "
            f"from {terminal_text(batch.file)}{blank}" + (f"; items now: {now}" if now else "")
        )
        blank = ""
    for receipt in stored.judgments:
        if receipt.gold is not None:
            click.echo(f"{terminal_text(receipt.item_id)}: {receipt.gold.describe()}")
    _say_blind_answers(ctx, batch, who.name, blank)


def _say_blind_answers(ctx: click.Context, batch: BatchReceipt, name: str, blank: str) -> None:
    """What ``judge --from`` did with answers given without a verdict, and what comes next."""
    stored = batch.stored
    if not (stored.answered or stored.repeated):
        return
    sheet = "FILE" if batch.file == "<stdin>" else batch.file
    again = suggested_command(ctx, "export", "--format", "judging", "--as", name, "--out", sheet)
    said = []
    if stored.answered:
        said.append(
            f"stored {counted(len(stored.answered), 'blind answer')} by {terminal_text(name)} "
            f"from {terminal_text(batch.file)}"
        )
    if stored.repeated:
        said.append(
            f"{counted(stored.repeated, 'row')} {agreeing(stored.repeated, 'gives', 'give')} the "
            "blind answer stored before and no verdict"
        )
    click.echo(
        f"{'; '.join(said)}{blank}; to see the keys and give your verdicts, export the sheet "
        f"again: {terminal_text(again)}"
    )


@click.command()
@as_option()
@click.pass_context
def undo(ctx: click.Context, name: str | None) -> None:
    """Retract your last judgment; its item returns to the queue (nothing is deleted)."""
    from reviewer.judging import retract_last_judgment

    db = open_db(ctx)
    who = acting_person(ctx, name, register=False)  # someone new has nothing to undo
    if not who.registered:
        fail(f"{who.name} is not a registered person: there is no judgment of theirs to undo")
    receipt = retract_last_judgment(db, who.name)
    click.echo(
        f"retracted judgment {receipt.judgment_id} ({receipt.verdict}) on "
        f"{terminal_text(receipt.item_id)} revision {receipt.revision_number}; "
        f"item is now {receipt.item_status}"
    )
    if receipt.revision_note:
        click.echo(terminal_text(receipt.revision_note))


COMMANDS: tuple[click.Command, ...] = (review, judge, undo)
"""The commands this module adds to the `vetbench` group."""

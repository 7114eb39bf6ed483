"""CLI commands for leads: agreement, decide, undo-decision, approve-agreed, conflicts, report.

The option choices come from ``db.vocabulary`` (standard library only), so
``vetbench --help`` does not load the database layer.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from db.visible_text import east_asian_cell_len
from db.vocabulary import DECISION_STATUSES, FlagName, ItemStatus, reason_word, values
from db.words import agreeing, counted, time_taken
from reviewer.cli import options
from reviewer.cli.common import confirmed, fail, open_db, suggested_command
from reviewer.cli.identity import AS_A_LEAD, acting_person, as_option
from reviewer.cli.output import (
    column,
    print_json,
    printed_json_or_empty,
    terminal_block,
    terminal_text,
    wrapped,
)
from reviewer.cli.tables import echo_table

if TYPE_CHECKING:
    from db.engine import Database
    from reviewer.agreement import AgreementReport
    from reviewer.agreement.bootstrap import BootstrapSettings
    from reviewer.conflict_cases import ConflictCase

DEFAULT_RESAMPLES = 1000  # reviewer.agreement.DEFAULT_RESAMPLES, not imported for --help speed
DEFAULT_SEED = 20240601  # reviewer.agreement.DEFAULT_SEED
WRONG_KEYS_SHOWN = 20
COMMENT_CHARS = 60  # a comment in a table is cut here; --json has it whole

bootstrap_option = click.option(
    "--bootstrap",
    "resamples",
    type=click.IntRange(0),
    default=DEFAULT_RESAMPLES,
    show_default=True,
    metavar="N",
    help="Bootstrap resamples for the 95% intervals (0: no intervals).",
)
seed_option = click.option(
    "--seed",
    type=int,
    default=DEFAULT_SEED,
    show_default=True,
    help="Seed of the bootstrap, so intervals are repeatable.",
)


def bootstrap_options(function: Callable[..., Any]) -> Callable[..., Any]:
    """``--bootstrap N`` and ``--seed``, received as one ``bootstrap: BootstrapSettings``."""

    @functools.wraps(function)
    def with_bootstrap(*args: Any, resamples: int, seed: int, **kwargs: Any) -> Any:
        from reviewer.agreement.bootstrap import BootstrapSettings

        settings = BootstrapSettings(resamples=resamples, seed=seed)
        return function(*args, bootstrap=settings, **kwargs)

    return bootstrap_option(seed_option(with_bootstrap))


def _echo_table(title: str, header: Sequence[str], rows: Sequence[Sequence[str]]) -> None:
    """A blank line, the table's title, then the table."""
    click.echo()
    click.echo(title)
    echo_table(rows, header)


def _echo_agreement(report: AgreementReport, *, item_answers: bool) -> None:
    from reviewer.agreement.rows import (
        BREAKDOWN_COLUMNS,
        HEADLINE_COLUMNS,
        annotator_cells,
        breakdown_table,
        headline_cells,
        pair_rows,
        percent_text,
    )

    figures = report.figures
    settings = report.settings
    intervals = (
        f"95% intervals from {settings.resamples} bootstrap resamples of items, seed {settings.seed}"
        if settings.resamples
        else "no intervals (--bootstrap 0)"
    )
    scope = terminal_text(
        ", ".join(f"{name} {', '.join(values)}" for name, values in report.filters.items())
    )
    click.echo(
        wrapped(
            f"Agreement{' for ' + scope if scope else ''}: "
            f"{counted(figures.items_compared, 'item')} compared of {figures.items_judged:,} "
            f"judged; {counted(figures.judgments, 'judgment')} by "
            f"{counted(figures.annotators, 'annotator')}; {intervals}",
            hang="  ",
        )
    )
    click.echo()
    echo_table(headline_cells(figures), HEADLINE_COLUMNS)
    notes = report.reader_notes
    if notes:
        click.echo()
        click.echo("What the figures mean")
        for note in notes:
            click.echo(wrapped(terminal_text(note), first="• ", hang="  ", width=98))

    if figures.verdict.cohen:
        _echo_table(
            "Cohen's kappa per pair of annotators (items both judged)",
            ("pair", "verdicts", "keep/drop", "n"),
            [
                (terminal_text(f"{first} / {second}"), *cells)
                for first, second, cells in pair_rows(figures)
            ],
        )

    if report.per_annotator:
        _echo_table(
            "Per annotator (agreement = share of pairs with another annotator that agree)",
            (
                "annotator",
                "judged",
                "keep rate",
                "verdicts",
                "answers",
                "key",
                "decisions",
                "median s",
                "verdicts given",
            ),
            [
                (
                    terminal_text(stats.name),
                    cells.judged,
                    cells.keep_rate,
                    *cells.agreement,
                    cells.median_seconds,
                    terminal_text(cells.verdicts_given),
                )
                for stats in report.per_annotator
                for cells in [annotator_cells(stats)]
            ],
        )

    if report.gold:
        _echo_table(
            "Gold items (calibration judgments; not in the figures above)",
            ("annotator", "gold judged", "accuracy", "answer", "verdict"),
            [
                (
                    terminal_text(entry.name),
                    f"{entry.judged:,}",
                    percent_text(entry.both),
                    percent_text(entry.answer),
                    percent_text(entry.verdict),
                )
                for entry in report.gold
            ],
        )

    for title, groups in (("By kind", report.by_kind), ("By source", report.by_source)):
        if len(groups) < 2:
            continue
        table = breakdown_table(groups)
        group_rows = [(terminal_text(name), *cells) for name, cells in table.rows]
        _echo_table(title, ("", *BREAKDOWN_COLUMNS), group_rows)
        for note in table.notes:  # what the cells' "— (1)" refer to
            click.echo(wrapped(note, first="  ", hang="      "))  # under the text after "(1) "

    from db.answers import format_answer

    wrong = figures.key.likely_wrong_keys
    click.echo()
    click.echo(
        wrapped(
            f"Likely wrong keys: {counted(len(wrong), 'item revision')} where every annotator "
            "gave the same blind answer and it is not the key",
            hang="  ",
        )
    )
    if not item_answers:
        click.echo("  (the list shows annotators' answers, so only leads see it: --as LEAD)")
        return
    for entry in wrong[:WRONG_KEYS_SHOWN]:
        status = f", decided {entry.decision}" if entry.decision else ""
        current = "" if entry.is_current else " (since revised)"
        click.echo(
            wrapped(
                f"{terminal_text(entry.item_id)} r{entry.revision}{current}: key "
                f"{format_answer(entry.kind, entry.key)}, {entry.annotators} annotators "
                f"answered {format_answer(entry.kind, entry.agreed_answer)}{status}",
                first="  ",
                hang="    ",
            )
        )
    if len(wrong) > WRONG_KEYS_SHOWN:
        click.echo(f"  … and {len(wrong) - WRONG_KEYS_SHOWN} more (--json lists them all)")


@click.command("agreement")
@options.json("Print every figure as JSON.")
@as_option("Who is asking: only leads see the likely wrong keys with annotators' answers.")
@options.item_scope
@bootstrap_options
@click.pass_context
def agreement_command(
    ctx: click.Context,
    as_json: bool,
    name: str | None,
    scope: options.ItemScope,
    bootstrap: BootstrapSettings,
) -> None:
    """Inter-annotator agreement from the stored judgments, with 95% bootstrap intervals.

    Each annotator's latest non-retracted judgment per item revision counts.
    Verdicts: Krippendorff's alpha, Fleiss' kappa, Cohen's kappa per pair, raw
    agreement (all verdicts, and keep/drop).  Blind answers: alpha per kind
    (MASI distance for multi-answer items), exact order agreement, Kendall's tau
    and W, agreement with the key, and likely wrong keys.
    """
    from reviewer.agreement import compute_agreement

    db = open_db(ctx)
    lead = acting_person(ctx, name, register=False).is_lead
    report = compute_agreement(db, scope, resamples=bootstrap.resamples, seed=bootstrap.seed)
    if as_json:
        print_json(report.to_json(item_answers=lead))
    else:
        _echo_agreement(report, item_answers=lead)


# Extra words are let through to say where a status typed after ITEM_ID goes: click would
# otherwise ask for --status and pass over the word that was meant as one.
@click.command("decide", context_settings={"allow_extra_args": True})
@click.argument("item_id", required=False)
@as_option("The lead deciding.")
@click.option(
    "--status",
    type=click.Choice(values(DECISION_STATUSES)),
    help="The decision.  [required]",
)
@click.option("--key", metavar="ANSWER", help='Approve with this corrected key, e.g. "D, A, C, B".')
@options.reason("Why (required to reject).")
@click.option("--comment", default="", help="A note kept with the decision.")
@click.option(
    "--flag",
    type=click.Choice(values(FlagName)),
    metavar="NAME",
    help="Instead of ITEM_ID: every undecided item with this flag (shows the count, asks "
    f"first). {options.FLAG_NAMES}.",
)
@click.option("--yes", "assume_yes", is_flag=True, help="With --flag: do not ask.")
@options.item_scope
@click.pass_context
def decide_command(
    ctx: click.Context,
    item_id: str | None,
    name: str | None,
    status: str | None,
    key: str | None,
    reason: str | None,
    comment: str,
    flag: str | None,
    assume_yes: bool,
    scope: options.ItemScope,
) -> None:
    """Approve or reject ITEM_ID (leads only); a later decision revises an earlier one.

    With --flag NAME instead of ITEM_ID, every undecided item whose current revision
    carries the flag is decided at once, after the count is shown and confirmed
    (--yes for scripts), e.g. `vetbench decide --flag needs-media --status rejected
    --reason flawed`. --kind and --source narrow the set.
    """
    from db.answers import format_answer
    from reviewer.adjudication import decide
    from reviewer.conflict_cases import load_case

    status = _status_given(ctx, item_id, status)
    if (item_id is None) == (flag is None):
        fail("give either ITEM_ID or --flag NAME")
    if flag is None and (scope.narrowed or assume_yes):
        fail("--kind, --source and --yes go with --flag")
    db = open_db(ctx)
    lead = acting_person(ctx, name, needs_lead=True).name
    if flag is not None:
        if key:
            fail("--key corrects one item's key; it cannot go with --flag")
        _decide_flagged(db, lead, flag, status, reason, comment, scope, assume_yes)
        return
    assert item_id is not None
    made = decide(db, lead, item_id, status, key=key, reason=reason, comment=comment)
    record = made.record
    if not made.stored:
        click.echo(
            f"{terminal_text(item_id)}: already {record.status} by {terminal_text(record.lead)} "
            f"at revision {record.revision}; nothing stored"
        )
        return
    case = load_case(db, item_id)
    kind = case.item.kind if case else "single"
    detail = f" with key {format_answer(kind, record.final_key)}" if record.final_key else ""
    corrected = f" (new revision {record.revision})" if record.corrected_key else ""
    why = f", reason {reason_word(record.reason, kind)}" if record.reason else ""
    revised = (
        f"; revises {counted(len(case.decisions) - 1, 'earlier decision')}"
        if case and len(case.decisions) > 1
        else ""
    )
    click.echo(f"{terminal_text(item_id)}: {record.status}{detail}{corrected}{why}{revised}")


_STATUS_WORDS = {"approve": "approved", "reject": "rejected"} | {
    status: status for status in values(DECISION_STATUSES)
}


def _status_given(ctx: click.Context, item_id: str | None, status: str | None) -> str:
    """``--status``, refusing words after ITEM_ID: a status typed there (``decide ID
    approve``) is told where it goes, with the command that says it."""
    if ctx.args:
        word = ctx.args[0]
        meant = _STATUS_WORDS.get(word.lower())
        if meant is None:
            raise click.UsageError(f"unexpected extra argument ({' '.join(ctx.args)})", ctx)
        reason = ["--reason", "REASON"] if meant == ItemStatus.REJECTED.value else []
        command = suggested_command(ctx, "decide", item_id or "ITEM_ID", "--status", meant, *reason)
        raise click.UsageError(f"the status goes in --status: {command}", ctx)
    if status is None:
        param = next(param for param in ctx.command.params if param.name == "status")
        raise click.MissingParameter(ctx=ctx, param=param)
    return status


@click.command("undo-decision")
@click.argument("item_id")
@as_option("The lead whose decision it is.")
@click.pass_context
def undo_decision_command(ctx: click.Context, item_id: str, name: str | None) -> None:
    """Undo your decision on ITEM_ID (leads only): the item falls back to the decision
    before it, or to what its judgments say; the undone decision stays in the history."""
    from reviewer.adjudication import undo_decision

    db = open_db(ctx)
    lead = acting_person(ctx, name, needs_lead=True).name
    undone = undo_decision(db, lead, item_id)
    click.echo(terminal_text(undone.describe()))


def _decide_flagged(
    db: Database,
    lead: str,
    flag: str,
    status: str,
    reason: str | None,
    comment: str,
    scope: options.ItemScope,
    assume_yes: bool,
) -> None:
    """``decide --flag``: count, show, ask, then decide them all in one transaction."""
    from reviewer.adjudication import decision_reason
    from reviewer.flag_decisions import decide_flagged, flagged_ids

    _require_lead_or_fail(db, lead)
    if status == "rejected" and reason is None:
        fail("rejecting needs --reason")
    # Before the count and the question: a reason that does not fit is said at once.
    decision_reason(f"the items flagged {flag}", ItemStatus(status), reason)
    ids = flagged_ids(db, flag, scope)
    if not ids:
        click.echo(f"no undecided items have the flag {flag}")
        return
    shown = ", ".join(terminal_text(item_id) for item_id in ids[:10])
    more = f" … and {len(ids) - 10} more" if len(ids) > 10 else ""
    click.echo(
        f"{counted(len(ids), 'undecided item')} {agreeing(len(ids), 'has', 'have')} the flag "
        f"{flag}: {shown}{more}"
    )
    why = f" ({reason})" if reason else ""
    if not assume_yes and not confirmed(
        f"Mark all {len(ids):,} {status}{why} as {terminal_text(lead)}?"
    ):
        click.echo("nothing decided")
        return
    decided = decide_flagged(
        db,
        lead,
        flag,
        status,
        reason=reason,
        comment=comment,
        scope=scope,
    )
    click.echo(
        f"{status} {counted(len(decided), 'item')} with the flag {flag}"
        f"{_since_counted(len(decided), len(ids))}"
    )


def _since_counted(done: int, shown: int) -> str:
    """How many more or fewer items a bulk decision took than the count ``shown`` before it
    (others decided or judged meanwhile), or nothing when the count held."""
    if done == shown:
        return ""
    more_or_fewer = "more" if done > shown else "fewer"
    return f" ({abs(done - shown):,} {more_or_fewer} than counted: others worked meanwhile)"


@click.command("approve-agreed")
@as_option("The lead approving.")
@click.option("--yes", "assume_yes", is_flag=True, help="Do not ask for confirmation.")
@click.option(
    "--min-confidence",
    "confidence",
    type=click.FloatRange(0.5, 1.0, min_open=True, max_open=True),
    metavar="P",
    help="Instead: approve the undecided items the consensus keeps with the key right, "
    "both at least this likely (e.g. 0.95); wrong keys and drops are left for a lead.",
)
@options.item_scope
@click.pass_context
def approve_agreed_command(
    ctx: click.Context,
    name: str | None,
    assume_yes: bool,
    confidence: float | None,
    scope: options.ItemScope,
) -> None:
    """Approve every agreed item (all keep, all blind answers equal the key), in one go.

    With --min-confidence P, the consensus decides instead (`vetbench consensus`): every
    undecided item people judged whose p(key right) and p(keep) are both at least P is
    approved, its audit event keeping those figures.  Items the consensus says have a
    wrong key or should be dropped are listed for a lead (F3), never decided here.
    """
    from reviewer.adjudication import approve_agreed
    from reviewer.conflict_cases import count_agreed

    db = open_db(ctx)
    lead = acting_person(ctx, name, needs_lead=True).name
    _require_lead_or_fail(db, lead)
    if confidence is not None:
        _approve_confident(db, lead, confidence, scope, assume_yes)
        return
    count = count_agreed(db, scope)
    if count == 0:
        click.echo("no agreed items to approve")
        return
    if not assume_yes and not confirmed(
        f"Approve {counted(count, 'agreed item')} as {terminal_text(lead)}?"
    ):
        click.echo("nothing approved")
        return
    approved = approve_agreed(db, lead, scope)
    click.echo(f"approved {counted(approved, 'agreed item')}{_since_counted(approved, count)}")


def _approve_confident(
    db: Database, lead: str, confidence: float, scope: options.ItemScope, assume_yes: bool
) -> None:
    """``approve-agreed --min-confidence``: count, list what goes to a lead, ask, approve."""
    from db.answers import format_answer
    from reviewer.cli.consensus_commands import short_of_overlap_note
    from reviewer.consensus_decisions import approve_confident, plan_confident

    plan = plan_confident(db, confidence, scope)
    if plan.referred:
        click.echo(
            f"{counted(len(plan.referred), 'item')} the consensus says "
            f"{agreeing(len(plan.referred), 'has', 'have')} a wrong key or should be dropped "
            f"{agreeing(len(plan.referred), 'waits', 'wait')} for a lead "
            "(F3, or `vetbench decide`):"
        )
        for item in plan.referred:
            suggested = (
                f", suggested key {format_answer(item.kind, item.suggested_key)}"
                if item.suggested_key
                else ""
            )
            click.echo(
                f"  {terminal_text(item.item_id)}: {item.outcome(confidence).value}"
                f"{suggested} (p(key right) {item.p_key_right:.2f}, p(keep) {item.p_keep:.2f})"
            )
    count = len(plan.approvable)
    waiting = (
        f"; {counted(plan.uncertain, 'uncertain item')} "
        f"{agreeing(plan.uncertain, 'waits', 'wait')} for more judgments"
    )
    if count == 0:
        click.echo(f"no items the consensus keeps with the key right at {confidence:g}{waiting}")
        return
    click.echo(
        f"{counted(count, 'item')} the consensus keeps with the key right at "
        f"{confidence:g}{waiting}"
    )
    if short := short_of_overlap_note(db, plan.approvable):
        click.echo(wrapped(short, hang="  "))
    if not assume_yes and not confirmed(
        f"Approve {counted(count, 'item')} as {terminal_text(lead)}?"
    ):
        click.echo("nothing approved")
        return
    done = approve_confident(db, lead, confidence, scope)
    click.echo(
        f"approved {counted(done.approved, 'item')} by the consensus at {confidence:g}"
        f"{_since_counted(done.approved, count)}"
    )


def _echo_item_text(case: ConflictCase) -> None:
    """The item as the annotators read it: prompt, events or choices, explanation."""
    item = case.item
    # On a terminal each part wraps under its own indent (a scenario ran to 111 columns).
    for line in item.prompt.splitlines() or [""]:
        click.echo(wrapped(terminal_text(line), first="    ", hang="    "))
    for label, choice in item.choices.items():
        shown = f"      {terminal_text(label)}. "
        click.echo(wrapped(terminal_text(choice), first=shown, hang=" " * len(shown)))
    if item.explanation:
        explanation = f"explanation: {terminal_text(item.explanation)}"
        click.echo(wrapped(explanation, first="    ", hang="      "))


def _echo_case(case: ConflictCase) -> None:
    from db.answers import format_answer

    item = case.item
    click.echo(
        f"{terminal_text(item.id)}  [{item.kind.value}, {terminal_text(item.source)}, "
        f"revision {item.revision}]  key {format_answer(item.kind, item.key)}"
    )
    _echo_item_text(case)
    click.echo("  judgments:")
    names = column([terminal_text(j.annotator) for j in case.judgments], at_least=12)
    for name, judgment in zip(names, case.judgments, strict=True):
        extras = []
        if judgment.alternative_orders:
            extras.append(
                "also valid "
                + " | ".join(format_answer(item.kind, o) for o in judgment.alternative_orders)
            )
        if judgment.corrected_key:
            extras.append(f"key should be {format_answer(item.kind, judgment.corrected_key)}")
        if judgment.duplicate_of:
            extras.append(f"duplicate of {terminal_text(judgment.duplicate_of)}")
        if judgment.comment:
            comment = " ".join(judgment.comment.split())
            extras.append(f"“{terminal_text(comment, COMMENT_CHARS)}”")
        mark = "=" if judgment.matches_key else "≠"
        said = (
            f"    {name} {mark} {format_answer(item.kind, judgment.blind_answer):<14} "
            f"{judgment.verdict:<10} {time_taken(judgment.seconds):>7}  "
        )
        extra = "; ".join(extras)
        hang = " " * east_asian_cell_len(said)  # a long detail wraps under the details
        click.echo(wrapped(extra, first=said, hang=hang) if extra else said.rstrip())


@click.command("conflicts")
@options.json("Print the cases as JSON.")
@as_option("The lead asking (judgments are shown to leads only).")
@options.item_scope
@options.limit()
@click.pass_context
def conflicts_command(
    ctx: click.Context, as_json: bool, name: str | None, scope: options.ItemScope, limit: int | None
) -> None:
    """The conflict queue: items whose judgments disagree, each judgment side by side.

    The judgments are shown to leads; anyone else (registered or not) gets the count.
    """
    from reviewer.conflict_cases import conflict_queue, is_lead

    db = open_db(ctx)
    reader = acting_person(ctx, name, register=False).name
    if not is_lead(db, reader):
        _echo_conflict_count(db, reader, scope, as_json=as_json)
        return
    cases = conflict_queue(db, scope, limit=limit)
    if printed_json_or_empty(cases, as_json=as_json, empty="no conflicts"):
        return
    for number, case in enumerate(cases):
        if number:
            click.echo()
        _echo_case(case)
    click.echo()
    click.echo(
        f"{counted(len(cases), 'conflict')}; resolve with `vetbench decide ITEM_ID --status ...`"
    )


def _echo_conflict_count(
    db: Database, reader: str, scope: options.ItemScope, *, as_json: bool
) -> None:
    """What a non-lead may read of the conflict queue: how many, not whose judgments."""
    from collections import Counter

    from reviewer.conflict_cases import conflict_queue

    why = "the judgments side by side are for leads, so annotators judge blind"
    if as_json:
        fail(f"conflicts --json lists every judgment: {why} ({AS_A_LEAD})")
    cases = conflict_queue(db, scope)
    kinds = Counter(case.item.kind.value for case in cases)
    by_kind = f" ({', '.join(f'{n} {kind}' for kind, n in sorted(kinds.items()))})" if kinds else ""
    click.echo(
        wrapped(
            f"{counted(len(cases), 'conflict')}{by_kind}; {terminal_text(reader)} is not a "
            f"lead: {why} ({AS_A_LEAD})",
            hang="  ",
        )
    )


@click.command("report")
@click.option(
    "--out",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write the Markdown to this file (replaced whole or not at all) instead of printing it.",
)
@bootstrap_options
@as_option("Who reads it: the likely wrong keys are listed for leads, counted for others.")
@click.pass_context
def report_command(
    ctx: click.Context, out: Path | None, bootstrap: BootstrapSettings, name: str | None
) -> None:
    """A Markdown review report: items by source, removals by reason, final counts, agreement."""
    from evaluator.exports.atomic_write import is_stdout, write_file
    from reviewer.report import build_report

    lead = acting_person(ctx, name, register=False).is_lead
    report = build_report(
        open_db(ctx), resamples=bootstrap.resamples, seed=bootstrap.seed, item_answers=lead
    )
    text = terminal_block(report)
    if out is None or is_stdout(out):
        click.echo(text, nl=False)
        return
    write_file(out, lambda handle: handle.write(text))
    click.echo(f"wrote the review report to {terminal_text(str(out))}")


COMMANDS: tuple[click.Command, ...] = (
    agreement_command,
    decide_command,
    undo_decision_command,
    approve_agreed_command,
    conflicts_command,
    report_command,
)
"""The commands this module adds to the `vetbench` group."""


def _require_lead_or_fail(db: Database, lead: str, why: str = "") -> None:
    """Stop the command with a clear refusal unless ``lead`` is a lead."""
    from db.people import PermissionDenied, require_lead

    with db.session() as session:
        try:
            require_lead(session, lead)
        except PermissionDenied as error:
            fail(f"{error} ({why})" if why else str(error))

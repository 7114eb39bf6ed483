"""CLI commands for the database, items and people: init, import, export, stats, items, users.

The option choices come from ``db.vocabulary``, which imports only the standard
library, so ``vetbench --help`` does not load the database layer.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from db.vocabulary import ItemKind, ItemStatus, values
from db.words import agreeing, all_of, counted, few_of
from reviewer.cli import options
from reviewer.cli.common import fail, open_db, read_db, suggested_command
from reviewer.cli.identity import acting_person, as_option
from reviewer.cli.output import (
    error_text,
    print_json,
    printed_json_or_empty,
    terminal_text,
    wrapped,
)
from reviewer.cli.tables import echo_table

if TYPE_CHECKING:
    from db.engine import Database
    from db.import_report import FileReport, ImportProgress, ImportReport

IMPORT_FORMATS = ("auto", "econlogicqa", "cflue", "jsonl")
FILE_EXPORT_FORMATS = ("econlogicqa", "cflue", "jsonl")
JUDGING = "judging"  # a sheet of the items waiting for a person, for `judge --from`
EXPORT_FORMATS = (*FILE_EXPORT_FORMATS, JUDGING, "lm-eval", "hf")
PROGRESS_MIN_BYTES = 1 << 20  # smaller files import faster than a bar can be read
REVISED_SHOWN = 20


class _ImportProgressBars:
    """One progress bar per large file, on stderr, fed by the importer's progress callback."""

    def __init__(self) -> None:
        self._bar: Any = None
        self._path: str | None = None
        self._shown = 0

    def __call__(self, event: ImportProgress) -> None:
        # A bar is for a person watching; in a pipe or a log it would only add noise.
        if event.phase != "reading" or event.total < PROGRESS_MIN_BYTES or not sys.stderr.isatty():
            return
        if event.path != self._path:
            self.close()
            self._path = event.path
            self._bar = click.progressbar(
                length=event.total, label=self._label(event), file=sys.stderr, width=30
            )
            self._bar.__enter__()
            self._shown = 0
        self._bar.label = self._label(event)
        self._bar.update(event.done - self._shown)
        self._shown = event.done

    @staticmethod
    def _label(event: ImportProgress) -> str:
        return terminal_text(f"{Path(event.path).name}: {event.phase}").ljust(40)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.__exit__(None, None, None)
            self._bar = None


def _tally_row(name: str, tally: Any) -> str:
    return (
        f"  {name:<10} {tally.added:>8} {tally.updated:>8} {tally.unchanged:>10} "
        f"{tally.duplicates:>11}"
    )


def _id_list(ids: list[str]) -> str:
    shown = ", ".join(terminal_text(item_id) for item_id in ids[:REVISED_SHOWN])
    more = len(ids) - REVISED_SHOWN
    return shown + (f" … and {more} more (--json lists them all)" if more > 0 else "")


def _echo_file_report(report: FileReport) -> None:
    path = terminal_text(report.path)
    if report.error is not None:
        click.echo(error_text(report.error), err=True)
    elif report.rejected:
        invalid = counted(report.invalid, "invalid record")
        click.echo(
            error_text(
                f"{report.path}: {invalid}; nothing imported from this file "
                "(--skip-invalid imports the valid ones)"
            ),
            err=True,
        )
    for line in report.problem_lines():
        click.echo(f"  {terminal_text(line)}", err=True)
    for note in report.notes:
        click.echo(f"note: {terminal_text(note)}", err=True)
    if not report.stored:
        return
    tally = report.tally
    sources = sorted(report.record_sources) or [report.source or ""]
    click.echo(
        f"{path} ({report.format}, {'source' if len(sources) == 1 else 'sources'} "
        f"{terminal_text(', '.join(sources))}): {counted(report.records, 'record')}"
    )
    if report.invalid:
        click.echo(f"  skipped {counted(report.invalid, 'invalid record')} (listed above)")
    if report.none_valid:
        click.echo("  no valid record: nothing imported from this file")
        return
    if not tally.added and not tally.updated:
        click.echo(
            f"  nothing new: {all_of(tally.unchanged, 'valid record')} "
            f"{agreeing(tally.unchanged, 'is', 'are')} unchanged"
        )
        return
    click.echo(f"  {'kind':<10} {'added':>8} {'updated':>8} {'unchanged':>10} {'duplicates':>11}")
    for kind in values(ItemKind):
        if kind in report.by_kind:
            click.echo(_tally_row(kind, report.by_kind[kind]))
    click.echo(_tally_row("total", tally))
    if report.revised:
        click.echo(f"  revised ({len(report.revised)}): {_id_list(report.revised)}")
    if report.back_to_review:
        click.echo(
            f"  back to review, their judgments and decisions kept in the history "
            f"({len(report.back_to_review)}): {_id_list(report.back_to_review)}"
        )
    if report.metadata_updated:
        click.echo(
            f"  metadata updated (meta, source_ref, language; no new revision, status kept) "
            f"({len(report.metadata_updated)}): {_id_list(report.metadata_updated)}"
        )


def _echo_import_summary(report: ImportReport) -> None:
    if len(report.files) < 2:
        return
    tally = report.tally
    stored = sum(1 for file in report.files if file.imported)
    click.echo(
        f"{stored} of {len(report.files)} files imported: {tally.added} added, "
        f"{tally.updated} updated, {tally.unchanged} unchanged, {report.invalid} invalid, "
        f"{counted(tally.duplicates, 'suspected duplicate')}"
    )


@click.command("init")
@click.pass_context
def init_command(ctx: click.Context) -> None:
    """Create the database (or bring an existing one's schema up to date).

    On an existing database it also puts back what was changed around vetbench: SQLite
    triggers someone dropped, and undecided item statuses that do not follow from the
    judgments.  Every other command except import and users add refuses a database that
    does not exist, so a mistyped --db never creates an empty one.
    """
    from db.guards import restore_sqlite_triggers

    root = ctx.find_root()
    existed = _database_exists(root.obj.get("db"))
    database = open_db(ctx, create=True)
    where = terminal_text(database.url_for_people)
    # A SQLite file's triggers can be dropped by anyone who holds it: put back what is missing.
    restored: list[str] = []
    if not database.read_only:
        with database.engine.begin() as connection:
            restored = restore_sqlite_triggers(connection)
    if restored:
        click.echo(f"{where}: restored missing triggers: {', '.join(restored)}")
    if existed and not database.read_only:
        from db.item_status import recompute_undecided_statuses

        # A status written around vetbench (raw SQL on PostgreSQL) holds until the item is
        # judged again; what its judgments say is put back.
        if mended := recompute_undecided_statuses(database):
            click.echo(
                f"{where}: {counted(mended, 'item status', 'item statuses')} did not follow "
                "from the judgments and were recomputed"
            )
    if existed:
        _report_undecided_decisions(database, where)
        click.echo(f"{where} is a vetbench database; its schema is up to date")
    else:
        click.echo(f"created the vetbench database {where}")
        importing = terminal_text(suggested_command(ctx, "import", "FILE"))
        reviewing = terminal_text(suggested_command(ctx, "review", "--as", "NAME"))
        click.echo(
            f"next: {importing} (EconLogicQA CSV, CFLUE JSON or vetbench JSONL), then {reviewing}"
        )


def _report_undecided_decisions(database: Database, where: str) -> None:
    """Name the items approved or rejected with no decision in force (written while the
    status rule was taken away): no one decided them, so nothing here can put them right;
    a lead decides each again."""
    from db.decisions import decided_without_decision

    with database.session() as session:
        forged = decided_without_decision(session)
    if forged:
        click.echo(
            f"{where}: {counted(len(forged), 'item')} approved or rejected with no decision "
            f"in force: {terminal_text(few_of(forged, 10))}; a lead decides "
            f"{agreeing(len(forged), 'it', 'each')} again (vetbench decide ITEM_ID --status ...)"
        )


def _database_exists(value: str | None) -> bool:
    """True unless ``value`` names a SQLite file that is not there yet (servers always exist)."""
    from db.engine import resolve_db_url

    url = resolve_db_url(value)
    if url.get_backend_name() != "sqlite" or not url.database:
        return True
    return Path(url.database).exists()


def _remove_unused_database(database: Database) -> None:
    """A bad file must not leave behind the empty database its import created."""
    if database.remove_if_unused():
        click.echo(
            f"note: nothing was imported; removed the database "
            f"{terminal_text(database.url_for_people)} this import created",
            err=True,
        )


@click.command("import")
@click.argument(
    "paths",
    nargs=-1,
    required=True,
    type=click.Path(exists=True, dir_okay=False, allow_dash=True),
)
@options.format_choice(
    "format_name",
    IMPORT_FORMATS,
    "File format; auto looks at the content and the file name.",
    default="auto",
)
@click.option(
    "--source",
    metavar="NAME",
    help="Source name for the items and their ids (NAME:row) [default: the file name].",
)
@click.option(
    "--skip-invalid", is_flag=True, help="Import the valid records and list the invalid ones."
)
@click.option(
    "--revise-reviewed",
    is_flag=True,
    help="Let changed records revise items that were already judged or decided: each becomes "
    "a new revision that goes back to review (refused without this flag).",
)
@click.option(
    "--replace-unrelated",
    is_flag=True,
    help="Let a record whose text has little in common with its stored item's (another "
    "question under the same id) become a new revision of it (refused without this flag: "
    "usually another batch in a file of the same name, which wants its own --source).",
)
@as_option(
    "Who imports (named in the audit trail; a lead's import decides the approved and "
    "rejected statuses a JSONL export states)."
)
@options.json("Print what each file did as JSON.")
@click.option(
    "--duplicate-threshold",
    type=click.FloatRange(0, 100),
    metavar="N",
    help="Similarity 0-100 from which an item is a suspected duplicate "
    "[default: the duplicate_threshold setting, 90].",
)
@click.pass_context
def import_command(
    ctx: click.Context,
    paths: tuple[str, ...],
    format_name: str,
    source: str | None,
    skip_invalid: bool,
    revise_reviewed: bool,
    replace_unrelated: bool,
    name: str | None,
    as_json: bool,
    duplicate_threshold: float | None,
) -> None:
    """Import items from EconLogicQA CSV, CFLUE JSON or vetbench JSONL files (- reads stdin).

    Every record is checked; a file with an invalid record imports nothing (unless
    --skip-invalid) and every problem is listed with its line or record.  Importing
    the same file again adds nothing; a changed record becomes a new revision, listed
    in the summary; a record that holds another question than its stored item is
    refused unless --replace-unrelated.  A changed record of an item already judged or
    decided is refused unless --revise-reviewed; an id of another source is always
    refused.  Creates the
    database if it does not exist.  Exits with status 1 when a file could not be
    imported (with --skip-invalid: when none of a file's records was valid).  Each file
    is stored on its own: Ctrl-C lists the files stored before it, stores nothing of the
    file being read (one being committed is stored first) and exits with status 130.
    """
    from db.errors import VetbenchError
    from db.importer import ImportInterrupted, import_files

    if source is not None and not source.strip():
        fail("--source must not be empty")
    if list(paths).count("-") > 1:
        fail("- (standard input) can be read only once")
    existed = _database_exists(ctx.find_root().obj.get("db"))
    database = open_db(ctx, create=True)
    bars = _ImportProgressBars()
    try:
        report = import_files(
            database,
            list(paths),
            format=format_name,
            source=source,
            skip_invalid=skip_invalid,
            revise_reviewed=revise_reviewed,
            replace_unrelated=replace_unrelated,
            duplicate_threshold=duplicate_threshold,
            actor=acting_person(ctx, name, register=False).name,
            progress=bars,
        )
    except ImportInterrupted as interrupted:
        # What the files before it stored is listed as usual; 130 is a shell's Ctrl-C status.
        bars.close()
        _report_import(interrupted.report, database, existed=existed, as_json=as_json)
        # The text report says it in the interrupted file's line, unless that file is stored.
        if as_json or interrupted.interrupted_file_stored:
            click.echo(error_text(str(interrupted)), err=True)
        sys.exit(130)
    except VetbenchError:  # a refused option (ImportOptionError): the group says it
        if not existed:
            _remove_unused_database(database)
        raise
    finally:
        bars.close()
    _report_import(report, database, existed=existed, as_json=as_json)
    if not report.ok:
        sys.exit(1)


def _report_import(
    report: ImportReport, database: Database, *, existed: bool, as_json: bool
) -> None:
    """Print what each file did, and remove a database this import created and left empty."""
    if as_json:
        print_json(report.to_json())
    else:
        for file_report in report.files:
            _echo_file_report(file_report)
        _echo_import_summary(report)
    if not existed and not any(file.imported for file in report.files):
        _remove_unused_database(database)


def _describe_export(summary: Any, format_name: str, out: Path) -> str:
    count = getattr(summary, "count", None)
    by_kind = getattr(summary, "by_kind", None) or {}
    kinds = ", ".join(f"{n} {kind}" for kind, n in sorted(by_kind.items()))
    what = counted(count, "item") if count is not None else "items"
    where = "standard output" if str(out) == "-" else terminal_text(str(out))
    message = f"exported {what}{f' ({kinds})' if kinds else ''} to {where} as {format_name}"
    usage = getattr(summary, "command", "")  # the folder exports say how to use them
    return f"{message}\n{terminal_text(usage)}" if usage else message


@click.command("export")
@click.argument(
    "out_argument",
    metavar="[OUT]",
    required=False,
    type=click.Path(path_type=Path, allow_dash=True),
)
@options.format_choice(
    "format_name",
    EXPORT_FORMATS,
    "econlogicqa (ordering items), cflue (MCQ items), jsonl (everything, with history), "
    "judging (a CSV of the items waiting for --as NAME, to fill and load with `judge --from`: "
    "no key shown until your blind answer is loaded, then the next sheet shows it), "
    "lm-eval (a task folder), hf (a dataset folder) [default: jsonl for OUT.jsonl, cflue for "
    "OUT.json].",
    required=False,
)
@click.option(
    "--out",
    type=click.Path(path_type=Path, allow_dash=True),
    help="File to write, - for standard output (a folder for lm-eval and hf); or give it as OUT.",
)
@options.statuses(
    "Export items with this status (repeatable; `all` for every item) [default: approved]."
)
@options.kind
@options.source
@options.release("Export release NAME's items exactly as frozen, stamped with its name and hash.")
@click.option(
    "--shots",
    type=click.IntRange(0),
    metavar="N",
    help="Solved examples before each question (lm-eval only) [default: the task's default].",
)
@as_option("With --format judging: whose items (those waiting for NAME).")
@click.pass_context
def export_command(
    ctx: click.Context,
    out_argument: Path | None,
    format_name: str | None,
    out: Path | None,
    statuses: tuple[str, ...],
    kinds: tuple[str, ...],
    sources: tuple[str, ...],
    release: str | None,
    shots: int | None,
    name: str | None,
) -> None:
    """Export items (by default the approved ones) to a file in one of the import formats,
    or as an lm-eval task or a Hugging Face dataset: `vetbench export approved.jsonl`.

    \b
    A judging sheet keeps answers blind, in two passes:
    1. items whose key you have not seen come with the key and explanation
       columns empty: fill `answer` (your blind answer), load the sheet with
       `vetbench judge --from SHEET`: it stores your blind answers;
    2. export again: those items now show their key, explanation and your
       stored answer (which stays as it is); fill `verdict` (and what it
       needs) and load it again.
    A row with answer and verdict is a judgment in either pass."""
    from evaluator.exports.atomic_write import is_stdout
    from evaluator.exports.item_files import export_items
    from evaluator.exports.selection import Selection

    if out is not None and out_argument is not None:
        fail(f"two destinations, {out_argument} and --out {out}: give one")
    out = out or out_argument
    if out is None:
        fail("no destination: `vetbench export OUT` (or --out OUT; - for standard output)")
    format_name = format_name or _format_of_destination(out)
    if shots is not None and format_name != "lm-eval":
        fail("--shots applies to --format lm-eval only")
    if release is not None and statuses:
        fail("--release exports the release's items as frozen; --status does not apply")
    to_stdout = is_stdout(out)
    if name is not None and format_name != JUDGING:
        fail("--as applies to --format judging only")
    if format_name == JUDGING:
        _export_judging(ctx, out, name, statuses, release, kinds, sources)
        return
    if to_stdout and format_name not in FILE_EXPORT_FORMATS:
        fail(f"--out - (standard output) takes a file format; {format_name} writes a folder")
    database = open_db(ctx)
    selection = Selection(
        options.chosen_statuses(statuses, (ItemStatus.APPROVED.value,)), kinds, sources, release
    )
    if format_name == "lm-eval":
        from evaluator.exports.lm_eval import export_lm_eval

        if shots is None:  # the task's own default
            summary: Any = export_lm_eval(database, out, selection=selection)
        else:
            summary = export_lm_eval(database, out, selection=selection, shots=shots)
    elif format_name == "hf":
        from evaluator.exports.hf_dataset import export_hf
        from reviewer.releases import changelog_against_previous

        summary = export_hf(
            database,
            out,
            selection=selection,
            changelog=changelog_against_previous(database, release) if release else None,
        )
    else:
        summary = export_items(database, out, format=format_name, selection=selection)
    # With the items on standard output, the summary goes to stderr.
    click.echo(_describe_export(summary, format_name, out), err=to_stdout)


def _format_of_destination(out: Path) -> str:
    """--format where OUT's extension leaves one choice: ``.jsonl`` is jsonl, ``.json``
    cflue.  A ``.csv`` is an EconLogicQA file or a judging sheet, and anything else a
    folder or standard output, so those must say."""
    from db.formats import econlogicqa, format_of_name
    from evaluator.exports.atomic_write import is_stdout

    named = format_of_name(out.name)
    if named is not None and named != econlogicqa.NAME:
        return named
    could_be: tuple[str, ...] = EXPORT_FORMATS
    where = str(out)
    if is_stdout(out):
        where, could_be = "standard output", (*FILE_EXPORT_FORMATS, JUDGING)
    elif named == econlogicqa.NAME:
        could_be = (econlogicqa.NAME, JUDGING)
    choices = f"{', '.join(could_be[:-1])} or {could_be[-1]}"
    fail(f"which format? {where} could be {choices}: say it with --format")


def _export_judging(
    ctx: click.Context,
    out: Path,
    name: str | None,
    statuses: tuple[str, ...],
    release: str | None,
    kinds: tuple[str, ...],
    sources: tuple[str, ...],
) -> None:
    """``export --format judging``: the items waiting for a person, as a sheet to fill."""
    from evaluator.exports.atomic_write import is_stdout, write_file
    from reviewer.judgment_files import waiting_items, write_judging_sheet

    if release is not None or statuses:
        fail(
            "--format judging lists the items waiting for --as NAME; --status and --release "
            "do not apply"
        )
    # An export writes nothing to the database: it never registers anyone.
    who = acting_person(ctx, name, register=False)
    if not who.registered:
        fail(
            f"{who.name} is not a registered person, so no items wait for them (register with "
            f"`vetbench users add {who.name}`, or --new-user on review and judge)"
        )
    database = open_db(ctx)
    items = waiting_items(database, who.name, kinds=kinds, sources=sources)
    if not items:
        fail(f"no items are waiting for {terminal_text(who.name)}")
    count = write_file(
        out,
        lambda handle: write_judging_sheet(items, handle, annotator=who.name),
    )
    where = "standard output" if is_stdout(out) else terminal_text(str(out))
    sheet = "FILE" if is_stdout(out) else str(out)
    load = suggested_command(ctx, "judge", "--from", sheet, "--as", who.name)
    revealed = sum(1 for row in items if row.seen is not None)
    blind = count - revealed
    parts = []
    if blind:
        parts.append(
            f"{counted(blind, 'item')} without {agreeing(blind, 'its', 'their')} key: fill "
            "answer blind (the next sheet shows the key)"
        )
    if revealed:
        parts.append(
            f"{counted(revealed, 'item')} with {agreeing(revealed, 'its', 'their')} key and "
            "your blind answer: fill verdict"
        )
    click.echo(
        f"exported {counted(count, 'item')} waiting for {terminal_text(who.name)} to {where} "
        f"as a judging sheet; {'; '.join(parts)}; then: {terminal_text(load)}",
        err=is_stdout(out),
    )


@click.command("stats")
@options.json("Print the figures as JSON.")
@click.pass_context
def stats_command(ctx: click.Context, as_json: bool) -> None:
    """Counts of items (by kind, status, source), judgments, duplicates, decisions, people."""
    from db.stats import database_stats

    figures = read_db(ctx, database_stats)
    if as_json:
        print_json(figures.to_json())
        return
    for name, value in figures.to_json().items():
        if isinstance(value, dict):
            listed = (
                ", ".join(f"{terminal_text(key)} {count}" for key, count in value.items()) or "none"
            )
            click.echo(wrapped(listed, first=f"{name.replace('_', ' ')}: ", hang="  "))
        else:
            click.echo(f"{name.replace('_', ' ')}: {value}")


@click.command("items")
@options.statuses("Only items with this status (repeatable; `all` for every item, the default).")
@options.item_filters
@options.limit()
@options.json("Print a JSON list.")
@click.pass_context
def items_command(
    ctx: click.Context,
    statuses: tuple[str, ...],
    filters: options.ItemFilters,
    limit: int | None,
    as_json: bool,
) -> None:
    """List items: id, kind, status, the start of the text and their flags, in import order.

    --search uses the database's own full-text index (SQLite FTS5 with trigrams,
    PostgreSQL pg_trgm): words of three or more characters are found through the
    index, shorter ones by reading the indexed text. It looks in the question and the
    choices (events) unless --in says otherwise; --whole and --not-in refine it (see
    the README's Search section).
    """
    from db.listings import list_items, preview
    from db.search import search_note
    from reviewer.display_text import display_text

    with open_db(ctx).session() as session:
        note = search_note(session) if filters["search"] is not None else None
        if note:
            click.echo(f"note: {note}", err=True)
        listed = list_items(
            session,
            statuses=list(options.chosen_statuses(statuses, ())),
            limit=limit,
            **filters,
        )
    if printed_json_or_empty(listed, as_json=as_json, empty="no items match", err=True):
        return
    rows = [
        (
            terminal_text(entry.item.id),
            entry.item.kind.value,
            entry.item.status,
            # as read (entities decoded, LaTeX as Unicode); --json keeps the stored text
            terminal_text(preview(display_text(entry.item.prompt)))
            + (f"  [{', '.join(names)}]" if names else ""),
        )
        for entry in listed
        for names in [sorted({flag.name.value for flag in entry.flags})]
    ]
    # kind and status as wide as their longest words (truefalse, in_review) in every listing
    echo_table(rows, minimum_widths=(0, 9, 9))


COMMANDS: tuple[click.Command, ...] = (
    init_command,
    import_command,
    export_command,
    stats_command,
    items_command,
)
"""The commands this module adds to the `vetbench` group."""

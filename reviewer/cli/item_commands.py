"""CLI commands for items and people: import, export, stats, items, users.

The option choices come from ``db.vocabulary``, which imports only the standard
library, so ``vetbench --help`` does not load the database layer.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from db.vocabulary import ALL, ItemKind, ItemStatus, Role, values
from reviewer.cli.common import (
    default_user,
    fail,
    kind_option,
    open_db,
    print_json,
    source_option,
)

if TYPE_CHECKING:
    from db.importer import FileReport, ImportProgress, ImportReport

IMPORT_FORMATS = ("auto", "econlogicqa", "cflue", "jsonl")
FILE_EXPORT_FORMATS = ("econlogicqa", "cflue", "jsonl")
EXPORT_FORMATS = (*FILE_EXPORT_FORMATS, "lm-eval", "hf")
PROGRESS_MIN_RECORDS = 1000  # smaller files import faster than a bar can be read
PREVIEW_CHARS = 72


class _ImportProgressBars:
    """One progress bar per large file, on stderr, fed by the importer's progress callback."""

    def __init__(self) -> None:
        self._bar: Any = None
        self._path: str | None = None
        self._shown = 0

    def __call__(self, event: ImportProgress) -> None:
        # A bar is for a person watching; in a pipe or a log it would only add noise.
        if event.total < PROGRESS_MIN_RECORDS * 3 or not sys.stderr.isatty():
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
        return f"{Path(event.path).name}: {event.phase}".ljust(40)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.__exit__(None, None, None)
            self._bar = None


def _tally_row(name: str, tally: Any) -> str:
    return (
        f"  {name:<10} {tally.added:>8} {tally.updated:>8} {tally.unchanged:>10} "
        f"{tally.duplicates:>11}"
    )


def _echo_file_report(report: FileReport) -> None:
    if report.error is not None:
        click.echo(f"error: {report.error}", err=True)
    elif report.rejected:
        click.echo(
            f"error: {report.path}: {report.invalid} invalid record"
            f"{'s' if report.invalid != 1 else ''}; nothing imported from this file "
            "(--skip-invalid imports the valid ones)",
            err=True,
        )
    for line in report.problem_lines():
        click.echo(f"  {line}", err=True)
    for note in report.notes:
        click.echo(f"note: {note}", err=True)
    if not report.stored:
        return
    tally = report.tally
    click.echo(f"{report.path} ({report.format}, source {report.source}): {report.records} records")
    if report.invalid:
        click.echo(f"  skipped {report.invalid} invalid records (listed above)")
    if not tally.added and not tally.updated:
        click.echo(f"  nothing new: all {tally.unchanged} valid records are unchanged")
        return
    click.echo(f"  {'kind':<10} {'added':>8} {'updated':>8} {'unchanged':>10} {'duplicates':>11}")
    for kind in values(ItemKind):
        if kind in report.by_kind:
            click.echo(_tally_row(kind, report.by_kind[kind]))
    click.echo(_tally_row("total", tally))


def _echo_import_summary(report: ImportReport) -> None:
    if len(report.files) < 2:
        return
    tally = report.tally
    stored = sum(1 for file in report.files if file.stored)
    click.echo(
        f"{stored} of {len(report.files)} files imported: {tally.added} added, "
        f"{tally.updated} updated, {tally.unchanged} unchanged, {report.invalid} invalid, "
        f"{tally.duplicates} suspected duplicates"
    )


@click.command("import")
@click.argument(
    "paths",
    nargs=-1,
    required=True,
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
)
@click.option(
    "--format",
    "format_name",
    type=click.Choice(IMPORT_FORMATS),
    default="auto",
    show_default=True,
    help="File format; auto looks at the content and the file name.",
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
    "--duplicate-threshold",
    type=click.FloatRange(0, 100),
    metavar="N",
    help="Similarity 0-100 from which an item is a suspected duplicate "
    "[default: the duplicate_threshold setting, 90].",
)
@click.pass_context
def import_command(
    ctx: click.Context,
    paths: tuple[Path, ...],
    format_name: str,
    source: str | None,
    skip_invalid: bool,
    duplicate_threshold: float | None,
) -> None:
    """Import items from EconLogicQA CSV, CFLUE JSON or vetbench JSONL files.

    Every record is checked first; a file with an invalid record imports nothing
    (unless --skip-invalid) and every problem is listed with its line or record.
    Importing the same file again adds nothing; changed records become new revisions.
    Exits with status 1 when something could not be imported.
    """
    from db.importer import import_files
    from reviewer.item_status import refresh_item_status

    if source is not None and not source.strip():
        fail("--source must not be empty")
    database = open_db(ctx)
    bars = _ImportProgressBars()
    try:
        report = import_files(
            database,
            list(paths),
            format=format_name,
            source=source,
            skip_invalid=skip_invalid,
            duplicate_threshold=duplicate_threshold,
            actor=default_user(),
            progress=bars,
            refresh_status=refresh_item_status,
        )
    finally:
        bars.close()
    for file_report in report.files:
        _echo_file_report(file_report)
    _echo_import_summary(report)
    if not report.ok:
        sys.exit(1)


def _describe_export(summary: Any, format_name: str, out: Path) -> str:
    count = getattr(summary, "count", None)
    by_kind = getattr(summary, "by_kind", None) or {}
    kinds = ", ".join(f"{n} {kind}" for kind, n in sorted(by_kind.items()))
    what = f"{count} items" if count is not None else "items"
    message = f"exported {what}{f' ({kinds})' if kinds else ''} to {out} as {format_name}"
    usage = getattr(summary, "command", "")  # the folder exports say how to use them
    return f"{message}\n{usage}" if usage else message


@click.command("export")
@click.option(
    "--format",
    "format_name",
    type=click.Choice(EXPORT_FORMATS),
    required=True,
    help="econlogicqa (ordering items), cflue (MCQ items), jsonl (everything, with history), "
    "lm-eval (a task folder), hf (a dataset folder).",
)
@click.option(
    "--out",
    type=click.Path(path_type=Path),
    required=True,
    help="File to write, - for standard output (a folder for lm-eval and hf).",
)
@click.option(
    "--status",
    type=click.Choice((ALL, *values(ItemStatus))),
    default="approved",
    show_default=True,
    help="Export items with this status, or all.",
)
@kind_option
@source_option
@click.option(
    "--shots",
    type=click.IntRange(0),
    metavar="N",
    help="Solved examples before each question (lm-eval only) [default: the task's default].",
)
@click.pass_context
def export_command(
    ctx: click.Context,
    format_name: str,
    out: Path,
    status: str,
    kinds: tuple[str, ...],
    sources: tuple[str, ...],
    shots: int | None,
) -> None:
    """Export items (by default the approved ones) to a file in one of the import formats,
    or as an lm-eval task or a Hugging Face dataset."""
    from evaluator.exports.atomic_write import is_stdout
    from evaluator.exports.item_files import ExportError, export_items

    if shots is not None and format_name != "lm-eval":
        fail("--shots applies to --format lm-eval only")
    to_stdout = is_stdout(out)
    if to_stdout and format_name not in FILE_EXPORT_FORMATS:
        fail(f"--out - (standard output) takes a file format; {format_name} writes a folder")
    database = open_db(ctx)
    try:
        if format_name == "lm-eval":
            from evaluator.exports.lm_eval import export_lm_eval

            if shots is None:  # the task's own default
                summary: Any = export_lm_eval(
                    database, out, status=status, kind=kinds, source=sources
                )
            else:
                summary = export_lm_eval(
                    database, out, status=status, kind=kinds, source=sources, shots=shots
                )
        elif format_name == "hf":
            from evaluator.exports.hf_dataset import export_hf

            summary = export_hf(database, out, status=status, kind=kinds, source=sources)
        else:
            summary = export_items(
                database,
                out,
                format=format_name,
                status=status,
                kinds=kinds,
                sources=sources,
            )
    except (ExportError, ValueError, OSError) as error:
        fail(str(error))
    # With the items on standard output, the summary goes to stderr.
    click.echo(_describe_export(summary, format_name, out), err=to_stdout)


@click.command("stats")
@click.option("--json", "as_json", is_flag=True, help="Print the figures as JSON.")
@click.pass_context
def stats_command(ctx: click.Context, as_json: bool) -> None:
    """Counts of items (by kind, status, source), judgments, duplicates, decisions, people."""
    from db.stats import database_stats

    with open_db(ctx).session() as session:
        figures = database_stats(session)
    if as_json:
        print_json(figures)
        return
    for name, value in figures.items():
        if isinstance(value, dict):
            listed = ", ".join(f"{key} {count}" for key, count in value.items()) or "none"
            click.echo(f"{name.replace('_', ' ')}: {listed}")
        else:
            click.echo(f"{name.replace('_', ' ')}: {value}")


def _preview(text: str, width: int = PREVIEW_CHARS) -> str:
    line = " ".join(text.split())
    return line if len(line) <= width else line[: width - 1] + "…"


@click.command("items")
@click.option(
    "--status", type=click.Choice(values(ItemStatus)), help="Only items with this status."
)
@kind_option
@source_option
@click.option("--limit", type=click.IntRange(1), metavar="N", help="At most N items.")
@click.option("--json", "as_json", is_flag=True, help="Print a JSON list.")
@click.pass_context
def items_command(
    ctx: click.Context,
    status: str | None,
    kinds: tuple[str, ...],
    sources: tuple[str, ...],
    limit: int | None,
    as_json: bool,
) -> None:
    """List items: id, kind, status and the start of the text, in import order."""
    from itertools import islice

    from db.items import iter_items

    with open_db(ctx).session() as session:
        items = list(
            islice(
                iter_items(
                    session,
                    statuses=[status] if status else None,
                    kinds=list(kinds) or None,
                    sources=list(sources) or None,
                ),
                limit,
            )
        )
    if as_json:
        print_json(
            [
                {
                    "id": item.id,
                    "kind": item.kind.value,
                    "status": item.status,
                    "source": item.source,
                    "revision": item.revision,
                    "suspected_duplicate_of": item.suspected_duplicate_of,
                    "preview": _preview(item.prompt),
                }
                for item in items
            ]
        )
        return
    if not items:
        click.echo("no items match", err=True)
        return
    id_width = max(len(item.id) for item in items)
    for item in items:
        click.echo(
            f"{item.id:<{id_width}}  {item.kind.value:<9}  {item.status:<9}  {_preview(item.prompt)}"
        )


@click.group("users")
def users_group() -> None:
    """Register people and list them."""


@users_group.command("add")
@click.argument("name")
@click.option(
    "--role",
    type=click.Choice(values(Role)),
    default=Role.ANNOTATOR.value,
    show_default=True,
    help="Their role.",
)
@click.pass_context
def users_add(ctx: click.Context, name: str, role: str) -> None:
    """Register NAME as an annotator or a lead (or change their role)."""
    from db.audit import record_event
    from db.people import ensure_person, find_person
    from db.vocabulary import Role

    name = name.strip()
    if not name:
        fail("a person needs a non-empty name")
    with open_db(ctx).transaction() as session:
        person = find_person(session, name)
        if person is None:
            ensure_person(session, name, Role(role))
            click.echo(f"added {name} as {role}")
        elif person.role == role:
            click.echo(f"{name} is already registered as {role}")
        else:
            old_role = person.role
            person.role = role
            session.add(person)
            record_event(session, default_user(), "set-role", name, old=old_role, new=role)
            click.echo(f"{name} is now a {role} (was {old_role})")


@users_group.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print a JSON list.")
@click.pass_context
def users_list(ctx: click.Context, as_json: bool) -> None:
    """List registered people with their roles."""
    from sqlmodel import col, select

    from db.models import Person

    with open_db(ctx).session() as session:
        people = list(session.exec(select(Person).order_by(col(Person.name))))
    if as_json:
        print_json(
            [
                {"name": p.name, "role": p.role, "created_at": p.created_at.isoformat()}
                for p in people
            ]
        )
        return
    if not people:
        click.echo("no people registered yet: vetbench users add NAME --role annotator|lead")
        return
    width = max(len(p.name) for p in people)
    for person in people:
        click.echo(f"{person.name:<{width}}  {person.role}")


def register(cli: click.Group) -> None:
    """Add this module's commands to the `vetbench` group."""
    for command in (
        import_command,
        export_command,
        stats_command,
        items_command,
        users_group,
    ):
        cli.add_command(command)

"""CLI commands for the trust in everyone's work: the audit trail, backups and the
one-time SQL of a team (PostgreSQL) database.

Only click and light helpers are imported at module level (``--help`` stays instant).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from pathlib import Path

import click

from reviewer.cli import options
from reviewer.cli.common import fail, open_db
from reviewer.cli.identity import FOR_LEADS, acting_person, as_option
from reviewer.cli.output import printed_json_or_empty, terminal_text, wrapped

_RELATIVE_TIME = re.compile(r"^(\d+)\s*([mhdw])$")
_UNITS = {"m": "minutes", "h": "hours", "d": "days", "w": "weeks"}


def _parse_since(text: str) -> datetime:
    """``2026-11-30``, ``2026-11-30T14:00`` (UTC unless a zone is given), or ``2h``/``3d`` ago."""
    relative = _RELATIVE_TIME.match(text.strip())
    if relative:
        amount, unit = relative.groups()
        return datetime.now(UTC) - timedelta(**{_UNITS[unit]: int(amount)})
    try:
        moment = datetime.fromisoformat(text.strip())
    except ValueError:
        fail(
            f"--since '{text}': give a date (2026-11-30), a time (2026-11-30T14:00) or 30m/2h/3d/1w"
        )
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def _described(value: object) -> str:
    """A payload value as people read it: a list's items and an object's ``name: value``
    pairs without Python's quotes, a value of none left out of an object."""
    if isinstance(value, list | tuple):
        return f"[{', '.join(_described(item) for item in value)}]"
    if isinstance(value, dict):
        pairs = (f"{name}: {_described(item)}" for name, item in value.items() if item is not None)
        return f"{{{', '.join(pairs)}}}"
    return str(value)


def _describe_changes(changes: Mapping[str, object]) -> str:
    """``name=value, ...``; a field of none (no reason, no guidelines yet) is left out."""
    return ", ".join(
        f"{terminal_text(key)}={terminal_text(_described(value))}"
        for key, value in changes.items()
        if value is not None
    )


@click.command("audit")
@click.option(
    "--item", "item_id", metavar="ID", help="Only events about this item (or file, run:N)."
)
@click.option("--person", metavar="NAME", help="Only events by this person.")
@click.option(
    "--since", metavar="TIME", help="Only events since TIME: 2026-11-30, 2026-11-30T14:00, 2h, 3d."
)
@options.limit("Only the newest N events.")
@options.json("Print the events as JSON.")
@as_option("Who reads it: a lead reads every judgment's verdict and blind answer.")
@click.pass_context
def audit_command(
    ctx: click.Context,
    item_id: str | None,
    person: str | None,
    since: str | None,
    limit: int | None,
    as_json: bool,
    name: str | None,
) -> None:
    """The audit trail: every write, with who, when, the login and host, and what changed.

    Oldest first.  On PostgreSQL the database role and the time are the server's own.
    Another's verdict and blind answer are shown to leads only, as in the conflict queue,
    so that annotators judge blind.
    """
    from db.audit import read_audit

    moment = _parse_since(since) if since else None
    reader = acting_person(ctx, name, register=False)
    with open_db(ctx).session() as session:
        entries = [
            entry.as_read_by(reader.name, lead=reader.is_lead)
            for entry in read_audit(
                session, target=item_id, person=person, since=moment, limit=limit
            )
        ]
    if printed_json_or_empty(entries, as_json=as_json, empty="no audit events match"):
        return
    # Every value below came from someone else (a name, an id, a comment): shown, never sent
    # to the terminal as control characters, so no line can be wiped or forged.
    for entry in entries:
        where = terminal_text(entry.os_login)
        if entry.host:
            where += f"@{terminal_text(entry.host)}"
        if entry.db_role is not None:
            where += f", role {terminal_text(entry.db_role)}"
        target = f" {terminal_text(entry.target)}" if entry.target else ""
        withheld = " (verdict and answer: for leads)" if entry.is_withheld else ""
        # On a narrow terminal what the event changed wraps under it, indented.
        event = (
            f"{entry.created_at:%Y-%m-%d %H:%M:%S}Z  {terminal_text(entry.actor)}  "
            f"{terminal_text(entry.action)}{target}  [{where}]  "
            f"{_describe_changes(entry.changes)}{withheld}"
        )
        click.echo(wrapped(event.rstrip(), hang="    "))
    if any(entry.is_withheld for entry in entries):
        click.echo(f"Others' verdicts and blind answers are {FOR_LEADS}.")


@click.command("backup")
@click.argument("destination", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--force", is_flag=True, help="Replace DESTINATION if it exists.")
@click.pass_context
def backup_command(ctx: click.Context, destination: Path, force: bool) -> None:
    """Copy the SQLite database to DESTINATION safely, even while others write to it.

    Uses SQLite's online backup, then checks the copy's integrity.  For PostgreSQL
    use pg_dump (see the README's team section).
    """
    from db.backup import backup_sqlite
    from db.words import counted

    # The database as it is: a backup never upgrades its schema first (the copy taken
    # before a vetbench upgrade is the one to go back to).
    db = open_db(ctx, migrate=False)
    result = backup_sqlite(db, destination, replace=force)
    click.echo(
        f"backed up {terminal_text(result.source)} to {terminal_text(result.destination)}: "
        f"{result.pages:,} pages, "
        f"{counted(result.judgments, 'judgment')}, integrity ok"
    )


@click.command("setup-postgres")
@click.option(
    "--owner", required=True, metavar="ROLE", help="The role that owns the schema and adds people."
)
@click.option(
    "--apply",
    "apply_now",
    is_flag=True,
    help="Run the SQL on --db now (as a superuser or the owner), then create or upgrade the schema.",
)
@click.option(
    "--no-createrole",
    is_flag=True,
    help="Give OWNER no CREATEROLE (refused if it has it): a superuser adds people. The safe "
    "choice on PostgreSQL 15 and older.",
)
@click.option(
    "--accept-createrole-risk",
    is_flag=True,
    help="On PostgreSQL 15 and older, give OWNER CREATEROLE anyway, knowing it can then grant "
    "itself pg_execute_server_program: a superuser in effect.",
)
@click.pass_context
def setup_postgres_command(
    ctx: click.Context,
    owner: str,
    apply_now: bool,
    no_createrole: bool,
    accept_createrole_risk: bool,
) -> None:
    """The SQL a database administrator runs once for a team database.

    It creates the group roles vetbench_annotator and vetbench_lead, lets OWNER add
    people to them, makes OWNER own the schema, and (for tables that exist) grants
    each group what it may do, with row-level security.  Printed unless --apply.
    Every statement can run again safely.

    OWNER gets CREATEROLE to add people. On PostgreSQL 15 and older that makes it a
    superuser in effect, so the setup refuses there unless --no-createrole (a superuser
    adds people) or --accept-createrole-risk says which you want.
    """
    from db.setup_postgres import OwnerCreateRole, apply_setup, setup_script

    if no_createrole and accept_createrole_risk:
        fail("--no-createrole and --accept-createrole-risk ask for opposite things: choose one")
    choice = (
        OwnerCreateRole.WITHHOLD
        if no_createrole
        else OwnerCreateRole.GIVE_DESPITE_RISK
        if accept_createrole_risk
        else OwnerCreateRole.GIVE
    )
    if not apply_now:
        click.echo(setup_script(owner, choice=choice))
        return
    from db.engine import resolve_db_url

    report = apply_setup(resolve_db_url(ctx.find_root().obj.get("db")), owner, choice)
    for line in report:
        click.echo(line)


COMMANDS: tuple[click.Command, ...] = (audit_command, backup_command, setup_postgres_command)
"""The commands this module adds to the `vetbench` group."""

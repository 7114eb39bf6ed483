"""CLI commands for people and the trust in their work: users, audit, backup, setup-postgres.

``users add`` and ``users list`` are declared with the item commands
(``reviewer.cli.item_commands``) and run :func:`add_user` and :func:`list_users`.
Only click and light helpers are imported at module level (``--help`` stays instant).
"""

from __future__ import annotations

import re
import sys
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from pathlib import Path

import click

from db.vocabulary import Role
from reviewer.cli import options
from reviewer.cli.common import fail, open_db, print_json, printed_json_or_empty, terminal_text
from reviewer.cli.identity import acting_person

_RELATIVE_TIME = re.compile(r"^(\d+)\s*([mhdw])$")
_UNITS = {"m": "minutes", "h": "hours", "d": "days", "w": "weeks"}


def _read_password(name: str, *, from_stdin: bool, none: bool, new_login: bool) -> str | None:
    """The password for ``name``'s login: stdin, a prompt, or none; never an argument."""
    if from_stdin and none:
        fail("--password-stdin and --no-password exclude each other")
    if none:
        return None
    if from_stdin:
        line = sys.stdin.readline().rstrip("\r\n")
        if not line:
            fail("--password-stdin: the first line of stdin is empty")
        return line
    if not new_login:
        return None  # an existing login keeps its password
    if not sys.stdin.isatty():
        fail(
            f"{name} needs a password for their new login: give it on stdin with "
            "--password-stdin, or use --no-password (peer or certificate authentication)"
        )
    return str(click.prompt(f"Password for {name}", hide_input=True, confirmation_prompt=True))


def add_user(
    ctx: click.Context, name: str, role: str, *, password_stdin: bool, no_password: bool
) -> None:
    """``vetbench users add``: register a person, or change their role.

    On PostgreSQL, run by the owner: creates the login role (asking for its password)
    and puts it in the vetbench_annotator or vetbench_lead group.
    """
    from db.people import PersonRefused, add_person

    db = open_db(ctx, create=True)
    actor = acting_person(ctx, None, register=False)
    password = None
    if not db.is_sqlite:
        from sqlalchemy import text

        with db.engine.connect() as connection:
            new_login = (
                connection.execute(
                    text("SELECT 1 FROM pg_roles WHERE rolname = :name"), {"name": name.strip()}
                ).first()
                is None
            )
        password = _read_password(
            name.strip(), from_stdin=password_stdin, none=no_password, new_login=new_login
        )
    elif password_stdin:
        fail("--password-stdin: SQLite has no logins, so no passwords")
    try:
        change = add_person(db, name, Role(role), actor=actor.name, password=password)
    except PersonRefused as error:
        fail(str(error))
    login = ""
    if change.login_created:
        login = ", with a new database login" + (" and password" if change.password_set else "")
    elif change.password_set:
        login = "; password changed"
    if change.previous_role is None:
        click.echo(f"added {change.name} as {change.role}{login}")
    elif change.previous_role is change.role:
        click.echo(f"{change.name} is already registered as {change.role}{login}")
    else:
        click.echo(f"{change.name} is now a {change.role} (was {change.previous_role}){login}")


def list_users(ctx: click.Context, as_json: bool) -> None:
    """``vetbench users list``: people, their roles, and on PostgreSQL their group roles."""
    from db.people import list_people

    db = open_db(ctx)
    people = list_people(db)
    if as_json:
        rows = []
        for person in people:
            row: dict[str, object] = {
                "name": person.name,
                "role": None if person.role is None else str(person.role),
                "created_at": None if person.created_at is None else person.created_at.isoformat(),
            }
            if not db.is_sqlite:
                row |= {"database_group": person.database_group, "can_login": person.can_login}
            rows.append(row)
        print_json(rows)
        return
    if not people:
        click.echo("no people registered yet: vetbench users add NAME --role annotator|lead")
        return
    names = [terminal_text(person.name) for person in people]
    width = max(len(name) for name in names)
    for name, person in zip(names, people, strict=True):
        role = str(person.role) if person.role is not None else "(not registered yet)"
        line = f"{name:<{width}}  {role}"
        if not db.is_sqlite:
            group = person.database_group or "no vetbench group: cannot use the database"
            login = "" if person.can_login in (None, True) else ", cannot log in"
            line = f"{line:<{width + 22}}  {group}{login}"
        click.echo(line.rstrip())


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


def _describe_changes(changes: Mapping[str, object]) -> str:
    return ", ".join(f"{key}={value}" for key, value in changes.items())


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
@click.pass_context
def audit_command(
    ctx: click.Context,
    item_id: str | None,
    person: str | None,
    since: str | None,
    limit: int | None,
    as_json: bool,
) -> None:
    """The audit trail: every write, with who, when, the login and host, and what changed.

    Oldest first.  On PostgreSQL the database role and the time are the server's own.
    """
    from db.audit import read_audit

    moment = _parse_since(since) if since else None
    with open_db(ctx).session() as session:
        entries = read_audit(session, target=item_id, person=person, since=moment, limit=limit)
    if printed_json_or_empty(entries, as_json=as_json, empty="no audit events match"):
        return
    for entry in entries:
        where = f"{entry.os_login}@{entry.host}" if entry.host else entry.os_login
        if entry.db_role is not None:
            where += f", role {entry.db_role}"
        target = f" {entry.target}" if entry.target else ""
        click.echo(
            f"{entry.created_at:%Y-%m-%d %H:%M:%S}Z  {entry.actor}  {entry.action}{target}  "
            f"[{where}]  {_describe_changes(entry.changes)}".rstrip()
        )


@click.command("backup")
@click.argument("destination", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--force", is_flag=True, help="Replace DESTINATION if it exists.")
@click.pass_context
def backup_command(ctx: click.Context, destination: Path, force: bool) -> None:
    """Copy the SQLite database to DESTINATION safely, even while others write to it.

    Uses SQLite's online backup, then checks the copy's integrity.  For PostgreSQL
    use pg_dump (see the README's team section).
    """
    from db.backup import BackupError, backup_sqlite

    db = open_db(ctx)
    try:
        result = backup_sqlite(db, destination, replace=force)
    except BackupError as error:
        fail(str(error))
    click.echo(
        f"backed up {result.source} to {result.destination}: {result.pages:,} pages, "
        f"{result.judgments:,} judgments, integrity ok"
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
@click.pass_context
def setup_postgres_command(ctx: click.Context, owner: str, apply_now: bool) -> None:
    """The SQL a database administrator runs once for a team database.

    It creates the group roles vetbench_annotator and vetbench_lead, lets OWNER add
    people to them, makes OWNER own the schema, and (for tables that exist) grants
    each group what it may do, with row-level security.  Printed unless --apply.
    Every statement can run again safely.
    """
    from db.setup_postgres import SetupRefused, apply_setup, setup_script

    if not apply_now:
        click.echo(setup_script(owner))
        return
    from db.engine import resolve_db_url

    try:
        report = apply_setup(resolve_db_url(ctx.find_root().obj.get("db")), owner)
    except SetupRefused as error:
        fail(str(error))
    for line in report:
        click.echo(line)


COMMANDS: tuple[click.Command, ...] = (audit_command, backup_command, setup_postgres_command)
"""The commands this module adds to the `vetbench` group."""

"""CLI commands for people: ``vetbench users add`` and ``users list``.

Only click and light helpers are imported at module level (``--help`` stays instant).
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import click

from db.vocabulary import QualificationStatus, Role, values
from db.words import a_or_an
from reviewer.cli import options
from reviewer.cli.common import fail, open_db
from reviewer.cli.identity import acting_person, as_option
from reviewer.cli.output import column, print_json, terminal_text

if TYPE_CHECKING:
    from db.engine import Database


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


@click.group("users")
def users_group() -> None:
    """Register people and list them."""


@users_group.command("add")
@click.argument("names", metavar="NAME...", nargs=-1, required=True)
@click.option(
    "--role",
    type=click.Choice(values(Role)),
    help="Their role [default: annotator for someone new; someone registered keeps theirs].",
)
@click.option(
    "--password-stdin",
    is_flag=True,
    help="PostgreSQL: read their login's password from the first line of stdin.",
)
@click.option(
    "--no-password",
    is_flag=True,
    help="PostgreSQL: a new login without a password (peer or certificate authentication).",
)
@click.option(
    "--adopt",
    is_flag=True,
    help="PostgreSQL: take in an existing role that is not vetbench's (another "
    "application's, or a superuser); its password is kept.",
)
@click.option(
    "--reset-password",
    is_flag=True,
    help="PostgreSQL: change the password of an existing login (never changed otherwise).",
)
@as_option(
    "The lead adding a lead or changing a role (SQLite, once the database has a lead; on "
    "PostgreSQL the owner adds people)."
)
@click.pass_context
def users_add(
    ctx: click.Context,
    names: tuple[str, ...],
    role: str | None,
    password_stdin: bool,
    no_password: bool,
    adopt: bool,
    reset_password: bool,
    name: str | None,
) -> None:
    """Register each NAME as an annotator or a lead (or change their role): `users add
    ann bo cy` registers three annotators; every name is checked before anyone is added.

    On SQLite, once the database has a lead, adding a lead or changing a role needs
    --as LEAD, and the last lead keeps their role; the first lead needs no one.

    On PostgreSQL, run by the owner: also creates NAME's login role, asking for its
    password (or reading it with --password-stdin; never from an argument), and puts
    it in the vetbench_annotator or vetbench_lead group.  An existing role keeps its
    password unless --reset-password; one that is not vetbench's needs --adopt.
    """
    from db.engine import resolve_db_url
    from db.people import check_person_names, refuse_same_person

    per_login = [
        flag
        for flag, given in (
            ("--password-stdin", password_stdin),
            ("--adopt", adopt),
            ("--reset-password", reset_password),
        )
        if given
    ]  # options about one particular login, which a list of names cannot share
    if len(names) > 1 and per_login:
        fail(f"{per_login[0]} is for one login at a time: name one person")
    # Checked before the database is opened: a refused name never creates one.
    postgres = resolve_db_url(ctx.find_root().obj.get("db")).get_backend_name() != "sqlite"
    checked = check_person_names(names, postgres=postgres)
    db = open_db(ctx, create=True)
    actor = acting_person(ctx, name, register=False)
    with db.session() as session:  # before any login's password is asked for
        for person in checked:
            refuse_same_person(session, person)
    for person in checked:
        _add_one(
            db,
            person,
            Role(role) if role else None,
            actor.name,
            password_stdin,
            no_password,
            adopt,
            reset_password,
        )


def _add_one(
    db: Database,
    name: str,
    role: Role | None,
    actor: str,
    password_stdin: bool,
    no_password: bool,
    adopt: bool,
    reset_password: bool,
) -> None:
    """Register one checked name and say what changed."""
    from db.people import add_person, has_database_role

    password = None
    if not db.is_sqlite:
        new_login = not has_database_role(db, name.strip())
        password = _read_password(
            name.strip(),
            from_stdin=password_stdin,
            none=no_password,
            new_login=new_login or reset_password,
        )
    elif password_stdin:
        fail("--password-stdin: SQLite has no logins, so no passwords")
    change = add_person(
        db,
        name,
        role,
        actor=actor,
        password=password,
        adopt=adopt,
        reset_password=reset_password,
    )
    login = ""
    if change.login_created:
        login = ", with a new database login" + (" and password" if change.password_set else "")
    elif change.password_set:
        login = "; password changed"
    shown = terminal_text(change.name)
    if change.previous_role is None:
        click.echo(f"added {shown} as {change.role}{login}")
    elif change.previous_role is change.role:
        click.echo(f"{shown} is already registered as {change.role}{login}")
    else:
        click.echo(f"{shown} is now {a_or_an(change.role)} (was {change.previous_role}){login}")


@users_group.command("list")
@options.json("Print a JSON list.")
@click.pass_context
def users_list(ctx: click.Context, as_json: bool) -> None:
    """List registered people with their roles (PostgreSQL: and their group roles), and
    where they stand with the qualification gate when it is on."""
    from db.qualification import list_people_qualified

    db = open_db(ctx)
    listed = list_people_qualified(db)
    if as_json:
        print_json([entry.to_json(server_roles=not db.is_sqlite) for entry in listed])
        return
    people = [entry.person for entry in listed]
    if not people:
        click.echo("no people registered yet: vetbench users add NAME --role annotator|lead")
        return
    names = column([terminal_text(person.name) for person in people])
    for name, entry in zip(names, listed, strict=True):
        person = entry.person
        role = str(person.role) if person.role is not None else "(not registered yet)"
        line = f"{name}  {role}"
        if not db.is_sqlite:
            group = person.database_group or "no vetbench group: cannot use the database"
            login = "" if person.can_login in (None, True) else ", cannot log in"
            line = f"{name}  {role:<20}  {group}{login}"
        standing = entry.qualification
        if standing is not None and standing.status is not QualificationStatus.NOT_GATED:
            line = f"{line}  · qualification {standing.describe()}"
        click.echo(line.rstrip())


@users_group.command("requalify")
@click.argument("person")
@as_option("The lead letting them try again.")
@click.pass_context
def users_requalify(ctx: click.Context, person: str, name: str | None) -> None:
    """Let PERSON, who failed the qualification, try again on gold items they have not
    seen (leads only; audited): their earlier calibration answers no longer count."""
    from db.qualification import requalify

    db = open_db(ctx)
    lead = acting_person(ctx, name, needs_lead=True)
    with db.transaction() as session:
        standing = requalify(session, lead.name, person.strip())
    click.echo(
        f"{terminal_text(standing.name)} may try the qualification again: {standing.describe()}"
    )


COMMANDS: tuple[click.Command, ...] = (users_group,)
"""The commands this module adds to the `vetbench` group."""

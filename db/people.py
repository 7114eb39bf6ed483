"""People and their roles.

On SQLite a person is a row of the ``person`` table.  On PostgreSQL a person is also
a login role of the same name, a member of the ``vetbench_annotator`` or
``vetbench_lead`` group (``db.privileges``); :func:`add_person`, run by the owner of
the tables, creates both, and the database enforces the role from then on.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import Connection, text
from sqlalchemy.exc import DBAPIError
from sqlmodel import Session, col, select

from db.audit import record_audit
from db.engine import Database
from db.errors import VetbenchError
from db.json_types import JsonObject
from db.models import Person
from db.privileges import (
    ANNOTATOR_GROUP,
    GROUP_OF_ROLE,
    LEAD_GROUP,
    database_account,
    quote_identifier,
    run_statements,
)
from db.validation import InvalidName, how_names_differ, same_name_key, validate_person_name
from db.vocabulary import REGISTER_ACTION, Role
from db.words import few_of

POSTGRES_NAME_LIMIT = 63  # NAMEDATALEN - 1: longer role names are cut short by the server
LEADS_SHOWN = 5  # leads named in a refusal: enough to pick one, short enough for one line


class PermissionDenied(VetbenchError, PermissionError):
    """Someone tried an action their role does not allow; the message says which role is needed."""


class PersonRefused(VetbenchError, ValueError):
    """A person cannot be added or changed as asked; the message says why."""


def find_person(session: Session, name: str) -> Person | None:
    return session.exec(select(Person).where(Person.name == name)).first()


def ensure_person(
    session: Session, name: str, role: Role = Role.ANNOTATOR, *, actor: str | None = None
) -> Person:
    """The person called ``name``, registered with ``role`` if new (the caller commits).

    Interfaces decide who may be registered (``db.identity.resolve_identity``);
    this is the one place that writes the row and its audit event, by ``actor``
    (default: the person registering themselves).  A new name must pass the rule of
    ``users add`` (:func:`check_person_name`), whichever path registers it.
    """
    person = find_person(session, name.strip())
    if person is None:
        name = check_person_name(name, postgres=session.get_bind().dialect.name != "sqlite")
        refuse_same_person(session, name)
        person = Person(name=name, role=role)
        session.add(person)
        session.flush()
        record_audit(session, actor or name, REGISTER_ACTION, name, role=str(role))
    return person


def refuse_same_person(session: Session, name: str) -> None:
    """:class:`PersonRefused` when someone else is registered under a name that reads as
    ``name``: in other case, with invisible characters (a zero-width joiner) or in another
    compatibility form (full-width letters) (``db.validation.same_name_key``).  Alice beside
    alice would split one person's judgments (and a lead's authority) in two, make an item
    "agreed" by one human, and every ``--as alice`` would then have to guess which is meant."""
    existing = registered_alike(name, session.exec(select(Person.name)))
    if existing is not None:
        raise PersonRefused(
            f"'{name}' differs only in {how_names_differ(name, existing)} from "
            f"'{existing}', who is registered: give their name as it is ({existing}), "
            "or another name"
        )


def registered_alike(name: str, registered: Iterable[str]) -> str | None:
    """The first of the ``registered`` names that reads as ``name`` without being it
    (``db.validation.same_name_key``), or None: the one comparison of a name with the
    people registered, for a refusal to register it and for the hint to an unknown name."""
    key = same_name_key(name)
    for existing in registered:
        if existing != name and same_name_key(existing) == key:
            return existing
    return None


def require_lead(session: Session, name: str, *, to: str = "decide") -> Person:
    """The lead called ``name``; refuses anyone else with a clear message.

    ``to`` says what only leads may do ("decide", "set the guidelines", ...).  On
    PostgreSQL a person acting as themselves must also be a member of the lead
    group, which is what the database itself checks when the row is written.
    """
    person = find_person(session, name)
    if person is None:
        raise PermissionDenied(
            f"only leads can {to}; '{name}' is not a registered person: "
            f"{lead_advice(session, name)}"
        )
    if person.role != Role.LEAD:
        raise PermissionDenied(
            f"only leads can {to}; '{name}' is an {person.role}: {lead_advice(session, name)}"
        )
    account = database_account(session.connection())
    if account is not None and account.name == name and not account.is_lead:
        raise PermissionDenied(
            f"only leads can {to}; the database role '{name}' is not a member of "
            f"{LEAD_GROUP} (the owner runs `vetbench users add {name} --role lead`)"
        )
    return person


def lead_names(session: Session) -> list[str]:
    """The leads' names, in the database's order of names (as refusals list them)."""
    return list(
        session.exec(
            select(Person.name).where(col(Person.role) == Role.LEAD).order_by(col(Person.name))
        )
    )


def lead_advice(session: Session, name: str, leads: Sequence[str] | None = None) -> str:
    """What ``name``, who is not a lead, does to run a command only leads may run: name one
    of the leads (a few are listed), or, while the database has none, register the first.
    ``leads``: :func:`lead_names`, where the caller has read them already.

    Registering ``name`` as anything is no way forward once there is a lead: only a lead
    adds a lead (:func:`add_person`), and an annotator still cannot run the command."""
    if leads is None:
        leads = lead_names(session)
    postgres = session.get_bind().dialect.name != "sqlite"
    if not leads:
        who = "the owner of the tables adds" if postgres else "add"
        return (
            f"the database has no lead yet: {who} one with `vetbench users add {name} --role lead`"
        )
    shown = few_of(leads, LEADS_SHOWN)
    if postgres:  # vetbench acts as the role that logged in: --as names no one else there
        return f"log in with a lead's own database role (leads: {shown})"
    return f"name a lead with --as NAME (leads: {shown})"


@dataclass(frozen=True)
class PersonChange:
    """What ``users add`` did."""

    name: str
    role: Role
    previous_role: Role | None  # None: newly registered
    login_created: bool  # PostgreSQL: a new login role
    password_set: bool


@dataclass(frozen=True)
class PersonListing:
    """One person, or one member of a vetbench group role not yet registered."""

    name: str
    role: Role | None  # vetbench's role; None: a database member not registered yet
    created_at: datetime | None
    database_group: str | None  # PostgreSQL: the group role they are a member of
    can_login: bool | None  # PostgreSQL: whether their role may log in

    def to_json(self, *, server_roles: bool) -> JsonObject:
        """As ``users list --json`` prints it; ``server_roles`` (PostgreSQL) adds the
        group role and whether it may log in."""
        data: JsonObject = {
            "name": self.name,
            "role": None if self.role is None else str(self.role),
            "created_at": None if self.created_at is None else self.created_at.isoformat(),
        }
        if server_roles:
            data |= {"database_group": self.database_group, "can_login": self.can_login}
        return data


def check_person_name(name: str, *, postgres: bool) -> str:
    """``name`` as it would be registered, or :class:`PersonRefused` saying why not: printable
    text on one line (``db.validation.validate_person_name``), and on PostgreSQL a role name
    the server keeps whole and does not reserve."""
    try:
        name = validate_person_name(name)
    except InvalidName as error:
        raise PersonRefused(str(error)) from None
    if postgres:
        if len(name.encode()) > POSTGRES_NAME_LIMIT:
            raise PersonRefused(
                f"'{name}' is longer than PostgreSQL's {POSTGRES_NAME_LIMIT}-byte role names"
            )
        if name.startswith("pg_") or name in (ANNOTATOR_GROUP, LEAD_GROUP):
            raise PersonRefused(f"'{name}' is reserved for the database's own roles")
    return name


def _encrypted_password(connection: Connection, name: str, password: str) -> str:
    """The password hashed by libpq with the server's method (SCRAM): the clear text is
    never sent, so it cannot end up in the server's statement log."""
    driver = connection.connection.driver_connection
    pgconn = getattr(driver, "pgconn", None)
    if pgconn is None:
        raise PersonRefused("setting a password needs the psycopg driver (postgresql+psycopg://)")
    return bytes(pgconn.encrypt_password(password.encode(), name.encode())).decode()


def has_database_role(db: Database, name: str) -> bool:
    """PostgreSQL: whether a database role ``name`` exists already (``users add`` asks a
    new login for its password)."""
    with db.engine.connect() as connection:
        return _existing_login(connection, name) is not None


def _existing_login(connection: Connection, name: str) -> tuple[bool, bool] | None:
    """(is a superuser, is a person of vetbench: a plain member of one of its groups) for
    the role ``name``, or None when there is no such role."""
    row = connection.execute(
        text(
            "SELECT r.rolsuper, EXISTS (SELECT FROM pg_auth_members m "
            "JOIN pg_roles g ON g.oid = m.roleid WHERE m.member = r.oid "
            "AND g.rolname IN (:annotators, :leads) AND NOT m.admin_option) "
            "FROM pg_roles r WHERE r.rolname = :name"
        ),
        {"name": name, "annotators": ANNOTATOR_GROUP, "leads": LEAD_GROUP},
    ).first()
    return None if row is None else (bool(row[0]), bool(row[1]))


def _set_login_role(
    connection: Connection,
    name: str,
    role: Role,
    password: str | None,
    *,
    adopt: bool,
    reset_password: bool,
) -> bool:
    """Create or update the login role ``name`` and its group; True when it was created.

    An existing role that is not vetbench's (another application's, or a superuser) is
    refused unless ``adopt``; an existing role's password changes only with
    ``reset_password``."""
    existing = _existing_login(connection, name)
    if existing is not None:
        superuser, ours = existing
        if (superuser or not ours) and not adopt:
            what = "a superuser" if superuser else "not a member of a vetbench group"
            raise PersonRefused(
                f"the database role '{name}' exists and is {what}: it may belong to someone "
                "else; give --adopt to make it a vetbench person (its password is kept)"
            )
        if password is not None and not reset_password:
            raise PersonRefused(
                f"the database role '{name}' exists: its password is kept unless "
                "--reset-password is given"
            )
    identifier = quote_identifier(name)
    statements = [] if existing else [f"CREATE ROLE {identifier} LOGIN"]
    if password is not None:
        hashed = _encrypted_password(connection, name, password).replace("'", "''")
        statements.append(f"ALTER ROLE {identifier} PASSWORD '{hashed}'")
    other = LEAD_GROUP if role is Role.ANNOTATOR else ANNOTATOR_GROUP
    statements += [
        f"GRANT {GROUP_OF_ROLE[role]} TO {identifier}",
        f"REVOKE {other} FROM {identifier}",
    ]
    try:
        run_statements(connection, statements)
    except DBAPIError as error:  # e.g. only a superuser may change a superuser
        detail = str(getattr(error, "orig", error)).strip().splitlines()[0]
        raise PersonRefused(f"the database refused to set up the role '{name}': {detail}") from None
    return existing is None


def check_person_names(names: Sequence[str], *, postgres: bool) -> list[str]:
    """The names as they would be registered, or :class:`PersonRefused` naming the first
    unusable one (or one given twice): checked before anyone is added (and before a
    database is created for them), so a list with a bad name adds nobody."""
    checked = [check_person_name(name, postgres=postgres) for name in names]
    twice = sorted({name for name in checked if checked.count(name) > 1})
    if twice:
        raise PersonRefused(f"'{twice[0]}' is named twice")
    first_named: dict[str, str] = {}
    for name in checked:
        other = first_named.setdefault(same_name_key(name), name)
        if other != name:
            raise PersonRefused(
                f"'{other}' and '{name}' differ only in {how_names_differ(other, name)}: "
                "name each person once"
            )
    return checked


def _check_role_change(
    session: Session, name: str, previous: Role | None, role: Role, *, actor: str
) -> None:
    """SQLite: once the database has a lead, only a lead (``actor``) adds a lead or changes a
    role, and the last lead is never demoted.  SQLite has no logins, so this prevents
    mistakes, not abuse; the very first lead of a new database needs no one."""
    changed = previous is not None and previous is not role
    if role is not Role.LEAD and not changed:
        return  # a new annotator, or nothing changes
    leads = lead_names(session)
    if leads and actor not in leads:
        raise PersonRefused(
            f"once the database has a lead, only a lead adds a lead or changes a role "
            f"('{actor}' is not a lead): {lead_advice(session, actor, leads)}"
        )
    if previous is Role.LEAD and changed and leads == [name]:
        raise PersonRefused(f"{name} is the only lead: add another lead before changing their role")


def add_person(
    db: Database,
    name: str,
    role: Role | None,
    *,
    actor: str,
    password: str | None = None,
    adopt: bool = False,
    reset_password: bool = False,
) -> PersonChange:
    """Register ``name`` with ``role``, or change their role (``vetbench users add``).
    ``role`` None: a new person is an annotator, and someone registered keeps their role
    (``users add ann bo cy`` onboarding annotators demoted a lead among them).

    On PostgreSQL, only an administrator (the owner of the tables, or a superuser)
    may add people: it creates the login role when missing, sets its password when
    one is given (never needed for an existing role), and makes it a member of the
    group of ``role`` only.  A role that exists and is not vetbench's (another
    application's, a superuser) is refused unless ``adopt``; an existing role's password
    is changed only with ``reset_password``.  On SQLite, once the database has a lead,
    adding a lead or changing a role needs ``actor`` to be a lead, and the last lead keeps
    their role.  Everything happens in one transaction, with an audit event by ``actor``.
    """
    postgres = not db.is_sqlite
    name = check_person_name(name, postgres=postgres)
    if password is not None and not postgres:
        raise PersonRefused("SQLite has no logins, so no passwords: leave the password out")
    if password is not None and not password:
        raise PersonRefused("the password is empty")
    with db.transaction() as session:
        connection = session.connection()
        login_created = False
        person = find_person(session, name)
        previous = None if person is None else Role(person.role)
        role = role or previous or Role.ANNOTATOR
        if postgres:
            account = database_account(connection)
            assert account is not None
            if not account.is_admin:
                raise PersonRefused(
                    f"only the owner of the database's tables adds people; you are logged in "
                    f"as '{account.name}'"
                )
            login_created = _set_login_role(
                connection, name, role, password, adopt=adopt, reset_password=reset_password
            )
        if not postgres:  # PostgreSQL: only the owner gets here (checked above)
            _check_role_change(session, name, previous, role, actor=actor)
        if person is None:
            ensure_person(session, name, role, actor=actor)
        elif previous is not role:
            person.role = role
            session.add(person)
            record_audit(session, actor, "set-role", name, old=str(previous), new=str(role))
        if login_created or password is not None:
            record_audit(
                session,
                actor,
                "login-role",
                name,
                created=login_created,
                password_set=password is not None,
                group=GROUP_OF_ROLE[role],
            )
    return PersonChange(
        name=name,
        role=role,
        previous_role=previous,
        login_created=login_created,
        password_set=password is not None,
    )


def list_people(db: Database) -> list[PersonListing]:
    """Everyone registered, and on PostgreSQL every member of a vetbench group role."""
    with db.session() as session:
        people = list(session.exec(select(Person).order_by(col(Person.name))))
        if db.is_sqlite:
            return [PersonListing(p.name, Role(p.role), p.created_at, None, None) for p in people]
        members = (
            session.connection()
            .execute(
                text(
                    "SELECT r.rolname, g.rolname, r.rolcanlogin FROM pg_auth_members m "
                    "JOIN pg_roles r ON r.oid = m.member JOIN pg_roles g ON g.oid = m.roleid "
                    "WHERE g.rolname IN (:annotators, :leads) "
                    "AND r.rolname NOT IN (:annotators, :leads) AND NOT m.admin_option "
                    "ORDER BY g.rolname DESC"
                ),
                {"annotators": ANNOTATOR_GROUP, "leads": LEAD_GROUP},
            )
            .all()
        )
    group_of: dict[str, tuple[str, bool]] = {}
    for member, group, can_login in members:
        group_of.setdefault(member, (group, bool(can_login)))  # lead first: it includes both
    listings = [
        PersonListing(
            p.name,
            Role(p.role),
            p.created_at,
            group_of.get(p.name, (None, None))[0],
            group_of.get(p.name, (None, None))[1],
        )
        for p in people
    ]
    registered = {p.name for p in people}
    listings += [
        PersonListing(member, None, None, group, can_login)
        for member, (group, can_login) in sorted(group_of.items())
        if member not in registered
    ]
    return listings

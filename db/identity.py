"""Who is acting: one answer, asked by every command and by the review app.

- **PostgreSQL:** the person is the role that logged in (``session_user``).  The
  database proves it, and its privileges (``db.privileges``) bind it.  ``--as``
  naming anyone else is refused; only an administrator (a superuser or the owner of
  the tables, whom the database does not bind anyway) may act for someone, and the
  audit trail keeps the administrator's role beside the name.
- **SQLite:** the person is the operating-system login unless ``--as`` names
  someone else (one person keeping several identities on their own machine).  The
  audit trail keeps the login that typed each command.

Names must be known.  On a database that already has people an unknown name (a
typo such as ``lenna`` for ``lena``) is refused, with the closest known names;
registering is explicit (``vetbench users add``, or ``--new-user``).  The very
first person of an empty database is registered on first use, with a notice, and
so is a PostgreSQL role that is a member of a vetbench group: its account is its
registration.  A new name passes the rule of ``users add`` (``db.people``), and a
command whose own write registers the person (a judgment) registers no one when it
is refused.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TypedDict

from sqlmodel import Session, col, select

from db.audit import origin
from db.engine import Database
from db.errors import VetbenchError
from db.models import Person
from db.people import (
    PersonRefused,
    check_person_name,
    ensure_person,
    find_person,
    lead_advice,
    registered_alike,
)
from db.privileges import ANNOTATOR_GROUP, GROUP_OF_ROLE, LEAD_GROUP, DatabaseAccount
from db.privileges import database_account as _database_account
from db.vocabulary import Role

__all__ = [
    "Identity",
    "IdentityOptions",
    "IdentityRefused",
    "close_names",
    "database_account",
    "resolve_identity",
]

SUGGESTIONS = 3
SUGGESTION_CUTOFF = 60  # rapidfuzz WRatio, 0-100: "lenna" for "lena" scores 89
KNOWN_NAMES_SHOWN = 8


class IdentityRefused(VetbenchError, PermissionError):
    """The person cannot act under this name; the one-line message says what to do."""


@dataclass(frozen=True)
class Identity:
    """The person acting, resolved once per command (or app start)."""

    name: str
    role: Role | None  # None: not registered (read-only commands only)
    os_login: str  # the login that runs this process
    host: str
    db_role: str | None  # PostgreSQL: the role logged in (session_user); SQLite: None
    on_behalf: bool  # the name is not the login's (SQLite --as) nor the role's (PostgreSQL)
    notice: str | None = None  # something the person should read: a registration, a mismatch
    # Not stored yet: the command's own write registers them (``registers_with_write``).
    pending: bool = False

    @property
    def is_lead(self) -> bool:
        return self.role is Role.LEAD

    @property
    def registered(self) -> bool:
        return self.role is not None


def database_account(db: Database) -> DatabaseAccount | None:
    """The PostgreSQL role this database handle logs in as (None on SQLite)."""
    if db.is_sqlite:
        return None
    with db.engine.connect() as connection:
        return _database_account(connection)


def close_names(name: str, known: list[str]) -> list[str]:
    """The known names closest to ``name`` (rapidfuzz), best first."""
    from rapidfuzz import fuzz, process, utils  # only on a refusal: startup stays light

    matches = process.extract(
        name,
        known,
        scorer=fuzz.WRatio,
        processor=utils.default_process,
        limit=SUGGESTIONS,
        score_cutoff=SUGGESTION_CUTOFF,
    )
    return [match for match, _score, _index in matches]


def _unknown_name_message(
    session: Session, name: str, *, explicit: bool, needs_lead: bool = False
) -> str:
    people = session.execute(
        select(col(Person.name), col(Person.role)).order_by(col(Person.name))
    ).all()
    known = [known_name for known_name, _role in people]
    closest = close_names(name, known)
    if closest:
        hint = "did you mean " + " or ".join(closest) + "?"
    elif needs_lead:
        hint = ""  # the leads are listed below: the ones to name
    else:
        shown = ", ".join(known[:KNOWN_NAMES_SHOWN]) + (
            " …" if len(known) > KNOWN_NAMES_SHOWN else ""
        )
        hint = f"known people: {shown}"
    who = f"no person called '{name}'" if explicit else f"your login '{name}' is not a person"
    # A name that reads as a registered one cannot be registered beside it: no such advice.
    alike = registered_alike(name, known)
    if alike is not None:
        return f"{who} in this database; names are exact: did you mean {alike}?"
    if needs_lead:  # registering them (an annotator, or a lead: a lead's to add) runs nothing
        hint = f"{hint} " if hint else ""
        leads = [person for person, role in people if role == Role.LEAD]  # in order of names
        return (
            f"{who} in this database; {hint}only leads may run this command: "
            f"{lead_advice(session, name, leads)}"
        )
    return (
        f"{who} in this database; {hint} "
        f"(register with `vetbench users add {name} --role annotator|lead`, or --new-user "
        "on review and judge)"
    )


def _has_people(session: Session) -> bool:
    return session.exec(select(Person.id).limit(1)).first() is not None


def _claimed_name(
    requested: str | None, account: DatabaseAccount | None, os_login: str
) -> tuple[str, bool]:
    """The name to act under, and whether it is someone other than the login or role."""
    if account is None:
        name = requested or os_login
        return name, name != os_login
    if requested is not None and requested != account.name and not account.is_admin:
        raise IdentityRefused(
            f"you are logged in to the database as '{account.name}', and vetbench acts as "
            f"the role you log in with: --as {requested} is refused (to act as {requested}, "
            "log in with their own database role)"
        )
    name = requested or account.name
    return name, name != account.name


def _role_notice(person: Person, account: DatabaseAccount | None, on_behalf: bool) -> str | None:
    """A warning when the database's groups and vetbench's list of people disagree."""
    if account is None or account.is_admin or on_behalf or account.role is None:
        return None
    if account.role.value == person.role:
        return None
    return (
        f"the database makes {person.name} a member of {GROUP_OF_ROLE[account.role]}, but "
        f"vetbench lists them as {person.role}; the owner aligns the two with "
        f"`vetbench users add {person.name} --role {account.role.value}`"
    )


def _registration_notice(name: str, role: Role, *, new_user: bool, own_role: Role | None) -> str:
    if new_user:
        return f"registered {name} as a new {role.value}"
    if own_role is not None:
        return (
            f"registered {name} as {role.value}: the database role {name} is a member "
            f"of {GROUP_OF_ROLE[own_role]}"
        )
    return (
        f"{name} is the first person in this database and is registered as an "
        f"{role.value}; add the others with `vetbench users add NAME --role annotator|lead`"
    )


class IdentityOptions(TypedDict, total=False):
    """How :func:`resolve_identity` treats a name it does not know (each explained there),
    as the commands pass them on (``reviewer.cli.identity.acting_person``)."""

    new_user: bool
    register: bool
    needs_lead: bool
    registers_with_write: bool
    check_only: bool


def resolve_identity(
    db: Database,
    requested: str | None = None,
    *,
    new_user: bool = False,
    register: bool = True,
    needs_lead: bool = False,
    registers_with_write: bool = False,
    check_only: bool = False,
) -> Identity:
    """Who is acting on ``db``: the one function every command and the app call.

    ``requested`` is the ``--as`` name (None: the login, or the database role).
    ``new_user`` registers an unknown name as an annotator (``--new-user``).  With
    ``register`` False (commands that register no one) an unknown login yields an
    unregistered identity instead of a refusal; an unknown name given with ``--as`` is
    still refused, since it is most likely a typo, on a database with no people too.  ``needs_lead`` (commands only leads may run)
    never registers anyone as an annotator: the first person of an empty database is
    then left unregistered, so the command's lead check refuses with nothing written.
    ``registers_with_write`` (a command whose write calls ``ensure_person`` in its own
    transaction, as every judgment does): an annotator to be registered is returned
    ``pending``, with the notice to show once the write is stored, and nothing is written
    here, so a refused command registers no one.  A name to register must pass the rule
    of ``users add`` (``db.people.check_person_name``).  ``check_only``: everything a
    registration is checked for, nothing written: a person to be registered, of any role,
    is returned ``pending`` (``vetbench serve`` asks before it takes its socket, and
    registers once it holds it).
    Raises :class:`IdentityRefused`.
    """
    where = origin()
    if requested is not None:
        requested = requested.strip()
        if not requested:
            raise IdentityRefused("--as needs a name")
    account = database_account(db)
    name, on_behalf = _claimed_name(requested, account, where.os_login)
    if not name:
        raise IdentityRefused("cannot tell who you are: your login has no name; use --as NAME")
    if account is not None and not account.is_admin and account.role is None:
        raise IdentityRefused(
            f"the database role '{account.name}' is a member of neither {ANNOTATOR_GROUP} nor "
            f"{LEAD_GROUP}; the owner adds it with `vetbench users add {account.name} "
            "--role annotator|lead`"
        )

    def identity(role: Role | None, notice: str | None) -> Identity:
        return Identity(
            name=name,
            role=role,
            os_login=where.os_login,
            host=where.host,
            db_role=account.name if account is not None else None,
            on_behalf=on_behalf,
            notice=notice,
        )

    # A member's own group decides their vetbench role (administrators have none: for
    # them, as on SQLite, the person table does).
    own_role = account.role if account is not None and not on_behalf else None
    with db.session() as session:
        person = find_person(session, name)
        if person is not None:
            role = own_role if own_role is not None else Role(person.role)
            return identity(role, _role_notice(person, account, on_behalf))
        # Checked before taking the write lock: a typo never waits for other writers.
        if own_role is None and not new_user and _has_people(session):
            if not register and requested is None:
                return identity(None, None)
            raise IdentityRefused(
                _unknown_name_message(
                    session, name, explicit=requested is not None, needs_lead=needs_lead
                )
            )
        # --as on a command that registers no one names no one here: `import --as zed` on
        # a new database audited the import as zed, whom no command had registered.
        if not register and requested is not None and own_role is None and not new_user:
            raise IdentityRefused(
                f"no person called '{name}' in this database, which has no people yet: "
                f"register with `vetbench users add {name} --role annotator|lead`, or leave "
                "out --as (you act as your login)"
            )
        # Registering as an annotator someone whose command is then refused (only leads
        # may run it) would write what no one asked for.
        if not register or (needs_lead and (own_role or Role.ANNOTATOR) is not Role.LEAD):
            return identity(None, None)

    try:
        check_person_name(name, postgres=account is not None)
    except PersonRefused as error:
        raise IdentityRefused(str(error)) from None
    role = own_role or Role.ANNOTATOR
    notice = _registration_notice(name, role, new_user=new_user, own_role=own_role)
    if check_only or (registers_with_write and role is Role.ANNOTATOR):  # ensure_person's
        return replace(identity(role, notice), pending=True)  # default role

    with db.transaction() as session:
        person = find_person(session, name)  # registered by someone else meanwhile
        if person is not None:
            return identity(Role(person.role), None)
        if own_role is None and not new_user and _has_people(session):
            raise IdentityRefused(
                _unknown_name_message(
                    session, name, explicit=requested is not None, needs_lead=needs_lead
                )
            )
        ensure_person(session, name, role)
    return identity(role, notice)

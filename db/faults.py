"""Expected database faults, each as one line that says what happened and what to do.

A locked, read-only, full, missing or foreign database, or a server that does not
answer, is not a bug: the command line prints :func:`describe_fault`'s line instead
of a traceback (never the SQL or its parameters, never a password).
"""

from __future__ import annotations

from sqlalchemy.exc import DBAPIError

from db.errors import VetbenchError

LOCK_TIMEOUT_HINT = "--lock-timeout or VETBENCH_LOCK_TIMEOUT"
CONNECT_TIMEOUT_HINT = "--connect-timeout or VETBENCH_CONNECT_TIMEOUT"


class DatabaseFault(VetbenchError, RuntimeError):
    """A fault a person can act on; the message is the one line to show."""


class NoDatabase(DatabaseFault):
    """The database does not exist (and the command does not create one)."""

    def __init__(self, shown: str, *, empty: bool = False) -> None:
        what = f"{shown} holds no vetbench database yet" if empty else f"no database at {shown}"
        super().__init__(
            f"{what}; create one with `vetbench init` (or `vetbench import FILE`), "
            "or name another with --db"
        )


class NotVetbench(DatabaseFault):
    """The file or server holds something else; it was left exactly as it was."""

    def __init__(self, shown: str, why: str) -> None:
        super().__init__(f"{shown} is not a vetbench database ({why}); it was left unchanged")


class UnknownSchema(DatabaseFault):
    """The database's schema revision is not one this vetbench knows: a newer vetbench
    (or another branch) made or upgraded it.  Nothing was changed."""

    def __init__(self, shown: str, revision: str) -> None:
        super().__init__(
            f"{shown} has schema revision {revision}, which this version of vetbench does not "
            "know: a newer vetbench (or another branch) made or upgraded it; upgrade vetbench "
            "to open it (the database was left unchanged)"
        )


class SchemaBehind(DatabaseFault):
    """A member's login opened a team database whose schema this vetbench must upgrade
    first: only the owner changes the schema.  Nothing was changed."""

    def __init__(self, shown: str, role: str, revision: str | None, head: str) -> None:
        super().__init__(
            f"{shown} has schema revision {revision or 'none'} and this vetbench needs {head}; "
            f"only the schema's owner upgrades it, not {role}: ask them to run any vetbench "
            "command (such as `vetbench stats`) with their login, then try again (nothing "
            "was changed)"
        )


class DatabaseLocked(DatabaseFault):
    """Another writer held SQLite's write lock for longer than the lock timeout."""

    def __init__(self, shown: str, waited_s: float) -> None:
        super().__init__(
            f"{shown} is locked by another writer; gave up after {waited_s:.0f} s "
            f"(wait longer with {LOCK_TIMEOUT_HINT})"
        )


class CannotConnect(DatabaseFault):
    """The database server could not be reached or did not answer."""

    def __init__(self, shown: str, error: BaseException, timeout_s: float) -> None:
        reason = first_line(getattr(error, "orig", None) or error)
        if "timeout" in reason.lower() or "timed out" in reason.lower():
            reason = f"no answer within {max(2, round(timeout_s))} s ({CONNECT_TIMEOUT_HINT})"
        super().__init__(f"cannot connect to {shown}: {reason}")


def first_line(error: object) -> str:
    """The first non-empty line of an error's text: drivers append SQL, parameters and links."""
    for line in str(error).splitlines():
        if line.strip():
            return line.strip()
    return type(error).__name__


# Phrases SQLite and PostgreSQL use, and what they mean for the person at the keyboard.
_SQLITE_FAULTS = (
    (
        "readonly database",
        "the database is read-only here: this command writes; "
        "check the file's and its folder's permissions, or use a writable copy",
    ),
    (
        "database or disk is full",
        "the disk holding the database is full: nothing was "
        "written; free some space and run the command again",
    ),
    ("database is locked", f"the database is locked by another writer ({LOCK_TIMEOUT_HINT})"),
    (
        "disk i/o error",
        "the disk failed to read or write the database: nothing was written; "
        "check free space and the disk",
    ),
    (
        "unable to open database file",
        "cannot open the database file: check that its folder exists and can be read",
    ),
    ("file is not a database", "the file is not a SQLite database"),
    ("database disk image is malformed", "the database file is damaged; restore a backup"),
)
_POSTGRES_FAULTS = {
    "53100": "the database server's disk is full: nothing was written; ask its administrator",
    "25006": "the database is read-only (a standby or read-only transaction): nothing was written",
    "57P01": "the database server closed the connection (it was stopped or restarted); "
    "try again in a moment",
    "57P02": "the database server closed the connection after a crash; try again in a moment",
    "57P03": "the database server is starting up or shutting down; try again in a moment",
    "55P03": "another session held a lock this command needs for longer than --lock-timeout "
    "(VETBENCH_LOCK_TIMEOUT); nothing was written: try again, or ask the administrator who "
    "holds it (pg_locks, pg_stat_activity)",
}


MAYBE_EXPECTED = (VetbenchError, DBAPIError)
"""What a caller may catch around a database call to hand to :func:`expected_error_line`
(the app: around a call a screen makes on its own thread, not in a worker): every
expected error is one of these, and a database error this module does not describe is
raised again."""


def expected_error_line(error: BaseException, where: str) -> str | None:
    """The one line for an expected error: any ``VetbenchError`` as it says itself, or a
    fault of the database ``where`` described; ``None`` for anything else (a bug: it keeps
    its traceback).  The command line prints it; the app shows it as a notice."""
    if isinstance(error, VetbenchError):
        return str(error)
    return describe_fault(error, where)


def describe_fault(error: BaseException, where: str) -> str | None:
    """One line for an expected fault of the database ``where`` (shown as given), else None."""
    if isinstance(error, DatabaseFault):
        return str(error)
    original = getattr(error, "orig", None)
    if original is None:
        return None
    module = type(original).__module__
    text = first_line(original)
    if module.startswith("sqlite3"):
        lowered = text.lower()
        for phrase, meaning in _SQLITE_FAULTS:
            if phrase in lowered:
                return f"{where}: {meaning}"
        return None
    if module.startswith("psycopg"):
        sqlstate = getattr(original, "sqlstate", None)
        if sqlstate in _POSTGRES_FAULTS:
            return f"{where}: {_POSTGRES_FAULTS[sqlstate]}"
        if sqlstate == "42501":  # insufficient_privilege: the server's roles said no
            return (
                f"{where}: {text}: your database role may not do this "
                "(the owner adds people to vetbench's groups with `vetbench users add`)"
            )
        if sqlstate is None or sqlstate.startswith("08"):  # connection lost or refused
            return f"{where}: lost the connection to the server: {text}"
        if sqlstate.startswith("22"):  # data exceptions: a value the server refused
            return f"{where}: the server refused a value: {text}"
    return None

"""The one engine factory, and the ``Database`` handle every actor opens.

``--db`` / ``VETBENCH_DB`` takes a file path or a SQLAlchemy URL; the default is
``./vetbench.db``.  Opening a database brings its schema up to date with Alembic,
so a file made by an earlier version upgrades in place.

Opening never changes what it should not: ``create=False`` refuses a missing
SQLite file (or an empty PostgreSQL database) instead of creating one, and a
database that holds tables but no vetbench schema is refused untouched (it is
inspected through a read-only connection first).  A SQLite file that cannot be
written, or whose folder cannot be written (WAL needs its ``-wal`` and ``-shm``
files there), is opened read-only and says so in ``Database.notice``.

SQLite connections get WAL, a busy timeout and foreign keys.  Write transactions
(``Database.transaction``) begin with ``BEGIN IMMEDIATE`` so that concurrent
writers queue instead of failing with "database is locked" when a read lock would
have to be upgraded; a writer that waits more than a second says so through
``ConnectionSettings.on_lock_wait`` and gives up after ``lock_timeout_s`` with
:class:`~db.faults.DatabaseLocked`.  PostgreSQL connections give up after
``connect_timeout_s`` when the server does not answer, and a statement that waits
``lock_timeout_s`` for a lock another session holds fails (``lock_timeout``), said in
one line (``db.faults``).
"""

from __future__ import annotations

import os
import re
import sqlite3
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from sqlalchemy import Engine, create_engine, event, inspect
from sqlalchemy.engine import URL, make_url
from sqlalchemy.exc import ArgumentError, NoSuchModuleError
from sqlmodel import Session

from db.faults import (
    CannotConnect,
    DatabaseFault,
    DatabaseLocked,
    NoDatabase,
    NotVetbench,
    first_line,
)
from db.interrupts import InterruptedAfterCommit, InterruptedDuringCommit, interrupt_after

DEFAULT_DB_PATH = "vetbench.db"
DB_ENV_VAR = "VETBENCH_DB"
# The databases vetbench's schema, migrations and locking are written and tested for.
SUPPORTED_BACKENDS = ("sqlite", "postgresql")
URL_EXAMPLE = "postgresql+psycopg://user@host/vetbench"
CONNECT_TIMEOUT_ENV = "VETBENCH_CONNECT_TIMEOUT"
LOCK_TIMEOUT_ENV = "VETBENCH_LOCK_TIMEOUT"
DEFAULT_CONNECT_TIMEOUT_S = 10.0
DEFAULT_LOCK_TIMEOUT_S = 60.0
LOCK_NOTICE_AFTER_S = 1.0
SCHEMA_VERSION_TABLE = "alembic_version"
_BEGIN_OPTION = "vetbench_sqlite_begin"
_PASSWORD_IN_URL = re.compile(r"(://[^:/@\s]*:)[^@/\s]*@")


def _seconds_from_env(name: str, default: float) -> float:
    raw = os.environ.get(name)
    if not raw:
        return default
    try:
        value = float(raw)
    except ValueError:
        raise DatabaseFault(f"{name} must be a number of seconds, got '{raw}'") from None
    if value <= 0:
        raise DatabaseFault(f"{name} must be more than 0 seconds, got '{raw}'")
    return value


@dataclass(frozen=True)
class ConnectionSettings:
    """How long to wait for a server and for another writer, and whom to tell about a wait."""

    connect_timeout_s: float = DEFAULT_CONNECT_TIMEOUT_S
    lock_timeout_s: float = DEFAULT_LOCK_TIMEOUT_S
    on_lock_wait: Callable[[], None] | None = field(default=None, compare=False)

    @classmethod
    def from_env(
        cls,
        *,
        connect_timeout_s: float | None = None,
        lock_timeout_s: float | None = None,
        on_lock_wait: Callable[[], None] | None = None,
    ) -> ConnectionSettings:
        """Given values, else ``$VETBENCH_CONNECT_TIMEOUT`` / ``$VETBENCH_LOCK_TIMEOUT``, else defaults."""
        return cls(
            connect_timeout_s=connect_timeout_s
            or _seconds_from_env(CONNECT_TIMEOUT_ENV, DEFAULT_CONNECT_TIMEOUT_S),
            lock_timeout_s=lock_timeout_s
            or _seconds_from_env(LOCK_TIMEOUT_ENV, DEFAULT_LOCK_TIMEOUT_S),
            on_lock_wait=on_lock_wait,
        )


def hide_password(value: str | URL | os.PathLike[str]) -> str:
    """A database path or URL fit to show: any password becomes ``***``, even in a broken URL."""
    if isinstance(value, URL):
        return value.render_as_string(hide_password=True)
    raw = os.fspath(value)
    if "://" not in raw:
        return raw
    try:
        return make_url(raw).render_as_string(hide_password=True)
    except (ArgumentError, ValueError):
        return _PASSWORD_IN_URL.sub(r"\1***@", raw)


def resolve_db_url(value: str | os.PathLike[str] | None = None) -> URL:
    """Turn ``--db`` (a path or a URL), else ``$VETBENCH_DB``, else ``./vetbench.db`` into a URL."""
    raw = os.fspath(value) if value is not None else os.environ.get(DB_ENV_VAR) or DEFAULT_DB_PATH
    if not raw.strip():
        raise DatabaseFault(f"--db is empty: name a database file or a URL such as {URL_EXAMPLE}")
    if "://" in raw:
        try:
            url = make_url(raw)
        except (ArgumentError, ValueError):
            raise DatabaseFault(f"'{hide_password(raw)}' is not a database URL") from None
        if url.get_backend_name() not in SUPPORTED_BACKENDS:
            raise DatabaseFault(
                f"'{hide_password(url)}': vetbench keeps its data in SQLite (a file) or "
                f"PostgreSQL ({URL_EXAMPLE}), not in {url.get_backend_name()}"
            )
        return url
    return make_url(f"sqlite:///{Path(raw).expanduser().resolve()}")


def _milliseconds(seconds: float) -> int:
    return max(1, int(seconds * 1000))


def _configure_sqlite(engine: Engine, settings: ConnectionSettings, *, read_only: bool) -> None:
    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection, _record) -> None:  # type: ignore[no-untyped-def]
        # Take transaction control away from pysqlite so BEGIN can be IMMEDIATE.
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        cursor.execute(f"PRAGMA busy_timeout = {_milliseconds(settings.lock_timeout_s)}")
        if not read_only:  # a read-only connection cannot switch the journal mode
            cursor.execute("PRAGMA journal_mode = WAL")
        cursor.execute("PRAGMA foreign_keys = ON")
        cursor.execute("PRAGMA synchronous = NORMAL")
        cursor.close()

    @event.listens_for(engine, "begin")
    def _on_begin(connection) -> None:  # type: ignore[no-untyped-def]
        mode = connection.get_execution_options().get(_BEGIN_OPTION, "")
        if mode == "IMMEDIATE":
            _begin_immediate(connection.connection.dbapi_connection, engine.url, settings)
        else:
            connection.exec_driver_sql(f"BEGIN {mode}".strip())


def _is_locked(error: sqlite3.OperationalError) -> bool:
    return "locked" in str(error) or "busy" in str(error)


def _begin_immediate(
    dbapi_connection: sqlite3.Connection, url: URL, settings: ConnectionSettings
) -> None:
    """Take SQLite's write lock: quietly for a second, then saying so, then giving up."""
    total = settings.lock_timeout_s
    first = min(LOCK_NOTICE_AFTER_S, total)
    try:
        dbapi_connection.execute(f"PRAGMA busy_timeout = {_milliseconds(first)}")
        try:
            dbapi_connection.execute("BEGIN IMMEDIATE")
            return
        except sqlite3.OperationalError as error:
            if not _is_locked(error) or total <= first:
                if _is_locked(error):
                    raise DatabaseLocked(_sqlite_path(url.database or ""), total) from None
                raise
        if settings.on_lock_wait is not None:
            settings.on_lock_wait()
        started = time.monotonic()
        dbapi_connection.execute(f"PRAGMA busy_timeout = {_milliseconds(total - first)}")
        try:
            dbapi_connection.execute("BEGIN IMMEDIATE")
        except sqlite3.OperationalError as error:
            if _is_locked(error):
                waited = first + (time.monotonic() - started)
                raise DatabaseLocked(_sqlite_path(url.database or ""), waited) from None
            raise
    finally:
        dbapi_connection.execute(f"PRAGMA busy_timeout = {_milliseconds(total)}")


# PostgreSQL aborts one side of a deadlock (40P01) or a serialization conflict (40001);
# the aborted transaction is safe to run again.
TRANSIENT_SQLSTATES = frozenset({"40P01", "40001"})


def is_transient_conflict(error: BaseException) -> bool:
    """True for a database error that a retry of the whole transaction resolves."""
    original = getattr(error, "orig", None)
    return getattr(original, "sqlstate", None) in TRANSIENT_SQLSTATES


def make_engine(
    url: str | URL | os.PathLike[str] | None = None,
    settings: ConnectionSettings | None = None,
    *,
    read_only: bool = False,
) -> Engine:
    """Create an engine for ``url`` (path, URL, or the configured default)."""
    settings = settings or ConnectionSettings.from_env()
    resolved = url if isinstance(url, URL) else resolve_db_url(url)
    if resolved.get_backend_name() == "sqlite":
        connect_args: dict[str, object] = {
            "check_same_thread": False,
            "timeout": settings.lock_timeout_s,
        }
        if read_only:
            path = Path(resolved.database or "")
            resolved = resolved.set(database=f"file:{path}", query=_read_only_query(path))
        engine = _create_engine(resolved, connect_args=connect_args)
        _configure_sqlite(engine, settings, read_only=read_only)
        return engine
    connect_args = {}
    if resolved.get_backend_name() == "postgresql":
        # libpq counts whole seconds, 2 at least; a server that never answers fails then.
        connect_args["connect_timeout"] = max(2, round(settings.connect_timeout_s))
        # A lock another session holds (any member may take one on a table they write,
        # and keep it) ends the wait as SQLite's does, instead of hanging for good.
        given = resolved.query.get("options", "")  # the URL's own server options stay
        lock = f"-c lock_timeout={_milliseconds(settings.lock_timeout_s)}"
        connect_args["options"] = f"{given} {lock}".strip() if isinstance(given, str) else lock
    return _create_engine(resolved, pool_pre_ping=True, connect_args=connect_args)


def _create_engine(url: URL, **options: object) -> Engine:
    """``create_engine``, with a driver that is not installed said as such."""
    try:
        return create_engine(url, **options)
    except (NoSuchModuleError, ImportError) as error:
        driver = url.drivername.partition("+")[2] or url.drivername
        raise DatabaseFault(
            f"'{hide_password(url)}': its driver {driver} is not installed here "
            f"({first_line(error)}); vetbench installs psycopg: {URL_EXAMPLE}"
        ) from None


def _read_only_query(path: Path) -> dict[str, str]:
    """SQLite URI parameters opening ``path`` read-only; ``immutable`` where no -shm file can be made."""
    query = {"mode": "ro", "uri": "true"}
    if not _folder_writable(path) and not Path(f"{path}-shm").exists():
        query["immutable"] = "1"  # WAL readers need a -shm file; without one, read as is
    return query


def _folder_writable(path: Path) -> bool:
    return os.access(path.parent, os.W_OK)


@dataclass
class Database:
    """An open, migrated database: the bus every actor reads and writes."""

    engine: Engine
    read_only: bool = False
    notice: str | None = None  # something the person opening it should know

    @property
    def url(self) -> URL:
        return self.engine.url

    @property
    def is_sqlite(self) -> bool:
        return self.engine.url.get_backend_name() == "sqlite"

    @property
    def url_for_people(self) -> str:
        """What to type after --db: the file for SQLite, else the URL without its password."""
        url = self.engine.url
        if self.is_sqlite and url.database:
            return _sqlite_path(url.database)
        return hide_password(url)

    def session(self) -> Session:
        """A session for reading (and small writes the caller commits itself)."""
        return Session(self.engine, expire_on_commit=False)

    @contextmanager
    def transaction(self) -> Iterator[Session]:
        """A write transaction: commits on success, rolls back on error.

        On SQLite it takes the write lock up front (``BEGIN IMMEDIATE``), waiting
        on the busy timeout while another writer holds it.  Ctrl-C during the commit
        waits for it (``db.interrupts``): :class:`InterruptedAfterCommit` says it is stored.
        """
        bind = self.engine.execution_options(**{_BEGIN_OPTION: "IMMEDIATE"})
        with Session(bind, expire_on_commit=False) as session:
            try:
                yield session
                # Ctrl-C waits for the commit, so the caller is told whether it went through.
                with interrupt_after(InterruptedAfterCommit, InterruptedDuringCommit):
                    session.commit()
            except InterruptedAfterCommit:
                raise  # committed: nothing to roll back
            except BaseException as error:
                try:
                    session.rollback()
                except Exception:
                    # An interrupt inside commit() itself (a second Ctrl-C, or one raised
                    # where no signal is held) leaves a session that refuses to roll back:
                    # the interrupt is what the caller must see (closing the session ends
                    # the transaction either way).
                    if isinstance(error, Exception):
                        raise
                raise

    def dispose(self) -> None:
        self.engine.dispose()

    def remove_if_unused(self) -> bool:
        """Dispose of the database and remove its SQLite file, with its journals, if no table
        holds a row beyond what every new database has (its schema version, SQLite's and the
        full-text index's own tables): what a command that created the file and stored
        nothing leaves.  Kept (False) when a row is there, which another writer may have put
        there meanwhile; the check and the removal happen under the write lock."""
        from contextlib import closing

        if not self.is_sqlite or not self.url.database:
            return False
        path = self.url_for_people
        self.dispose()
        with closing(sqlite3.connect(path, isolation_level=None)) as connection:
            connection.execute("BEGIN IMMEDIATE")
            if _holds_rows(connection):
                return False
            for suffix in ("", "-wal", "-shm", "-journal"):
                Path(f"{path}{suffix}").unlink(missing_ok=True)
        return True


def _holds_rows(connection: sqlite3.Connection) -> bool:
    """Whether a table of a SQLite database holds a row, beyond its schema version, SQLite's
    own tables and the full-text index's internal (shadow) tables."""
    tables = connection.execute("SELECT name, sql FROM sqlite_master WHERE type = 'table'")
    found = tables.fetchall()
    virtual = [name for name, sql in found if sql.upper().startswith("CREATE VIRTUAL TABLE")]
    for name, _sql in found:
        internal = name.startswith("sqlite_") or name == "alembic_version"
        if internal or any(name.startswith(f"{table}_") for table in virtual):
            continue
        quoted = name.replace('"', '""')
        if connection.execute(f'SELECT EXISTS (SELECT 1 FROM "{quoted}")').fetchone()[0]:
            return True
    return False


def _sqlite_path(database: str) -> str:
    """The file behind a SQLite ``database`` (a plain path, or a ``file:`` URI)."""
    if not database.startswith("file:"):
        return database
    from urllib.parse import unquote

    return unquote(database.removeprefix("file:").split("?", 1)[0])


def open_database(
    url: str | URL | os.PathLike[str] | None = None,
    *,
    migrate: bool = True,
    create: bool = True,
    settings: ConnectionSettings | None = None,
) -> Database:
    """Open (and by default create or upgrade) the database at ``url``.

    ``create=False`` refuses a database that does not exist yet (:class:`NoDatabase`).
    A database holding other tables and no vetbench schema is refused untouched
    (:class:`NotVetbench`); an unreachable server raises :class:`CannotConnect`.
    """
    settings = settings or ConnectionSettings.from_env()
    resolved = url if isinstance(url, URL) else resolve_db_url(url)
    if resolved.get_backend_name() == "sqlite" and resolved.database not in (None, "", ":memory:"):
        return _open_sqlite(Path(resolved.database), resolved, migrate, create, settings)
    engine = make_engine(resolved, settings)
    try:
        tables = set(inspect(engine).get_table_names())
    except Exception as error:
        engine.dispose()
        raise CannotConnect(hide_password(resolved), error, settings.connect_timeout_s) from None
    _check_schema(hide_password(resolved), tables, create)
    if migrate:
        from db.migrate import upgrade_to_head

        upgrade_to_head(engine, hide_password(resolved))
    return Database(engine)


def _open_sqlite(
    path: Path, url: URL, migrate: bool, create: bool, settings: ConnectionSettings
) -> Database:
    shown = str(path)
    if not path.is_absolute():
        # Only a URL keeps a relative path (a plain --db path is made absolute), and
        # sqlite:///tmp/x.db is one: tmp/x.db here, not /tmp/x.db (that takes four slashes).
        absolute = f"; sqlite:////{path} would be /{path}" if len(path.parts) > 1 else ""
        shown = f"{path} (relative to {Path.cwd()}{absolute})"
    if not path.exists():
        if not create:
            raise NoDatabase(shown)
        if not path.parent.is_dir():
            if path.parent.exists():
                raise DatabaseFault(f"{shown}: {path.parent} is a file, not a folder")
            raise DatabaseFault(
                f"{shown}: the folder {path.parent} does not exist; vetbench creates the "
                "database file, not its folder"
            )
        tables: set[str] = set()
    else:
        if path.is_dir():
            raise DatabaseFault(f"{shown} is a folder, not a database file")
        tables = _sqlite_tables(path)
        _check_schema(shown, tables, create)
    read_only = path.exists() and not (os.access(path, os.W_OK) and _folder_writable(path))
    notice = None
    if read_only:
        why = "the file" if not os.access(path, os.W_OK) else "its folder"
        notice = (
            f"{shown} is opened read-only: {why} cannot be written; commands that write will fail"
        )
    engine = make_engine(url, settings, read_only=read_only)
    if migrate and not read_only:
        from db.migrate import upgrade_to_head

        upgrade_to_head(engine, shown)
    elif migrate:
        _refuse_outdated_read_only(engine, shown)
    return Database(engine, read_only=read_only, notice=notice)


def _sqlite_tables(path: Path) -> set[str]:
    """The tables of the SQLite file at ``path``, read without changing a byte of it and
    without leaving a file beside it that was not there (:func:`_leave_no_journal`)."""
    journals = [path.with_name(path.name + suffix) for suffix in ("-wal", "-shm")]
    found = [journal.exists() for journal in journals]
    try:
        return _read_sqlite_tables(path)
    finally:
        _leave_no_journal(path, journals, found)


def _leave_no_journal(path: Path, journals: list[Path], found: list[bool]) -> None:
    """A read-only connection to a database in WAL mode makes its ``-wal`` and ``-shm``
    files and, being read-only, never removes them: only a read-write connection, the last
    to close, does.  So when the look made them, one read-write connection that writes
    nothing is opened and closed at once; its WAL is empty, so the database's bytes stay as
    they were, and while anyone else has the database open the files are theirs and stay."""
    from urllib.parse import quote

    if any(found) or not any(journal.exists() for journal in journals):
        return
    try:
        connection = sqlite3.connect(f"file:{quote(str(path))}?mode=rw", uri=True)
        try:
            connection.execute("PRAGMA schema_version").fetchone()  # it reads; close tidies
        finally:
            connection.close()
    except sqlite3.Error:  # a file it may not write: the files stay, as SQLite leaves them
        pass


def _read_sqlite_tables(path: Path) -> set[str]:
    from urllib.parse import quote

    try:
        connection = sqlite3.connect(f"file:{quote(str(path))}?mode=ro", uri=True)
    except sqlite3.Error as error:
        raise DatabaseFault(f"cannot open {path}: {error}") from None
    try:
        rows = connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'").fetchall()
    except sqlite3.DatabaseError as error:
        if "not a database" in str(error) or "encrypted" in str(error):
            raise NotVetbench(str(path), "it is not a SQLite database") from None
        if "unable to open" in str(error) or "readonly" in str(error):
            # A WAL file in a read-only folder without a -shm file: look at it as it is.
            return _sqlite_tables_immutable(path)
        raise DatabaseFault(f"cannot read {path}: {error}") from None
    finally:
        connection.close()
    return {name for (name,) in rows}


def _sqlite_tables_immutable(path: Path) -> set[str]:
    from urllib.parse import quote

    connection = sqlite3.connect(f"file:{quote(str(path))}?mode=ro&immutable=1", uri=True)
    try:
        rows = connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'").fetchall()
    except sqlite3.DatabaseError as error:
        raise DatabaseFault(f"cannot read {path}: {error}") from None
    finally:
        connection.close()
    return {name for (name,) in rows}


def _check_schema(shown: str, tables: set[str], create: bool) -> None:
    if SCHEMA_VERSION_TABLE in tables:
        return
    if tables:
        listed = ", ".join(sorted(tables)[:5]) + (" ..." if len(tables) > 5 else "")
        raise NotVetbench(shown, f"it holds other tables ({listed}) and no vetbench schema")
    if not create:
        raise NoDatabase(shown, empty=True)


def _refuse_outdated_read_only(engine: Engine, shown: str) -> None:
    from db.migrate import current_revision, head_revision, refuse_unknown_revision

    refuse_unknown_revision(engine, shown)
    if current_revision(engine) != head_revision():
        raise DatabaseFault(
            f"{shown} needs a schema upgrade, but it is read-only; "
            "open it once where it can be written"
        )

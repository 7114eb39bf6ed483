"""The one engine factory, and the ``Database`` handle every actor opens.

``--db`` / ``VETBENCH_DB`` takes a file path or a SQLAlchemy URL; the default is
``./vetbench.db``.  Opening a database brings its schema up to date with Alembic,
so a file made by an earlier version upgrades in place.

SQLite connections get WAL, a busy timeout and foreign keys.  Write transactions
(``Database.transaction``) begin with ``BEGIN IMMEDIATE`` so that concurrent
writers queue on the busy timeout instead of failing with "database is locked"
when a read lock would have to be upgraded.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from sqlalchemy import Engine, create_engine, event
from sqlalchemy.engine import URL, make_url
from sqlmodel import Session

DEFAULT_DB_PATH = "vetbench.db"
DB_ENV_VAR = "VETBENCH_DB"
SQLITE_BUSY_TIMEOUT_MS = 60_000
_BEGIN_OPTION = "vetbench_sqlite_begin"


def resolve_db_url(value: str | os.PathLike[str] | None = None) -> URL:
    """Turn ``--db`` (a path or a URL), else ``$VETBENCH_DB``, else ``./vetbench.db`` into a URL."""
    raw = os.fspath(value) if value is not None else os.environ.get(DB_ENV_VAR) or DEFAULT_DB_PATH
    if "://" in raw:
        return make_url(raw)
    return make_url(f"sqlite:///{Path(raw).expanduser().resolve()}")


def _configure_sqlite(engine: Engine) -> None:
    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection, _record) -> None:  # type: ignore[no-untyped-def]
        # Take transaction control away from pysqlite so BEGIN can be IMMEDIATE.
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        cursor.execute(f"PRAGMA busy_timeout = {SQLITE_BUSY_TIMEOUT_MS}")
        cursor.execute("PRAGMA journal_mode = WAL")
        cursor.execute("PRAGMA foreign_keys = ON")
        cursor.execute("PRAGMA synchronous = NORMAL")
        cursor.close()

    @event.listens_for(engine, "begin")
    def _on_begin(connection) -> None:  # type: ignore[no-untyped-def]
        mode = connection.get_execution_options().get(_BEGIN_OPTION, "")
        connection.exec_driver_sql(f"BEGIN {mode}".strip())


# PostgreSQL aborts one side of a deadlock (40P01) or a serialization conflict (40001);
# the aborted transaction is safe to run again.
TRANSIENT_SQLSTATES = frozenset({"40P01", "40001"})


def is_transient_conflict(error: BaseException) -> bool:
    """True for a database error that a retry of the whole transaction resolves."""
    original = getattr(error, "orig", None)
    return getattr(original, "sqlstate", None) in TRANSIENT_SQLSTATES


def make_engine(url: str | URL | os.PathLike[str] | None = None) -> Engine:
    """Create an engine for ``url`` (path, URL, or the configured default)."""
    resolved = url if isinstance(url, URL) else resolve_db_url(url)
    if resolved.get_backend_name() == "sqlite":
        engine = create_engine(resolved, connect_args={"check_same_thread": False, "timeout": 60})
        _configure_sqlite(engine)
        return engine
    return create_engine(resolved, pool_pre_ping=True)


@dataclass
class Database:
    """An open, migrated database: the bus every actor reads and writes."""

    engine: Engine

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
            return url.database
        return url.render_as_string(hide_password=True)

    def session(self) -> Session:
        """A session for reading (and small writes the caller commits itself)."""
        return Session(self.engine, expire_on_commit=False)

    @contextmanager
    def transaction(self) -> Iterator[Session]:
        """A write transaction: commits on success, rolls back on error.

        On SQLite it takes the write lock up front (``BEGIN IMMEDIATE``), waiting
        on the busy timeout while another writer holds it.
        """
        bind = self.engine.execution_options(**{_BEGIN_OPTION: "IMMEDIATE"})
        with Session(bind, expire_on_commit=False) as session:
            try:
                yield session
                session.commit()
            except BaseException:
                session.rollback()
                raise

    def dispose(self) -> None:
        self.engine.dispose()


def open_database(
    url: str | URL | os.PathLike[str] | None = None, *, migrate: bool = True
) -> Database:
    """Open (and by default create or upgrade) the database at ``url``."""
    engine = make_engine(url)
    if migrate:
        from db.migrate import upgrade_to_head

        upgrade_to_head(engine)
    return Database(engine)

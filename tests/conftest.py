"""Shared fixtures: every test works on its own database in tmp_path.

Migrating a new database takes a tenth of a second on SQLite and a second on
PostgreSQL, and most tests start from one; so each test process (each pytest-xdist
worker) migrates one template per backend and copies it.  On SQLite every in-process
migration of an empty file (``open_database``, ``vetbench init``, ``vetbench import``
on a new file ...) restores the template's pages instead (SQLite's backup API), and
the migration that follows finds nothing to do; on PostgreSQL the ``database``
fixture, and ``fresh_postgres_database(..., migrated=True)``, create the database
with ``CREATE DATABASE ... TEMPLATE``, and a copy a test changed only the rows of is
emptied and handed to the next test instead of dropped (tests/postgres_recycling.py).
tests/test_migration_templates.py checks that a copy, a recycled one too, holds exactly
what a migration makes.

Tests that start from the same rows (a judged study, the evaluator's mixed set ...) take
them the same way: ``BuiltDatabases`` builds each state once per process and backend,
and copies it into each test's database (tests/test_built_databases.py checks the copies).
"""

from __future__ import annotations

import copy
import gc
import os
import shutil
import signal
import sqlite3
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import postgres_recycling as recycling
import psycopg
import pytest
import textual_speed
from fake_openai_server import FakeOpenAIServer
from sqlalchemy import Engine
from tiny_model import TEST_MODEL_CACHE

import db.migrate
from db.engine import Database, make_engine, open_database

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"
CFLUE_KNOWLEDGE = ROOT.parent / "shared" / "data" / "cflue" / "knowledge.json"
PG_URL_ENV = "VETBENCH_TEST_PG_URL"
T = TypeVar("T")


# Each test process computes on one thread: the parallelism is pytest-xdist's processes,
# and a second thread per process on a two-core machine only makes torch's (OpenMP's)
# threads spin against each other's.  Set before torch is imported; child processes the
# tests start inherit it.
for _threads in ("OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_threads, "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

# Ctrl+C as a terminal sends it: a shell script that starts the suite in the background
# (`bash scripts/test.sh > log &`) hands every process SIGINT ignored, which Python then
# keeps, and the tests of what Ctrl+C does (and the children they interrupt) would see
# nothing.  Each test process, xdist's workers included, imports this file first.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


# Textual's CSS parsed once a process, not once an app (why: there).
textual_speed.apply()

# Young collections after 50,000 new container objects, not Python's 700: an app's start,
# a render, a query make tens of thousands of short-lived objects, most of them freed by
# reference counting before the collector would look, and the default ran about thirty
# young collections a test.  Measured on 96 app, gold and import tests (SQLite, one
# process, 2026-12-06): 3,100 young collections, 2.0-2.1 s of them in the collector and
# 19.2-20.3 CPU-s in all, against 24, 1.2 s and 17.8 CPU-s.  Full collections are as
# before (the threshold's other two numbers, and the hook below); the review app keeps
# whatever young threshold it finds (reviewer/tui/idle_gc.py).
YOUNG_COLLECTION_THRESHOLD = 50_000
gc.set_threshold(YOUNG_COLLECTION_THRESHOLD, *gc.get_threshold()[1:])


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Tests marked ``slow`` run first (in their own order, the rest after in theirs):
    pytest-xdist hands tests out in this order as workers free up, so the long ones are
    spread over the workers at the start instead of one of them finishing the run alone
    on a late one while the others wait."""
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)


@pytest.fixture(autouse=True, scope="session")
def _frozen_start_up_objects() -> Iterator[None]:
    """The modules imported by collection (torch, transformers, Textual ...) are frozen out
    of the cyclic collector, as the review app does with its own start-up objects
    (reviewer/tui/idle_gc.py): every full collection in every test, the app's included,
    then walks only what the tests made, not the whole of those libraries again."""
    gc.collect()
    gc.freeze()
    # Left frozen at the end: pytest's own clean-up then collects five times over, and
    # with everything thawed each of those walked all of torch again (3 s per process).
    yield


_after_full_collections = False  # set by this process's first full collection, then kept


def _note_first_full_collection(phase: str, info: dict[str, int]) -> None:
    global _after_full_collections
    if phase == "stop" and info["generation"] == 2:
        _after_full_collections = True


gc.callbacks.append(_note_first_full_collection)


def pytest_runtest_logfinish() -> None:
    """Tests import libraries lazily (alembic, crowd-kit, transformers ...) and fill caches:
    objects that live as long as the process, which every later full collection walked
    again (16-24 s a worker).  From a process's first full collection on, once each
    test's own objects are garbage, collect and freeze the survivors, as the session
    start does (10 s a worker).  The xdist controller, which makes few objects, seldom
    gets there (measured: doing this after every test from the start, the controller
    included, was no better)."""
    if _after_full_collections:
        gc.collect()
        gc.freeze()


@pytest.fixture(autouse=True, scope="session")
def _shared_model_cache() -> Iterator[None]:
    """Converted models (the demo model's GGUF conversion, 15 s of CPU) are cached once
    per checkout, shared by every test and test run, never in the user's own cache.
    Test processes (pytest-xdist workers) convert one at a time, as any processes do
    (``evaluator.demo_model.convert_gguf``): the second waits for the first's copy."""
    previous = os.environ.get("VETBENCH_CACHE")
    os.environ["VETBENCH_CACHE"] = str(TEST_MODEL_CACHE)
    yield
    if previous is None:
        os.environ.pop("VETBENCH_CACHE", None)
    else:
        os.environ["VETBENCH_CACHE"] = previous


@pytest.fixture(autouse=True)
def _isolated_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Never read a user's real database or caches."""
    monkeypatch.delenv("VETBENCH_DB", raising=False)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("TRANSFORMERS_OFFLINE", "1")
    monkeypatch.chdir(tmp_path)


@pytest.fixture(autouse=True)
def _notices_outlast_the_test(monkeypatch: pytest.MonkeyPatch) -> None:
    """Toasts stay until the test ends: tests read what the app said from its
    notifications, and on a busy machine a pilot's steps can take longer than a toast's
    few seconds, which made them flaky (the message had already expired)."""
    from textual.notifications import Notification

    monkeypatch.setattr(Notification, "time_left", property(lambda _self: 3600.0))


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "test.db"


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def database_url(request: pytest.FixtureRequest, db_path: Path) -> Iterator[str]:
    """A fresh, empty database: a SQLite file, and (when VETBENCH_TEST_PG_URL names a
    server) a new PostgreSQL database created for this test and dropped after it.

    When the test also uses ``database``, the PostgreSQL database is made migrated (a
    copy of the session's template), as ``database`` would leave it."""
    if request.param == "sqlite":
        yield str(db_path)
        return
    server_url = postgres_server()
    yield from fresh_postgres_database(server_url, migrated="database" in request.fixturenames)


@dataclass(frozen=True)
class _Built:
    """A database built once: the SQLite file or the PostgreSQL database holding it, what
    its builder returned, and (PostgreSQL) the server it is on."""

    where: str
    value: Any
    server_url: str | None = None


class BuiltDatabases:
    """Databases many tests start from (a study judged by several annotators ...): each
    built once per test process and backend by its function (with its arguments), then
    copied for every test that asks for it: a file copy on SQLite, ``CREATE DATABASE ...
    TEMPLATE`` on PostgreSQL.  tests/test_built_databases.py checks that a copy holds
    exactly what building it gives, and that what one test writes into its copy no other
    copy sees."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.built: dict[tuple[str, ...], _Built] = {}

    def copy(self, db_path: Path, build: Callable[[Database], None]) -> Database:
        """A SQLite database at ``db_path`` holding what ``build`` stores into a new one."""
        shutil.copyfile(self._built_sqlite(build, ()).where, db_path)
        return open_database(db_path)

    def fill(self, database: Database, build: Callable[..., T], *args: Any) -> T:
        """Make ``database`` (the ``database`` fixture's, nothing written to it yet) hold
        what ``build(a new database, *args)`` stores into a new one; returns a copy of
        what ``build`` returned, for the test to change as it likes."""
        path_or_name = database.url.database
        assert path_or_name is not None
        database.dispose()  # its engine reconnects, to the copy, on its next use
        if database.is_sqlite:
            built = self._built_sqlite(build, args)
            for leftover in ("-wal", "-shm"):  # none after dispose; a stale WAL would replay
                Path(path_or_name + leftover).unlink(missing_ok=True)
            shutil.copyfile(built.where, path_or_name)
        else:
            built = self._built_postgres(postgres_server(), build, args)
            _replace_postgres_database(postgres_server(), path_or_name, built.where)
        value: T = copy.deepcopy(built.value)
        return value

    def _built_sqlite(self, build: Callable[..., Any], args: tuple[Any, ...]) -> _Built:
        key = ("sqlite", _name_of(build), repr(args))
        if key not in self.built:
            path = self.folder / f"{len(self.built)}-{_name_of(build)}.db"
            database = open_database(path)
            try:
                value = build(database, *args)
            finally:
                database.dispose()  # the last connection closing folds the WAL into the file
            self.built[key] = _Built(str(path), value)
        return self.built[key]

    def _built_postgres(
        self, server_url: str, build: Callable[..., Any], args: tuple[Any, ...]
    ) -> _Built:
        key = ("postgresql", server_url, _name_of(build), repr(args))
        if key not in self.built:
            name = _new_database(server_url, postgres_template(server_url))
            database = open_database(_postgres_url_of(server_url, name))
            try:
                value = build(database, *args)
            except BaseException:
                database.dispose()
                _drop_postgres_database(server_url, name)
                raise
            database.dispose()  # CREATE DATABASE ... TEMPLATE needs it to have no connection
            self.built[key] = _Built(name, value, server_url)
        return self.built[key]

    def drop_all(self) -> None:
        """The PostgreSQL databases built (the SQLite files go with their folder)."""
        for built in self.built.values():
            if built.server_url is not None:
                _drop_postgres_database(built.server_url, built.where)
        self.built.clear()


def _name_of(build: Callable[..., Any]) -> str:
    return f"{build.__module__}.{build.__qualname__}"


@pytest.fixture(scope="session")
def built_databases(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BuiltDatabases]:
    built = BuiltDatabases(tmp_path_factory.mktemp("built"))
    yield built
    built.drop_all()


@pytest.fixture
def approved(database: Database, built_databases: BuiltDatabases) -> list[str]:
    """The approved items of the evaluator's mixed set (tests/eval_helpers.py), stored in
    ``database``: built once per test process and backend, and copied."""
    from eval_helpers import mixed_set

    return built_databases.fill(database, mixed_set)


@pytest.fixture
def database(database_url: str) -> Iterator[Database]:
    """The migrated database behind ``database_url``, on SQLite and on PostgreSQL."""
    db = open_database(database_url)
    yield db
    db.dispose()


# --- migrated templates ------------------------------------------------------------------

_real_upgrade_to_head = db.migrate.upgrade_to_head
_templates: dict[str, str] = {}  # backend -> this process's template (a path, a name)


def _worker() -> str:
    return os.environ.get("PYTEST_XDIST_WORKER", "main")


def sqlite_template() -> Path:
    """This process's migrated SQLite file (made on first use, by a real migration)."""
    if "sqlite" not in _templates:
        import tempfile

        folder = Path(tempfile.mkdtemp(prefix=f"vetbench-template-{_worker()}-"))
        path = folder / "template.db"
        engine = make_engine(path)
        _real_upgrade_to_head(engine, str(path))  # the real migration, from an empty file
        engine.dispose()  # the last connection closing folds the WAL into the file
        _templates["sqlite"] = str(path)
    return Path(_templates["sqlite"])


def _is_empty_sqlite_file(engine: Engine) -> bool:
    url = engine.url
    if url.get_backend_name() != "sqlite" or url.database in (None, "", ":memory:"):
        return False
    if str(url.database).startswith("file:"):
        return False  # opened read-only: never written to
    path = Path(url.database)
    if not path.exists() or path.stat().st_size == 0:
        return True
    # Not through the engine: what a test counts of its statements stays as it was.
    with sqlite3.connect(path) as connection:
        tables = connection.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]
    connection.close()
    return tables == 0


def _upgrade_from_template(engine: Engine, shown: str) -> None:
    """``upgrade_to_head``, restoring the migrated template into an empty SQLite file first."""
    if _is_empty_sqlite_file(engine):
        source = sqlite3.connect(sqlite_template())
        target = engine.raw_connection()
        try:
            source.backup(target.driver_connection)  # page for page: exactly the template
        finally:
            target.close()
            source.close()
    _real_upgrade_to_head(engine, shown)  # a no-op now, unless the file was not empty


@pytest.fixture(autouse=True, scope="session")
def _migrated_templates() -> Iterator[None]:
    db.migrate.upgrade_to_head = _upgrade_from_template
    yield
    db.migrate.upgrade_to_head = _real_upgrade_to_head
    if "sqlite" in _templates:
        shutil.rmtree(Path(_templates.pop("sqlite")).parent, ignore_errors=True)
    if "postgresql" in _templates and (server_url := postgres_url()) is not None:
        while _recycled:
            _drop_postgres_database(server_url, _recycled.pop())
        _drop_postgres_database(server_url, _templates.pop("postgresql"))


def _admin_sql(server_url: str, *statements: str) -> None:
    from sqlalchemy import create_engine, text

    admin = create_engine(server_url, isolation_level="AUTOCOMMIT")
    try:
        with admin.connect() as connection:
            for statement in statements:
                connection.execute(text(statement))
    finally:
        admin.dispose()


def _drop_postgres_database(server_url: str, name: str) -> None:
    _admin_sql(server_url, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def _postgres_url_of(server_url: str, name: str) -> str:
    from sqlalchemy.engine import make_url

    return make_url(server_url).set(database=name).render_as_string(hide_password=False)


@dataclass(frozen=True)
class _TemplateState:
    """What a recycled copy of the template must match (tests/postgres_recycling.py)."""

    catalog: tuple[tuple[str, str], ...]
    tables: tuple[str, ...]
    superuser: bool


_template_states: dict[str, _TemplateState] = {}  # server URL -> its template's state
_recycled: list[str] = []  # this process's emptied copies of the template, ready for a test
_RECYCLED_KEPT = 3
"""Emptied copies a process keeps, the newest: a test gets one and gives one back, but
a test given a built state (``BuiltDatabases``) gives back two (its copy of the template
and its copy of the state), so an unbounded pool grew by one a test and its hundred
databases were dropped one by one at the end of the run, when every worker waits."""
_migrated_in_use: set[str] = set()  # copies of the template tests have now


def postgres_template(server_url: str) -> str:
    """The name of this process's migrated PostgreSQL database (made on first use)."""
    if "postgresql" not in _templates:
        name = f"vetbench_template_{_worker()}_{uuid.uuid4().hex[:8]}"
        _admin_sql(server_url, f'CREATE DATABASE "{name}"')
        engine = make_engine(_postgres_url_of(server_url, name))
        _real_upgrade_to_head(engine, name)  # the real migration, from an empty database
        engine.dispose()  # CREATE DATABASE ... TEMPLATE needs it to have no connection
        try:
            with _connect(server_url, name) as connection:
                _template_states[server_url] = _TemplateState(
                    catalog=recycling.catalog_state(connection),
                    tables=recycling.user_tables(connection),
                    superuser=recycling.is_superuser(connection),
                )
        except psycopg.Error:
            pass  # a server whose catalogs differ from those read: every copy is dropped
        _templates["postgresql"] = name
    return _templates["postgresql"]


def fresh_postgres_database(server_url: str, *, migrated: bool = False) -> Iterator[str]:
    """A database on the server for one test: new and empty, or (``migrated``) a copy of
    the migrated template, recycled when the test that had it changed only rows
    (tests/postgres_recycling.py) and dropped otherwise."""
    name = _take_a_copy(server_url) if migrated else _new_database(server_url, "template1")
    if migrated:
        _migrated_in_use.add(name)
    try:
        yield _postgres_url_of(server_url, name)
    finally:
        if migrated:
            _migrated_in_use.discard(name)
            _recycle_or_drop(server_url, name)
        else:
            _drop_postgres_database(server_url, name)


def _new_database(server_url: str, template: str) -> str:
    name = f"vetbench_test_{uuid.uuid4().hex[:12]}"
    # FILE_COPY: with the test server's fsync=off, a file copy beats WAL-logging every page.
    _admin_sql(server_url, f'CREATE DATABASE "{name}" TEMPLATE "{template}" STRATEGY FILE_COPY')
    return name


def _take_a_copy(server_url: str) -> str:
    """A recycled copy that nothing wrote to since it was emptied, else a new one."""
    while _recycled:
        name = _recycled.pop()
        try:
            with _connect(server_url, name) as connection:
                clean = recycling.holds_nothing(connection, _template_states[server_url].tables)
        except psycopg.Error:
            clean = False
        if clean:
            return name
        _drop_postgres_database(server_url, name)
    return _new_database(server_url, postgres_template(server_url))


def _recycle_or_drop(server_url: str, name: str) -> None:
    state = _template_states.get(server_url)
    recycled = False
    if state is not None and state.superuser:
        try:
            with _connect(server_url, name) as connection:
                connection.execute("SET lock_timeout = '10s'")
                recycling.end_other_sessions(connection)
                if recycling.catalog_state(connection) == state.catalog:
                    recycling.empty_the_database(connection, state.tables)
                    recycled = True
        except psycopg.Error:
            recycled = False
    if recycled:
        _keep_recycled(server_url, name)
    else:
        _drop_postgres_database(server_url, name)


def _keep_recycled(server_url: str, name: str) -> None:
    """``name`` (holding nothing) into the pool; the oldest beyond ``_RECYCLED_KEPT`` dropped."""
    _recycled.append(name)
    while len(_recycled) > _RECYCLED_KEPT:
        _drop_postgres_database(server_url, _recycled.pop(0))


def _replace_postgres_database(server_url: str, name: str, template: str) -> None:
    """Database ``name`` (no session on it) made a new copy of ``template``.  What it was,
    a copy of the migrated template a test was given and has not written to yet, goes
    back to the pool (checked for rows again when taken); anything else is dropped."""
    spare = f"vetbench_test_{uuid.uuid4().hex[:12]}"
    _admin_sql(
        server_url,
        f'ALTER DATABASE "{name}" RENAME TO "{spare}"',
        f'CREATE DATABASE "{name}" TEMPLATE "{template}" STRATEGY FILE_COPY',
    )
    if name in _migrated_in_use:
        _keep_recycled(server_url, spare)
    else:
        _drop_postgres_database(server_url, spare)


def _connect(server_url: str, name: str) -> psycopg.Connection[Any]:
    return psycopg.connect(
        **recycling.conninfo(_postgres_url_of(server_url, name)), autocommit=True
    )


@pytest.fixture
def cflue_knowledge() -> Path:
    if not CFLUE_KNOWLEDGE.exists():
        pytest.skip(f"real CFLUE data not present at {CFLUE_KNOWLEDGE}")
    return CFLUE_KNOWLEDGE


def postgres_url() -> str | None:
    return os.environ.get(PG_URL_ENV) or None


def postgres_server() -> str:
    """The test PostgreSQL server's URL; skips the test where none is set."""
    server_url = postgres_url()
    if server_url is None:
        pytest.skip(f"no PostgreSQL server ({PG_URL_ENV} not set)")
    return server_url


@pytest.fixture
def server() -> Iterator[FakeOpenAIServer]:
    """A fake OpenAI-compatible server on 127.0.0.1 with no default answer (tests script it)."""
    with FakeOpenAIServer() as running:
        yield running

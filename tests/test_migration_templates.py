"""The suite's migrated templates (tests/conftest.py) hold exactly what a migration makes:
a copied SQLite file and a PostgreSQL database created from the template equal, object
for object and row for row, a database migrated from empty by Alembic itself."""

from __future__ import annotations

import shutil
import sqlite3
import subprocess
from pathlib import Path

import postgres_recycling as recycling
import pytest
from conftest import (
    _real_upgrade_to_head,
    _upgrade_from_template,
    fresh_postgres_database,
    postgres_server,
    postgres_template,
    sqlite_template,
)
from helpers import store_item, store_person
from sqlalchemy import text
from sqlalchemy.engine import make_url

import db.migrate
from db.engine import make_engine, open_database


def sqlite_contents(path: Path) -> tuple[list[list[str]], list[tuple[str, object]]]:
    """Every statement that rebuilds the file (schema and rows), and its settings.

    Statements and each statement's lines are sorted: Alembic's batch migrations rebuild
    tables from sets of constraints, so two migrations of empty files list a table's
    foreign keys (the last without a comma) and its indexes in different orders."""
    with sqlite3.connect(path) as connection:
        dump = sorted(
            sorted(line.strip().rstrip(",") for line in statement.split("\n"))
            for statement in connection.iterdump()
        )
        settings = [
            (pragma, connection.execute(f"PRAGMA {pragma}").fetchone()[0])
            for pragma in ("journal_mode", "user_version", "application_id", "page_size")
        ]
    connection.close()
    return dump, settings


def test_tests_open_new_sqlite_files_through_the_template() -> None:
    assert db.migrate.upgrade_to_head is _upgrade_from_template


def test_a_copied_sqlite_file_equals_a_migrated_one(tmp_path: Path) -> None:
    migrated = tmp_path / "migrated.db"
    engine = make_engine(migrated)
    _real_upgrade_to_head(engine, str(migrated))  # Alembic, from an empty file
    engine.dispose()
    copied = tmp_path / "copied.db"
    open_database(copied).dispose()  # through the template
    assert sqlite_contents(copied) == sqlite_contents(migrated)
    assert sqlite_contents(copied) == sqlite_contents(sqlite_template())
    dump, _settings = sqlite_contents(copied)
    stamp = f"INSERT INTO \"alembic_version\" VALUES('{db.migrate.head_revision()}');"
    assert [stamp] in dump


def test_a_file_that_is_not_empty_is_migrated_as_before(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    engine = make_engine(path)
    db.migrate.upgrade_to(engine, "0001")
    _upgrade_from_template(engine, str(path))
    engine.dispose()
    migrated = tmp_path / "migrated.db"
    engine = make_engine(migrated)
    _real_upgrade_to_head(engine, str(migrated))
    engine.dispose()
    assert sqlite_contents(path)[0] == sqlite_contents(migrated)[0]


def pg_dump(url: str) -> str:
    """The whole database as SQL (objects, privileges, policies, rows), names aside."""
    pg_dump_bin = shutil.which("pg_dump") or next(
        iter(sorted(Path("/usr/lib/postgresql").glob("*/bin/pg_dump"))), None
    )
    if pg_dump_bin is None:
        pytest.skip("pg_dump is not installed")
    parsed = make_url(url)
    result = subprocess.run(
        [
            str(pg_dump_bin),
            "--host",
            parsed.host or "127.0.0.1",
            "--port",
            str(parsed.port or 5432),
            "--username",
            parsed.username or "postgres",
            "--no-password",
            str(parsed.database),
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    lines = [  # the versions, and a random key fencing the dump's psql commands
        line
        for line in result.stdout.splitlines()
        if not line.startswith(("-- Dumped", "\\restrict", "\\unrestrict"))
    ]
    return "\n".join(lines).replace(str(parsed.database), "DATABASE")


@pytest.mark.postgres
def test_a_postgres_database_from_the_template_equals_a_migrated_one() -> None:
    server = postgres_server()
    for empty in fresh_postgres_database(server):
        open_database(empty).dispose()  # Alembic, from an empty database
        for copied in fresh_postgres_database(server, migrated=True):
            assert make_url(copied).database != postgres_template(server)
            migrated_dump = pg_dump(empty)
            assert "CREATE POLICY" in migrated_dump and "alembic_version" in migrated_dump
            assert pg_dump(copied) == migrated_dump


def _database_names(server: str) -> set[str]:
    from sqlalchemy import create_engine, text

    engine = create_engine(server)
    try:
        with engine.connect() as connection:
            return set(connection.execute(text("SELECT datname FROM pg_database")).scalars())
    finally:
        engine.dispose()


@pytest.mark.postgres
@pytest.mark.parametrize("emptied_by", ["DELETE", "TRUNCATE"])
def test_a_copy_a_test_wrote_rows_to_is_recycled_as_new(
    emptied_by: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    if emptied_by == "TRUNCATE":  # as a table past recycling.TRUNCATE_FROM_BYTES is
        monkeypatch.setattr(recycling, "TRUNCATE_FROM_BYTES", 0)
    server = postgres_server()
    for empty in fresh_postgres_database(server):
        open_database(empty).dispose()  # Alembic, from an empty database
        migrated_dump = pg_dump(empty)
    for written in fresh_postgres_database(server, migrated=True):
        database = open_database(written)
        store_item(database, "econ:1")  # rows, the search index, the audit trail
        store_person(database, "alice")  # and sequences drawn from
        database.dispose()
        left_open = open_database(written)  # a session a test forgot: ended, not waited on
        with left_open.session() as session:
            session.execute(text("SELECT 1"))
    for again in fresh_postgres_database(server, migrated=True):
        assert make_url(again).database == make_url(written).database
        assert pg_dump(again) == migrated_dump
    left_open.dispose()


@pytest.mark.postgres
@pytest.mark.parametrize(
    "change",
    [
        "GRANT SELECT ON item TO PUBLIC",
        "CREATE TABLE scratch (x int)",
        "ALTER DATABASE {database} SET work_mem = '8MB'",
        "DROP TRIGGER audit_event_no_truncate ON audit_event",
        "UPDATE alembic_version SET version_num = '0001'",
        "COMMENT ON TABLE item IS 'changed'",
    ],
)
def test_a_copy_a_test_changed_more_than_rows_of_is_dropped(change: str) -> None:
    from sqlalchemy import create_engine

    server = postgres_server()
    for changed in fresh_postgres_database(server, migrated=True):
        name = make_url(changed).database
        engine = create_engine(changed, isolation_level="AUTOCOMMIT")
        with engine.connect() as connection:
            connection.execute(text(change.format(database=f'"{name}"')))
        engine.dispose()
    assert name not in _database_names(server)

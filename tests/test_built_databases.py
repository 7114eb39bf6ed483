"""A built database's copy (tests/conftest.py ``BuiltDatabases``) holds exactly what
building it gives: row for row what a fresh build stores (its times aside, which no two
builds share), and, times and all, what the built database itself holds (a pg_dump, a
SQLite dump); what one test writes into its copy no other copy sees; and a PostgreSQL
copy a test had goes back to the pool emptied, as a new copy of the migrated template."""

from __future__ import annotations

import datetime
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from conftest import (
    BuiltDatabases,
    _postgres_url_of,
    fresh_postgres_database,
    postgres_server,
    postgres_template,
)
from helpers import StudyItem, random_study, store_person
from test_migration_templates import pg_dump, sqlite_contents

from db.engine import Database, open_database

SEED = 7
builds: list[int] = []


def counted_study(database: Database, seed: int) -> list[StudyItem]:
    """``random_study``, counting how often it runs."""
    builds.append(seed)
    return random_study(database, seed)


@contextmanager
def another_database(like: Database, folder: Path, name: str) -> Iterator[Database]:
    """A new migrated database on ``like``'s backend."""
    if like.is_sqlite:
        database = open_database(folder / f"{name}.db")
        yield database
        database.dispose()
        return
    with contextmanager(fresh_postgres_database)(postgres_server(), migrated=True) as url:
        database = open_database(url)
        yield database
        database.dispose()


def rows(database: Database) -> dict[str, list[tuple[Any, ...]]]:
    """Every table's rows, sorted, without the columns holding a time (no two builds
    share those); and (PostgreSQL) each sequence's last value."""
    found: dict[str, list[tuple[Any, ...]]] = {}
    metadata = sa.MetaData()
    metadata.reflect(database.engine)
    with database.engine.connect() as connection:
        for table in metadata.sorted_tables:
            columns = [column for column in table.columns if not _is_time(column.type)]
            found[table.name] = sorted(
                (tuple(row) for row in connection.execute(sa.select(*columns))), key=repr
            )
        if not database.is_sqlite:  # SQLite's ids are the rows' (no AUTOINCREMENT counter)
            sequences = sa.text("SELECT sequencename, last_value FROM pg_sequences")
            found["(sequences)"] = sorted(tuple(row) for row in connection.execute(sequences))
    return found


def _is_time(column_type: sa.types.TypeEngine[Any]) -> bool:
    try:
        python_type = column_type.python_type
    except NotImplementedError:
        return False
    return issubclass(python_type, (datetime.datetime, datetime.date))


def dump(database: Database, source: str | None = None) -> object:
    """The whole database, times included, or (``source``: the built one's file or
    name) that built database on the same backend."""
    if database.is_sqlite:
        return sqlite_contents(Path(source or str(database.url.database)))
    url = database.url
    if source is not None:
        url = url.set(database=source)
    return pg_dump(url.render_as_string(hide_password=False))


def test_a_copy_holds_what_building_it_gives(database: Database, tmp_path: Path) -> None:
    built = BuiltDatabases(tmp_path)
    builds.clear()
    try:
        study = built.fill(database, counted_study, SEED)
        assert builds == [SEED]
        (source,) = built.built.values()
        with another_database(database, tmp_path, "fresh") as fresh:
            expected = random_study(fresh, SEED)
            assert study == expected
            assert rows(database) == rows(fresh)
        assert len(rows(database)["judgment"]) >= sum(len(item.judgments) for item in study) > 0
        dumped = dump(database, source.where)
        assert dumped == dump(database)

        # what a test writes into its copy, and does to the study it was given, stays its own
        store_person(database, "only-in-the-first-copy")
        study[0].judgments.clear()
        with another_database(database, tmp_path, "second") as second:
            assert built.fill(second, counted_study, SEED) == expected
            assert builds == [SEED]  # copied, not built again
            assert dump(second) == dumped
        assert "only-in-the-first-copy" in str(rows(database)["person"])
    finally:
        built.drop_all()


def test_each_argument_is_its_own_build(database: Database, tmp_path: Path) -> None:
    built = BuiltDatabases(tmp_path)
    builds.clear()
    try:
        first = built.fill(database, counted_study, SEED)
        with another_database(database, tmp_path, "other") as other:
            second = built.fill(other, counted_study, SEED + 1)
            assert builds == [SEED, SEED + 1]
            assert {item.item_id.split(":")[1] for item in first} == {str(SEED)}
            assert {item.item_id.split(":")[1] for item in second} == {str(SEED + 1)}
            assert rows(other) != rows(database)
    finally:
        built.drop_all()


@pytest.mark.postgres
def test_a_built_copy_a_test_had_goes_back_to_the_pool_as_a_new_copy(tmp_path: Path) -> None:
    server = postgres_server()
    built = BuiltDatabases(tmp_path)
    template_dump = pg_dump(_postgres_url_of(server, postgres_template(server)))
    try:
        with contextmanager(fresh_postgres_database)(server, migrated=True) as url:
            database = open_database(url)
            built.fill(database, random_study, SEED)
            store_person(database, "written-by-the-test")
            database.dispose()
            assert pg_dump(url) != template_dump
        with contextmanager(fresh_postgres_database)(server, migrated=True) as again:
            assert again == url  # the copy the first test had, emptied
            assert pg_dump(again) == template_dump
    finally:
        built.drop_all()

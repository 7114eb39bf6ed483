"""Migrations and models agree, and a database made at any earlier revision, with data in
every table, upgrades in place when the current code opens it.

The upgrade test is generic: it walks every revision in ``db/migrations/versions``, so
each new migration is checked against data written by the schema before it.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlmodel import SQLModel

import db.models  # noqa: F401  (registers every table on SQLModel.metadata)
from db.engine import make_engine, open_database
from db.importer import import_files
from db.migrate import alembic_config, current_revision, head_revision, upgrade_to
from db.search import include_in_comparison, is_search_table


def all_revisions() -> list[str]:
    """Every revision id, oldest first."""
    script = ScriptDirectory.from_config(alembic_config())
    return [revision.revision for revision in reversed(list(script.walk_revisions()))]


OLDER_REVISIONS = all_revisions()[:-1]


def test_the_models_and_the_migrations_describe_the_same_schema(db_path: Path) -> None:
    database = open_database(db_path)
    try:
        with database.engine.connect() as connection:
            context = MigrationContext.configure(
                connection,
                opts={
                    "compare_type": True,
                    "render_as_batch": True,
                    "include_name": include_in_comparison,
                },
            )
            differences = compare_metadata(context, SQLModel.metadata)
    finally:
        database.dispose()
    assert differences == [], "models and migrations differ; add a migration:\n" + "\n".join(
        map(str, differences)
    )


def test_there_is_one_head_and_the_chain_starts_at_0001() -> None:
    script = ScriptDirectory.from_config(alembic_config())
    assert len(script.get_heads()) == 1
    assert all_revisions()[0] == "0001"
    assert all_revisions()[-1] == head_revision()


def _sample_value(column: sa.Column[Any], table: str, inserted: dict[str, dict[str, Any]]) -> Any:
    """A value for ``column`` that its type accepts and, for a foreign key, that exists."""
    for foreign_key in column.foreign_keys:
        target = foreign_key.column
        if target.table.name == table or target.table.name not in inserted:
            return None
        return inserted[target.table.name][target.name]
    kind = column.type
    if isinstance(kind, sa.JSON):
        return {"written_by": "an older revision", "list": [1, 2]}
    if isinstance(kind, sa.DateTime):
        return datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
    if isinstance(kind, sa.Boolean):
        return True
    if isinstance(kind, sa.Integer):
        return 3
    if isinstance(kind, sa.Float | sa.Numeric):
        return 1.5
    if isinstance(kind, sa.String):
        text = f"{table}.{column.name} kept"
        return text[: kind.length] if kind.length else text
    raise AssertionError(f"no sample value for {table}.{column.name} of type {kind!r}")


def _fill_every_table(engine: sa.Engine) -> dict[str, dict[str, Any]]:
    """Insert one row in every table (parents first); returns what each row holds."""
    metadata = sa.MetaData()
    metadata.reflect(engine)
    inserted: dict[str, dict[str, Any]] = {}
    # A release is stored after its items, and counts them (db.releases).
    tables = sorted(metadata.sorted_tables, key=lambda table: table.name == "release")
    with engine.begin() as connection:
        for table in tables:
            if table.name == "alembic_version" or is_search_table(table.name):
                continue  # the search index is kept by triggers
            values = {}
            for column in table.columns:
                autoincrement = (
                    column.primary_key
                    and isinstance(column.type, sa.Integer)
                    and len(table.primary_key.columns) == 1
                    and not column.foreign_keys  # review_filter's key is its person's
                )
                if not autoincrement:
                    values[column.name] = _sample_value(column, table.name, inserted)
            if table.name == "release":
                values["name"] = inserted["release_item"]["release_name"]
                values["item_count"] = 1
            result = connection.execute(table.insert().values(**values))
            if result.inserted_primary_key:
                for column, key in zip(
                    table.primary_key.columns, result.inserted_primary_key, strict=True
                ):
                    values[column.name] = key
            assert all(values[c.name] is not None for c in table.columns if not c.nullable), (
                f"could not fill {table.name}"
            )
            inserted[table.name] = values
    return inserted


def _read_back(engine: sa.Engine, table_name: str, row: dict[str, Any]) -> dict[str, Any]:
    metadata = sa.MetaData()
    table = sa.Table(table_name, metadata, autoload_with=engine)
    # By the key the row was written with (a later revision may have widened the key:
    # api_response's took db_role in 0016, "" for the rows before).
    key = [
        table.c[column.name] == row[column.name]
        for column in table.primary_key.columns
        if column.name in row
    ]
    with engine.connect() as connection:
        found = connection.execute(sa.select(table).where(*key)).mappings().one()
    return {name: found[name] for name in row}


@pytest.mark.parametrize("revision", OLDER_REVISIONS or ["0001"])
def test_a_database_made_at_an_older_revision_upgrades_in_place(
    revision: str, db_path: Path, tmp_path: Path
) -> None:
    engine = make_engine(db_path)
    upgrade_to(engine, revision)
    assert current_revision(engine) == revision
    inserted = _fill_every_table(engine)
    before = {name: _read_back(engine, name, row) for name, row in inserted.items()}
    engine.dispose()
    assert "item" in inserted and "item_revision" in inserted

    database = open_database(db_path)  # what every command does first
    try:
        assert current_revision(database.engine) == head_revision()
        after = {name: _read_back(database.engine, name, row) for name, row in inserted.items()}
        assert after == before
        # The upgraded database takes new work like a new one.
        items = tmp_path / "after_upgrade.csv"
        items.write_text(
            'Question,A,B,Answer\nA bank raises rates.,Loans cost more,Rates rise,"B, A"\n',
            encoding="utf-8",
        )
        assert import_files(database, [items]).tally.added == 1
    finally:
        database.dispose()


def test_opening_an_upgraded_database_again_changes_nothing(db_path: Path) -> None:
    engine = make_engine(db_path)
    upgrade_to(engine, all_revisions()[0])
    engine.dispose()
    open_database(db_path).dispose()
    with sa.create_engine(f"sqlite:///{db_path}").connect() as connection:
        versions = connection.execute(sa.text("SELECT version_num FROM alembic_version")).all()
    assert versions == [(head_revision(),)]
    again = open_database(db_path)
    assert current_revision(again.engine) == head_revision()
    again.dispose()


def _statistics_tables(engine: sa.Engine) -> set[str]:
    """The tables SQLite holds planner statistics of (none before an ANALYZE)."""
    with engine.connect() as connection:
        if not connection.execute(
            sa.text("SELECT 1 FROM sqlite_master WHERE name = 'sqlite_stat1'")
        ).first():
            return set()
        return {str(row[0]) for row in connection.execute(sa.text("SELECT tbl FROM sqlite_stat1"))}


def test_a_database_imported_before_imports_gathered_statistics_gets_them_once(
    db_path: Path, tmp_path: Path
) -> None:
    """0025: without statistics the review queue walked every open item (db.planner_statistics);
    an empty database, such as a new one, gets none (an import gathers them)."""
    engine = make_engine(db_path)
    upgrade_to(engine, "0024_release_item_metadata")
    _fill_every_table(engine)
    engine.dispose()
    database = open_database(db_path)
    assert {"item", "item_revision", "judgment"} <= _statistics_tables(database.engine)
    database.dispose()
    empty = open_database(tmp_path / "new.db")
    assert _statistics_tables(empty.engine) == set()
    empty.dispose()

"""Migrations run backwards: the initial migration's downgrade (a table of tables), and
every downgrade from the head, on SQLite and PostgreSQL (where row-level policies and
grants must go before the columns they use)."""

from __future__ import annotations

import sqlalchemy as sa
from alembic import command

from db.engine import make_engine
from db.migrate import alembic_config, current_revision, head_revision, upgrade_to


def _tables(engine: sa.Engine) -> set[str]:
    return set(sa.inspect(engine).get_table_names()) - {"alembic_version"}


def test_the_initial_migration_downgrades_to_no_tables_and_up_again(database_url: str) -> None:
    engine = make_engine(database_url)
    try:
        upgrade_to(engine, "0001")
        created = _tables(engine)
        assert {"item", "item_revision", "judgment", "person", "audit_event"} <= created

        command.downgrade(alembic_config(engine), "base")
        assert current_revision(engine) is None
        assert _tables(engine) == set()

        upgrade_to(engine, "0001")
        assert _tables(engine) == created
    finally:
        engine.dispose()


def test_a_database_at_the_head_downgrades_to_no_tables_and_up_again(database_url: str) -> None:
    # On PostgreSQL 0006's downgrade first drops the policy that uses the columns it drops.
    engine = make_engine(database_url)
    try:
        upgrade_to(engine, "head")
        assert current_revision(engine) == head_revision()
        created = _tables(engine)
        command.downgrade(alembic_config(engine), "base")
        assert _tables(engine) == set()
        upgrade_to(engine, "head")
        assert _tables(engine) == created
    finally:
        engine.dispose()

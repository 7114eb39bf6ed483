"""Alembic environment: runs on the engine handed over in ``config.attributes``."""

from __future__ import annotations

from alembic import context
from sqlalchemy import text
from sqlmodel import SQLModel

import db.models  # noqa: F401  (registers the tables on SQLModel.metadata)
from db.search import include_in_comparison

config = context.config
engine = config.attributes["engine"]
target_metadata = SQLModel.metadata


def run_migrations() -> None:
    is_sqlite = engine.url.get_backend_name() == "sqlite"
    # On SQLite take the write lock before reading the current revision, so two
    # processes opening a new database at once do not both create the tables.
    bind = engine.execution_options(vetbench_sqlite_begin="IMMEDIATE") if is_sqlite else engine
    with bind.connect() as connection:
        context.configure(
            connection=connection,
            target_metadata=target_metadata,
            render_as_batch=is_sqlite,
            compare_type=True,
            include_name=include_in_comparison,  # the search index is no model
        )
        with context.begin_transaction():
            if engine.url.get_backend_name() == "postgresql":
                connection.execute(text("SELECT pg_advisory_xact_lock(7413220)"))
            context.run_migrations()


run_migrations()

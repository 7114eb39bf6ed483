"""``vetbench setup-postgres``: the one-time SQL that makes a PostgreSQL database a team database.

Part 1 needs a database administrator (or an owner with CREATEROLE, on a fresh
database): the group roles, the owner's right to add people to them, the schema
owned by the owner and closed to everyone else.  Part 2 hands every vetbench
table and function over to the owner and applies ``db.privileges.TABLES``; the
migrations run the same grants whenever the owner creates or upgrades the schema.

:func:`setup_script` prints both parts for ``psql`` (part 2 only where the schema
exists already).  :func:`apply_setup` runs them over a connection, then creates or
upgrades the schema as the owner, so that the owner owns every table.
"""

from __future__ import annotations

from sqlalchemy import Connection, Engine, event, text
from sqlalchemy.exc import DBAPIError

from db.engine import hide_password, make_engine
from db.errors import VetbenchError
from db.privileges import (
    TABLES,
    administrator_statements,
    privilege_statements,
    quote_identifier,
    run_statements,
)

DEFAULT_SCHEMA = "public"


class SetupRefused(VetbenchError, RuntimeError):
    """The setup cannot run as asked; the message says what to do instead."""


def ownership_statements(owner: str, schema: str) -> list[str]:
    """Give ``owner`` every vetbench table (with its sequences) and helper function."""
    owner_literal = _literal(owner)
    schema_literal = _literal(schema)
    tables = ", ".join(f"'{entry.table}'" for entry in TABLES)
    return [
        f"""DO $$
DECLARE
  object_name text;
BEGIN
  FOR object_name IN
    SELECT format('%I.%I', schemaname, tablename) FROM pg_tables
    WHERE schemaname = {schema_literal} AND tablename IN ({tables})
  LOOP
    EXECUTE format('ALTER TABLE %s OWNER TO %I', object_name, {owner_literal});
  END LOOP;
  FOR object_name IN
    SELECT p.oid::regprocedure::text FROM pg_proc p
    JOIN pg_namespace n ON n.oid = p.pronamespace
    WHERE n.nspname = {schema_literal} AND p.proname LIKE 'vetbench\\_%'
  LOOP
    EXECUTE format('ALTER FUNCTION %s OWNER TO %I', object_name, {owner_literal});
  END LOOP;
END
$$"""
    ]


def setup_script(owner: str, schema: str = DEFAULT_SCHEMA) -> str:
    """The whole setup as a ``psql`` script (part 2 runs only where the schema exists)."""
    part1 = administrator_statements(owner, schema)
    part2 = ownership_statements(owner, schema) + privilege_statements(schema)
    lines = [
        "-- vetbench team database: run once as a superuser, e.g. psql -d DBNAME -f THIS_FILE",
        f"-- The owner role {owner} must exist: createuser --createrole --pwprompt {owner}",
        "\\set ON_ERROR_STOP on",
        "BEGIN;",
        "",
        "-- Part 1: group roles; the owner adds people to them and owns the schema.",
        *(f"{statement};\n" for statement in part1),
        "-- Part 2: the owner owns every vetbench table; each group gets its privileges and",
        "-- row-level security policies.  vetbench's migrations apply the same grants when",
        f"-- {owner} first opens the database, so on a new database this part is skipped.",
        f"SELECT to_regclass({_literal(schema + '.person')}) IS NOT NULL AS vetbench_schema_exists \\gset",
        "\\if :vetbench_schema_exists",
        *(f"{statement};\n" for statement in part2),
        "\\endif",
        "COMMIT;",
    ]
    return "\n".join(lines)


def _literal(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


def _as_owner(engine: Engine, owner: str) -> None:
    """Make every connection of ``engine`` act as ``owner`` (``SET ROLE``), so what the
    migrations create belongs to the owner even when an administrator runs them."""

    @event.listens_for(engine, "connect")
    def _set_role(dbapi_connection, _record) -> None:  # type: ignore[no-untyped-def]
        cursor = dbapi_connection.cursor()
        cursor.execute(f"SET ROLE {quote_identifier(owner)}")
        cursor.close()
        dbapi_connection.commit()  # SET is transactional: keep it past this transaction


def _schema(connection: Connection) -> tuple[str, bool, str]:
    schema, user = connection.execute(text("SELECT current_schema(), session_user")).one()
    exists = connection.execute(
        text("SELECT to_regclass(:name) IS NOT NULL"), {"name": f"{schema}.person"}
    ).scalar_one()
    return schema, bool(exists), user


def apply_setup(url: object, owner: str) -> list[str]:
    """Run part 1 (and part 2's hand-over) on the database at ``url``, then bring the schema
    up to date as ``owner``; returns what was done, one line each."""
    from db.migrate import upgrade_to_head
    from db.privileges import apply_privileges

    engine = make_engine(url)  # type: ignore[arg-type]
    if engine.url.get_backend_name() != "postgresql":
        engine.dispose()
        raise SetupRefused(
            "setup-postgres is for PostgreSQL databases (--db postgresql+psycopg://...)"
        )
    report: list[str] = []
    try:
        with engine.begin() as connection:
            schema, schema_exists, user = _schema(connection)
            run_statements(connection, administrator_statements(owner, schema))
            report.append(
                f"group roles ready; {owner} owns schema {schema} and may add people to them"
            )
            if schema_exists and user != owner:
                run_statements(connection, ownership_statements(owner, schema))
                report.append(f"{owner} now owns every vetbench table and function")
    except DBAPIError as error:
        raise SetupRefused(_explain(error, owner)) from None
    finally:
        engine.dispose()

    owner_engine = make_engine(url)  # type: ignore[arg-type]
    if user != owner:
        _as_owner(owner_engine, owner)
    try:
        upgrade_to_head(owner_engine, hide_password(owner_engine.url))
        with owner_engine.begin() as connection:
            apply_privileges(connection)
    except DBAPIError as error:
        raise SetupRefused(_explain(error, owner)) from None
    finally:
        owner_engine.dispose()
    report.append(
        f"schema up to date, grants and row-level security applied; next, as {owner}: "
        "vetbench users add NAME --role annotator|lead"
    )
    return report


def _explain(error: DBAPIError, owner: str) -> str:
    detail = str(getattr(error, "orig", error)).strip().splitlines()[0]
    return (
        f"{detail} (run setup-postgres --apply as a superuser, or print the SQL with "
        f"`vetbench setup-postgres --owner {owner}` for an administrator to run with psql)"
    )


__all__ = ["SetupRefused", "apply_setup", "ownership_statements", "setup_script"]

"""Recycling the tests' PostgreSQL databases: a database a test has finished with goes
back to its process's pool when the test changed only rows, instead of being dropped.

Creating a database from the migrated template (``CREATE DATABASE ... TEMPLATE``: a
file copy and two checkpoints) and dropping it again cost the server about 0.2 s of CPU
per test, and 500 tests run on PostgreSQL.  Emptying the few tables a test wrote to costs
a tenth of that.  A database is recycled only when its catalog is the template's: every
object, column, constraint, trigger, function, privilege, policy, extension, database
setting and the migration stamp, compared by a digest of each catalog's rows (the
copies keep the template's object ids).  A grant, a new table, a role setting, a
downgrade ... and it is dropped, as every database used to be.  Roles are the server's,
not a database's: tests name and drop their own (tests/role_helpers.py).

Emptying takes the session's replication role, which the schema's guard triggers do not
fire under (``audit_event`` refuses TRUNCATE from anyone else), so it needs a superuser:
the server ``scripts/test.sh`` starts.  Under any other role nothing is recycled.
"""

from __future__ import annotations

from typing import Any

import psycopg
from sqlalchemy.engine import make_url

FIRST_USER_OID = 16384
"""PostgreSQL's FirstNormalObjectId: every object a migration makes has an id from here."""

# Catalogs whose rows are a database's objects, each with the column naming the object.
_CATALOGS_BY_OBJECT = {
    "pg_attribute": "attrelid",
    "pg_attrdef": "oid",
    "pg_constraint": "oid",
    "pg_index": "indexrelid",
    "pg_trigger": "oid",
    "pg_proc": "oid",
    "pg_type": "oid",
    "pg_rewrite": "oid",
    "pg_policy": "oid",
    "pg_default_acl": "oid",
    "pg_extension": "oid",
    "pg_sequence": "seqrelid",
    "pg_inherits": "inhrelid",
    "pg_description": "objoid",
    "pg_event_trigger": "oid",
    "pg_publication": "oid",
    "pg_statistic_ext": "oid",
    "pg_largeobject_metadata": "oid",
    "pg_operator": "oid",
    "pg_opclass": "oid",
    "pg_opfamily": "oid",
    "pg_amop": "oid",
    "pg_amproc": "oid",
    "pg_cast": "oid",
    "pg_collation": "oid",
    "pg_conversion": "oid",
    "pg_ts_config": "oid",
    "pg_ts_dict": "oid",
    "pg_foreign_data_wrapper": "oid",
    "pg_foreign_server": "oid",
    "pg_user_mapping": "oid",
    "pg_transform": "oid",
    "pg_init_privs": "objoid",
}

# pg_class without what TRUNCATE, VACUUM and ANALYZE change (file, size and xid figures).
_CLASS_COLUMNS = (
    "oid, relname, relnamespace, reltype, relowner, relam, reltoastrelid, relhasindex, "
    "relpersistence, relkind, relnatts, relchecks, relrowsecurity, relforcerowsecurity, "
    "relreplident, relispartition, relacl, reloptions"
)

_DIGEST = "md5(coalesce(string_agg(row_text, '|' ORDER BY row_text), ''))"

CATALOG_DIGEST_SQL = " UNION ALL ".join(
    [
        f"SELECT 'pg_class', {_DIGEST} FROM (SELECT ({_CLASS_COLUMNS})::text AS row_text "
        f"FROM pg_class WHERE oid >= {FIRST_USER_OID}) AS rows",
        # every schema: public's own privileges are a migration's to set
        f"SELECT 'pg_namespace', {_DIGEST} FROM (SELECT t::text AS row_text "
        "FROM pg_namespace AS t) AS rows",
        f"SELECT 'pg_database', {_DIGEST} FROM (SELECT (datdba, encoding, datistemplate, "
        "datallowconn, datconnlimit, datacl)::text AS row_text FROM pg_database "
        "WHERE datname = current_database()) AS rows",
        f"SELECT 'pg_db_role_setting', {_DIGEST} FROM (SELECT t::text AS row_text "
        "FROM pg_db_role_setting AS t JOIN pg_database AS d ON d.oid = t.setdatabase "
        "WHERE d.datname = current_database()) AS rows",
        *(
            f"SELECT '{catalog}', {_DIGEST} FROM (SELECT t::text AS row_text "
            f"FROM {catalog} AS t WHERE {column} >= {FIRST_USER_OID}) AS rows"
            for catalog, column in _CATALOGS_BY_OBJECT.items()
        ),
    ]
)


def conninfo(url: str) -> dict[str, Any]:
    """psycopg's connection arguments for a SQLAlchemy URL."""
    parsed = make_url(url)
    found = {
        "host": parsed.host,
        "port": parsed.port,
        "user": parsed.username,
        "password": parsed.password,
        "dbname": parsed.database,
    }
    return {key: value for key, value in found.items() if value is not None}


def catalog_state(connection: psycopg.Connection[Any]) -> tuple[tuple[str, str], ...]:
    """What a test may not change for its database to be recycled: a digest of each
    catalog's objects, and the migration stamp."""
    digests = connection.execute(CATALOG_DIGEST_SQL).fetchall()
    stamp = connection.execute(
        "SELECT coalesce(string_agg(version_num, ',' ORDER BY version_num), '') "
        "FROM alembic_version"
    ).fetchone()
    return (*sorted((str(a), str(b)) for a, b in digests), ("alembic_version", str(stamp)))


def user_tables(connection: psycopg.Connection[Any]) -> tuple[str, ...]:
    """The database's tables but the migration stamp's, schema-qualified and quoted."""
    rows = connection.execute(
        "SELECT format('%I.%I', schemaname, tablename) FROM pg_tables "
        "WHERE schemaname NOT IN ('pg_catalog', 'information_schema') "
        "AND tablename <> 'alembic_version' ORDER BY 1"
    ).fetchall()
    return tuple(str(row[0]) for row in rows)


def written_tables(connection: psycopg.Connection[Any], tables: tuple[str, ...]) -> list[str]:
    """Those of ``tables`` holding a row."""
    if not tables:
        return []
    found = connection.execute(
        " UNION ALL ".join(
            f"SELECT {index} WHERE EXISTS (SELECT FROM {table})"
            for index, table in enumerate(tables)
        )
    ).fetchall()
    return [tables[row[0]] for row in found]


def tables_at_least(connection: psycopg.Connection[Any], tables: list[str], size: int) -> list[str]:
    """Those of ``tables`` taking ``size`` bytes or more on disk, indexes and TOAST included."""
    if not tables:
        return []
    rows = connection.execute(
        "SELECT name FROM unnest(%s::text[]) AS name "
        "WHERE pg_total_relation_size(name::regclass) >= %s",
        (tables, size),
    ).fetchall()
    return [str(row[0]) for row in rows]


def used_sequences(connection: psycopg.Connection[Any]) -> list[tuple[str, int]]:
    """Sequences a value was drawn from, with the value they start from."""
    rows = connection.execute(
        "SELECT format('%I.%I', schemaname, sequencename), start_value FROM pg_sequences "
        "WHERE last_value IS NOT NULL"
    ).fetchall()
    return [(str(name), int(start)) for name, start in rows]


def holds_nothing(connection: psycopg.Connection[Any], tables: tuple[str, ...]) -> bool:
    """Whether no row is in ``tables`` and no value was drawn from a sequence."""
    return not written_tables(connection, tables) and not used_sequences(connection)


def is_superuser(connection: psycopg.Connection[Any]) -> bool:
    row = connection.execute("SELECT rolsuper FROM pg_roles WHERE rolname = current_user")
    found = row.fetchone()
    return bool(found and found[0])


TRUNCATE_FROM_BYTES = 1 << 20
"""A written table this large (heap, indexes and TOAST together) is truncated; a smaller
one is emptied with DELETE, whose dead rows it keeps until it grows this large."""


def empty_the_database(connection: psycopg.Connection[Any], tables: tuple[str, ...]) -> None:
    """Every row but the migration stamp's gone, sequences as new, planner statistics
    gathered meanwhile forgotten: what a fresh copy of the template holds.

    TRUNCATE gives a table, its indexes and TOAST new files, which cost the server
    about 50 ms a test; most tests write a few rows, which DELETE removes for a tenth
    of that (the replication role fires no foreign-key check, so the order is free)."""
    connection.execute("SET session_replication_role = replica")
    written = written_tables(connection, tables)
    large = set(tables_at_least(connection, written, TRUNCATE_FROM_BYTES))
    with connection.transaction():
        for table in written:
            if table not in large:
                connection.execute(f"DELETE FROM {table}")
        if large:
            connection.execute(f"TRUNCATE {', '.join(sorted(large))} CASCADE")
    for sequence, start in used_sequences(connection):
        connection.execute("SELECT setval(%s::regclass, %s, false)", (sequence, start))
    connection.execute(f"DELETE FROM pg_statistic WHERE starelid >= {FIRST_USER_OID}")
    connection.execute("RESET session_replication_role")


def end_other_sessions(connection: psycopg.Connection[Any]) -> None:
    """Sessions a test left open on the database (an app's pool, a killed child's)."""
    connection.execute(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
        "WHERE datname = current_database() AND pid <> pg_backend_pid()"
    )

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

import enum

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
# PostgreSQL 16 keeps a CREATEROLE role from granting roles it does not administer.
SAFE_CREATEROLE_VERSION = 160000  # server_version_num


class SetupRefused(VetbenchError, RuntimeError):
    """The setup cannot run as asked; the message says what to do instead."""


class OwnerCreateRole(enum.Enum):
    """Whether the owner gets CREATEROLE, which ``users add`` needs to create people's roles.

    Up to PostgreSQL 15 a CREATEROLE role can grant itself any role but a superuser,
    ``pg_execute_server_program`` included, and then run programs on the database server
    as its operating-system user (``COPY ... FROM PROGRAM``): a superuser in effect.
    """

    GIVE = "give"  # on PostgreSQL 16 and later; refused before
    GIVE_DESPITE_RISK = "give despite risk"  # --accept-createrole-risk
    WITHHOLD = "withhold"  # --no-createrole: a superuser creates people's roles


def createrole_risk(version: str, owner: str) -> str:
    """Why CREATEROLE makes ``owner`` a superuser in effect on PostgreSQL ``version``
    (15 or older), and what to do instead."""
    return (
        f"PostgreSQL {version} lets a role with CREATEROLE grant itself any role but a "
        "superuser, pg_execute_server_program included, and so run programs on the database "
        f"server as its operating-system user (COPY ... FROM PROGRAM): with CREATEROLE, "
        f"{owner} would be a superuser in effect (PostgreSQL 16 closed this). Leave {owner} "
        f"without CREATEROLE (a superuser: ALTER ROLE {owner} NOCREATEROLE, if it has it) and have a "
        f"superuser run setup-postgres --owner {owner} --no-createrole and add people (vetbench "
        "users add, with a superuser's --db); or, knowing this, add --accept-createrole-risk"
    )


def withheld_but_held(owner: str) -> str:
    """``--no-createrole`` for an owner that has CREATEROLE."""
    return (
        f"{owner} has CREATEROLE, which --no-createrole means it not to have: a superuser "
        f"removes it first (ALTER ROLE {owner} NOCREATEROLE)"
    )


def _createrole_is_risky(version_num: int, *, superuser: bool) -> bool:
    """Whether CREATEROLE makes the owner a superuser in effect on a server of
    ``version_num``: PostgreSQL 15 or older, and an owner that is not one already."""
    return not superuser and version_num < SAFE_CREATEROLE_VERSION


def createrole_refusal(
    version_num: int, owner: str, choice: OwnerCreateRole, *, has_createrole: bool, superuser: bool
) -> str | None:
    """Why the setup refuses to run for ``owner`` on a server of ``version_num``
    (``server_version_num``, e.g. 150004), or None: it may run."""
    if superuser:
        return None  # a superuser already has all CREATEROLE could give
    if choice is OwnerCreateRole.WITHHOLD:
        return withheld_but_held(owner) if has_createrole else None
    if choice is OwnerCreateRole.GIVE and _createrole_is_risky(version_num, superuser=superuser):
        return createrole_risk(str(version_num // 10000), owner)
    return None


def _createrole_check(owner: str, choice: OwnerCreateRole) -> str:
    """:func:`createrole_refusal` in PL/pgSQL, for the printed script: the server it will
    run on is known only then."""
    owner_literal = _literal(owner)
    role = f"(SELECT {{}} FROM pg_roles WHERE rolname = {owner_literal})"
    if choice is OwnerCreateRole.WITHHOLD:
        condition = role.format("rolcreaterole AND NOT rolsuper")
        message = _literal(withheld_but_held(owner).replace("%", "%%"))
        return f"  IF {condition} THEN\n    RAISE EXCEPTION {message};\n  END IF;\n"
    if choice is OwnerCreateRole.GIVE:
        condition = (
            f"current_setting('server_version_num')::int < {SAFE_CREATEROLE_VERSION} "
            f"AND NOT {role.format('rolsuper')}"
        )
        message = _literal(createrole_risk("\0", owner).replace("%", "%%").replace("\0", "%"))
        major = "current_setting('server_version_num')::int / 10000"
        return f"  IF {condition} THEN\n    RAISE EXCEPTION {message}, {major};\n  END IF;\n"
    return ""


def _administrator_statements(
    owner: str, schema: str, choice: OwnerCreateRole, *, check_on_server: bool
) -> list[str]:
    """Part 1 for ``owner``; ``check_on_server``: with :func:`createrole_refusal` in
    PL/pgSQL (the printed script's, whose server is known only when it runs; ``apply_setup``
    has asked it in Python already, in the same transaction)."""
    return administrator_statements(
        owner,
        schema,
        createrole_check=_createrole_check(owner, choice) if check_on_server else "",
        give_createrole=choice is not OwnerCreateRole.WITHHOLD,
    )


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


def setup_script(
    owner: str, schema: str = DEFAULT_SCHEMA, choice: OwnerCreateRole = OwnerCreateRole.GIVE
) -> str:
    """The whole setup as a ``psql`` script (part 2 runs only where the schema exists)."""
    part1 = _administrator_statements(owner, schema, choice, check_on_server=True)
    part2 = ownership_statements(owner, schema) + privilege_statements(schema)
    createrole = {
        OwnerCreateRole.GIVE: f"-- {owner} gets CREATEROLE to add people; refused on "
        "PostgreSQL 15 and older, where it makes the owner a superuser in effect.",
        OwnerCreateRole.GIVE_DESPITE_RISK: f"-- {owner} gets CREATEROLE to add people: on "
        "PostgreSQL 15 and older that makes it a superuser in effect (accepted).",
        OwnerCreateRole.WITHHOLD: f"-- {owner} gets no CREATEROLE: a superuser adds people.",
    }[choice]
    lines = [
        "-- vetbench team database: run once as a superuser, e.g. psql -d DBNAME -f THIS_FILE",
        f"-- The owner role {owner} must exist: createuser --pwprompt {owner}",
        createrole,
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


def apply_setup(
    url: object, owner: str, choice: OwnerCreateRole = OwnerCreateRole.GIVE
) -> list[str]:
    """Run part 1 (and part 2's hand-over) on the database at ``url``, then bring the schema
    up to date as ``owner``; returns what was done, one line each.  Refused, with nothing
    changed, where ``choice`` would make the owner a superuser in effect unasked
    (:func:`createrole_refusal`)."""
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
            version_num, exists, has_createrole, superuser = _owner_on_server(connection, owner)
            refusal = createrole_refusal(
                version_num, owner, choice, has_createrole=has_createrole, superuser=superuser
            )
            if refusal is not None and exists:  # a missing owner: part 1 says so
                raise SetupRefused(refusal)
            statements = _administrator_statements(owner, schema, choice, check_on_server=False)
            run_statements(connection, statements)
            if choice is OwnerCreateRole.WITHHOLD:
                report.append(
                    f"group roles ready; {owner} owns schema {schema}, without CREATEROLE: "
                    "a superuser adds people"
                )
            else:
                report.append(
                    f"group roles ready; {owner} owns schema {schema} and may add people to them"
                )
            if choice is OwnerCreateRole.GIVE_DESPITE_RISK and _createrole_is_risky(
                version_num, superuser=superuser
            ):
                report.append(
                    f"warning: on PostgreSQL {version_num // 10000}, {owner}'s CREATEROLE makes "
                    "it a superuser in effect (it can grant itself pg_execute_server_program); "
                    "accepted with --accept-createrole-risk"
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
    adder = "a superuser" if choice is OwnerCreateRole.WITHHOLD else owner
    report.append(
        f"schema up to date, grants and row-level security applied; next, as {adder}: "
        "vetbench users add NAME --role annotator|lead"
    )
    return report


def _owner_on_server(connection: Connection, owner: str) -> tuple[int, bool, bool, bool]:
    """(``server_version_num``, the owner exists, has CREATEROLE, is a superuser)."""
    version_num = int(connection.execute(text("SHOW server_version_num")).scalar_one())
    row = connection.execute(
        text("SELECT rolcreaterole, rolsuper FROM pg_roles WHERE rolname = :owner"),
        {"owner": owner},
    ).first()
    return version_num, row is not None, bool(row and row[0]), bool(row and row[1])


def _explain(error: DBAPIError, owner: str) -> str:
    detail = str(getattr(error, "orig", error)).strip().splitlines()[0]
    return (
        f"{detail} (run setup-postgres --apply as a superuser, or print the SQL with "
        f"`vetbench setup-postgres --owner {owner}` for an administrator to run with psql)"
    )


__all__ = [
    "OwnerCreateRole",
    "SetupRefused",
    "apply_setup",
    "createrole_refusal",
    "ownership_statements",
    "setup_script",
]

"""PostgreSQL privileges: who may write what, enforced by the database itself.

A team database has three kinds of role (``db.vocabulary.Role`` names the people's):

- the **owner** owns the schema and every table; migrations and ``vetbench users add``
  run as the owner (table owners are not bound by row-level security);
- ``vetbench_annotator``, a group role every person is a member of;
- ``vetbench_lead``, a group role that is itself a member of ``vetbench_annotator``, so
  leads can do everything annotators can, and more.

Each table's privileges are declared once, in :data:`TABLES` (``db/table_privileges.py``).
:func:`privilege_statements`
turns them into idempotent SQL (revoke, grant, row-level security policies), which the
migrations run (``db/migrations/versions/0003_identity_audit.py``) and
``vetbench setup-postgres`` prints.  A migration that adds a table adds its entry here
and calls :func:`apply_privileges` at its end; see ARCHITECTURE.md.

Identity inside the database is ``session_user``, the role that logged in: unlike
``current_user`` it cannot be changed with ``SET ROLE`` by anyone but a superuser.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from sqlalchemy import Connection, inspect, text
from sqlalchemy.exc import DBAPIError

from db.guard_sql import audited_here, plpgsql_trigger
from db.guards import POSTGRES_GUARD_FUNCTIONS, POSTGRES_GUARD_TRIGGERS, postgres_guard_functions
from db.table_privileges import (
    ANNOTATOR_GROUP,
    GROUP_OF_ROLE,
    LEAD_GROUP,
    TABLES,
    Policy,
    TablePrivileges,
)
from db.vocabulary import DECISION_STATUSES, RELEASE_ACTION, Role

_DECIDED = ", ".join(f"'{status.value}'" for status in DECISION_STATUSES)

__all__ = [
    "ANNOTATOR_GROUP",
    "DatabaseAccount",
    "GROUP_OF_ROLE",
    "LEAD_GROUP",
    "TABLES",
    "Policy",
    "TablePrivileges",
    "administrator_statements",
    "apply_privileges",
    "database_account",
    "drop_policies_using",
    "group_role_statements",
    "privilege_statements",
    "quote_identifier",
    "removal_statements",
    "remove_privileges",
    "run_statements",
    "trigger_function",
]


@dataclass(frozen=True)
class DatabaseAccount:
    """The PostgreSQL role a connection logged in as, and what it may do in vetbench."""

    name: str  # session_user
    is_admin: bool  # a superuser or a member of the tables' owner: not bound by policies
    role: Role | None  # the vetbench role its group gives; None: no group, or an administrator

    @property
    def is_lead(self) -> bool:
        return self.is_admin or self.role is Role.LEAD


def database_account(connection: Connection) -> DatabaseAccount | None:
    """Who this connection is in the database (PostgreSQL), or None (SQLite: no logins)."""
    if connection.dialect.name != "postgresql":
        return None
    name, is_admin = connection.execute(
        text(
            "SELECT session_user, "
            "coalesce((SELECT rolsuper FROM pg_roles WHERE rolname = session_user), false) "
            "OR coalesce(pg_has_role(session_user, "
            "(SELECT relowner FROM pg_class WHERE oid = to_regclass('person')), 'MEMBER'), false)"
        )
    ).one()
    groups = set(
        connection.execute(
            text(
                "SELECT rolname FROM pg_roles WHERE rolname IN (:annotators, :leads) "
                "AND pg_has_role(session_user, oid, 'MEMBER')"
            ),
            {"annotators": ANNOTATOR_GROUP, "leads": LEAD_GROUP},
        ).scalars()
    )
    role = (
        Role.LEAD if LEAD_GROUP in groups else Role.ANNOTATOR if ANNOTATOR_GROUP in groups else None
    )
    # An administrator counts as a member of every group; its vetbench role is its
    # row in the person table, as on SQLite.
    return DatabaseAccount(name=name, is_admin=bool(is_admin), role=None if is_admin else role)


def quote_identifier(name: str) -> str:
    """``name`` as a PostgreSQL identifier, quoted (role and schema names come from people)."""
    return '"' + name.replace('"', '""') + '"'


def _quote_literal(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


def group_role_statements() -> list[str]:
    """Create the two group roles when missing (needs CREATEROLE once; a no-op after).

    Safe when several databases on one server migrate at once: a role created by
    another session meanwhile counts as created.
    """
    creations = "\n".join(
        f"""  IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '{group}') THEN
    BEGIN
      CREATE ROLE {group} NOLOGIN;
    EXCEPTION
      WHEN duplicate_object OR unique_violation THEN NULL;
      WHEN insufficient_privilege THEN
        RAISE EXCEPTION 'the group role {group} does not exist and % may not create it', current_user
          USING HINT = 'a database administrator runs the SQL printed by '
                       '`vetbench setup-postgres --owner ROLE` once';
    END;
  END IF;"""
        for group in (ANNOTATOR_GROUP, LEAD_GROUP)
    )
    membership = f"""  IF NOT EXISTS (
    SELECT FROM pg_auth_members m
    JOIN pg_roles g ON g.oid = m.roleid JOIN pg_roles r ON r.oid = m.member
    WHERE g.rolname = '{ANNOTATOR_GROUP}' AND r.rolname = '{LEAD_GROUP}'
  ) THEN
    BEGIN
      GRANT {ANNOTATOR_GROUP} TO {LEAD_GROUP};
    EXCEPTION WHEN unique_violation THEN NULL;
    END;
  END IF;"""
    return [f"DO $$\nBEGIN\n{creations}\n{membership}\nEND\n$$"]


def _function_statements(schema: str, columns: dict[str, set[str]] | None = None) -> list[str]:
    """Helper functions for the policies and triggers.

    Each pins its search_path: otherwise a member could shadow ``person`` with a
    temporary table of their own and pass for someone else.
    """
    path = f"SET search_path = {quote_identifier(schema)}, pg_catalog, pg_temp"
    return [
        f"""CREATE OR REPLACE FUNCTION vetbench_session_person_id() RETURNS integer
LANGUAGE sql STABLE {path} AS $$ SELECT id FROM person WHERE name = session_user $$""",
        f"""CREATE OR REPLACE FUNCTION vetbench_session_is_admin() RETURNS boolean
LANGUAGE sql STABLE {path} AS $$
  SELECT coalesce((SELECT rolsuper FROM pg_roles WHERE rolname = session_user), false)
      OR pg_has_role(session_user, (SELECT relowner FROM pg_class WHERE oid = 'person'::regclass), 'MEMBER')
$$""",
        f"""CREATE OR REPLACE FUNCTION vetbench_session_is_lead() RETURNS boolean
LANGUAGE sql STABLE {path} AS $$
  SELECT pg_has_role(session_user, '{LEAD_GROUP}', 'MEMBER') OR vetbench_session_is_admin()
$$""",
        trigger_function(
            "vetbench_guard_decided_status",
            path,
            f"""  IF (TG_OP = 'INSERT' AND NEW.status IN ({_DECIDED})
      OR TG_OP = 'UPDATE' AND NEW.status IS DISTINCT FROM OLD.status
         AND (NEW.status IN ({_DECIDED}) OR OLD.status IN ({_DECIDED})))
     AND NOT vetbench_session_is_lead() THEN
    RAISE EXCEPTION 'only leads approve or reject: % may not set item % to %',
      session_user, NEW.id, NEW.status USING ERRCODE = 'insufficient_privilege';
  END IF;
  RETURN NEW;""",
        ),
        trigger_function(
            "vetbench_audit_stamp",
            path,
            # The actor is the role that logged in; only an administrator, whom the
            # database does not bind anyway, acts for someone (db.identity).
            """  NEW.db_role := session_user;
  NEW.created_at := now();
  IF NOT vetbench_session_is_admin() THEN
    NEW.actor := session_user;
  END IF;
  RETURN NEW;""",
        ),
        *postgres_guard_functions(
            path, revision_kind=_has_columns(columns, "item_revision", ("kind",))
        ),
        trigger_function(
            "vetbench_refuse_change",
            path,
            """  RAISE EXCEPTION 'the audit trail is append-only: % on % refused', TG_OP, TG_TABLE_NAME
    USING ERRCODE = 'insufficient_privilege';""",
        ),
        *_release_functions(path),
    ]


def _release_functions(path: str) -> list[str]:
    """The guards of releases (``db.releases``): frozen once made, items only before."""
    return [
        trigger_function(
            "vetbench_release_frozen",
            path,
            """  RAISE EXCEPTION 'a release never changes: % on % refused', TG_OP, TG_TABLE_NAME
    USING ERRCODE = 'insufficient_privilege';""",
        ),
        trigger_function(
            "vetbench_release_item_sealed",
            path,
            """  IF EXISTS (SELECT FROM release WHERE name = NEW.release_name) THEN
    RAISE EXCEPTION 'a release never changes: no item may be added to release %',
      NEW.release_name USING ERRCODE = 'insufficient_privilege';
  END IF;
  RETURN NEW;""",
        ),
        # A release's items come with the release, from the transaction that makes it
        # (with its audit event, for a member): with psql a lead wrote items of a release
        # that did not exist, unrecorded, and the name was then taken for good.  Checked at
        # commit; it binds the owner too, as the release's other guards do.
        trigger_function(
            "vetbench_release_item_with_release",
            path,
            f"""  IF NOT EXISTS (SELECT FROM release WHERE name = NEW.release_name
                 AND xmin = pg_current_xact_id()::xid)
     OR NOT vetbench_session_is_admin()
        AND NOT {audited_here(RELEASE_ACTION, "NEW.release_name")} THEN
    RAISE EXCEPTION 'item % of release % is stored only by the transaction that makes the '
      'release, with its audit event "{RELEASE_ACTION}": % wrote it alone', NEW.item_id,
      NEW.release_name, session_user USING ERRCODE = 'insufficient_privilege';
  END IF;
  RETURN NULL;""",
        ),
        trigger_function(
            "vetbench_release_complete",
            path,
            """  IF NEW.item_count <> (SELECT count(*) FROM release_item
                         WHERE release_name = NEW.name) THEN
    RAISE EXCEPTION 'release % is stored after all of its items', NEW.name
      USING ERRCODE = 'integrity_constraint_violation';
  END IF;
  RETURN NEW;""",
        ),
    ]


def trigger_function(name: str, path: str, statements: str) -> str:
    """A PL/pgSQL trigger function ``name`` that runs ``statements`` under ``path``."""
    return plpgsql_trigger(name, path, f"BEGIN\n{statements}\nEND")


_TRIGGERS: tuple[tuple[str, str, str, tuple[str, ...]], ...] = (
    # (table, trigger name, definition after "CREATE TRIGGER name", columns it needs)
    (
        "item",
        "item_decided_status_guard",
        "BEFORE INSERT OR UPDATE OF status ON item "
        "FOR EACH ROW EXECUTE FUNCTION vetbench_guard_decided_status()",
        (),
    ),
    (
        "audit_event",
        "audit_event_stamp",
        "BEFORE INSERT ON audit_event FOR EACH ROW EXECUTE FUNCTION vetbench_audit_stamp()",
        (),
    ),
    (
        "audit_event",
        "audit_event_append_only",
        "BEFORE UPDATE OR DELETE ON audit_event "
        "FOR EACH ROW EXECUTE FUNCTION vetbench_refuse_change()",
        (),
    ),
    (
        "audit_event",
        "audit_event_no_truncate",
        "BEFORE TRUNCATE ON audit_event FOR EACH STATEMENT EXECUTE FUNCTION vetbench_refuse_change()",
        (),
    ),
    *POSTGRES_GUARD_TRIGGERS,
    *(
        (
            table,
            f"{table}_frozen",
            f"BEFORE UPDATE OR DELETE ON {table} "
            "FOR EACH ROW EXECUTE FUNCTION vetbench_release_frozen()",
            (),
        )
        for table in ("release", "release_item")
    ),
    *(
        (
            table,
            f"{table}_no_truncate",
            f"BEFORE TRUNCATE ON {table} "
            "FOR EACH STATEMENT EXECUTE FUNCTION vetbench_release_frozen()",
            (),
        )
        for table in ("release", "release_item")
    ),
    (
        "release_item",
        "release_item_sealed",
        "BEFORE INSERT ON release_item "
        "FOR EACH ROW EXECUTE FUNCTION vetbench_release_item_sealed()",
        (),
    ),
    (
        "release_item",
        "release_item_with_release",
        "AFTER INSERT ON release_item DEFERRABLE INITIALLY DEFERRED "
        "FOR EACH ROW EXECUTE FUNCTION vetbench_release_item_with_release()",
        (),
    ),
    (
        "release",
        "release_complete",
        "BEFORE INSERT ON release FOR EACH ROW EXECUTE FUNCTION vetbench_release_complete()",
        (),
    ),
)


def _grant_columns(grant: str) -> set[str]:
    """The columns of a column grant: ``"UPDATE (a, b)"`` -> {a, b}; none for a table grant."""
    _privilege, _, columns = grant.partition("(")
    return {column.strip() for column in columns.rstrip(")").split(",") if column.strip()}


def _has_columns(columns: dict[str, set[str]] | None, table: str, needed: Iterable[str]) -> bool:
    """Whether ``table`` has every column in ``needed`` ("other.column": another table's);
    ``columns`` None: every column of the newest schema is there."""
    if columns is None:
        return True
    for name in needed:
        owner, _, column = name.rpartition(".")
        if column not in columns.get(owner or table, set()):
            return False
    return True


def _table_statements(
    entry: TablePrivileges, columns: dict[str, set[str]] | None = None
) -> list[str]:
    """The grants and policies of one table.  With ``columns`` (those each table has now),
    grants and policies on columns a later migration adds are left for that migration:
    an older migration runs with the newest :data:`TABLES`."""

    def applicable(needed: Iterable[str]) -> bool:
        return _has_columns(columns, entry.table, needed)

    def present(any_of: Iterable[str]) -> bool:
        return any(_has_columns(columns, entry.table, (column,)) for column in any_of)

    table = quote_identifier(entry.table)
    statements = [f"REVOKE ALL ON {table} FROM PUBLIC, {ANNOTATOR_GROUP}, {LEAD_GROUP}"]
    statements += [
        f"GRANT {grant} ON {table} TO {ANNOTATOR_GROUP}"
        for grant in entry.members
        if applicable(_grant_columns(grant))
    ]
    statements += [
        f"GRANT {grant} ON {table} TO {LEAD_GROUP}"
        for grant in entry.leads
        if applicable(_grant_columns(grant))
    ]
    # Row-level security only with a policy to admit rows: at a revision before the
    # columns its policies need, the table is as that revision had it.
    obsolete = [policy for policy in entry.policies if policy.unless and present(policy.unless)]
    policies = [
        policy
        for policy in entry.policies
        if applicable(policy.requires) and policy not in obsolete
    ]
    statements += [f"DROP POLICY IF EXISTS {policy.name} ON {table}" for policy in obsolete]
    if policies:
        statements.append(f"ALTER TABLE {table} ENABLE ROW LEVEL SECURITY")
    for policy in policies:
        statements.append(f"DROP POLICY IF EXISTS {policy.name} ON {table}")
        clauses = f"FOR {policy.command} TO {policy.to}"
        if policy.using is not None:
            clauses += f" USING ({policy.using})"
        if policy.check is not None:
            clauses += f" WITH CHECK ({policy.check})"
        statements.append(f"CREATE POLICY {policy.name} ON {table} {clauses}")
    return statements


def privilege_statements(
    schema: str,
    tables: Sequence[str] | None = None,
    columns: dict[str, set[str]] | None = None,
) -> list[str]:
    """The grants, policies, helper functions and triggers, as idempotent SQL.

    ``tables`` limits them to the tables that exist (a migration passes what it has
    created so far), ``columns`` to the columns each has; None means every table and
    column in :data:`TABLES`.  Run by the owner of the tables (or a superuser).
    """
    present = set(tables) if tables is not None else {entry.table for entry in TABLES}
    statements = _function_statements(schema, columns)
    statements.append(
        f"GRANT USAGE ON SCHEMA {quote_identifier(schema)} TO {ANNOTATOR_GROUP}, {LEAD_GROUP}"
    )
    for entry in TABLES:
        if entry.table in present:
            statements += _table_statements(entry, columns)
    for table, name, definition, needed in _TRIGGERS:
        if table in present and _has_columns(columns, table, needed):
            statements.append(f"DROP TRIGGER IF EXISTS {name} ON {quote_identifier(table)}")
            # Deferred checks (at commit) are constraint triggers.
            constraint = "CONSTRAINT " if "DEFERRABLE" in definition else ""
            statements.append(f"CREATE {constraint}TRIGGER {name} {definition}")
    statements += _execute_statements(schema)
    # Serial ids: members draw from the sequences of the tables they insert into.
    statements.append(
        f"GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA {quote_identifier(schema)} "
        f"TO {ANNOTATOR_GROUP}"
    )
    return statements


MEMBER_FUNCTIONS = (
    "vetbench_session_person_id()",
    "vetbench_session_is_admin()",
    "vetbench_session_is_lead()",
    "vetbench_gold_known(integer)",
    "vetbench_calibration_outcomes()",
)
"""The functions members call themselves, or through their policies and guards; the
others (trigger functions, the search index's) run only as triggers fire them, or
inside a function that runs as its owner."""


def _execute_statements(schema: str) -> list[str]:
    """Every vetbench function runs only for those granted it: PostgreSQL lets every
    login run a new function, and with psql a role outside vetbench read who passed which
    gold item (``vetbench_calibration_outcomes``, which runs as its owner)."""
    return [
        f"""DO $$
DECLARE
  function_name text;
BEGIN
  FOR function_name IN
    SELECT p.oid::regprocedure::text FROM pg_proc p
    JOIN pg_namespace n ON n.oid = p.pronamespace
    WHERE n.nspname = {_quote_literal(schema)} AND p.proname LIKE 'vetbench\\_%'
  LOOP
    EXECUTE format('REVOKE ALL ON FUNCTION %s FROM PUBLIC', function_name);
  END LOOP;
END
$$""",
        f"GRANT EXECUTE ON FUNCTION {', '.join(MEMBER_FUNCTIONS)} TO {ANNOTATOR_GROUP}",
    ]


def administrator_statements(
    owner: str, schema: str, *, createrole_check: str = "", give_createrole: bool = True
) -> list[str]:
    """What only a superuser (or the groups' creator) can do once for ``owner``.

    The owner gets CREATEROLE (unless not ``give_createrole``: a superuser then creates
    people's roles) and the right to add people to both groups (``users add``), and owns
    the schema, where nobody else may create objects.  ``createrole_check`` (PL/pgSQL,
    from ``db.setup_postgres``) runs first, once the owner is known to exist.  Each step
    is skipped when already done, so the script can run again.
    """
    owner_literal = _quote_literal(owner)
    owner_ident = quote_identifier(owner)
    schema_literal = _quote_literal(schema)
    grants = "\n".join(
        f"""  IF NOT pg_has_role({owner_literal}, '{group}', 'MEMBER WITH ADMIN OPTION') THEN
    GRANT {group} TO {owner_ident} WITH ADMIN OPTION;
  END IF;"""
        for group in (ANNOTATOR_GROUP, LEAD_GROUP)
    )
    give = (
        f"""  IF NOT (SELECT rolcreaterole OR rolsuper FROM pg_roles WHERE rolname = {owner_literal}) THEN
    ALTER ROLE {owner_ident} CREATEROLE;
  END IF;
"""
        if give_createrole
        else ""
    )
    return [
        *group_role_statements(),
        f"""DO $$
BEGIN
  IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = {owner_literal}) THEN
    RAISE EXCEPTION 'there is no role %: create it first (createuser --pwprompt %)',
      {owner_literal}, {owner_literal};
  END IF;
{createrole_check}{give}{grants}
  IF NOT pg_has_role({owner_literal},
      (SELECT nspowner FROM pg_namespace WHERE nspname = {schema_literal}), 'MEMBER') THEN
    ALTER SCHEMA {quote_identifier(schema)} OWNER TO {owner_ident};
  END IF;
END
$$""",
        f"REVOKE CREATE ON SCHEMA {quote_identifier(schema)} FROM PUBLIC",
    ]


def removal_statements(schema: str, tables: Sequence[str]) -> list[str]:
    """Undo :func:`privilege_statements` on ``tables`` (a migration's downgrade).

    The group roles stay: they belong to the server, and other databases may use them.
    """
    present = set(tables)
    statements = [
        f"DROP TRIGGER IF EXISTS {name} ON {quote_identifier(table)}"
        for table, name, _definition, _needed in _TRIGGERS
        if table in present
    ]
    for entry in TABLES:
        if entry.table not in present:
            continue
        table = quote_identifier(entry.table)
        statements.append(f"REVOKE ALL ON {table} FROM {ANNOTATOR_GROUP}, {LEAD_GROUP}")
        statements += [f"DROP POLICY IF EXISTS {p.name} ON {table}" for p in entry.policies]
        if entry.policies:
            statements.append(f"ALTER TABLE {table} DISABLE ROW LEVEL SECURITY")
    statements += [f"DROP FUNCTION IF EXISTS {name}" for name in POSTGRES_GUARD_FUNCTIONS]
    statements += [
        f"DROP FUNCTION IF EXISTS {name}()"
        for name in (
            "vetbench_guard_decided_status",
            "vetbench_audit_stamp",
            "vetbench_refuse_change",
            "vetbench_release_frozen",
            "vetbench_release_item_sealed",
            "vetbench_release_item_with_release",
            "vetbench_release_complete",
            "vetbench_session_is_lead",
            "vetbench_session_is_admin",
            "vetbench_session_person_id",
        )
    ]
    statements.append(
        f"REVOKE ALL ON ALL SEQUENCES IN SCHEMA {quote_identifier(schema)} FROM {ANNOTATOR_GROUP}"
    )
    return statements


def drop_policies_using(connection: Connection, table: str, columns: Sequence[str]) -> None:
    """Drop the policies of ``table`` that need any of ``columns``, so that a downgrade
    can drop those columns (PostgreSQL refuses to drop a column a policy uses).

    PostgreSQL only (a no-op elsewhere); the upgrade's :func:`apply_privileges` creates
    them again.
    """
    if connection.dialect.name != "postgresql":
        return
    dropped = set(columns)
    run_statements(
        connection,
        [
            f"DROP POLICY IF EXISTS {policy.name} ON {quote_identifier(table)}"
            for entry in TABLES
            if entry.table == table
            for policy in entry.policies
            if dropped & set(policy.requires)
        ],
    )


def _schema_and_tables(connection: Connection) -> tuple[str, list[str]]:
    schema = connection.execute(text("SELECT current_schema()")).scalar_one()
    return schema, inspect(connection).get_table_names(schema=schema)


def apply_privileges(connection: Connection) -> None:
    """Create the group roles and apply :data:`TABLES` to the tables that exist now.

    PostgreSQL only (a no-op elsewhere).  Migrations call it at their end, inside their
    transaction; running it again changes nothing.
    """
    if connection.dialect.name != "postgresql":
        return
    schema, tables = _schema_and_tables(connection)
    inspector = inspect(connection)
    columns = {
        table: {column["name"] for column in inspector.get_columns(table, schema=schema)}
        for table in tables
    }
    run_statements(
        connection, group_role_statements() + privilege_statements(schema, tables, columns)
    )


def remove_privileges(connection: Connection) -> None:
    """Undo :func:`apply_privileges` on the tables that exist now (PostgreSQL only)."""
    if connection.dialect.name != "postgresql":
        return
    schema, tables = _schema_and_tables(connection)
    run_statements(connection, removal_statements(schema, tables))


def run_statements(connection: Connection, statements: Sequence[str]) -> None:
    """Run SQL statements as written, in the connection's transaction.

    Through the driver's own cursor with no parameters, so the ``%`` of PL/pgSQL's
    ``RAISE`` is not taken for a placeholder.  The driver's errors are raised as
    SQLAlchemy's :class:`DBAPIError`, as a statement run through SQLAlchemy would be.
    """
    driver_error = connection.dialect.loaded_dbapi.Error
    cursor = connection.connection.cursor()
    try:
        for statement in statements:
            try:
                cursor.execute(statement)
            except driver_error as error:
                raise DBAPIError.instance(statement, None, error, driver_error) from None
    finally:
        cursor.close()

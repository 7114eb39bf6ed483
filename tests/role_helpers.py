"""PostgreSQL login roles for tests: unique names (roles belong to the whole server, which
other test runs share), each dropped when the test ends."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field

from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url


@dataclass
class RoleNames:
    """Names for the people of one test; on PostgreSQL each becomes a login role."""

    database_url: str
    suffix: str = field(default_factory=lambda: uuid.uuid4().hex[:8])
    names: list[str] = field(default_factory=list)

    @property
    def is_postgres(self) -> bool:
        return self.database_url.startswith("postgresql")

    def name(self, base: str) -> str:
        """``base`` made unique on the server (``lena`` -> ``lena_1a2b3c4d``)."""
        name = f"{base}_{self.suffix}"
        self.names.append(name)
        return name

    def url_for(self, role: str) -> str:
        """The database's URL, logging in as ``role`` (the test server trusts local logins)."""
        return make_url(self.database_url).set(username=role).render_as_string(hide_password=False)

    def drop(self) -> None:
        if not self.is_postgres or not self.names:
            return
        engine = create_engine(self.database_url, isolation_level="AUTOCOMMIT")
        try:
            with engine.connect() as connection:
                for name in self.names:
                    exists = connection.execute(
                        text("SELECT 1 FROM pg_roles WHERE rolname = :name"), {"name": name}
                    ).first()
                    if exists:
                        connection.execute(text(f'DROP OWNED BY "{name}"'))
                        connection.execute(
                            text(
                                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                                "WHERE usename = :name"
                            ),
                            {"name": name},
                        )
                        connection.execute(text(f'DROP ROLE "{name}"'))
        finally:
            engine.dispose()


def role_names(database_url: str) -> Iterator[RoleNames]:
    """For a fixture: names for one test's people, dropped afterwards on PostgreSQL."""
    roles = RoleNames(database_url)
    try:
        yield roles
    finally:
        roles.drop()


def team_database(*item_ids: str) -> Iterator[tuple[str, RoleNames]]:
    """For a fixture: a fresh migrated PostgreSQL database holding the ordering items
    ``item_ids`` (key ABCD), and names for one test's people; the roles and the database
    are dropped afterwards.  Skips the test where no PostgreSQL server is set."""
    from conftest import fresh_postgres_database, postgres_server
    from helpers import store_item

    from db.engine import open_database

    server = postgres_server()
    for url in fresh_postgres_database(server, migrated=True):
        names = role_names(url)
        roles = next(names)
        owner = open_database(url)
        for item_id in item_ids:
            store_item(owner, item_id, key="ABCD")
        owner.dispose()
        try:
            yield url, roles
        finally:
            names.close()  # drops the roles

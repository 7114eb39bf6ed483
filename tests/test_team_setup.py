"""The README's team setup works from a fresh database: its commands are read from README.md
and run in order against the test server, then the backup commands restore what they dump.

Only what a test cannot do is translated: `sudo -u postgres createuser/createdb` become the
same SQL run by the server's superuser; the host, the database and people's names get a
unique suffix (roles belong to the whole server); password prompts read from stdin; the
interactive `review` and the model-loading `eval` are replaced by checks after the block.
"""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import sqlalchemy as sa
from click.testing import CliRunner, Result
from conftest import postgres_server
from sqlalchemy.engine import URL, make_url

from reviewer.cli import cli

pytestmark = [pytest.mark.postgres, pytest.mark.slow]

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
ITEMS = ROOT / "fixtures" / "econ_ordering.csv"
SKIPPED = ("vetbench review", "vetbench eval")  # interactive / loads a model: checked below


def bash_block_after(heading: str) -> list[str]:
    """The command lines of the first ```bash block after ``heading``, comments removed."""
    text = README.read_text(encoding="utf-8")
    start = text.index(heading)
    block = re.search(r"```bash\n(.*?)```", text[start:], re.DOTALL)
    assert block is not None, f"no bash block after {heading!r} in README.md"
    lines = []
    for line in block.group(1).splitlines():
        command = re.sub(r"\s+#.*$", "", line).strip()
        if command and not command.startswith("#"):
            lines.append(command)
    return lines


@dataclass
class Sandbox:
    """The README's names, made unique on the shared server, and the state of the shell."""

    server_url: str
    suffix: str = field(default_factory=lambda: uuid.uuid4().hex[:8])
    env: dict[str, str] = field(default_factory=dict)
    roles: list[str] = field(default_factory=list)
    databases: list[str] = field(default_factory=list)
    workdir: Path = Path(".")

    def name(self, readme_name: str) -> str:
        return f"readme_{readme_name}_{self.suffix}"

    def url(self, readme_url: str) -> str:
        """A README URL (user@db-host/database) pointed at the test server."""
        url = make_url(readme_url)
        server = make_url(self.server_url)
        assert url.username is not None and url.host == "db-host", readme_url
        return url.set(
            username=self.name(url.username),
            host=server.host,
            port=server.port,
            database=self.name(url.database or ""),
        ).render_as_string(hide_password=False)

    def superuser_sql(self, statement: str) -> None:
        engine = sa.create_engine(self.server_url, isolation_level="AUTOCOMMIT")
        try:
            with engine.connect() as connection:
                connection.execute(sa.text(statement))
        finally:
            engine.dispose()

    def owner_and_database(self, readme_database: str) -> tuple[str, URL]:
        """A new login role (the owner to be) and a new database the superuser owns;
        ``VETBENCH_DB`` points at it as the superuser."""
        owner, database = self.name("owner"), self.name(readme_database)
        self.superuser_sql(f'CREATE ROLE "{owner}" LOGIN')
        self.roles.append(owner)
        self.superuser_sql(f'CREATE DATABASE "{database}"')
        self.databases.append(database)
        url = make_url(self.server_url).set(database=database)
        self.env["VETBENCH_DB"] = url.render_as_string(hide_password=False)
        return owner, url

    def cleanup(self) -> None:
        for database in self.databases:
            self.superuser_sql(f'DROP DATABASE IF EXISTS "{database}" WITH (FORCE)')
        for role in reversed(self.roles):
            self.superuser_sql(f'DROP ROLE IF EXISTS "{role}"')


@pytest.fixture
def sandbox(tmp_path: Path) -> Iterator[Sandbox]:
    server = postgres_server()
    box = Sandbox(server, workdir=tmp_path)
    try:
        yield box
    finally:
        box.cleanup()


def server_version_num(box: Sandbox) -> int:
    """The test server's ``server_version_num`` (150004 for 15.4)."""
    engine = sa.create_engine(box.server_url)
    try:
        with engine.connect() as connection:
            return int(connection.execute(sa.text("SHOW server_version_num")).scalar_one())
    finally:
        engine.dispose()


def vetbench(box: Sandbox, words: list[str], stdin: str | None = None) -> Result:
    result = CliRunner().invoke(cli, words, env=dict(box.env), input=stdin)
    assert "Traceback" not in result.output, result.output
    return result


def run_line(box: Sandbox, line: str) -> Result | None:
    """Run one README line the way a person at a shell would."""
    words = shlex.split(line)
    if words[:3] == ["sudo", "-u", "postgres"]:
        tool, options = words[3], words[4:]
        if tool == "createuser":
            assert options[:2] == ["--createrole", "--pwprompt"], line
            role = box.name(options[2])
            box.superuser_sql(f'CREATE ROLE "{role}" LOGIN CREATEROLE')
            box.roles.append(role)
        elif tool == "createdb":
            assert options[0] == "--owner", line
            database = box.name(options[2])
            box.superuser_sql(f'CREATE DATABASE "{database}" OWNER "{box.name(options[1])}"')
            box.databases.append(database)
        else:
            raise AssertionError(f"the test does not know {line!r}")
        return None
    if words[0] == "export":
        variable, value = words[1].split("=", 1)
        box.env[variable] = box.url(value)
        return None
    if words[0] in ("pg_dump", "pg_restore"):
        translated = []
        for word in words:
            option, _, value = word.rpartition("=") if word.startswith("--") else ("", "", word)
            if "db-host" in value:
                value = box.url(value)
            elif option == "--role":
                value = box.name(value)
            translated.append(f"{option}={value}" if option else value)
        completed = subprocess.run(
            translated, cwd=box.workdir, capture_output=True, text=True, timeout=120
        )
        assert completed.returncode == 0, completed.stderr
        return None
    assert words[0] == "vetbench", line
    args = words[1:]
    names = {"lena", "alice", "vetbench_owner"}
    args = [box.name(word) if word in names else word for word in args]
    stdin = None
    if args[:2] == ["users", "add"]:
        args.append("--password-stdin")  # the prompt's answer, typed
        stdin = "a long passphrase\n"
        box.roles.append(args[2])
    if args[:1] == ["import"]:
        args = ["import", str(ITEMS)]
    if args[:1] == ["setup-postgres"] and server_version_num(box) < 160000:
        # The README: on PostgreSQL 15 and older, the owner made with --createrole is a
        # superuser in effect, which this block then accepts knowingly.
        args.append("--accept-createrole-risk")
    result = vetbench(box, args, stdin)
    assert result.exit_code == 0, f"{line}\n{result.output}"
    return result


def test_the_readme_team_setup_works_from_a_fresh_database(sandbox: Sandbox) -> None:
    lines = bash_block_after("### Setting up, once")
    skipped = [line for line in lines if line.startswith(SKIPPED)]
    assert [line.split()[1] for line in skipped] == ["review", "eval"]
    outputs = {line: run_line(sandbox, line) for line in lines if line not in skipped}

    listing = next(out for line, out in outputs.items() if line == "vetbench users list")
    assert listing is not None
    lena, alice = sandbox.name("lena"), sandbox.name("alice")
    assert re.search(rf"{lena}\s+lead\s+vetbench_lead", listing.output)
    assert re.search(rf"{alice}\s+annotator\s+vetbench_annotator", listing.output)

    # The block ends logged in as alice: she judges as herself, without --as ...
    assert sandbox.env["VETBENCH_DB"].startswith(f"postgresql+psycopg://{alice}@")
    judge = ["judge", "econ_ordering:1", "--answer", "A,B,C,D", "--verdict", "keep"]
    judged = vetbench(sandbox, judge)
    assert judged.exit_code == 0 and f"saved judgment 1: {alice}" in judged.output
    # ... cannot speak for lena, nor decide ...
    as_lena = vetbench(sandbox, ["decide", "econ_ordering:1", "--status", "approved", "--as", lena])
    assert as_lena.exit_code == 1 and "is refused" in as_lena.output
    refused = vetbench(sandbox, ["decide", "econ_ordering:1", "--status", "approved"])
    assert refused.exit_code == 1 and "only leads can decide" in refused.output
    # ... and lena decides.
    run_line(sandbox, "export VETBENCH_DB='postgresql+psycopg://lena@db-host/vetbench'")
    decided = vetbench(sandbox, ["decide", "econ_ordering:1", "--status", "approved"])
    assert decided.exit_code == 0, decided.output
    audit = vetbench(sandbox, ["audit", "--item", "econ_ordering:1"]).output.splitlines()
    assert [line.split()[2:4] for line in audit] == [[alice, "judge"], [lena, "decide"]]
    owner = sandbox.name("vetbench_owner")
    tables = _query(
        sandbox, "vetbench", "SELECT DISTINCT tableowner FROM pg_tables WHERE schemaname = 'public'"
    )
    assert tables == [(owner,)]

    # Backups: the README's pg_dump and pg_restore give back the judgment and the policies.
    if shutil.which("pg_dump") is None or shutil.which("pg_restore") is None:
        pytest.skip("pg_dump and pg_restore are not installed")
    for line in bash_block_after("PostgreSQL: the owner dumps"):
        run_line(sandbox, line)
    query = "SELECT count(*) FROM judgment"
    assert _query(sandbox, "vetbench_restored", query) == [(1,)]
    policies = "SELECT count(*) FROM pg_policy"
    assert _query(sandbox, "vetbench_restored", policies) == _query(sandbox, "vetbench", policies)
    # The restored grants let alice read, and still keep her from deciding.
    engine = sa.create_engine(sandbox.url("postgresql+psycopg://alice@db-host/vetbench_restored"))
    try:
        with engine.connect() as connection:
            assert connection.execute(sa.text(query)).scalar_one() == 1
        with (
            pytest.raises(sa.exc.ProgrammingError, match="permission denied for table decision"),
            engine.begin() as connection,
        ):
            connection.execute(sa.text("DELETE FROM decision"))
    finally:
        engine.dispose()


def _query(box: Sandbox, readme_database: str, statement: str) -> list[tuple[object, ...]]:
    url = make_url(box.server_url).set(database=box.name(readme_database))
    engine = sa.create_engine(url)
    try:
        with engine.connect() as connection:
            return [tuple(row) for row in connection.execute(sa.text(statement))]
    finally:
        engine.dispose()


def test_the_printed_setup_script_hands_an_existing_database_to_a_new_owner(
    sandbox: Sandbox,
) -> None:
    """An older team database, made by a shared superuser login: the administrator runs the
    printed SQL with psql (twice: it is safe to repeat), and the new owner owns everything."""
    psql = shutil.which("psql")
    if psql is None:
        pytest.skip("psql is not installed")
    owner, url = sandbox.owner_and_database("older")
    assert vetbench(sandbox, ["import", str(ITEMS)]).exit_code == 0  # the schema exists
    printed = vetbench(sandbox, ["setup-postgres", "--owner", owner])
    assert printed.exit_code == 0 and printed.output.startswith("-- vetbench team database")
    script = sandbox.workdir / "setup.sql"
    script.write_text(printed.output, encoding="utf-8")
    libpq_url = url.set(drivername="postgresql").render_as_string(hide_password=False)
    if server_version_num(sandbox) < 160000:
        # The script checks the server it runs on: CREATEROLE is refused there, and the
        # transaction it ran in is rolled back whole.
        refused = subprocess.run(
            [psql, "--no-psqlrc", "--quiet", "-f", str(script), libpq_url],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert refused.returncode != 0
        assert "lets a role with CREATEROLE grant itself any role" in refused.stderr
        assert "pg_execute_server_program" in refused.stderr
        unchanged = f"SELECT rolcreaterole FROM pg_roles WHERE rolname = '{owner}'"
        assert _query(sandbox, "older", unchanged) == [(False,)]
        accepted = ["setup-postgres", "--owner", owner, "--accept-createrole-risk"]
        script.write_text(vetbench(sandbox, accepted).output, encoding="utf-8")
    for _ in range(2):
        completed = subprocess.run(
            [psql, "--no-psqlrc", "--quiet", "-f", str(script), libpq_url],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert completed.returncode == 0, completed.stderr
    owners = _query(
        sandbox,
        "older",
        "SELECT DISTINCT tableowner FROM pg_tables WHERE schemaname = 'public' UNION "
        "SELECT DISTINCT pg_get_userbyid(proowner) FROM pg_proc WHERE proname LIKE 'vetbench%'",
    )
    assert owners == [(owner,)]
    rights = _query(
        sandbox,
        "older",
        f"SELECT rolcreaterole, pg_has_role('{owner}', 'vetbench_lead', 'MEMBER WITH ADMIN OPTION') "
        f"FROM pg_roles WHERE rolname = '{owner}'",
    )
    assert rights == [(True, True)]
    # The new owner adds people from now on.
    sandbox.env["VETBENCH_DB"] = url.set(username=owner).render_as_string(hide_password=False)
    alice = sandbox.name("alice")
    added = vetbench(sandbox, ["users", "add", alice, "--no-password"])
    sandbox.roles.append(alice)
    assert added.exit_code == 0, added.output


def test_an_administrator_applies_the_setup_for_an_owner(sandbox: Sandbox) -> None:
    """`--apply` run by a superuser: the migrations run as the owner, who owns everything."""
    owner, _url = sandbox.owner_and_database("fresh")
    safe = [] if server_version_num(sandbox) >= 160000 else ["--no-createrole"]
    for _ in range(2):  # safe to repeat
        applied = vetbench(sandbox, ["setup-postgres", "--owner", owner, "--apply", *safe])
        assert applied.exit_code == 0, applied.output
        assert "grants and row-level security applied" in applied.output
    owners = _query(
        sandbox,
        "fresh",
        "SELECT DISTINCT tableowner FROM pg_tables WHERE schemaname = 'public' UNION "
        "SELECT DISTINCT pg_get_userbyid(proowner) FROM pg_proc WHERE proname LIKE 'vetbench%' "
        "UNION SELECT nspowner::regrole::text FROM pg_namespace WHERE nspname = 'public'",
    )
    assert owners == [(owner,)]
    sqlite = CliRunner().invoke(
        cli, ["--db", "local.db", "setup-postgres", "--owner", owner, "--apply"]
    )
    assert sqlite.exit_code == 1 and "is for PostgreSQL databases" in sqlite.output


def test_on_postgresql_15_the_owner_gets_createrole_only_if_the_risk_is_accepted(
    sandbox: Sandbox,
) -> None:
    """`setup-postgres --apply` ran ALTER ROLE owner CREATEROLE on PostgreSQL 15, where the
    owner can then grant itself pg_execute_server_program: a superuser in effect."""
    if server_version_num(sandbox) >= 160000:
        pytest.skip("PostgreSQL 16 and later: test_createrole_risk.py covers the refusal")
    owner, url = sandbox.owner_and_database("pg15")
    rights = (
        f"SELECT rolcreaterole, pg_has_role('{owner}', 'vetbench_lead', 'USAGE') "
        f"FROM pg_roles WHERE rolname = '{owner}'"
    )
    tables = "SELECT count(*) FROM pg_tables WHERE schemaname = 'public'"
    refused = vetbench(sandbox, ["setup-postgres", "--owner", owner, "--apply"])
    assert refused.exit_code == 1
    assert refused.output.startswith("error: PostgreSQL 15 lets a role with CREATEROLE")
    assert len(refused.output.splitlines()) == 1
    assert _query(sandbox, "pg15", rights) == [(False, False)]  # nothing changed
    assert _query(sandbox, "pg15", tables) == [(0,)]
    # The safe way: no CREATEROLE for the owner, and a superuser adds people.
    withheld = vetbench(sandbox, ["setup-postgres", "--owner", owner, "--apply", "--no-createrole"])
    assert withheld.exit_code == 0, withheld.output
    assert "without CREATEROLE: a superuser adds people" in withheld.output
    assert "next, as a superuser: vetbench users add" in withheld.output
    assert _query(sandbox, "pg15", rights) == [(False, True)]  # the groups' admin, no more
    lena, alice = sandbox.name("lena"), sandbox.name("alice")
    added = vetbench(sandbox, ["users", "add", lena, "--role", "lead", "--no-password"])
    sandbox.roles.append(lena)
    assert added.exit_code == 0, added.output
    sandbox.env["VETBENCH_DB"] = url.set(username=owner).render_as_string(hide_password=False)
    by_owner = vetbench(sandbox, ["users", "add", alice, "--no-password"])
    assert by_owner.exit_code == 1
    assert "permission denied to create role" in by_owner.output
    # An owner given CREATEROLE meanwhile is not quietly kept by --no-createrole ...
    sandbox.superuser_sql(f'ALTER ROLE "{owner}" CREATEROLE')
    sandbox.env["VETBENCH_DB"] = url.render_as_string(hide_password=False)
    kept = vetbench(sandbox, ["setup-postgres", "--owner", owner, "--apply", "--no-createrole"])
    assert kept.exit_code == 1 and f"ALTER ROLE {owner} NOCREATEROLE" in kept.output
    # ... and accepting the risk says what it is.
    accepted = vetbench(
        sandbox, ["setup-postgres", "--owner", owner, "--apply", "--accept-createrole-risk"]
    )
    assert accepted.exit_code == 0, accepted.output
    assert f"warning: on PostgreSQL 15, {owner}'s CREATEROLE makes it a superuser in effect" in (
        accepted.output
    )

"""`setup-postgres` and CREATEROLE: up to PostgreSQL 15 a CREATEROLE role can grant itself
pg_execute_server_program (COPY ... FROM PROGRAM), a superuser in effect, so the setup
refuses to give it there unasked.  The branch of the server the tests run on is exercised
for real in test_team_setup.py; here every branch, by version number."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from db.setup_postgres import OwnerCreateRole, createrole_refusal
from reviewer.cli import cli

GIVE, DESPITE, WITHHOLD = (
    OwnerCreateRole.GIVE,
    OwnerCreateRole.GIVE_DESPITE_RISK,
    OwnerCreateRole.WITHHOLD,
)


@pytest.mark.parametrize("version_num", [160000, 160004, 170002])
def test_postgresql_16_and_later_give_the_owner_createrole(version_num: int) -> None:
    for has_createrole in (False, True):
        refusal = createrole_refusal(
            version_num, "own", GIVE, has_createrole=has_createrole, superuser=False
        )
        assert refusal is None


@pytest.mark.parametrize(("version_num", "major"), [(150004, "15"), (140011, "14"), (90624, "9")])
def test_postgresql_15_and_older_refuse_unless_the_risk_is_accepted(
    version_num: int, major: str
) -> None:
    for has_createrole in (False, True):  # given now, or by createuser --createrole before
        refusal = createrole_refusal(
            version_num, "own", GIVE, has_createrole=has_createrole, superuser=False
        )
        assert refusal is not None
        assert refusal.startswith(f"PostgreSQL {major} lets a role with CREATEROLE grant itself")
        for words in ("pg_execute_server_program", "COPY ... FROM PROGRAM", "own would be a "
                      "superuser in effect", "--no-createrole", "--accept-createrole-risk"):  # fmt: skip
            assert words in refusal
        accepted = createrole_refusal(
            version_num, "own", DESPITE, has_createrole=has_createrole, superuser=False
        )
        assert accepted is None
    # A superuser owner already has all CREATEROLE could give it.
    assert createrole_refusal(version_num, "own", GIVE, has_createrole=True, superuser=True) is None


@pytest.mark.parametrize("version_num", [150004, 170002])
def test_no_createrole_refuses_an_owner_that_has_it(version_num: int) -> None:
    assert (
        createrole_refusal(version_num, "own", WITHHOLD, has_createrole=False, superuser=False)
        is None
    )
    refusal = createrole_refusal(version_num, "own", WITHHOLD, has_createrole=True, superuser=False)
    assert refusal == (
        "own has CREATEROLE, which --no-createrole means it not to have: a superuser removes "
        "it first (ALTER ROLE own NOCREATEROLE)"
    )


def _script(*flags: str) -> str:
    result = CliRunner().invoke(cli, ["setup-postgres", "--owner", "own", *flags])
    assert result.exit_code == 0, result.output
    return result.output


def test_the_printed_script_checks_the_server_it_runs_on() -> None:
    """The script is printed without a server: the check runs in psql, on the server."""
    guard = "IF current_setting('server_version_num')::int < 160000 AND NOT (SELECT rolsuper"
    printed = _script()
    assert guard in printed and 'ALTER ROLE "own" CREATEROLE' in printed
    assert "RAISE EXCEPTION 'PostgreSQL % lets a role with CREATEROLE" in printed
    accepted = _script("--accept-createrole-risk")
    assert guard not in accepted and 'ALTER ROLE "own" CREATEROLE' in accepted
    withheld = _script("--no-createrole")
    assert guard not in withheld and 'ALTER ROLE "own" CREATEROLE' not in withheld
    assert "IF (SELECT rolcreaterole AND NOT rolsuper FROM pg_roles" in withheld
    both = CliRunner().invoke(
        cli, ["setup-postgres", "--owner", "own", "--no-createrole", "--accept-createrole-risk"]
    )
    assert both.exit_code == 1 and "choose one" in both.output

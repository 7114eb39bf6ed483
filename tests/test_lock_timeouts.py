"""On PostgreSQL a lock another session holds ends a command's wait after --lock-timeout.

Any member may lock a table they write (``LOCK TABLE claim``: annotators delete their
own claims) and keep it; a command then waited for good, saying nothing.  Now it gives
up as a SQLite writer does, in one line, having written nothing.
"""

# ruff: noqa: F811  (tests take the fixture `team` imported from test_privileges)
from __future__ import annotations

import sqlalchemy as sa
from test_privileges import Team, run, team  # noqa: F401  (team: the fixture)


def test_a_lock_held_by_another_member_ends_the_wait_in_one_line(team: Team) -> None:
    holder = sa.create_engine(team.url(team.alice))
    try:
        with holder.connect() as connection:
            connection.execute(sa.text("BEGIN"))
            connection.execute(sa.text("LOCK TABLE claim IN ACCESS EXCLUSIVE MODE"))
            waited = run(team.url(team.bob), "--lock-timeout", "1", "next", "--as", team.bob)
            connection.execute(sa.text("ROLLBACK"))
    finally:
        holder.dispose()
    assert waited.exit_code == 1
    assert waited.output.startswith("error: ") and waited.output.count("\n") == 1
    assert "another session held a lock this command needs for longer than --lock-timeout" in (
        waited.output
    )
    # Once the lock is gone the same command serves an item.
    served = run(team.url(team.bob), "next", "--as", team.bob, "--json")
    assert served.exit_code == 0, served.output

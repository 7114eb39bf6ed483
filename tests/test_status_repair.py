"""`vetbench init` puts back undecided item statuses written around vetbench.

Each member's session stores the statuses its judgments change, so on PostgreSQL a member
can also write an undecided item's status with raw SQL (pending, in review, agreed,
conflict: never approved or rejected, which only a lead's decision sets).  A forged
"agreed" hid every item from the review queue until it was judged again; the database
now keeps an item nobody judged pending, and `init` recomputes each undecided status
from the judgments and says how many it mended.
"""

# ruff: noqa: F811  (tests take the fixture `team` imported from test_privileges)
from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
import sqlalchemy as sa
from helpers import item_status, run_cli, store_item, store_judgment
from test_privileges import Team, raw, run, team  # noqa: F401  (team: the fixture)

from db.engine import open_database


def test_init_recomputes_statuses_written_around_vetbench(db_path: Path) -> None:
    database = open_database(db_path, create=True)
    for item_id in ("o:1", "o:2", "o:3"):
        store_item(database, item_id)
    store_judgment(database, "o:2", "ann", "DABC")
    database.dispose()
    untouched = run_cli(str(db_path), "init")
    assert untouched.output.endswith("is a vetbench database; its schema is up to date\n")
    assert "recomputed" not in untouched.output
    with sqlite3.connect(db_path) as connection:
        connection.execute("UPDATE item SET status = 'agreed' WHERE id IN ('o:1', 'o:2')")
        connection.execute("UPDATE item SET status = 'conflict' WHERE id = 'o:3'")
    mended = run_cli(str(db_path), "init")
    assert mended.exit_code == 0
    assert (
        f"{db_path}: 3 item statuses did not follow from the judgments and were recomputed\n"
        in (mended.output)
    )
    database = open_database(db_path)
    try:
        assert [item_status(database, i) for i in ("o:1", "o:2", "o:3")] == [
            "pending",
            "in_review",
            "pending",
        ]
    finally:
        database.dispose()


def test_a_members_forged_status_on_postgresql_is_put_back_by_init(team: Team) -> None:
    """alice cannot take items nobody judged out of the queue; a forged status of a judged
    item is put back by init."""
    alice = team.url(team.alice)
    for forged in ("agreed", "conflict", "in_review"):
        with pytest.raises(sa.exc.IntegrityError, match="which has no judgment: an item nobody"):
            raw(alice, f"UPDATE item SET status = '{forged}' WHERE status = 'pending'")
    owner = open_database(team.owner_url)
    try:
        assert [item_status(owner, i) for i in ("o:1", "o:2")] == ["pending", "pending"]
    finally:
        owner.dispose()
    judged = run(alice, "judge", "o:1", "--answer", "ABCD", "--verdict", "keep")
    assert judged.exit_code == 0, judged.output
    raw(alice, "UPDATE item SET status = 'agreed' WHERE id = 'o:1'")  # one judgment of k
    mended = run(team.owner_url, "init")
    assert mended.exit_code == 0 and "1 item status did not follow" in mended.output
    owner = open_database(team.owner_url)
    try:
        assert item_status(owner, "o:1") == "in_review"
    finally:
        owner.dispose()

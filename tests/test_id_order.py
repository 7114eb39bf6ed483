"""Items are picked in one order on both databases: ids compared bytewise.

PostgreSQL orders text in the database's collation; on a server made with an
``en_US`` locale that puts ``x_b`` before ``x-a``, ``x:2`` before ``X:3`` and ``x:10``
before ``x9``, where SQLite (and Python's ``sorted``) compare bytes.  ``--limit`` takes
the first items of that order, so ``vetbench eval --release R --limit N`` (and ``--limit``
without a release, whose items imported together tie on their time) must not pick
different items on the two databases.  The PostgreSQL case gives the id columns an
``en-US`` ICU collation, as such a server's default would.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import sqlalchemy as sa
from eval_helpers import ok
from helpers import run_cli, store_person

from db.engine import Database
from db.vocabulary import Role
from evaluator.item_filter import ItemFilter
from evaluator.run_create import select_run_items

IDS = ["x:10", "x:2", "X:3", "x_b", "x-a", "xa", "x9"]
BYTEWISE = sorted(IDS)  # X:3 x-a x9 x:10 x:2 x_b xa
LIMIT = 4


def _import_together(database: Database, tmp_path: Path) -> None:
    """The items in one file, stated as made at one moment (as a batch another database
    made and exported): only the id orders them."""
    lines = [
        {
            "id": item_id,
            "kind": "ordering",
            "prompt": f"Case {n}: {'harbour ' * n}trade slows. Order the events.",
            "choices": {"A": f"Ships wait {n} days.", "B": "Prices rise.", "C": "Demand falls."},
            "key": "ABC",
            "created_at": "2026-11-29T14:00:00+00:00",
        }
        for n, item_id in enumerate(IDS, start=1)
    ]
    path = tmp_path / "items.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    ok(run_cli(database, "import", str(path)))


def _en_us_collation(database: Database) -> None:
    """On PostgreSQL, the id columns ordered as an ``en_US`` server orders them by default,
    and a check that this order differs from bytewise (else the test would prove nothing)."""
    if database.is_sqlite:
        return
    with database.engine.begin() as connection:
        found = connection.execute(
            sa.text("SELECT 1 FROM pg_collation WHERE collname = 'en-US-x-icu'")
        ).first()
        if found is None:
            pytest.skip("this PostgreSQL has no ICU collation en-US-x-icu")
        for table, column in (("item", "id"), ("release_item", "item_id")):
            connection.execute(
                sa.text(
                    f'ALTER TABLE {table} ALTER COLUMN {column} TYPE VARCHAR(255) COLLATE "en-US-x-icu"'
                )
            )
        plain = connection.execute(sa.text("SELECT id FROM item ORDER BY id")).scalars().all()
    assert plain != BYTEWISE


def _picked(database: Database, item_filter: ItemFilter) -> list[str]:
    return [item.id for item in select_run_items(database, item_filter).items]


def test_limit_picks_the_bytewise_first_ids_on_both_databases(
    database: Database, tmp_path: Path
) -> None:
    _import_together(database, tmp_path)
    store_person(database, "lena", Role.LEAD)
    ok(run_cli(database, "release", "create", "v1", "--status", "all", "--as", "lena"))
    _en_us_collation(database)

    released = _picked(database, ItemFilter(release="v1", limit=LIMIT))
    assert released == BYTEWISE[:LIMIT]
    assert _picked(database, ItemFilter(statuses=("pending",), limit=LIMIT)) == BYTEWISE[:LIMIT]
    shown = json.loads(ok(run_cli(database, "release", "show", "v1", "--json")).stdout)
    assert [entry["id"] for entry in shown["item_ids"]] == BYTEWISE

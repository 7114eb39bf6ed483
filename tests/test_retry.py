"""The one retry loop for transactions the database aborted to break a deadlock."""

from __future__ import annotations

import threading

import pytest
from helpers import store_item
from sqlalchemy.exc import IntegrityError
from sqlmodel import select

from db.engine import Database
from db.models import Item
from db.retry import retry_transient


def test_a_deadlock_victim_is_run_again_until_both_transactions_commit(
    database: Database,
) -> None:
    if database.is_sqlite:
        pytest.skip("SQLite serialises writers: it never picks a deadlock victim")
    store_item(database, "econ:1")
    store_item(database, "econ:2")
    both_hold_their_first_lock = threading.Barrier(2, timeout=30)
    attempts: dict[str, int] = {"econ:1": 0, "econ:2": 0}
    failures: list[BaseException] = []

    def lock_both(first: str, second: str) -> None:
        with database.transaction() as session:
            attempts[first] += 1
            session.exec(select(Item).where(Item.id == first).with_for_update()).one()
            if attempts[first] == 1:  # the first time round, each waits for the other
                both_hold_their_first_lock.wait()
            session.exec(select(Item).where(Item.id == second).with_for_update()).one()

    def writer(first: str, second: str) -> None:
        try:
            retry_transient(lambda: lock_both(first, second))
        except BaseException as error:  # reported to the test thread
            failures.append(error)

    threads = [
        threading.Thread(target=writer, args=("econ:1", "econ:2")),
        threading.Thread(target=writer, args=("econ:2", "econ:1")),
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert failures == []
    # PostgreSQL aborted exactly one of the two (SQLSTATE 40P01); it ran again.
    assert sorted(attempts.values()) == [1, 2]


def test_any_other_database_error_is_raised_at_the_first_attempt(database: Database) -> None:
    store_item(database, "econ:1")
    calls = []

    def insert_a_duplicate() -> None:
        calls.append(1)
        store_item(database, "econ:1")

    with pytest.raises(IntegrityError):
        retry_transient(insert_a_duplicate)
    assert len(calls) == 1

from __future__ import annotations

import signal
from pathlib import Path

import pytest
from helpers import ctrl_c_in_commits
from sqlalchemy import Engine, event, text
from sqlmodel import Session

from db.engine import open_database, resolve_db_url
from db.interrupts import InterruptedAfterCommit, InterruptedDuringCommit
from db.items import add_item, add_revision, get_item, get_revisions
from db.migrate import current_revision, head_revision
from db.validation import ItemDraft, validate_draft


def draft() -> ItemDraft:
    return ItemDraft(
        kind="ordering",
        prompt="A retailer restocks.",
        choices={
            "A": "Orders placed",
            "B": "Goods shipped",
            "C": "Goods arrive",
            "D": "Shelves filled",
        },
        key="A, B, C, D",
    )


def test_sqlite_connections_get_wal_busy_timeout_and_foreign_keys(database) -> None:
    if not database.is_sqlite:
        pytest.skip("SQLite pragmas")
    with database.engine.connect() as connection:
        assert connection.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
        assert connection.exec_driver_sql("PRAGMA foreign_keys").scalar() == 1
        assert connection.exec_driver_sql("PRAGMA busy_timeout").scalar() >= 5000


def test_new_database_is_at_the_newest_migration(database) -> None:
    assert current_revision(database.engine) == head_revision()


def test_paths_and_urls_resolve(tmp_path: Path) -> None:
    assert resolve_db_url(tmp_path / "x.db").database == str(tmp_path / "x.db")
    assert resolve_db_url("postgresql+psycopg://u@h/db").get_backend_name() == "postgresql"
    assert resolve_db_url(None).database.endswith("vetbench.db")


def test_revisions_keep_history(database) -> None:
    item_draft = draft()
    assert validate_draft(item_draft) == []
    assert item_draft.key == "ABCD"
    with database.transaction() as session:
        add_item(session, "t:1", "t", item_draft, author="import")
    with database.transaction() as session:
        add_revision(
            session, "t:1", author="ann", change_note="edit", prompt="A retailer restocks shelves."
        )
    with database.session() as session:
        assert get_item(session, "t:1").prompt == "A retailer restocks shelves."
        assert get_item(session, "t:1", revision=1).prompt == "A retailer restocks."
        assert [r.number for r in get_revisions(session, "t:1")] == [1, 2]


def test_failed_transaction_changes_nothing(database) -> None:
    try:
        with database.transaction() as session:
            add_item(session, "t:1", "t", draft(), author="import")
            session.flush()
            raise RuntimeError("boom")
    except RuntimeError:
        pass
    with database.engine.connect() as connection:
        assert connection.execute(text("SELECT count(*) FROM item")).scalar() == 0


def test_ctrl_c_inside_commit_reaches_the_caller_as_itself(database) -> None:
    """A KeyboardInterrupt that lands in commit() itself, where SQLAlchemy refuses the
    rollback, is not replaced by that refusal: `import` says what it stored and exits 130."""

    def interrupt(session: Session) -> None:
        raise KeyboardInterrupt

    event.listen(Session, "after_commit", interrupt)
    try:
        with pytest.raises(KeyboardInterrupt), database.transaction() as session:
            add_item(session, "t:1", "t", draft(), author="import")
    finally:
        event.remove(Session, "after_commit", interrupt)
    with database.transaction() as session:  # the database is usable after it
        assert get_item(session, "t:1") is not None  # committed before the interrupt


def test_ctrl_c_in_a_commit_waits_for_it_and_says_it_went_through(database) -> None:
    with (
        ctrl_c_in_commits(),
        pytest.raises(InterruptedAfterCommit),
        database.transaction() as session,
    ):
        add_item(session, "t:1", "t", draft(), author="import")
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    with database.transaction() as session:
        assert get_item(session, "t:1") is not None


def test_ctrl_c_twice_in_a_commit_leaves_it_at_once_and_says_so(database) -> None:
    with (
        ctrl_c_in_commits(2),
        pytest.raises(InterruptedDuringCommit),
        database.transaction() as session,
    ):
        add_item(session, "t:1", "t", draft(), author="import")
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    with database.transaction() as session:  # cut before the database committed here
        assert get_item(session, "t:1") is None


def test_reopening_a_current_database_runs_one_statement_and_changes_nothing(
    db_path: Path,
) -> None:
    open_database(db_path).dispose()
    statements: list[str] = []

    def record(_conn, _cursor, statement, _params, _context, _many) -> None:  # type: ignore[no-untyped-def]
        statements.append(statement)

    event.listen(Engine, "before_cursor_execute", record)
    try:
        again = open_database(db_path)
    finally:
        event.remove(Engine, "before_cursor_execute", record)
    # Cheap: the schema is current, so opening only reads the stamped version.
    transaction_control = {"BEGIN", "COMMIT", "ROLLBACK"}
    assert [s for s in statements if s.strip().upper() not in transaction_control] == [
        "SELECT version_num FROM alembic_version"
    ]
    assert current_revision(again.engine) == head_revision()
    again.dispose()

"""`vetbench backup`: a consistent, checked copy of a SQLite database taken while annotators
write to it; restoring it gives back every judgment."""

from __future__ import annotations

import shutil
import sqlite3
import threading
from pathlib import Path

import pytest
from helpers import run_cli, store_item, store_person
from sqlmodel import col, select

from db.engine import Database, open_database
from db.models import Judgment
from reviewer.judging import submit_judgment

ITEMS = [f"o:{number}" for number in range(1, 41)]


def judgment_rows(db: Database) -> list[tuple[int, str, int, str, str, bool]]:
    with db.session() as session:
        rows = session.exec(select(Judgment).order_by(col(Judgment.id))).all()
        return [
            (j.id or 0, j.item_id, j.annotator_id, j.verdict, j.blind_answer, j.retracted)
            for j in rows
        ]


def judge(db: Database, person: str, item_id: str) -> int:
    return submit_judgment(
        db, person, item_id, revision_number=None, blind_answer="ABCD", verdict="keep"
    ).judgment_id


@pytest.fixture
def working_db(db_path: Path) -> Database:
    db = open_database(db_path)
    for item_id in ITEMS:
        store_item(db, item_id, key="ABCD")
    for person in ("alice", "bob"):
        store_person(db, person)
    return db


def test_a_backup_taken_while_annotators_work_restores_every_judgment(
    working_db: Database, db_path: Path, tmp_path: Path
) -> None:
    before = [judge(working_db, "alice", item_id) for item_id in ITEMS[:10]]
    # Bob keeps judging in another thread while the backup runs.
    writer_db = open_database(db_path)
    acknowledged: list[int] = []
    started = threading.Event()

    def bob_works() -> None:
        for item_id in ITEMS:
            acknowledged.append(judge(writer_db, "bob", item_id))
            started.set()

    bob = threading.Thread(target=bob_works)
    bob.start()
    started.wait(timeout=60)
    backup = tmp_path / "backups" / "copy.db"
    backup.parent.mkdir()
    acknowledged_first = list(acknowledged)
    result = run_cli(db_path, "backup", str(backup))
    bob.join(timeout=120)
    writer_db.dispose()
    assert result.exit_code == 0, result.output
    assert result.output.startswith(f"backed up {db_path} to {backup}")
    assert "integrity ok" in result.output

    # Restore: the copy becomes the database a fresh process opens.
    restored_path = tmp_path / "restored.db"
    shutil.copyfile(backup, restored_path)
    restored = open_database(restored_path)
    restored_rows = judgment_rows(restored)
    restored_ids = {row[0] for row in restored_rows}
    # Every judgment acknowledged before the backup began is there, identical ...
    assert set(before) | set(acknowledged_first) <= restored_ids
    source_rows = {row[0]: row for row in judgment_rows(working_db)}
    assert all(source_rows[row[0]] == row for row in restored_rows)
    # ... and the copy is one consistent moment: alice's ten and a prefix of bob's.
    bobs = sorted(restored_ids - set(before))
    assert bobs == acknowledged[: len(bobs)]
    assert f"{len(restored_rows):,} judgments" in result.output
    with sqlite3.connect(restored_path) as connection:
        assert connection.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        with pytest.raises(sqlite3.IntegrityError, match="append-only"):
            connection.execute("DELETE FROM audit_event")
    restored.dispose()
    working_db.dispose()


def test_backup_refuses_to_overwrite_or_copy_onto_itself(
    working_db: Database, db_path: Path, tmp_path: Path
) -> None:
    judge(working_db, "alice", "o:1")
    target = tmp_path / "copy.db"
    assert run_cli(db_path, "backup", str(target)).exit_code == 0
    again = run_cli(db_path, "backup", str(target))
    assert again.exit_code == 1 and "exists; use --force" in again.output
    assert run_cli(db_path, "backup", str(target), "--force").exit_code == 0
    onto_itself = run_cli(db_path, "backup", str(db_path))
    assert onto_itself.exit_code == 1 and "is the database itself" in onto_itself.output
    nowhere = run_cli(db_path, "backup", str(tmp_path / "missing" / "copy.db"))
    assert nowhere.exit_code == 1 and "is not a folder" in nowhere.output
    assert not list(tmp_path.glob("*.partial"))
    working_db.dispose()


def test_backup_points_postgres_users_to_pg_dump(database: Database, database_url: str) -> None:
    if database.is_sqlite:
        pytest.skip("the PostgreSQL refusal")
    refused = run_cli(database_url, "backup", "copy.db")
    assert refused.exit_code == 1 and "pg_dump" in refused.output

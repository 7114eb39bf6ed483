"""`vetbench backup`: a consistent, checked copy of a SQLite database taken while annotators
write to it; restoring it gives back every judgment."""

from __future__ import annotations

import os
import shlex
import shutil
import sqlite3
import stat
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path

import pytest
import test_io_integrity
from click.testing import Result
from helpers import run_cli, store_item, store_person
from sqlmodel import col, select
from test_io_integrity import fill_up, remount_read_only
from test_team_setup import bash_block_after

from db import backup as backup_module
from db.engine import Database, make_engine, open_database
from db.migrate import upgrade_to
from db.models import Judgment
from reviewer.judging import submit_judgment

ITEMS = [f"o:{number}" for number in range(1, 41)]
mounted_tmpfs = test_io_integrity.mounted_tmpfs  # a real tmpfs to fill up or make read-only


def judgment_rows(db: Database) -> list[tuple[int, str, int, str, str, bool]]:
    with db.session() as session:
        rows = session.exec(select(Judgment).order_by(col(Judgment.id))).all()
        return [
            (j.id or 0, j.item_id, j.annotator_id, j.verdict, j.blind_answer, j.retracted)
            for j in rows
        ]


def judgment_ids_in(path: Path) -> list[int]:
    """The ids of the judgments the SQLite file at ``path`` holds, opened afresh."""
    db = open_database(path)
    try:
        return [row[0] for row in judgment_rows(db)]
    finally:
        db.dispose()


def judge(db: Database, person: str, item_id: str) -> int:
    return submit_judgment(
        db, person, item_id, revision_number=None, blind_answer="ABCD", verdict="keep"
    ).judgment_id


@pytest.fixture
def working_db(db_path: Path) -> Iterator[Database]:
    db = open_database(db_path)
    for item_id in ITEMS:
        store_item(db, item_id, key="ABCD")
    for person in ("alice", "bob"):
        store_person(db, person)
    yield db
    db.dispose()  # every test's connections closed here, passed or failed


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


CRASHED_WRITER = """
import os, signal, sys
from db.engine import open_database
from reviewer.judging import submit_judgment
db = open_database(sys.argv[1])
for item_id in sys.argv[2:]:
    submit_judgment(db, "bob", item_id, revision_number=None, blind_answer="ABCD", verdict="keep")
os.kill(os.getpid(), signal.SIGKILL)  # no clean close: the log stays beside the database
"""


def test_the_readmes_restore_gives_back_the_backup_after_a_crash(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The README's commands, run as written: a writer killed after the backup left its
    -wal beside the database, and the restored copy took that old log in (the judgments
    made after the backup came back, or the copy failed its integrity check)."""
    monkeypatch.chdir(tmp_path)
    database = tmp_path / "vetbench.db"
    db = open_database(database)
    for item_id in ITEMS[:10]:
        store_item(db, item_id, key="ABCD")
    for person in ("alice", "bob"):
        store_person(db, person)
    backed_up = [judge(db, "alice", item_id) for item_id in ITEMS[:5]]
    db.dispose()
    Path("backups").mkdir()
    backup_line, *restore_lines = bash_block_after("## Backups")
    assert backup_line.startswith("vetbench backup "), backup_line
    assert run_cli(database, *shlex.split(backup_line)[1:]).exit_code == 0
    crashed = subprocess.run(
        [sys.executable, "-c", CRASHED_WRITER, str(database), *ITEMS[:10]],
        env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parent.parent)},
        capture_output=True,
        text=True,
        check=False,
    )
    assert crashed.returncode == -9, crashed.stderr
    assert Path("vetbench.db-wal").stat().st_size > 0  # what a crash leaves behind

    for line in restore_lines:
        assert line.split()[0] in ("rm", "cp"), f"the test does not know {line!r}"
        subprocess.run(line, shell=True, check=True)
    with closing(sqlite3.connect(database)) as connection:
        assert connection.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
    assert judgment_ids_in(database) == backed_up


def test_the_backup_counts_judgments_as_stats_does(
    working_db: Database, db_path: Path, tmp_path: Path
) -> None:
    """A retracted judgment is not one in force: `stats` and the backup say the same."""
    judge(working_db, "alice", "o:1")
    judge(working_db, "bob", "o:1")
    assert run_cli(db_path, "undo", "--as", "bob").exit_code == 0
    stats = run_cli(db_path, "stats").output
    assert "judgments: 1\n" in stats and "retracted judgments: 1\n" in stats
    result = run_cli(db_path, "backup", str(tmp_path / "copy.db"))
    assert result.exit_code == 0 and ", 1 judgment, integrity ok" in result.output


def test_a_private_database_gives_a_private_copy_from_its_first_byte(
    working_db: Database, db_path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`chmod 600 s.db; backup b1.db` gave a 0644 copy (and a 0644 partial file while it
    was written), and `--force` over a 0644 file kept 0644: anyone could read it."""
    judge(working_db, "alice", "o:1")
    db_path.chmod(0o600)
    modes_while_written: list[int] = []
    real_copy = backup_module._copy_and_check

    def watched_copy(source: Path, partial: Path) -> tuple[int, int]:
        modes_while_written.append(stat.S_IMODE(partial.stat().st_mode))
        return real_copy(source, partial)

    monkeypatch.setattr(backup_module, "_copy_and_check", watched_copy)
    old_umask = os.umask(0o022)  # the usual umask: it alone left the copy world-readable
    try:
        fresh = tmp_path / "b1.db"
        assert run_cli(db_path, "backup", str(fresh)).exit_code == 0
        replaced = tmp_path / "b2.db"
        replaced.write_bytes(b"an older backup")
        replaced.chmod(0o644)
        assert run_cli(db_path, "backup", str(replaced), "--force").exit_code == 0
        # A group-readable database: the group keeps reading its copies, others do not.
        db_path.chmod(0o640)
        shared = tmp_path / "b3.db"
        assert run_cli(db_path, "backup", str(shared)).exit_code == 0
        # A read-only database is still copied (its owner writes the copy, then it is
        # made read-only like the database).
        db_path.chmod(0o400)
        read_only = tmp_path / "b4.db"
        assert run_cli(db_path, "backup", str(read_only)).exit_code == 0
    finally:
        os.umask(old_umask)
        db_path.chmod(0o644)
    assert modes_while_written == [0o600, 0o600, 0o640, 0o600]
    assert [stat.S_IMODE(path.stat().st_mode) for path in (fresh, replaced, shared)] == [
        0o600,
        0o600,
        0o640,
    ]
    assert stat.S_IMODE(read_only.stat().st_mode) == 0o400
    with closing(sqlite3.connect(read_only)) as connection:
        assert connection.execute("SELECT count(*) FROM judgment").fetchone() == (1,)


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
    assert onto_itself.exit_code == 1 and "is a file of the database itself" in onto_itself.output
    missing = tmp_path / "missing"
    nowhere = run_cli(db_path, "backup", str(missing / "copy.db"))
    assert nowhere.exit_code == 1
    # the exports' sentence, and the folder is not made
    assert f"cannot back up to {missing / 'copy.db'}: the folder {missing} does not exist" in (
        nowhere.output
    )
    assert not missing.exists()
    in_the_way = tmp_path / "notes.txt"
    in_the_way.write_text("a file, not a folder\n")
    through_a_file = run_cli(db_path, "backup", str(in_the_way / "copy.db"))
    assert through_a_file.exit_code == 1
    assert f"{in_the_way} is not a folder" in through_a_file.output
    assert not list(tmp_path.glob("*.partial"))


def test_a_refused_backup_leaves_the_folder_as_it_found_it(tmp_path: Path) -> None:
    """No -wal or -shm left beside the database either: the look at its tables, read-only,
    makes them in WAL mode, and a refused backup opens nothing else that would remove them."""
    folder = tmp_path / "data"
    folder.mkdir()
    db_path = folder / "vetbench.db"
    db = open_database(db_path)
    store_item(db, "o:1", key="ABCD")
    db.dispose()
    (folder / "taken.db").write_bytes(b"")
    before = sorted(path.name for path in folder.iterdir())
    assert before == ["taken.db", "vetbench.db"]
    for destination in (folder / "missing" / "b.db", folder / "taken.db", db_path):
        refused = run_cli(db_path, "backup", str(destination))
        assert refused.exit_code == 1
        assert sorted(path.name for path in folder.iterdir()) == before, refused.output


def test_backup_points_postgres_users_to_pg_dump(database: Database, database_url: str) -> None:
    if database.is_sqlite:
        pytest.skip("the PostgreSQL refusal")
    refused = run_cli(database_url, "backup", "copy.db")
    assert refused.exit_code == 1 and "pg_dump" in refused.output


# --- the destination rules of `export` (issue 22, point 6) -----------------------------


def one_line_refusal(result: Result, *words: str) -> str:
    assert result.exit_code == 1, result.output
    assert "Traceback" not in result.output and len(result.output.splitlines()) == 1
    for word in words:
        assert word in result.output
    return result.output


def test_a_fifo_is_kept_not_replaced_by_a_file(
    working_db: Database, db_path: Path, tmp_path: Path
) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    for extra in ((), ("--force",)):
        one_line_refusal(run_cli(db_path, "backup", str(fifo), *extra), "not a regular file")
        assert stat.S_ISFIFO(fifo.lstat().st_mode)
    # Behind a symbolic link it is the same FIFO, kept.
    link = tmp_path / "link"
    link.symlink_to(fifo)
    one_line_refusal(run_cli(db_path, "backup", str(link), "--force"), "not a regular file")
    assert stat.S_ISFIFO(fifo.lstat().st_mode) and link.is_symlink()
    assert sorted(p.name for p in tmp_path.iterdir() if "partial" in p.name) == []


@pytest.mark.skipif(os.geteuid() != 0, reason="making a device node needs root")
def test_a_device_node_is_kept(working_db: Database, db_path: Path, tmp_path: Path) -> None:
    null = tmp_path / "null"
    os.mknod(null, 0o666 | stat.S_IFCHR, os.makedev(1, 3))  # the same device as /dev/null
    one_line_refusal(run_cli(db_path, "backup", str(null), "--force"), "not a regular file")
    assert stat.S_ISCHR(null.lstat().st_mode)


def test_a_symbolic_link_is_followed_and_stays_a_link(
    working_db: Database, db_path: Path, tmp_path: Path
) -> None:
    judge(working_db, "alice", "o:1")
    kept = tmp_path / "kept.db"
    kept.write_bytes(b"an older backup")
    kept.chmod(0o640)
    link = tmp_path / "latest.db"
    link.symlink_to(kept)
    result = run_cli(db_path, "backup", str(link), "--force")
    assert result.exit_code == 0, result.output
    assert link.is_symlink() and stat.S_IMODE(kept.stat().st_mode) == 0o640
    with sqlite3.connect(kept) as connection:
        assert connection.execute("SELECT count(*) FROM judgment").fetchone() == (1,)


def test_the_write_ahead_log_of_the_database_is_refused_and_no_row_is_lost(
    working_db: Database, db_path: Path
) -> None:
    """`backup w.db-wal --force` while a writer holds commits not yet in the database file
    said "integrity ok" and lost the 5 committed judgments."""
    holder = sqlite3.connect(db_path)  # an open connection keeps the log from being folded in
    holder.execute("PRAGMA wal_autocheckpoint = 0")
    committed = [judge(working_db, "alice", item_id) for item_id in ITEMS[:5]]
    wal = db_path.with_name(db_path.name + "-wal")
    assert wal.stat().st_size > 0
    for side in ("-wal", "-shm", "-journal"):
        refused = run_cli(db_path, "backup", str(db_path) + side, "--force")
        one_line_refusal(refused, "is a file of the database itself")
    link = db_path.with_name("points-at-the-log")
    link.symlink_to(wal)
    one_line_refusal(run_cli(db_path, "backup", str(link), "--force"), "file of the database")
    working_db.dispose()
    holder.close()
    assert judgment_ids_in(db_path) == committed


def test_a_users_partial_file_is_never_touched(
    working_db: Database, db_path: Path, tmp_path: Path
) -> None:
    """`backup mine.db` deleted the user's own `mine.db.partial`."""
    theirs = tmp_path / "mine.db.partial"
    theirs.write_text("someone's notes")
    result = run_cli(db_path, "backup", str(tmp_path / "mine.db"))
    assert result.exit_code == 0, result.output
    assert theirs.read_text() == "someone's notes"
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(("mine", ".mine"))) == [
        "mine.db",
        "mine.db.partial",
    ]


def test_a_symbolic_link_loop_is_one_line(
    working_db: Database, db_path: Path, tmp_path: Path
) -> None:
    (tmp_path / "a").symlink_to(tmp_path / "b")
    (tmp_path / "b").symlink_to(tmp_path / "a")
    one_line_refusal(run_cli(db_path, "backup", str(tmp_path / "a")), "symbolic links")


def test_a_read_only_mount_is_one_line(
    working_db: Database, db_path: Path, mounted_tmpfs: Path
) -> None:
    remount_read_only(mounted_tmpfs)
    one_line_refusal(
        run_cli(db_path, "backup", str(mounted_tmpfs / "copy.db")), "Read-only file system"
    )
    assert list(mounted_tmpfs.iterdir()) == []


@pytest.mark.parametrize("free_kib", [0, 60])
def test_a_full_disk_is_one_line_and_leaves_no_partial_file(
    working_db: Database, db_path: Path, mounted_tmpfs: Path, free_kib: int
) -> None:
    """With some room left the copy began and SQLite's journal of it stayed behind
    (``copy.db.partial-journal``)."""
    for number in range(150):  # a database larger than the tmpfs
        store_item(working_db, f"long:{number}", prompt=f"{number} " + "x" * 2000)
    fill_up(mounted_tmpfs)
    filler = mounted_tmpfs / "filler"
    os.truncate(filler, filler.stat().st_size - free_kib * 1024)
    with sqlite3.connect(db_path) as reader:  # the database's size, write-ahead log included
        pages, page_size = (
            reader.execute(f"PRAGMA {name}").fetchone()[0] for name in ("page_count", "page_size")
        )
    assert pages * page_size > (free_kib + 8) * 1024  # the copy cannot fit
    one_line_refusal(run_cli(db_path, "backup", str(mounted_tmpfs / "copy.db")), "full")
    assert sorted(p.name for p in mounted_tmpfs.iterdir()) == ["filler"]


def test_a_backup_copies_the_schema_as_it_is_and_never_upgrades_it(tmp_path: Path) -> None:
    # The backup taken before an upgrade is the one to go back to: `vetbench backup`
    # upgraded the live database first, and the copy held the new schema.
    source = tmp_path / "old.db"
    engine = make_engine(f"sqlite:///{source}")
    upgrade_to(engine, "0013_review_filters")
    engine.dispose()
    copy = tmp_path / "copy.db"
    result = run_cli(source, "backup", str(copy))
    assert result.exit_code == 0, result.output
    for path in (source, copy):
        with closing(sqlite3.connect(path)) as connection:
            revision = connection.execute("SELECT version_num FROM alembic_version").fetchall()
        assert revision == [("0013_review_filters",)], path

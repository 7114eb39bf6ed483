"""``vetbench backup``: a consistent copy of a SQLite database, taken while people work.

SQLite's online backup API (``sqlite3.Connection.backup``) copies the database page
by page; when another process writes meanwhile it starts again from the changed
pages, so the copy is one consistent state.  The copy is then checked with
``PRAGMA integrity_check`` and its judgments counted.  PostgreSQL databases are
backed up with ``pg_dump`` (see the README).
"""

from __future__ import annotations

import contextlib
import sqlite3
from dataclasses import dataclass
from pathlib import Path

from db.engine import Database
from db.errors import VetbenchError

PAGES_PER_STEP = 1024  # ~4 MB per step: writers get the lock between steps


class BackupError(VetbenchError, RuntimeError):
    """The backup could not be made or is not sound; the message says why."""


@dataclass(frozen=True)
class BackupResult:
    source: str
    destination: str
    pages: int
    judgments: int


def backup_sqlite(db: Database, destination: Path, *, replace: bool = False) -> BackupResult:
    """Copy ``db`` to ``destination``, check the copy, and return what it holds.

    Refuses a PostgreSQL database, the database itself as destination, and an
    existing file unless ``replace``.  A copy that fails its check is removed.
    """
    if not db.is_sqlite or not db.url.database:
        raise BackupError(
            "vetbench backup copies SQLite files; back up PostgreSQL with pg_dump "
            "(see the README's team section)"
        )
    source = Path(db.url.database).resolve()
    target = destination.expanduser().resolve()
    if target == source:
        raise BackupError(f"{destination} is the database itself; choose another file")
    if target.exists() and not replace:
        raise BackupError(f"{destination} exists; use --force to replace it")
    if not target.parent.is_dir():
        raise BackupError(f"{target.parent} is not a folder")
    partial = target.with_name(target.name + ".partial")
    partial.unlink(missing_ok=True)
    try:
        with (
            contextlib.closing(sqlite3.connect(source, timeout=60)) as reader,
            contextlib.closing(sqlite3.connect(partial)) as copy,
        ):
            reader.backup(copy, pages=PAGES_PER_STEP)
            # A standalone file: no write-ahead log beside it.
            copy.execute("PRAGMA journal_mode = DELETE")
            problems = [row[0] for row in copy.execute("PRAGMA integrity_check")]
            if problems != ["ok"]:
                raise BackupError(f"the copy failed its integrity check: {'; '.join(problems[:3])}")
            pages = int(copy.execute("PRAGMA page_count").fetchone()[0])
            judgments = int(copy.execute("SELECT count(*) FROM judgment").fetchone()[0])
        partial.replace(target)
    except sqlite3.Error as error:
        partial.unlink(missing_ok=True)
        raise BackupError(f"cannot back up {source} to {destination}: {error}") from None
    except BackupError:
        partial.unlink(missing_ok=True)
        raise
    return BackupResult(str(source), str(target), pages, judgments)

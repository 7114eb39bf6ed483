"""``vetbench backup``: a consistent copy of a SQLite database, taken while people work.

SQLite's online backup API (``sqlite3.Connection.backup``) copies the database page
by page; when another process writes meanwhile it starts again from the changed
pages, so the copy is one consistent state.  The copy is then checked with
``PRAGMA integrity_check`` and its judgments counted.  PostgreSQL databases are
backed up with ``pg_dump`` (see the README).
"""

from __future__ import annotations

import contextlib
import os
import secrets
import sqlite3
import stat
from dataclasses import dataclass
from pathlib import Path

from db.destinations import folder_problem
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

    The destination rules are ``export``'s: a symbolic link is followed (its target is
    replaced, the link stays), a folder, FIFO, device or socket is refused, never
    replaced by a file.  Refused too: a PostgreSQL database, any file of the database
    itself (the database, its ``-wal``, ``-shm`` or ``-journal``), and an existing file
    unless ``replace``.  The copy is made in a file of its own beside the destination,
    named so that it cannot be anyone else's, and renamed into place once checked; a
    failure removes only what this backup made.  The copy is never more readable than
    the database (its permission bits are a subset of the database's), from its first byte.
    """
    if not db.is_sqlite or not db.url.database:
        raise BackupError(
            "vetbench backup copies SQLite files; back up PostgreSQL with pg_dump "
            "(see the README's team section)"
        )
    source = Path(os.path.realpath(db.url.database))
    target = Path(os.path.realpath(destination.expanduser()))
    try:
        status = target.stat()
    except (FileNotFoundError, NotADirectoryError):  # the folder check below says which
        status = None
    except OSError as error:  # a symbolic link loop, a folder it may not enter
        raise BackupError(_cannot(destination, error)) from None
    if target in _database_files(source, Path(db.url.database)) or (
        status is not None and _same_file(target, source)
    ):
        raise BackupError(
            f"{destination} is a file of the database itself ({source.name}, its -wal, -shm "
            "or -journal); choose another file"
        )
    if status is not None and not stat.S_ISREG(status.st_mode):
        what = "a folder" if stat.S_ISDIR(status.st_mode) else "not a regular file"
        raise BackupError(f"{destination} is {what}; a backup is written only to a regular file")
    if status is not None and not replace:
        raise BackupError(f"{destination} exists; use --force to replace it")
    problem = folder_problem(destination.expanduser(), target)
    if problem is not None:
        raise BackupError(f"cannot back up to {destination}: {problem}")
    try:
        # The copy holds what the database holds: it is never more readable than the
        # database, from its first byte (a 0600 database gives a 0600 copy).
        source_bits = stat.S_IMODE(source.stat().st_mode) & 0o777
    except OSError as error:
        raise BackupError(f"cannot back up {source}: {error.strerror or error}") from None
    partial = target.with_name(f".{target.name}.{secrets.token_hex(6)}.partial")
    try:
        # O_EXCL: a file of this name that is not this backup's is never opened, let
        # alone removed.  It is made with the database's bits (the umask may take more),
        # plus the owner's read and write, which SQLite needs to fill it.
        handle = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_EXCL, source_bits | 0o600)
        try:
            made_bits = stat.S_IMODE(os.fstat(handle).st_mode)
        finally:
            os.close(handle)
    except OSError as error:  # a read-only mount, a full disk, no permission
        raise BackupError(_cannot(destination, error)) from None
    # A replaced file keeps its bits, a new one the umask's; either less any bit the
    # database does not have.
    final_bits = (stat.S_IMODE(status.st_mode) if status is not None else made_bits) & source_bits
    try:
        pages, judgments = _copy_and_check(source, partial)
        os.chmod(partial, final_bits)
        os.replace(partial, target)
    except (sqlite3.Error, OSError) as error:
        _remove_partial(partial)
        reason = error.strerror if isinstance(error, OSError) and error.strerror else error
        raise BackupError(f"cannot back up {source} to {destination}: {reason}") from None
    except BaseException:
        _remove_partial(partial)
        raise
    return BackupResult(str(source), str(target), pages, judgments)


def _copy_and_check(source: Path, partial: Path) -> tuple[int, int]:
    """Copy ``source`` into the (empty) file ``partial``; its pages and judgments."""
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
        # Counted as `vetbench stats` counts them: the judgments in force, not the retracted.
        judgments = int(
            copy.execute("SELECT count(*) FROM judgment WHERE NOT retracted").fetchone()[0]
        )
    return pages, judgments


_SIDE_FILES = ("", "-wal", "-shm", "-journal")  # SQLite's files beside a database


def _database_files(*paths: Path) -> set[Path]:
    """The database's files, named from the path it was opened by and the file it is."""
    return {path.with_name(path.name + suffix) for path in paths for suffix in _SIDE_FILES} | {
        Path(os.path.realpath(path.with_name(path.name + suffix)))
        for path in paths
        for suffix in _SIDE_FILES
    }


def _same_file(target: Path, source: Path) -> bool:
    """The destination is the database under another name (a hard link)."""
    try:
        return os.path.samefile(target, source)
    except OSError:
        return False


def _remove_partial(partial: Path) -> None:
    """Remove the copy this backup made and the journal SQLite may have left beside it;
    their names are this backup's own (``O_EXCL``), so nothing else is touched."""
    for path in (partial, *(partial.with_name(partial.name + s) for s in _SIDE_FILES[1:])):
        with contextlib.suppress(OSError):
            path.unlink(missing_ok=True)


def _cannot(destination: Path, error: OSError) -> str:
    return f"cannot back up to {destination}: {error.strerror or error}"

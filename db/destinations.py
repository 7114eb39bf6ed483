"""Where a file is about to be written: whether the folder it goes in is there, and
whether the file is a database that writing would destroy.

Shared by every writer that names a file the user chose (exports, reports, backups), so
a typo in a folder's name gets the same sentence everywhere and is never created."""

from __future__ import annotations

import os
import stat
from pathlib import Path

SQLITE_HEADER = b"SQLite format 3\x00"  # the first 16 bytes of every SQLite database file
SQLITE_SIDE_FILES = ("-wal", "-shm", "-journal")


def folder_problem(shown: str | os.PathLike[str], target: Path) -> str | None:
    """Why ``target`` (``shown`` as the user named it) cannot be written for want of its
    folder: ``the folder typo does not exist``, ``notes.txt is not a folder``, or the
    system's reason; ``None`` when the folder is there.  The folder is named as typed, or
    as resolved when a symbolic link leads elsewhere."""
    folder = target.parent
    typed = os.path.dirname(os.fspath(shown)) or "."
    named = typed if os.path.realpath(typed) == str(folder) else str(folder)
    try:
        is_folder = stat.S_ISDIR(os.stat(folder).st_mode)
    except FileNotFoundError:
        return f"the folder {named} does not exist"
    except NotADirectoryError:  # a file on the way to it
        is_folder = False
    except OSError as error:
        return str(error.strerror or error)
    return None if is_folder else f"{named} is not a folder"


def database_problem(target: Path) -> str | None:
    """Why the regular file ``target`` must not be written by an export or a report: ``it is a SQLite database`` (the database being read, mistyped as the
    output, was replaced by the export), or one of a database's ``-wal``, ``-shm`` or
    ``-journal`` files; ``None`` otherwise.  A file that cannot be read is left to the
    write itself to fail on."""
    database = target
    for suffix in SQLITE_SIDE_FILES:
        if target.name.endswith(suffix):
            database = target.with_name(target.name.removesuffix(suffix))
    try:
        with open(database, "rb") as handle:
            is_sqlite = handle.read(len(SQLITE_HEADER)) == SQLITE_HEADER
    except OSError:
        return None
    if not is_sqlite:
        return None
    if database == target:
        return "it is a SQLite database"
    return f"it is a file of the SQLite database {database.name}"

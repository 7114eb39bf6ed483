"""Where a file is about to be written: whether the folder it goes in is there.

Shared by every writer that names a file the user chose (exports, reports, backups), so
a typo in a folder's name gets the same sentence everywhere and is never created."""

from __future__ import annotations

import os
import stat
from pathlib import Path


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

"""The one way a command writes a file or folder the user named: exports in every format
and ``report --out``.

Nothing is made that the user did not name: the folder a file or folder goes in must
exist (:func:`_check_folder`), so a typo in its name is refused, never created.

Files (:func:`write_file`):

- ``-`` means standard output.
- A SQLite database, or one of its ``-wal``, ``-shm`` or ``-journal`` files, is
  refused (:func:`db.destinations.database_problem`): an export or report never
  replaces one, least of all the database it reads.
- A regular file (new or existing) is written to a temporary file beside it and
  renamed into place once complete, so a failure (a full disk, an interrupt)
  leaves the old file untouched, never half a file.  An existing file keeps its
  permission bits.
- A symbolic link is followed: the file it points to is replaced as above and the
  link stays a link.
- Anything else that already exists and is not a folder (a FIFO, a device such
  as ``/dev/full`` or ``/dev/null``, a socket) is written directly: replacing it
  with a regular file would destroy it.
- A folder is refused.

Folders (:func:`replace_folder`, the lm-eval and Hugging Face exports): the whole
folder is written beside its destination and renamed into place, so a failure leaves
the old folder (or nothing) behind, never half a folder.  The folder named is made, the
folders above it are not.  A symbolic link to a folder is followed, as for files.
Whether an existing folder may be replaced at all is the caller's rule
(``evaluator/exports/folder.py`` replaces only its own exports).

Failures raise :class:`WriteError` with one line naming the path and the reason.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import stat
import sys
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TextIO, TypeVar

from db.destinations import database_problem, folder_problem
from db.errors import VetbenchError

STDOUT = "-"
Result = TypeVar("Result")


class WriteError(VetbenchError, OSError):
    """A file could not be written; the message names it and says why."""


def is_stdout(path: str | os.PathLike[str]) -> bool:
    return os.fspath(path) == STDOUT


def write_file(
    path: str | os.PathLike[str],
    write: Callable[[TextIO], Result],
    *,
    encoding: str = "utf-8",
) -> Result:
    """Call ``write(handle)`` with a text handle for ``path`` and make the result appear at once.

    Returns what ``write`` returns.  A missing folder is refused (:func:`_check_folder`).
    See the module docstring for how each kind of destination is treated.
    """
    if is_stdout(path):
        return _write_stdout(write)
    target = Path(os.path.realpath(os.fspath(path)))  # a symlink's target; the link stays
    try:
        status = target.stat()
    except (FileNotFoundError, NotADirectoryError):  # its folder is refused below
        status = None
    except OSError as error:
        raise WriteError(_describe(path, error)) from None
    if status is not None and stat.S_ISDIR(status.st_mode):
        raise WriteError(f"cannot write {path}: it is a folder")
    if status is not None and not stat.S_ISREG(status.st_mode):
        return _write_in_place(path, target, write, encoding)
    if (problem := database_problem(target)) is not None:  # a -wal file may come and go
        raise WriteError(f"cannot write {os.fspath(path)}: {problem}; choose another file")
    if status is None:
        _check_folder(path, target)
    return _write_replacing(path, target, status, write, encoding)


def _write_stdout(write: Callable[[TextIO], Result]) -> Result:
    try:
        result = write(sys.stdout)
        sys.stdout.flush()
    except BrokenPipeError:
        # The reader went away (`| head`): it asked for no more, so stop quietly, as
        # command-line tools do and as click does for every other command (exit 1, no
        # message); what is left to flush goes nowhere instead of failing again at exit.
        with contextlib.suppress(OSError):
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        raise
    except OSError as error:
        raise WriteError(_describe("standard output", error)) from None
    return result


def _write_in_place(
    shown: str | os.PathLike[str],
    target: Path,
    write: Callable[[TextIO], Result],
    encoding: str,
) -> Result:
    try:
        with target.open("w", encoding=encoding, newline="") as handle:
            return write(handle)
    except OSError as error:
        raise WriteError(_describe(shown, error)) from None


def _write_replacing(
    shown: str | os.PathLike[str],
    target: Path,
    status: os.stat_result | None,
    write: Callable[[TextIO], Result],
    encoding: str,
) -> Result:
    try:
        descriptor, temporary_name = tempfile.mkstemp(
            prefix=f".{target.name}.", suffix=".partial", dir=target.parent
        )
    except OSError as error:
        raise WriteError(_describe(shown, error)) from None
    temporary = Path(temporary_name)
    try:
        # mkstemp makes the file 0600; keep an existing file's bits, else the usual umask.
        os.chmod(temporary, stat.S_IMODE(status.st_mode) if status else _default_mode())
        with open(descriptor, "w", encoding=encoding, newline="") as handle:
            result = write(handle)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, target)
    except OSError as error:
        temporary.unlink(missing_ok=True)
        raise WriteError(_describe(shown, error)) from None
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise
    return result


def replace_folder(path: str | os.PathLike[str], files: Mapping[str, str]) -> None:
    """Make ``path`` a folder holding exactly ``files`` (relative path -> UTF-8 text), at once.

    The folder is built beside ``path`` and renamed into place; an existing folder there
    is swapped out and removed only once the new one is in place (and put back if that
    rename fails).  The folder it goes in must exist (:func:`_check_folder`).
    """
    if is_stdout(path):
        raise WriteError("a folder cannot be written to standard output")
    target = Path(os.path.realpath(os.path.expanduser(os.fspath(path))))
    if target.exists() and not target.is_dir():
        raise WriteError(f"cannot write {os.fspath(path)}: it exists and is not a folder")
    _check_folder(path, target)
    try:
        staging = Path(
            tempfile.mkdtemp(prefix=f".{target.name}.", suffix=".partial", dir=target.parent)
        )
    except OSError as error:
        raise WriteError(_describe(path, error)) from None
    try:
        for relative, text in files.items():
            file = staging / relative
            file.parent.mkdir(parents=True, exist_ok=True)
            with file.open("w", encoding="utf-8", newline="") as handle:
                handle.write(text)
                handle.flush()
                os.fsync(handle.fileno())
        staging.chmod(_default_mode() | 0o111)  # mkdtemp makes it 0700
        _swap_in(staging, target)
    except OSError as error:
        shutil.rmtree(staging, ignore_errors=True)
        raise WriteError(_describe(path, error)) from None
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise


def _check_folder(shown: str | os.PathLike[str], target: Path) -> None:
    """Refuse (:class:`WriteError`) to write ``target`` (``shown`` as the user named it)
    unless the folder it goes in exists: ``cannot write typo/x.jsonl: the folder typo does
    not exist`` (:func:`db.destinations.folder_problem`)."""
    problem = folder_problem(shown, target)
    if problem is not None:
        raise WriteError(f"cannot write {os.fspath(shown)}: {problem}")


def _swap_in(staging: Path, target: Path) -> None:
    """Rename ``staging`` to ``target``; an existing ``target`` is retired first and removed
    after, or put back when the second rename fails."""
    if not target.exists():
        os.replace(staging, target)
        return
    retired = target.with_name(f".{target.name}.old-{os.getpid()}")
    os.replace(target, retired)
    try:
        os.replace(staging, target)
    except BaseException:
        os.replace(retired, target)
        raise
    shutil.rmtree(retired, ignore_errors=True)


def _default_mode() -> int:
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


def _describe(path: str | os.PathLike[str], error: OSError) -> str:
    return f"cannot write {os.fspath(path)}: {error.strerror or error}"

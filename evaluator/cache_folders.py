"""Folders of a cache built once and shared by every process: the demo model's converted
checkpoint, and the tests' tiny models.

A folder is built in a staging folder beside it and renamed into place with its marker
file written last, so an interrupted build leaves nothing that looks complete.  One
process builds at a time (a lock file, ``filelock``): another that wants the same folder
meanwhile waits for that copy instead of spending the same CPU beside it.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path

__all__ = ["build_once", "is_built"]


def is_built(target: Path, marker: str) -> bool:
    """Whether ``target`` holds a complete copy: its marker is written last."""
    return (target / marker).is_file()


def build_once(
    target: Path,
    build: Callable[[Path], None],
    *,
    locks: Path,
    marker: str,
    marker_text: str,
) -> Path:
    """``target``, made by ``build(staging)`` unless a complete copy is there already.

    ``locks`` holds the lock files (empty files that stay, so not beside the folders);
    ``marker`` is the file, holding ``marker_text``, that says a copy is complete.  An
    ``OSError`` (an unwritable cache, a full disk) reaches the caller unchanged, which
    knows what to tell its user; so does anything ``build`` raises, with the staging
    folder gone.
    """
    if is_built(target, marker):
        return target
    from filelock import FileLock

    target.parent.mkdir(parents=True, exist_ok=True)
    locks.mkdir(parents=True, exist_ok=True)
    with FileLock(locks / f"{target.name}.lock"):
        if is_built(target, marker):  # built while we waited
            return target
        if target.exists():  # left by a crash before the marker was written
            shutil.rmtree(target, ignore_errors=True)
        staging = Path(tempfile.mkdtemp(prefix=f".{target.name}-", dir=target.parent))
        try:
            staging.chmod(0o755)  # mkdtemp makes it private; a cache is an ordinary folder
            build(staging)
            (staging / marker).write_text(marker_text, encoding="utf-8")
            try:
                staging.rename(target)
            except OSError:
                if not is_built(target, marker):
                    raise
                # A builder without the lock (an older vetbench) finished first: as good.
        finally:
            shutil.rmtree(staging, ignore_errors=True)
    return target

"""What the folder exports (lm-eval task, Hugging Face dataset) share: selecting the items,
the summary they return, and writing a whole folder at once.

The folder is written whole or not at all by ``evaluator.exports.atomic_write``
(:func:`~evaluator.exports.atomic_write.replace_folder`).  An existing folder is
replaced only when an earlier vetbench export wrote it (it holds
``vetbench-export.json``) and holds nothing else: the manifest lists the files the
export wrote, and a file someone added since (notes, results) is named and the folder
left as it is, never deleted with the rest.  Any other non-empty folder is refused.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping, Sequence
from importlib import metadata
from pathlib import Path
from typing import Any

from db.engine import Database
from db.items import ItemSnapshot, iter_items
from db.models import utcnow
from evaluator.exports.atomic_write import replace_folder
from evaluator.exports.selection import ExportError, ExportSummary, Selection

MANIFEST_NAME = "vetbench-export.json"

__all__ = ["MANIFEST_NAME", "ExportError", "ExportSummary", "select_items", "write_folder"]


def select_items(database: Database, selection: Selection) -> tuple[Selection, list[ItemSnapshot]]:
    """The items ``selection`` asks for at their current revision, in creation order, and
    the selection as resolved; refuses an empty set.  With a release, the release's items
    exactly as frozen (the status is not asked)."""
    if selection.release is not None:
        return release_selection(
            database, selection.release, kinds=selection.kinds, sources=selection.sources
        )
    with database.session() as session:
        items = list(
            iter_items(
                session,
                statuses=selection.statuses,
                kinds=list(selection.kinds) or None,
                sources=list(selection.sources) or None,
            )
        )
    if not items:
        raise ExportError(
            f"no items to export ({selection.describe()}); "
            "`vetbench stats` shows what the database holds"
        )
    return selection, items


def release_selection(
    database: Database, release: str, *, kinds: Sequence[str], sources: Sequence[str]
) -> tuple[Selection, list[ItemSnapshot]]:
    """A release's items as frozen (of ``kinds`` and ``sources``: empty means any), and the
    selection naming the release; refuses an unknown release and an empty set."""
    from db.releases import ReleaseError, get_release, release_items

    with database.session() as session:
        try:
            info = get_release(session, release)
        except ReleaseError as error:
            raise ExportError(str(error)) from None
        items = release_items(session, release, kinds=kinds, sources=sources)
    selection = Selection(
        statuses=(),
        kinds=tuple(kinds),
        sources=tuple(sources),
        release=info.name,
        release_hash=info.hash,
    )
    if not items:
        raise ExportError(f"no items to export ({selection.describe()})")
    return selection, items


def count_kinds(items: list[ItemSnapshot]) -> dict[str, int]:
    return dict(sorted(Counter(item.kind.value for item in items).items()))


def _vetbench_version() -> str:
    try:
        return metadata.version("vetbench")
    except metadata.PackageNotFoundError:  # running from a source tree
        return "unknown"


def _check_destination(out_dir: Path) -> None:
    if out_dir.exists() and not out_dir.is_dir():
        raise ExportError(f"{out_dir}: exists and is not a folder")
    if not out_dir.is_dir() or not any(out_dir.iterdir()):
        return
    manifest = out_dir / MANIFEST_NAME
    if not manifest.is_file():
        raise ExportError(
            f"{out_dir}: folder is not empty and was not written by vetbench export; "
            "choose a new or empty folder"
        )
    added = _files_added_since(out_dir, manifest)
    if added:
        shown = ", ".join(added[:5]) + (f" and {len(added) - 5} more" if len(added) > 5 else "")
        raise ExportError(
            f"{out_dir}: holds files the earlier export did not write ({shown}); "
            "replacing the export would delete them: move them, or choose another folder"
        )


def _files_added_since(out_dir: Path, manifest: Path) -> list[str]:
    """The files under ``out_dir`` that the export whose ``manifest`` it holds did not
    write (relative paths, sorted); none for a manifest from before exports listed their
    files, which is replaced as it always was."""
    try:
        written = json.loads(manifest.read_text(encoding="utf-8")).get("files")
    except (OSError, ValueError, AttributeError):
        written = None
    if not isinstance(written, list):
        return []
    found = (
        path.relative_to(out_dir).as_posix()
        for path in out_dir.rglob("*")
        if not path.is_dir() or path.is_symlink()
    )
    return sorted(set(found) - {MANIFEST_NAME, *map(str, written)})


def write_folder(
    out_dir: Path,
    files: Mapping[str, str],
    *,
    export_format: str,
    selection: Selection,
    items: list[ItemSnapshot],
    extra_manifest: Mapping[str, Any] | None = None,
    tasks: Sequence[str] = (),
    command: str,
) -> ExportSummary:
    """Write ``files`` (relative path -> text), the export of ``items``, as the folder
    ``out_dir``, replacing an earlier export there; returns its summary, whose files are
    the relative paths written (the manifest included)."""
    resolved = Path(out_dir).expanduser().resolve()
    _check_destination(resolved)
    manifest = {
        "format": export_format,
        "vetbench_version": _vetbench_version(),
        "created_at": utcnow().isoformat(),
        "selection": selection.describe(),
        **selection.manifest(),
        "items": len(items),
        **(extra_manifest or {}),
        "files": sorted(files),  # what a later export may replace (the manifest aside)
    }
    all_files = {
        **files,
        MANIFEST_NAME: json.dumps(manifest, ensure_ascii=False, indent=2) + "\n",
    }
    replace_folder(out_dir, all_files)  # named as the user named it
    return ExportSummary(
        path=out_dir,
        format=export_format,
        count=len(items),
        by_kind=count_kinds(items),
        files=sorted(all_files),
        tasks=list(tasks),
        command=command,
    )

"""What the folder exports (lm-eval task, Hugging Face dataset) share: selecting the items,
the summary they return, and writing a whole folder at once.

The folder is written whole or not at all by ``evaluator.exports.atomic_write``
(:func:`~evaluator.exports.atomic_write.replace_folder`).  An existing folder is
replaced only when an earlier vetbench export wrote it (it holds
``vetbench-export.json``); any other non-empty folder is refused.
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


def _names(value: str | Sequence[str] | None) -> tuple[str, ...]:
    if not value:
        return ()
    return (value,) if isinstance(value, str) else tuple(value)


def select_items(
    database: Database,
    *,
    status: str | None,
    kind: str | Sequence[str] | None,
    source: str | Sequence[str] | None,
    release: str | None = None,
) -> tuple[Selection, list[ItemSnapshot]]:
    """The items to export at their current revision, in creation order; refuses an empty set.

    ``kind`` and ``source`` take one name or several; ``status`` None or ``all`` means any.
    With ``release``, the release's items exactly as frozen (``status`` is not asked).
    """
    if release is not None:
        return release_selection(database, release, kinds=_names(kind), sources=_names(source))
    selection = Selection(status=status or "all", kinds=_names(kind), sources=_names(source))
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
        status="release",
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
    if out_dir.is_dir() and any(out_dir.iterdir()) and not (out_dir / MANIFEST_NAME).is_file():
        raise ExportError(
            f"{out_dir}: folder is not empty and was not written by vetbench export; "
            "choose a new or empty folder"
        )


def write_folder(
    out_dir: Path,
    files: Mapping[str, str],
    *,
    export_format: str,
    selection: Selection,
    extra_manifest: Mapping[str, Any] | None = None,
) -> list[str]:
    """Write ``files`` (relative path -> text) as the folder ``out_dir``, replacing an earlier
    export there; returns the relative paths written (the manifest included)."""
    out_dir = Path(out_dir).expanduser().resolve()
    _check_destination(out_dir)
    manifest = {
        "format": export_format,
        "vetbench_version": _vetbench_version(),
        "created_at": utcnow().isoformat(),
        "selection": selection.describe(),
        **selection.manifest(),
        **(extra_manifest or {}),
    }
    all_files = {
        **files,
        MANIFEST_NAME: json.dumps(manifest, ensure_ascii=False, indent=2) + "\n",
    }
    replace_folder(out_dir, all_files)
    return sorted(all_files)

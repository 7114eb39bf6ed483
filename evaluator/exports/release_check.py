"""``vetbench release verify --export PATH``: does an export hold exactly its release's items?

An export of a release names it: a folder in its manifest (``vetbench-export.json``:
``release``, ``release_hash``), a file in every record (``db.formats.base.STAMP_FIELDS``).
Each exported item's content hash is recomputed from what the export holds and compared
with the one the release recorded, and the export's items with the release's items of the
same kinds and sources: one missing, added or altered is a difference.

What each export holds of an item: the item files, the Hugging Face rows and the JSONL
history hold its text and key (EconLogicQA CSV and CFLUE JSON carry no language: the
release's is taken); an lm-eval task holds the built prompt, not the item's own text, so
there its id, revision, kind, language and key are compared.  EconLogicQA CSV writes an
empty explanation and none alike, as an empty cell: such a cell matches either.
"""

from __future__ import annotations

import csv
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from db.answers import parse_answer
from db.engine import Database
from db.formats import detect_format
from db.formats.base import (
    STAMP_ITEM,
    STAMP_RELEASE,
    STAMP_RELEASE_HASH,
    open_input,
    read_lines,
    read_text,
)
from db.formats.cflue import TASK_KINDS, parse_choices
from db.formats.econlogicqa import ANSWER, EXPLANATION, QUESTION
from db.json_input import JsonInputError, loads
from db.json_types import JsonObject, attributes_json
from db.releases import (
    VERIFICATION_KEYS,
    ReleaseError,
    ReleaseMember,
    content_hash,
    get_release,
    item_set_hash,
    release_items,
    release_members,
)
from db.vocabulary import ItemKind
from db.words import agreeing, counted
from evaluator.exports.folder import MANIFEST_NAME

__all__ = ["ExportVerification", "verify_export"]


@dataclass(frozen=True)
class _Exported:
    """One item as an export holds it."""

    item_id: str
    revision: int | None
    kind: str
    language: str | None
    prompt: str | None  # None: the export holds no item text (lm-eval)
    choices: dict[str, str]
    key: str
    explanation: str | None
    # EconLogicQA CSV writes no explanation and an empty one alike, as an empty cell.
    empty_cell: bool = False

    @property
    def explanations(self) -> tuple[str | None, ...]:
        """The explanations the export may stand for."""
        return (None, "") if self.empty_cell else (self.explanation,)

    @classmethod
    def from_row(
        cls,
        row: dict[str, Any],
        prompt: str | None,
        choices: dict[str, str],
        explanation: str | None,
    ) -> _Exported:
        """An item from a Hugging Face row or an lm-eval doc: both hold its id, revision,
        kind, language and key under the same names."""
        return cls(
            item_id=row["id"],
            revision=row["revision"],
            kind=row["kind"],
            language=row["language"],
            prompt=prompt,
            choices=choices,
            key=row["answer"],
            explanation=explanation,
        )


@dataclass(frozen=True)
class ExportVerification:
    name: str
    path: str
    stored_hash: str
    recomputed_hash: str
    items: int
    differences: list[str]

    @property
    def ok(self) -> bool:
        return not self.differences

    def to_json(self) -> JsonObject:
        names = ("name", "path", "ok", "stored_hash", "recomputed_hash", "items", "differences")
        return attributes_json(self, *names, renamed={**VERIFICATION_KEYS, "path": "export"})


class _Unreadable(ReleaseError):
    pass


def _lines(path: Path) -> Iterator[str]:
    """The file's lines as the importer reads them: split at line ends only, never at the
    U+2028, U+2029 or U+0085 that JSON and CSV writers leave in text."""
    with open_input(path) as source:
        yield from read_lines(source)


def _json_lines(path: Path) -> Iterator[tuple[int, Any]]:
    for number, line in enumerate(_lines(path), start=1):
        if line.strip():
            try:
                yield number, loads(line)
            except JsonInputError as error:
                raise _Unreadable(f"{path}: line {number}: not JSON ({error.msg})") from None


def _whole_json(path: Path) -> Any:
    """A file that is one JSON value (a manifest, a CFLUE array)."""
    try:
        return loads(read_text(path))
    except JsonInputError as error:
        where = f"{path}: line {error.lineno}" if error.lineno is not None else str(path)
        raise _Unreadable(f"{where}: not JSON ({error.msg})") from None


def _folder(path: Path) -> tuple[dict[str, str], list[_Exported]]:
    manifest_path = path / MANIFEST_NAME
    if not manifest_path.is_file():
        raise _Unreadable(f"{path}: no {MANIFEST_NAME}; not a folder vetbench exported")
    manifest = _whole_json(manifest_path)
    stamp = {
        STAMP_RELEASE: str(manifest.get("release") or ""),
        STAMP_RELEASE_HASH: str(manifest.get("release_hash") or ""),
    }
    items: list[_Exported] = []
    if manifest.get("format") == "hf":
        for _, row in _json_lines(path / "data" / "test.jsonl"):
            choices = dict(zip(row["labels"], row["choices"], strict=True))
            items.append(_Exported.from_row(row, row["question"], choices, row["explanation"]))
    elif manifest.get("format") == "lm-eval":
        for task in manifest.get("tasks", []):
            for _, doc in _json_lines(path / "data" / f"{task}.jsonl"):
                items.append(_Exported.from_row(doc, None, dict.fromkeys(doc["labels"], ""), None))
    else:
        raise _Unreadable(f"{path}: a folder of format {manifest.get('format')!r} is not known")
    return stamp, items


def _file(path: Path) -> tuple[dict[str, str], list[_Exported]]:
    """The stamp and items of an item file (the stamp of its first record; each record's
    own stamp must agree)."""
    format_name = detect_format(path)
    stamps: list[tuple[str, dict[str, str]]] = []
    items: list[_Exported] = []

    def stamp_of(where: str, record: dict[str, Any]) -> None:
        fields = (STAMP_RELEASE, STAMP_RELEASE_HASH)
        stamps.append((where, {name: str(record.get(name) or "") for name in fields}))

    if format_name == "jsonl":
        for number, record in _json_lines(path):
            stamp_of(f"line {number}", record)
            current = next(
                r for r in record["revisions"] if r["number"] == record["current_revision"]
            )
            items.append(
                _Exported(
                    record["id"],
                    current["number"],
                    record["kind"],
                    record["language"],
                    current["prompt"],
                    dict(current["choices"]),
                    current["key"],
                    current["explanation"],
                )
            )
    elif format_name == "cflue":
        for index, record in enumerate(_whole_json(path), start=1):
            stamp_of(f"record {index}", record)
            items.append(
                _Exported(
                    str(record.get(STAMP_ITEM) or ""),
                    None,
                    TASK_KINDS[record["task"]].value,
                    None,
                    record["question"],
                    parse_choices(record["choices"]),
                    record["answer"],
                    record.get("analysis"),
                )
            )
    else:
        rows = csv.DictReader(_lines(path))
        for line, row in enumerate(rows, start=2):
            stamp_of(f"line {line}", row)
            choices = {name: row[name] for name in row if len(name) == 1 and row[name]}
            items.append(
                _Exported(
                    str(row.get(STAMP_ITEM) or ""),
                    None,
                    ItemKind.ORDERING.value,
                    None,
                    row[QUESTION],
                    choices,
                    parse_answer(ItemKind.ORDERING, row[ANSWER], list(choices)),
                    row.get(EXPLANATION) or None,
                    empty_cell=not row.get(EXPLANATION),
                )
            )
    if not stamps:
        raise _Unreadable(f"{path}: holds no items")
    first = stamps[0][1]
    for where, stamp in stamps:
        if stamp != first:
            raise _Unreadable(f"{path}: {where} names another release than the first record")
    return first, items


def verify_export(
    db: Database, path: Path, *, expected_release: str | None = None
) -> ExportVerification:
    """Check the export at ``path`` against the release it names (and ``expected_release``,
    when given).  A :class:`~db.releases.ReleaseError` when it names none or cannot be read."""
    try:
        stamp, exported = _folder(path) if path.is_dir() else _file(path)
    except (KeyError, TypeError, ValueError, StopIteration) as error:
        if isinstance(error, ReleaseError):
            raise
        raise _Unreadable(f"{path}: not an export vetbench wrote ({error!r})") from None
    name = stamp[STAMP_RELEASE]
    if not name:
        raise ReleaseError(f"{path}: names no release; export with `--release NAME`")
    if expected_release is not None and expected_release != name:
        raise ReleaseError(f"{path}: is an export of release {name}, not {expected_release}")
    with db.session() as session:
        release = get_release(session, name)
        members = {member.item_id: member for member in release_members(session, name)}
        keys = {item.id: item.key for item in release_items(session, name)}
    differences: list[str] = []
    if stamp[STAMP_RELEASE_HASH] != release.hash:
        differences.append(
            f"the export names hash {stamp[STAMP_RELEASE_HASH][:12]}, "
            f"the release's is {release.hash[:12]}"
        )
    hashes: list[tuple[str, str]] = []
    seen: set[str] = set()
    for item in exported:
        if item.item_id in seen:
            continue  # lm-eval repeats items in its score-mode tasks' files, not here
        seen.add(item.item_id)
        member = members.get(item.item_id)
        if member is None:
            differences.append(f"{item.item_id or '(no id)'}: not in release {name}")
            continue
        problem = _compare(item, member, keys[item.item_id])
        if problem:
            differences.append(f"{item.item_id}: {problem}")
        hashes.append((item.item_id, member.content_hash if not problem else "differs"))
    kinds = {item.kind for item in exported}
    sources = {members[i].source for i in seen if i in members}
    missing = [
        m.item_id
        for m in members.values()
        if m.item_id not in seen and m.kind in kinds and m.source in sources
    ]
    if missing:
        shown = ", ".join(missing[:5]) + (", ..." if len(missing) > 5 else "")
        differences.append(
            f"{counted(len(missing), 'item')} of the release's {', '.join(sorted(kinds))} items "
            f"from {', '.join(sorted(sources))} {agreeing(len(missing), 'is', 'are')} missing: "
            f"{shown}"
        )
    return ExportVerification(
        name=name,
        path=str(path),
        stored_hash=release.hash,
        recomputed_hash=item_set_hash(hashes),
        items=len(seen),
        differences=differences,
    )


def _compare(item: _Exported, member: ReleaseMember, key: str) -> str | None:
    """Why the exported item is not the release's, or None."""
    if item.revision is not None and item.revision != member.revision:
        return f"revision {item.revision}, the release froze revision {member.revision}"
    if item.kind != member.kind:
        return f"kind {item.kind}, the release's is {member.kind}"
    language = item.language or member.language
    if language != member.language:
        return f"language {language}, the release's is {member.language}"
    if item.prompt is None:  # lm-eval: the key is what can be compared
        return None if item.key == key else f"key {item.key}, the release's is {key}"
    digests = [
        content_hash(
            kind=item.kind,
            language=language,
            prompt=item.prompt,
            choices=item.choices,
            key=item.key,
            explanation=explanation,
        )
        for explanation in item.explanations
    ]
    if member.content_hash not in digests:
        return f"its text or key differs from the release's (content hash {digests[0][:12]})"
    return None

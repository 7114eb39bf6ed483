"""``vetbench release verify --export PATH``: does an export hold exactly its release's items?

An export of a release names it: a folder in its manifest (``vetbench-export.json``:
``release``, ``release_hash``), a file in every record (``db.formats.base.STAMP_FIELDS``).
Each exported item's content hash is recomputed from what the export holds and compared
with the one the release recorded, and the export's items with the release's items of the
same kinds and sources: one missing, added or altered is a difference.

What each export holds of an item: the item files, the Hugging Face rows and the JSONL
history hold its text and key (EconLogicQA CSV and CFLUE JSON carry no language: the
release's is taken); an lm-eval task holds the built prompt, not the item's own text, so
there its id, revision, kind, language, option labels and key are compared, in the
generation tasks and again in the score-mode tasks (lm-eval's ``multiple_choice``: each item
of the part with few enough candidates once, its target the key).  What a Hugging Face row or
an lm-eval document states of its key besides ``answer`` (``answer_text``, a score-mode
target) must state that key.  EconLogicQA CSV writes an empty explanation and none alike,
as an empty cell: such a cell matches either.
"""

from __future__ import annotations

import csv
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any, TypeVar

from db.answers import format_answer, parse_answer
from db.engine import Database
from db.errors import VetbenchError
from db.formats import detect_format
from db.formats.base import (
    STAMP_ITEM,
    STAMP_RELEASE,
    STAMP_RELEASE_HASH,
    STAMP_SELECTION,
    FormatError,
    open_input,
    read_lines,
    read_text,
)
from db.formats.cflue import TASK_KINDS, parse_choices
from db.formats.econlogicqa import ANSWER, EXPLANATION, QUESTION
from db.items import ItemSnapshot
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
from evaluator.kinds import kind_spec

__all__ = ["ExportVerification", "verify_export"]

_T = TypeVar("_T")


@dataclass(frozen=True)
class _Exported:
    """One item as an export holds it, and where (``line 3``, ``data/test.jsonl: line 3``)."""

    where: str
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
    # Why a field that states the key again (``answer_text``, a score-mode target) does
    # not state ``key``; None when none disagrees.
    restated: str | None = None

    @property
    def explanations(self) -> tuple[str | None, ...]:
        """The explanations the export may stand for."""
        return (None, "") if self.empty_cell else (self.explanation,)

    @classmethod
    def from_row(
        cls,
        where: str,
        row: dict[str, Any],
        prompt: str | None,
        choices: dict[str, str],
        explanation: str | None,
        *,
        scored: bool = False,
    ) -> _Exported:
        """An item from a Hugging Face row or an lm-eval doc: both hold its id, revision,
        kind, language and key under the same names, and the key written out again."""
        return cls(
            where=where,
            item_id=row["id"],
            revision=row["revision"],
            kind=row["kind"],
            language=row["language"],
            prompt=prompt,
            choices=choices,
            key=row["answer"],
            explanation=explanation,
            restated=_restated(row, scored=scored),
        )


def _restated(row: dict[str, Any], *, scored: bool) -> str | None:
    """Why a Hugging Face row's or an lm-eval doc's other statements of its key disagree
    with its ``answer``, or None: ``answer_text`` (the key as people read it, and lm-eval's
    target in a generation task) and, in a score-mode task, its candidates (every answer
    its options allow, as ``vetbench eval --mode score`` ranks them) and the one of them
    lm-eval counts right, ``target_index`` (``scored``: a document of a score-mode task)."""
    kind, key = row["kind"], row["answer"]
    if row["answer_text"] != format_answer(kind, key):
        return f"its answer_text {row['answer_text']!r} is not its answer {key} written out"
    if not scored:
        return None
    candidates = kind_spec(kind).score_candidates(row["labels"]) or []
    texts = [format_answer(kind, candidate) for candidate in candidates]
    if row["candidates"] != candidates or row["choice_texts"] != texts:
        return "its candidates are not every answer its options allow"
    target = candidates.index(key) if key in candidates else None
    if row["target_index"] != target:
        return f"its target_index {row['target_index']!r} is not its answer's ({target!r})"
    return None


@dataclass(frozen=True)
class _Claim:
    """What an export says it holds: a release (name, hash), the part of it selected
    (``None``: not recorded, an export made before vetbench recorded it; empty: every
    kind or source), and, for a folder, how many items its manifest counts."""

    release: str
    release_hash: str
    kinds: tuple[str, ...] | None = None
    sources: tuple[str, ...] | None = None
    items: int | None = None


@dataclass(frozen=True)
class ExportVerification:
    name: str
    path: str
    stored_hash: str
    recomputed_hash: str
    items: int
    differences: list[str]
    release_items: int = 0
    # the part of the release the export holds ("the ordering items"); None: all of it
    part: str | None = None
    # the part's hash, computed from the release: the recomputed hash when it matches
    expected_hash: str = ""
    # whether the export records the part selected (exports before it did not)
    selection_recorded: bool = True

    @property
    def ok(self) -> bool:
        return not self.differences

    @property
    def subset(self) -> bool:
        return self.part is not None

    def to_json(self) -> JsonObject:
        names = (
            "name",
            "path",
            "ok",
            "stored_hash",
            "recomputed_hash",
            "items",
            "differences",
            "subset",
            "part",
            "release_items",
            "expected_hash",
            "selection_recorded",
        )
        return attributes_json(self, *names, renamed={**VERIFICATION_KEYS, "path": "export"})

    def verdict(self) -> str:
        """The last line ``release verify --export`` prints (after the path)."""
        if not self.ok:
            return mismatch(self.name, self.items, self.recomputed_hash, self.stored_hash)
        if self.part is None:
            return (
                f"matches release {self.name}: {counted(self.items, 'item')}, "
                f"hash {self.recomputed_hash}"
            )
        return (
            f"matches {self.part} of release {self.name}: {self.items} of its "
            f"{counted(self.release_items, 'item')}, hash {self.recomputed_hash} "
            f"(the release's is {self.stored_hash[:12]})"
        )

    def notes(self) -> list[str]:
        """What the verdict rests on, when it is not plain."""
        if self.ok and self.subset and not self.selection_recorded:
            return [
                "note: the export does not record which kinds and sources were selected "
                "(it was made before vetbench recorded them): the kinds and sources it "
                "holds are taken as its selection"
            ]
        return []


def mismatch(name: str, items: int, recomputed: str, stored: str) -> str:
    """``does NOT match release v1 (hash ac83472bd264): its 37 items hash to b11f...``: the
    hash said after the count is what was found, the release's apart, so that neither
    reads as the other."""
    return (
        f"does NOT match release {name} (hash {stored[:12]}): its "
        f"{counted(items, 'item')} {agreeing(items, 'hashes', 'hash')} to {recomputed}"
    )


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


def _read(where: str, build: Callable[[], _T]) -> _T:
    """``build()``, the reading of one record at ``where`` (``file: line 3``); a record
    vetbench did not write (a field missing, or of the wrong type) is refused in words."""
    try:
        return build()
    except KeyError as error:
        field = error.args[0] if error.args else "?"
        raise _Unreadable(f"{where}: has no {field} field; not a record vetbench wrote") from None
    except StopIteration:
        raise _Unreadable(
            f"{where}: its current_revision is none of its revisions; not a record vetbench wrote"
        ) from None
    except VetbenchError as error:
        raise _Unreadable(f"{where}: {error}; not a record vetbench wrote") from None
    except (TypeError, ValueError, AttributeError):
        raise _Unreadable(
            f"{where}: a field is missing or holds a value of the wrong type; "
            "not a record vetbench wrote"
        ) from None


def _names(value: object, where: str) -> tuple[str, ...] | None:
    """A recorded list of kinds or sources (None: not recorded)."""
    if value is None:
        return None
    if not isinstance(value, list) or not all(isinstance(name, str) for name in value):
        raise _Unreadable(f"{where}: the selection recorded is not a list of names")
    return tuple(value)


# What an export holds: its claim, its items, and an lm-eval task's score-mode copies of
# them (None for the formats that have none).
_Contents = tuple[_Claim, list[_Exported], list[_Exported] | None]


def _folder(path: Path) -> _Contents:
    manifest_path = path / MANIFEST_NAME
    if not manifest_path.is_file():
        raise _Unreadable(f"{path}: no {MANIFEST_NAME}; not a folder vetbench exported")
    manifest = _whole_json(manifest_path)
    if not isinstance(manifest, dict):
        raise _Unreadable(f"{manifest_path}: not a JSON object; not a manifest vetbench wrote")
    count = manifest.get("items")
    claim = _Claim(
        release=str(manifest.get("release") or ""),
        release_hash=str(manifest.get("release_hash") or ""),
        kinds=_names(manifest.get("kinds"), f"{manifest_path}: kinds"),
        sources=_names(manifest.get("sources"), f"{manifest_path}: sources"),
        items=count if isinstance(count, int) else None,
    )
    if manifest.get("format") == "hf":
        items = []
        for number, row in _json_lines(path / HF_DATA):
            where = f"{HF_DATA}: line {number}"
            items.append(_read(f"{path}: {where}", partial(_hf_row, where, row)))
        return claim, items, None
    if manifest.get("format") == "lm-eval":
        tasks, score_tasks = manifest.get("tasks", []), manifest.get("score_tasks", [])
        return claim, _lm_eval_docs(path, tasks), _lm_eval_docs(path, score_tasks, scored=True)
    raise _Unreadable(f"{path}: a folder of format {manifest.get('format')!r} is not known")


def _lm_eval_docs(path: Path, tasks: list[str], *, scored: bool = False) -> list[_Exported]:
    """The items of an lm-eval export's ``tasks`` (``scored``: its score-mode tasks), from
    their data files."""
    items = []
    for task in tasks:
        data = f"data/{task}.jsonl"
        for number, doc in _json_lines(path / data):
            where = f"{data}: line {number}"
            build = partial(_lm_eval_doc, where, doc, scored=scored)
            items.append(_read(f"{path}: {where}", build))
    return items


def _hf_row(where: str, row: dict[str, Any]) -> _Exported:
    choices = dict(zip(row["labels"], row["choices"], strict=True))
    return _Exported.from_row(where, row, row["question"], choices, row["explanation"])


def _lm_eval_doc(where: str, doc: dict[str, Any], *, scored: bool) -> _Exported:
    labels = dict.fromkeys(doc["labels"], "")
    return _Exported.from_row(where, doc, None, labels, None, scored=scored)


def _jsonl_record(where: str, record: dict[str, Any]) -> _Exported:
    current = next(r for r in record["revisions"] if r["number"] == record["current_revision"])
    return _Exported(
        where,
        record["id"],
        current["number"],
        record["kind"],
        record["language"],
        current["prompt"],
        dict(current["choices"]),
        current["key"],
        current["explanation"],
    )


def _cflue_record(where: str, record: dict[str, Any]) -> _Exported:
    return _Exported(
        where,
        str(record.get(STAMP_ITEM) or ""),
        None,
        TASK_KINDS[record["task"]].value,
        None,
        record["question"],
        parse_choices(record["choices"]),
        record["answer"],
        record.get("analysis"),
    )


def _csv_row(where: str, row: dict[str, Any]) -> _Exported:
    choices = {name: row[name] for name in row if len(name) == 1 and row[name]}
    return _Exported(
        where,
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


HF_DATA = "data/test.jsonl"
_STAMPED = (STAMP_RELEASE, STAMP_RELEASE_HASH, STAMP_SELECTION)


def _file(path: Path) -> _Contents:
    """The claim and items of an item file (the stamp of its first record; each record's
    own stamp must agree)."""
    format_name = detect_format(path)
    stamps: list[tuple[str, dict[str, str]]] = []
    items: list[_Exported] = []
    records: Iterator[tuple[str, Any]]
    build: Callable[[str, Any], _Exported]
    if format_name == "jsonl":
        records = ((f"line {number}", record) for number, record in _json_lines(path))
        build = _jsonl_record
    elif format_name == "cflue":
        whole = _whole_json(path)
        if not isinstance(whole, list):
            raise _Unreadable(f"{path}: not a JSON array of records; not a file vetbench wrote")
        records = ((f"record {index}", record) for index, record in enumerate(whole, start=1))
        build = _cflue_record
    else:
        rows = csv.DictReader(_lines(path))
        records = ((f"line {line}", row) for line, row in enumerate(rows, start=2))
        build = _csv_row
    for where, record in records:
        place = f"{path}: {where}"
        if not isinstance(record, dict):
            raise _Unreadable(f"{place}: not a JSON object; not a record vetbench wrote")
        stamps.append((where, {name: str(record.get(name) or "") for name in _STAMPED}))
        items.append(_read(place, partial(build, where, record)))
    if not stamps:
        raise _Unreadable(f"{path}: holds no items")
    first = stamps[0][1]
    for where, stamp in stamps:
        if stamp != first:
            raise _Unreadable(
                f"{path}: {where} names another release or selection than the first record"
            )
    kinds = sources = None
    if first[STAMP_SELECTION]:
        where = f"{path}: line 1 or record 1: {STAMP_SELECTION}"
        try:
            chosen = loads(first[STAMP_SELECTION])
        except JsonInputError:
            raise _Unreadable(f"{where}: not JSON") from None
        if not isinstance(chosen, dict):
            raise _Unreadable(f"{where}: not a JSON object")
        kinds = _names(chosen.get("kinds"), where) or ()
        sources = _names(chosen.get("sources"), where) or ()
    claim = _Claim(first[STAMP_RELEASE], first[STAMP_RELEASE_HASH], kinds, sources)
    return claim, items, None


def _part(kinds: tuple[str, ...], sources: tuple[str, ...]) -> str:
    """``the ordering items``, ``the items from econ``, ``the single, multi items from a, b``."""
    text = f"the {', '.join(kinds)} items" if kinds else "the items"
    return f"{text} from {', '.join(sources)}" if sources else text


def verify_export(
    db: Database, path: Path, *, expected_release: str | None = None
) -> ExportVerification:
    """Check the export at ``path`` against the release it names (and ``expected_release``,
    when given), and against the part of it the export says it holds: the kinds and
    sources selected (recorded in new exports; in older ones, those the export holds) and
    a folder's item count.  A :class:`~db.releases.ReleaseError` when it names none or
    cannot be read."""
    try:
        claim, exported, score_copies = _folder(path) if path.is_dir() else _file(path)
    except FormatError as error:
        raise _Unreadable(f"{error}; not an export vetbench wrote") from None
    name = claim.release
    if not name:
        raise ReleaseError(f"{path}: names no release; export with `--release NAME`")
    if expected_release is not None and expected_release != name:
        raise ReleaseError(f"{path}: is an export of release {name}, not {expected_release}")
    with db.session() as session:
        release = get_release(session, name)
        members = {member.item_id: member for member in release_members(session, name)}
        frozen = {item.id: item for item in release_items(session, name)}
    differences: list[str] = []
    if claim.release_hash != release.hash:
        differences.append(
            f"the export names hash {claim.release_hash[:12]}, the release's is {release.hash[:12]}"
        )
    hashes: dict[str, str] = {}
    compare = partial(_compare_each, path, name, members, frozen, differences, hashes)
    first = compare(exported)
    held = [members[i] for i in first if i in members]
    recorded = claim.kinds is not None and claim.sources is not None
    if recorded:
        kinds, sources = claim.kinds or (), claim.sources or ()
    else:  # an export from before the selection was recorded: what it holds
        kinds = tuple(sorted({m.kind for m in held}))
        sources = tuple(sorted({m.source for m in held}))
    expected = [
        m
        for m in members.values()
        if (not kinds or m.kind in kinds) and (not sources or m.source in sources)
    ]
    # lm-eval's score-mode tasks hold each item again, but one with too many candidates
    scored = compare(score_copies or [])
    for item in [*first.values(), *scored.values()]:
        member = members.get(item.item_id)
        if recorded and member is not None and member not in expected:
            differences.append(
                f"{path}: {item.where}: {item.item_id}: a {member.kind} item from "
                f"{member.source}, outside what the export says it holds ({_part(kinds, sources)})"
            )
    # the part named by what narrows it: all the release's kinds (or sources) go unsaid
    if {m.kind for m in members.values()} <= set(kinds):
        kinds = ()
    if {m.source for m in members.values()} <= set(sources):
        sources = ()
    part = _part(kinds, sources) if len(expected) < len(members) else None
    missing = [m.item_id for m in expected if m.item_id not in first]
    if missing:
        differences.append(_missing(missing, part, name, ""))
    if score_copies is not None:
        unscored = [
            m.item_id
            for m in expected
            if m.item_id not in scored
            and kind_spec(m.kind).score_candidates(frozen[m.item_id].labels) is not None
        ]
        if unscored:
            differences.append(_missing(unscored, part, name, " from the score-mode tasks"))
    if claim.items is not None and claim.items != len(first):
        differences.append(
            f"{path / MANIFEST_NAME}: says the export holds {counted(claim.items, 'item')}, "
            f"its data holds {len(first)}"
        )
    return ExportVerification(
        name=name,
        path=str(path),
        stored_hash=release.hash,
        recomputed_hash=item_set_hash(hashes.items()),
        items=len(first),
        differences=differences,
        release_items=len(members),
        part=part,
        expected_hash=item_set_hash((m.item_id, m.content_hash) for m in expected),
        selection_recorded=recorded,
    )


def _compare_each(
    path: Path,
    name: str,
    members: dict[str, ReleaseMember],
    frozen: dict[str, ItemSnapshot],
    differences: list[str],
    hashes: dict[str, str],
    exported: list[_Exported],
) -> dict[str, _Exported]:
    """Each exported item compared with release ``name``'s: ``differences`` gets what
    differs (an item given twice, one not in the release, one altered), ``hashes`` each
    item's content hash (``differs`` for an altered one).  The items by id, each the first
    given."""
    first: dict[str, _Exported] = {}
    for item in exported:
        label = item.item_id or "(no id)"
        earlier = first.get(item.item_id)
        if earlier is not None:
            differences.append(
                f"{path}: {item.where}: {label}: appears again (first at {earlier.where}); "
                "an export holds each item once"
            )
        else:
            first[item.item_id] = item
        member = members.get(item.item_id)
        if member is None:
            differences.append(f"{path}: {item.where}: {label}: not in release {name}")
            continue
        problem = _compare(item, member, frozen[item.item_id]) or item.restated
        if problem:
            differences.append(f"{path}: {item.where}: {label}: {problem}")
        if problem or hashes.get(item.item_id, member.content_hash) != member.content_hash:
            hashes[item.item_id] = "differs"
        else:
            hashes[item.item_id] = member.content_hash
    return first


def _missing(missing: list[str], part: str | None, name: str, where: str) -> str:
    """``2 items of release v1 are missing: a:1, a:2`` (``where`` after ``missing``)."""
    shown = ", ".join(missing[:5]) + (", ..." if len(missing) > 5 else "")
    of = f"{len(missing)} of {part}" if part else counted(len(missing), "item")
    return f"{of} of release {name} {agreeing(len(missing), 'is', 'are')} missing{where}: {shown}"


def _compare(item: _Exported, member: ReleaseMember, frozen: ItemSnapshot) -> str | None:
    """Why the exported item is not the release's, or None."""
    if item.revision is not None and item.revision != member.revision:
        return f"revision {item.revision}, the release froze revision {member.revision}"
    if item.kind != member.kind:
        return f"kind {item.kind}, the release's is {member.kind}"
    language = item.language or member.language
    if language != member.language:
        return f"language {language}, the release's is {member.language}"
    if item.prompt is None:  # lm-eval: the options and the key are what can be compared
        if list(item.choices) != frozen.labels:
            return (
                f"options {', '.join(item.choices)}, the release's are {', '.join(frozen.labels)}"
            )
        return None if item.key == frozen.key else f"key {item.key}, the release's is {frozen.key}"
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

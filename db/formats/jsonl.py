"""vetbench JSONL, the native format: one item per line, with every field and every revision.

A line looks like (wrapped here)::

    {"id": "econ:3", "kind": "ordering", "source": "econ", "source_ref": "line 4",
     "language": "en", "status": "approved", "meta": {}, "current_revision": 2,
     "suspected_duplicate_of": null, "duplicate_similarity": null,
     "created_at": "2026-11-29T14:00:00+00:00",
     "revisions": [{"number": 1, "prompt": "...", "choices": {"A": "...", ...},
                    "key": "DACB", "explanation": null, "author": "import",
                    "change_note": "import", "provenance": {...}, "created_at": "..."}, ...]}

Writing what was read gives back the same lines.  A hand-written line may leave out
everything but ``kind`` and the text: a missing ``revisions`` list means the
text fields (``prompt``, ``choices``, ``key``, ``explanation``) sit on the item itself;
there an empty explanation is none, as in EconLogicQA CSV
(``db.formats.base.stated_explanation``).
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import TextIO

from db import json_input
from db.answers import LETTERS
from db.formats import cflue, econlogicqa
from db.formats.base import (
    ARTICLES_NOT_ITEMS,
    STAMP_FIELDS,
    FormatError,
    InputFile,
    NativeItem,
    ParsedRecord,
    Place,
    RevisionRecord,
    is_article,
    read_lines,
    stamp_fields,
    stated_explanation,
)
from db.json_types import JsonObject
from db.validation import ItemDraft, Problem, kind_problem
from db.vocabulary import ItemKind, ItemStatus

NAME = "jsonl"
KINDS = frozenset(ItemKind)
TEXT_FIELDS = ("prompt", "choices", "key", "explanation")


@dataclass(frozen=True)
class FullItem:
    """An item with its whole history, as the exporter hands it to :func:`write`."""

    id: str
    kind: str
    source: str
    source_ref: str
    language: str
    status: str
    meta: JsonObject
    current_revision: int
    suspected_duplicate_of: str | None
    duplicate_similarity: float | None
    created_at: datetime
    revisions: list[RevisionRecord]


def format_time(value: datetime | None) -> str | None:
    """ISO 8601 in UTC; naive times (SQLite hands those back) are taken as UTC."""
    if value is None:
        return None
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    return value.astimezone(UTC).isoformat()


def _parse_time(value: object, name: str, problems: list[Problem]) -> datetime | None:
    if value is None:
        return None
    if isinstance(value, str):
        try:
            parsed = datetime.fromisoformat(value)
        except ValueError:
            pass
        else:
            return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)
    problems.append(Problem(name, f"'{value}' is not an ISO 8601 time"))
    return None


def _text(raw: JsonObject, name: str, problems: list[Problem], *, default: str = "") -> str:
    value = raw.get(name, default)
    if value is None:
        value = default
    if not isinstance(value, str):
        problems.append(Problem(name, f"must be text, got {type(value).__name__}"))
        return default
    return value


def _mapping(raw: JsonObject, name: str, problems: list[Problem]) -> JsonObject:
    value = raw.get(name)
    if value is None:
        return {}
    if not isinstance(value, dict):
        problems.append(Problem(name, f"must be an object, got {type(value).__name__}"))
        return {}
    return value


# What other item files call a field (CFLUE's question and answer, EconLogicQA's Answer).
_OTHER_NAMES = {
    "prompt": ("question", "Question", "scenario", "stem"),
    "key": ("answer", "Answer", "label"),
}


# The fields a line may hold: an item as `export` writes it (its text in ``revisions``), or
# a hand-written one with its text on the item; a release export's stamps besides.
REVISION_FIELDS = frozenset(
    {"number", "prompt", "choices", "key", "explanation", "author", "change_note"}
    | {"provenance", "created_at"}
)
ITEM_FIELDS = frozenset(
    {"id", "kind", "source", "source_ref", "language", "status", "meta", "current_revision"}
    | {"suspected_duplicate_of", "duplicate_similarity", "created_at", "revisions"}
    | set(STAMP_FIELDS)
)
HAND_WRITTEN_FIELDS = (ITEM_FIELDS - {"revisions", "current_revision"}) | (
    REVISION_FIELDS - {"number"}
)


def unknown_field_problems(raw: JsonObject, known: Iterable[str]) -> list[Problem]:
    """A problem for each field of ``raw`` not among ``known``: its text would be dropped
    without a word (``explanaton`` lost the explanation), so it is named, with the field
    it is likely a misspelling of.  Other formats' names for a missing field (question,
    answer) are said by that field's own problem."""
    known = set(known)
    said_elsewhere = {
        alias for name, aliases in _OTHER_NAMES.items() if name not in raw for alias in aliases
    }
    problems = []
    for name in raw:
        if name in known or name in said_elsewhere:
            continue
        near = difflib.get_close_matches(str(name), sorted(known), n=1, cutoff=0.75)
        hint = f"; did you mean {near[0]}?" if near else ""
        problems.append(Problem(str(name), f"is not a field of vetbench JSONL{hint}"))
    return problems


def _revision(raw: object, where: str, problems: list[Problem]) -> RevisionRecord | None:
    if not isinstance(raw, dict):
        problems.append(Problem(where, "must be an object"))
        return None
    local: list[Problem] = []
    if where:  # a revision of an exported item; a hand-written line is checked whole
        local += unknown_field_problems(raw, REVISION_FIELDS)
    number = raw.get("number", 1)
    if not isinstance(number, int) or isinstance(number, bool) or number < 1:
        local.append(Problem("number", f"must be a whole number from 1, got {number!r}"))
    choices = _mapping(raw, "choices", local)
    if not all(isinstance(label, str) and isinstance(t, str) for label, t in choices.items()):
        local.append(Problem("choices", "labels and texts must be text"))
    explanation = raw.get("explanation")
    if explanation is not None and not isinstance(explanation, str):
        local.append(Problem("explanation", "must be text or null"))
    for name in ("prompt", "key"):
        if raw.get(name) is None:
            alias = next((other for other in _OTHER_NAMES[name] if other in raw), None)
            said = f" (this record has '{alias}': vetbench JSONL calls it {name})" if alias else ""
            local.append(Problem(name, f"is missing{said}"))
    record = RevisionRecord(
        number=number if isinstance(number, int) else 1,
        prompt=_text(raw, "prompt", local),
        choices={label: text for label, text in choices.items() if isinstance(text, str)},
        key=_text(raw, "key", local),
        explanation=explanation if isinstance(explanation, str) else None,
        author=_text(raw, "author", local, default="import"),
        change_note=_text(raw, "change_note", local, default="import"),
        provenance=_mapping(raw, "provenance", local),
        created_at=_parse_time(raw.get("created_at"), "created_at", local),
    )
    problems += [Problem(f"{where}.{p.field}" if where else p.field, p.message) for p in local]
    # Its text read whole (a misspelt field or a bad author aside), it still makes a draft,
    # so the record's other problems (a key that is no choice) are said with these at once.
    return None if any(p.field in _TEXT_FIELDS for p in local) else record


# A revision's fields without which it makes no draft to check.
_TEXT_FIELDS = frozenset({"number", "prompt", "key", "choices"})


def field_names(where: str = "") -> dict[str, str]:
    """The validator's field names as this format spells them, under revision ``where``
    (shot files, which are JSONL items too, spell them so)."""
    prefix = f"{where}." if where else ""
    names = {name: prefix + name for name in ("key", "explanation", "choices")}
    names |= {"scenario": prefix + "prompt", "question": prefix + "prompt"}
    names["events"] = prefix + "choices"
    for label in LETTERS:
        names[f"event {label}"] = names[f"choice {label}"] = f"{prefix}choices.{label}"
    return names


def _meta_problems(meta: JsonObject) -> list[Problem]:
    """What the other formats' writers take from meta must be what their readers would
    give, or an export of the item could not be read back."""
    return (
        econlogicqa.extra_columns_problems(meta)
        + cflue.exam_name_problems(meta)
        + cflue.extra_fields_problems(meta)
    )


def _record(source: InputFile, line: int, ordinal: int, raw: object) -> ParsedRecord:
    place = Place(source.shown, line=line)
    if not isinstance(raw, dict):
        problem = Problem("", f"must be a JSON object, got {type(raw).__name__}")
        return ParsedRecord(place, ordinal, problems=[problem])
    problems: list[Problem] = unknown_field_problems(
        raw, ITEM_FIELDS if "revisions" in raw else HAND_WRITTEN_FIELDS
    )
    kind = _text(raw, "kind", problems)
    if not kind:
        problems.append(Problem("kind", "is missing"))
    elif unknown := kind_problem(kind):  # said here, so a record missing other fields says it
        problems.append(unknown)
    item_id = raw.get("id")
    if item_id is not None and (not isinstance(item_id, str) or not item_id.strip()):
        problems.append(Problem("id", "must be non-empty text"))
        item_id = None
    status = _text(raw, "status", problems, default=ItemStatus.PENDING.value)
    if status not in {s.value for s in ItemStatus}:
        problems.append(Problem("status", f"'{status}' is not one of {', '.join(ItemStatus)}"))
    similarity = raw.get("duplicate_similarity")
    if similarity is not None and (
        not isinstance(similarity, int | float) or isinstance(similarity, bool)
    ):
        problems.append(Problem("duplicate_similarity", "must be a number or null"))
        similarity = None
    duplicate_of = raw.get("suspected_duplicate_of")
    if duplicate_of is not None and not isinstance(duplicate_of, str):
        problems.append(Problem("suspected_duplicate_of", "must be an item id or null"))
        duplicate_of = None
    elif duplicate_of is not None and duplicate_of == item_id:
        problems.append(Problem("suspected_duplicate_of", "names the item itself"))

    raw_revisions = raw.get("revisions")
    revisions: list[RevisionRecord] = []
    where_of: dict[int, str] = {}  # revision number -> its place in the record
    if raw_revisions is None:  # a hand-written line: the text sits on the item
        single = _revision({**raw, "number": 1}, "", problems)
        if single:  # a new item's text, unlike a history kept as stored
            revisions = [replace(single, explanation=stated_explanation(single.explanation))]
        where_of[1] = ""
    elif not isinstance(raw_revisions, list) or not raw_revisions:
        problems.append(Problem("revisions", "must be a non-empty list"))
    else:
        for index, raw_revision in enumerate(raw_revisions, start=1):
            revision = _revision(raw_revision, f"revisions[{index}]", problems)
            if revision:
                revisions.append(revision)
                where_of.setdefault(revision.number, f"revisions[{index}]")
    numbers = [r.number for r in revisions]
    if len(set(numbers)) != len(numbers):
        problems.append(Problem("revisions", "revision numbers repeat"))
    current_number = raw.get("current_revision", max(numbers, default=1))
    current = next((r for r in revisions if r.number == current_number), None)
    if revisions and current is None:
        problems.append(
            Problem("current_revision", f"{current_number!r} is not one of the revisions")
        )
    if current is None or not kind or kind_problem(kind):  # nothing more can be checked
        return ParsedRecord(place, ordinal, problems=problems)

    native = NativeItem(
        item_id=item_id or "",
        source=_text(raw, "source", problems),
        status=status,
        current_revision=current.number,
        revisions=sorted(revisions, key=lambda r: r.number),
        created_at=_parse_time(raw.get("created_at"), "created_at", problems),
        suspected_duplicate_of=duplicate_of,
        duplicate_similarity=float(similarity) if similarity is not None else None,
        states_duplicate="suspected_duplicate_of" in raw,
    )
    meta = _mapping(raw, "meta", problems)
    problems += [Problem(f"meta.{p.field}", p.message) for p in _meta_problems(meta)]
    draft = ItemDraft(
        kind=kind,
        prompt=current.prompt,
        choices=dict(current.choices),
        key=current.key,
        explanation=current.explanation,
        language=_text(raw, "language", problems, default="en") or "en",
        source_ref=_text(raw, "source_ref", problems) or place.source_ref,
        meta=meta,
        provenance=dict(current.provenance)
        or {"file": source.file_name, "line": line, "format": NAME},
        item_id=item_id,
        field_names=field_names(where_of.get(current.number, "")),
    )
    # With problems it is never stored, but its draft is checked all the same
    # (``db.import_checks.check_record``): the record's every problem is said at once.
    return ParsedRecord(place, ordinal, draft=draft, native=native, problems=problems)


def read(source: InputFile) -> Iterator[ParsedRecord]:
    """Yield one record per non-blank line as it is read; a line that is not JSON is that
    record's problem."""
    ordinal = 0
    for parsed in json_input.json_lines(read_lines(source)):
        ordinal += 1
        line_number = parsed.number
        place = Place(source.shown, line=line_number)
        if parsed.error is not None:
            problem = Problem("", f"malformed JSON: {parsed.error.described}")
            yield ParsedRecord(place, ordinal, problems=[problem])
            continue
        raw = parsed.value
        if ordinal == 1 and isinstance(raw, dict) and is_article(raw, "prompt", "revisions"):
            raise FormatError(source.shown, ARTICLES_NOT_ITEMS, line_number)
        yield _record(source, line_number, ordinal, raw)
    if ordinal == 0:
        raise FormatError(source.shown, "the file has no records")


def revision_record(revision: RevisionRecord) -> JsonObject:
    return {
        "number": revision.number,
        "prompt": revision.prompt,
        "choices": dict(revision.choices),
        "key": revision.key,
        "explanation": revision.explanation,
        "author": revision.author,
        "change_note": revision.change_note,
        "provenance": revision.provenance,
        "created_at": format_time(revision.created_at),
    }


_DUPLICATE_LINK = ("suspected_duplicate_of", "duplicate_similarity")


def item_record(item: FullItem) -> JsonObject:
    return {
        "id": item.id,
        "kind": item.kind,
        "source": item.source,
        "source_ref": item.source_ref,
        "language": item.language,
        "status": item.status,
        "meta": item.meta,
        "current_revision": item.current_revision,
        "suspected_duplicate_of": item.suspected_duplicate_of,
        "duplicate_similarity": item.duplicate_similarity,
        "created_at": format_time(item.created_at),
        "revisions": [revision_record(r) for r in item.revisions],
    }


def write(items: Iterable[FullItem], out: TextIO, *, stamp: dict[str, str] | None = None) -> int:
    """Write items with their whole history, one JSON object per line; returns the count.

    ``stamp`` (a release export's name and hash) adds fields naming the release
    (``db.formats.base.STAMP_FIELDS``; the reader ignores them) and leaves out the duplicate
    link: a review finding about the items' texts now, which a release does not freeze (a
    line without it states none, so an import links by similarity as for any file)."""
    count = 0
    for item in items:
        record = {**item_record(item), **stamp_fields(item.id, stamp)}
        if stamp:
            for name in _DUPLICATE_LINK:
                del record[name]
        out.write(json.dumps(record, ensure_ascii=False, separators=(",", ":")))
        out.write("\n")
        count += 1
    return count

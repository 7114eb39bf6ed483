"""Checking an imported record before it is stored: on its own, its id against the
file's other records, and against the item already stored under its id.

A record with problems is rejected with every problem and its place (file, line,
field); one that would change a stored item is compared with it: the same source and
kind, a text that is a revision of the stored one rather than another question (unless
``replace_unrelated``), and (unless ``revise_reviewed``) no new text for an item someone
reviewed.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from rapidfuzz import fuzz
from sqlalchemy import exists, select
from sqlmodel import Session

from db.answers import format_answer
from db.canonical_text import item_text
from db.flag_rules import RevisionText
from db.formats import ParsedRecord
from db.formats.base import RevisionRecord
from db.import_report import FileReport
from db.import_state import SeenIds
from db.listings import preview
from db.models import Decision, Item, ItemRevision, Judgment
from db.validation import (
    MAX_ID_CHARS,
    MAX_KEY_CHARS,
    MAX_SOURCE_CHARS,
    InvalidName,
    ItemDraft,
    Problem,
    identifier_problems,
    length_problems,
    nul_problems,
    validate_draft,
    validate_person_name,
)
from db.vocabulary import KEY_CORRECTION_NOTE, ItemKind
from db.words import a_or_an

MAX_ID_LENGTH = MAX_ID_CHARS
# A re-imported record less alike than this (rapidfuzz ratio of the canonical texts,
# 0-100) to its stored item is another question that happens to get the same id (two
# batches in files of the same name), not a revision.  Two random CFLUE questions score
# 10 at the median and 37 at the 99.9th percentile (56 at most of 3,000 pairs); a
# corrected record shares most of its text.
UNRELATED_BELOW = 50
_ITEM = Item.__table__  # type: ignore[attr-defined]
_REVISION = ItemRevision.__table__  # type: ignore[attr-defined]


@dataclass(frozen=True)
class KeyCorrection:
    """A lead's correction of an item's key that its current revision still holds."""

    lead: str
    revision: int


@dataclass(frozen=True)
class StoredItem:
    """A stored item as a re-import compares it: who it belongs to, its text, whether
    reviewed, and the lead's key correction its key comes from, if it does."""

    source: str
    meta: dict[str, Any]
    source_ref: str
    language: str
    text: RevisionText
    reviewed: bool
    first_file: str | None
    key_correction: KeyCorrection | None = None


@dataclass
class PlannedRecord:
    """A record that passed its checks: its draft, and the id and source it is stored as."""

    record: ParsedRecord
    draft: ItemDraft
    item_id: str
    source: str


@dataclass
class CheckedRecord:
    """A record read and checked on its own; its id is checked against the file's other
    records (``SeenIds``) when its batch is stored."""

    record: ParsedRecord
    plan: PlannedRecord | None
    problems: list[Problem]
    claimed_id: str | None  # the id it uses, unless that id is invalid anyway


def _revision_problems(revision: RevisionRecord, where: str, *, current: bool) -> list[Problem]:
    """What PostgreSQL would refuse in a JSONL record's stored revision (checked on every
    backend); the current revision's text is checked by ``validate_draft`` already."""
    prefix = f"{where}." if where else ""
    problems: list[Problem] = []
    try:
        validate_person_name(revision.author)
    except InvalidName as error:
        problems.append(Problem(f"{prefix}author", str(error)))
    fields: list[tuple[str, object]] = [("change_note", revision.change_note)]
    if not current:
        problems += length_problems(f"{prefix}key", revision.key, MAX_KEY_CHARS)
        fields += [
            ("prompt", revision.prompt),
            ("choices", revision.choices),
            ("key", revision.key),
            ("explanation", revision.explanation),
            ("provenance", revision.provenance),
        ]
    for name, value in fields:
        problems += nul_problems(prefix + name, value)
    return problems


def check_record(record: ParsedRecord, report: FileReport) -> CheckedRecord:
    """The record as a plan to store, with its problems (its id is checked in its batch)."""
    problems = list(record.problems)
    draft = record.draft
    plan = None
    claimed_id = None
    if draft is not None:
        problems += validate_draft(draft)
        item_id = draft.item_id or f"{report.source}:{record.ordinal}"
        native = record.native
        item_source = (native.source if native else "") or str(report.source)
        if len(item_id) > MAX_ID_LENGTH:
            problems.append(Problem("id", f"is longer than {MAX_ID_LENGTH} characters"))
        else:
            claimed_id = item_id
        problems += length_problems("source", item_source, MAX_SOURCE_CHARS)
        problems += identifier_problems("source", item_source)
        if native is not None:
            for index, revision in enumerate(native.revisions, start=1):
                where = "" if len(native.revisions) == 1 else f"revisions[{index}]"
                current = revision.number == native.current_revision
                problems += _revision_problems(revision, where, current=current)
        plan = PlannedRecord(record, draft, item_id, item_source)
    return CheckedRecord(record, plan, problems, claimed_id)


def claim_ids(pending: list[CheckedRecord], seen: SeenIds) -> list[PlannedRecord]:
    """Check the batch's ids against every id the file used before; returns the plans of
    the records without problems (the others are rejected in file order by the caller)."""
    claims = [(entry.claimed_id, entry.record.place.source_ref) for entry in pending]
    used_before = seen.claim([(item_id, place) for item_id, place in claims if item_id is not None])
    earlier = iter(used_before)
    for entry in pending:
        if entry.claimed_id is None:
            continue
        first_place = next(earlier)
        if first_place is not None:
            entry.problems.append(
                Problem("id", f"'{entry.claimed_id}' already used at {first_place}")
            )
    return [entry.plan for entry in pending if entry.plan is not None and not entry.problems]


def load_stored(session: Session, ids: list[str]) -> dict[str, StoredItem]:
    """The stored items among ``ids``: their text, source, and whether anyone reviewed them."""
    if not ids:
        return {}
    judged = exists().where(
        (Judgment.__table__.c.item_id == _ITEM.c.id)  # type: ignore[attr-defined]
        & (Judgment.__table__.c.retracted.is_(False))  # type: ignore[attr-defined]
    )
    decided = exists().where(
        (Decision.__table__.c.item_id == _ITEM.c.id)  # type: ignore[attr-defined]
        & Decision.__table__.c.retracted_at.is_(None)  # type: ignore[attr-defined]
    )
    first_revision = _REVISION.alias("first_revision")
    first = (
        select(first_revision.c.provenance)
        .where((first_revision.c.item_id == _ITEM.c.id) & (first_revision.c.number == 1))
        .scalar_subquery()
    )
    query = (
        select(
            _ITEM.c.id,
            _ITEM.c.kind,
            _ITEM.c.source,
            _ITEM.c.meta,
            _ITEM.c.source_ref,
            _ITEM.c.language,
            _REVISION.c.prompt,
            _REVISION.c.choices,
            _REVISION.c.key,
            _REVISION.c.explanation,
            (judged | decided).label("reviewed"),
            first.label("first_provenance"),
        )
        .join(
            _REVISION,
            (_REVISION.c.item_id == _ITEM.c.id) & (_REVISION.c.number == _ITEM.c.current_revision),
        )
        .where(_ITEM.c.id.in_(ids))
    )
    found: dict[str, StoredItem] = {}
    for row in session.execute(query):
        provenance = row.first_provenance or {}
        found[row.id] = StoredItem(
            row.source,
            row.meta or {},
            row.source_ref,
            row.language,
            RevisionText(row.kind, row.prompt, row.choices or {}, row.key, row.explanation),
            bool(row.reviewed),
            provenance.get("file") if isinstance(provenance, dict) else None,
        )
    # The newest key correction of each, kept while the item's key is still the corrected one.
    corrections = session.execute(
        select(_REVISION.c.item_id, _REVISION.c.number, _REVISION.c.author, _REVISION.c.key)
        .where(_REVISION.c.item_id.in_(list(found)))
        .where(_REVISION.c.change_note.startswith(KEY_CORRECTION_NOTE, autoescape=True))
        .order_by(_REVISION.c.number)
    )
    for item_id, number, lead, key in corrections:
        stored = found[item_id]
        in_force = KeyCorrection(lead, number) if key == stored.text.key else None
        found[item_id] = replace(stored, key_correction=in_force)
    return found


def undone_correction_text(draft: ItemDraft, existing: StoredItem) -> str | None:
    """The lead's key correction the record's key would undo, in words (``key C, A, B, D
    undoes the key lena corrected it to in revision 2 (A, C, B, D)``); None if none."""
    correction = existing.key_correction
    if correction is None or draft.key == existing.text.key:
        return None
    kind = ItemKind(draft.kind)
    return (
        f"key {format_answer(kind, draft.key)} undoes the key {correction.lead} corrected "
        f"it to in revision {correction.revision} ({format_answer(kind, existing.text.key)})"
    )


def same_text(draft: ItemDraft, existing: StoredItem) -> bool:
    """The record holds the stored text: its question, choices (in order), key and
    explanation (:func:`changed_fields` names what differs)."""
    return not changed_fields(draft, existing)


def _unrelated(draft: ItemDraft, existing: StoredItem) -> float | None:
    """How alike (0-100) the record's text and the stored item's are, when too little for
    one to be a revision of the other (:data:`UNRELATED_BELOW`); None otherwise."""
    if same_text(draft, existing):
        return None
    stored = existing.text
    alike = fuzz.ratio(
        item_text(draft.prompt, draft.choices), item_text(stored.prompt, stored.choices)
    )
    return alike if alike < UNRELATED_BELOW else None


def metadata_changes(draft: ItemDraft, existing: StoredItem) -> dict[str, list[Any]]:
    """The item's metadata the record changes, as ``{field: [old, new]}``: what describes
    the item (``meta``, ``source_ref``, ``language``), not what a reviewer judged."""
    changes: dict[str, list[Any]] = {}
    for name, old, new in (
        ("meta", existing.meta, dict(draft.meta)),
        ("source_ref", existing.source_ref, draft.source_ref),
        ("language", existing.language, draft.language),
    ):
        if old != new:
            changes[name] = [old, new]
    return changes


def conflict(
    plan: PlannedRecord, old: StoredItem, *, revise_reviewed: bool, replace_unrelated: bool
) -> Problem | None:
    """Why a record may not change the stored item with its id, if it may not."""
    if old.source != plan.source:
        return Problem(
            "id",
            f"{plan.item_id} is an item of source {old.source}; this record's source is "
            f"{plan.source} (ids never move between sources: give the record its own id)",
        )
    if old.text.kind != plan.draft.kind:
        elsewhere = ""
        if old.first_file and old.first_file != Path(plan.record.place.file).name:
            # bom.csv then bom.json: the same stem gives the same ids.
            elsewhere = (
                f" (from {old.first_file}: if this file's records are other items, import "
                "it with its own --source)"
            )
        return Problem(
            "kind",
            f"item {plan.item_id} exists as {a_or_an(old.text.kind)} item; "
            f"an import cannot make it {plan.draft.kind}{elsewhere}",
        )
    if not replace_unrelated and (alike := _unrelated(plan.draft, old)) is not None:
        prompt = _prompt_field(ItemKind(plan.draft.kind))
        return Problem(
            plan.draft.field_names.get(prompt, prompt),
            f"item {plan.item_id} holds another question ({alike:.0f}% alike: stored "
            f"“{preview(old.text.prompt, 32)}”, this record “{preview(plan.draft.prompt, 32)}”); "
            "a re-import revises items, it does not replace them: import another batch with "
            "its own --source, or pass --replace-unrelated to make it a new revision anyway",
        )
    if old.reviewed and not revise_reviewed and (changed := changed_fields(plan.draft, old)):
        if (undone := undone_correction_text(plan.draft, old)) is not None:
            return Problem(
                ", ".join(changed),
                f"item {plan.item_id} has been reviewed, and this record's {undone}: write "
                "that key in the file, or --revise-reviewed makes the file's key a new "
                "revision that goes back to review",
            )
        return Problem(
            ", ".join(changed),
            f"item {plan.item_id} has been reviewed and this record changes its text; "
            "--revise-reviewed makes it a new revision that goes back to review",
        )
    return None


def changed_fields(draft: ItemDraft, existing: StoredItem) -> list[str]:
    """The fields of the text the record changes (its question or scenario, each choice or
    event, its key, its explanation), named as its file names them (``draft.field_names``:
    ``Question``, ``column B``, ``Answer`` in CSV; ``choices['B']``, ``analysis`` in CFLUE).
    Empty when the record holds the stored text (:func:`same_text`)."""
    stored = existing.text
    kind = ItemKind(draft.kind)
    one, every = ("event", "events") if kind is ItemKind.ORDERING else ("choice", "choices")
    changed = [_prompt_field(kind)] if draft.prompt != stored.prompt else []
    if list(draft.choices) != list(stored.choices):  # labels added or taken away
        changed.append(every)
    else:
        changed += [
            f"{one} {label}"
            for label, text in draft.choices.items()
            if text != stored.choices[label]
        ]
    changed += [
        name
        for name, new, old in (
            ("key", draft.key, stored.key),
            ("explanation", draft.explanation, stored.explanation),
        )
        if new != old
    ]
    return [draft.field_names.get(name, name) for name in changed]


def _prompt_field(kind: ItemKind) -> str:
    """The validator's name for an item's prompt (:func:`db.validation.validate_draft`)."""
    return "question" if kind.is_mcq else "scenario"

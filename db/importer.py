"""Importing item files: read, validate, store and find near-duplicates, in one transaction per file.

Each input (a path, or ``-`` for standard input) is opened once and read record by
record (``db.formats``), so a pipe loses nothing and memory stays bounded however
long the file is.  In one transaction per file:

1. every record is validated (``db.validation.validate_draft``) as it is read and
   stored in batches: records whose id is new are added, records whose id exists
   with different text become a new revision ("updated"), identical ones are left
   alone ("unchanged");
2. if any record is invalid and ``skip_invalid`` is off, the transaction is rolled
   back: nothing from the file is stored, and every problem is reported with its
   file, line or record, and field;
3. every stored revision gets its text flags as it is stored (``db.items.store_revisions``);
   new and revised items very similar to an existing or earlier item are marked as
   suspected duplicates with a ``duplicate`` flag saying what differs (``db.dedup``,
   ``db.flags``); an audit event records the import.

What an import may change:

- an id names one item of one source: a record whose id exists under another
  source is refused (a JSONL record's ``source``, else ``--source``, else the file
  name);
- a changed record whose item was already judged or decided is refused unless
  ``revise_reviewed``: then it becomes a new revision that goes back to review
  (its status recomputed; judgments and decisions stay in the history);
- every summary lists the ids it revised (``FileReport.revised``) and those that
  went back to review (``FileReport.back_to_review``).

Ids are ``{source}:{n}``: ``source`` defaults to a slug of the file name and ``n``
is the record's data-row number (CSV, JSONL) or 1-based index (JSON).  JSONL
records keep their own ids.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterator, Sequence
from contextlib import closing
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from sqlalchemy import exists, func, insert, select
from sqlalchemy import update as update_statement
from sqlmodel import Session

from db.audit import record_audits, record_event
from db.bulk_reads import id_chunks
from db.dedup import JoinedTexts, item_text, near_duplicates
from db.engine import Database
from db.flag_rules import RevisionText
from db.flags import DuplicateLink, record_duplicates
from db.formats import (
    AUTO,
    FORMATS,
    FormatError,
    InputFile,
    ParsedRecord,
    detect_input_format,
    get_format,
    open_input,
)
from db.formats.base import NativeItem, RevisionRecord
from db.import_state import CheckedItems, ImportState, SeenIds, StatedLink
from db.import_statuses import StatedStatus, restore_stated_statuses
from db.items import NewRevision, store_revisions
from db.models import Decision, Item, ItemRevision, Judgment, utcnow
from db.settings import get_setting
from db.validation import (
    MAX_ID_CHARS,
    MAX_KEY_CHARS,
    MAX_SOURCE_CHARS,
    InvalidName,
    ItemDraft,
    Problem,
    length_problems,
    nul_problems,
    validate_draft,
    validate_person_name,
)
from db.vocabulary import ItemStatus

MAX_ID_LENGTH = MAX_ID_CHARS
PROBLEMS_SHOWN = 50
PROBLEMS_KEPT = 1000  # more are counted, not kept: a wholly wrong file stays small in memory
INSERT_BATCH = 2000
_ITEM = Item.__table__  # type: ignore[attr-defined]
_REVISION = ItemRevision.__table__  # type: ignore[attr-defined]

ProgressCallback = Callable[["ImportProgress"], None]
StatusRefresher = Callable[[Session, str], object]


class _Rejected(Exception):
    """Rolls back a file's transaction: it has invalid records and ``skip_invalid`` is off."""


@dataclass(frozen=True)
class ImportProgress:
    """How far the import of one file has got.

    ``phase`` is ``reading`` (records read, checked and stored; ``done`` and ``total``
    count bytes, ``total`` is 0 for a pipe), then ``checking duplicates``.
    """

    path: str
    phase: str
    done: int
    total: int


@dataclass
class Tally:
    added: int = 0
    updated: int = 0
    unchanged: int = 0
    duplicates: int = 0

    def add(self, other: Tally) -> None:
        self.added += other.added
        self.updated += other.updated
        self.unchanged += other.unchanged
        self.duplicates += other.duplicates


@dataclass
class FileReport:
    """What happened to one file."""

    path: str
    format: str | None = None
    source: str | None = None
    records: int = 0
    invalid: int = 0
    tally: Tally = field(default_factory=Tally)
    by_kind: dict[str, Tally] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)  # "file: line 5: key: ..."
    problem_count: int = 0  # all problems found; ``problems`` keeps the first PROBLEMS_KEPT
    notes: list[str] = field(default_factory=list)  # hints and things worth knowing
    error: str | None = None  # the file as a whole could not be read
    rejected: bool = False  # invalid records and no --skip-invalid: nothing stored
    revised: list[str] = field(default_factory=list)  # ids given a new revision of their text
    back_to_review: list[str] = field(default_factory=list)  # revised ids that had been reviewed
    # ids whose metadata (meta, source_ref, language) changed: applied, no new revision
    metadata_updated: list[str] = field(default_factory=list)
    # approved/rejected statuses the file states: decided by a lead only (db.import_statuses)
    stated_statuses: list[StatedStatus] = field(default_factory=list)

    @property
    def stored(self) -> bool:
        return self.error is None and not self.rejected

    def kind_tally(self, kind: str) -> Tally:
        return self.by_kind.setdefault(kind, Tally())

    def add_problem(self, line: str) -> None:
        self.problem_count += 1
        if len(self.problems) < PROBLEMS_KEPT:
            self.problems.append(line)

    def problem_lines(self, limit: int = PROBLEMS_SHOWN) -> list[str]:
        """The problems to show a person: the first ``limit``, then how many more there are."""
        lines = self.problems[:limit]
        more = max(self.problem_count, len(self.problems)) - len(lines)
        if more > 0:
            lines.append(f"... and {more} more problems in {self.path}")
        return lines

    def forget_writes(self) -> None:
        """The transaction was rolled back: nothing was added, updated or revised."""
        self.tally = Tally()
        self.by_kind = {}
        self.revised = []
        self.back_to_review = []
        self.metadata_updated = []
        self.stated_statuses = []


@dataclass
class ImportReport:
    files: list[FileReport] = field(default_factory=list)

    @property
    def tally(self) -> Tally:
        total = Tally()
        for report in self.files:
            total.add(report.tally)
        return total

    @property
    def invalid(self) -> int:
        return sum(report.invalid for report in self.files)

    @property
    def by_kind(self) -> dict[str, Tally]:
        totals: dict[str, Tally] = {}
        for report in self.files:
            for kind, tally in report.by_kind.items():
                totals.setdefault(kind, Tally()).add(tally)
        return totals

    @property
    def ok(self) -> bool:
        """True when every file was stored (invalid records may have been skipped on request)."""
        return all(report.stored for report in self.files)


@dataclass(frozen=True)
class _Existing:
    """A stored item as a re-import compares it: who it belongs to, its text, whether reviewed."""

    source: str
    meta: dict[str, Any]
    source_ref: str
    language: str
    text: RevisionText
    reviewed: bool
    first_file: str | None


@dataclass
class _Planned:
    record: ParsedRecord
    draft: ItemDraft
    item_id: str
    source: str


@dataclass(frozen=True)
class _Options:
    skip_invalid: bool
    revise_reviewed: bool
    actor: str
    progress: ProgressCallback | None
    refresh_status: StatusRefresher | None
    explicit_source: str | None


@dataclass
class _Pending:
    """A record read and checked on its own; its id is checked against the file's other
    records (``SeenIds``) when its batch is stored."""

    record: ParsedRecord
    plan: _Planned | None
    problems: list[Problem]
    claimed_id: str | None  # the id it uses, unless that id is invalid anyway


def source_slug(path: Path) -> str:
    """The default source name: the file name without extension, lower-case, dashes for spaces."""
    slug = re.sub(r"[^\w]+", "-", path.stem.casefold()).strip("-_")
    return slug or "items"


def _format_problem(record: ParsedRecord, problem: Problem) -> str:
    return f"{record.place}: {problem}"


def import_files(
    db: Database,
    paths: Sequence[str | os.PathLike[str]],
    *,
    format: str = AUTO,
    source: str | None = None,
    skip_invalid: bool = False,
    revise_reviewed: bool = False,
    duplicate_threshold: float | None = None,
    actor: str = "import",
    progress: ProgressCallback | None = None,
    refresh_status: StatusRefresher | None = None,
) -> ImportReport:
    """Import each file (``-``: standard input) in its own transaction; see the module docstring.

    ``duplicate_threshold`` defaults to the ``duplicate_threshold`` setting.
    ``refresh_status(session, item_id)`` is called for items that got a new revision
    so their status follows the review rules (the CLI passes
    ``reviewer.item_status.refresh_item_status``); without it their status is kept.
    """
    if format != AUTO and format not in FORMATS:
        raise ValueError(f"unknown format '{format}' (known: auto, {', '.join(FORMATS)})")
    if source is not None and not source.strip():
        raise ValueError("--source must not be empty")
    if source is not None:
        problems = length_problems("--source", source.strip(), MAX_SOURCE_CHARS)
        problems += nul_problems("--source", source)
        if problems:
            raise ValueError(str(problems[0]))
    options = _Options(
        skip_invalid=skip_invalid,
        revise_reviewed=revise_reviewed,
        actor=actor,
        progress=progress,
        refresh_status=refresh_status,
        explicit_source=source.strip() if source else None,
    )
    report = ImportReport()
    sources_seen: dict[str, str] = {}
    for raw_path in paths:
        file_report = FileReport(path=os.fspath(raw_path))
        report.files.append(file_report)
        _import_one(
            db,
            os.fspath(raw_path),
            file_report,
            format_name=format,
            sources_seen=sources_seen,
            duplicate_threshold=duplicate_threshold,
            options=options,
        )
    return report


def _import_one(
    db: Database,
    path: str,
    report: FileReport,
    *,
    format_name: str,
    sources_seen: dict[str, str],
    duplicate_threshold: float | None,
    options: _Options,
) -> None:
    try:
        with open_input(path) as source:
            report.path = source.shown
            name = detect_input_format(source) if format_name == AUTO else format_name
            report.format = name
            report.source = options.explicit_source or source_slug(Path(source.file_name))
            if name != "jsonl":
                # Two files with one source in one run would give the same ids to different items.
                other = sources_seen.get(report.source)
                if other is not None:
                    raise FormatError(
                        source.shown,
                        f"its ids would be {report.source}:N like those of {other}; "
                        "import the files one at a time with their own --source",
                    )
                sources_seen[report.source] = source.shown
            records = get_format(name).module.read(source)
            with db.transaction() as session:
                _store(session, source, records, report, duplicate_threshold, options)
    except FormatError as error:
        report.error = str(error)
        report.forget_writes()
    except _Rejected:
        report.rejected = True
        report.forget_writes()


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


def _check_record(record: ParsedRecord, report: FileReport) -> _Pending:
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
        problems += nul_problems("source", item_source)
        if native is not None:
            for index, revision in enumerate(native.revisions, start=1):
                where = "" if len(native.revisions) == 1 else f"revisions[{index}]"
                current = revision.number == native.current_revision
                problems += _revision_problems(revision, where, current=current)
        plan = _Planned(record, draft, item_id, item_source)
    return _Pending(record, plan, problems, claimed_id)


def _claim_ids(pending: list[_Pending], seen: SeenIds) -> list[_Planned]:
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


def _reject(record: ParsedRecord, report: FileReport, problems: list[Problem]) -> None:
    report.invalid += 1
    for problem in problems:
        report.add_problem(_format_problem(record, problem))
    if any("not valid UTF-8" in problem.message for problem in problems) and not any(
        "UTF-8" in note for note in report.notes
    ):
        report.notes.append(
            f"{report.path}: bytes that are not UTF-8 (first on {record.place.source_ref}); "
            "vetbench reads UTF-8 files only: save the file as UTF-8"
        )


def _store(
    session: Session,
    source: InputFile,
    records: Iterator[ParsedRecord],
    report: FileReport,
    duplicate_threshold: float | None,
    options: _Options,
) -> None:
    threshold = (
        float(duplicate_threshold)
        if duplicate_threshold is not None
        else float(get_setting(session, "duplicate_threshold"))
    )
    # What the import needs again once every record is stored lives on disk (ImportState):
    # memory holds one batch of records, however long the file.
    with closing(ImportState(session)) as state:
        clock = _Clock()
        pending: list[_Pending] = []
        for record in records:
            report.records += 1
            pending.append(_check_record(record, report))
            if len(pending) >= INSERT_BATCH:
                _store_batch(session, source, pending, report, state, clock, options)
                pending = []
                _tell(
                    options,
                    ImportProgress(source.shown, "reading", source.bytes_read, source.size or 0),
                )
        if pending:
            _store_batch(session, source, pending, report, state, clock, options)
        read = source.bytes_read
        _tell(options, ImportProgress(source.shown, "reading", read, source.size or read))
        if report.invalid and not options.skip_invalid:
            raise _Rejected()
        checked = len(state.checked)
        _tell(options, ImportProgress(source.shown, "checking duplicates", 0, checked))
        _mark_duplicates(session, state, threshold, report)
        _link_stated_duplicates(session, state.checked, report)
    _decide_stated_statuses(session, source, options.actor, report)
    if options.refresh_status is not None and report.revised:
        session.flush()
        for item_id in report.revised:
            options.refresh_status(session, item_id)
    if report.tally.added or report.tally.updated:
        record_event(
            session,
            options.actor,
            "import",
            source.file_name,
            format=report.format,
            source=report.source,
            added=report.tally.added,
            updated=report.tally.updated,
            unchanged=report.tally.unchanged,
            invalid=report.invalid,
            duplicates=report.tally.duplicates,
            revised=report.revised[:100],
            back_to_review=report.back_to_review[:100],
            metadata_updated=report.metadata_updated[:100],
        )
    _tell(options, ImportProgress(source.shown, "checking duplicates", checked, checked))


def _decide_stated_statuses(
    session: Session, source: InputFile, actor: str, report: FileReport
) -> None:
    session.flush()
    _decided, note = restore_stated_statuses(
        session, actor, report.stated_statuses, source.file_name
    )
    if note:
        report.notes.append(note)


def _tell(options: _Options, event: ImportProgress) -> None:
    if options.progress is not None:
        options.progress(event)


def _load_existing(session: Session, ids: list[str]) -> dict[str, _Existing]:
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
    found: dict[str, _Existing] = {}
    for row in session.execute(query):
        provenance = row.first_provenance or {}
        found[row.id] = _Existing(
            row.source,
            row.meta or {},
            row.source_ref,
            row.language,
            RevisionText(row.kind, row.prompt, row.choices or {}, row.key, row.explanation),
            bool(row.reviewed),
            provenance.get("file") if isinstance(provenance, dict) else None,
        )
    return found


def _same_text(draft: ItemDraft, existing: _Existing) -> bool:
    stored = existing.text
    return (
        draft.prompt == stored.prompt
        and list(draft.choices.items()) == list(stored.choices.items())
        and draft.key == stored.key
        and draft.explanation == stored.explanation
    )


def _metadata_changes(draft: ItemDraft, existing: _Existing) -> dict[str, list[Any]]:
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


@dataclass(frozen=True)
class _Update:
    """A stored item a record changes: its text (a new revision), its metadata, or both."""

    plan: _Planned
    text_changed: bool
    metadata: dict[str, list[Any]]


def _store_batch(
    session: Session,
    source: InputFile,
    pending: list[_Pending],
    report: FileReport,
    state: ImportState,
    clock: _Clock,
    options: _Options,
) -> None:
    """Check a batch of records against the file's other ids and what is stored, and store
    them (unless the file is already known to be rejected: then only the checks run)."""
    batch = _claim_ids(pending, state.seen)
    for entry in pending:
        if entry.problems:
            _reject(entry.record, report, entry.problems)
    existing = _load_existing(session, [plan.item_id for plan in batch])
    added: list[_Planned] = []
    updated: list[_Update] = []
    for plan in batch:
        old = existing.get(plan.item_id)
        problem = _conflict(plan, old, options) if old is not None else None
        if problem is not None:
            _reject(plan.record, report, [problem])
            continue
        native = plan.record.native
        where = f"{source.file_name}: {plan.record.place.source_ref}"
        stated = native and StatedStatus.of(plan.item_id, native.status, where)
        if stated:
            report.stated_statuses.append(stated)
        if old is None:
            added.append(plan)
        else:
            text_changed = not _same_text(plan.draft, old)
            metadata = _metadata_changes(plan.draft, old)
            if text_changed:
                if old.reviewed:
                    report.back_to_review.append(plan.item_id)
                if old.first_file and old.first_file != source.file_name:
                    _note_other_file(report, plan.item_id, old.first_file)
            if text_changed or metadata:
                updated.append(_Update(plan, text_changed, metadata))
            else:
                report.tally.unchanged += 1
                report.kind_tally(plan.draft.kind).unchanged += 1
    if report.invalid and not options.skip_invalid:
        return  # the file will be rolled back: writing more would be wasted
    _insert_added(session, added, options.actor, report, clock)
    _apply_updates(session, source, updated, options.actor, report)
    for plan in added:
        _remember(state.checked, plan, revised=False)
    for update in updated:
        if update.text_changed:
            _remember(state.checked, update.plan, revised=True)


def _conflict(plan: _Planned, old: _Existing, options: _Options) -> Problem | None:
    """Why a record may not change the stored item with its id, if it may not."""
    if old.source != plan.source:
        return Problem(
            "id",
            f"{plan.item_id} is an item of source {old.source}; this record's source is "
            f"{plan.source} (ids never move between sources: give the record its own id)",
        )
    if old.text.kind != plan.draft.kind:
        return Problem(
            "kind",
            f"item {plan.item_id} exists as a {old.text.kind} item; "
            f"an import cannot make it {plan.draft.kind}",
        )
    if old.reviewed and not options.revise_reviewed and not _same_text(plan.draft, old):
        return Problem(
            "",
            f"item {plan.item_id} has been reviewed and this record changes its text; "
            "--revise-reviewed makes it a new revision that goes back to review",
        )
    return None


def _note_other_file(report: FileReport, item_id: str, first_file: str) -> None:
    marker = "were first imported from another file"
    if not any(marker in note for note in report.notes):
        report.notes.append(
            f"{report.path}: revised items {marker} (e.g. {item_id} from {first_file}); "
            "if these records are unrelated, import them with their own --source"
        )


def _remember(checked: CheckedItems, plan: _Planned, *, revised: bool) -> None:
    native = plan.record.native
    stated = None
    if native is not None and native.states_duplicate:
        stated = StatedLink(
            plan.item_id,
            native.suspected_duplicate_of,
            native.duplicate_similarity,
            revised,
            plan.draft.kind,
        )
    text = item_text(plan.draft.prompt, plan.draft.choices)
    checked.append(plan.item_id, text, plan.draft.kind, revised=revised, stated=stated)


LINK_BATCH = 2000  # duplicate links stored at once


def _mark_duplicates(
    session: Session, state: ImportState, threshold: float, report: FileReport
) -> None:
    """Mark new and revised items that are very similar to a stored or earlier item.

    A revised item is checked with its new text against every other item, and new
    items are checked against that new text, not the old.  A JSONL record that states
    its duplicate fields keeps them (``_link_stated_duplicates``).  Texts are read from
    disk (``ImportState``) and links stored a batch at a time, so memory stays bounded.
    """
    checked = state.checked
    if not len(checked):
        return
    stored = state.stored
    stored.leave_out(report.revised)
    found = near_duplicates(stored.texts(), checked.texts, threshold=threshold)
    all_ids = JoinedTexts(stored.ids(), checked.ids)  # numbered as ``found``
    for start in range(0, len(checked), LINK_BATCH):
        items = checked.items(start, start + LINK_BATCH)
        matches = {
            match.index - found.first_new: match
            for match in found.matches(start, start + LINK_BATCH)
        }
        original_ids = all_ids.take([match.of for match in matches.values()])
        original_id = dict(zip(matches, original_ids, strict=True))
        links: list[DuplicateLink] = []
        unlinked: list[str] = []
        for item in items:
            if item.states_duplicate:
                continue
            match = matches.get(item.position)
            if match is None:
                if item.revised:  # its old text's link no longer holds
                    unlinked.append(item.item_id)
                continue
            links.append(DuplicateLink(item.item_id, original_id[item.position], match.similarity))
            report.tally.duplicates += 1
            report.kind_tally(item.kind).duplicates += 1
        record_duplicates(session, links, unlinked=unlinked)


class _Clock:
    """Creation times a microsecond apart, so items list and export in the file's order
    (one import happens at one moment, but ids like x:10 sort before x:2)."""

    def __init__(self) -> None:
        self._start = utcnow()
        self._count = 0

    def next(self) -> datetime:
        self._count += 1
        return self._start + timedelta(microseconds=self._count - 1)


def _insert_added(
    session: Session, added: list[_Planned], actor: str, report: FileReport, clock: _Clock
) -> None:
    item_rows: list[dict[str, Any]] = []
    revisions: list[NewRevision] = []
    for plan in added:
        created_at = clock.next()
        draft, native = plan.draft, plan.record.native
        item_rows.append(
            {
                "id": plan.item_id,
                "kind": draft.kind,
                "source": plan.source,
                "source_ref": draft.source_ref,
                "language": draft.language,
                "status": ItemStatus.PENDING.value,  # a stated one needs a decision
                "current_revision": native.current_revision if native else 1,
                "suspected_duplicate_of": None,  # linked once every item is stored
                "duplicate_similarity": None,
                "meta": dict(draft.meta),
                "created_at": (native.created_at if native else None) or created_at,
            }
        )
        revisions += _new_revisions(plan, native, actor, created_at)
        report.tally.added += 1
        report.kind_tally(draft.kind).added += 1
    if item_rows:
        session.execute(insert(_ITEM), item_rows)
    # Near-duplicates are checked once every record of the file is stored.
    store_revisions(session, revisions, check_duplicates=False)


def _new_revisions(
    plan: _Planned, native: NativeItem | None, actor: str, created_at: datetime
) -> list[NewRevision]:
    draft = plan.draft
    if native is None:
        return [
            NewRevision.of_draft(
                draft,
                item_id=plan.item_id,
                number=1,
                author=actor,
                change_note="import",
                created_at=created_at,
            )
        ]
    revisions = []
    for revision in native.revisions:
        is_current = revision.number == native.current_revision
        revisions.append(
            NewRevision(
                item_id=plan.item_id,
                number=revision.number,
                kind=draft.kind,
                prompt=revision.prompt,
                choices=dict(revision.choices),
                # the current revision's key was canonicalised by validation
                key=draft.key if is_current else revision.key,
                explanation=revision.explanation,
                author=revision.author,
                change_note=revision.change_note,
                provenance=dict(revision.provenance),
                created_at=revision.created_at or created_at,
            )
        )
    return revisions


def _apply_updates(
    session: Session,
    source: InputFile,
    updated: list[_Update],
    actor: str,
    report: FileReport,
) -> None:
    """A new revision for each changed text; the new metadata for each changed metadata.

    Metadata (``meta``, ``source_ref``, ``language``) is not what a reviewer judged, so
    a change to it alone makes no revision and leaves the item's status as it is, even
    for a reviewed item; it is listed (``FileReport.metadata_updated``) and audited
    with its old and new values.
    """
    if not updated:
        return
    changed_ids = [update.plan.item_id for update in updated if update.text_changed]
    newest: dict[str, int] = {}
    if changed_ids:
        query = (
            select(_REVISION.c.item_id, func.max(_REVISION.c.number))
            .where(_REVISION.c.item_id.in_(changed_ids))
            .group_by(_REVISION.c.item_id)
        )
        newest.update({item_id: number for item_id, number in session.execute(query)})
    now = utcnow()
    note = f"re-import: {source.file_name}"
    revisions: list[NewRevision] = []
    revise_events: list[tuple[str, dict[str, Any]]] = []
    metadata_events: list[tuple[str, dict[str, Any]]] = []
    for update in updated:
        plan, draft = update.plan, update.plan.draft
        values: dict[str, Any] = {
            "meta": dict(draft.meta),
            "source_ref": draft.source_ref,
            "language": draft.language,
        }
        if update.text_changed:
            number = newest[plan.item_id] + 1
            revisions.append(
                NewRevision.of_draft(
                    draft,
                    item_id=plan.item_id,
                    number=number,
                    author=actor,
                    change_note=note,
                    created_at=now,
                )
            )
            values["current_revision"] = number
            report.revised.append(plan.item_id)
            revise_events.append((plan.item_id, {"note": note}))
        if update.metadata:
            report.metadata_updated.append(plan.item_id)
            metadata_events.append((plan.item_id, {"note": note, **update.metadata}))
        session.execute(update_statement(_ITEM).where(_ITEM.c.id == plan.item_id).values(**values))
        report.tally.updated += 1
        report.kind_tally(draft.kind).updated += 1
    record_audits(session, actor, "revise", revise_events)
    record_audits(session, actor, "metadata", metadata_events)
    store_revisions(session, revisions, check_duplicates=False)


def _link_stated_duplicates(session: Session, checked: CheckedItems, report: FileReport) -> None:
    """JSONL records name their duplicate themselves; link those once every item is stored.

    A revised record stating no duplicate clears the link its item had (new items
    start without one).  A named item that is not in the database (stored before, or
    added by this file) is left out with a note.
    """
    dangling: list[str] = []
    dangling_count = 0
    for stated in checked.stated_links(LINK_BATCH):
        targets = sorted({link.duplicate_of for link in stated if link.duplicate_of is not None})
        known = _existing_ids(session, targets)
        links: list[DuplicateLink] = []
        unlinked: list[str] = []
        for link in stated:
            if link.duplicate_of is None:
                if link.revised:
                    unlinked.append(link.item_id)
                continue
            if link.duplicate_of not in known:
                dangling_count += 1
                if len(dangling) < 5:
                    dangling.append(f"{link.item_id} -> {link.duplicate_of}")
                continue
            links.append(
                DuplicateLink(link.item_id, link.duplicate_of, link.similarity, stated=True)
            )
            report.tally.duplicates += 1
            report.kind_tally(link.kind).duplicates += 1
        record_duplicates(session, links, unlinked=unlinked)
    if dangling_count:
        report.notes.append(
            f"{report.path}: {dangling_count} suspected-duplicate links name items that are "
            f"not in the database and were left out: {', '.join(dangling)}"
            + (" ..." if dangling_count > len(dangling) else "")
        )


def _existing_ids(session: Session, item_ids: list[str]) -> set[str]:
    found: set[str] = set()
    for chunk in id_chunks(item_ids):
        found.update(session.execute(select(_ITEM.c.id).where(_ITEM.c.id.in_(chunk))).scalars())
    return found

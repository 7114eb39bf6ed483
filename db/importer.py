"""Importing item files: read, validate, store and find near-duplicates, in one transaction per file.

Each input (a path, or ``-`` for standard input) is opened once and read record by
record (``db.formats``), so a pipe loses nothing and memory stays bounded however
long the file is.  In one transaction per file:

1. every record is checked (``db.import_checks``) as it is read and stored in batches
   (``db.items.store_items``): records whose id is new are added, records whose id
   exists with different text become a new revision ("updated"), identical ones are
   left alone ("unchanged");
2. if any record is invalid and ``skip_invalid`` is off, the transaction is rolled
   back: nothing from the file is stored, and every problem is reported with its
   file, line or record, and field;
3. every stored revision gets its text flags as it is stored (``db.items.store_revisions``);
   new and revised items very similar to an existing or earlier item are marked as
   suspected duplicates with a ``duplicate`` flag saying what differs
   (``db.import_duplicates``), and the copies of revised items say what differs from
   their new texts (``db.copy_flags``); an audit event records the import.

What an import may change:

- an id names one item of one source: a record whose id exists under another
  source is refused (a JSONL record's ``source``, else ``--source``, else the file
  name);
- a record whose text has little in common with its stored item's (another question
  under the same id: ``db.import_checks.UNRELATED_BELOW``) is refused unless
  ``replace_unrelated``;
- a changed record whose item was already judged or decided is refused unless
  ``revise_reviewed``: then it becomes a new revision that goes back to review
  (its status recomputed, ``db.item_status``; judgments and decisions stay in the
  history);
- every summary lists the ids it revised (``FileReport.revised``) and those that
  went back to review (``FileReport.back_to_review``) (``db.import_report``).

Ids are ``{source}:{n}``: ``source`` defaults to a slug of the file name and ``n``
is the record's data-row number (CSV, JSONL) or 1-based index (JSON).  JSONL
records keep their own ids.
"""

from __future__ import annotations

import os
import re
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from contextlib import closing
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from sqlalchemy import update as update_statement
from sqlmodel import Session

from db.audit import record_audits, record_event
from db.copy_flags import refresh_copies
from db.engine import Database
from db.errors import VetbenchError
from db.flag_rules import RevisionText
from db.flags import lock_flags
from db.formats import (
    AUTO,
    FORMATS,
    FormatError,
    InputFile,
    ParsedRecord,
    detect_input_format,
    detected_against_name,
    get_format,
    open_input,
)
from db.formats.base import STDIN, NativeItem
from db.import_checks import (
    CheckedRecord,
    PlannedRecord,
    check_record,
    claim_ids,
    conflict,
    load_stored,
    metadata_changes,
    same_text,
    undone_correction_text,
)
from db.import_duplicates import link_stated_duplicates, mark_duplicates, remember
from db.import_report import FileReport, ImportProgress, ImportReport
from db.import_state import ImportState
from db.import_statuses import StatedStatus, restore_stated_statuses
from db.interrupts import InterruptedAfterCommit, InterruptedDuringCommit
from db.item_status import refresh_item_statuses
from db.items import (
    NewItem,
    NewRevision,
    next_revision_numbers,
    revision_changes,
    store_items,
    store_revisions,
)
from db.models import Item, utcnow
from db.planner_statistics import gather_statistics
from db.settings import get_setting
from db.validation import MAX_SOURCE_CHARS, identifier_problems, length_problems
from db.vocabulary import IMPORT_ACTION, METADATA_ACTION, REVISE_ACTION, ItemStatus

INSERT_BATCH = 2000
_ITEM = Item.__table__  # type: ignore[attr-defined]

ProgressCallback = Callable[[ImportProgress], None]


class ImportOptionError(VetbenchError, ValueError):
    """An import asked for with options that cannot work (an unknown format, an empty
    or overlong ``--source``): nothing is read."""


class ImportInterrupted(VetbenchError):
    """Ctrl-C during an import.  ``report`` says what was stored: every file before the
    interrupted one (each commits on its own), nothing of those after it, and of the
    interrupted one what its report says: nothing, unless the Ctrl-C came while it was
    committing (the commit goes through first: ``interrupted_file_stored``), or may have
    been, where a second Ctrl-C cut the commit short (its error says so)."""

    def __init__(self, report: ImportReport, message: str, *, interrupted_file_stored: bool):
        super().__init__(message)
        self.report = report
        self.interrupted_file_stored = interrupted_file_stored


class _Rejected(Exception):
    """Rolls back a file's transaction: it has invalid records and ``skip_invalid`` is off."""


@dataclass(frozen=True)
class _Options:
    skip_invalid: bool
    revise_reviewed: bool
    replace_unrelated: bool
    actor: str
    progress: ProgressCallback | None
    explicit_source: str | None


def source_slug(path: Path) -> str:
    """The default source name: the file name without extension, lower-case, dashes for spaces."""
    slug = re.sub(r"[^\w]+", "-", path.stem.casefold()).strip("-_")
    return slug or "items"


def import_files(
    db: Database,
    paths: Sequence[str | os.PathLike[str]],
    *,
    format: str = AUTO,
    source: str | None = None,
    skip_invalid: bool = False,
    revise_reviewed: bool = False,
    replace_unrelated: bool = False,
    duplicate_threshold: float | None = None,
    actor: str = "import",
    progress: ProgressCallback | None = None,
) -> ImportReport:
    """Import each file (``-``: standard input) in its own transaction; see the module docstring.

    ``duplicate_threshold`` defaults to the ``duplicate_threshold`` setting.  Items
    that got a new revision have their status recomputed (``db.item_status``): a new
    text goes back to review.
    """
    if format != AUTO and format not in FORMATS:
        raise ImportOptionError(f"unknown format '{format}' (known: auto, {', '.join(FORMATS)})")
    if source is not None and not source.strip():
        raise ImportOptionError("--source must not be empty")
    if source is not None:
        problems = length_problems("--source", source.strip(), MAX_SOURCE_CHARS)
        # said once, of the option, rather than of every record it would be stamped on
        problems += identifier_problems("--source", source.strip())
        if problems:
            raise ImportOptionError(str(problems[0]))
    named = Counter(os.path.realpath(path) for path in paths if os.fspath(path) != STDIN)
    twice = [path for path in paths if named[os.path.realpath(path)] > 1]
    if twice:  # its second reading would clash with the first's ids, after the first
        raise ImportOptionError(f"{os.fspath(twice[0])} is named twice: each file is imported once")
    options = _Options(
        skip_invalid=skip_invalid,
        revise_reviewed=revise_reviewed,
        replace_unrelated=replace_unrelated,
        actor=actor,
        progress=progress,
        explicit_source=source.strip() if source else None,
    )
    report = ImportReport()
    sources_seen: dict[str, str] = {}
    for position, raw_path in enumerate(paths):
        file_report = FileReport(path=os.fspath(raw_path))
        report.files.append(file_report)
        try:
            _import_one(
                db,
                os.fspath(raw_path),
                file_report,
                format_name=format,
                sources_seen=sources_seen,
                duplicate_threshold=duplicate_threshold,
                options=options,
            )
        except KeyboardInterrupt as interrupt:
            # The files before it are stored, and saying so (and what became of this one)
            # beats a bare "Aborted!" that leaves a person guessing.
            for later in paths[position + 1 :]:
                report.files.append(
                    FileReport(
                        path=os.fspath(later),
                        error=f"{os.fspath(later)}: not read (interrupted before it)",
                    )
                )
            raise _interrupted(report, file_report, interrupt) from None
    return report


def _interrupted(
    report: ImportReport, file_report: FileReport, interrupt: KeyboardInterrupt
) -> ImportInterrupted:
    """What a Ctrl-C while ``file_report``'s file was imported left stored, said."""
    path = file_report.path
    if isinstance(interrupt, InterruptedAfterCommit):
        return ImportInterrupted(
            report, f"interrupted (Ctrl-C) once {path} was stored", interrupted_file_stored=True
        )
    file_report.forget_writes()
    if isinstance(interrupt, InterruptedDuringCommit):
        file_report.error = (
            f"{path}: interrupted (Ctrl-C twice) while it was being stored: it may or may not "
            "be stored; import it again to be sure (what is stored already comes back unchanged)"
        )
        message = f"interrupted while storing {path}: it may or may not be stored"
    else:  # its transaction rolled back
        file_report.error = f"{path}: interrupted (Ctrl-C): nothing of it was stored"
        message = f"interrupted while importing {path}: nothing of it was stored"
    return ImportInterrupted(report, message, interrupted_file_stored=False)


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
    against_name = None
    try:
        with open_input(path) as source:
            report.path = source.shown
            name = detect_input_format(source) if format_name == AUTO else format_name
            report.format = name
            against_name = detected_against_name(source, name) if format_name == AUTO else None
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
                # Before any item is stored: `flags recompute` waits for the whole file.
                lock_flags(session)
                _store(session, source, records, report, duplicate_threshold, options)
                gather_statistics(session)
    except FormatError as error:
        report.error = str(error)
        report.forget_writes()
    except _Rejected:
        report.rejected = True
        report.forget_writes()
    if against_name is not None and (report.error is not None or report.rejected):
        report.notes.append(against_name)


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
        pending: list[CheckedRecord] = []
        for record in records:
            report.records += 1
            pending.append(check_record(record, report))
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
        mark_duplicates(session, state, threshold, report)
        link_stated_duplicates(session, state.checked, report)
        refresh_copies(session, report.revised, threshold=threshold)
    _decide_stated_statuses(session, source, options.actor, report)
    if report.revised:
        session.flush()
        refresh_item_statuses(session, report.revised)
    if report.tally.added or report.tally.updated:
        record_event(
            session,
            options.actor,
            IMPORT_ACTION,
            source.file_name,
            format=report.format,
            source=report.source,
            # Records may name their own sources (JSONL): the event names them too, as a
            # new item's revisions need on PostgreSQL (db.guards).
            **(
                {"sources": sorted(report.record_sources)}
                if report.record_sources - {report.source}
                else {}
            ),
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


def _tell(options: _Options, event: ImportProgress) -> None:
    if options.progress is not None:
        options.progress(event)


@dataclass(frozen=True)
class _Update:
    """A stored item a record changes: its text (a new revision), its metadata, or both."""

    plan: PlannedRecord
    text_changed: bool
    metadata: dict[str, list[Any]]
    old: RevisionText  # the text it revises


def _note_stated_status(plan: PlannedRecord, source: InputFile, report: FileReport) -> None:
    """Remember an approved or rejected status the record states (``db.import_statuses``)."""
    native = plan.record.native
    where = f"{source.file_name}: {plan.record.place.source_ref}"
    stated = native and StatedStatus.of(plan.item_id, native.status, where)
    if stated:
        report.stated_statuses.append(stated)


def _decide_stated_statuses(
    session: Session, source: InputFile, actor: str, report: FileReport
) -> None:
    session.flush()
    _decided, note = restore_stated_statuses(
        session, actor, report.stated_statuses, source.file_name
    )
    if note:
        report.notes.append(note)


def _store_batch(
    session: Session,
    source: InputFile,
    pending: list[CheckedRecord],
    report: FileReport,
    state: ImportState,
    clock: _Clock,
    options: _Options,
) -> None:
    """Check a batch of records against the file's other ids and what is stored, and store
    them (unless the file is already known to be rejected: then only the checks run)."""
    batch = claim_ids(pending, state.seen)
    for entry in pending:
        if entry.problems:
            report.reject(entry.record, entry.problems)
    existing = load_stored(session, [plan.item_id for plan in batch])
    added: list[PlannedRecord] = []
    updated: list[_Update] = []
    for plan in batch:
        old = existing.get(plan.item_id)
        problem = (
            conflict(
                plan,
                old,
                revise_reviewed=options.revise_reviewed,
                replace_unrelated=options.replace_unrelated,
            )
            if old is not None
            else None
        )
        if problem is not None:
            report.reject(plan.record, [problem])
            continue
        _note_stated_status(plan, source, report)
        report.record_sources.add(plan.source)
        if old is None:
            added.append(plan)
        else:
            text_changed = not same_text(plan.draft, old)
            metadata = metadata_changes(plan.draft, old)
            if text_changed:
                if old.reviewed:
                    report.back_to_review.append(plan.item_id)
                if (undone := undone_correction_text(plan.draft, old)) is not None:
                    report.notes.append(
                        f"{report.path}: {plan.item_id}: the file's {undone}; it goes back to "
                        "review with the file's key"
                    )
                if old.first_file and old.first_file != source.file_name:
                    _note_other_file(report, plan.item_id, old.first_file)
            if text_changed or metadata:
                updated.append(_Update(plan, text_changed, metadata, old.text))
            else:
                report.tally.unchanged += 1
                report.kind_tally(plan.draft.kind).unchanged += 1
    if report.invalid and not options.skip_invalid:
        return  # the file will be rolled back: writing more would be wasted
    _insert_added(session, added, options.actor, report, clock)
    _apply_updates(session, source, updated, options.actor, report)
    for plan in added:
        remember(state.checked, plan, revised=False)
    for update in updated:
        if update.text_changed:
            remember(state.checked, update.plan, revised=True)


def _note_other_file(report: FileReport, item_id: str, first_file: str) -> None:
    marker = "were first imported from another file"
    if not any(marker in note for note in report.notes):
        report.notes.append(
            f"{report.path}: revised items {marker} (e.g. {item_id} from {first_file}); "
            "if these records are unrelated, import them with their own --source"
        )


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
    session: Session, added: list[PlannedRecord], actor: str, report: FileReport, clock: _Clock
) -> None:
    items: list[NewItem] = []
    for plan in added:
        created_at = clock.next()
        draft, native = plan.draft, plan.record.native
        items.append(
            NewItem.of_draft(
                draft,
                item_id=plan.item_id,
                source=plan.source,
                created_at=(native.created_at if native else None) or created_at,
                revisions=tuple(_new_revisions(plan, native, actor, created_at)),
                status=ItemStatus.PENDING.value,  # a stated one needs a decision
                current_revision=native.current_revision if native else 1,
            )
        )
        report.tally.added += 1
        report.kind_tally(draft.kind).added += 1
    # Near-duplicates are checked once every record of the file is stored.
    store_items(session, items, check_duplicates=False)


def _new_revisions(
    plan: PlannedRecord, native: NativeItem | None, actor: str, created_at: datetime
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
    next_number = next_revision_numbers(session, changed_ids)
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
            number = next_number[plan.item_id]
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
            # What it changes, the key old and new, as an edit's and a key correction's say.
            changes = revision_changes(update.old, revisions[-1].text)
            revise_events.append((plan.item_id, {"revision": number, "note": note, **changes}))
        if update.metadata:
            if not update.text_changed:  # a revision's metadata comes with it
                report.metadata_updated.append(plan.item_id)
            metadata_events.append((plan.item_id, {"note": note, **update.metadata}))
        session.execute(update_statement(_ITEM).where(_ITEM.c.id == plan.item_id).values(**values))
        report.tally.updated += 1
        report.kind_tally(draft.kind).updated += 1
    record_audits(session, actor, REVISE_ACTION, revise_events)
    record_audits(session, actor, METADATA_ACTION, metadata_events)
    store_revisions(session, revisions, check_duplicates=False)

"""Importing item files: parse, validate, find near-duplicates, store, in one transaction per file.

For each file:

1. every record is parsed and validated (``db.validation.validate_draft``) before
   anything is written;
2. if any record is invalid and ``skip_invalid`` is off, nothing from the file is
   stored and every problem is reported with its file, line or record, and field;
3. otherwise, in one transaction: records whose id is new are added, records whose
   id exists with different text become a new revision ("updated"), identical ones
   are left alone ("unchanged"); new items very similar to an existing or earlier
   item are marked as suspected duplicates (``db.dedup``); an audit event records
   the import.

Ids are ``{source}:{n}``: ``source`` defaults to a slug of the file name and ``n``
is the record's data-row number (CSV, JSONL) or 1-based index (JSON).  JSONL
records keep their own ids.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from sqlalchemy import func, insert, select, update
from sqlmodel import Session, col

from db.audit import record_event
from db.dedup import find_near_duplicates, item_text
from db.engine import Database
from db.formats import AUTO, FORMATS, FormatError, ParsedRecord, detect_format, get_format
from db.formats.base import NativeItem, first_bad_utf8_line, read_text
from db.models import Item, ItemRevision, utcnow
from db.settings import get_setting
from db.validation import ItemDraft, Problem, validate_draft
from db.vocabulary import ItemStatus

MAX_ID_LENGTH = 255
PROBLEMS_SHOWN = 50
INSERT_BATCH = 2000
_ITEM = Item.__table__  # type: ignore[attr-defined]
_REVISION = ItemRevision.__table__  # type: ignore[attr-defined]

ProgressCallback = Callable[["ImportProgress"], None]
StatusRefresher = Callable[[Session, str], object]


class _Rejected(Exception):
    """Aborts a file's transaction when problems turn up only once the database is read."""


@dataclass(frozen=True)
class ImportProgress:
    """How far the import of one file has got; ``done`` counts up to ``total`` per file."""

    path: str
    phase: str  # "validating", "checking duplicates", "writing"
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
    notes: list[str] = field(default_factory=list)  # hints and things worth knowing
    error: str | None = None  # the file as a whole could not be read
    rejected: bool = False  # invalid records and no --skip-invalid: nothing stored

    @property
    def stored(self) -> bool:
        return self.error is None and not self.rejected

    def kind_tally(self, kind: str) -> Tally:
        return self.by_kind.setdefault(kind, Tally())

    def problem_lines(self, limit: int = PROBLEMS_SHOWN) -> list[str]:
        """The problems to show a person: the first ``limit``, then how many more there are."""
        lines = self.problems[:limit]
        if len(self.problems) > limit:
            lines.append(f"... and {len(self.problems) - limit} more problems in {self.path}")
        return lines


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


@dataclass
class _Existing:
    kind: str
    meta: dict[str, Any]
    prompt: str
    choices: dict[str, str]
    key: str
    explanation: str | None


@dataclass
class _Planned:
    record: ParsedRecord
    draft: ItemDraft
    item_id: str
    source: str


def source_slug(path: Path) -> str:
    """The default source name: the file name without extension, lower-case, dashes for spaces."""
    slug = re.sub(r"[^\w]+", "-", path.stem.casefold()).strip("-_")
    return slug or "items"


def _format_problem(record: ParsedRecord, problem: Problem) -> str:
    return f"{record.place}: {problem}"


def import_files(
    db: Database,
    paths: Sequence[str | Path],
    *,
    format: str = AUTO,
    source: str | None = None,
    skip_invalid: bool = False,
    duplicate_threshold: float | None = None,
    actor: str = "import",
    progress: ProgressCallback | None = None,
    refresh_status: StatusRefresher | None = None,
) -> ImportReport:
    """Import each file in its own transaction; see the module docstring for the rules.

    ``duplicate_threshold`` defaults to the ``duplicate_threshold`` setting.
    ``refresh_status(session, item_id)`` is called for items that got a new revision
    so their status follows the review rules (the CLI passes
    ``reviewer.item_status.refresh_item_status``); without it their status is kept.
    """
    if format != AUTO and format not in FORMATS:
        raise ValueError(f"unknown format '{format}' (known: auto, {', '.join(FORMATS)})")
    if source is not None and not source.strip():
        raise ValueError("--source must not be empty")
    report = ImportReport()
    sources_seen: dict[str, str] = {}
    for raw_path in paths:
        path = Path(raw_path)
        file_report = FileReport(path=str(path))
        report.files.append(file_report)
        _import_one(
            db,
            path,
            file_report,
            format_name=format,
            source=source,
            sources_seen=sources_seen,
            skip_invalid=skip_invalid,
            duplicate_threshold=duplicate_threshold,
            actor=actor,
            progress=progress,
            refresh_status=refresh_status,
        )
    return report


def _import_one(
    db: Database,
    path: Path,
    report: FileReport,
    *,
    format_name: str,
    source: str | None,
    sources_seen: dict[str, str],
    skip_invalid: bool,
    duplicate_threshold: float | None,
    actor: str,
    progress: ProgressCallback | None,
    refresh_status: StatusRefresher | None,
) -> None:
    try:
        name = detect_format(path) if format_name == AUTO else format_name
        report.format = name
        report.source = source.strip() if source else source_slug(path)
        if name != "jsonl":
            # Two files with one source in one run would give the same ids to different items.
            other = sources_seen.get(report.source)
            if other is not None:
                raise FormatError(
                    str(path),
                    f"its ids would be {report.source}:N like those of {other}; "
                    "import the files one at a time with their own --source",
                )
            sources_seen[report.source] = str(path)
        records = list(get_format(name).module.read(path))
    except FormatError as error:
        report.error = str(error)
        _add_encoding_hint(path, report)
        return
    report.records = len(records)

    planned, invalid = _validate(path, records, report, progress)
    if invalid:
        report.invalid = len(invalid)
        _add_encoding_hint(path, report)
        if not skip_invalid:
            report.rejected = True
            return
    try:
        with db.transaction() as session:
            _store(
                session,
                path,
                planned,
                report,
                skip_invalid=skip_invalid,
                duplicate_threshold=duplicate_threshold,
                actor=actor,
                progress=progress,
                refresh_status=refresh_status,
            )
    except _Rejected:
        report.rejected = True
        report.tally = Tally()
        report.by_kind = {}


def _add_encoding_hint(path: Path, report: FileReport) -> None:
    try:
        line = first_bad_utf8_line(read_text(path))
    except FormatError:
        return
    if line is not None:
        report.notes.append(
            f"{path}: bytes that are not UTF-8 (first on line {line}); "
            "vetbench reads UTF-8 files only: save the file as UTF-8"
        )


def _validate(
    path: Path,
    records: list[ParsedRecord],
    report: FileReport,
    progress: ProgressCallback | None,
) -> tuple[list[_Planned], list[ParsedRecord]]:
    planned: list[_Planned] = []
    invalid: list[ParsedRecord] = []
    first_place_of_id: dict[str, str] = {}
    step = max(1, len(records) // 100)
    for position, record in enumerate(records, start=1):
        problems = list(record.problems)
        draft = record.draft
        item_id = ""
        if draft is not None:
            problems += validate_draft(draft)
            item_id = draft.item_id or f"{report.source}:{record.ordinal}"
            if len(item_id) > MAX_ID_LENGTH:
                problems.append(Problem("id", f"is longer than {MAX_ID_LENGTH} characters"))
            elif item_id in first_place_of_id:
                problems.append(
                    Problem("id", f"'{item_id}' already used at {first_place_of_id[item_id]}")
                )
            else:
                first_place_of_id[item_id] = record.place.source_ref
        if problems or draft is None:
            invalid.append(record)
            report.problems += [_format_problem(record, p) for p in problems]
        else:
            item_source = (record.native.source if record.native else "") or str(report.source)
            planned.append(_Planned(record, draft, item_id, item_source))
        if progress and (position % step == 0 or position == len(records)):
            progress(ImportProgress(str(path), "validating", position, len(records) * 3))
    return planned, invalid


def _load_existing(session: Session) -> tuple[dict[str, _Existing], list[str]]:
    """Every item's current text, keyed by id, and the ids in creation order (one query)."""
    query = (
        select(
            _ITEM.c.id,
            _ITEM.c.kind,
            _ITEM.c.meta,
            _REVISION.c.prompt,
            _REVISION.c.choices,
            _REVISION.c.key,
            _REVISION.c.explanation,
        )
        .join(
            _REVISION,
            (_REVISION.c.item_id == _ITEM.c.id) & (_REVISION.c.number == _ITEM.c.current_revision),
        )
        .order_by(_ITEM.c.created_at, _ITEM.c.id)
    )
    existing: dict[str, _Existing] = {}
    order: list[str] = []
    for row in session.execute(query):
        existing[row.id] = _Existing(
            row.kind, row.meta or {}, row.prompt, row.choices or {}, row.key, row.explanation
        )
        order.append(row.id)
    return existing, order


def _same_text(draft: ItemDraft, existing: _Existing) -> bool:
    return (
        draft.prompt == existing.prompt
        and list(draft.choices.items()) == list(existing.choices.items())
        and draft.key == existing.key
        and draft.explanation == existing.explanation
    )


def _store(
    session: Session,
    path: Path,
    planned: list[_Planned],
    report: FileReport,
    *,
    skip_invalid: bool,
    duplicate_threshold: float | None,
    actor: str,
    progress: ProgressCallback | None,
    refresh_status: StatusRefresher | None,
) -> None:
    total_units = report.records * 3
    existing, existing_order = _load_existing(session)

    added: list[_Planned] = []
    updated: list[tuple[_Planned, bool]] = []  # (record, text changed)
    late_problems = 0
    for plan in planned:
        old = existing.get(plan.item_id)
        if old is None:
            added.append(plan)
        elif old.kind != plan.draft.kind:
            late_problems += 1
            report.problems.append(
                _format_problem(
                    plan.record,
                    Problem(
                        "kind",
                        f"item {plan.item_id} exists as a {old.kind} item; "
                        f"an import cannot make it {plan.draft.kind}",
                    ),
                )
            )
        elif not _same_text(plan.draft, old):
            updated.append((plan, True))
        elif plan.draft.meta != old.meta:
            updated.append((plan, False))
        else:
            report.tally.unchanged += 1
            report.kind_tally(plan.draft.kind).unchanged += 1
    if late_problems:
        report.invalid += late_problems
        if not skip_invalid:
            raise _Rejected()

    threshold = (
        float(duplicate_threshold)
        if duplicate_threshold is not None
        else float(get_setting(session, "duplicate_threshold"))
    )
    if progress:
        progress(ImportProgress(str(path), "checking duplicates", report.records, total_units))
    revised = [plan for plan, changed in updated if changed]
    duplicates = _find_duplicates(added, revised, existing, existing_order, threshold)
    if progress:
        progress(ImportProgress(str(path), "writing", report.records * 2, total_units))

    _insert_added(session, path, added, duplicates, actor, report, progress, total_units)
    _apply_updates(session, path, updated, duplicates, actor, report, refresh_status)
    for plan, _changed in updated:
        report.tally.updated += 1
        report.kind_tally(plan.draft.kind).updated += 1
    _link_stated_duplicates(session, added, revised, existing, report)

    if report.tally.added or report.tally.updated:
        record_event(
            session,
            actor,
            "import",
            str(path.name),
            format=report.format,
            source=report.source,
            added=report.tally.added,
            updated=report.tally.updated,
            unchanged=report.tally.unchanged,
            invalid=report.invalid,
            duplicates=report.tally.duplicates,
        )
    if progress:
        progress(ImportProgress(str(path), "writing", total_units, total_units))


def _find_duplicates(
    added: list[_Planned],
    revised: list[_Planned],
    existing: dict[str, _Existing],
    existing_order: list[str],
    threshold: float,
) -> dict[str, tuple[str, float]]:
    """Item id -> (suspected original's id, similarity), for new items and revised texts.

    A revised item (re-imported with other text) is checked with its new text against
    every other item, and new items are checked against that new text, not the old.
    """
    if not added and not revised:
        return {}
    revised_ids = {plan.item_id for plan in revised}
    stored_ids = [item_id for item_id in existing_order if item_id not in revised_ids]
    checked = revised + added
    ids = stored_ids + [plan.item_id for plan in checked]
    texts = [item_text(existing[i].prompt, existing[i].choices) for i in stored_ids]
    texts += [item_text(plan.draft.prompt, plan.draft.choices) for plan in checked]
    matches = find_near_duplicates(texts, threshold=threshold, first_new=len(stored_ids))
    found: dict[str, tuple[str, float]] = {}
    for plan_index, plan in enumerate(checked, start=len(stored_ids)):
        native = plan.record.native
        match = matches.get(plan_index)
        if match is None or (native is not None and native.states_duplicate):
            continue  # a JSONL record that states its duplicate fields keeps them
        found[plan.item_id] = (ids[match.of], match.similarity)
    return found


def _timestamps(count: int) -> Iterable[datetime]:
    # One import happens at one moment, but items are listed and exported in creation
    # order: a microsecond apart they keep the file's order (ids like x:10 sort before x:2).
    start = utcnow()
    return (start + timedelta(microseconds=i) for i in range(count))


def _insert_added(
    session: Session,
    path: Path,
    added: list[_Planned],
    duplicates: dict[str, tuple[str, float]],
    actor: str,
    report: FileReport,
    progress: ProgressCallback | None,
    total_units: int,
) -> None:
    item_rows: list[dict[str, Any]] = []
    revision_rows: list[dict[str, Any]] = []
    for plan, created_at in zip(added, _timestamps(len(added)), strict=True):
        draft, native = plan.draft, plan.record.native
        duplicate_of, similarity = duplicates.get(plan.item_id, (None, None))
        item_rows.append(
            {
                "id": plan.item_id,
                "kind": draft.kind,
                "source": plan.source,
                "source_ref": draft.source_ref,
                "language": draft.language,
                "status": native.status if native else ItemStatus.PENDING.value,
                "current_revision": native.current_revision if native else 1,
                "suspected_duplicate_of": duplicate_of,
                "duplicate_similarity": similarity,
                "meta": dict(draft.meta),
                "created_at": (native.created_at if native else None) or created_at,
            }
        )
        revision_rows += _revision_rows(plan, native, actor, created_at)
        report.tally.added += 1
        kind_tally = report.kind_tally(draft.kind)
        kind_tally.added += 1
        if duplicate_of is not None:
            report.tally.duplicates += 1
            kind_tally.duplicates += 1
    # Progress: this phase runs from 2/3 to 3/3 of the file's units.
    rows_total = max(1, len(item_rows) + len(revision_rows))
    rows_written = 0
    for table, rows in ((_ITEM, item_rows), (_REVISION, revision_rows)):
        for start in range(0, len(rows), INSERT_BATCH):
            batch = rows[start : start + INSERT_BATCH]
            session.execute(insert(table), batch)
            rows_written += len(batch)
            if progress:
                done = report.records * 2 + report.records * rows_written // rows_total
                progress(ImportProgress(str(path), "writing", done, total_units))


def _revision_rows(
    plan: _Planned, native: NativeItem | None, actor: str, created_at: datetime
) -> list[dict[str, Any]]:
    draft = plan.draft
    if native is None:
        return [
            {
                "item_id": plan.item_id,
                "number": 1,
                "prompt": draft.prompt,
                "choices": dict(draft.choices),
                "key": draft.key,
                "explanation": draft.explanation,
                "author": actor,
                "change_note": "import",
                "provenance": dict(draft.provenance),
                "created_at": created_at,
            }
        ]
    rows = []
    for revision in native.revisions:
        is_current = revision.number == native.current_revision
        rows.append(
            {
                "item_id": plan.item_id,
                "number": revision.number,
                "prompt": revision.prompt,
                "choices": dict(revision.choices),
                # the current revision's key was canonicalised by validation
                "key": draft.key if is_current else revision.key,
                "explanation": revision.explanation,
                "author": revision.author,
                "change_note": revision.change_note,
                "provenance": dict(revision.provenance),
                "created_at": revision.created_at or created_at,
            }
        )
    return rows


def _apply_updates(
    session: Session,
    path: Path,
    updated: list[tuple[_Planned, bool]],
    duplicates: dict[str, tuple[str, float]],
    actor: str,
    report: FileReport,
    refresh_status: StatusRefresher | None,
) -> None:
    """A new revision for each changed text; new meta for each changed meta.

    A changed text's suspected duplicate is worked out again from the new text
    (a JSONL record that states it is linked by ``_link_stated_duplicates``).
    """
    if not updated:
        return
    changed_ids = [plan.item_id for plan, changed in updated if changed]
    newest: dict[str, int] = {}
    for start in range(0, len(changed_ids), 500):
        chunk = changed_ids[start : start + 500]
        query = (
            select(_REVISION.c.item_id, func.max(_REVISION.c.number))
            .where(_REVISION.c.item_id.in_(chunk))
            .group_by(_REVISION.c.item_id)
        )
        newest.update({item_id: number for item_id, number in session.execute(query)})
    now = utcnow()
    for plan, changed in updated:
        draft = plan.draft
        values: dict[str, Any] = {"meta": dict(draft.meta)}
        if changed:
            number = newest[plan.item_id] + 1
            session.execute(
                insert(_REVISION),
                [
                    {
                        "item_id": plan.item_id,
                        "number": number,
                        "prompt": draft.prompt,
                        "choices": dict(draft.choices),
                        "key": draft.key,
                        "explanation": draft.explanation,
                        "author": actor,
                        "change_note": f"re-import: {path.name}",
                        "provenance": dict(draft.provenance),
                        "created_at": now,
                    }
                ],
            )
            values["current_revision"] = number
            native = plan.record.native
            if native is None or not native.states_duplicate:  # stated links come later
                duplicate_of, similarity = duplicates.get(plan.item_id, (None, None))
                values["suspected_duplicate_of"] = duplicate_of
                values["duplicate_similarity"] = similarity
                if duplicate_of is not None:
                    report.tally.duplicates += 1
                    report.kind_tally(draft.kind).duplicates += 1
        session.execute(update(_ITEM).where(_ITEM.c.id == plan.item_id).values(**values))
        if changed:
            record_event(session, actor, "revise", plan.item_id, note=f"re-import: {path.name}")
    if refresh_status is not None:
        session.flush()
        for plan, changed in updated:
            if changed:
                refresh_status(session, plan.item_id)


def _link_stated_duplicates(
    session: Session,
    added: list[_Planned],
    revised: list[_Planned],
    existing: dict[str, _Existing],
    report: FileReport,
) -> None:
    """JSONL records name their duplicate themselves; link those once every item is stored.

    A revised record stating no duplicate clears the link its item had (new items
    start without one).
    """
    known = set(existing) | {plan.item_id for plan in added}
    dangling: list[str] = []
    revised_ids = {plan.item_id for plan in revised}
    for plan in added + revised:
        native = plan.record.native
        if native is None or not native.states_duplicate:
            continue
        if native.suspected_duplicate_of is None:
            if plan.item_id in revised_ids:
                session.execute(
                    update(_ITEM)
                    .where(col(Item.id) == plan.item_id)
                    .values(suspected_duplicate_of=None, duplicate_similarity=None)
                )
            continue
        if native.suspected_duplicate_of not in known:
            dangling.append(f"{plan.item_id} -> {native.suspected_duplicate_of}")
            continue
        session.execute(
            update(_ITEM)
            .where(col(Item.id) == plan.item_id)
            .values(
                suspected_duplicate_of=native.suspected_duplicate_of,
                duplicate_similarity=native.duplicate_similarity,
            )
        )
        report.tally.duplicates += 1
        report.kind_tally(plan.draft.kind).duplicates += 1
    if dangling:
        report.notes.append(
            f"{report.path}: {len(dangling)} suspected-duplicate links name items that are "
            f"not in the database and were left out: {', '.join(dangling[:5])}"
            + (" ..." if len(dangling) > 5 else "")
        )

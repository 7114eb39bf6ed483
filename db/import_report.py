"""What an import tells: its progress while it runs, and what happened to each file.

``db.importer`` fills these in; the command line prints them (and ``--json`` writes
them), and a failed file's report says why, line by line.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from db.formats import ParsedRecord
from db.import_statuses import StatedStatus
from db.json_types import JsonObject, attributes_json, fields_json
from db.validation import Problem

PROBLEMS_SHOWN = 50
PROBLEMS_KEPT = 1000  # more are counted, not kept: a wholly wrong file stays small in memory


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
    # the sources the valid records were stored under: ``source`` for every format but
    # JSONL, whose records may name their own (an export of several sources)
    record_sources: set[str] = field(default_factory=set)

    @property
    def stored(self) -> bool:
        return self.error is None and not self.rejected

    @property
    def none_valid(self) -> bool:
        """Stored, yet every record was invalid (skipped with --skip-invalid): nothing came in."""
        return self.stored and self.invalid == self.records

    @property
    def imported(self) -> bool:
        """Stored with at least one valid record: the file counts as imported."""
        return self.stored and not self.none_valid

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

    def to_json(self) -> JsonObject:
        """As ``import --json`` prints each file."""
        return {
            **attributes_json(self, "path", "format", "source", "stored", "records", "invalid"),
            **fields_json(self.tally),
            **attributes_json(self, "revised", "back_to_review", "error", "problems", "notes"),
            **attributes_json(self, "metadata_updated"),  # a later key, kept last
        }

    def forget_writes(self) -> None:
        """The transaction was rolled back: nothing was added, updated or revised."""
        self.tally = Tally()
        self.by_kind = {}
        self.revised = []
        self.back_to_review = []
        self.metadata_updated = []
        self.stated_statuses = []
        self.record_sources = set()

    def reject(self, record: ParsedRecord, problems: list[Problem]) -> None:
        """The record is invalid: count it, and keep its problems with its place."""
        self.invalid += 1
        for problem in problems:
            self.add_problem(f"{record.place}: {problem}")
        if any("not valid UTF-8" in problem.message for problem in problems) and not any(
            "UTF-8" in note for note in self.notes
        ):
            self.notes.append(
                f"{self.path}: bytes that are not UTF-8 (first on {record.place.source_ref}); "
                "vetbench reads UTF-8 files only: save the file as UTF-8"
            )


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
        """True when every file was stored (invalid records may have been skipped on
        request, not all of a file's)."""
        return all(report.imported for report in self.files)

    def to_json(self) -> list[JsonObject]:
        """As ``import --json`` prints it: one object a file."""
        return [report.to_json() for report in self.files]

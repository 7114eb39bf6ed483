"""The one code path for judgments, undo and edits, used by the review TUI and the CLI.

Every function here validates first and then writes everything it changes in
ONE transaction (judgment, audit event, item status, claim; and the edit that a
flawed verdict may bring), so a refused or failed call changes nothing and a
submitted judgment survives a ``kill -9``; how a gold judgment compares is read after
its commit.  Refusals raise :class:`JudgmentRefused` with a message a person can act on.
The checks (``reviewer.judgment_checks``) collect every refusal of a judgment, in one
order: a single judgment is refused with the first, a row of a batch with all of them
(:class:`BatchRefused`).

Verdicts a lead must act on carry their details: ``flawed`` an edit or a comment
(what is wrong), ``sensitive`` a comment (what is sensitive), ``duplicate`` the id
of the copied item.  Each judgment records the guidelines version in force and,
for a gold item, which gold it was measured against (``db.gold``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Protocol

from sqlalchemy import delete
from sqlmodel import Session, col, select

from db.audit import record_audit
from db.engine import Database
from db.gold import GoldOutcome, judged_gold_outcome, served_gold_id
from db.guidelines import current_guidelines_version
from db.item_status import refresh_item_status, refresh_judged_items
from db.items import ItemSnapshot, add_revision, locked_item, no_item_message
from db.json_types import JsonObject, attributes_json
from db.models import Claim, Item, ItemRevision, Judgment, Person, utcnow
from db.people import ensure_person, find_person
from db.qualification import gate
from db.retry import retry_transient
from db.reveals import StoredReveal
from db.rows import from_row
from db.vocabulary import JUDGE_ACTION, RETRACT_ACTION, ItemKind, Verdict
from db.words import counted
from reviewer.blind_answers import reveal_once
from reviewer.judgment_checks import (
    Checked,
    ItemEdit,
    JudgmentInput,
    JudgmentRefused,
    check_seconds,
    checked_details,
    checked_in_database,
    checked_or_refused,
)

__all__ = [
    "BatchProblem",
    "BatchRefused",
    "BatchStored",
    "ItemEdit",
    "JudgmentInput",
    "JudgmentReceipt",
    "JudgmentRefused",
    "JudgmentView",
    "ProposedKey",
    "RetractionReceipt",
    "RevisionReceipt",
    "edit_item",
    "proposed_keys",
    "retract_last_judgment",
    "store_judgment",
    "submit_judgment",
    "submit_judgments",
]


@dataclass(frozen=True)
class BatchProblem:
    """Why one row of a batch was refused: where (file and line), which field, what."""

    file: str
    line: int
    field: str
    message: str

    def __str__(self) -> str:
        where = f"{self.file}: line {self.line}"
        return (
            f"{where}: {self.field}: {self.message}" if self.field else f"{where}: {self.message}"
        )


class BatchRefused(JudgmentRefused):
    """A batch with refused rows: nothing of it was stored; ``problems`` lists every one."""

    def __init__(self, problems: Sequence[BatchProblem], rows: int) -> None:
        self.problems = tuple(sorted(problems, key=lambda p: (p.file, p.line)))
        lines = {(p.file, p.line) for p in self.problems}
        files = sorted({p.file for p in self.problems})
        self.summary = (
            f"{', '.join(files)}: {len(lines)} of {counted(rows, 'row')} "
            "refused; nothing was stored"
        )
        more = f" (and {len(self.problems) - 1} more)" if len(self.problems) > 1 else ""
        super().__init__(f"{self.summary}; {self.problems[0]}{more}")


@dataclass(frozen=True)
class JudgmentView:
    """One annotator's active judgment of one revision, as plain data."""

    annotator: str
    revision: int
    blind_answer: str
    verdict: str
    alternative_orders: tuple[str, ...]
    corrected_key: str | None
    duplicate_of: str | None
    comment: str
    seconds: float
    created_at: datetime
    matches_key: bool  # the blind answer equals the judged revision's key


class StatedJudgment(Protocol):
    """What a judgment says of its item's key."""

    @property
    def blind_answer(self) -> str: ...
    @property
    def verdict(self) -> str: ...
    @property
    def corrected_key(self) -> str | None: ...


@dataclass(frozen=True)
class ProposedKey:
    """A key other than the item's that judgments point at."""

    answer: str
    times: int  # the judgments that point at it
    asked_for: bool  # one of them did not keep the key: it asks for this one


def proposed_keys(key: str, judgments: Iterable[StatedJudgment]) -> list[ProposedKey]:
    """The keys other than ``key`` the judgments point at (each one's corrected key, else
    its blind answer), the most often first (ties: in the judgments' order).  Only a
    judgment that did not keep the key asks for another: an annotator who answered
    otherwise blind, then saw the key and kept it, said the key is right.  Triage
    suggests a key by this, and F3 offers one."""
    stated = [(j.corrected_key or j.blind_answer, j.verdict != Verdict.KEEP) for j in judgments]
    times = Counter(answer for answer, _asks in stated if answer != key)
    asked = {answer for answer, asks in stated if asks}
    return [ProposedKey(answer, n, answer in asked) for answer, n in times.most_common()]


@dataclass(frozen=True)
class RevisionReceipt:
    """A new revision made by an edit."""

    item_id: str
    old_revision: int
    new_revision: int
    item_status: str


@dataclass(frozen=True)
class JudgmentReceipt:
    """What was stored for one submitted judgment."""

    judgment_id: int
    item_id: str
    revision_number: int
    annotator: str
    verdict: Verdict
    blind_answer: str
    matches_key: bool
    item_status: str
    guidelines_version: int | None = None
    gold: GoldOutcome | None = None  # a gold item: how the judgment compares
    revision: RevisionReceipt | None = None  # the edit made with a flawed verdict

    def to_json(self) -> JsonObject:
        """As ``judge --json`` prints it."""
        names: tuple[str, ...] = ("judgment_id", "item_id", "revision_number", "annotator")
        names += ("verdict", "blind_answer", "matches_key", "item_status")
        return attributes_json(self, *names, renamed={"revision_number": "revision"})


@dataclass(frozen=True)
class RetractionReceipt:
    """The judgment an undo retracted; its item is back in the queue (at its current
    revision; an edit the annotator made after judging stays)."""

    judgment_id: int
    item_id: str
    revision_number: int
    verdict: str
    item_status: str
    current_revision: int = 0  # the item's revision now (0: the judged one)
    edited_by_you: bool = False  # the annotator wrote the current revision
    # What the undone judgment said beyond its verdict: offered again when it is redone.
    comment: str = ""
    alternative_orders: tuple[str, ...] = ()
    corrected_key: str | None = None
    duplicate_of: str | None = None

    @property
    def revision_note(self) -> str:
        """What happens to a later revision ("" when the judged one is still current)."""
        if not self.current_revision or self.current_revision == self.revision_number:
            return ""
        who = "your edit" if self.edited_by_you else "its newer text"
        note = f"{who}, revision {self.current_revision}, stays (undo never removes a revision)"
        if self.edited_by_you:
            note += ": others judge it, since you know its key"
        return note

    def describe(self) -> str:
        """``retracted your flawed on econ:1 (revision 1); ...``, for the app and the CLI."""
        text = f"retracted your {self.verdict} on {self.item_id} (revision {self.revision_number})"
        return f"{text}; {self.revision_note}" if self.revision_note else text


def submit_judgment(
    db: Database,
    annotator_name: str,
    item_id: str,
    *,
    revision_number: int | None,
    blind_answer: str,
    verdict: str | Verdict,
    alternative_orders: Sequence[str] = (),
    corrected_key: str | None = None,
    duplicate_of: str | None = None,
    comment: str = "",
    seconds: float = 0.0,
    edit: ItemEdit | None = None,
) -> JudgmentReceipt:
    """Validate and store one judgment of the item's current revision, in one transaction.

    ``revision_number`` is the revision the annotator saw; ``None`` means the
    current one (the CLI without ``--revision``).  Refuses (``JudgmentRefused``)
    a bad answer, missing or misplaced verdict fields or details, a revision that
    is no longer current, and a second active judgment of the same revision by the
    same person.  Stores the judgment (with the guidelines version, and its gold if
    the revision is gold), an audit event and the new item status, and releases the
    annotator's claim on the item.  ``edit`` (with the verdict flawed) is stored in
    the same transaction as a new revision: the judgment stands for the revision
    the annotator saw, the edit goes to the others.
    """
    given = JudgmentInput(
        item_id,
        blind_answer,
        verdict,
        revision_number,
        tuple(alternative_orders),
        corrected_key,
        duplicate_of,
        comment,
        seconds,
    )
    return store_judgment(db, annotator_name, given, edit=edit)


def store_judgment(
    db: Database, annotator_name: str, given: JudgmentInput, *, edit: ItemEdit | None = None
) -> JudgmentReceipt:
    """``submit_judgment`` for a judgment already gathered as a :class:`JudgmentInput`
    (the review app builds one as the annotator answers, verdict and details)."""
    refused: list[JudgmentRefused] = []
    verdict, edit = checked_details(given, edit, refused)
    if refused:
        raise refused[0]

    assert verdict is not None  # else refused

    def store() -> _Stored:
        with db.transaction() as session:
            checked = checked_or_refused(session, annotator_name, given, verdict)
            return _store_judgment(session, given, verdict, checked, edit)

    return _told_gold(db, [retry_transient(store)])[0]


@dataclass(frozen=True)
class BatchStored:
    """What a batch stored: its judgments, and the blind answers given without a verdict."""

    judgments: tuple[JudgmentReceipt, ...]
    answered: tuple[StoredReveal, ...] = ()  # new blind answers: their keys may be shown now
    repeated: int = 0  # blind answers stored before, given again: they wait for a verdict
    judged_before: int = 0  # judgments stored before, given again as they are: left alone


def submit_judgments(
    db: Database,
    annotator_name: str,
    rows: Sequence[tuple[int, JudgmentInput]],
    *,
    file: str,
    problems: Sequence[BatchProblem] = (),
    blind_lines: frozenset[int] = frozenset(),
) -> BatchStored:
    """Store a batch of judgments, each by line of ``file``, all or nothing, in one transaction.

    Every row goes through the rules of ``submit_judgment`` (the same checks, the
    same judgment, audit event, status and claim), in file order, and every refusal
    is collected with its line and field, all of a row's, not just the first: then (or
    when ``problems``, refusals found while reading the file, possibly of the same rows,
    are given) the transaction is rolled back and :class:`BatchRefused` lists them all.
    A field that ``problems`` refuses on a line is not refused there again (a row read
    without its answer or verdict comes with it empty, so that the rest is checked); a
    row with any problem is not stored.  An item judged twice in one batch is refused
    at its second line.

    The rows on ``blind_lines`` give a blind answer and no verdict (a judging sheet's
    first pass): each is checked as a judgment's answer is and stored as the key the
    person is now allowed to see (``db.reveals``), unless the same answer is stored
    already; a different one is refused, as for a judgment.  A row that gives the person's
    stored judgment again, as it is, is left alone and counted (a sheet loaded again after
    more of its rows were filled); one that differs from it is refused.
    """
    reported = {(problem.line, problem.field) for problem in problems}
    reported_lines = {problem.line for problem in problems}

    def store() -> tuple[list[_Stored], list[StoredReveal], int, int]:
        found = list(problems)
        receipts: list[_Stored] = []
        answered: list[StoredReveal] = []
        repeated = judged_before = 0
        first_line: dict[str, int] = {}
        with db.transaction() as session:
            for line, given in rows:
                refused: list[JudgmentRefused] = []
                again = bool(given.item_id) and first_line.setdefault(given.item_id, line) != line
                if again:
                    refused.append(
                        JudgmentRefused(
                            f"{given.item_id} is judged on line {first_line[given.item_id]} "
                            "of this file already",
                            "item_id",
                        )
                    )
                verdict: Verdict | None = None
                if line in blind_lines:
                    check_seconds(given.seconds, refused)
                else:
                    verdict, _ = checked_details(given, None, refused)
                checked = checked_in_database(
                    session,
                    annotator_name,
                    given,
                    verdict,
                    refused,
                    judged_above=again,
                    from_file=True,
                )
                found += [
                    BatchProblem(file, line, error.field, error.in_file)
                    for error in refused
                    if (line, error.field) not in reported
                ]
                if checked is None or line in reported_lines:
                    continue
                if checked.stored_before:
                    judged_before += 1
                elif line not in blind_lines:
                    assert verdict is not None  # else refused
                    receipts.append(_store_judgment(session, given, verdict, checked, None))
                elif (revealed := reveal_once(session, checked, given.seconds)) is not None:
                    answered.append(revealed)
                else:
                    repeated += 1
            if found:
                lines = {line for line, _ in rows} | reported_lines
                raise BatchRefused(found, len(lines))
        return receipts, answered, repeated, judged_before

    stored, answered, repeated, judged_before = retry_transient(store)
    return BatchStored(tuple(_told_gold(db, stored)), tuple(answered), repeated, judged_before)


_Stored = tuple["JudgmentReceipt", tuple[int, ItemKind] | None]
"""A judgment just stored and, if it was gold, its gold id and the item's kind."""


def _told_gold(db: Database, stored: Sequence[_Stored]) -> list[JudgmentReceipt]:
    """The receipts of committed judgments, each gold one with how it compares: the
    database tells a gold answer only for a judgment no rollback can take back
    (``db.guards``).  A calibration answer may qualify them: their items are refreshed."""
    gold = [(receipt, known) for receipt, known in stored if known is not None]
    if not gold:
        return [receipt for receipt, _known in stored]

    def tell() -> dict[int, GoldOutcome]:
        with db.transaction() as session:
            person = find_person(session, gold[0][0].annotator)
            if person is not None and person.id is not None and gate(session).on:
                refresh_judged_items(session, person.id)
            return {
                receipt.judgment_id: judged_gold_outcome(
                    session, gold_id, kind, receipt.blind_answer, receipt.verdict.value
                )
                for receipt, (gold_id, kind) in gold
            }

    told = retry_transient(tell)
    return [replace(receipt, gold=told.get(receipt.judgment_id)) for receipt, _known in stored]


def _store_judgment(
    session: Session,
    given: JudgmentInput,
    verdict: Verdict,
    checked: Checked,
    edit: ItemEdit | None,
) -> _Stored:
    """Store a judgment that passed every check: the judgment, its audit event, the item's
    new status, the edit made with it, and the annotator's claim released."""
    item, person, blind = checked.item, checked.person, checked.blind_answer
    item_id, current = item.id, item.revision
    assert item.revision_id is not None and person.id is not None  # stored rows have ids
    gold_id = served_gold_id(session, item_id, current)
    guidelines = current_guidelines_version(session)
    judgment = Judgment(
        item_id=item_id,
        revision_id=item.revision_id,
        revision_number=current,
        annotator_id=person.id,
        blind_answer=blind,
        verdict=verdict,
        alternative_orders=checked.alternatives,
        corrected_key=checked.corrected_key,
        duplicate_of=checked.duplicate_of,
        comment=given.comment.strip(),
        seconds=round(given.seconds, 3),
        guidelines_version=guidelines,
        gold_id=gold_id,
    )
    session.add(judgment)
    session.flush()
    assert judgment.id is not None
    # What the verdict proposes, where it proposes anything: the trail then tells what a
    # judgment said without a look at the judgment table (withheld from other annotators
    # with the verdict, db.audit.JUDGMENT_CONTENT).
    proposed = {
        "corrected_key": checked.corrected_key,
        "duplicate_of": checked.duplicate_of,
        "alternative_orders": list(checked.alternatives),
    }
    record_audit(
        session,
        person.name,
        JUDGE_ACTION,
        item_id,
        judgment_id=judgment.id,
        revision=current,
        verdict=verdict.value,
        blind_answer=blind,
        guidelines_version=guidelines,
        **({"gold_id": gold_id} if gold_id is not None else {}),
        **{key: value for key, value in proposed.items() if value},
    )
    status = refresh_item_status(session, item_id)
    revision = None
    if edit is not None:
        revision = _store_edit(session, person, item, edit)
        status = revision.item_status
    session.execute(
        delete(Claim).where(col(Claim.item_id) == item_id, col(Claim.person_id) == person.id)
    )
    receipt = JudgmentReceipt(
        judgment_id=judgment.id,
        item_id=item_id,
        revision_number=current,
        annotator=person.name,
        verdict=verdict,
        blind_answer=blind,
        matches_key=blind == item.key,
        item_status=status,
        guidelines_version=guidelines,
        revision=revision,
    )
    return receipt, None if gold_id is None else (gold_id, item.kind)


def retract_last_judgment(db: Database, annotator_name: str) -> RetractionReceipt:
    """Undo: retract this person's newest active judgment; its item returns to the queue.

    Nothing is deleted: the row keeps its content with ``retracted`` set.
    """
    return retract_judgment(db, annotator_name, None)


def retract_judgment(
    db: Database, annotator_name: str, judgment_id: int | None
) -> RetractionReceipt:
    """Undo one judgment of this person's: ``judgment_id`` (the one of the item the app
    shows), or their newest active one when None; its item returns to the queue.  A
    judgment that is not theirs or is undone already is refused, never another undone."""
    with db.transaction() as session:
        person = find_person(session, annotator_name.strip())
        judgment = None
        if person is not None:
            query = select(Judgment).where(
                Judgment.annotator_id == person.id, col(Judgment.retracted).is_(False)
            )
            if judgment_id is not None:
                query = query.where(col(Judgment.id) == judgment_id)
            judgment = session.exec(
                query.order_by(col(Judgment.created_at).desc(), col(Judgment.id).desc())
            ).first()
        if judgment is None and judgment_id is not None:
            raise JudgmentRefused(
                f"judgment {judgment_id} is not one of {annotator_name}'s in force "
                "(undone already?): nothing undone"
            )
        if person is None or judgment is None:
            raise JudgmentRefused(f"{annotator_name} has no judgment to undo")
        assert judgment.id is not None
        judgment.retracted = True
        judgment.retracted_at = utcnow()
        session.add(judgment)
        session.flush()
        record_audit(
            session,
            person.name,
            RETRACT_ACTION,
            judgment.item_id,
            judgment_id=judgment.id,
            revision=judgment.revision_number,
        )
        status = refresh_item_status(session, judgment.item_id)
        item = session.get(Item, judgment.item_id)
        assert item is not None
        author = session.exec(
            select(col(ItemRevision.author)).where(
                col(ItemRevision.item_id) == item.id,
                col(ItemRevision.number) == item.current_revision,
            )
        ).first()
        later = item.current_revision != judgment.revision_number
        return from_row(
            RetractionReceipt,
            judgment,
            judgment_id=judgment.id,
            item_status=status,
            current_revision=item.current_revision,
            edited_by_you=later and author == person.name,
            alternative_orders=tuple(judgment.alternative_orders),
        )


def edit_item(
    db: Database,
    author: str,
    item_id: str,
    edit: ItemEdit,
    *,
    base_revision: int | None = None,
) -> RevisionReceipt:
    """Store an edit as a new revision (the old one is kept) after validating it like an import.

    Fields the edit leaves as ``None`` keep their current text.  ``base_revision`` is the
    revision the editor started from: when someone else revised the item in the
    meantime the edit is refused rather than laid over text the editor never saw.
    The new revision has no judgments yet, so the item's status is refreshed
    (normally back to pending).
    """
    if not edit.note.strip():
        raise JudgmentRefused("an edit needs a short note saying what changed and why")
    with db.transaction() as session:
        item = locked_item(session, item_id)
        if item is None:
            raise JudgmentRefused(no_item_message(session, item_id))
        if base_revision is not None and item.revision != base_revision:
            raise JudgmentRefused(
                f"item {item_id} was revised by someone else while you edited it (now "
                f"revision {item.revision}, you started from {base_revision}); "
                "open it again to see their change"
            )
        try:
            person = ensure_person(session, author)
        except ValueError as error:
            raise JudgmentRefused(str(error)) from None
        return _store_edit(session, person, item, edit)


def _store_edit(
    session: Session, person: Person, item: ItemSnapshot, edit: ItemEdit
) -> RevisionReceipt:
    """Validate ``edit`` of ``item`` (locked by the caller) and store it as a new revision."""
    draft, problems = edit.problems(item)
    if problems:
        raise JudgmentRefused(f"item {item.id}: " + "; ".join(str(problem) for problem in problems))
    unchanged = (
        draft.prompt == item.prompt
        and draft.choices == item.choices
        and draft.key == item.key
        and draft.explanation == item.explanation
        and draft.kind == item.kind
    )
    if unchanged:
        raise JudgmentRefused(f"item {item.id}: nothing changed, so no new revision was made")
    revision = add_revision(
        session,
        item.id,
        author=person.name,
        change_note=edit.note.strip(),
        prompt=draft.prompt,
        choices=draft.choices,
        key=draft.key,
        explanation=draft.explanation,
        kind=ItemKind(draft.kind),
    )
    status = refresh_item_status(session, item.id)
    return RevisionReceipt(
        item_id=item.id,
        old_revision=item.revision,
        new_revision=revision.number,
        item_status=status,
    )

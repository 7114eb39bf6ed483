"""What a judgment is given, and every check of it before it is stored: the verdict and
the fields and details it needs, the seconds, an edit's text, and against the database
the item, its revision, the answer, the duplicated item, an earlier judgment of the
same revision, and the blind answer stored when the person saw the revision's key
(``db.reveals``): a judgment keeps that one, never an answer given after the key.

The checks collect every refusal (:class:`JudgmentRefused`, with the field it is
about) in one order, instead of stopping at the first: ``reviewer.judging`` refuses a
single judgment with the first and a row of a batch with all of them.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from sqlmodel import Session, col, select

from db.answers import AnswerError, format_answer, parse_answer
from db.errors import VetbenchError
from db.items import ItemSnapshot, locked_item, no_item_message
from db.models import Item, Judgment, Person
from db.people import ensure_person, find_person
from db.reveals import StoredReveal, reveal_of
from db.validation import ItemDraft, Problem, kind_change_problems, validate_draft
from db.vocabulary import ItemKind, Verdict, verdict_applies


class JudgmentRefused(VetbenchError, ValueError):
    """A judgment, undo or edit that cannot be accepted; the message says why.

    ``field`` names what was refused as a batch file names it (``answer``, ``verdict``,
    ``alt``, ``corrected``, ``duplicate_of``, ``comment``, ``seconds``, ``revision``,
    ``item_id``; empty when no one field is at fault).
    """

    def __init__(self, message: str, field: str = "", *, fill_field: bool = False) -> None:
        # ``fill_field``: the message asks for ``field``, which the command line gives as
        # an option (--corrected) and a batch file as a column (corrected).
        super().__init__(f"{message} (--{field.replace('_', '-')})" if fill_field else message)
        self.field = field
        self.in_file = f"{message} (the {field} column)" if fill_field else str(self)
        """The message as a batch file's reader needs it: the column to fill, not the option."""


@dataclass(frozen=True)
class JudgmentInput:
    """One judgment as given, before any check: the arguments of ``submit_judgment``
    and one row of a batch (``submit_judgments``)."""

    item_id: str
    blind_answer: str
    verdict: str | Verdict
    revision_number: int | None = None  # the revision judged; None: the current one
    alternative_orders: tuple[str, ...] = ()
    corrected_key: str | None = None
    duplicate_of: str | None = None
    comment: str = ""
    seconds: float = 0.0


@dataclass(frozen=True)
class ItemEdit:
    """What an edit changes and why: a field left None keeps its stored text."""

    note: str
    prompt: str | None = None
    choices: dict[str, str] | None = None
    key: str | None = None
    explanation: str | None = None
    kind: ItemKind | None = None  # a new kind, within what the answer allows

    @property
    def changes_nothing(self) -> bool:
        fields = (self.prompt, self.choices, self.key, self.explanation, self.kind)
        return fields == (None,) * 5

    def draft(self, item: ItemSnapshot) -> ItemDraft:
        """``item``'s text with this edit applied, as a draft to validate like an import."""
        return ItemDraft(
            kind=(self.kind or item.kind).value,
            prompt=item.prompt if self.prompt is None else self.prompt,
            choices=dict(item.choices if self.choices is None else self.choices),
            key=item.key if self.key is None else self.key,
            explanation=item.explanation if self.explanation is None else self.explanation,
            language=item.language,
        )

    def problems(self, item: ItemSnapshot) -> tuple[ItemDraft, list[Problem]]:
        """The draft this edit makes of ``item`` (its key in canonical form when valid) and
        everything wrong with it, checked like an import, the change of kind included."""
        draft = self.draft(item)
        problems = validate_draft(draft)
        if self.kind is not None:
            problems += kind_change_problems(item.kind, self.kind)
        return draft, problems


def parse_verdict(text: str | Verdict) -> Verdict:
    """``"wrong-key"`` -> ``Verdict.WRONG_KEY``; refuses unknown verdicts, naming the known ones."""
    try:
        return Verdict(text)
    except ValueError:
        known = ", ".join(v.value for v in Verdict)
        raise JudgmentRefused(f"'{text}' is not a verdict; use one of {known}", "verdict") from None


def _parse(
    kind: ItemKind,
    text: str,
    labels: list[str],
    what: str,
    field: str,
    refused: list[JudgmentRefused],
) -> str | None:
    """``text`` as an answer in canonical form; None, with the refusal added, when it is not one."""
    try:
        return parse_answer(kind, text, labels)
    except AnswerError as error:
        refused.append(JudgmentRefused(f"{what} '{text}': {error}", field))
        return None


def _check_verdict_fields(
    kind: ItemKind,
    labels: list[str],
    key: str,
    verdict: Verdict,
    alternative_orders: Sequence[str],
    corrected_key: str | None,
    refused: list[JudgmentRefused],
) -> tuple[list[str], str | None]:
    """Check the fields that belong to one verdict, adding every refusal to ``refused``;
    returns the canonical alternatives and corrected key (meant only when none was added)."""
    answer_word = "order" if kind is ItemKind.ORDERING else "answer"
    if alternative_orders and verdict is not Verdict.AMBIGUOUS:
        refused.append(
            JudgmentRefused(f"alternative {answer_word}s go with the verdict ambiguous only", "alt")
        )
    if corrected_key is not None and verdict is not Verdict.WRONG_KEY:
        refused.append(
            JudgmentRefused("a corrected key goes with the verdict wrong-key only", "corrected")
        )
    if not verdict_applies(verdict, kind):
        refused.append(
            JudgmentRefused(
                "no-order applies to ordering items; for a multiple-choice item use "
                "ambiguous, wrong-key or flawed",
                "verdict",
            )
        )

    alternatives: list[str] = []
    if verdict is Verdict.AMBIGUOUS:
        if not alternative_orders:
            refused.append(
                JudgmentRefused(
                    # Not the key itself: `vetbench next` and `judge` keep it from whoever
                    # has not answered yet, and a refused judgment stores no answer.
                    f"the verdict ambiguous needs at least one valid {answer_word} besides the key",
                    "alt",
                    fill_field=True,
                )
            )
        for text in alternative_orders:
            alternative = _parse(kind, text, labels, f"alternative {answer_word}", "alt", refused)
            if alternative == key:
                refused.append(
                    JudgmentRefused(
                        f"alternative {answer_word} {format_answer(kind, alternative)} is the "
                        f"key itself; give the other valid {answer_word}s",
                        "alt",
                    )
                )
            elif alternative is not None and alternative not in alternatives:
                alternatives.append(alternative)

    canonical_key: str | None = None
    if verdict is Verdict.WRONG_KEY:
        if corrected_key is None or not corrected_key.strip():
            refused.append(
                JudgmentRefused(
                    "the verdict wrong-key needs the corrected key", "corrected", fill_field=True
                )
            )
        else:
            canonical_key = _parse(
                kind, corrected_key, labels, "corrected key", "corrected", refused
            )
        if canonical_key == key:
            refused.append(
                JudgmentRefused(
                    f"the corrected key {format_answer(kind, canonical_key)} is the same as "
                    "the current key",
                    "corrected",
                )
            )
    return alternatives, canonical_key


def _check_details(
    verdict: Verdict, comment: str, edit: ItemEdit | None, refused: list[JudgmentRefused]
) -> None:
    """The details a lead needs to act on a verdict: each one missing is refused."""
    if edit is not None and verdict is not Verdict.FLAWED:
        refused.append(JudgmentRefused("an edit goes with the verdict flawed only"))
    if verdict is Verdict.FLAWED and not comment.strip() and (edit is None or edit.changes_nothing):
        refused.append(
            JudgmentRefused(
                "the verdict flawed needs an edit of the text or a comment saying what is wrong",
                "comment",
                fill_field=True,
            )
        )
    if verdict is Verdict.SENSITIVE and not comment.strip():
        refused.append(
            JudgmentRefused(
                "the verdict sensitive needs a comment saying what is sensitive", "comment"
            )
        )


def _check_duplicate(
    session: Session,
    item_id: str,
    verdict: Verdict,
    duplicate_of: str | None,
    refused: list[JudgmentRefused],
) -> str | None:
    """The id of the item a duplicate copies (None for other verdicts, or when refused)."""
    if verdict is not Verdict.DUPLICATE:
        if duplicate_of is not None:
            refused.append(
                JudgmentRefused("duplicate-of goes with the verdict duplicate only", "duplicate_of")
            )
        return None
    target = (duplicate_of or "").strip()
    if not target:
        refused.append(
            JudgmentRefused(
                "the verdict duplicate needs the id of the other item",
                "duplicate_of",
                fill_field=True,
            )
        )
        return None
    if target == item_id:
        message = f"item {item_id} cannot be a duplicate of itself"
    elif session.get(Item, target) is None:
        message = f"duplicate-of: {no_item_message(session, target)}"
    else:
        return target
    refused.append(JudgmentRefused(message, "duplicate_of"))
    return None


def active_judgment_by(
    session: Session, item_id: str, revision_number: int, person_id: int
) -> Judgment | None:
    """This person's non-retracted judgment of one item revision, if any."""
    return session.exec(
        select(Judgment).where(
            Judgment.item_id == item_id,
            Judgment.revision_number == revision_number,
            Judgment.annotator_id == person_id,
            col(Judgment.retracted).is_(False),
        )
    ).first()


def check_seconds(seconds: float, refused: list[JudgmentRefused]) -> None:
    """The time spent, a judgment's or a blind answer's: refused unless a number from 0."""
    if not math.isfinite(seconds) or seconds < 0:
        refused.append(
            JudgmentRefused(f"seconds must be a non-negative number, got {seconds}", "seconds")
        )


def checked_details(
    given: JudgmentInput, edit: ItemEdit | None, refused: list[JudgmentRefused]
) -> tuple[Verdict | None, ItemEdit | None]:
    """The checks that need no database: the verdict, seconds, details, each refusal added
    to ``refused``; returns the verdict (None when it is not one) and the edit kept, if any."""
    verdict: Verdict | None = None
    try:
        verdict = parse_verdict(given.verdict)
    except JudgmentRefused as error:
        refused.append(error)
    check_seconds(given.seconds, refused)
    if verdict is not None:
        _check_details(verdict, given.comment, edit, refused)
    if edit is not None and edit.changes_nothing:
        edit = None
    if edit is not None and not edit.note.strip():
        refused.append(JudgmentRefused("an edit needs a short note saying what changed and why"))
    return verdict, edit


@dataclass(frozen=True)
class Checked:
    """What the database checks of one judgment found, to store it with."""

    item: ItemSnapshot
    person: Person
    blind_answer: str
    alternatives: list[str]
    corrected_key: str | None
    duplicate_of: str | None
    seen: StoredReveal | None = None  # the key of the revision the person saw, if any
    stored_before: bool = False  # the same judgment is stored already (a batch given again)


def checked_in_database(
    session: Session,
    annotator_name: str,
    given: JudgmentInput,
    verdict: Verdict | None,
    refused: list[JudgmentRefused],
    *,
    judged_above: bool = False,
    from_file: bool = False,
) -> Checked | None:
    """The checks against the database (the item, its revision, the answer and the
    verdict's fields against its text, the duplicated item, an earlier judgment of the
    same revision), each refusal added to ``refused``; what to store the judgment with,
    or None when ``refused`` holds anything (the checks that need no database included).

    Fields given for a revision that is no longer current are not checked against the
    current text.  ``judged_above``: the item is judged on an earlier line of the same
    batch, which says so (its judgment there is not this annotator's earlier one).
    ``from_file`` (a batch): a row that gives this annotator's stored judgment again (the
    same revision, answer, verdict and details: a sheet loaded again after more rows were
    filled) is no refusal but ``Checked.stored_before``, to be left as it is; a row that
    differs from it is refused, with what to do."""
    item_id = given.item_id
    item = locked_item(session, item_id)
    blind: str | None = None
    alternatives: list[str] = []
    fixed_key: str | None = None
    if item is None:
        refused.append(JudgmentRefused(no_item_message(session, item_id), "item_id"))
    elif given.revision_number is not None and given.revision_number != item.revision:
        why = (
            "it was edited"
            if given.revision_number < item.revision
            else f"it has no revision {given.revision_number}"
        )
        refused.append(
            JudgmentRefused(
                f"item {item_id} is now at revision {item.revision}, not revision "
                f"{given.revision_number} ({why}); judge the current revision",
                "revision",
            )
        )
    else:
        blind = _parse(
            item.kind, given.blind_answer, item.labels, "blind answer", "answer", refused
        )
        if verdict is not None:
            alternatives, fixed_key = _check_verdict_fields(
                item.kind,
                item.labels,
                item.key,
                verdict,
                given.alternative_orders,
                given.corrected_key,
                refused,
            )
    duplicate = None
    stored_before = False
    if verdict is not None:
        duplicate = _check_duplicate(session, item_id, verdict, given.duplicate_of, refused)
    # Someone new is registered with a judgment that passes; a refused one only reads.
    person = find_person(session, annotator_name.strip()) if refused else None
    if not refused:
        try:
            person = ensure_person(session, annotator_name)
        except ValueError as error:
            refused.append(JudgmentRefused(str(error)))
    if item is not None and person is not None and not judged_above:
        assert person.id is not None
        earlier = active_judgment_by(session, item_id, item.revision, person.id)
        again = (blind, verdict, sorted(alternatives), fixed_key, duplicate, given.comment.strip())
        if earlier is not None and from_file and again == _stated(earlier):
            stored_before = True
        elif earlier is not None:
            todo = (
                "this row differs from it: undo it first to judge again, or remove the row"
                if from_file
                else "undo it first to judge again"
            )
            refused.append(
                JudgmentRefused(
                    f"{person.name} already judged item {item_id} revision {item.revision} "
                    f"(verdict {earlier.verdict}); {todo}",
                    "item_id",
                )
            )
    seen: StoredReveal | None = None
    if item is not None and person is not None and blind is not None:
        assert person.id is not None
        seen = reveal_of(session, person.id, item_id, item.revision)
        if seen is not None and seen.blind_answer != blind:
            stored = format_answer(item.kind, seen.blind_answer)
            refused.append(
                JudgmentRefused(
                    f"{person.name} saw the key of item {item_id} revision {item.revision} "
                    f"after answering {stored} blind; an answer given after the key is not "
                    f"blind, so a judgment of it keeps {stored}",
                    "answer",
                )
            )
    if refused or item is None or person is None or blind is None:
        return None
    return Checked(item, person, blind, alternatives, fixed_key, duplicate, seen, stored_before)


def checked_or_refused(
    session: Session, annotator_name: str, given: JudgmentInput, verdict: Verdict | None
) -> Checked:
    """``checked_in_database`` for one judgment (or blind answer) alone: what to store it
    with, or its first refusal raised."""
    refused: list[JudgmentRefused] = []
    checked = checked_in_database(session, annotator_name, given, verdict, refused)
    if refused:
        raise refused[0]
    assert checked is not None  # else refused
    return checked


def _stated(judgment: Judgment) -> tuple[object, ...]:
    """What a stored judgment says, as ``checked_in_database`` compares a row with it."""
    return (
        judgment.blind_answer,
        Verdict(judgment.verdict),
        sorted(judgment.alternative_orders),
        judgment.corrected_key,
        judgment.duplicate_of,
        judgment.comment,
    )

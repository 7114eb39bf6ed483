"""The qualification gate: whose judgments count, decided by their calibration answers.

With the setting ``calibration_pass`` above 0 (and ``calibration_items`` N above 0), an
annotator's judgments count toward no decision until they pass: item statuses
(agreed/conflict), agreement figures, ``approve-agreed``, conflicts, triage and the
consensus all read judgments through :func:`counted_judgments` /
:func:`uncounted_annotators`.  The rule, derived from the judgments each time it is asked
(changing either setting judges everyone again by the new one):

- a person's calibration answers are their *first* judgment of each gold item
  (``judgment.gold_id``), undone or not: the known answer is shown right after the
  verdict, so a second try at the same gold proves nothing;
- the first N answers are attempt 1; the person passes when at least
  ``calibration_pass`` of them match the gold (blind answer and verdict, as gold
  accuracy counts them); otherwise the next N answers, on other gold items, are
  attempt 2; failing both, they have failed until a lead lets them try again
  (:func:`requalify`, ``vetbench users requalify``), after which only answers given
  later count;
- leads are not gated (they mark the gold items), nor is anyone while the gate is off:
  then nothing here changes any query (:func:`counted_judgments` is empty).

On PostgreSQL annotators may not read the known gold answers (``db.privileges``); every
session reads whether each calibration answer matched through the database function
``vetbench_calibration_outcomes`` (``db.guards``), so an annotator's own writes refresh
item statuses by the same rule.  That tells an annotator whether a colleague's
calibration answer matched (and, with the colleague's blind answer, that gold's answer):
the price of every session deriving statuses alike.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

from sqlalchemy import ColumnElement, and_, exists, func, not_, text
from sqlalchemy import select as sa_select
from sqlmodel import Session, col

from db.audit import record_audit
from db.engine import Database
from db.errors import VetbenchError
from db.json_types import JsonObject, fields_json
from db.models import GoldItem, Item, Judgment, Person
from db.people import PersonListing, find_person, list_people, require_lead
from db.settings import get_fraction_setting, get_int_setting
from db.vocabulary import QualificationStatus, Role

__all__ = [
    "Attempt",
    "Gate",
    "ListedPerson",
    "Qualification",
    "QualificationError",
    "counted_judgments",
    "gate",
    "left_out",
    "list_people_qualified",
    "never_judged_by",
    "qualification_of",
    "qualification_states",
    "requalify",
    "standing_of",
    "uncounted_annotator_ids",
    "uncounted_annotators",
]

ATTEMPTS = 2
"""Tries a person gets, each on N gold items they have not seen, before a lead must reset."""


class QualificationError(VetbenchError, ValueError):
    """A qualification request that cannot be done as asked; the message says why."""


@dataclass(frozen=True)
class Gate:
    """The settings of the gate: N gold items per attempt, the share to match."""

    items: int  # calibration_items
    pass_mark: float  # calibration_pass

    @property
    def on(self) -> bool:
        return self.items > 0 and self.pass_mark > 0

    @property
    def matches_needed(self) -> int:
        """Matches out of ``items`` that pass (0.8 of 5: 4); the small slack keeps 0.7 × 10
        from needing 8 through floating-point rounding."""
        return math.ceil(self.pass_mark * self.items - 1e-9)


def gate(session: Session) -> Gate:
    return Gate(
        items=get_int_setting(session, "calibration_items"),
        pass_mark=get_fraction_setting(session, "calibration_pass"),
    )


@dataclass(frozen=True)
class Attempt:
    """One try: ``judged`` of its ``size`` gold items answered so far, ``matched`` right."""

    number: int
    size: int
    judged: int
    matched: int

    @property
    def complete(self) -> bool:
        return self.judged >= self.size

    @property
    def score(self) -> float | None:
        """The share matched so far (None before the first answer)."""
        return self.matched / self.judged if self.judged else None

    def to_json(self) -> JsonObject:
        return {**fields_json(self, renamed={"number": "attempt"}), "score": self.score}


@dataclass(frozen=True)
class Qualification:
    """Where one person stands with the gate."""

    name: str
    status: QualificationStatus
    attempt: int  # the attempt under way, or the one that decided (0: not gated)
    attempts: tuple[Attempt, ...] = ()
    pass_mark: float = 0.0
    gold_judged: int = 0  # calibration answers that count toward the attempts

    @property
    def counts(self) -> bool:
        """Whether this person's judgments count toward decisions."""
        return self.status in (QualificationStatus.NOT_GATED, QualificationStatus.PASSED)

    @property
    def score(self) -> float | None:
        """The score of the attempt under way or the one that decided."""
        return self.attempts[-1].score if self.attempts else None

    def describe(self) -> str:
        """One line for people: ``failed (attempts 2/5, 3/5; pass mark 0.8)``."""
        if self.status is QualificationStatus.NOT_GATED:
            return "not gated"
        tries = ", ".join(f"{a.matched}/{a.size}" for a in self.attempts if a.judged)
        if self.status is QualificationStatus.IN_PROGRESS:
            current = self.attempts[-1]
            done = f"attempt {self.attempt}: {current.judged} of {current.size} gold items"
            return f"{self.status.value} ({done}; pass mark {self.pass_mark:g})"
        word = "attempt" if len(self.attempts) == 1 else "attempts"
        return f"{self.status.value} ({word} {tries}; pass mark {self.pass_mark:g})"

    def notice(self, scope: str) -> str | None:
        """Why the queue serves this person nothing, when the gate is why (the review
        app's empty screen; ``scope``: the queue's filters in words); None otherwise."""
        if self.status is QualificationStatus.FAILED:
            return (
                f"You did not pass the qualification: {self.describe()}. Your judgments "
                "do not count, so nothing is served to you. A lead can let you try again "
                f"on other gold items: vetbench users requalify {self.name} --as LEAD."
            )
        if self.status is QualificationStatus.IN_PROGRESS:
            return (
                f"Qualification {self.describe()}: no gold item you have not seen is left "
                f"({scope}). Your judgments count once you pass; ask a lead to mark more "
                "gold items (vetbench gold add)."
            )
        return None

    def to_json(self) -> JsonObject:
        return {
            "status": self.status.value,
            "attempt": self.attempt,
            "score": self.score,
            "gold_judged": self.gold_judged,
            "pass_mark": self.pass_mark,
            "attempts": [attempt.to_json() for attempt in self.attempts],
        }


def _calibration_answers(session: Session) -> dict[int, list[tuple[int, int, bool]]]:
    """Every calibration judgment, by annotator id: (judgment id, gold id, matched), in
    the order they were made.  PostgreSQL: through ``vetbench_calibration_outcomes``,
    which every member may call (the known answers stay unreadable)."""
    if session.connection().dialect.name == "postgresql":
        rows = session.execute(
            text(
                "SELECT judgment_id, annotator_id, gold_id, matched "
                "FROM vetbench_calibration_outcomes()"
            )
        )
    else:
        rows = session.execute(
            sa_select(
                col(Judgment.id),
                col(Judgment.annotator_id),
                col(Judgment.gold_id),
                and_(
                    col(Judgment.blind_answer) == col(GoldItem.answer),
                    col(Judgment.verdict) == col(GoldItem.verdict),
                ),
            ).join(GoldItem, col(GoldItem.id) == col(Judgment.gold_id))
        )
    answers: dict[int, list[tuple[int, int, bool]]] = {}
    for judgment_id, annotator_id, gold_id, matched in rows:
        answers.setdefault(annotator_id, []).append((judgment_id, gold_id, bool(matched)))
    for found in answers.values():
        found.sort()
    return answers


def _qualification(
    person: Person, settings: Gate, answers: Iterable[tuple[int, int, bool]]
) -> Qualification:
    """The rule (module docstring) for one person, given all their calibration judgments."""
    if not settings.on or person.role == Role.LEAD:
        return Qualification(person.name, QualificationStatus.NOT_GATED, 0)
    reset_after = person.calibration_reset_after or 0
    first: dict[int, bool] = {}  # gold id -> matched, first answer only, in answer order
    for judgment_id, gold_id, matched in answers:
        if judgment_id > reset_after and gold_id not in first:
            first[gold_id] = matched
    outcomes = list(first.values())
    size = settings.items
    attempts: list[Attempt] = []
    status = QualificationStatus.FAILED
    for number in range(1, ATTEMPTS + 1):
        chunk = outcomes[(number - 1) * size : number * size]
        attempts.append(Attempt(number, size, len(chunk), sum(chunk)))
        if len(chunk) < size:
            status = QualificationStatus.IN_PROGRESS
            break
        if sum(chunk) >= settings.matches_needed:
            status = QualificationStatus.PASSED
            break
    return Qualification(
        name=person.name,
        status=status,
        attempt=len(attempts),
        attempts=tuple(attempts),
        pass_mark=settings.pass_mark,
        gold_judged=sum(attempt.judged for attempt in attempts),
    )


def _states(session: Session, people: list[Person]) -> dict[str, Qualification]:
    settings = gate(session)
    answers = _calibration_answers(session) if settings.on else {}
    return {
        person.name: _qualification(person, settings, answers.get(person.id or 0, []))
        for person in people
    }


def qualification_states(session: Session) -> dict[str, Qualification]:
    """Everyone registered, by name: where they stand with the gate."""
    people = list(session.scalars(sa_select(Person).order_by(col(Person.name))))
    return _states(session, people)


def qualification_of(session: Session, name: str) -> Qualification:
    """Where ``name`` stands (a :class:`QualificationError` for someone not registered)."""
    person = find_person(session, name)
    if person is None:
        raise QualificationError(f"'{name}' is not a registered person")
    return _states(session, [person])[person.name]


def standing_of(db: Database, name: str) -> Qualification:
    """:func:`qualification_of` in a session of its own (for the review app)."""
    with db.session() as session:
        return qualification_of(session, name)


def never_judged_by(person_id: int) -> ColumnElement[bool]:
    """Items the person never judged, any revision, undone or not (a condition on ``Item``):
    a qualification attempt's gold items, whose answers are only worth something blind."""
    return not_(
        exists().where(
            col(Judgment.item_id) == col(Item.id), col(Judgment.annotator_id) == person_id
        )
    )


def uncounted_annotator_ids(session: Session) -> frozenset[int]:
    """The ids of people whose judgments count toward no decision now (none while the
    gate is off: two settings read, nothing else)."""
    if not gate(session).on:
        return frozenset()
    people = list(session.scalars(sa_select(Person)))
    states = _states(session, people)
    return frozenset(p.id for p in people if p.id is not None and not states[p.name].counts)


def uncounted_annotators(session: Session) -> frozenset[str]:
    """The names of people whose judgments count toward no decision now."""
    return frozenset(
        name for name, state in qualification_states(session).items() if not state.counts
    )


def left_out(db: Database) -> list[Qualification]:
    """The people whose judgments count toward nothing now, by name (for the lead's F2)."""
    with db.session() as session:
        return [state for state in qualification_states(session).values() if not state.counts]


def counted_judgments(session: Session) -> list[ColumnElement[bool]]:
    """Conditions on ``Judgment`` that keep only judgments that count: every decision
    path adds them to its query.  Empty while nobody is left out (the gate off): the
    query is then exactly what it was without the gate."""
    ids = uncounted_annotator_ids(session)
    return [col(Judgment.annotator_id).not_in(sorted(ids))] if ids else []


@dataclass(frozen=True)
class ListedPerson:
    """A person as ``users list`` shows them: their listing and where they stand with the
    gate (None: a database member not registered yet)."""

    person: PersonListing
    qualification: Qualification | None

    def to_json(self, *, server_roles: bool) -> JsonObject:
        """``users list --json``: the listing's keys, and ``qualification``."""
        return self.person.to_json(server_roles=server_roles) | {
            "qualification": None if self.qualification is None else self.qualification.to_json()
        }


def list_people_qualified(db: Database) -> list[ListedPerson]:
    """Everyone ``db.people.list_people`` lists, with their qualification."""
    people = list_people(db)
    with db.session() as session:
        states = qualification_states(session)
    return [ListedPerson(person, states.get(person.name)) for person in people]


def requalify(session: Session, lead: str, name: str) -> Qualification:
    """Let ``name``, who failed, try the qualification again (leads only; audited; the
    caller commits): calibration answers given before now no longer count, and the
    queue serves them gold items they have not seen."""
    require_lead(session, lead, to="let someone try the qualification again")
    person = find_person(session, name)
    if person is None:
        raise QualificationError(f"'{name}' is not a registered person")
    before = _states(session, [person])[person.name]
    if before.status is not QualificationStatus.FAILED:
        raise QualificationError(
            f"{person.name} has not failed the qualification ({before.describe()}); "
            "only someone who failed both attempts is let try again"
        )
    newest = session.scalar(sa_select(func.max(col(Judgment.id)))) or 0
    previous = person.calibration_reset_after
    person.calibration_reset_after = newest
    session.add(person)
    record_audit(
        session,
        lead,
        "requalify",
        person.name,
        old=before.to_json(),
        calibration_reset_after={"old": previous, "new": newest},
    )
    session.flush()
    return _states(session, [person])[person.name]

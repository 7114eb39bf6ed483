"""The keys people saw before judging: a blind answer stays blind across sessions.

Blind answers are the basis of inter-annotator agreement, so an answer given after the
key was seen must never be stored as blind.  The review app shows an item's key once its
blind answer is given (the reveal); the verdict may come at once or later, after the
annotator moved on (``n``, ``s``, ``p``, ``j`` ...) or quit.  :func:`store_reveal` stores a
``key_reveal`` row (``db.models.KeyReveal``) as the key is shown, before it is drawn, so
a crash or kill after the key was seen cannot lose it: who saw the key of which item
revision, the blind answer they gave first, and the seconds it took.  Until they judge
that revision, the item comes back to them revealed with that answer, in this session or
any later one (``reviewer.queue`` serves it first), and every judgment of the revision
stores that answer as the blind one: the review app gives it, and
``reviewer.judgment_checks`` refuses any other (``vetbench judge``, ``judge --from``).
A judging sheet works the same way offline: ``vetbench export --format judging`` shows
no key of a revision until ``judge --from`` stored the person's blind answer to it
(:func:`add_reveal`, in the batch's transaction); the next sheet shows the key beside
that answer.  An undone judgment leaves the row in force: the key was seen all the same.  A new
revision (an edit) is a new question, as it is for judgments and the queue: the row is
of the revision whose key was shown.

A table of its own, not an audit event kind, although members may add audit events:

- the row is looked up for every item shown, by person, item and revision: its primary
  key, where an event would be searched for through JSON payloads;
- on PostgreSQL a member reads and adds only rows in their own name (row-level
  security on ``person_id``, ``db.table_privileges``), while an event's actor is any name
  its writer gives and every member reads the trail: nobody reads another's blind answer
  before its verdict, nor plants one that another's judgment would then store;
- nobody updates or deletes a row, its owner included, and the first reveal of a
  revision is the one kept: the answer cannot change once the key was seen.

A ``reveal`` audit event records each reveal too, naming the revision, not the answer.
The comment typed after the reveal is not stored here: a comment is stored with its
verdict (the review app keeps a typed one for the session).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import ColumnElement, and_, select
from sqlalchemy.exc import IntegrityError
from sqlmodel import Session, col

from db.answers import parse_answer
from db.audit import record_audit
from db.engine import Database
from db.items import ItemSnapshot
from db.models import Item, KeyReveal, Person
from db.people import PersonRefused, find_person
from db.retry import retry_transient
from db.vocabulary import REVEAL_ACTION

__all__ = [
    "StoredReveal",
    "add_reveal",
    "first_revealed_item",
    "reveal_of",
    "reveals_by",
    "store_reveal",
    "stored_reveal",
]


@dataclass(frozen=True)
class StoredReveal:
    """A person saw the key of ``item_id`` at ``revision`` after answering ``blind_answer``
    (canonical) in ``seconds``."""

    item_id: str
    revision: int
    blind_answer: str
    seconds: float
    revealed_at: datetime


def _stored(row: KeyReveal) -> StoredReveal:
    return StoredReveal(
        row.item_id, row.revision_number, row.blind_answer, row.seconds, row.revealed_at
    )


def store_reveal(
    db: Database, person: str, item: ItemSnapshot, blind_answer: str, seconds: float
) -> StoredReveal:
    """Record that ``person`` (registered) is shown the key of ``item`` at its revision
    after answering ``blind_answer`` blind in ``seconds``, in a transaction of its own;
    the record kept, which is an earlier one of the same revision if there is one.

    Raises ``db.answers.AnswerError`` for an answer the item cannot take,
    ``db.people.PersonRefused`` for an unknown person, and the database's error when it
    cannot store the record: the key is then not to be shown."""
    answer = parse_answer(item.kind, blind_answer, item.labels)

    def write() -> StoredReveal:
        with db.transaction() as session:
            found = find_person(session, person)
            if found is None or found.id is None:
                raise PersonRefused(f"{person} is not a registered person")
            kept = session.get(KeyReveal, (found.id, item.id, item.revision))
            if kept is not None:
                return _stored(kept)
            return add_reveal(session, found, item, answer, seconds)

    try:
        return retry_transient(write)
    except IntegrityError:
        # The same person revealed it at the same moment elsewhere: theirs is the one kept.
        with db.session() as session:
            kept = stored_reveal(session, person, item.id, item.revision)
        if kept is None:
            raise
        return kept


def add_reveal(
    session: Session, person: Person, item: ItemSnapshot, answer: str, seconds: float
) -> StoredReveal:
    """Store, in the caller's transaction, that ``person`` answered ``answer`` (canonical)
    blind in ``seconds`` before the key of ``item`` at its revision was shown, with its
    ``reveal`` audit event; the caller found no earlier record of that revision.  A judging
    sheet's blind answers are stored so (``reviewer.judging.submit_judgments``), as the
    review app's are by :func:`store_reveal`."""
    assert person.id is not None  # a stored person
    row = KeyReveal(
        person_id=person.id,
        item_id=item.id,
        revision_number=item.revision,
        blind_answer=answer,
        seconds=round(max(seconds, 0.0), 3),
    )
    session.add(row)
    record_audit(session, person.name, REVEAL_ACTION, item.id, revision=item.revision)
    session.flush()
    return _stored(row)


def reveals_by(session: Session, person: str) -> dict[tuple[str, int], StoredReveal]:
    """Every key ``person`` saw before judging, by item and revision (none for someone
    unregistered); on PostgreSQL a member reads only their own."""
    found = find_person(session, person)
    if found is None or found.id is None:
        return {}
    rows = session.scalars(select(KeyReveal).where(col(KeyReveal.person_id) == found.id))
    return {(row.item_id, row.revision_number): _stored(row) for row in rows}


def reveal_of(session: Session, person_id: int, item_id: str, revision: int) -> StoredReveal | None:
    """The key of ``item_id`` at ``revision`` that the person saw before judging, if any."""
    row = session.get(KeyReveal, (person_id, item_id, revision))
    return None if row is None else _stored(row)


def stored_reveal(
    session: Session, person: str, item_id: str, revision: int
) -> StoredReveal | None:
    """:func:`reveal_of`, the person given by name (None for someone unregistered)."""
    found = find_person(session, person)
    if found is None or found.id is None:
        return None
    return reveal_of(session, found.id, item_id, revision)


def first_revealed_item(
    session: Session, person_id: int, conditions: Sequence[ColumnElement[bool]]
) -> str | None:
    """The item whose current revision's key the person saw longest ago, among those
    that pass ``conditions`` (on ``Item``): the one to bring back first."""
    revealed = and_(
        col(KeyReveal.person_id) == person_id,
        col(KeyReveal.item_id) == col(Item.id),
        col(KeyReveal.revision_number) == col(Item.current_revision),
    )
    return session.scalar(
        select(col(Item.id))
        .join(KeyReveal, revealed)
        .where(*conditions)
        .order_by(col(KeyReveal.revealed_at), col(Item.id))
        .limit(1)
    )

"""The filter each person last chose in the review app, kept so the next session starts
with it (``review_filter``: one row per person; on PostgreSQL each member sees and writes
only their own).

The value is what the ``/`` box holds: kinds, sources, statuses, exams, flags (each a
list of names) and the search text (``db.search_query``'s syntax).  A stored value that
does not have that shape is treated as no filter: it was not written by vetbench.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields

from sqlalchemy.exc import SQLAlchemyError
from sqlmodel import Session, select

from db.engine import Database
from db.models import Person, ReviewFilter, utcnow

__all__ = ["SavedFilter", "save_filter", "saved_filter"]


@dataclass(frozen=True)
class SavedFilter:
    kinds: tuple[str, ...] = ()
    sources: tuple[str, ...] = ()
    statuses: tuple[str, ...] = ()
    exams: tuple[str, ...] = ()
    text: str = ""
    flags: tuple[str, ...] = ()

    @property
    def empty(self) -> bool:
        return self == SavedFilter()


def _person_id(session: Session, person: str) -> int | None:
    return session.exec(select(Person.id).where(Person.name == person)).first()


def saved_filter(session: Session, person: str) -> SavedFilter | None:
    """``person``'s last filter, or None (none saved, or not one vetbench wrote)."""
    person_id = _person_id(session, person)
    row = session.get(ReviewFilter, person_id) if person_id is not None else None
    if row is None or not isinstance(row.value, dict):
        return None
    values: dict[str, str | tuple[str, ...]] = {}
    for field in fields(SavedFilter):
        value = row.value.get(field.name, field.default)
        if field.name == "text":
            if not isinstance(value, str):
                return None
            values[field.name] = value
        elif isinstance(value, list | tuple) and all(isinstance(v, str) for v in value):
            values[field.name] = tuple(value)
        else:
            return None
    return SavedFilter(**values)  # type: ignore[arg-type]


def save_filter(session: Session, person: str, chosen: SavedFilter) -> None:
    """Keep ``chosen`` as ``person``'s filter (the caller commits); an unknown person keeps
    nothing."""
    person_id = _person_id(session, person)
    if person_id is None:
        return
    value = {name: list(v) if isinstance(v, tuple) else v for name, v in asdict(chosen).items()}
    row = session.get(ReviewFilter, person_id)
    if row is None:
        row = ReviewFilter(person_id=person_id, value=value)
    else:
        row.value = value
        row.updated_at = utcnow()
    session.add(row)


def read_saved_filter(db: Database, person: str) -> SavedFilter | None:
    """``person``'s kept filter, read in a session of its own."""
    with db.session() as session:
        return saved_filter(session, person)


def keep_filter(db: Database, person: str, chosen: SavedFilter) -> str | None:
    """Keep ``chosen`` as ``person``'s filter for their next session; why it could not be
    kept (a read-only file, a database that refused), or None.  Not keeping it never
    stops the review: the filter still applies to this session."""
    if db.read_only:
        return "the database is read-only: this filter is not kept for your next session"
    try:
        with db.session() as session:
            save_filter(session, person, chosen)
            session.commit()
    except SQLAlchemyError as error:
        return f"this filter is not kept for your next session ({str(error).splitlines()[0]})"
    return None

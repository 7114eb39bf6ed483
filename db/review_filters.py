"""The filter each person last chose in the review app, kept so the next session starts
with it (``review_filter``: one row per person; on PostgreSQL each member sees and writes
only their own).

The value is what the ``/`` box holds: kinds, sources, statuses, exams, flags (each a
list of names) and the search text (``db.search_query``'s syntax).  A stored value that
does not have that shape is treated as no filter: it was not written by vetbench.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields

from sqlmodel import Session, select

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

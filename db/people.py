"""People and their roles."""

from __future__ import annotations

from sqlmodel import Session, select

from db.audit import record_event
from db.models import Person
from db.vocabulary import Role


class PermissionDenied(PermissionError):
    """Someone tried an action their role does not allow; the message says which role is needed."""


def find_person(session: Session, name: str) -> Person | None:
    return session.exec(select(Person).where(Person.name == name)).first()


def ensure_person(session: Session, name: str, role: Role = Role.ANNOTATOR) -> Person:
    """The person called ``name``, registered with ``role`` if new (the caller commits)."""
    name = name.strip()
    if not name:
        raise ValueError("a person needs a non-empty name")
    person = find_person(session, name)
    if person is None:
        person = Person(name=name, role=role)
        session.add(person)
        session.flush()
        record_event(session, name, "register", name, role=str(role))
    return person


def require_lead(session: Session, name: str) -> Person:
    """The lead called ``name``; refuses anyone else with a clear message."""
    person = find_person(session, name)
    if person is None:
        raise PermissionDenied(
            f"'{name}' is not a registered person; a lead is added with "
            f"`vetbench users add {name} --role lead`"
        )
    if person.role != Role.LEAD:
        raise PermissionDenied(f"only leads can decide; '{name}' is an {person.role}")
    return person

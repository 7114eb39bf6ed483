"""Rows to plain values: fill a frozen dataclass from a row's same-named fields.

Widgets, commands and the review domain hold small frozen dataclasses, never ORM
rows.  Most of such a dataclass's fields are copies of the row's: :func:`from_row`
copies those by name, and the caller gives the few that are computed or renamed.
It works on ORM objects and on the ``Row`` of a column query alike.
"""

from __future__ import annotations

from dataclasses import fields
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

Plain = TypeVar("Plain", bound="DataclassInstance")


def from_row(cls: type[Plain], row: object, **given: Any) -> Plain:
    """``cls(...)`` with each field from ``given`` if named there, else from ``row``'s
    attribute of the same name (a missing one raises ``AttributeError``, naming it)."""
    values = {
        field.name: given[field.name] if field.name in given else getattr(row, field.name)
        for field in fields(cls)
    }
    unknown = set(given) - set(values)
    if unknown:
        raise TypeError(f"{cls.__name__} has no field {', '.join(sorted(unknown))}")
    return cls(**values)

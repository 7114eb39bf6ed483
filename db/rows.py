"""Rows to plain values: fill a frozen dataclass from a row's same-named fields.

Widgets, commands and the review domain hold small frozen dataclasses, never ORM
rows.  Most of such a dataclass's fields are copies of the row's, so they are
copied by name and the caller gives only the few that are computed or renamed:

- :func:`from_row` for one row (an ORM object, or any object with those attributes);
- :func:`row_reader` for the many rows of one column query (bulk reads): it finds
  each field's column once, then reads rows by position, several times faster.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import fields
from functools import cache
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

Plain = TypeVar("Plain", bound="DataclassInstance")


@cache
def _field_names(cls: type[DataclassInstance]) -> tuple[str, ...]:
    return tuple(field.name for field in fields(cls))


@cache
def _field_set(cls: type[DataclassInstance]) -> frozenset[str]:
    return frozenset(_field_names(cls))


def _check_given(cls: type[DataclassInstance], given: Iterable[str]) -> None:
    unknown = sorted(set(given) - _field_set(cls))
    if unknown:
        raise TypeError(f"{cls.__name__} has no field {', '.join(unknown)}")


def copied_fields(cls: type[DataclassInstance], *computed: str) -> list[str]:
    """The fields of ``cls`` that are copied from a row: all but the ``computed`` ones
    (to select exactly the columns a :func:`row_reader` needs)."""
    _check_given(cls, computed)
    return [name for name in _field_names(cls) if name not in computed]


def from_row(cls: type[Plain], row: object, **given: Any) -> Plain:
    """``cls(...)`` with each field from ``given`` if named there, else from ``row``'s
    attribute of the same name (a missing one raises ``AttributeError``, naming it)."""
    _check_given(cls, given)
    names = _field_names(cls)
    return cls(**{name: given[name] if name in given else getattr(row, name) for name in names})


def row_reader(cls: type[Plain], columns: Sequence[str], *computed: str) -> Callable[..., Plain]:
    """A function ``read(row, **computed_values)`` making ``cls`` from a row of a query
    whose ``columns`` (``result.keys()``) name every field but the ``computed`` ones."""
    columns = list(columns)
    missing = [name for name in copied_fields(cls, *computed) if name not in columns]
    if missing:
        raise ValueError(f"the query has no column {', '.join(missing)} for {cls.__name__}")
    # In field order: each field's name and its column's position (-1: computed).
    plan = [(name, -1 if name in computed else columns.index(name)) for name in _field_names(cls)]

    def read(row: Sequence[Any], **values: Any) -> Plain:
        return cls(*[values[name] if at < 0 else row[at] for name, at in plan])

    return read

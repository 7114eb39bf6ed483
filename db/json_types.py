"""JSON values: their type, and typed results turned into them.

What the ``--json`` printers write and the JSON columns hold is a :data:`JsonValue`, a
recursive alias, so a type checker refuses a value ``json.dumps`` could not write (a
datetime, a dataclass) where JSON is built.  A typed result makes its own JSON with
``to_json()``; :class:`FieldsAsJson` gives one that is just its fields, and
:func:`attributes_json` one of the attributes it names.  Standard library only.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import fields, is_dataclass
from datetime import datetime
from enum import Enum
from typing import Any, TypeAlias

JsonValue: TypeAlias = str | int | float | bool | None | list["JsonValue"] | dict[str, "JsonValue"]
"""A value ``json.dumps`` writes as it is."""

JsonObject: TypeAlias = dict[str, JsonValue]
"""A JSON object: what a ``to_json()`` returns."""


_PLAIN = frozenset((str, int, float, bool))
_SEQUENCES = frozenset((list, tuple))


def json_value(value: object) -> JsonValue:
    """One field's value as JSON: a result by its own ``to_json()``, any other dataclass by
    its fields, an enumerated word by its value, a timestamp as ``str(datetime)`` (as the
    ``--json`` printers have always written it), tuples (intervals too) as lists."""
    # Built-in types first, by exact type (a str enum or a named tuple is not one): most
    # values are, and a long listing's rows should not pay for the look-ups below.
    if value is None or (isinstance(value, str | int | float) and type(value) in _PLAIN):
        return value
    if isinstance(value, list | tuple) and type(value) in _SEQUENCES:
        return [json_value(item) for item in value]
    if isinstance(value, dict) and type(value) is dict:
        return {str(name): json_value(item) for name, item in value.items()}
    to_json = getattr(value, "to_json", None)
    if callable(to_json):
        result: JsonValue = to_json()
        return result
    if is_dataclass(value) and not isinstance(value, type):
        return fields_json(value)
    if isinstance(value, Enum):
        return json_value(value.value)
    if isinstance(value, datetime):
        return str(value)
    if isinstance(value, Mapping):
        return {str(name): json_value(item) for name, item in value.items()}
    if isinstance(value, list | tuple):
        return [json_value(item) for item in value]
    if value is None or isinstance(value, str | int | float):
        return value
    raise TypeError(f"no JSON form for {type(value).__name__}")


def attributes_json(
    result: object, *names: str, renamed: Mapping[str, str] | None = None
) -> JsonObject:
    """These attributes of ``result`` (fields or properties) as JSON, in the order named,
    each under its own name or the one ``renamed`` gives it."""
    keys = renamed or {}
    return {keys.get(name, name): json_value(getattr(result, name)) for name in names}


def fields_json(result: Any, *, renamed: Mapping[str, str] | None = None) -> JsonObject:
    """A frozen result as JSON: every field in the order declared, under its own name or
    the one ``renamed`` gives it."""
    return attributes_json(result, *(field.name for field in fields(result)), renamed=renamed)


class FieldsAsJson:
    """A result whose JSON is its fields: each under its own name, in the order declared."""

    def to_json(self) -> JsonObject:
        return fields_json(self)

"""The type of JSON values: what the ``--json`` printers write and the JSON columns hold.

A recursive alias, so a type checker refuses a value ``json.dumps`` could not write
(a datetime, a dataclass) where JSON is built.  Standard library only.
"""

from __future__ import annotations

from typing import TypeAlias

JsonValue: TypeAlias = str | int | float | bool | None | list["JsonValue"] | dict[str, "JsonValue"]
"""A value ``json.dumps`` writes as it is."""

JsonObject: TypeAlias = dict[str, JsonValue]
"""A JSON object: what a ``to_json()`` returns."""

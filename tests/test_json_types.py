"""db/json_types.py: typed results turned into the JSON the ``--json`` printers write."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from enum import Enum, StrEnum
from typing import NamedTuple

import pytest

from db.json_types import FieldsAsJson, JsonObject, attributes_json, fields_json, json_value


class Colour(StrEnum):
    RED = "red"


class Level(Enum):
    HIGH = 3


class Interval(NamedTuple):
    low: float
    high: float


class Shown(NamedTuple):
    text: str

    def to_json(self) -> JsonObject:
        return {"shown": self.text}


@dataclass(frozen=True)
class Inner(FieldsAsJson):
    colour: Colour
    at: datetime


@dataclass(frozen=True)
class Outer:
    name: str
    count: int
    inner: Inner
    interval: Interval
    tags: tuple[str, ...]

    @property
    def double(self) -> int:
        return 2 * self.count


AT = datetime(2026, 12, 1, 11, 3, 6)
OUTER = Outer("a", 2, Inner(Colour.RED, AT), Interval(0.25, 0.75), ("x", "y"))


def test_fields_come_in_their_order_under_their_names_or_the_ones_given() -> None:
    assert list(fields_json(OUTER)) == ["name", "count", "inner", "interval", "tags"]
    assert list(fields_json(OUTER, renamed={"count": "n"})) == [
        "name",
        "n",
        "inner",
        "interval",
        "tags",
    ]
    assert fields_json(OUTER)["inner"] == {"colour": "red", "at": "2026-12-01 11:03:06"}


def test_attributes_come_in_the_order_named_properties_too() -> None:
    assert attributes_json(OUTER, "double", "name", renamed={"double": "twice"}) == {
        "twice": 4,
        "name": "a",
    }


def test_built_in_values_stay_and_enums_give_plain_values() -> None:
    # A str enum is a str, but the JSON holds its plain value (what json.loads gives back).
    assert type(json_value(Colour.RED)) is str
    assert json_value(Level.HIGH) == 3
    assert json_value(OUTER.interval) == [0.25, 0.75]  # a named tuple as a list
    assert json_value(("a", [Colour.RED], {"k": Level.HIGH})) == ["a", ["red"], {"k": 3}]
    assert json_value(True) is True and json_value(None) is None


def test_a_value_with_its_own_to_json_is_written_by_it() -> None:
    # A named tuple is a tuple, but one with a to_json is written by that.
    assert json_value(Shown("hi")) == {"shown": "hi"}
    assert json_value([Shown("a")]) == [{"shown": "a"}]


def test_a_value_json_cannot_hold_is_refused() -> None:
    with pytest.raises(TypeError, match="no JSON form for set"):
        json_value({1, 2})

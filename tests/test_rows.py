"""db.rows.from_row: plain dataclasses filled from ORM rows and column rows by name."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from helpers import store_item
from sqlmodel import col, select

from db.engine import Database
from db.models import ItemRevision
from db.rows import copied_fields, from_row, row_reader


@dataclass(frozen=True)
class Text:
    number: int
    prompt: str
    author: str


def test_fields_come_from_the_row_by_name_unless_given(database: Database) -> None:
    store_item(database, "econ:1", prompt="Order these.")
    with database.session() as session:
        orm = session.exec(select(ItemRevision)).one()
        columns = session.execute(
            select(col(ItemRevision.number), col(ItemRevision.prompt), col(ItemRevision.author))
        ).one()
        assert from_row(Text, orm) == Text(1, "Order these.", "test")
        assert from_row(Text, columns, author="lea") == Text(1, "Order these.", "lea")


def test_a_missing_or_unknown_field_is_an_error_not_a_default() -> None:
    @dataclass(frozen=True)
    class Row:
        number: int
        prompt: str

    with pytest.raises(AttributeError, match="author"):
        from_row(Text, Row(1, "x"))
    with pytest.raises(TypeError, match="no field colour"):
        from_row(Text, Row(1, "x"), author="a", colour="red")


def test_a_reader_takes_the_columns_of_a_query_by_position(database: Database) -> None:
    store_item(database, "econ:1", prompt="Order these.")
    with database.session() as session:
        result = session.execute(
            select(col(ItemRevision.author), col(ItemRevision.item_id), col(ItemRevision.number))
        )
        read = row_reader(Text, list(result.keys()), "prompt")
        assert [read(row, prompt=row.item_id) for row in result] == [Text(1, "econ:1", "test")]
        with pytest.raises(ValueError, match="no column prompt for Text"):
            row_reader(Text, ["number", "author"])
        assert copied_fields(Text, "prompt") == ["number", "author"]

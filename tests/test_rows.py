"""db.rows: plain dataclasses filled from ORM rows and column rows by field name."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from helpers import store_item
from sqlmodel import col, select

from db.engine import Database
from db.items import ItemSnapshot
from db.models import ItemRevision
from db.rows import copied_fields, from_row, row_reader
from reviewer.revisions import RevisionSummary

TEXT_FIELDS = ["number", "prompt", "choices", "key", "explanation"]


def test_fields_come_from_the_row_by_name_unless_given(database: Database) -> None:
    store_item(database, "econ:1", prompt="Order these.")
    with database.session() as session:
        stored = session.exec(select(ItemRevision)).one()
        summary = from_row(RevisionSummary, stored, author="lea")
    assert (summary.number, summary.prompt, summary.key) == (1, "Order these.", "DABC")
    assert (summary.author, summary.change_note) == ("lea", "import")
    assert summary.created_at == stored.created_at


def test_a_missing_or_unknown_field_is_an_error_not_a_default() -> None:
    row = SimpleNamespace(number=1, prompt="p", choices={}, key="A", explanation=None)
    with pytest.raises(AttributeError, match="author"):
        from_row(RevisionSummary, row)
    with pytest.raises(TypeError, match="no field colour"):
        from_row(RevisionSummary, row, author="a", change_note="", created_at=None, colour="red")


def test_a_reader_takes_the_columns_of_a_query_by_position(database: Database) -> None:
    store_item(database, "econ:1", prompt="Order these.")
    with database.session() as session:
        result = session.execute(
            select(*(col(getattr(ItemRevision, name)) for name in reversed(TEXT_FIELDS)))
        )
        read = row_reader(
            RevisionSummary, list(result.keys()), "author", "change_note", "created_at", "kind"
        )
        [summary] = [
            read(row, author="a", change_note="n", created_at=None, kind="ordering")
            for row in result
        ]
    assert (summary.number, summary.prompt, summary.key) == (1, "Order these.", "DABC")
    assert summary.author == "a"
    assert copied_fields(RevisionSummary, "author", "change_note", "created_at", "kind") == (
        TEXT_FIELDS
    )
    with pytest.raises(
        ValueError, match="no column id, kind, source, .*, revision_id for ItemSnapshot"
    ):
        row_reader(ItemSnapshot, TEXT_FIELDS)

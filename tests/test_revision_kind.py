"""Issue 23: an item's kind can be corrected (CFLUE labels some single-answer questions
multi).  Each revision carries the kind it was written and judged in (migration 0012);
the item's kind is its current revision's; an edit changes it only within what the key
and choices allow, on both backends, and the database's guards keep to the same rule."""

from __future__ import annotations

import pytest
import sqlalchemy as sa
from alembic import command
from helpers import store_item

from db.engine import Database, make_engine
from db.migrate import alembic_config, upgrade_to
from db.vocabulary import ItemKind
from reviewer.judging import ItemEdit, JudgmentRefused, edit_item
from reviewer.revisions import diff_revisions, revision_history


def test_the_kind_changes_only_within_what_the_answer_allows(database: Database) -> None:
    store_item(database, "mcq:1", kind="multi", key="C")
    store_item(database, "tf:1", kind="single", key="A", choices={"A": "对", "B": "错"})
    store_item(database, "econ:1", key="DABC")
    with pytest.raises(JudgmentRefused, match="exactly one letter, got AC"):
        edit_item(database, "alice", "mcq:1", ItemEdit(note="n", kind=ItemKind.SINGLE, key="AC"))
    with pytest.raises(JudgmentRefused, match="A true and B false"):
        edit_item(database, "alice", "mcq:1", ItemEdit(note="n", kind=ItemKind.TRUEFALSE))
    with pytest.raises(JudgmentRefused, match="cannot become single: an order is not"):
        edit_item(database, "alice", "econ:1", ItemEdit(note="n", kind=ItemKind.SINGLE))
    with pytest.raises(JudgmentRefused, match="a multi item cannot become ordering"):
        edit_item(database, "alice", "mcq:1", ItemEdit(note="n", kind=ItemKind.ORDERING))
    edit_item(database, "alice", "mcq:1", ItemEdit(note="one answer", kind=ItemKind.SINGLE))
    edit_item(database, "alice", "tf:1", ItemEdit(note="a statement", kind=ItemKind.TRUEFALSE))
    edit_item(
        database, "alice", "mcq:1", ItemEdit(note="two after all", kind=ItemKind.MULTI, key="BC")
    )
    history = revision_history(database, "mcq:1")
    assert [(r.kind, r.key) for r in history] == [("multi", "C"), ("single", "C"), ("multi", "BC")]
    assert [r.kind for r in revision_history(database, "tf:1")] == ["single", "truefalse"]
    texts = [line.text for line in diff_revisions(history[0], history[1])]
    assert "-kind: multi" in texts and "+kind: single" in texts
    # Revisions of one kind never show a kind line.
    assert not any("kind" in line.text for line in diff_revisions(history[0], history[0]))


def test_a_downgrade_leaves_guards_that_know_no_revision_kind(database_url: str) -> None:
    """Down to 0011 the guard functions no longer read ``item_revision.kind`` (on
    PostgreSQL; SQLite has no such functions), so revisions are stored as before."""
    engine = make_engine(database_url)
    try:
        upgrade_to(engine, "head")
        command.downgrade(alembic_config(engine), "0011_qualification")
        revision = (
            "INSERT INTO item_revision (item_id, number, prompt, choices, key, author, "
            "change_note, provenance, created_at) VALUES ('o:1', :number, 'p', "
            """'{"A": "a", "B": "b"}', 'AB', 'import', 'x', '{}', :at)"""
        )
        at = "2026-01-01 00:00:00"
        with engine.begin() as connection:
            connection.execute(
                sa.text(
                    "INSERT INTO item (id, kind, source, source_ref, language, status, "
                    "current_revision, meta, created_at) VALUES ('o:1', 'ordering', 'o', '', "
                    "'en', 'pending', 1, '{}', :at)"
                ),
                {"at": at},
            )
            connection.execute(sa.text(revision), {"number": 1, "at": at})
            connection.execute(sa.text(revision), {"number": 2, "at": at})
            # The item-state guard runs on this update (for every role).
            connection.execute(sa.text("UPDATE item SET current_revision = 2 WHERE id = 'o:1'"))
        with engine.connect() as connection:
            moved = connection.execute(sa.text("SELECT current_revision FROM item")).scalar()
        assert moved == 2
    finally:
        engine.dispose()

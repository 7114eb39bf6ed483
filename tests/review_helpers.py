"""Helpers for the review tests: add validated items straight into a test database."""

from __future__ import annotations

from sqlmodel import col, select

from db.engine import Database
from db.items import add_item
from db.models import Judgment
from db.validation import ItemDraft, validate_draft

EVENTS = {
    "A": "The central bank raises interest rates.",
    "B": "Mortgage costs rise for new buyers.",
    "C": "Home sales slow down.",
    "D": "Inflation climbs above target.",
}


def add_test_item(
    db: Database,
    item_id: str,
    *,
    kind: str = "ordering",
    prompt: str = "Order the events of a rate rise cycle.",
    choices: dict[str, str] | None = None,
    key: str = "DABC",
    explanation: str | None = "Inflation comes first; the bank reacts; borrowing costs follow.",
    source: str = "test",
    language: str = "en",
) -> None:
    """Validate and store one item (revision 1)."""
    if choices is None:
        choices = dict(EVENTS) if kind == "ordering" else {"A": "Yes", "B": "No", "C": "Maybe"}
        if kind == "truefalse":
            choices = {"A": "对", "B": "错"}
    draft = ItemDraft(
        kind=kind,
        prompt=prompt,
        choices=choices,
        key=key,
        explanation=explanation,
        language=language,
    )
    problems = validate_draft(draft)
    assert problems == [], problems
    with db.transaction() as session:
        add_item(session, item_id, source, draft, author="test")


def add_ordering_items(
    db: Database, count: int, *, prefix: str = "econ", source: str = "test"
) -> list[str]:
    ids = [f"{prefix}:{index:03d}" for index in range(count)]
    for item_id in ids:
        add_test_item(db, item_id, source=source)
    return ids


def stored_judgments(db: Database) -> list[Judgment]:
    with db.session() as session:
        return list(session.exec(select(Judgment).order_by(col(Judgment.id))))

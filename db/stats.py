"""Figures about the database for ``vetbench stats``: items, reviews, decisions, people."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy import func, select
from sqlmodel import Session, col

from db.flags import flag_counts
from db.json_types import FieldsAsJson
from db.models import Decision, Item, ItemRevision, Judgment, Person


def _count(session: Session, query: Any) -> int:
    return int(session.execute(query).scalar_one())


def _grouped(session: Session, column: Any) -> dict[str, int]:
    """Counts by value of ``column``, e.g. ``{"ordering": 30, "single": 12}``."""
    rows = session.execute(select(column, func.count()).group_by(column).order_by(column))
    return {str(value): int(count) for value, count in rows}


@dataclass(frozen=True)
class DatabaseStats(FieldsAsJson):
    """Counts of items (overall, by kind, status and source), judgments, revisions and more.

    ``judgments`` counts those not retracted; ``retracted_judgments`` the others.
    ``revisions`` counts every stored revision, so ``revisions - items`` is the number
    of edits and re-imports.  ``by_flag`` counts the items whose current revision
    carries each flag (``db.flags``).  ``to_json()`` is ``stats --json``.
    """

    items: int
    by_kind: dict[str, int]
    by_status: dict[str, int]
    by_source: dict[str, int]
    judgments: int
    retracted_judgments: int
    suspected_duplicates: int
    revisions: int
    decisions: int
    people: int
    people_by_role: dict[str, int]
    by_flag: dict[str, int]


def database_stats(session: Session) -> DatabaseStats:
    """The figures of ``vetbench stats``, counted now."""
    return DatabaseStats(
        items=_count(session, select(func.count()).select_from(Item)),
        by_kind=_grouped(session, col(Item.kind)),
        by_status=_grouped(session, col(Item.status)),
        by_source=_grouped(session, col(Item.source)),
        judgments=_count(session, select(func.count()).where(col(Judgment.retracted).is_(False))),
        retracted_judgments=_count(
            session, select(func.count()).where(col(Judgment.retracted).is_(True))
        ),
        suspected_duplicates=_count(
            session,
            select(func.count()).where(col(Item.suspected_duplicate_of).is_not(None)),
        ),
        revisions=_count(session, select(func.count()).select_from(ItemRevision)),
        decisions=_count(session, select(func.count()).select_from(Decision)),
        people=_count(session, select(func.count()).select_from(Person)),
        people_by_role=_grouped(session, col(Person.role)),
        by_flag=dict(flag_counts(session)),
    )

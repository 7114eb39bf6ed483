"""The status flow of an item, derived from its judgments and decisions.

pending -> in_review -> agreed | conflict (once k judgments exist) -> approved | rejected.

``agreed`` means every verdict is keep and every blind answer equals the key;
anything else with k judgments is a conflict.  Under ``routing`` ``adaptive`` the
consensus decides instead, after as few judgments as it needs (``db.routing``).  A lead's newest decision (not undone)
wins over the judgments of the revision it decided; a later revision (an edit, a
re-import) goes back to review.  The status column is a cache of this rule, refreshed in
the same transaction as every change that can move it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from sqlalchemy import ColumnElement, Select, update
from sqlalchemy import select as sa_select
from sqlalchemy.orm import Mapped
from sqlmodel import Session, col, select

from db.bulk_reads import id_chunks
from db.decisions import latest_decision, newest_decisions
from db.engine import Database
from db.models import Item, ItemRevision, Judgment, Person, is_current_revision
from db.qualification import counted_judgments
from db.vocabulary import UNDECIDED_STATUSES, ItemStatus, Verdict

__all__ = [
    "STATUS_SETTINGS",
    "active_judgments",
    "active_judgments_of",
    "latest_decision",
    "named_judgment_rows",
    "refresh_item_status",
    "refresh_item_statuses",
    "recompute_undecided_statuses",
    "refresh_judged_items",
    "refresh_open_statuses",
    "status_from_judgments",
    "statuses_from_judgments",
]

STATUS_SETTINGS = frozenset({"overlap", "routing", "max_overlap", "target_confidence"})
"""The settings an item's status depends on: changing one recomputes open statuses."""


def active_judgments(session: Session, item_id: str, revision_number: int) -> list[Judgment]:
    """Each annotator's latest non-retracted judgment of one revision, oldest first.

    Calibration judgments (of a gold item, ``gold_id`` set) are left out: they measure
    the annotator against the known answer and never move the item's status.  So are
    the judgments of people the qualification gate leaves out (``db.qualification``).
    """
    return active_judgments_of(session, {item_id: revision_number}).get(item_id, [])


def active_judgments_of(
    session: Session, revisions: Mapping[str, int]
) -> dict[str, list[Judgment]]:
    """``active_judgments`` for many items at once: item id -> revision number in,
    item id -> its judgments out (items without any are left out)."""
    by_item: dict[str, dict[int, Judgment]] = {}
    counted = counted_judgments(session)
    for chunk in id_chunks(list(revisions)):
        rows = session.exec(
            select(Judgment)
            .where(
                col(Judgment.item_id).in_(chunk),
                col(Judgment.retracted).is_(False),
                col(Judgment.gold_id).is_(None),
                *counted,
            )
            .order_by(col(Judgment.created_at), col(Judgment.id))
        ).all()
        for judgment in rows:
            if judgment.revision_number == revisions[judgment.item_id]:
                by_item.setdefault(judgment.item_id, {})[judgment.annotator_id] = judgment
    # SQLite hands back naive UTC times while rows added in this session hold aware
    # ones; compare both as naive UTC.
    return {
        item_id: sorted(
            latest.values(), key=lambda j: (j.created_at.replace(tzinfo=None), j.id or 0)
        )
        for item_id, latest in by_item.items()
    }


def named_judgment_rows(*columns: Mapped[Any]) -> Select[Any]:
    """The annotator's name and ``columns`` of every non-retracted judgment, its item and
    annotator joined, oldest first: keyed by annotator in this order, the latest wins
    (as in :func:`active_judgments`).  Callers add their own conditions."""
    return (
        sa_select(col(Person.name), *columns)  # sqlalchemy's select: any number of columns
        .join(Item, col(Item.id) == col(Judgment.item_id))
        .join(Person, col(Person.id) == col(Judgment.annotator_id))
        .where(col(Judgment.retracted).is_(False))
        .order_by(col(Judgment.created_at), col(Judgment.id))
    )


def status_from_judgments(judgments: list[Judgment], key: str, overlap: int) -> ItemStatus:
    if not judgments:
        return ItemStatus.PENDING
    if len(judgments) < overlap:
        return ItemStatus.IN_REVIEW
    unanimous = all(j.verdict == Verdict.KEEP and j.blind_answer == key for j in judgments)
    return ItemStatus.AGREED if unanimous else ItemStatus.CONFLICT


def statuses_from_judgments(
    session: Session, items: Sequence[tuple[str, int, str]], overlap: int | None = None
) -> dict[str, ItemStatus]:
    """The status each item's judgments give it, decisions aside, by the routing in
    force: ``items`` are (item id, current revision, key); ``overlap`` replaces k."""
    from db.routing import adaptive_statuses, routing_settings

    routing = routing_settings(session)
    if routing.adaptive:
        return adaptive_statuses(session, [item_id for item_id, _revision, _key in items], routing)
    k = overlap if overlap is not None else routing.overlap
    judgments = active_judgments_of(session, {item_id: revision for item_id, revision, _ in items})
    return {
        item_id: status_from_judgments(judgments.get(item_id, []), key, k)
        for item_id, _revision, key in items
    }


def _derived_status(
    decided: tuple[str, int] | None, current_revision: int, judged: ItemStatus
) -> str:
    """The rule: a decision (its status and revision) holds for the revision it was about;
    a newer text goes back to review (the decision stays in the history)."""
    if decided is not None and decided[1] == current_revision:
        return decided[0]
    return judged.value


def refresh_item_status(session: Session, item_id: str, overlap: int | None = None) -> str:
    """Recompute and store an item's status (the caller commits); returns the new status."""
    item = session.get(Item, item_id)
    if item is None:
        raise KeyError(item_id)
    decision = latest_decision(session, item_id)
    revision = session.exec(
        select(ItemRevision).where(
            ItemRevision.item_id == item_id, ItemRevision.number == item.current_revision
        )
    ).one()
    judged = statuses_from_judgments(
        session, [(item_id, item.current_revision, revision.key)], overlap
    )[item_id]
    status = _derived_status(
        None if decision is None else (decision.status, decision.revision_number),
        item.current_revision,
        judged,
    )
    if item.status != status:
        item.status = status
        session.add(item)
    return status


def refresh_item_statuses(
    session: Session, item_ids: Sequence[str], overlap: int | None = None
) -> int:
    """:func:`refresh_item_status` for many items, in a few bulk statements per thousand
    items (the caller commits and has flushed its changes); returns how many changed."""
    new_status: dict[str, str] = {}
    for chunk in id_chunks(list(dict.fromkeys(item_ids))):
        items = session.execute(
            select(
                col(Item.id), col(Item.current_revision), col(Item.status), col(ItemRevision.key)
            )
            .join(ItemRevision, is_current_revision())
            .where(col(Item.id).in_(chunk))
        ).all()
        decided = newest_decisions(session, col(Item.id).in_(chunk))
        judged = statuses_from_judgments(
            session,
            [(item_id, revision, key) for item_id, revision, _status, key in items],
            overlap,
        )
        for item_id, revision, old, _key in items:
            status = _derived_status(decided.get(item_id), revision, judged[item_id])
            if status != old:
                new_status[item_id] = status
    for status in sorted(set(new_status.values())):
        ids = [item_id for item_id, new in new_status.items() if new == status]
        for chunk in id_chunks(ids):
            session.execute(
                update(Item).where(col(Item.id).in_(chunk)).values(status=status),
                execution_options={"synchronize_session": "fetch"},
            )
    return len(new_status)


def refresh_judged_items(session: Session, person_id: int | None = None) -> int:
    """Refresh every undecided item with a judgment (``person_id``: a judgment of theirs),
    pending ones included: whose judgments count may have changed (``db.qualification``).
    Returns how many changed."""
    conditions: list[ColumnElement[bool]] = [
        col(Judgment.gold_id).is_(None),
        col(Item.status).in_([s.value for s in UNDECIDED_STATUSES]),
    ]
    if person_id is not None:
        conditions.append(col(Judgment.annotator_id) == person_id)
    ids = session.execute(
        select(col(Judgment.item_id))
        .join(Item, col(Item.id) == col(Judgment.item_id))
        .where(*conditions)
        .distinct()
    ).scalars()
    return refresh_item_statuses(session, list(ids))


def recompute_undecided_statuses(db: Database) -> int:
    """Recompute the status of every item no decision holds (pending ones included) from
    its judgments; returns how many changed.  On PostgreSQL a member may write an
    undecided item's status with raw SQL (each member's session stores the statuses its
    judgments change; only an item nobody judged is kept pending, ``db.guards``), and a
    forged one holds until the item is judged again: ``vetbench init`` puts them all
    back."""
    return _refresh_items_with_status(db, UNDECIDED_STATUSES)


def refresh_open_statuses(db: Database) -> int:
    """Recompute the status of every undecided item that has judgments (after k changed).

    Returns how many items changed status.
    """
    return _refresh_items_with_status(
        db, (ItemStatus.IN_REVIEW, ItemStatus.AGREED, ItemStatus.CONFLICT)
    )


def _refresh_items_with_status(db: Database, statuses: Iterable[ItemStatus]) -> int:
    """Recompute, in one transaction, the status of every item now in one of ``statuses``."""
    with db.transaction() as session:
        ids = session.execute(
            select(col(Item.id)).where(col(Item.status).in_([s.value for s in statuses]))
        ).scalars()
        return refresh_item_statuses(session, list(ids))

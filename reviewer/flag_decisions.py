"""A lead's decision on every undecided item that carries one flag, after looking.

``vetbench decide --flag needs-media --status rejected --reason flawed --as LEAD``
first counts (:func:`count_flagged`), shows the count and asks; then
:func:`decide_flagged` decides the items in ONE transaction, the set read again
inside it (an item decided or revised since the count is left alone), each
decision with its audit event naming the flag, and the statuses follow.  The
rules of a single decision hold (``reviewer.adjudication``): leads only, a reason
to reject; a corrected key cannot be given to many items at once.
"""

from __future__ import annotations

from sqlalchemy import ColumnElement, select
from sqlmodel import col

from db.engine import Database
from db.flags import flagged_condition
from db.item_scope import EVERY_ITEM, ItemScope
from db.items import id_order, item_conditions
from db.models import Item, ItemRevision, is_current_revision
from db.people import require_lead
from db.vocabulary import UNDECIDED_STATUSES, DecisionReason, FlagName, ItemStatus
from reviewer.adjudication import (
    AdjudicationError,
    BulkDecision,
    decision_reason,
    store_bulk_decisions,
)

__all__ = ["count_flagged", "decide_flagged", "flagged_ids"]


def _conditions(flag: FlagName, scope: ItemScope) -> list[ColumnElement[bool]]:
    return [
        flagged_condition([flag]),
        *item_conditions(
            statuses=[status.value for status in UNDECIDED_STATUSES],
            kinds=scope.kinds,
            sources=scope.sources,
        ),
    ]


def flagged_ids(
    db: Database,
    flag: str | FlagName,
    scope: ItemScope = EVERY_ITEM,
) -> list[str]:
    """The undecided items whose current revision carries ``flag``, as people number them
    (``src:9`` before ``src:37``: :func:`db.items.id_order`)."""
    with db.session() as session:
        ids = session.scalars(select(col(Item.id)).where(*_conditions(FlagName(flag), scope)))
        return sorted(ids, key=id_order)


def count_flagged(
    db: Database,
    flag: str | FlagName,
    scope: ItemScope = EVERY_ITEM,
) -> int:
    """How many undecided items carry ``flag`` (what ``decide --flag`` asks about)."""
    return len(flagged_ids(db, flag, scope))


def decide_flagged(
    db: Database,
    lead_name: str,
    flag: str | FlagName,
    status: str | ItemStatus,
    *,
    reason: str | DecisionReason | None = None,
    comment: str = "",
    scope: ItemScope = EVERY_ITEM,
) -> list[str]:
    """Decide every undecided item that carries ``flag``, with each item's current key
    when approving; returns the ids decided."""
    name = FlagName(flag)
    decided = ItemStatus(status)
    if decided not in (ItemStatus.APPROVED, ItemStatus.REJECTED):
        raise AdjudicationError(f"a decision is approved or rejected, not '{status}'")
    why = decision_reason(f"the items flagged {name.value}", decided, reason)
    note = comment.strip() or f"decided for the flag {name.value}"
    with db.transaction() as session:
        lead = require_lead(session, lead_name.strip())
        conditions = _conditions(name, scope)
        current = is_current_revision()
        rows = session.execute(
            select(
                col(Item.id), col(Item.status), col(Item.current_revision), col(ItemRevision.key)
            )
            .join(ItemRevision, current)
            .where(*conditions)
            .order_by(col(Item.id))
        ).all()
        if not rows:
            return []
        final = decided is ItemStatus.APPROVED
        store_bulk_decisions(
            session,
            lead,
            decided,
            [
                BulkDecision(item_id, revision, key if final else None, previous)
                for item_id, previous, revision, key in rows
            ],
            comment=note,
            reason=why,
            flag=name,
        )
        return [item_id for item_id, *_ in rows]

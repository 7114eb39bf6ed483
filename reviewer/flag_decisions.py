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

from collections.abc import Sequence

from sqlalchemy import ColumnElement, insert, select, update
from sqlmodel import col

from db.audit import record_audits
from db.engine import Database
from db.flags import flagged_condition
from db.items import item_conditions
from db.models import Decision, Item, ItemRevision, is_current_revision, utcnow
from db.people import require_lead
from db.vocabulary import UNDECIDED_STATUSES, DecisionReason, FlagName, ItemStatus
from reviewer.adjudication import AdjudicationError, parse_reason

__all__ = ["count_flagged", "decide_flagged", "flagged_ids"]


def _conditions(
    flag: FlagName, kinds: Sequence[str] | None, sources: Sequence[str] | None
) -> list[ColumnElement[bool]]:
    return [
        flagged_condition([flag]),
        *item_conditions(
            statuses=[status.value for status in UNDECIDED_STATUSES], kinds=kinds, sources=sources
        ),
    ]


def flagged_ids(
    db: Database,
    flag: str | FlagName,
    *,
    kinds: Sequence[str] | None = None,
    sources: Sequence[str] | None = None,
) -> list[str]:
    """The undecided items whose current revision carries ``flag``, in id order."""
    with db.session() as session:
        return list(
            session.scalars(
                select(col(Item.id))
                .where(*_conditions(FlagName(flag), kinds, sources))
                .order_by(col(Item.id))
            )
        )


def count_flagged(
    db: Database,
    flag: str | FlagName,
    *,
    kinds: Sequence[str] | None = None,
    sources: Sequence[str] | None = None,
) -> int:
    """How many undecided items carry ``flag`` (what ``decide --flag`` asks about)."""
    return len(flagged_ids(db, flag, kinds=kinds, sources=sources))


def decide_flagged(
    db: Database,
    lead_name: str,
    flag: str | FlagName,
    status: str | ItemStatus,
    *,
    reason: str | DecisionReason | None = None,
    comment: str = "",
    kinds: Sequence[str] | None = None,
    sources: Sequence[str] | None = None,
) -> list[str]:
    """Decide every undecided item that carries ``flag``, with each item's current key
    when approving; returns the ids decided."""
    name = FlagName(flag)
    decided = ItemStatus(status)
    if decided not in (ItemStatus.APPROVED, ItemStatus.REJECTED):
        raise AdjudicationError(f"a decision is approved or rejected, not '{status}'")
    why = parse_reason(reason)
    if decided is ItemStatus.REJECTED and why is None:
        known = ", ".join(r.value for r in DecisionReason)
        raise AdjudicationError(f"rejecting needs a reason: one of {known}")
    note = comment.strip() or f"decided for the flag {name.value}"
    with db.transaction() as session:
        lead = require_lead(session, lead_name.strip())
        conditions = _conditions(name, kinds, sources)
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
        now = utcnow()
        final = decided is ItemStatus.APPROVED
        session.execute(
            insert(Decision),
            [
                {
                    "item_id": item_id,
                    "lead_id": lead.id,
                    "status": decided.value,
                    "revision_number": revision,
                    "final_key": key if final else None,
                    "reason": why.value if why else None,
                    "comment": note,
                    "created_at": now,
                }
                for item_id, _status, revision, key in rows
            ],
        )
        record_audits(
            session,
            lead.name,
            "decide",
            [
                (
                    item_id,
                    {
                        "status": decided.value,
                        "revision": revision,
                        "final_key": key if final else None,
                        "reason": why.value if why else None,
                        "previous_status": previous,
                        "bulk": True,
                        "flag": name.value,
                    },
                )
                for item_id, previous, revision, key in rows
            ],
        )
        # These decisions are now the newest, so the status rule gives the decided status.
        ids = [item_id for item_id, *_ in rows]
        for start in range(0, len(ids), 500):
            session.execute(
                update(Item)
                .where(col(Item.id).in_(ids[start : start + 500]))
                .values(status=decided.value),
                execution_options={"synchronize_session": False},
            )
        return ids

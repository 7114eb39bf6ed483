"""An annotator's own active judgments, as the review app shows them: of one item (the
judged and authored phases) and all of them, newest first (``l``, the judged list)."""

from __future__ import annotations

from sqlalchemy import Select, select
from sqlmodel import Session, col

from db.models import Item, ItemRevision, Judgment
from reviewer.queue_values import OwnJudgment, own_judgment_of

__all__ = ["judged_items", "own_judgment"]


def _own_judgments(person_id: int) -> Select[Judgment, str, str]:
    """The person's active judgments, each with the key and the kind of the revision it
    judged (the kind its answer is written in)."""
    return (
        select(Judgment, col(ItemRevision.key), col(ItemRevision.kind))
        .join(ItemRevision, col(ItemRevision.id) == col(Judgment.revision_id))
        .where(col(Judgment.annotator_id) == person_id, col(Judgment.retracted).is_(False))
    )


def own_judgment(
    session: Session,
    person_id: int,
    annotator: str,
    item_id: str,
    revision_number: int | None = None,
    *,
    any_revision: bool = False,
) -> OwnJudgment | None:
    """``annotator``'s (``person_id``'s) active judgment of the item's current revision
    (or of ``revision_number``; with ``any_revision``, their newest of any revision)."""
    query = _own_judgments(person_id).where(col(Judgment.item_id) == item_id)
    if any_revision:
        query = query.order_by(col(Judgment.revision_number).desc())
    else:
        if revision_number is None:
            item = session.get(Item, item_id)
            if item is None:
                return None
            revision_number = item.current_revision
        query = query.where(col(Judgment.revision_number) == revision_number)
    row = session.execute(query).first()
    return None if row is None else own_judgment_of(*row, annotator=annotator)


def judged_items(session: Session, person_id: int, annotator: str, limit: int) -> list[OwnJudgment]:
    """``annotator``'s active judgments, newest first."""
    rows = session.execute(
        _own_judgments(person_id)
        .order_by(col(Judgment.created_at).desc(), col(Judgment.id).desc())
        .limit(limit)
    ).all()
    return [own_judgment_of(*row, annotator=annotator) for row in rows]

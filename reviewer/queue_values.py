"""The values the annotator's queue (``reviewer.queue``) hands out: the annotator's own
judgments, progress figures, guidelines news, and the session's history."""

from __future__ import annotations

from dataclasses import dataclass, field

from db.models import Judgment
from db.rows import from_row
from db.vocabulary import ItemKind
from reviewer.judging import JudgmentView

__all__ = ["GuidelinesNews", "OwnJudgment", "QueueProgress", "SessionHistory", "own_judgment_of"]


@dataclass(frozen=True)
class OwnJudgment(JudgmentView):
    """The annotator's own active judgment of an item revision, for browsing: a
    judgment as the lead sees it, and which one of which item it is."""

    judgment_id: int
    item_id: str
    kind: ItemKind  # the judged revision's, so its answer shows as the rest of the app shows it


@dataclass(frozen=True)
class QueueProgress:
    """Figures for the progress line (``items_*`` within the queue's filters)."""

    session_done: int
    session_assigned: int
    overall_done: int
    items_left: int  # open items this annotator could still judge
    median_seconds: float | None
    items_complete: int = 0  # items with enough judgments (or a decision)
    items_total: int = 0


@dataclass(frozen=True)
class GuidelinesNews:
    """``first``: a new annotator, who reads the guidelines before their first item;
    else the guidelines changed since ``last_seen``, the version of their latest judgment."""

    current: int
    first: bool
    last_seen: int | None = None


@dataclass
class SessionHistory:
    """Items shown in this session, in order, and where the annotator is in that list."""

    item_ids: list[str] = field(default_factory=list)
    position: int = -1
    skipped: set[str] = field(default_factory=set)

    @property
    def current(self) -> str | None:
        return self.item_ids[self.position] if 0 <= self.position < len(self.item_ids) else None

    def append(self, item_id: str) -> None:
        # Showing an item again moves it to the end instead of duplicating it.
        if item_id in self.item_ids:
            self.item_ids.remove(item_id)
        self.item_ids.append(item_id)
        self.position = len(self.item_ids) - 1


def own_judgment_of(row: Judgment, key: str, kind: str, *, annotator: str) -> OwnJudgment:
    """``row`` (this annotator's judgment of a revision whose key is ``key`` and whose kind
    is ``kind``) as plain data."""
    return from_row(
        OwnJudgment,
        row,
        annotator=annotator,
        kind=ItemKind(kind),
        revision=row.revision_number,
        alternative_orders=tuple(row.alternative_orders),
        matches_key=row.blind_answer == key,
        judgment_id=row.id,
    )

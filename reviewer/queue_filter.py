"""The queue's filters: which items an annotator asked to be served (kinds, sources,
statuses, exams, a text search, flags), checked when they are made."""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import ColumnElement
from sqlmodel import Session

from db.errors import VetbenchError
from db.flags import flagged_condition
from db.items import item_conditions
from db.search import exam_condition, parse_search, search_condition, search_terms
from db.vocabulary import OPEN_STATUSES, FlagName

__all__ = ["QueueError", "QueueFilter"]


class QueueError(VetbenchError, ValueError):
    """A queue request that cannot be served as asked (bad filter, unknown item)."""


@dataclass(frozen=True)
class QueueFilter:
    """Optional restrictions on the queue; empty values mean no restriction.

    ``text`` is a search in the syntax of ``db.search_query`` (every term must occur in
    the item's current question or choices; ``in:``, ``whole:``, ``not:`` refine it); ``exams`` are CFLUE exam names (名称).
    """

    kinds: tuple[str, ...] = ()
    sources: tuple[str, ...] = ()
    statuses: tuple[str, ...] = ()
    exams: tuple[str, ...] = ()
    text: str = ""
    flags: tuple[str, ...] = ()  # FlagName values: items whose current revision has one

    def __post_init__(self) -> None:
        allowed = {status.value for status in OPEN_STATUSES}
        wrong = [status for status in self.statuses if status not in allowed]
        if wrong:
            raise QueueError(
                f"the queue holds only items that still need judgments ({', '.join(sorted(allowed))}); "
                f"not {', '.join(wrong)}"
            )
        search_terms(self.text)  # a search the database cannot run is refused here, in words
        unknown = [name for name in self.flags if name not in {f.value for f in FlagName}]
        if unknown:
            raise QueueError(
                f"unknown flag {', '.join(unknown)}; flags: {', '.join(f.value for f in FlagName)}"
            )

    def describe(self) -> str:
        parts = [
            f"{name} {', '.join(values)}"
            for name, values in (
                ("kind", self.kinds),
                ("source", self.sources),
                ("status", self.statuses),
                ("exam", self.exams),
                ("flag", self.flags),
            )
            if values
        ]
        if search_terms(self.text):
            parts.append(f"text “{parse_search(self.text).describe()}”")
        return "; ".join(parts) or "all items"

    def conditions(self, session: Session) -> list[ColumnElement[bool]]:
        """The restrictions as conditions on ``Item`` (statuses apart: the queue walks them)."""
        conditions = item_conditions(kinds=self.kinds, sources=self.sources)
        if self.exams:
            conditions.append(exam_condition(session, self.exams))
        if search_terms(self.text):
            conditions.append(search_condition(session, self.text))
        if self.flags:
            conditions.append(flagged_condition(self.flags))
        return conditions

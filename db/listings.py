"""What the database holds, listed for people: source names, the item list, an item's
flags revision by revision, and the generated items that failed validation.

Each list is read here, in ``db/``, and handed out as frozen values whose
``to_json()`` is exactly what the ``--json`` printers write; commands and screens only
lay them out.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from itertools import islice

from sqlmodel import Session, col, select

from db.flags import ItemFlag, current_flags, revision_flags, worded_now
from db.items import ItemSnapshot, iter_items
from db.json_types import JsonObject, attributes_json, fields_json
from db.models import GenerationReject, Item
from db.rows import from_row
from db.search import SearchQuery, exam_condition, search_condition

PREVIEW_CHARS = 72


def source_names(session: Session) -> list[str]:
    """Every source name in the database, sorted."""
    return list(session.scalars(select(col(Item.source)).distinct().order_by(col(Item.source))))


def preview(text: str, width: int = PREVIEW_CHARS) -> str:
    """The start of ``text`` on one line (JSON keeps it raw; a table shows it with
    ``terminal_text``)."""
    line = " ".join(text.split())
    return line if len(line) <= width else line[: width - 1] + "…"


@dataclass(frozen=True)
class ItemListing:
    """One line of ``vetbench items``: an item at its current revision, with its flags."""

    item: ItemSnapshot
    flags: tuple[ItemFlag, ...]

    @property
    def preview(self) -> str:
        return preview(self.item.prompt)

    def to_json(self) -> JsonObject:
        names = ("id", "kind", "status", "source", "revision", "suspected_duplicate_of")
        return {**attributes_json(self.item, *names), **attributes_json(self, "preview", "flags")}


def list_items(
    session: Session,
    *,
    statuses: Sequence[str] = (),
    kinds: Sequence[str] = (),
    sources: Sequence[str] = (),
    search: str | SearchQuery | None = None,
    exams: Sequence[str] = (),
    flags: Sequence[str] = (),
    limit: int | None = None,
) -> list[ItemListing]:
    """Items in import order, filtered (each filter left empty: any): ``search`` keeps
    those whose current question and choices hold every word (``db.search``; a
    :class:`SearchQuery` or its text), ``exams`` CFLUE items of
    these exams, ``flags`` those whose current revision has one of these flags."""
    where = []
    if search is not None:
        where.append(search_condition(session, search))
    if exams:
        where.append(exam_condition(session, exams))
    items = list(
        islice(
            iter_items(
                session,
                statuses=list(statuses) or None,
                kinds=list(kinds) or None,
                sources=list(sources) or None,
                where=where,
                flags=list(flags) or None,
            ),
            limit,
        )
    )
    flags_of = current_flags(session, [item.id for item in items])
    return [ItemListing(item, tuple(flags_of.get(item.id, ()))) for item in items]


@dataclass(frozen=True)
class RevisionFlags:
    revision: int
    flags: tuple[ItemFlag, ...]

    def to_json(self) -> JsonObject:
        return {"revision": self.revision, "flags": [flag.to_json() for flag in self.flags]}


@dataclass(frozen=True)
class FlagHistory:
    """An item's flags, revision by revision, the current revision first."""

    item_id: str
    current_revision: int
    revisions: tuple[RevisionFlags, ...]

    def to_json(self) -> JsonObject:
        return {
            "item_id": self.item_id,
            "current_revision": self.current_revision,
            "revisions": [revision.to_json() for revision in self.revisions],
        }


def flag_history(session: Session, item_id: str) -> FlagHistory | None:
    """``item_id``'s flags for each of its revisions; None when there is no such item."""
    item = session.get(Item, item_id)
    if item is None:
        return None
    revisions = []
    for number in range(item.current_revision, 0, -1):
        # the current revision's as the rules word them now (a duplicate flag stored by an
        # older version said "copies" where triage says "a shared stem"); earlier ones as
        # they were stored
        flags = worded_now(session, revision_flags(session, item_id, number))
        revisions.append(RevisionFlags(number, tuple(flags)))
    return FlagHistory(item_id, item.current_revision, tuple(revisions))


def generated_item_id(source: str, article_id: str, sample_index: int) -> str:
    """The id `vetbench generate` gives sample ``sample_index`` of an article or question:
    the stored item's id, or the rejected one's in `vetbench rejects`."""
    return f"{source}:{article_id}:{sample_index}"


@dataclass(frozen=True)
class RejectedGeneration:
    """A generated item that failed validation, with the reason and the raw response."""

    source: str
    article_id: str
    sample_index: int
    kind: str
    model: str
    prompt_hash: str
    reason: str
    raw_response: str
    created_at: datetime

    @property
    def id(self) -> str:
        return generated_item_id(self.source, self.article_id, self.sample_index)

    def to_json(self) -> JsonObject:
        # The id first, then the fields; the time in ISO form (json_value's is str()).
        return {"id": self.id, **fields_json(self), "created_at": self.created_at.isoformat()}


def rejected_generations(session: Session, sources: Sequence[str] = ()) -> list[RejectedGeneration]:
    """The generated items that failed validation, oldest first (``sources``: only these)."""
    query = select(GenerationReject).order_by(col(GenerationReject.id))
    if sources:
        query = query.where(col(GenerationReject.source).in_(list(sources)))
    return [from_row(RejectedGeneration, row) for row in session.exec(query)]

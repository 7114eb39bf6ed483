"""Items as plain data, and the one way to add items and revisions.

Widgets, the evaluator and exporters work with :class:`ItemSnapshot` (a frozen
dataclass), never with ORM rows, so nothing outside ``db/`` depends on a live session.

Every item is created by :func:`store_items` (imports in bulk, :func:`add_item` for
generated items) and every revision by :func:`store_revisions` (through
:func:`store_items`, re-imports in bulk, :func:`add_revision` for edits and key
corrections), which raises the new revisions' flags in the same transaction
(``db.flags.flag_revisions``).  A new revision of a stored item is numbered by
:func:`next_revision_numbers`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field, fields
from datetime import datetime
from typing import Any

from sqlalchemy import ColumnElement, func, insert
from sqlmodel import Session, col, select
from sqlmodel.sql.expression import Select

from db.audit import record_audit
from db.bulk_reads import id_chunks
from db.bytewise import bytewise
from db.copy_flags import refresh_copies
from db.flag_rules import RevisionText
from db.flags import flag_revisions, flagged_condition
from db.models import Item, ItemRevision, is_current_revision, utcnow
from db.rows import from_row
from db.validation import ItemDraft, RevisionContent
from db.vocabulary import REVISE_ACTION, ItemKind, ItemStatus
from db.words import few_of

_ITEM = Item.__table__  # type: ignore[attr-defined]
_DIGITS = re.compile(r"(\d+)")
ID_GUESSES_READ = 100  # ids a bare one may stand for: a few are named, then how many more


def id_order(item_id: str) -> tuple[tuple[str | int, ...], str]:
    """Sort key that lists item ids as people number them: ``src:2`` before ``src:10``.

    Item ids end in numbers (``SOURCE:N``, ``SOURCE:ARTICLE:N``), which text order
    scrambles.  The id itself breaks ties such as ``src:01`` and ``src:1``."""
    parts = _DIGITS.split(item_id)  # text at even places, digits at odd ones
    return tuple(int(part) if i % 2 else part for i, part in enumerate(parts)), item_id


@dataclass(frozen=True)
class ItemSnapshot:
    """An item at one revision (normally its current one), detached from the database."""

    id: str
    kind: ItemKind
    source: str
    source_ref: str
    language: str
    status: str
    revision: int
    prompt: str
    choices: dict[str, str]
    key: str
    explanation: str | None
    suspected_duplicate_of: str | None = None
    duplicate_similarity: float | None = None
    meta: dict[str, Any] = field(default_factory=dict)
    revision_id: int | None = None

    @property
    def labels(self) -> list[str]:
        return list(self.choices)


def snapshot(item: Item, revision: ItemRevision) -> ItemSnapshot:
    """The item's fields copied by name; its text, key and numbers from ``revision``."""
    return from_row(
        ItemSnapshot,
        item,
        kind=ItemKind(revision.kind),  # the kind it was written and judged in
        meta=dict(item.meta),
        revision=revision.number,
        revision_id=revision.id,
        prompt=revision.prompt,
        choices=dict(revision.choices),
        key=revision.key,
        explanation=revision.explanation,
    )


def _current_join() -> Select[Item, ItemRevision]:
    """Items joined with their current revision."""
    return select(Item, ItemRevision).join(ItemRevision, is_current_revision())


def locked_item(session: Session, item_id: str) -> ItemSnapshot | None:
    """The item at its current revision, its row locked until the transaction ends.

    Take it first in any transaction that changes an item (a judgment, an edit, a
    decision), so concurrent writers of one item queue up instead of deadlocking
    or both making "the next" revision (PostgreSQL: ``FOR NO KEY UPDATE``; SQLite
    serialises writers already and ignores it).  None when there is no such item.
    """
    if session.get(Item, item_id, with_for_update={"key_share": True}) is None:
        return None
    return get_item(session, item_id)


def get_item(session: Session, item_id: str, revision: int | None = None) -> ItemSnapshot | None:
    """One item at its current revision (or at ``revision``), or None if there is no such item."""
    item = session.get(Item, item_id)
    if item is None:
        return None
    number = item.current_revision if revision is None else revision
    row = session.exec(
        select(ItemRevision).where(ItemRevision.item_id == item_id, ItemRevision.number == number)
    ).first()
    return None if row is None else snapshot(item, row)


def no_item_message(session: Session, item_id: str) -> str:
    """``there is no item '7'``, with the ids that a bare id may stand for: ``7`` typed for
    ``knowledge:7`` (ids are SOURCE:NUMBER) is told ``did you mean knowledge:7?``.  What
    every command and screen that looks up an id a person typed says when there is none."""
    message = f"there is no item '{item_id}'"
    bare = item_id.strip()
    if not bare or ":" in bare:
        return message
    guesses = list(
        session.exec(
            select(Item.id)
            .where(col(Item.id).endswith(f":{bare}", autoescape=True))
            .order_by(bytewise(col(Item.id)))
            .limit(ID_GUESSES_READ)
        )
    )
    return f"{message}; did you mean {few_of(guesses)}?" if guesses else message


def get_revisions(session: Session, item_id: str) -> list[ItemRevision]:
    """Every revision of an item, oldest first."""
    return list(
        session.exec(
            select(ItemRevision)
            .where(ItemRevision.item_id == item_id)
            .order_by(col(ItemRevision.number))
        )
    )


def item_conditions(
    *,
    statuses: Sequence[str] | None = None,
    kinds: Sequence[str] | None = None,
    sources: Sequence[str] | None = None,
) -> list[ColumnElement[bool]]:
    """Conditions on ``Item`` that keep these statuses, kinds and sources (each one
    left out or empty: any)."""
    conditions: list[ColumnElement[bool]] = []
    if statuses:
        conditions.append(col(Item.status).in_(list(statuses)))
    if kinds:
        conditions.append(col(Item.kind).in_(list(kinds)))
    if sources:
        conditions.append(col(Item.source).in_(list(sources)))
    return conditions


def count_items(
    session: Session,
    *,
    statuses: Sequence[str] | None = None,
    kinds: Sequence[str] | None = None,
    sources: Sequence[str] | None = None,
) -> int:
    """How many items have these statuses, kinds and sources (as :func:`item_conditions`)."""
    conditions = item_conditions(statuses=statuses, kinds=kinds, sources=sources)
    return int(session.scalar(select(func.count()).select_from(Item).where(*conditions)) or 0)


def iter_items(
    session: Session,
    *,
    statuses: Sequence[str] | None = None,
    kinds: Sequence[str] | None = None,
    sources: Sequence[str] | None = None,
    ids: Iterable[str] | None = None,
    flags: Sequence[str] | None = None,
    where: Sequence[ColumnElement[bool]] = (),
    batch_size: int = 2000,
) -> Iterator[ItemSnapshot]:
    """Items at their current revision, in id order, filtered (``flags``: whose current
    revision carries one of these); streamed in batches.

    ``where`` adds conditions on ``Item`` (a text search: ``db.search``)."""
    query = _current_join().where(
        *where, *item_conditions(statuses=statuses, kinds=kinds, sources=sources)
    )
    if ids is not None:
        query = query.where(col(Item.id).in_(list(ids)))
    if flags:
        query = query.where(flagged_condition(flags))
    query = query.order_by(col(Item.created_at), bytewise(col(Item.id))).execution_options(
        yield_per=batch_size
    )
    for item, revision in session.exec(query):
        yield snapshot(item, revision)


@dataclass(frozen=True)
class NewRevision(RevisionContent):
    """A revision about to be stored, in the kind its key is written in."""

    item_id: str
    kind: str
    provenance: dict[str, Any]
    created_at: datetime

    @classmethod
    def of_draft(
        cls,
        draft: ItemDraft,
        *,
        item_id: str,
        number: int,
        author: str,
        change_note: str,
        created_at: datetime,
    ) -> NewRevision:
        """The draft's text, key and provenance as revision ``number`` of ``item_id`` (its kind,
        prompt, key and explanation are copied by name)."""
        return from_row(
            cls,
            draft,
            item_id=item_id,
            number=number,
            choices=dict(draft.choices),
            provenance=dict(draft.provenance),
            author=author,
            change_note=change_note,
            created_at=created_at,
        )

    @property
    def text(self) -> RevisionText:
        return RevisionText(self.kind, self.prompt, self.choices, self.key, self.explanation)

    def row(self) -> dict[str, Any]:
        """Its row of the item_revision table: every field by name, the mappings copied."""
        row = {field.name: getattr(self, field.name) for field in fields(self)}
        return {**row, "choices": dict(self.choices), "provenance": dict(self.provenance)}


def store_revisions(
    session: Session, revisions: Sequence[NewRevision], *, check_duplicates: bool = True
) -> None:
    """The one place revisions are created: insert them, then raise their flags
    (``db.flags.flag_revisions``) in the same transaction.

    The items must exist (flushed) already; setting ``current_revision`` is the
    caller's.  ``check_duplicates=False`` is for callers that store many items and
    check them for near-duplicates together afterwards (import, generation), and write
    the flags of the copies of revised items again (``db.copy_flags.refresh_copies``).
    """
    if not revisions:
        return
    session.execute(insert(ItemRevision), [revision.row() for revision in revisions])
    flag_revisions(session, revisions, duplicates=check_duplicates)
    if check_duplicates:  # the copies of these items now describe their new texts
        refresh_copies(session, [revision.item_id for revision in revisions])


@dataclass(frozen=True)
class NewItem:
    """An item about to be stored, with its revisions (``current_revision`` among them)."""

    id: str
    kind: str
    source: str
    source_ref: str
    language: str
    meta: dict[str, Any]
    created_at: datetime
    revisions: tuple[NewRevision, ...]
    status: str = ItemStatus.PENDING.value
    current_revision: int = 1

    @classmethod
    def of_draft(
        cls,
        draft: ItemDraft,
        *,
        item_id: str,
        source: str,
        created_at: datetime,
        revisions: tuple[NewRevision, ...],
        status: str = ItemStatus.PENDING.value,
        current_revision: int = 1,
    ) -> NewItem:
        """The draft's item as ``item_id`` of ``source``."""
        # Built directly, not by from_row: imports make a million of these.
        return cls(
            id=item_id,
            kind=draft.kind,
            source=source,
            source_ref=draft.source_ref,
            language=draft.language,
            meta=dict(draft.meta),
            created_at=created_at,
            revisions=revisions,
            status=status,
            current_revision=current_revision,
        )

    def row(self) -> dict[str, Any]:
        """Its row of the item table (its revisions are rows of their own); no duplicate
        link yet: the near-duplicate check makes those."""
        row = {name: getattr(self, name) for name in _ITEM_FIELDS}
        row["meta"] = dict(self.meta)
        return {**row, "suspected_duplicate_of": None, "duplicate_similarity": None}


_ITEM_FIELDS = tuple(field.name for field in fields(NewItem) if field.name != "revisions")


def store_items(
    session: Session, items: Sequence[NewItem], *, check_duplicates: bool = True
) -> None:
    """The one place items are created: insert them, then their revisions
    (:func:`store_revisions`, which raises their flags) in the same transaction.

    ``check_duplicates=False`` is for callers that store many items and check them for
    near-duplicates together afterwards (import, generation).
    """
    if not items:
        return
    # The table, not the ORM class: a bulk insert of plain rows (imports add millions).
    session.execute(insert(_ITEM), [item.row() for item in items])
    revisions = [revision for item in items for revision in item.revisions]
    store_revisions(session, revisions, check_duplicates=check_duplicates)


def item_sources(session: Session, item_ids: Iterable[str]) -> list[str]:
    """The sources of these items, each once, sorted."""
    sources: set[str] = set()
    for chunk in id_chunks(list(item_ids)):
        sources.update(session.exec(select(col(Item.source)).where(col(Item.id).in_(chunk))))
    return sorted(sources)


def next_revision_numbers(session: Session, item_ids: Sequence[str]) -> dict[str, int]:
    """The number the next revision of each stored item takes: its newest revision's + 1
    (the one place it is computed; items without revisions are left out)."""
    numbers: dict[str, int] = {}
    for chunk in id_chunks(list(item_ids)):
        query = (
            select(col(ItemRevision.item_id), func.max(col(ItemRevision.number)))
            .where(col(ItemRevision.item_id).in_(chunk))
            .group_by(col(ItemRevision.item_id))
        )
        numbers.update({item_id: newest + 1 for item_id, newest in session.exec(query)})
    return numbers


def add_item(
    session: Session,
    item_id: str,
    source: str,
    draft: ItemDraft,
    *,
    author: str,
    check_duplicates: bool = False,
) -> Item:
    """Store a validated draft as a new item with revision 1 (the caller commits).

    Its text flags are raised at once; near-duplicates only with ``check_duplicates``:
    callers adding many items check them together afterwards
    (``db.flags.check_duplicates``), as generation does.
    """
    now = utcnow()
    revision = NewRevision.of_draft(
        draft,
        item_id=item_id,
        number=1,
        author=author,
        change_note="import" if not draft.provenance.get("model") else "generated",
        created_at=now,
    )
    item = NewItem.of_draft(
        draft, item_id=item_id, source=source, created_at=now, revisions=(revision,)
    )
    store_items(session, [item], check_duplicates=check_duplicates)
    stored = session.get(Item, item_id)
    assert stored is not None  # inserted just now, in this transaction
    return stored


def add_revision(
    session: Session,
    item_id: str,
    *,
    author: str,
    change_note: str,
    prompt: str | None = None,
    choices: dict[str, str] | None = None,
    key: str | None = None,
    explanation: str | None = None,
    provenance: dict[str, Any] | None = None,
    keep_explanation: bool = True,
    kind: ItemKind | None = None,
) -> ItemRevision:
    """Make a new revision from the current one with the given fields changed; it becomes current.

    The old revision stays; judgments keep pointing at the revision they judged.
    The caller validates the new text (``db.validation``) and commits.  The new
    revision's flags are raised at once, its near-duplicates included.
    """
    item = session.get(Item, item_id)
    if item is None:
        raise KeyError(item_id)
    current = session.exec(
        select(ItemRevision).where(
            ItemRevision.item_id == item_id, ItemRevision.number == item.current_revision
        )
    ).one()
    new = NewRevision(
        item_id=item_id,
        number=next_revision_numbers(session, [item_id])[item_id],
        kind=item.kind if kind is None else kind.value,
        prompt=current.prompt if prompt is None else prompt,
        choices=dict(current.choices if choices is None else choices),
        key=current.key if key is None else key,
        explanation=(current.explanation if keep_explanation else None)
        if explanation is None
        else explanation,
        author=author,
        change_note=change_note,
        provenance=dict(provenance or {}),
        created_at=utcnow(),
    )
    item.current_revision = new.number
    item.kind = new.kind  # the item's kind is its current revision's
    session.add(item)
    session.flush()
    store_revisions(session, [new])
    revision = session.exec(
        select(ItemRevision).where(
            ItemRevision.item_id == item_id, ItemRevision.number == new.number
        )
    ).one()
    record_audit(
        session,
        author,
        REVISE_ACTION,
        item_id,
        revision=revision.number,
        previous_revision=current.number,
        note=change_note,
        **revision_changes(
            RevisionText(
                current.kind, current.prompt, current.choices, current.key, current.explanation
            ),
            new.text,
        ),
    )
    return revision


def revision_changes(old: RevisionText, new: RevisionText) -> dict[str, Any]:
    """What a revision changes, as its ``revise`` audit event says it (an edit, a key
    correction, a re-import): the fields changed, and the key and the kind old and new."""
    changed = [
        name
        for name in ("kind", "prompt", "choices", "key", "explanation")
        if getattr(new, name) != getattr(old, name)
    ]
    return {
        "changed": changed,
        **({"old_key": old.key, "new_key": new.key} if "key" in changed else {}),
        **({"old_kind": old.kind, "new_kind": new.kind} if "kind" in changed else {}),
    }

"""Every current revision's flags recomputed: after the rules changed, after flag rows were
written by hand, and by the migrations that bring in a flag (``vetbench flags recompute``).

- :func:`recompute_flags` brings every current revision's automatic and model flags up to
  date: the text rules, the near-duplicate links (a link the item file stated stays; a
  link whose words would change, its original edited since, is written again:
  ``db.copy_flags``) and, when asked, the model flags.
- :func:`backfill_text_flag` raises one new text rule's flag where it is missing.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import closing
from dataclasses import dataclass

from sqlalchemy import delete, select
from sqlmodel import Session, col

from db.audit import record_audit
from db.bulk_reads import id_chunks
from db.canonical_text import item_text
from db.copy_flags import reworded_links
from db.dedup import near_duplicates
from db.flag_rules import FlagFinding, RevisionText, text_findings
from db.flags import (
    DuplicateLink,
    current_text_columns,
    duplicate_threshold,
    flag_row,
    insert_flags,
    lock_flags,
    record_duplicates,
    refresh_model_flags,
    replace_changed,
    stored_by_revision,
    text_choices,
)
from db.json_types import JsonObject
from db.models import Item, ItemRevision, StoredFlag, is_current_revision, utcnow
from db.spill import TextSpill
from db.stored_flags import flag_counts, malformed_flag_ids
from db.text_sources import InMemoryTexts
from db.vocabulary import FLAGS_ACTION, FlagName, FlagSource, ItemKind

__all__ = ["RecomputeReport", "backfill_text_flag", "recompute_flags"]


@dataclass(frozen=True)
class RecomputeReport:
    """What :func:`recompute_flags` changed: flags added and removed, by flag name."""

    revisions: int  # current revisions looked at
    added: int
    removed: int
    by_flag: dict[str, int]  # items whose current revision has each flag, afterwards

    def to_json(self) -> JsonObject:
        return {
            "revisions": self.revisions,
            "added": self.added,
            "removed": self.removed,
            "by_flag": {**self.by_flag},
        }


_TEXT_FLAGS = (
    FlagName.NEEDS_MEDIA,
    FlagName.HTML,
    FlagName.KEY_MISMATCH,
    FlagName.ORDER_LEAK,
    FlagName.SAME_CHOICES,
)


_KNOWN_KINDS = frozenset(kind.value for kind in ItemKind)  # a hand-made row may hold another


def _stored_text_findings(text: RevisionText) -> list[FlagFinding]:
    """The text rules' findings on a stored revision; none for a hand-made row of a kind
    vetbench does not know (vetbench itself stores only known kinds)."""
    return text_findings(text) if text.kind in _KNOWN_KINDS else []


def _every_current_text(session: Session) -> Iterator[tuple[str, int, RevisionText]]:
    """Every item's current revision as the text rules read it: (item, revision number,
    text), the oldest item first (the order near-duplicates are found in)."""
    query = (
        select(*current_text_columns(), col(ItemRevision.explanation))
        .join(ItemRevision, is_current_revision())
        .order_by(col(Item.created_at), col(Item.id))
    )
    for item_id, kind, revision, prompt, choices, key, explanation in session.execute(query):
        yield (
            item_id,
            revision,
            RevisionText(kind, prompt, text_choices(choices), key, explanation),
        )


def recompute_flags(
    session: Session,
    actor: str,
    *,
    threshold: float | None = None,
    models: bool = True,
) -> RecomputeReport:
    """Recompute the automatic flags of every item's current revision (and, with
    ``models``, the model flags); revisions whose flags are unchanged are left alone.
    Flags from ``vetbench check`` are kept; rows vetbench did not write are removed
    (``db.stored_flags``).  One audit event records what changed, if anything did."""
    lock_flags(session, alone=True)
    malformed = malformed_flag_ids(session)
    for chunk in id_chunks(malformed):
        session.execute(delete(StoredFlag).where(col(StoredFlag.id).in_(chunk)))
    wanted: dict[tuple[str, int], list[FlagFinding]] = {}
    ids: list[str] = []
    with closing(TextSpill()) as texts:
        for item_id, revision, revision_text in _every_current_text(session):
            if findings := _stored_text_findings(revision_text):
                wanted[(item_id, revision)] = findings
            ids.append(item_id)
            texts.append(item_text(revision_text.prompt, revision_text.choices))
        # Duplicates: every item against the items created before it.
        matches = near_duplicates(
            InMemoryTexts([]), texts, threshold=duplicate_threshold(session, threshold)
        ).matches()
    stored = stored_by_revision(session, FlagSource.AUTO, names=_TEXT_FLAGS)
    added, removed = replace_changed(session, wanted, stored, FlagSource.AUTO, names=_TEXT_FLAGS)
    removed += len(malformed)
    # Links an item file stated are the file's word and stay.
    found = {
        ids[match.index]: DuplicateLink(ids[match.index], ids[match.of], match.similarity)
        for match in matches
    }
    stored_links = _stored_duplicate_links(session)
    changed = [
        link
        for item_id, link in found.items()
        if item_id not in stored_links
        or (
            not stored_links[item_id][2] and stored_links[item_id][:2] != (link.of, link.similarity)
        )
    ]
    # The same link whose words would change: its original was edited since.
    changed += reworded_links(
        session,
        [
            link
            for item_id, link in found.items()
            if item_id in stored_links
            and not stored_links[item_id][2]
            and stored_links[item_id][:2] == (link.of, link.similarity)
        ],
        {item_id: summary for item_id, (*_, summary) in stored_links.items()},
    )
    stale = [
        item_id
        for item_id, (_of, _similarity, stated, _summary) in stored_links.items()
        if not stated and item_id not in found
    ]
    if changed or stale:
        removed += sum(1 for link in changed if link.item_id in stored_links) + len(stale)
        record_duplicates(session, changed, unlinked=stale, replace=True)
        added += len(changed)
    if models:
        model_added, model_removed = refresh_model_flags(session)
        added, removed = added + model_added, removed + model_removed
    session.flush()
    counts = flag_counts(session)
    if added or removed:
        record_audit(
            session,
            actor,
            FLAGS_ACTION,
            "recompute",
            added=added,
            removed=removed,
            by_flag=counts,
            **({"malformed_removed": len(malformed)} if malformed else {}),
        )
    return RecomputeReport(len(ids), added, removed, counts)


def backfill_text_flag(session: Session, name: FlagName, actor: str) -> int:
    """Raise the text flag ``name`` on every current revision whose text raises it and that
    lacks it: what a migration bringing in a new rule runs.  Nothing else is recomputed or
    removed; one audit event says how many were added.  Returns that count."""
    lock_flags(session, alone=True)
    flagged = set(stored_by_revision(session, FlagSource.AUTO, names=[name]))
    now = utcnow()
    rows = []
    for item_id, revision, revision_text in _every_current_text(session):
        if (item_id, revision) in flagged:
            continue
        rows += [
            flag_row(item_id, revision, finding, FlagSource.AUTO, now)
            for finding in _stored_text_findings(revision_text)
            if finding.name is name
        ]
    insert_flags(session, rows)
    if rows:
        record_audit(session, actor, FLAGS_ACTION, "backfill", flag=name.value, added=len(rows))
    return len(rows)


def _stored_duplicate_links(
    session: Session,
) -> dict[str, tuple[str, float | None, bool, str]]:
    """Current revisions' stored duplicate flags, the newest of each (``db.stored_flags``):
    item -> (of, similarity, stated, summary)."""
    query = (
        select(col(StoredFlag.item_id), col(StoredFlag.evidence))
        .join(Item, col(Item.id) == col(StoredFlag.item_id))
        .where(
            col(StoredFlag.revision_number) == col(Item.current_revision),
            col(StoredFlag.name) == FlagName.DUPLICATE.value,
        )
        .order_by(col(StoredFlag.id))
    )
    links: dict[str, tuple[str, float | None, bool, str]] = {}
    for item_id, evidence in session.execute(query):
        evidence = evidence if isinstance(evidence, dict) else {}
        similarity = evidence.get("similarity")
        links[item_id] = (
            str(evidence.get("of", "")),
            float(similarity) if isinstance(similarity, int | float) else None,
            bool(evidence.get("stated", False)),
            str(evidence.get("summary", "")),
        )
    return links

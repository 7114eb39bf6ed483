"""A copy's ``duplicate`` flag kept in step with its original: an edit of the original
writes the copy's flag again, from the two texts as they are now.

A copy's flag says what it changed against its original (``db.flags.duplicate_finding``).
When the original gets a new revision (an edit, a key correction, a re-import), every
item linked to it as its copy has its pair compared again: still a near-copy, the flag
says how similar they are now and what differs now; no longer one, the flag says that
the item copied an earlier text of the original, until a lead's ``vetbench flags
recompute`` takes it back.  Only the pair is compared (the copy is not searched for
another original: that is the recompute's work), so an edit stays cheap.

The new flag is added beside the old one, on the copy's revision, as any member may
(on PostgreSQL only leads remove flags); of a revision's ``duplicate`` flags the newest
is its word (``db.stored_flags``), and a recompute keeps that one alone.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence

from rapidfuzz import fuzz
from sqlalchemy import select
from sqlmodel import Session, col

from db.bulk_reads import id_chunks
from db.canonical_text import item_text
from db.differences import ItemText
from db.flags import (
    DuplicateLink,
    current_texts,
    duplicate_finding,
    duplicate_threshold,
    record_duplicates,
)
from db.models import Item, StoredFlag
from db.vocabulary import FlagName

__all__ = ["refresh_copies", "reworded_links"]

_CHUNK = 2000  # links whose texts are read at once


def refresh_copies(
    session: Session, original_ids: Collection[str], *, threshold: float | None = None
) -> int:
    """Write again the ``duplicate`` flag of every copy of ``original_ids`` (items linked
    to one of them, the originals themselves left out) whose words change with the
    originals' current texts.  Returns how many flags were written."""
    wanted = set(original_ids)
    copies: list[tuple[str, str, float | None]] = []  # (copy, original, its link's similarity)
    for chunk in id_chunks(sorted(wanted)):
        copies += [
            (item_id, of, similarity)
            for item_id, of, similarity in session.execute(
                select(
                    col(Item.id), col(Item.suspected_duplicate_of), col(Item.duplicate_similarity)
                ).where(col(Item.suspected_duplicate_of).in_(chunk))
            )
            if item_id not in wanted
        ]
    if not copies:
        return 0
    limit = duplicate_threshold(session, threshold)
    written = 0
    for start in range(0, len(copies), _CHUNK):
        batch = copies[start : start + _CHUNK]
        flags = _newest_flags(session, [item_id for item_id, _, _ in batch])
        texts = current_texts(session, [i for i, _, _ in batch] + [of for _, of, _ in batch])
        links = []
        for item_id, of, similarity in batch:
            if item_id not in texts or of not in texts:
                continue
            if flags.get(item_id, (False, ""))[
                0
            ]:  # the item file's word: its similarity stays, the differences follow
                links.append(DuplicateLink(item_id, of, similarity, stated=True))
            else:
                links.append(_pair_link(item_id, of, texts[item_id][1], texts[of][1], limit))
        summaries = {item_id: summary for item_id, (_, summary) in flags.items() if summary}
        changed = _reworded(links, summaries, texts)
        record_duplicates(session, changed)
        written += len(changed)
    return written


def _pair_link(
    item_id: str, of: str, copy: ItemText, original: ItemText, threshold: float
) -> DuplicateLink:
    """The link of ``item_id`` to ``of`` as their texts are now: a near-copy by the rule
    of ``db.dedup``, or apart."""
    # Here, not at the top: the detector brings numpy (``db.flags.check_duplicates``).
    from db.dedup import near_duplicates
    from db.text_sources import InMemoryTexts

    copy_text, original_text = (
        item_text(copy.prompt, dict(copy.choices)),
        item_text(original.prompt, dict(original.choices)),
    )
    found = near_duplicates(
        InMemoryTexts([original_text]), InMemoryTexts([copy_text]), threshold=threshold
    ).matches()
    if found:
        return DuplicateLink(item_id, of, found[0].similarity)
    return DuplicateLink(item_id, of, round(fuzz.ratio(copy_text, original_text), 1), apart=True)


def _newest_flags(session: Session, item_ids: Sequence[str]) -> dict[str, tuple[bool, str]]:
    """Each item's newest ``duplicate`` flag on its current revision: (stated, summary)."""
    found: dict[str, tuple[bool, str]] = {}
    for chunk in id_chunks(list(item_ids)):
        rows = session.execute(
            select(col(StoredFlag.item_id), col(StoredFlag.evidence))
            .join(Item, col(Item.id) == col(StoredFlag.item_id))
            .where(
                col(StoredFlag.item_id).in_(chunk),
                col(StoredFlag.revision_number) == col(Item.current_revision),
                col(StoredFlag.name) == FlagName.DUPLICATE.value,
            )
            .order_by(col(StoredFlag.id))
        )
        for item_id, evidence in rows:
            evidence = evidence if isinstance(evidence, dict) else {}
            found[item_id] = (bool(evidence.get("stated")), str(evidence.get("summary", "")))
    return found


def reworded_links(
    session: Session, links: Sequence[DuplicateLink], summaries: dict[str, str]
) -> list[DuplicateLink]:
    """The links whose flag would now say something else than ``summaries`` (item -> the
    stored summary; none stored: something else): a copy's original was edited since its
    flag was raised."""
    reworded = []
    for start in range(0, len(links), _CHUNK):
        chunk = links[start : start + _CHUNK]
        texts = current_texts(
            session, [link.item_id for link in chunk] + [link.of for link in chunk]
        )
        reworded += _reworded(chunk, summaries, texts)
    return reworded


def _reworded(
    links: Sequence[DuplicateLink],
    summaries: dict[str, str],
    texts: Mapping[str, tuple[int, ItemText]],
) -> list[DuplicateLink]:
    """:func:`reworded_links` on texts already read (item -> current revision, text)."""
    reworded = []
    for link in links:
        if link.item_id not in texts or link.of not in texts:
            continue
        of_revision, original = texts[link.of]
        finding = duplicate_finding(link, texts[link.item_id][1], original, of_revision)
        if finding.summary != summaries.get(link.item_id):
            reworded.append(link)
    return reworded

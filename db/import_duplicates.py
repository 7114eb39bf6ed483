"""Suspected duplicates among imported items, once every record of a file is stored.

New and revised items very similar to a stored or earlier item get a ``duplicate``
link and flag saying what differs (``db.dedup``, ``db.flags``); JSONL records that
name their duplicate themselves keep what they name.  Texts are read from disk
(``db.import_state``) and links stored a batch at a time, so memory stays bounded.
"""

from __future__ import annotations

from sqlalchemy import select
from sqlmodel import Session

from db.bulk_reads import id_chunks
from db.canonical_text import item_text
from db.dedup import near_duplicates
from db.flags import DuplicateLink, record_duplicates
from db.import_checks import PlannedRecord
from db.import_report import FileReport
from db.import_state import CheckedItems, ImportState, StatedLink
from db.models import Item
from db.text_sources import JoinedTexts

LINK_BATCH = 2000  # duplicate links stored at once
_ITEM = Item.__table__  # type: ignore[attr-defined]


def remember(checked: CheckedItems, plan: PlannedRecord, *, revised: bool) -> None:
    """Keep a stored (new or revised) item's canonical text and stated link for the
    check once the whole file is stored."""
    native = plan.record.native
    stated = None
    if native is not None and native.states_duplicate:
        stated = StatedLink(
            plan.item_id,
            native.suspected_duplicate_of,
            native.duplicate_similarity,
            revised,
            plan.draft.kind,
        )
    text = item_text(plan.draft.prompt, plan.draft.choices)
    checked.append(plan.item_id, text, plan.draft.kind, revised=revised, stated=stated)


def mark_duplicates(
    session: Session, state: ImportState, threshold: float, report: FileReport
) -> None:
    """Mark new and revised items that are very similar to a stored or earlier item.

    A revised item is checked with its new text against every other item, and new
    items are checked against that new text, not the old.  A JSONL record that states
    its duplicate fields keeps them (``link_stated_duplicates``).  Texts are read from
    disk (``ImportState``) and links stored a batch at a time, so memory stays bounded.
    """
    checked = state.checked
    if not len(checked):
        return
    stored = state.stored
    stored.leave_out(report.revised)
    found = near_duplicates(stored.texts(), checked.texts, threshold=threshold)
    all_ids = JoinedTexts(stored.ids(), checked.ids)  # numbered as ``found``
    for start in range(0, len(checked), LINK_BATCH):
        items = checked.items(start, start + LINK_BATCH)
        matches = {
            match.index - found.first_new: match
            for match in found.matches(start, start + LINK_BATCH)
        }
        original_ids = all_ids.take([match.of for match in matches.values()])
        original_id = dict(zip(matches, original_ids, strict=True))
        links: list[DuplicateLink] = []
        unlinked: list[str] = []
        for item in items:
            if item.states_duplicate:
                continue
            match = matches.get(item.position)
            if match is None:
                if item.revised:  # its old text's link no longer holds
                    unlinked.append(item.item_id)
                continue
            links.append(DuplicateLink(item.item_id, original_id[item.position], match.similarity))
            report.tally.duplicates += 1
            report.kind_tally(item.kind).duplicates += 1
        record_duplicates(session, links, unlinked=unlinked)


def link_stated_duplicates(session: Session, checked: CheckedItems, report: FileReport) -> None:
    """JSONL records name their duplicate themselves; link those once every item is stored.

    A revised record stating no duplicate clears the link its item had (new items
    start without one).  A named item that is not in the database (stored before, or
    added by this file) is left out with a note.
    """
    dangling: list[str] = []
    dangling_count = 0
    for stated in checked.stated_links(LINK_BATCH):
        targets = sorted({link.duplicate_of for link in stated if link.duplicate_of is not None})
        known = _existing_ids(session, targets)
        links: list[DuplicateLink] = []
        unlinked: list[str] = []
        for link in stated:
            if link.duplicate_of is None:
                if link.revised:
                    unlinked.append(link.item_id)
                continue
            if link.duplicate_of not in known:
                dangling_count += 1
                if len(dangling) < 5:
                    dangling.append(f"{link.item_id} -> {link.duplicate_of}")
                continue
            links.append(
                DuplicateLink(link.item_id, link.duplicate_of, link.similarity, stated=True)
            )
            report.tally.duplicates += 1
            report.kind_tally(link.kind).duplicates += 1
        record_duplicates(session, links, unlinked=unlinked)
    if dangling_count:
        report.notes.append(
            f"{report.path}: {dangling_count} suspected-duplicate links name items that are "
            f"not in the database and were left out: {', '.join(dangling)}"
            + (" ..." if dangling_count > len(dangling) else "")
        )


def _existing_ids(session: Session, item_ids: list[str]) -> set[str]:
    found: set[str] = set()
    for chunk in id_chunks(item_ids):
        found.update(session.execute(select(_ITEM.c.id).where(_ITEM.c.id.in_(chunk))).scalars())
    return found

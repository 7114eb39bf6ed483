"""Flag generated items that nearly repeat an item already in the database.

Models asked for many items repeat themselves; reviewers should see that, as
they do for imported items.  The same detector and threshold as import are
used (``db.dedup``, the ``duplicate_threshold`` setting).
"""

from __future__ import annotations

from collections.abc import Collection

from db.dedup import find_near_duplicates, item_text
from db.engine import Database
from db.items import iter_items
from db.models import Item
from db.settings import get_setting


def flag_duplicates(db: Database, new_ids: Collection[str]) -> int:
    """Mark each of ``new_ids`` that nearly repeats an earlier item; returns how many were marked."""
    if not new_ids:
        return 0
    wanted = set(new_ids)
    with db.transaction() as session:
        threshold = float(get_setting(session, "duplicate_threshold"))
        snapshots = list(iter_items(session))
        earlier = [s for s in snapshots if s.id not in wanted]
        new = [s for s in snapshots if s.id in wanted]
        ordered = earlier + new
        matches = find_near_duplicates(
            [item_text(s.prompt, s.choices) for s in ordered],
            threshold=threshold,
            first_new=len(earlier),
        )
        for index, match in matches.items():
            item = session.get(Item, ordered[index].id)
            if item is None:
                continue
            item.suspected_duplicate_of = ordered[match.of].id
            item.duplicate_similarity = match.similarity
            session.add(item)
    return len(matches)

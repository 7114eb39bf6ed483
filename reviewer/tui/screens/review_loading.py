"""What the review screen is given with each item, read in its worker: the item with the
annotator's own judgment of it, its flags and the key of it they saw before a verdict,
or, with no item, why the queue serves none (``reviewer.tui.messages.ItemLoaded``)."""

from __future__ import annotations

from db.engine import Database
from db.items import ItemSnapshot
from db.qualification import standing_of
from reviewer.queue import ReviewQueue
from reviewer.tui.messages import ItemLoaded

__all__ = ["item_loaded"]


def item_loaded(
    db: Database, queue: ReviewQueue, item: ItemSnapshot | None, note: str = ""
) -> ItemLoaded:
    """The message for a loaded item, with the annotator's own judgment of it (run in a
    worker: it asks the database).  An item whose current revision they wrote is never
    shown blind: it comes with their judgment of the revision they saw.

    The item's flags travel with it but stay off the screen until the reveal.  An item
    whose key they saw and have not judged since comes with that reveal (``db.reveals``):
    it is shown revealed, never blind again."""
    if item is None:
        return ItemLoaded(
            None,
            None,
            note,
            database_empty=queue.database_is_empty(),
            qualification=standing_of(db, queue.annotator).notice(queue.filters.describe()),
            held=queue.held_note(),
        )
    flags = queue.flags_of(item)
    own = queue.own_judgment(item.id)
    if own is None and queue.wrote_current_revision(item):
        own = queue.own_judgment(item.id, any_revision=True)
        return ItemLoaded(item, own, note, authored=True, flags=flags)
    revealed = queue.revealed_key(item) if own is None else None
    return ItemLoaded(item, own, note, flags=flags, revealed=revealed)

"""What the review screen says when the queue serves no item, and why: nothing imported
yet, the qualification gate, items left for a more reliable colleague, or nothing left."""

from __future__ import annotations

from dataclasses import dataclass

from reviewer.tui.messages import ItemLoaded


@dataclass(frozen=True)
class EmptyQueueText:
    heading: str  # above the item panel
    title: str  # the message's title inside it
    body: str


def empty_queue_text(message: ItemLoaded, database_url: str, filters: str) -> EmptyQueueText:
    """The words for an :class:`ItemLoaded` without an item (``database_url``: as people
    type it; ``filters``: the queue's filters, described)."""
    if message.database_empty:
        return EmptyQueueText(
            "No items yet",
            "This database has no items yet",
            "Import some first (EconLogicQA CSV, CFLUE JSON or vetbench JSONL):\n\n"
            f"    vetbench --db {database_url} import FILE\n\n"
            "or write some with vetbench generate. Then press n to look again; q quits.",
        )
    if message.qualification is not None:
        return EmptyQueueText(
            "Qualification",
            "Nothing counts yet",
            f"{message.qualification}\n\nPress n to look again, l to browse your judgments, "
            "q to quit.",
        )
    held = f"\n\n{message.held}. Press n to look again later." if message.held else ""
    return EmptyQueueText(
        "Nothing to review",
        "Nothing left to review",
        f"No item needs your judgment ({filters}). Press / to change the filters, l to "
        f"browse your judgments, n to look again, q to quit.{held}",
    )

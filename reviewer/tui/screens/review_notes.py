"""The review screen's outcome notes: what an undo or a saved edit did, in the words
that fit the status line at 80 columns with what to do next whole (the item's id and
revision are in the heading too).  A note lasts until the next item after it arrives
(:meth:`reviewer.tui.widgets.progress.ProgressLine.item_arrived`)."""

from __future__ import annotations

from reviewer.judging import RetractionReceipt, RevisionReceipt

__all__ = ["retraction_note", "revision_saved_note"]


def retraction_note(receipt: RetractionReceipt, revealed: bool) -> str:
    """``↶ undid your flawed on econ:1: give your verdict again``; with what happens to
    a later revision when there is one (the app shows that in a toast as well)."""
    if receipt.revision_note:
        return f"↶ {receipt.describe()}"
    again = "give your verdict again" if revealed else "answer it again"
    return f"↶ undid your {receipt.verdict} on {receipt.item_id}: {again}"


def revision_saved_note(receipt: RevisionReceipt) -> str:
    """``✓ saved revision 2 of econ:1; others judge it (you know its key)``."""
    return (
        f"✓ saved revision {receipt.new_revision} of {receipt.item_id}; "
        "others judge it (you know its key)"
    )

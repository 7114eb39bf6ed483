"""Items whose key was shown and that have no verdict yet: never blind again.

A blind answer is given before the key is seen.  The review screen shows the key only
once the blind answer is stored with the seconds spent (``db.reveals``), and until a
verdict the item comes back revealed with that answer: after ``n``, ``s``, ``p``, ``j``,
a filter or the judged list, and in any later session.  What the database does not hold
before the verdict is the comment typed after the reveal (a comment is stored with its
verdict) and the seconds spent since: :class:`SessionReveals` keeps both for the
session, so an item left comes back as it was left.  Quitting while any such item
waits names them, says that their blind answers are stored, and which typed comments
quitting loses.  An undo brings its judgment's comment back into the comment box,
and its other details (a corrected key, other valid orders, the copied item) into the
dialogs that ask for them, when the same revision is judged again.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from db.items import ItemSnapshot
from db.reveals import StoredReveal
from db.words import counted
from reviewer.judging import RetractionReceipt

__all__ = ["KeptReveal", "SessionReveals", "unjudged_reveals_question"]

NAMED = 3
"""Items named in the question; the rest are counted."""


@dataclass(frozen=True)
class KeptReveal:
    """What an item whose key was shown brings back when it is shown again."""

    blind_answer: str
    comment: str
    seconds: float


class SessionReveals:
    """The items of this session left with their key shown and no verdict, each by
    (id, revision) with the comment typed and the seconds spent on it."""

    def __init__(self) -> None:
        self._left: dict[tuple[str, int], KeptReveal] = {}
        self._undone: dict[tuple[str, int], RetractionReceipt] = {}

    def undone(self, receipt: RetractionReceipt) -> None:
        """An undo retracted ``receipt``'s judgment: what it said is offered again."""
        self._undone[receipt.item_id, receipt.revision_number] = receipt

    def earlier(self, item: ItemSnapshot) -> RetractionReceipt | None:
        """The undone judgment of this revision of ``item``, if this session undid one."""
        return self._undone.get((item.id, item.revision))

    def leave(self, item: ItemSnapshot, kept: KeptReveal) -> None:
        self._left[item.id, item.revision] = kept

    def resume(self, item: ItemSnapshot, stored: StoredReveal | None) -> KeptReveal | None:
        """How ``item`` comes back, its key seen (``stored``) or not: as it was left in
        this session, else as stored (the stored blind answer either way); None: blind."""
        left = self._left.pop((item.id, item.revision), None)
        if stored is None:
            return left
        if left is None:
            earlier = self.earlier(item)
            comment = earlier.comment if earlier is not None else ""
            return KeptReveal(stored.blind_answer, comment, stored.seconds)
        return KeptReveal(stored.blind_answer, left.comment, left.seconds)

    def waiting(self) -> list[tuple[str, str]]:
        """(item id, comment typed) of each item left, in the order they were left."""
        return [(item_id, kept.comment) for (item_id, _revision), kept in self._left.items()]


def unjudged_reveals_question(waiting: Sequence[tuple[str, str]]) -> str | None:
    """What to ask before quitting while the items in ``waiting`` (id and comment typed,
    the one on screen first) were revealed and have no verdict; None when none waits."""
    if not waiting:
        return None
    ids = [item_id for item_id, _comment in waiting]
    one = len(ids) == 1
    question = f"You saw the key of {_named(ids)} and gave no verdict. " + (
        "Its blind answer is stored in the database: it comes back to you revealed, with "
        "that answer, until you give one, in the app's next session too."
        if one
        else "Their blind answers are stored in the database: they come back to you "
        "revealed, with those answers, until you give verdicts, in the app's next "
        "session too."
    )
    commented = [item_id for item_id, comment in waiting if comment.strip()]
    if commented:
        whose = "your comment" if one else f"your comment on {_named(commented)}"
        question += f" Quitting loses {whose}: a comment is stored only with its verdict."
    return question + " Quit anyway?"


def _named(item_ids: Sequence[str]) -> str:
    """``a, b, c and 2 more items``."""
    named = ", ".join(item_ids[:NAMED])
    if len(item_ids) > NAMED:
        named += f" and {counted(len(item_ids) - NAMED, 'more item')}"
    return named

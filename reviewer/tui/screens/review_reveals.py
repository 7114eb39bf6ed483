"""Items left with their key shown and no verdict: kept for the session, never blind again.

A blind answer is given before the key is seen.  Moving on from the reveal (next,
previous, skip, jump, a filter, the judged list) before giving a verdict dropped the
blind answer and the typed comment, and the item came back blind to someone who had
seen its key.  It now comes back revealed, with both and the seconds spent on it, for
the rest of the session.  They live in memory only (a judgment is stored with its
verdict), so quitting while any is waiting asks first.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from db.words import counted

__all__ = ["KeptReveal", "unjudged_reveals_question"]

NAMED = 3
"""Items named in the question; the rest are counted."""


@dataclass(frozen=True)
class KeptReveal:
    """What an item left with its key shown brings back when it is shown again."""

    blind_answer: str
    comment: str
    seconds: float


def unjudged_reveals_question(item_ids: Sequence[str], comment: str) -> str | None:
    """What to ask before quitting while ``item_ids`` (the one on screen first) were
    revealed and have no verdict, ``comment`` typed on the one on screen; None when
    none is waiting."""
    if not item_ids:
        return None
    named = ", ".join(item_ids[:NAMED])
    if len(item_ids) > NAMED:
        named += f" and {counted(len(item_ids) - NAMED, 'more item')}"
    one = len(item_ids) == 1
    kept = "Its blind answer" if one else "Their blind answers"
    if comment.strip():
        kept += " and your comment"
    verb = "is" if kept == "Its blind answer" else "are"
    return (
        f"You saw the key of {named} and gave no verdict. {kept} {verb} kept only until you "
        f"quit; after that {'it' if one else 'they'} would be shown to you blind again. "
        "Quit anyway?"
    )

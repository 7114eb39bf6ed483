"""A blind answer stored on its own, before the key is shown: the command line's reveal.

The review app stores a person's blind answer as it shows the key (``db.reveals``); a
judging sheet's first pass stores the answers of its rows so (``judge --from``), and
``vetbench judge ITEM --answer X`` stores one so, then prints the key for the verdict that
``vetbench judge ITEM --verdict V`` gives later.  Each goes through the checks of a
judgment without its verdict (``reviewer.judgment_checks``): the item and its revision,
the answer, an earlier judgment of the revision; a second answer to a revision whose key
the person saw is refused, the same one again is no new reveal.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlmodel import Session

from db.answers import format_answer
from db.engine import Database
from db.items import ItemSnapshot, get_item, no_item_message
from db.json_types import JsonObject
from db.retry import retry_transient
from db.reveals import StoredReveal, add_reveal, stored_reveal
from reviewer.judgment_checks import (
    Checked,
    JudgmentInput,
    JudgmentRefused,
    check_seconds,
    checked_or_refused,
)

__all__ = ["BlindAnswerReceipt", "reveal_once", "stored_blind_answer", "submit_blind_answer"]


@dataclass(frozen=True)
class BlindAnswerReceipt:
    """A blind answer stored (or found stored) and the key it may now be compared with."""

    annotator: str
    item: ItemSnapshot  # the revision answered, its key and explanation
    reveal: StoredReveal
    stored_now: bool  # False: the same answer was stored before, with this key seen then

    @property
    def matches_key(self) -> bool:
        return self.reveal.blind_answer == self.item.key

    def to_json(self) -> JsonObject:
        """``judge ITEM --answer X --json``."""
        return {
            "annotator": self.annotator,
            "item_id": self.item.id,
            "revision": self.item.revision,
            "blind_answer": format_answer(self.item.kind, self.reveal.blind_answer),
            "key": format_answer(self.item.kind, self.item.key),
            "matches_key": self.matches_key,
            "explanation": self.item.explanation,
            "stored_now": self.stored_now,
        }


def reveal_once(session: Session, checked: Checked, seconds: float) -> StoredReveal | None:
    """Store, in the caller's transaction, the blind answer that ``checked`` passed, as the
    key its person may now see; None when they saw the key of that revision already
    (after the same answer: ``checked_in_database`` refuses another)."""
    if checked.seen is not None:
        return None
    return add_reveal(session, checked.person, checked.item, checked.blind_answer, seconds)


def submit_blind_answer(
    db: Database,
    annotator_name: str,
    item_id: str,
    *,
    revision_number: int | None,
    blind_answer: str,
    seconds: float = 0.0,
) -> BlindAnswerReceipt:
    """Check and store ``annotator_name``'s blind answer to the item's current revision
    (``revision_number``: the one they saw; None: the current one) without a verdict, in
    one transaction; :class:`JudgmentRefused` says why one is refused."""
    given = JudgmentInput(item_id, blind_answer, "", revision_number, seconds=seconds)
    refused: list[JudgmentRefused] = []
    check_seconds(seconds, refused)
    if refused:
        raise refused[0]

    def store() -> BlindAnswerReceipt:
        with db.transaction() as session:
            checked = checked_or_refused(session, annotator_name, given, None)
            stored = reveal_once(session, checked, seconds)
            reveal = checked.seen if stored is None else stored
            assert reveal is not None
            return BlindAnswerReceipt(checked.person.name, checked.item, reveal, stored is not None)

    return retry_transient(store)


def stored_blind_answer(
    db: Database, annotator_name: str, item_id: str, revision_number: int | None
) -> str | None:
    """The blind answer ``annotator_name`` stored to the item at ``revision_number`` (None:
    its current revision) before seeing its key, if any; an unknown item is refused."""
    with db.session() as session:
        item = get_item(session, item_id)
        if item is None:
            raise JudgmentRefused(no_item_message(session, item_id), "item_id")
        if revision_number is None:
            revision_number = item.revision
        seen = stored_reveal(session, annotator_name, item_id, revision_number)
    return None if seen is None else seen.blind_answer

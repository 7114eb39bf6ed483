"""App-wide messages: facts that a thread worker reports back to the review screen.

Workers never touch widgets; they post one of these (``post_message`` is
thread-safe) and the screen's handler updates the UI.
"""

from __future__ import annotations

from dataclasses import dataclass

from textual.message import Message

from db.flags import ItemFlag
from db.gold import GoldOutcome
from db.items import ItemSnapshot
from db.reveals import StoredReveal
from reviewer.judging import RetractionReceipt, RevisionReceipt
from reviewer.queue import GuidelinesNews, OwnJudgment, QueueProgress


@dataclass
class ItemLoaded(Message):
    """An item to show (``item`` is None when the queue has nothing left)."""

    item: ItemSnapshot | None
    own_judgment: OwnJudgment | None = None
    note: str = ""
    database_empty: bool = False  # with no item: nothing was ever imported
    qualification: str | None = None  # with no item: why the qualification gate serves none
    held: str = ""  # with no item: the items left for a more reliable colleague, if any
    authored: bool = False  # the annotator wrote the current revision: never shown blind
    flags: tuple[ItemFlag, ...] = ()  # the item revision's flags: shown only after the reveal
    revealed: StoredReveal | None = None  # its key, seen before a verdict: shown revealed


@dataclass
class HistoryEnded(Message):
    """The annotator asked for the previous item at the start of the session."""


@dataclass
class JudgmentRetracted(Message):
    """Undo retracted the annotator's last judgment."""

    receipt: RetractionReceipt
    revealed: bool = False  # its item comes back revealed: its key was seen (db.reveals)


@dataclass
class RevisionSaved(Message):
    """An edit was stored as a new revision."""

    receipt: RevisionReceipt


NOTHING_DONE = "Nothing done"
"""What a key that did nothing says, over the status line (not in a toast)."""


@dataclass
class ActionRefused(Message):
    """The service refused a request; ``reload`` when the item changed underneath.

    ``title`` names what happened ("Not saved" for a refused judgment or edit,
    "Cannot open" for an item that is not there, :data:`NOTHING_DONE` for an undo with
    nothing to undo)."""

    message: str
    reload: bool = False
    title: str = "Not saved"


@dataclass
class GoldChecked(Message):
    """The judgment just saved was of a gold item: how it compares with the gold."""

    outcome: GoldOutcome
    qualification: str = ""  # where the annotator now stands with the gate, when it is on


@dataclass
class GuidelinesChecked(Message):
    """What the annotator should know about the guidelines when the app starts."""

    news: GuidelinesNews


@dataclass
class ProgressCounted(Message):
    """Fresh figures for the progress line."""

    progress: QueueProgress

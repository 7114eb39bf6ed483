"""App-wide messages: facts that a thread worker reports back to the review screen.

Workers never touch widgets; they post one of these (``post_message`` is
thread-safe) and the screen's handler updates the UI.
"""

from __future__ import annotations

from dataclasses import dataclass

from textual.message import Message

from db.flags import ItemFlag
from db.items import ItemSnapshot
from reviewer.judging import JudgmentReceipt, RetractionReceipt, RevisionReceipt
from reviewer.queue import OwnJudgment, QueueProgress


@dataclass
class ItemLoaded(Message):
    """An item to show (``item`` is None when the queue has nothing left)."""

    item: ItemSnapshot | None
    own_judgment: OwnJudgment | None = None
    note: str = ""
    database_empty: bool = False  # with no item: nothing was ever imported
    flags: tuple[ItemFlag, ...] = ()  # the item revision's flags: shown only after the reveal


@dataclass
class HistoryEnded(Message):
    """The annotator asked for the previous item at the start of the session."""


@dataclass
class JudgmentSaved(Message):
    """A judgment was committed; ``then_edit`` when the verdict asks for an edit (flawed)."""

    receipt: JudgmentReceipt
    then_edit: bool = False


@dataclass
class JudgmentRetracted(Message):
    """Undo retracted the annotator's last judgment."""

    receipt: RetractionReceipt


@dataclass
class RevisionSaved(Message):
    """An edit was stored as a new revision."""

    receipt: RevisionReceipt


@dataclass
class ActionRefused(Message):
    """The service refused a request; ``reload`` when the item changed underneath."""

    message: str
    reload: bool = False


@dataclass
class ProgressCounted(Message):
    """Fresh figures for the progress line."""

    progress: QueueProgress

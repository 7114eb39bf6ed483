"""The review screen's phases, keys and their help text, in one table.

The footer (bindings), the help screen and the command palette all read from
here, so the three views of the keys cannot drift apart.  Letters a-h mean
"pick" before the blind answer and verdicts after it; ``ReviewScreen.check_action``
decides which applies.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from textual.binding import Binding, BindingType

from db.vocabulary import Verdict
from reviewer.tui.widgets.verdict_bar import VERDICT_KEYS

LETTERS = "ABCDEFGH"


class Phase(StrEnum):
    LOADING = "loading"
    BLIND = "blind"
    REVEALED = "revealed"
    JUDGED = "judged"
    EMPTY = "empty"


@dataclass(frozen=True)
class ActionHelp:
    """One action of the review screen: its help section, the action, the keys, what it does."""

    section: str
    action: str
    keys: str
    text: str


VERDICT_HELP: dict[Verdict, str] = {
    Verdict.KEEP: "keep: the item and its key are right",
    Verdict.AMBIGUOUS: "ambiguous: more than one valid order (record each)",
    Verdict.NO_ORDER: "no clear order (ordering items)",
    Verdict.WRONG_KEY: "wrong key (record the corrected key)",
    Verdict.FLAWED: "flawed text: record it, then edit the item",
    Verdict.SENSITIVE: "sensitive or inappropriate",
    Verdict.DUPLICATE: "duplicate of another item (asks for its id)",
}
"""What each verdict means, for the help (its key and button label: ``VERDICT_KEYS``)."""

PICK = Binding.Group("pick")
VERDICT = Binding.Group("verdict")

ACTION_HELP: list[ActionHelp] = [
    ActionHelp(
        "Blind answer",
        "pick",
        "a–h / 1–8",
        "place an event next in the order, or pick / toggle a choice",
    ),
    ActionHelp("Blind answer", "take_back", "Backspace", "take back the last step of the answer"),
    ActionHelp(
        "Blind answer", "submit_answer", "Enter", "submit the blind answer and reveal the key"
    ),
    *[
        ActionHelp("Verdict", f"verdict('{verdict.value}')", VERDICT_KEYS[verdict][0], text)
        for verdict, text in VERDICT_HELP.items()
    ],
    ActionHelp("Verdict", "comment", "c", "write a comment (Enter or Esc returns to the keys)"),
    ActionHelp("Item", "edit", "e", "edit an item you judged (makes a new revision)"),
    ActionHelp("Item", "revisions", "r", "view the item's revisions and their differences"),
    ActionHelp(
        "Item",
        "toggle_raw",
        "v",
        "show the item's text as stored (HTML entities, LaTeX) or as read; v again switches back",
    ),
    ActionHelp(
        "Move", "skip", "s", "skip: put the item aside for this session, free it for others"
    ),
    ActionHelp("Move", "previous", "p", "previous item of this session"),
    ActionHelp("Move", "next", "n", "next item (forward in the session, else a new one)"),
    ActionHelp(
        "Move", "undo", "u", "undo your last judgment (the item comes back to answer again)"
    ),
    ActionHelp("Move", "jump", "j", "jump to an item by id"),
    ActionHelp("Move", "filter", "/", "filter the queue by kind, source, status"),
    ActionHelp("Move", "judged", "l", "list the items you have judged"),
]
"""Every action of the review screen, in the order the help lists them."""


REVIEW_BINDINGS: list[BindingType] = [
    *[Binding(letter.lower(), f"pick('{letter}')", letter, group=PICK) for letter in LETTERS],
    *[Binding(str(n), f"pick_number({n})", str(n), show=False) for n in range(1, 9)],
    Binding("backspace", "take_back", "Back", key_display="⌫"),
    Binding("enter", "submit_answer", "Submit", key_display="⏎"),
    # The verdict bar shows the verdict keys (all seven, on a button each): not the footer.
    *[
        Binding(key, f"verdict('{verdict.value}')", "verdict", group=VERDICT, show=False)
        for verdict, (key, _label) in VERDICT_KEYS.items()
    ],
    Binding("v", "toggle_raw", "Raw text"),
    Binding("c", "comment", "Comment"),
    Binding("escape", "leave_comment", "Keys", show=False),
    Binding("e", "edit", "Edit"),
    Binding("r", "revisions", "Revisions"),
    Binding("s", "skip", "Skip"),
    Binding("p", "previous", "Prev"),
    Binding("n", "next", "Next"),
    Binding("u", "undo", "Undo"),
    Binding("j", "jump", "Jump"),
    Binding("slash", "filter", "Filter", key_display="/"),
    Binding("l", "judged", "Judged"),
]

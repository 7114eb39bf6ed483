"""The review screen's phases, keys and their help text, in one table.

The footer (bindings), the help screen and the command palette all read from
here, so the three views of the keys cannot drift apart.  Letters a-h mean
"pick" before the blind answer and verdicts after it; ``ReviewScreen.check_action``
decides which applies.
"""

from __future__ import annotations

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


PICK = Binding.Group("pick")
VERDICT = Binding.Group("verdict")

# (section, action, keys shown in help, what it does).
ACTION_HELP: list[tuple[str, str, str, str]] = [
    (
        "Blind answer",
        "pick",
        "a–h / 1–8",
        "place an event next in the order, or pick / toggle a choice",
    ),
    ("Blind answer", "take_back", "Backspace", "take back the last step of the answer"),
    ("Blind answer", "submit_answer", "Enter", "submit the blind answer and reveal the key"),
    *[
        ("Verdict", f"verdict('{verdict.value}')", key, text)
        for verdict, (key, text) in (
            (Verdict.KEEP, ("k", "keep: the item and its key are right")),
            (Verdict.AMBIGUOUS, ("m", "ambiguous: more than one valid order (record each)")),
            (Verdict.NO_ORDER, ("o", "no clear order (ordering items)")),
            (Verdict.WRONG_KEY, ("w", "wrong key (record the corrected key)")),
            (Verdict.FLAWED, ("f", "flawed text: record it, then edit the item")),
            (Verdict.SENSITIVE, ("x", "sensitive or inappropriate")),
            (Verdict.DUPLICATE, ("d", "duplicate of another item (asks for its id)")),
        )
    ],
    ("Verdict", "comment", "c", "write a comment (Enter or Esc returns to the keys)"),
    ("Item", "edit", "e", "edit an item you judged (makes a new revision)"),
    ("Item", "revisions", "r", "view the item's revisions and their differences"),
    ("Move", "skip", "s", "skip: put the item aside for this session, free it for others"),
    ("Move", "previous", "p", "previous item of this session"),
    ("Move", "next", "n", "next item (forward in the session, else a new one)"),
    ("Move", "undo", "u", "undo your last judgment (the item comes back to answer again)"),
    ("Move", "jump", "j", "jump to an item by id"),
    ("Move", "filter", "/", "filter the queue by kind, source, status"),
    ("Move", "judged", "l", "list the items you have judged"),
]


REVIEW_BINDINGS: list[BindingType] = [
    *[Binding(letter.lower(), f"pick('{letter}')", letter, group=PICK) for letter in LETTERS],
    *[Binding(str(n), f"pick_number({n})", str(n), show=False) for n in range(1, 9)],
    Binding("backspace", "take_back", "Back", key_display="⌫"),
    Binding("enter", "submit_answer", "Submit", key_display="⏎"),
    *[
        Binding(key, f"verdict('{verdict.value}')", "verdict", group=VERDICT)
        for verdict, (key, _label) in VERDICT_KEYS.items()
    ],
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

"""The review screen's phases, keys and their help text, in one table.

The footer (bindings), the help screen and the command palette all read from
here, so the three views of the keys cannot drift apart.  Letters a-h mean
"pick" before the blind answer and verdicts after it; :func:`action_applies` (the
screen's ``check_action``) decides which applies.

No key is dead: every key of the screen has a last binding, ``explain``, that runs
when none of the others applies now and says why in one line (:func:`why_not`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from enum import StrEnum

from textual.binding import Binding, BindingType

from db.items import ItemSnapshot
from db.vocabulary import ItemKind, Verdict, verdict_applies
from reviewer.tui.screens.help import HelpRow
from reviewer.tui.widgets.verdict_bar import VERDICT_KEYS

LETTERS = "ABCDEFGH"


class Phase(StrEnum):
    LOADING = "loading"
    BLIND = "blind"
    REVEALED = "revealed"
    JUDGED = "judged"
    AUTHORED = "authored"  # the annotator wrote the current revision: shown with its key
    EMPTY = "empty"


@dataclass(frozen=True)
class ActionHelp:
    """One action of the review screen: its help section, the action, the keys, what it
    does, and its short name (the command palette's title)."""

    section: str
    action: str
    keys: str
    text: str
    title: str


VERDICT_HELP: dict[Verdict, str] = {
    Verdict.KEEP: "the item and its key are right",
    Verdict.AMBIGUOUS: "more than one order or answer is defensible (record each)",
    Verdict.NO_ORDER: "the events have no clear order (ordering items)",
    Verdict.WRONG_KEY: "one answer is right and it is not the key (record it)",
    Verdict.FLAWED: "flawed text: fix it in the editor, or say what is wrong",
    Verdict.SENSITIVE: "sensitive or inappropriate content (say what)",
    Verdict.DUPLICATE: "the same item as another one (asks for its id)",
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
        "Pick",
    ),
    ActionHelp(
        "Blind answer",
        "take_back",
        "Backspace",
        "take back the last step of the answer",
        "Take back",
    ),
    ActionHelp(
        "Blind answer",
        "submit_answer",
        "Enter",
        "submit the blind answer and reveal the key",
        "Submit the blind answer",
    ),
    *[
        ActionHelp(
            "Verdict",
            f"verdict('{verdict.value}')",
            VERDICT_KEYS[verdict][0],
            text,
            f"Verdict: {VERDICT_KEYS[verdict][1].removesuffix(' → edit')}",
        )
        for verdict, text in VERDICT_HELP.items()
    ],
    ActionHelp(
        "Verdict",
        "comment",
        "c",
        "write a comment (Enter or Esc returns to the keys)",
        "Comment",
    ),
    ActionHelp(
        "Item",
        "toggle_raw",
        "v",
        "show the item's text as stored (HTML entities, LaTeX) or as read; v again switches back",
        "Raw text",
    ),
    ActionHelp(
        "Item",
        "scroll_on",
        "Space / PgDn",
        "scroll the item and the reveal a page on; no Tab needed",
        "Scroll down",
    ),
    ActionHelp("Item", "scroll_back", "Shift+Space / PgUp", "scroll back a page", "Scroll up"),
    ActionHelp(
        "Item", "edit", "e", "edit an item you judged (makes a new revision)", "Edit the item"
    ),
    ActionHelp(
        "Item",
        "revisions",
        "r",
        "view the item's revisions and their differences",
        "Revisions",
    ),
    ActionHelp(
        "Item",
        "guidelines",
        "g",
        "the review guidelines, at the section for this kind of item",
        "Guidelines",
    ),
    ActionHelp(
        "Move",
        "skip",
        "s",
        "put the item aside for this session and free it for others",
        "Skip",
    ),
    ActionHelp("Move", "previous", "p", "go back to the item shown before", "Previous item"),
    ActionHelp("Move", "next", "n", "forward in this session's items, else a new one", "Next item"),
    ActionHelp(
        "Move",
        "undo",
        "u",
        "retract your judgment of the item shown, or, on an item you have not judged, "
        "your last judgment; its item comes back to answer again",
        "Undo",
    ),
    ActionHelp("Move", "jump", "j", "open an item by its id", "Jump to an item"),
    ActionHelp(
        "Move",
        "filter",
        "/",
        "serve only items of a kind, source, status, flag or exam, or holding some text "
        "(in the question and choices; in:all or in:explanation looks further, whole:WORD "
        "finds whole words, not:LONGER leaves a longer term out); kept for your next session",
        "Filter and search",
    ),
    ActionHelp("Move", "judged", "l", "browse the items you have judged", "Your judged items"),
]
"""Every action of the review screen, in the order the help lists them."""


REVIEW_BINDINGS: list[BindingType] = [
    *[Binding(letter.lower(), f"pick('{letter}')", letter, group=PICK) for letter in LETTERS],
    *[Binding(str(n), f"pick_number({n})", str(n), show=False) for n in range(1, 9)],
    Binding("backspace", "take_back", "Back", key_display="⌫"),
    Binding("enter", "submit_answer", "Submit", key_display="⏎"),
    Binding("space", "scroll_on", "Scroll", key_display="Space"),  # one of FOOTER_KEPT
    # PgDn/PgUp before a focused panel's own (it would scroll only itself).
    Binding("pagedown", "scroll_on", "Scroll", show=False, priority=True),
    Binding("shift+space", "scroll_back", "Back a page", show=False),
    Binding("pageup", "scroll_back", "Back a page", show=False, priority=True),
    # The verdict bar shows the verdict keys (all seven, on a button each): not the footer.
    *[
        Binding(key, f"verdict('{verdict.value}')", "verdict", group=VERDICT, show=False)
        for verdict, (key, _label) in VERDICT_KEYS.items()
    ],
    Binding("v", "toggle_raw", "Raw text"),
    Binding("c", "comment", "Comment"),
    Binding("escape", "leave_comment", "Back to the keys"),  # shown while typing a comment
    Binding("e", "edit", "Edit"),
    Binding("r", "revisions", "Revisions"),
    Binding("g", "guidelines", "Guidelines", show=False),
    Binding("s", "skip", "Skip"),
    Binding("p", "previous", "Prev"),
    Binding("n", "next", "Next"),
    Binding("u", "undo", "Undo"),
    Binding("j", "jump", "Jump"),
    Binding("slash", "filter", "Filter", key_display="/"),
    Binding("l", "judged", "Judged"),
]

FOOTER_KEPT = frozenset({"space", "n", "u"})
"""The keys the footer drops last where not all fit (80 columns): Space for a long item, n
at every item, u after a slip; the others stay on the help (?) and in the palette."""

EXPLAINED_KEYS: tuple[str, ...] = tuple(
    dict.fromkeys(
        binding.key
        for binding in REVIEW_BINDINGS
        if isinstance(binding, Binding) and binding.key != "escape"
    )
)
"""Every key of the screen: each gets a last binding that says why it does nothing now."""

REVIEW_BINDINGS += [Binding(key, f"explain('{key}')", show=False) for key in EXPLAINED_KEYS]

_VERDICT_OF_KEY = {key: verdict for verdict, (key, _label) in VERDICT_KEYS.items()}


def key_shape(item: ItemSnapshot) -> tuple[bool, int]:
    """What decides which keys apply: ordering or not (no-order), and how many letters."""
    return item.kind is ItemKind.ORDERING, len(item.choices)


def _letters(item: ItemSnapshot) -> str:
    labels = item.labels
    noun = "events" if item.kind is ItemKind.ORDERING else "choices"
    return f"this item has {noun} {labels[0]}–{labels[-1]} (or 1–{len(labels)})"


def action_applies(
    action: str,
    parameters: tuple[object, ...],
    phase: Phase,
    item: ItemSnapshot | None,
    history_position: int,
    typing_comment: bool,
) -> bool:
    """Whether the review screen's ``action`` applies now: in ``phase``, on ``item``, at
    ``history_position`` in the session's items, the cursor in the comment or not.  A
    key none of whose actions applies runs ``explain`` (:func:`why_not`)."""
    if action in ("pick", "pick_number"):
        if phase is not Phase.BLIND or item is None:
            return False
        if action == "pick":
            return str(parameters[0]) in item.choices
        return int(str(parameters[0])) <= len(item.choices)
    if action in ("take_back", "submit_answer"):
        return phase is Phase.BLIND
    if action == "verdict":
        if phase is not Phase.REVEALED or item is None:
            return False
        return verdict_applies(Verdict(str(parameters[0])), item.kind)
    if action == "comment":
        return phase is Phase.REVEALED
    if action == "leave_comment":  # Esc, in the footer while typing a comment
        return phase is Phase.REVEALED and typing_comment
    if action == "edit":
        return phase in (Phase.JUDGED, Phase.AUTHORED)
    if action == "revisions":
        return phase in (Phase.REVEALED, Phase.JUDGED, Phase.AUTHORED)
    if action == "toggle_raw":
        return phase in (Phase.BLIND, Phase.REVEALED, Phase.JUDGED, Phase.AUTHORED)
    if action == "skip":
        return phase in (Phase.BLIND, Phase.REVEALED)
    if action == "previous":
        return phase is not Phase.LOADING and history_position > 0
    if action in ("next", "undo", "jump", "filter", "judged"):
        return phase is not Phase.LOADING
    return True  # explain, guidelines


def why_not(
    key: str,
    phase: Phase,
    item: ItemSnapshot | None,
    *,
    judged_verdict: str | None = None,
    first_of_session: bool = False,
) -> str:
    """Why ``key`` does nothing in ``phase``: one line the annotator can act on."""
    is_pick = (len(key) == 1 and key.upper() in LETTERS) or key.isdigit()
    if phase is Phase.LOADING:
        return "still loading; press the key again in a moment"
    if key == "p" and first_of_session:
        return "this is the first item of the session: there is nothing before it"
    if phase is Phase.EMPTY or item is None:
        return "no item is open: n looks again, / changes the filters, j opens an item by id"
    if phase is Phase.JUDGED:
        if key == "s":
            return "skip puts aside an item you have not judged; n moves on"
        return (
            f"you judged this item already (verdict {judged_verdict}); u undoes this "
            "judgment, n moves on"
        )
    if phase is Phase.AUTHORED:
        return (
            "you wrote this revision, so you know its key: others judge it; n moves on, "
            "e edits it again"
        )
    if phase is Phase.BLIND:
        # A letter past the item's last one may have meant a pick or another action.
        reasons = [_letters(item)] if is_pick else []
        if key in _VERDICT_OF_KEY or key == "c":
            reasons.append(
                "give your blind answer first (Enter submits it): verdicts and comments come after"
            )
        if key == "e":
            reasons.append("e edits an item once you have judged it: answer it blind first")
        if key == "r":
            reasons.append("revisions show the key: they open once your blind answer is in")
        return "; ".join(reasons) or "not while you answer blind"
    # Revealed: the blind answer is in, a verdict is due.
    if key == "o" and item.kind is not ItemKind.ORDERING:
        return (
            "no clear order is for ordering items; for this item use m (several valid), "
            "w (wrong key) or f (flawed)"
        )
    if key == "backspace":
        return "your blind answer is submitted; give a verdict (u undoes a saved judgment)"
    if key == "enter":
        return (
            "choose a verdict: k keep, m several valid, w wrong key, f flawed, "
            "x sensitive, d duplicate"
        )
    if key == "e":
        return "e edits an item after your verdict; f (flawed) records the verdict with your edit"
    if is_pick:
        return "your blind answer is in: now choose a verdict (the footer lists the keys)"
    return "not now: give a verdict first"


def review_help_rows() -> list[HelpRow]:
    """The review screen's keys for the help (?), then the editor's."""
    from reviewer.tui.screens.edit import EditScreen

    rows = [HelpRow(entry.section, entry.keys, entry.text) for entry in ACTION_HELP]
    return rows + EditScreen.help_rows()


def palette_actions(
    applies: Callable[[str, tuple[object, ...]], bool | None],
) -> Iterator[tuple[str, str, str]]:
    """(title, help, action) for each action that ``applies`` now (the screen's
    ``check_action``), for the command palette."""
    for entry in ACTION_HELP:
        action, keys, text = entry.action, entry.keys, entry.text
        name, _, argument = action.partition("(")
        parameters = (argument.rstrip(")").strip("'"),) if argument else ()
        if action == "pick" or not applies(name, parameters):
            continue
        yield f"{entry.title} ({keys})", text[0].upper() + text[1:], action

"""Dialogs of the lead screens: pick a rejection reason, confirm a bulk approval, read
the other items a case names (read-only).

(The corrected key is typed in the one value prompt, ``reviewer.tui.screens.prompt``.)
Each answers through ``dismiss``; Escape answers None (or False).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, VerticalScroll
from textual.message import Message
from textual.widgets import Button, Input, OptionList, Static
from textual.widgets.option_list import Option

from db.vocabulary import DecisionReason, ItemKind, reason_word
from reviewer.adjudication import rejection_reasons
from reviewer.tui.literal import line_broken, literal
from reviewer.tui.screens.adjudication_text import item_text
from reviewer.tui.widgets.dialog import Dialog, DialogScreen
from reviewer.tui.widgets.titles import PanelTitle

if TYPE_CHECKING:
    from db.engine import Database
    from db.items import ItemSnapshot

REASON_HELP: dict[DecisionReason, str] = {
    DecisionReason.SEVERAL_VALID_ORDERS: "more than one order is defensible",
    DecisionReason.NO_CLEAR_ORDER: "the events have no logical order",
    DecisionReason.WRONG_KEY: "the key is wrong and cannot simply be corrected",
    DecisionReason.FLAWED: "the text is broken, unclear or misleading",
    DecisionReason.SENSITIVE: "sensitive or inappropriate content",
    DecisionReason.DUPLICATE: "the same question as another item",
    DecisionReason.OTHER: "another reason (say which in the comment)",
}


# Each reason keeps its number whichever reasons an item's kind offers, so 4 is always
# flawed: a lead's fingers learn one number per reason (a multiple-choice item, which has
# no no-clear-order, skips 2).
_REASON_NUMBER = {reason: number for number, reason in enumerate(DecisionReason, start=1)}


def reason_help(reason: DecisionReason, kind: ItemKind) -> str:
    """What ``reason`` means for an item of ``kind``."""
    if reason is DecisionReason.SEVERAL_VALID_ORDERS and kind is not ItemKind.ORDERING:
        return "more than one answer is defensible"
    return REASON_HELP[reason]


@dataclass(frozen=True)
class Rejection:
    """What the reason dialog answers."""

    reason: DecisionReason
    comment: str


class ReasonList(OptionList):
    """The reasons to choose from; Enter with none highlighted asks for one (OptionList
    does nothing then)."""

    class NoneChosen(Message):
        """Enter was pressed before any reason was highlighted."""

    def action_select(self) -> None:
        if self.highlighted is None:
            self.post_message(self.NoneChosen())
            return
        super().action_select()


class ReasonModal(DialogScreen[Rejection | None]):
    """Pick why an item is rejected (and add an optional comment).

    Only the reasons the item's kind allows are listed (``rejection_reasons``), each
    with its own number (``_REASON_NUMBER``).  The reason the annotators' verdicts point
    to is named and highlighted, so Enter rejects for it; the lead moves to another
    (arrows, or its number) and chooses it with Enter or a click.  With no reason
    pointed to, none is highlighted, and Enter says how to choose one."""

    CSS_PATH = "lead.tcss"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", "Cancel"),
        *[
            Binding(str(number), f"highlight({number - 1})", show=False)
            for number in range(1, len(DecisionReason) + 1)
        ],
    ]

    def __init__(
        self, item_id: str, kind: ItemKind, suggested: DecisionReason | None = None
    ) -> None:
        super().__init__()
        self.item_id = item_id
        self.kind = kind
        self.reasons = list(rejection_reasons(kind))
        self.suggested = suggested

    def compose(self) -> ComposeResult:
        with Dialog():
            yield PanelTitle(literal(f"Reject {self.item_id} because …"))
            yield ReasonList(
                *[
                    Option(
                        Text.assemble(
                            (f"{_REASON_NUMBER[reason]} ", "dim"),
                            (reason_word(reason.value, self.kind.value), "bold"),
                            f"  {reason_help(reason, self.kind)}",
                        ),
                        id=reason,
                    )
                    for reason in self.reasons
                ],
                id="reasons",
            )
            yield Input(placeholder="comment (optional)", id="reject-comment")
            pointed = (
                f"The annotators' verdicts point to {self._numbered(self.suggested)}: "
                "Enter rejects for it, or choose another (↑↓ or its number) first; "
                if self.suggested in self.reasons
                else "Choose a reason (↑↓ or its number), then Enter rejects; "
            )
            yield Static(f"{pointed}Tab moves to the comment; Esc cancels.", classes="dialog-help")
            yield Static(id="reject-problem", classes="dialog-problem")

    def on_mount(self) -> None:
        options = self.query_one("#reasons", OptionList)
        # the reason the verdicts point to, ready for Enter; else the lead chooses one
        suggested = self.suggested
        options.highlighted = self.reasons.index(suggested) if suggested in self.reasons else None
        options.focus()

    def _numbered(self, reason: DecisionReason) -> str:
        return f"{reason_word(reason.value, self.kind.value)} ({_REASON_NUMBER[reason]})"

    def action_highlight(self, index: int) -> None:
        reason = list(DecisionReason)[index]
        if reason not in self.reasons:  # no-clear-order, for an item that is not an order
            return
        options = self.query_one("#reasons", OptionList)
        options.highlighted = self.reasons.index(reason)
        options.focus()

    @on(ReasonList.NoneChosen)
    def _none_chosen(self) -> None:
        self._ask_for_reason("")

    def _ask_for_reason(self, way_back: str) -> None:
        """Enter before a reason is chosen: say how to choose one (and the suggested one)."""
        suggested = (
            f"; the verdicts point to {self._numbered(self.suggested)}"
            if self.suggested in self.reasons
            else ""
        )
        self.query_one("#reject-problem", Static).update(
            f"Choose a reason first: ↑↓ then Enter, or its number{suggested}.{way_back}"
        )

    @on(OptionList.OptionSelected, "#reasons")
    def _reason_chosen(self, event: OptionList.OptionSelected) -> None:
        comment = self.query_one("#reject-comment", Input).value
        self.dismiss(Rejection(DecisionReason(str(event.option.id)), comment.strip()))

    @on(Input.Submitted, "#reject-comment")
    def _comment_entered(self) -> None:
        options = self.query_one("#reasons", OptionList)
        if options.highlighted is None:
            self._ask_for_reason(" Shift+Tab goes back to the list.")
            return
        self.dismiss(
            Rejection(self.reasons[options.highlighted], self.query_one(Input).value.strip())
        )

    def action_cancel(self) -> None:
        self.dismiss(None)


class ConfirmModal(DialogScreen[bool]):
    """A yes/no question; y or Enter on Yes confirms, n or Escape declines.  Every one
    (quit, leave the editor, approve) says so on its buttons, "Yes (y)", "No (n, Esc)", as
    the editor's "Store it (y, Enter)" does."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("y", "answer(True)", "Yes"),
        Binding("n,escape", "answer(False)", "No"),
    ]

    def __init__(self, question: str) -> None:
        super().__init__()
        self.question = question

    def compose(self) -> ComposeResult:
        with Dialog():
            yield PanelTitle(literal(self.question))
            with Horizontal(classes="dialog-buttons"):
                yield Button("Yes (y)", id="yes", variant="primary")
                yield Button("No (n, Esc)", id="no")

    def on_mount(self) -> None:
        self.query_one("#no", Button).focus()

    def ask(self, question: str) -> None:
        """Ask this instead, in place (what it asked about has changed meanwhile)."""
        self.question = question
        self.query_one(PanelTitle).update(literal(question))

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "yes")

    def action_answer(self, answer: bool) -> None:
        self.dismiss(answer)


class OtherItemsModal(DialogScreen[None]):
    """The items a case names (the one its annotators call it a duplicate of, the one its
    duplicate flag compares it with), each in full as F3 shows an item, to read beside
    it: read-only, nothing here decides.  Esc, q or o closes it."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape,q,o", "close", "Close")]

    @dataclass
    class Loaded(Message):
        """The items, by id in the order named (None: no such item)."""

        items: dict[str, ItemSnapshot | None]

    def __init__(self, database: Database, of: str, item_ids: list[str], *, raw: bool) -> None:
        super().__init__()
        self.database = database
        self.of = of
        self.item_ids = item_ids
        self.raw = raw

    def compose(self) -> ComposeResult:
        title = Text("Named by ")
        title.append_text(literal(self.of, "bold"))
        with Dialog(classes="wide"):
            yield PanelTitle(title)
            with VerticalScroll():
                yield Static("Reading …", id="other-items")
            yield Static("Read-only. Esc (or o) goes back to the case.", classes="dialog-help")

    def on_mount(self) -> None:
        self.load()

    @work(thread=True, exclusive=True, exit_on_error=False)
    def load(self) -> None:
        from db.items import get_item

        with self.database.session() as session:
            items = {item_id: get_item(session, item_id) for item_id in self.item_ids}
        self.post_message(self.Loaded(items))

    def on_other_items_modal_loaded(self, message: Loaded) -> None:
        shown = Text()
        for index, (item_id, item) in enumerate(message.items.items()):
            if index:
                shown.append("\n" + "─" * 20 + "\n\n", style="dim")
            if item is None:
                shown.append_text(literal(f"{item_id}: no such item in this database", "yellow"))
                shown.append("\n")
            else:
                shown.append_text(item_text(item, raw=self.raw))
        self.query_one("#other-items", Static).update(line_broken(shown))

    def action_close(self) -> None:
        self.dismiss(None)

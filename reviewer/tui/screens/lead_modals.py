"""Modal dialogs of the lead screens: pick a rejection reason, type a corrected key, confirm.

Each answers through ``ModalScreen[T].dismiss``; Escape answers None (or False).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label, OptionList, Static
from textual.widgets.option_list import Option

from db.answers import AnswerError, format_answer, parse_answer
from db.vocabulary import ItemKind

REASON_HELP = {
    "several-valid-orders": "more than one order is defensible",
    "no-clear-order": "the events have no logical order",
    "wrong-key": "the key is wrong and cannot simply be corrected",
    "flawed": "the text is broken, unclear or misleading",
    "sensitive": "sensitive or inappropriate content",
    "duplicate": "the same question as another item",
    "other": "another reason (say which in the comment)",
}


@dataclass(frozen=True)
class Rejection:
    """What the reason dialog answers."""

    reason: str
    comment: str


class ReasonModal(ModalScreen[Rejection | None]):
    """Pick why an item is rejected (and add an optional comment)."""

    CSS_PATH = "lead.tcss"
    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, item_id: str, reasons: Sequence[str], suggested: str | None = None) -> None:
        super().__init__()
        self.item_id = item_id
        self.reasons = list(reasons)
        self.suggested = suggested

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Label(Text(f"Reject {self.item_id} because …"), classes="dialog-title")
            yield OptionList(
                *[
                    Option(
                        Text.assemble((reason, "bold"), f"  {REASON_HELP.get(reason, '')}"),
                        id=reason,
                    )
                    for reason in self.reasons
                ],
                id="reasons",
            )
            yield Input(placeholder="comment (optional)", id="reject-comment")
            yield Static("Enter on a reason rejects; Escape cancels.", classes="dialog-help")

    def on_mount(self) -> None:
        options = self.query_one("#reasons", OptionList)
        if self.suggested in self.reasons:
            options.highlighted = self.reasons.index(self.suggested)
        else:
            options.highlighted = 0
        options.focus()

    @on(OptionList.OptionSelected, "#reasons")
    def _reason_chosen(self, event: OptionList.OptionSelected) -> None:
        comment = self.query_one("#reject-comment", Input).value
        self.dismiss(Rejection(str(event.option.id), comment.strip()))

    @on(Input.Submitted, "#reject-comment")
    def _comment_entered(self) -> None:
        options = self.query_one("#reasons", OptionList)
        if options.highlighted is not None:
            self.dismiss(
                Rejection(self.reasons[options.highlighted], self.query_one(Input).value.strip())
            )

    def action_cancel(self) -> None:
        self.dismiss(None)


class KeyModal(ModalScreen[str | None]):
    """Type the corrected key of an item; it is checked before the dialog closes."""

    CSS_PATH = "lead.tcss"
    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "cancel", "Cancel")]

    def __init__(
        self, item_id: str, kind: ItemKind, labels: Sequence[str], current: str, suggested: str
    ) -> None:
        super().__init__()
        self.item_id = item_id
        self.kind = kind
        self.labels = list(labels)
        self.current = current
        self.suggested = suggested

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Label(
                Text(f"Approve {self.item_id} with a corrected key"), classes="dialog-title"
            )
            yield Static(
                Text(f"current key: {format_answer(self.kind, self.current)}"),
                classes="dialog-help",
            )
            yield Input(value=format_answer(self.kind, self.suggested), id="corrected-key")
            yield Static("", id="key-problem")
            yield Static("Enter approves with this key; Escape cancels.", classes="dialog-help")

    def on_mount(self) -> None:
        self.query_one("#corrected-key", Input).focus()

    @on(Input.Submitted, "#corrected-key")
    def _key_entered(self, event: Input.Submitted) -> None:
        try:
            key = parse_answer(self.kind, event.value, self.labels)
        except AnswerError as error:
            self.query_one("#key-problem", Static).update(Text(str(error), style="bold red"))
            return
        if key == self.current:
            self.query_one("#key-problem", Static).update(
                Text("that is the current key; approve with a instead", style="bold red")
            )
            return
        self.dismiss(key)

    def action_cancel(self) -> None:
        self.dismiss(None)


class ConfirmModal(ModalScreen[bool]):
    """A yes/no question; y or Enter on Yes confirms, n or Escape declines."""

    CSS_PATH = "lead.tcss"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("y", "answer(True)", "Yes"),
        Binding("n,escape", "answer(False)", "No"),
    ]

    def __init__(self, question: str) -> None:
        super().__init__()
        self.question = question

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Label(Text(self.question), classes="dialog-title")
            with Horizontal(classes="dialog-buttons"):
                yield Button("Yes", id="yes", variant="primary")
                yield Button("No", id="no")

    def on_mount(self) -> None:
        self.query_one("#no", Button).focus()

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "yes")

    def action_answer(self, answer: bool) -> None:
        self.dismiss(answer)

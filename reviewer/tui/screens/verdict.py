"""Small modals that collect what a verdict needs: other valid orders, a corrected key,
the id of the item this one duplicates.  Each validates as the annotator types
Enter, so a refusal never costs them the judgment they were about to give.
"""

from __future__ import annotations

from collections.abc import Callable

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Static

from db.answers import AnswerError, format_answer
from db.items import ItemSnapshot
from reviewer.tui.literal import literal

Validator = Callable[[str], str]
"""Turns typed text into the stored value, or raises ValueError with the reason."""


class AnswerPromptScreen(ModalScreen[str | None]):
    """Asks for one value (a corrected key, an item id); Esc cancels."""

    BINDINGS = [Binding("escape", "cancel", "Cancel")]

    def __init__(
        self, title: str, explanation: str, validator: Validator, initial: str = ""
    ) -> None:
        super().__init__()
        self.title_text = title
        self.explanation = explanation
        self.validator = validator
        self.initial = initial

    def compose(self) -> ComposeResult:
        with Vertical(classes="review-dialog"):
            yield Static(Text(self.title_text), classes="panel-title")
            yield Static(Text(self.explanation), classes="review-dialog-help")
            yield Input(value=self.initial, id="prompt-input")
            yield Static(id="prompt-problem", classes="problem")

    @on(Input.Submitted, "#prompt-input")
    def submit(self, event: Input.Submitted) -> None:
        try:
            value = self.validator(event.value)
        except ValueError as error:
            self.query_one("#prompt-problem", Static).update(literal(str(error)))
            return
        self.dismiss(value)

    def action_cancel(self) -> None:
        self.dismiss(None)


class AlternativesScreen(ModalScreen[list[str] | None]):
    """Collects every other valid order (or answer) of an ambiguous item."""

    BINDINGS = [
        Binding("escape", "cancel", "Cancel"),
        Binding("ctrl+s", "save", "Save alternatives"),
    ]

    def __init__(self, item: ItemSnapshot, validator: Validator, initial: str = "") -> None:
        super().__init__()
        self.item = item
        self.validator = validator
        self.initial = initial
        self.alternatives: list[str] = []

    def compose(self) -> ComposeResult:
        noun = "order" if not self.item.kind.is_mcq else "answer"
        with Vertical(classes="review-dialog"):
            yield Static(f"Ambiguous: other valid {noun}s", classes="panel-title")
            yield Static(
                Text(
                    f"The key is {format_answer(self.item.kind, self.item.key)}. Type another "
                    f"valid {noun} (e.g. {format_answer(self.item.kind, self.item.key[::-1])}) "
                    "and press Enter to add it; add as many as apply. Enter on an empty line "
                    "or Ctrl+S saves, Esc cancels."
                ),
                classes="review-dialog-help",
            )
            yield Input(value=self.initial, id="alternative-input")
            yield Static(id="alternative-list")
            yield Static(id="alternative-problem", classes="problem")

    @on(Input.Submitted, "#alternative-input")
    def add_alternative(self, event: Input.Submitted) -> None:
        if not event.value.strip():
            self.action_save()
            return
        problem = self.query_one("#alternative-problem", Static)
        try:
            alternative = self.validator(event.value)
        except (ValueError, AnswerError) as error:
            problem.update(literal(str(error)))
            return
        problem.update("")
        if alternative not in self.alternatives:
            self.alternatives.append(alternative)
        event.input.value = ""
        listed = Text("Recorded: ", style="bold")
        listed.append("  |  ".join(format_answer(self.item.kind, a) for a in self.alternatives))
        self.query_one("#alternative-list", Static).update(listed)

    def action_save(self) -> None:
        if not self.alternatives:
            self.query_one("#alternative-problem", Static).update(
                "Add at least one other valid order first (or Esc to cancel)."
            )
            return
        self.dismiss(list(self.alternatives))

    def action_cancel(self) -> None:
        self.dismiss(None)

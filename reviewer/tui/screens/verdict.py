"""Small modals that collect what a verdict needs: other valid orders, a corrected key,
the id of the item this one duplicates.  Each validates as the annotator types
Enter, so a refusal never costs them the judgment they were about to give.

:func:`verdict_details` picks the modal for a verdict (None when it needs nothing
more) and says which judgment field its answer fills.
"""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import ModalScreen
from textual.widgets import Input, Static

from db.answers import format_answer
from db.engine import Database
from db.items import ItemSnapshot, get_item
from db.vocabulary import Verdict
from reviewer.tui.literal import literal, visible_text
from reviewer.tui.screens.prompt import PromptScreen, Validator, answer_validator
from reviewer.tui.widgets.dialog import Dialog, DialogScreen
from reviewer.tui.widgets.titles import PanelTitle


class AlternativesScreen(DialogScreen[list[str] | None]):
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
        with Dialog():
            yield PanelTitle(f"Ambiguous: other valid {noun}s")
            yield Static(
                Text(
                    f"The key is {format_answer(self.item.kind, self.item.key)}. Type another "
                    f"valid {noun} (e.g. {format_answer(self.item.kind, self.item.key[::-1])}) "
                    "and press Enter to add it; add as many as apply. Enter on an empty line "
                    "or Ctrl+S saves, Esc cancels."
                ),
                classes="dialog-help",
            )
            yield Input(value=self.initial, id="alternative-input")
            yield Static(id="alternative-list")
            yield Static(id="alternative-problem", classes="dialog-problem")

    @on(Input.Submitted, "#alternative-input")
    def add_alternative(self, event: Input.Submitted) -> None:
        if not event.value.strip():
            self.action_save()
            return
        problem = self.query_one("#alternative-problem", Static)
        try:
            alternative = self.validator(event.value)
        except ValueError as error:  # AnswerError is one
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


def duplicate_validator(db: Database, item: ItemSnapshot) -> Validator:
    """Accepts the id of another existing item."""

    def validate(text: str) -> str:
        other = text.strip()
        if not other:
            raise ValueError("type the id of the other item")
        if other == item.id:
            raise ValueError("an item cannot be a duplicate of itself")
        with db.session() as session:
            if get_item(session, other) is None:
                raise ValueError(f"there is no item '{other}'")
        return other

    return validate


def verdict_details(
    db: Database, item: ItemSnapshot, verdict: Verdict, blind_answer: str
) -> tuple[ModalScreen[Any], str] | None:
    """The modal that asks what ``verdict`` needs, and the judgment field its answer fills.

    The annotator's own blind answer, when it differs from the key, is offered first:
    it is the likeliest other valid order or corrected key.
    """
    offered = format_answer(item.kind, blind_answer) if blind_answer != item.key else ""
    if verdict is Verdict.AMBIGUOUS:
        refusal = "that is the key itself; type the other valid order"
        return AlternativesScreen(item, answer_validator(item, refusal), offered), (
            "alternative_orders"
        )
    if verdict is Verdict.WRONG_KEY:
        field = "corrected_key"
        prompt = PromptScreen(
            "Wrong key: the corrected key",
            f"The key is {format_answer(item.kind, item.key)}. Type the right one "
            "and press Enter (Esc cancels).",
            answer_validator(item, "that is the key itself; type the corrected key"),
            offered,
        )
    elif verdict is Verdict.DUPLICATE:
        field = "duplicate_of"
        prompt = PromptScreen(
            "Duplicate: of which item?",
            "Type the id of the item this one duplicates and press Enter (Esc cancels).",
            duplicate_validator(db, item),
            visible_text(item.suspected_duplicate_of or ""),
        )
    else:
        return None
    return prompt, field

"""The one dialog that asks for a single value: a corrected key, an item id.

It checks what was typed with a validator when Enter is pressed and stays open,
saying why, until the value is acceptable; Esc cancels (answers None).  The
annotator's wrong-key and duplicate dialogs, the jump dialog and the lead's
corrected-key dialog are all this one screen with other words.
"""

from __future__ import annotations

from collections.abc import Callable

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.widgets import Input, Static

from db.answers import parse_answer
from db.engine import Database
from db.errors import VetbenchError
from db.items import ItemSnapshot, get_item, no_item_message
from reviewer.tui.literal import literal
from reviewer.tui.widgets.dialog import Dialog, DialogScreen
from reviewer.tui.widgets.titles import PanelTitle

Validator = Callable[[str], str]
"""Turns typed text into the stored value, or raises a ``VetbenchError`` (``Refused``,
``AnswerError``) with the reason."""


class Refused(VetbenchError):
    """What was typed cannot be taken; the message says why."""


class PromptScreen(DialogScreen[str | None]):
    """Asks for one value; Enter checks it, Esc cancels."""

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
        with Dialog():
            yield PanelTitle(literal(self.title_text))
            yield Static(literal(self.explanation), classes="dialog-help")
            yield Input(value=self.initial, id="prompt-input")
            yield Static(id="prompt-problem", classes="dialog-problem")

    def on_mount(self) -> None:
        self.query_one("#prompt-input", Input).focus()

    @on(Input.Submitted, "#prompt-input")
    def submit(self, event: Input.Submitted) -> None:
        try:
            value = self.validator(event.value)
        except VetbenchError as error:
            self.query_one("#prompt-problem", Static).update(literal(str(error)))
            return
        self.dismiss(value)

    def action_cancel(self) -> None:
        self.dismiss(None)


def answer_validator(item: ItemSnapshot, refusal_of_the_key: str) -> Validator:
    """Parses an order or choice set for ``item``; the item's own key is refused, saying
    ``refusal_of_the_key`` (the dialog asks for a different answer)."""

    def validate(text: str) -> str:
        value = parse_answer(item.kind, text, item.labels)
        if value == item.key:
            raise Refused(refusal_of_the_key)
        return value

    return validate


def item_id_validator(db: Database, refusal_of_nothing: str) -> Validator:
    """Accepts the id of an item that exists; nothing typed is refused, saying
    ``refusal_of_nothing``."""

    def validate(text: str) -> str:
        item_id = text.strip()
        if not item_id:
            raise Refused(refusal_of_nothing)
        with db.session() as session:
            if get_item(session, item_id) is None:
                raise Refused(no_item_message(session, item_id))
        return item_id

    return validate

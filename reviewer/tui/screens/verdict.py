"""Small modals that collect what a verdict needs: other valid orders, a corrected key,
the id of the item this one duplicates.  Each validates as the annotator types
Enter, so a refusal never costs them the judgment they were about to give.

:func:`verdict_details` picks the modal for a verdict (None when it needs nothing
more) and how its answer fills the judgment.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import ModalScreen
from textual.widgets import Input, Static

from db.answers import format_answer
from db.engine import Database
from db.errors import VetbenchError
from db.items import ItemSnapshot
from db.vocabulary import ItemKind, Verdict
from reviewer.judging import JudgmentInput, RetractionReceipt
from reviewer.tui.literal import literal, visible_text
from reviewer.tui.screens.prompt import (
    PromptScreen,
    Refused,
    Validator,
    answer_validator,
    item_id_validator,
)
from reviewer.tui.widgets.dialog import Dialog, DialogScreen
from reviewer.tui.widgets.titles import PanelTitle


class AlternativesScreen(DialogScreen[list[str] | None]):
    """Collects every other valid order (or answer) of an ambiguous item."""

    BINDINGS = [
        Binding("escape", "cancel", "Cancel"),
        Binding("ctrl+s", "save", "Save alternatives"),
    ]

    def __init__(
        self,
        item: ItemSnapshot,
        validator: Validator,
        initial: str = "",
        recorded: Sequence[str] = (),
    ) -> None:
        super().__init__()
        self.item = item
        self.validator = validator
        self.initial = initial
        self.alternatives: list[str] = list(recorded)  # an undone judgment's, offered again

    @property
    def noun(self) -> str:
        """What an alternative is: an order, a set of answers, or an answer."""
        return {
            ItemKind.ORDERING: "order",
            ItemKind.MULTI: "set of answers",
        }.get(self.item.kind, "answer")

    def compose(self) -> ComposeResult:
        noun = self.noun
        plural = {"order": "orders", "set of answers": "sets of answers"}.get(noun, "answers")
        with Dialog():
            yield PanelTitle(f"Several valid {plural}: the others")
            yield Static(
                Text(
                    f"The key is {format_answer(self.item.kind, self.item.key)}. Type another "
                    f"defensible {noun} (e.g. {example_alternative(self.item)}) and press "
                    "Enter to add it; add as many as apply. Enter on an empty line or Ctrl+S "
                    "saves, Esc cancels."
                ),
                classes="dialog-help",
            )
            yield Input(value=self.initial, id="alternative-input")
            yield Static(self._listed(), id="alternative-list")
            yield Static(id="alternative-problem", classes="dialog-problem")

    def _listed(self) -> Text:
        """The alternatives recorded so far ("" before the first)."""
        if not self.alternatives:
            return Text()
        listed = Text("Recorded: ", style="bold")
        listed.append("  |  ".join(format_answer(self.item.kind, a) for a in self.alternatives))
        return listed

    @on(Input.Submitted, "#alternative-input")
    def add_alternative(self, event: Input.Submitted) -> None:
        if not event.value.strip():
            self.action_save()
            return
        problem = self.query_one("#alternative-problem", Static)
        try:
            alternative = self.validator(event.value)
        except VetbenchError as error:  # AnswerError, Refused
            problem.update(literal(str(error)))
            return
        problem.update("")
        if alternative not in self.alternatives:
            self.alternatives.append(alternative)
        event.input.value = ""
        self.query_one("#alternative-list", Static).update(self._listed())

    def action_save(self) -> None:
        if not self.alternatives:
            self.query_one("#alternative-problem", Static).update(
                f"Add at least one other defensible {self.noun} first (or Esc to cancel)."
            )
            return
        self.dismiss(list(self.alternatives))

    def action_cancel(self) -> None:
        self.dismiss(None)


def example_alternative(item: ItemSnapshot) -> str:
    """An example of another answer for the help text: never the key itself."""
    labels = item.labels
    if item.kind is ItemKind.ORDERING:
        example = item.key[1] + item.key[0] + item.key[2:]  # the first two swapped
    elif item.kind is ItemKind.MULTI:
        # The key with one more choice, or with one less when it holds them all.
        missing = [label for label in labels if label not in item.key]
        example = "".join(sorted(item.key + missing[0])) if missing else item.key[:-1]
    else:
        example = next(label for label in labels if label != item.key)
    return format_answer(item.kind, example)


def nonempty(what: str) -> Validator:
    """Accepts any text that is not blank (a comment that a verdict needs)."""

    def validate(text: str) -> str:
        if not text.strip():
            raise Refused(f"say {what} (Esc cancels: nothing is stored)")
        return text.strip()

    return validate


def duplicate_validator(db: Database, item: ItemSnapshot) -> Validator:
    """Accepts the id of another existing item."""
    existing_item = item_id_validator(db, "type the id of the other item")

    def validate(text: str) -> str:
        if text.strip() == item.id:
            raise Refused("an item cannot be a duplicate of itself")
        return existing_item(text)

    return validate


DetailFiller = Callable[[JudgmentInput, Any], JudgmentInput]
"""Puts a modal's answer into the judgment, in the field its verdict needs."""


def verdict_details(
    db: Database,
    item: ItemSnapshot,
    verdict: Verdict,
    blind_answer: str,
    comment: str = "",
    earlier: RetractionReceipt | None = None,
) -> tuple[ModalScreen[Any], DetailFiller] | None:
    """The modal that asks what ``verdict`` needs, and how its answer fills the judgment.

    What the judgment this session undid (``earlier``) gave is offered first; else the
    annotator's own blind answer, when it differs from the key: it is the likeliest
    other valid order or corrected key.  Sensitive needs a comment (what is sensitive):
    asked for unless one was written already.  (Flawed opens the editor:
    ``reviewer.tui.screens.edit``.)
    """
    offered = format_answer(item.kind, blind_answer) if blind_answer != item.key else ""
    if verdict is Verdict.AMBIGUOUS:
        noun = "order" if item.kind is ItemKind.ORDERING else "answer"
        refusal = f"that is the key itself; type another defensible {noun}"
        recorded = earlier.alternative_orders if earlier is not None else ()
        return AlternativesScreen(
            item, answer_validator(item, refusal), "" if recorded else offered, recorded
        ), (lambda given, orders: replace(given, alternative_orders=tuple(orders)))
    if verdict is Verdict.SENSITIVE:
        # A comment the undo put back was written for another verdict: it is offered,
        # not taken as what is sensitive unasked.
        restored = (
            earlier is not None and earlier.verdict != verdict.value and comment == earlier.comment
        )
        if comment.strip() and not restored:
            return None
        return PromptScreen(
            "Sensitive: what is sensitive?",
            "Say what makes the item unfit (a lead reads it) and press Enter; Esc cancels "
            "and stores nothing.",
            nonempty("what is sensitive"),
            comment,
        ), lambda given, text: replace(given, comment=text)
    if verdict is Verdict.WRONG_KEY:
        return PromptScreen(
            "Wrong key: the corrected key",
            f"The key is {format_answer(item.kind, item.key)}. Type the right one "
            "and press Enter (Esc cancels).",
            answer_validator(item, "that is the key itself; type the corrected key"),
            format_answer(item.kind, earlier.corrected_key)
            if earlier is not None and earlier.corrected_key
            else offered,
        ), lambda given, key: replace(given, corrected_key=key)
    if verdict is Verdict.DUPLICATE:
        return PromptScreen(
            "Duplicate: of which item?",
            "Type the id of the item this one duplicates and press Enter (Esc cancels).",
            duplicate_validator(db, item),
            visible_text(
                (earlier.duplicate_of if earlier is not None else None)
                or item.suspected_duplicate_of
                or ""
            ),
        ), lambda given, original: replace(given, duplicate_of=original)
    return None

"""The blind answer as it is built: the order so far ("D, A, ·, ·") or the chosen letters.

``AnswerDraft`` holds the rules (plain Python, tested on its own); ``AnswerPanel``
shows it with the keys that apply and two buttons for mouse users.
"""

from __future__ import annotations

from dataclasses import dataclass

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.widgets import Button, Static

from db.answers import truefalse_word
from db.vocabulary import ItemKind
from reviewer.tui.widgets.titles import PanelTitle


class AnswerDraft:
    """The letters pressed so far, following the item kind's rules.

    Ordering: each press appends an event (pressing a placed one does nothing).
    Single and true/false: a press replaces the choice.  Multi: a press toggles.
    Backspace takes back the last step, whatever it was: a multi answer's un-chosen
    letter comes back, a single answer's earlier choice returns.
    """

    def __init__(self, kind: ItemKind, labels: list[str]) -> None:
        self.kind = kind
        self.labels = list(labels)
        self.letters: list[str] = []
        self._before: list[list[str]] = []  # the letters before each step, for back()

    def press(self, label: str) -> bool:
        """Apply one letter; returns False when it changed nothing (unknown or already placed)."""
        if label not in self.labels:
            return False
        if self.kind is ItemKind.ORDERING:
            if label in self.letters:
                return False
            letters = [*self.letters, label]
        elif self.kind is ItemKind.MULTI:
            chosen = label in self.letters
            letters = [c for c in self.letters if c != label] if chosen else [*self.letters, label]
        else:
            letters = [label]
        self._step(letters)
        return True

    def _step(self, letters: list[str]) -> None:
        self._before.append(self.letters)
        self.letters = letters

    def press_number(self, number: int) -> bool:
        """Digits count events or choices from 1."""
        return 1 <= number <= len(self.labels) and self.press(self.labels[number - 1])

    def back(self) -> bool:
        """Take back the last step; False when there was nothing to take back."""
        if not self._before:
            return False
        self.letters = self._before.pop()
        return True

    def complete_last(self) -> None:
        """With one event left, Enter places it: the order is then fully determined."""
        if self.kind is ItemKind.ORDERING and len(self.letters) == len(self.labels) - 1:
            self._step(self.letters + [label for label in self.labels if label not in self.letters])

    @property
    def is_complete(self) -> bool:
        if self.kind is ItemKind.ORDERING:
            return len(self.letters) == len(self.labels)
        return bool(self.letters)

    @property
    def answer(self) -> str:
        """Canonical text for ``parse_answer`` (orders keep their sequence; sets are sorted)."""
        if self.kind is ItemKind.ORDERING:
            return "".join(self.letters)
        return "".join(sorted(self.letters, key=self.labels.index))

    def describe(self) -> Text:
        """``D, A, ·, ·`` for orders; ``A C`` for choices (true/false shows 对/错 too)."""
        text = Text()
        if self.kind is ItemKind.ORDERING:
            slots = self.letters + ["·"] * (len(self.labels) - len(self.letters))
            for index, slot in enumerate(slots):
                if index:
                    text.append(", ", style="dim")
                text.append(slot, style="bold" if slot != "·" else "dim")
            return text
        if not self.letters:
            return Text("nothing chosen yet", style="dim")
        for index, letter in enumerate(self.answer):
            if index:
                text.append("  ")
            text.append(letter, style="bold")
            if self.kind is ItemKind.TRUEFALSE:
                text.append(f" ({truefalse_word(letter)})")
        return text

    def hint(self) -> str:
        first, last = self.labels[0], self.labels[-1]
        count = len(self.labels)
        if self.kind is ItemKind.ORDERING:
            return (
                f"Press the events in order: {first}–{last} or 1–{count}. "
                "Backspace takes back a step; Enter submits."
            )
        if self.kind is ItemKind.MULTI:
            return f"Toggle every right choice: {first}–{last}. Enter submits."
        return f"Pick one choice: {first}–{last}. Enter submits."


class AnswerPanel(Vertical):
    """Shows the draft answer; the buttons post the same requests as the keys."""

    DEFAULT_CSS = """
    AnswerPanel {
        height: auto;
        padding: 0 1;
        border: round $secondary;
    }

    AnswerPanel > #answer-draft {
        margin: 1 0;
        text-style: bold;
    }

    AnswerPanel > #answer-buttons {
        height: auto;
        margin-top: 1;
    }

    AnswerPanel > #answer-buttons > Button {
        margin-right: 2;
    }
    """

    @dataclass
    class SubmitRequested(Message):
        """The Submit button was clicked."""

    @dataclass
    class BackRequested(Message):
        """The Take back button was clicked."""

    def compose(self) -> ComposeResult:
        yield PanelTitle("Your blind answer")
        yield Static(id="answer-draft")
        yield Static(id="answer-hint")
        with Horizontal(id="answer-buttons"):
            yield Button("⌫ Take back", id="answer-back", compact=True)
            yield Button("⏎ Submit answer", id="answer-submit", variant="primary", compact=True)

    def show(self, draft: AnswerDraft) -> None:
        self.query_one("#answer-draft", Static).update(draft.describe())
        self.query_one("#answer-hint", Static).update(Text(draft.hint(), style="dim"))
        self.query_one("#answer-submit", Button).disabled = not (
            draft.is_complete
            or (draft.kind is ItemKind.ORDERING and len(draft.letters) == len(draft.labels) - 1)
        )

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        if event.button.id == "answer-submit":
            self.post_message(self.SubmitRequested())
        elif event.button.id == "answer-back":
            self.post_message(self.BackRequested())

"""The verdict buttons and the comment box, shown once the key is revealed.

Each button names its key; clicking it does what the key does.
"""

from __future__ import annotations

from dataclasses import dataclass

from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.widgets import Button, Input, Label

from db.vocabulary import Verdict

VERDICT_KEYS: dict[Verdict, tuple[str, str]] = {
    Verdict.KEEP: ("k", "Keep"),
    Verdict.AMBIGUOUS: ("m", "Ambiguous"),
    Verdict.NO_ORDER: ("o", "No clear order"),
    Verdict.WRONG_KEY: ("w", "Wrong key"),
    Verdict.FLAWED: ("f", "Flawed → edit"),
    Verdict.SENSITIVE: ("x", "Sensitive"),
    Verdict.DUPLICATE: ("d", "Duplicate"),
}
"""Key and button label of each verdict (the review screen binds the same keys)."""


class VerdictBar(Vertical):
    """Seven verdict buttons and a one-line comment."""

    DEFAULT_CSS = """
    VerdictBar {
        height: auto;
        padding: 0 1;
    }

    VerdictBar > #verdict-buttons {
        height: auto;
    }

    VerdictBar > #verdict-buttons > Button {
        margin-right: 1;
    }

    VerdictBar > #comment-row {
        height: 1;
    }

    VerdictBar > #comment-row > Label {
        color: $text-muted;
    }

    VerdictBar > #comment-row > #comment {
        width: 1fr;
    }
    """

    @dataclass
    class VerdictChosen(Message):
        """A verdict button was clicked."""

        verdict: Verdict

    def compose(self) -> ComposeResult:
        with Horizontal(id="verdict-buttons"):
            for verdict, (key, label) in VERDICT_KEYS.items():
                yield Button(
                    f"{key} {label}",
                    id=f"verdict-{verdict.value}",
                    variant="success" if verdict is Verdict.KEEP else "default",
                    compact=True,
                )
        with Horizontal(id="comment-row"):
            yield Label("c Comment ")
            yield Input(
                placeholder="optional; Enter or Esc returns to the keys",
                id="comment",
                compact=True,
            )

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        button_id = event.button.id or ""
        if button_id.startswith("verdict-"):
            self.post_message(self.VerdictChosen(Verdict(button_id.removeprefix("verdict-"))))

    def allow_no_order(self, allowed: bool) -> None:
        """No clear order applies to ordering items only."""
        self.query_one(f"#verdict-{Verdict.NO_ORDER.value}", Button).display = allowed

    @property
    def comment(self) -> str:
        return self.query_one("#comment", Input).value

    def clear_comment(self) -> None:
        self.query_one("#comment", Input).value = ""

"""The verdict buttons and the comment box, shown once the key is revealed.

Each button names its key; clicking it does what the key does.  The buttons sit
on one row when they all fit, else in rows of equal columns, as few rows as keep
every label whole (at 80 columns: four and three; at 60: three, three and one), so
every verdict stays on screen and reachable.
"""

from __future__ import annotations

from dataclasses import dataclass
from math import ceil

from rich.cells import cell_len
from textual import events
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

BUTTON_GAP = 2  # cells between two buttons on one row (the CSS margin-right)
GRID_GAP = 1  # cells between two columns of buttons (the CSS grid-gutter)


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
        min-width: 0;
        margin-right: 2;
    }

    VerdictBar.-rows > #verdict-buttons {
        layout: grid;
        grid-gutter: 0 1;
        grid-columns: 1fr;
    }

    VerdictBar.-rows > #verdict-buttons > Button {
        width: 1fr;
        min-width: 0;
        margin: 0;
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
            # Coming back to the comment adds to it: nothing selected for the next key to replace.
            yield Input(
                placeholder="optional; Enter or Esc returns to the keys",
                id="comment",
                compact=True,
                select_on_focus=False,
            )

    def on_resize(self, _event: events.Resize) -> None:
        self._arrange()

    def _arrange(self) -> None:
        """One row when every shown button fits its natural width, else the fewest rows
        of equal columns in which every label fits whole."""
        buttons = [button for button in self.query(Button) if button.display]
        width = self.content_region.width
        if not buttons or not width:
            return
        # a label, one cell of line-pad either side, the margin after it
        labels = [cell_len(str(button.label)) + 2 for button in buttons]
        one_row = sum(label + BUTTON_GAP for label in labels)
        self.set_class(one_row > width, "-rows")
        columns = ceil(len(buttons) / 2)
        while columns > 1 and (width - (columns - 1) * GRID_GAP) // columns < max(labels):
            columns -= 1
        self.query_one("#verdict-buttons").styles.grid_size_columns = columns

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        button_id = event.button.id or ""
        if button_id.startswith("verdict-"):
            self.post_message(self.VerdictChosen(Verdict(button_id.removeprefix("verdict-"))))

    def allow_no_order(self, allowed: bool) -> None:
        """No clear order applies to ordering items only."""
        button = self.query_one(f"#verdict-{Verdict.NO_ORDER.value}", Button)
        if button.display != allowed:
            button.display = allowed
            self._arrange()

    @property
    def comment(self) -> str:
        return self.query_one("#comment", Input).value

    def edit_comment(self) -> None:
        """Into the comment, the cursor at its end."""
        comment = self.query_one("#comment", Input)
        comment.focus()
        comment.cursor_position = len(comment.value)

    def set_comment(self, text: str = "") -> None:
        """The comment box holds ``text`` (empty: a new item)."""
        self.query_one("#comment", Input).value = text

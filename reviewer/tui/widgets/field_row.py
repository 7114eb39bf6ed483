"""A label and the field it names, on one line (the edit form, the queue filter)."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.widget import Widget
from textual.widgets import Label


class FieldRow(Horizontal):
    """``Key   [D, A, B, C        ]``: a bold label of fixed width, the field takes the rest."""

    DEFAULT_CSS = """
    FieldRow {
        height: auto;
        margin-top: 1;
    }

    FieldRow > .field-label {
        width: 12;
        text-style: bold;
    }

    FieldRow > Input, FieldRow > Select {
        width: 1fr;
    }
    """

    def __init__(self, caption: str, field: Widget) -> None:
        super().__init__()
        self.caption = Label(caption, classes="field-label")
        self.field = field

    def compose(self) -> ComposeResult:
        yield self.caption
        yield self.field

"""Choosing what to review: jump to an item by id, or filter the queue."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.widgets import Button, Select, Static

from db.vocabulary import FlagName, ItemKind, ItemStatus
from reviewer.queue import QueueFilter
from reviewer.tui.literal import literal
from reviewer.tui.screens.prompt import PromptScreen
from reviewer.tui.widgets.dialog import Dialog, DialogScreen
from reviewer.tui.widgets.field_row import FieldRow
from reviewer.tui.widgets.titles import PanelTitle


def _item_id(text: str) -> str:
    if not text.strip():
        raise ValueError("type an item id, e.g. econ-test:17")
    return text.strip()


def jump_screen() -> PromptScreen:
    """Asks for an item id; the review screen opens it (judged or not)."""
    return PromptScreen(
        "Jump to item",
        "Type the item id and press Enter (Esc cancels).",
        _item_id,
    )


def _chosen(select: Select[str]) -> tuple[str, ...]:
    value = select.value
    return () if value is Select.NULL else (str(value),)


class FilterScreen(DialogScreen[QueueFilter | None]):
    """Pick one kind, source, status and flag (or any); Ctrl+S applies, Esc cancels."""

    BINDINGS = [
        Binding("ctrl+s", "apply", "Apply filters"),
        Binding("escape", "cancel", "Cancel"),
    ]

    def __init__(self, current: QueueFilter, sources: list[str]) -> None:
        super().__init__()
        self.current = current
        self.sources = sources

    def compose(self) -> ComposeResult:
        current = self.current
        with Dialog():
            yield PanelTitle("Filter the queue")
            yield Static(
                Text("Only items that still need your judgment are served. Ctrl+S applies."),
                classes="dialog-help",
            )
            yield FieldRow(
                "Kind   ",
                Select(
                    [(kind.value, kind.value) for kind in ItemKind],
                    prompt="any kind",
                    value=current.kinds[0] if current.kinds else Select.NULL,
                    id="filter-kind",
                ),
            )
            yield FieldRow(
                "Source ",
                Select(
                    [(literal(source), source) for source in self.sources],
                    prompt="any source",
                    value=current.sources[0]
                    if current.sources[:1] and current.sources[0] in self.sources
                    else Select.NULL,
                    id="filter-source",
                ),
            )
            yield FieldRow(
                "Status ",
                Select(
                    [
                        (status.value, status.value)
                        for status in (ItemStatus.PENDING, ItemStatus.IN_REVIEW)
                    ],
                    prompt="pending or in review",
                    value=current.statuses[0] if current.statuses else Select.NULL,
                    id="filter-status",
                ),
            )
            yield FieldRow(
                "Flag   ",
                Select(
                    [(flag.value, flag.value) for flag in FlagName],
                    prompt="any item, flagged or not",
                    value=current.flags[0] if current.flags else Select.NULL,
                    id="filter-flag",
                ),
            )
            with Horizontal(classes="dialog-buttons"):
                yield Button("Apply (Ctrl+S)", id="filter-apply", variant="primary", compact=True)
                yield Button("Cancel (Esc)", id="filter-cancel", compact=True)

    def on_mount(self) -> None:
        self.query_one("#filter-kind", Select).focus()

    def action_apply(self) -> None:
        self.dismiss(
            QueueFilter(
                kinds=_chosen(self.query_one("#filter-kind", Select)),
                sources=_chosen(self.query_one("#filter-source", Select)),
                statuses=_chosen(self.query_one("#filter-status", Select)),
                flags=_chosen(self.query_one("#filter-flag", Select)),
            )
        )

    def action_cancel(self) -> None:
        self.dismiss(None)

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        if event.button.id == "filter-apply":
            self.action_apply()
        elif event.button.id == "filter-cancel":
            self.action_cancel()

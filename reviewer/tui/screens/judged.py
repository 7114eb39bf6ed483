"""Browse the items this annotator has judged; Enter opens one."""

from __future__ import annotations

from dataclasses import dataclass

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.message import Message
from textual.widgets import DataTable

from db.answers import format_answer
from reviewer.queue import OwnJudgment, ReviewQueue
from reviewer.tui.literal import literal
from reviewer.tui.widgets.dialog import Dialog, DialogScreen
from reviewer.tui.widgets.titles import PanelTitle


class JudgedScreen(DialogScreen[str | None]):
    """A table of the annotator's judgments, newest first; dismisses with an item id."""

    BINDINGS = [Binding("escape,q", "close", "Close")]

    @dataclass
    class Loaded(Message):
        judgments: list[OwnJudgment]

    def __init__(self, queue: ReviewQueue) -> None:
        super().__init__()
        self.queue = queue
        self.row_items: dict[str, str] = {}

    def compose(self) -> ComposeResult:
        with Dialog(classes="wide"):
            yield PanelTitle("Items you have judged (Enter opens, Esc closes)")
            yield DataTable(id="judged-table", cursor_type="row", zebra_stripes=True)

    def on_mount(self) -> None:
        table = self.query_one("#judged-table", DataTable)
        table.add_columns("item", "rev", "verdict", "your answer", "seconds", "when", "comment")
        self.load()

    @work(thread=True, exclusive=True, exit_on_error=False)
    def load(self) -> None:
        self.post_message(self.Loaded(self.queue.judged_items()))

    def on_judged_screen_loaded(self, message: Loaded) -> None:
        table = self.query_one("#judged-table", DataTable)
        for judgment in message.judgments:
            table.add_row(
                literal(judgment.item_id),
                str(judgment.revision),
                literal(judgment.verdict),
                literal(format_answer(judgment.kind, judgment.blind_answer)),
                f"{judgment.seconds:.0f}",
                judgment.created_at.strftime("%Y-%m-%d %H:%M"),
                literal(judgment.comment[:40]),
                key=str(judgment.judgment_id),  # an item judged in two revisions has two rows
            )
            self.row_items[str(judgment.judgment_id)] = judgment.item_id
        if not message.judgments:
            self.query_one(PanelTitle).update(
                Text("You have not judged any item yet (Esc closes).")
            )
        table.focus()

    @on(DataTable.RowSelected, "#judged-table")
    def open_item(self, event: DataTable.RowSelected) -> None:
        self.dismiss(self.row_items.get(str(event.row_key.value)))

    def action_close(self) -> None:
        self.dismiss(None)

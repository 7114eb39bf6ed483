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
from db.words import time_taken
from reviewer.queue import OwnJudgment, ReviewQueue
from reviewer.tui.literal import line_broken, literal
from reviewer.tui.widgets.dialog import Dialog, DialogScreen
from reviewer.tui.widgets.reveal import verdict_details
from reviewer.tui.widgets.table_fit import fill_fitted
from reviewer.tui.widgets.titles import PanelTitle

JUDGED_COLUMNS = ("item", "rev", "verdict", "your answer", "time", "when", "comment")
# The comment, free text, gives up width first; ids break only after an underscore;
# "when" is never wrapped (at 80 columns it went onto two lines).
_WRAPPED = tuple(map(JUDGED_COLUMNS.index, ("item", "verdict", "your answer", "comment")))


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
        self.load()

    @work(thread=True, exclusive=True, exit_on_error=False)
    def load(self) -> None:
        self.post_message(self.Loaded(self.queue.judged_items()))

    def on_judged_screen_loaded(self, message: Loaded) -> None:
        table = self.query_one("#judged-table", DataTable)
        when, year = _when(message.judgments)
        rows: list[tuple[str | None, tuple[Text | str, ...]]] = []
        for judgment in message.judgments:
            # What the verdict proposed under it, and the whole comment: both wrap (at 80
            # columns the comment, cut at 40 characters, was off the screen).
            verdict = Text.assemble(
                literal(judgment.verdict),
                *(
                    literal(f"\n{label}: {value}")
                    for label, value in verdict_details(judgment.kind, judgment)
                ),
            )
            cells = (
                literal(judgment.item_id),
                str(judgment.revision),
                line_broken(verdict),
                literal(format_answer(judgment.kind, judgment.blind_answer)),
                time_taken(judgment.seconds),
                judgment.created_at.strftime(when),
                literal(judgment.comment),
            )
            rows.append((str(judgment.judgment_id), cells))  # two revisions judged: two rows
            self.row_items[str(judgment.judgment_id)] = judgment.item_id
        fill_fitted(table, JUDGED_COLUMNS, rows, wrap=_WRAPPED)
        title = f"Items you have judged{year} (Enter opens, Esc closes)"
        if not message.judgments:
            title = "You have not judged any item yet (Esc closes)."
        self.query_one(PanelTitle).update(Text(title))
        table.focus()

    @on(DataTable.RowSelected, "#judged-table")
    def open_item(self, event: DataTable.RowSelected) -> None:
        self.dismiss(self.row_items.get(str(event.row_key.value)))

    def action_close(self) -> None:
        self.dismiss(None)


def _when(judgments: list[OwnJudgment]) -> tuple[str, str]:
    """The format of "when", and the year the title says.  Judgments of one year say it
    once, in the title, and "when" is "12-07 06:21": at 80 columns the whole date and
    time went onto two lines.  Over several years each date is whole.  Either way "when"
    is one line: the other columns wrap for it."""
    years = {judgment.created_at.year for judgment in judgments}
    if len(years) != 1:
        return "%Y-%m-%d %H:%M", ""
    return "%m-%d %H:%M", f" in {years.pop()}"

"""Revision history of an item: pick a revision to see how it differs from the one before."""

from __future__ import annotations

from dataclasses import dataclass

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.message import Message
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from db.engine import Database
from reviewer.revisions import RevisionSummary, diff_revisions, revision_history
from reviewer.tui.literal import literal
from reviewer.tui.widgets.dialog import Dialog, DialogScreen
from reviewer.tui.widgets.diff_view import DiffView
from reviewer.tui.widgets.titles import PanelTitle


def revision_label(revision: RevisionSummary) -> Text:
    label = Text(f"rev {revision.number}  ", style="bold")
    if revision.created_at is not None:
        label.append(revision.created_at.strftime("%Y-%m-%d %H:%M") + "  ")
    label.append_text(literal(revision.author))
    label.append("\n  ")
    label.append_text(literal(revision.change_note or "—", "dim"))
    return label


class RevisionsScreen(DialogScreen[None]):
    """Lists an item's revisions and shows the diff of the highlighted one."""

    BINDINGS = [Binding("escape,q", "close", "Close")]

    @dataclass
    class Loaded(Message):
        revisions: list[RevisionSummary]

    def __init__(self, db: Database, item_id: str) -> None:
        super().__init__()
        self.db = db
        self.item_id = item_id
        self.revisions: list[RevisionSummary] = []

    def compose(self) -> ComposeResult:
        title = Text("Revisions of ")
        title.append_text(literal(self.item_id, "bold"))
        with Dialog(classes="wide"):
            yield PanelTitle(title)
            with Horizontal(id="revisions-body"):
                yield OptionList(id="revision-list")
                with VerticalScroll(id="revision-diff-scroll"):
                    yield DiffView(id="revision-diff")

    def on_mount(self) -> None:
        self.load()

    @work(thread=True, exclusive=True, exit_on_error=False)
    def load(self) -> None:
        self.post_message(self.Loaded(revision_history(self.db, self.item_id)))

    def on_revisions_screen_loaded(self, message: Loaded) -> None:
        self.revisions = message.revisions
        options = self.query_one("#revision-list", OptionList)
        options.clear_options()
        options.add_options([Option(revision_label(r)) for r in reversed(self.revisions)])
        if self.revisions:
            options.highlighted = 0
            options.focus()

    @on(OptionList.OptionHighlighted, "#revision-list")
    def show_diff(self, event: OptionList.OptionHighlighted) -> None:
        index = len(self.revisions) - 1 - event.option_index
        view = self.query_one("#revision-diff", DiffView)
        if index <= 0:
            view.update(Text("The first revision: nothing to compare with.", style="dim"))
            return
        view.show(diff_revisions(self.revisions[index - 1], self.revisions[index]))

    def action_close(self) -> None:
        self.dismiss(None)

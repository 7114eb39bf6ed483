"""What the edit form asks before it stores anything: the diff of the new revision with
the note and comment that go with it, and, when a comment seems to have gone into the
question or key, whether it belongs there.

The diff has a window of its own, and long lines are cut down to what changed
(``reviewer.revisions.compact_diff``), so its changed lines are on screen at every size
(inside the form, below the fields, it could show only its ``---``/``+++`` lines).
"""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.widgets import Button, Static

from reviewer.revisions import DiffLine, compact_diff
from reviewer.tui.literal import line_broken, literal
from reviewer.tui.widgets.dialog import Dialog, DialogScreen
from reviewer.tui.widgets.diff_view import DiffView
from reviewer.tui.widgets.titles import PanelTitle


class ChangesScreen(DialogScreen[bool]):
    """The diff of an edit, and under it the note and the comment typed with it, as typed
    (all that storing it writes).  With ``confirm`` it asks to store it (y or Enter stores,
    n or Esc goes back to the form); without, it only shows it (Esc, q or Ctrl+R closes)."""

    BINDINGS = [
        Binding("y", "answer(True)", "Store it", show=False),
        Binding("n,escape,q,ctrl+r", "answer(False)", "Back to the form", show=False),
        # The buttons hold the focus; these keys scroll a diff longer than the window.
        Binding("down", "scroll('down')", "Scroll down", show=False),
        Binding("up", "scroll('up')", "Scroll up", show=False),
        Binding("pagedown,space", "scroll('page_down')", "Page down", show=False),
        Binding("pageup", "scroll('page_up')", "Page up", show=False),
    ]

    def __init__(
        self,
        title: str,
        lines: list[DiffLine],
        comment: str = "",
        *,
        note: str = "",
        confirm: bool = False,
    ) -> None:
        super().__init__()
        self.title_text = title
        self.lines = lines
        self.comment = comment
        self.note = note
        self.confirm = confirm

    def compose(self) -> ComposeResult:
        with Dialog(classes="wide"):
            yield PanelTitle(self.title_text)
            with VerticalScroll(id="changes-scroll"):
                yield DiffView(id="changes-diff")
            said = [
                (label, text)
                for label, text in (
                    ("Your note", self.note),
                    ("Your comment for the lead", self.comment),
                )
                if text
            ]
            if said:
                lines = (
                    Text.assemble((f"{label}: ", "bold"), literal(text)) for label, text in said
                )
                # wrapped as the text is elsewhere (never a line starting with "，")
                yield Static(line_broken(Text("\n").join(lines)), id="changes-said")
            with Horizontal(classes="dialog-buttons"):
                if self.confirm:
                    yield Button("Store it (y, Enter)", id="changes-yes", variant="primary")
                    yield Button("Back to the form (n, Esc)", id="changes-no")
                else:
                    yield Button("Back to the form (Esc)", id="changes-no", variant="primary")

    def on_mount(self) -> None:
        # Long lines cut down to what changed: the changes fit the screen at any size.
        self.query_one("#changes-diff", DiffView).show(compact_diff(self.lines))
        self.query_one("#changes-yes" if self.confirm else "#changes-no", Button).focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.dismiss(event.button.id == "changes-yes")

    def action_answer(self, store: bool) -> None:
        self.dismiss(store and self.confirm)

    def action_scroll(self, how: str) -> None:
        getattr(self.query_one("#changes-scroll", VerticalScroll), f"scroll_{how}")()


class CommentInTextScreen(DialogScreen[str | None]):
    """Asks, once more, about text in the question or key that reads like a comment:
    ``"keep"`` (y) stores it there, ``"move"`` (m) puts it in the comment, None (n, Esc)
    goes back to the form."""

    BINDINGS = [
        Binding("y", "answer('keep')", "Keep it there", show=False),
        Binding("m", "answer('move')", "Move it to the comment", show=False),
        Binding("n,escape", "answer(None)", "Back to the form", show=False),
    ]

    def __init__(self, field: str, text: str, is_the_comment: bool) -> None:
        super().__init__()
        self.field = field
        self.text = text
        self.is_the_comment = is_the_comment

    def compose(self) -> ComposeResult:
        why = (
            "holds the text of your comment"
            if self.is_the_comment
            else "ends with text you added, which may be a comment for the lead"
        )
        question = Text(f"The {self.field} {why}:\n\n  ")
        question.append_text(literal(self.text, "bold"))
        question.append(
            f"\n\nEvery annotator and every model will read it as part of the {self.field}. "
            f"Store it in the {self.field}?"
        )
        with Dialog():
            yield PanelTitle(f"Store this in the {self.field}?")
            yield Static(question, classes="dialog-help")
            with Horizontal(classes="dialog-buttons"):
                yield Button("Move to the comment (m)", id="move", variant="primary")
                yield Button(f"Keep in the {self.field} (y)", id="keep")
                yield Button("Back (n, Esc)", id="back")

    def on_mount(self) -> None:
        self.query_one("#move", Button).focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.dismiss(event.button.id if event.button.id in ("keep", "move") else None)

    def action_answer(self, choice: str | None) -> None:
        self.dismiss(choice)

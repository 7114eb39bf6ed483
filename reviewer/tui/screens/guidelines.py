"""The guidelines (``g``): the leads' Markdown, opened at the section for the item's kind.

The text is rendered with Textual's ``Markdown`` widget, but it is still text from
the database: control characters are made visible first, and links are never
followed (``open_links=False``): a click only shows where the link points.
Without stored guidelines the screen says how a lead sets them and lists the
verdicts as the app defines them.  A new annotator sees this screen before their
first item.
"""

from __future__ import annotations

from dataclasses import dataclass

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.message import Message
from textual.widgets import Markdown, Static

from db.engine import Database
from db.guidelines import GuidelinesVersion, current_guidelines, kind_section
from db.vocabulary import ItemKind
from reviewer.tui.literal import notify_literally, visible_text
from reviewer.tui.screens.review_keys import VERDICT_HELP
from reviewer.tui.widgets.dialog import Dialog, DialogScreen
from reviewer.tui.widgets.item_view import KIND_NAMES
from reviewer.tui.widgets.titles import PanelTitle
from reviewer.tui.widgets.verdict_bar import VERDICT_KEYS

WELCOME = (
    "Welcome. Please read the guidelines before your first item; g opens them again at any time. "
)


def builtin_verdicts() -> str:
    """The verdicts as the app defines them, as Markdown (when no guidelines are stored)."""
    lines = ["## Verdicts", ""]
    for verdict, text in VERDICT_HELP.items():
        key, label = VERDICT_KEYS[verdict]
        lines.append(f"- **{label.removesuffix(' → edit')}** (`{key}`): {text}")
    return "\n".join(lines)


class GuidelinesScreen(DialogScreen[None]):
    """Shows the newest guidelines; Esc, q or g closes."""

    DEFAULT_CSS = """
    GuidelinesScreen #guidelines-intro {
        color: $text-muted;
        height: auto;
    }
    GuidelinesScreen #guidelines-scroll {
        height: 1fr;
    }
    """

    BINDINGS = [Binding("escape,q,g", "close", "Close the guidelines")]

    @dataclass
    class Loaded(Message):
        guidelines: GuidelinesVersion | None

    def __init__(self, db: Database, kind: ItemKind | None, *, first: bool = False) -> None:
        super().__init__()
        self.db = db
        self.kind = kind
        self.first = first
        self.section: str | None = None
        """The heading the screen opened at (None: the top)."""

    def compose(self) -> ComposeResult:
        with Dialog(classes="wide"):
            yield PanelTitle("Guidelines", id="guidelines-title")
            yield Static(id="guidelines-intro")
            with VerticalScroll(id="guidelines-scroll"):
                yield Markdown(id="guidelines-text", open_links=False)

    def on_mount(self) -> None:
        self.load()

    @work(thread=True, exclusive=True, exit_on_error=False)
    def load(self) -> None:
        with self.db.session() as session:
            self.post_message(self.Loaded(current_guidelines(session)))

    async def on_guidelines_screen_loaded(self, message: Loaded) -> None:
        found = message.guidelines
        title = self.query_one("#guidelines-title", PanelTitle)
        intro = self.query_one("#guidelines-intro", Static)
        markdown = self.query_one("#guidelines-text", Markdown)
        if found is None:
            title.update("Guidelines: none yet")
            intro.update(
                Text(
                    "No guidelines are stored yet; a lead sets them with `vetbench guidelines "
                    "set FILE.md`. Until then, the verdicts mean this. Esc closes."
                )
            )
            await markdown.update(builtin_verdicts())
            return
        title.update(
            Text(
                f"Guidelines, version {found.version} (set by {visible_text(found.author)} on "
                f"{found.created_at:%Y-%m-%d})"
            )
        )
        await markdown.update(visible_text(found.text))
        where = self._go_to_kind(markdown)
        intro.update(Text((WELCOME if self.first else "") + where + " Esc closes."))

    def _go_to_kind(self, markdown: Markdown) -> str:
        """Scroll to the section for the item's kind; say where the screen opened."""
        if self.kind is None:
            return "Opened at the top."
        contents = markdown.table_of_contents
        index = kind_section([title for _level, title, _id in contents], self.kind)
        name = KIND_NAMES[self.kind]
        if index is None:
            return f"No section names {name} items; opened at the top."
        _level, self.section, block_id = contents[index]
        if block_id:
            block = markdown.query_one(f"#{block_id}")
            self.call_after_refresh(
                lambda: self.query_one("#guidelines-scroll", VerticalScroll).scroll_to_widget(
                    block, top=True, animate=False
                )
            )
        return f"Opened at “{self.section}”, for this {name} item."

    @on(Markdown.LinkClicked)
    def _link_clicked(self, event: Markdown.LinkClicked) -> None:
        event.stop()
        notify_literally(
            self,
            f"Links in the guidelines are not opened from here; it points to {event.href}",
            title="Link",
            timeout=8,
        )

    def action_close(self) -> None:
        self.dismiss(None)

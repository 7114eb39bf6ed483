"""The guidelines (``g``): the leads' Markdown, opened at the section for the item's kind.

The text is rendered with Textual's ``Markdown`` widget, but it is still text from
the database: control characters are made visible first, and links are never
followed (``open_links=False``): a click only shows where the link points.
Without stored guidelines the screen says how a lead sets them and lists the
verdicts as the app defines them.  A new annotator sees this screen before their
first item.

Long guidelines are shown page by page (``n``/``p``): Textual builds a widget per
block, and 200,000 characters at once kept the app busy for most of a minute.  The
text is split in a worker, between top-level blocks, and each page is rendered by a
worker of its own, so Esc always closes the screen at once.
"""

from __future__ import annotations

from dataclasses import dataclass

from markdown_it import MarkdownIt
from markdown_it.token import Token
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


PAGE_CHARS = 8_000  # about a minute's reading; Textual renders it in well under a second


@dataclass(frozen=True)
class GuidelinesPage:
    text: str
    headings: tuple[str, ...]  # its headings' plain text, in order


def paginate(text: str, limit: int = PAGE_CHARS) -> list[GuidelinesPage]:
    """``text`` cut into pages of at most ``limit`` characters, between top-level Markdown
    blocks (a list, a table or a code block stays whole when it fits in a page), before a
    heading where the page is half full.  Only a block longer than a page is cut inside,
    at a line end (or, for one overlong line, anywhere)."""
    lines = text.splitlines(keepends=True)
    tokens = MarkdownIt("gfm-like").parse(text)
    starts = sorted(
        {0, *(t.map[0] for t in tokens if t.level == 0 and t.map and t.nesting >= 0)} | {len(lines)}
    )
    heading_at = {
        token.map[0]: _plain(tokens[index + 1].children or [])
        for index, token in enumerate(tokens)
        if token.type == "heading_open" and token.level == 0 and token.map
    }
    if len(text) <= limit:
        return [GuidelinesPage(text, tuple(heading_at.values()))]
    pages: list[GuidelinesPage] = []
    current: list[str] = []
    headings: list[str] = []
    size = 0

    def close_page() -> None:
        nonlocal size
        if current:
            pages.append(GuidelinesPage("".join(current), tuple(headings)))
        current.clear()
        headings.clear()
        size = 0

    for start, end in zip(starts, starts[1:], strict=False):
        block = "".join(lines[start:end])
        if size + len(block) > limit or (start in heading_at and size >= limit // 2):
            close_page()
        if start in heading_at:
            headings.append(heading_at[start])
        if len(block) <= limit:
            current.append(block)
            size += len(block)
            continue
        for line in lines[start:end]:  # a block longer than a page
            for piece in (line[i : i + limit] for i in range(0, len(line), limit)):
                if size + len(piece) > limit:
                    close_page()
                current.append(piece)
                size += len(piece)
    close_page()
    return pages or [GuidelinesPage(text, ())]


def _plain(children: list[Token]) -> str:
    """A heading's text as the Markdown widget's table of contents gives it."""
    return "".join(
        " " if child.type == "softbreak" else child.content for child in children
    ).strip()


def builtin_verdicts() -> str:
    """The verdicts as the app defines them, as Markdown (when no guidelines are stored)."""
    lines = ["## Verdicts", ""]
    for verdict, text in VERDICT_HELP.items():
        key, label = VERDICT_KEYS[verdict]
        lines.append(f"- **{label.removesuffix(' → edit')}** (`{key}`): {text}")
    return "\n".join(lines)


class GuidelinesScreen(DialogScreen[None]):
    """Shows the newest guidelines; Esc, q or g closes."""

    BINDINGS = [
        Binding("escape,q,g", "close", "Close the guidelines"),
        Binding("n", "page(1)", "Next page"),
        Binding("p", "page(-1)", "Previous page"),
        # As in review, where Space scrolls the item: here it did nothing (PgDn did).
        Binding("space", "scroll_text(1)", "Scroll", key_display="Space"),
        Binding("shift+space", "scroll_text(-1)", "Back a page", show=False),
    ]

    @dataclass
    class Loaded(Message):
        guidelines: GuidelinesVersion | None
        pages: list[GuidelinesPage]

    def __init__(self, db: Database, kind: ItemKind | None, *, first: bool = False) -> None:
        super().__init__()
        self.db = db
        self.kind = kind
        self.first = first
        self.section: str | None = None
        """The heading the screen opened at (None: the top)."""
        self.pages: list[GuidelinesPage] = []
        self.page = 0
        """The page shown (from 0)."""

    def compose(self) -> ComposeResult:
        with Dialog(classes="wide"):
            yield PanelTitle("Guidelines", id="guidelines-title")
            yield Static(id="guidelines-intro")
            with VerticalScroll(id="guidelines-scroll"):
                yield Markdown(id="guidelines-text", open_links=False)

    def on_mount(self) -> None:
        self.load()

    def action_scroll_text(self, pages: int) -> None:
        """The guidelines a page on (``pages`` 1) or back (-1)."""
        scroll = self.query_one("#guidelines-scroll", VerticalScroll)
        (scroll.scroll_page_down if pages > 0 else scroll.scroll_page_up)(animate=False)

    @work(thread=True, exclusive=True, exit_on_error=False)
    def load(self) -> None:
        with self.db.session() as session:
            found = current_guidelines(session)
        pages = paginate(visible_text(found.text)) if found is not None else []
        self.post_message(self.Loaded(found, pages))

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
        self.pages = message.pages
        title.update(
            Text(
                f"Guidelines, version {found.version} (set by {visible_text(found.author)} on "
                f"{found.created_at:%Y-%m-%d})"
            )
        )
        self._show(self._kind_page(), find_kind=True)

    def _kind_page(self) -> int:
        """The page that holds the section for the item's kind (0 when none does)."""
        if self.kind is None:
            return 0
        owners = [number for number, page in enumerate(self.pages) for _ in page.headings]
        headings = [heading for page in self.pages for heading in page.headings]
        index = kind_section(headings, self.kind)
        return 0 if index is None else owners[index]

    def _show(self, page: int, *, find_kind: bool = False) -> None:
        """Render page ``page`` in a worker: the screen keeps answering keys meanwhile."""
        self.page = page
        self.run_worker(self._render_page(find_kind), group="guidelines-page", exclusive=True)

    async def _render_page(self, find_kind: bool) -> None:
        markdown = self.query_one("#guidelines-text", Markdown)
        await markdown.update(self.pages[self.page].text)
        self.query_one("#guidelines-scroll", VerticalScroll).scroll_home(animate=False)
        parts = [self._go_to_kind(markdown)] if find_kind else []
        if len(self.pages) > 1:
            parts.append(f"Page {self.page + 1} of {len(self.pages)}: n next, p previous.")
        intro = " ".join([*parts, "Esc closes."])
        self.query_one("#guidelines-intro", Static).update(
            Text((WELCOME if self.first else "") + intro)
        )

    def action_page(self, step: int) -> None:
        target = self.page + step
        if not self.pages or not 0 <= target < len(self.pages):
            self.app.bell()
            return
        self._show(target)

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

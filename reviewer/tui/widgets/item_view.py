"""The item as the annotator reads it: scenario or question, then the events or choices.

Everything here is user data and goes through :func:`reviewer.tui.literal.literal`.
Item text is shown in its display form (entities decoded, LaTeX as Unicode), or as
stored while :attr:`ItemView.raw` is set (the review screen's ``v``).  The view
scrolls for long texts; each choice is its own row so a click picks it.  Before the
reveal it never shows the key, the explanation, anyone's judgment or the item's flags (a
suspected duplicate included): they come with the reveal, which also marks here which
choices are in the key (:meth:`ItemView.mark_against_key`).
"""

from __future__ import annotations

from dataclasses import dataclass

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Horizontal, VerticalScroll
from textual.events import Click
from textual.message import Message
from textual.widgets import Static

from db.answers import LETTERS, MAX_CHOICES, truefalse_word
from db.formats.cflue import EXAM_NAME
from db.items import ItemSnapshot
from db.vocabulary import ItemKind
from reviewer.tui.literal import literal, literal_item
from reviewer.tui.widgets.titles import SectionTitle

RAW_TITLE = "stored text (raw) · v shows it as read"
"""The border title of a panel while it shows item text as stored."""
MORE_BELOW = "▼ more below · Space scrolls "
"""The last line of a panel whose text runs on below it (the review screen's Space)."""

CHOSEN_MARK = Text("✓", style="bold")
"""Beside a choice in the blind answer."""
IN_KEY_MARK = Text("✓", style="bold green")
"""After the reveal, beside each choice in the key."""
NOT_IN_KEY_MARK = Text("✗", style="bold red")
"""After the reveal, beside each chosen choice that is not in the key."""

KIND_NAMES = {
    ItemKind.ORDERING: "ordering",
    ItemKind.SINGLE: "single answer",
    ItemKind.MULTI: "multiple answers",
    ItemKind.TRUEFALSE: "true / false",
}


def marks_the_key(kind: ItemKind) -> bool:
    """Whether, once revealed, the item view marks the key on the item itself: ✓ on each
    choice in the key.  An order's key is not marked: its events keep the answer's places."""
    return kind is not ItemKind.ORDERING


def item_heading(item: ItemSnapshot, width: int | None = None) -> Text:
    """``econ:17 · ordering · econ (line 18) · revision 2``, and a CFLUE item's exam name
    (名称): ``cflue:3 · single answer · 银行从业资格 · cflue (record 3) · revision 1``
    (ids, names and sources are user data).  Wider than ``width``, it takes a compact
    form: narrower separators, and the source left out where the id already names it
    (``cflue:3 · single answer · 银行从业资格 · record 3 · revision 1``), so that the
    revision is not cut off at 80 columns."""
    full = _heading(item, "  ·  ", with_source=True)
    if width is None or full.cell_len <= width:
        return full
    return _heading(item, " · ", with_source=not item.id.startswith(f"{item.source}:"))


def _heading(item: ItemSnapshot, between: str, *, with_source: bool) -> Text:
    heading = Text()
    heading.append_text(literal(item.id, "bold"))
    heading.append(f"{between}{KIND_NAMES[item.kind]}{between}")
    exam = item.meta.get(EXAM_NAME)
    if isinstance(exam, str) and exam.strip():
        heading.append_text(literal(exam, "bold"))
        heading.append(between)
    if with_source:
        heading.append_text(literal(item.source))
        if item.source_ref:
            heading.append(" (")
            heading.append_text(literal(item.source_ref))
            heading.append(")")
    elif item.source_ref:
        heading.append_text(literal(item.source_ref))
    heading.append(f"{between}revision {item.revision}")
    return heading


class ItemHeading(Static):
    """The review screen's heading line: the item's (:func:`item_heading`, in the form
    its width holds, again on each resize) or a line of its own."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._item: ItemSnapshot | None = None

    def show(self, item: ItemSnapshot | None, text: Text | None = None) -> None:
        self._item = item
        if item is None:
            self.update(text or Text())
        else:
            self.update(item_heading(item, self.content_size.width or None))

    def on_resize(self) -> None:
        if self._item is not None:
            self.update(item_heading(self._item, self.content_size.width or None))


def _letter(label: str) -> Text:
    """A choice's letter in its reversed box (`` A ``); the box's style is a span, not the
    text's own, so that what is appended beside it keeps its own style."""
    return Text().append(f" {label} ", style="bold reverse")


class ChoiceRow(Horizontal):
    """One event or choice: its letter, then its text with a hanging indent; a click picks it."""

    DEFAULT_CSS = """
    ChoiceRow {
        height: auto;
        padding: 0 0 0 1;
        margin-top: 1;
    }

    ChoiceRow:hover {
        background: $boost;
    }

    ChoiceRow.-chosen {
        background: $accent 25%;
        text-style: bold;
    }

    ChoiceRow > .choice-letter {
        width: 5;
    }

    ChoiceRow > .choice-text {
        width: 1fr;
    }
    """

    @dataclass
    class Picked(Message):
        label: str

    def __init__(self, label: str, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.label = label
        self._shown: tuple[str, str] | None = None  # the letter cell's addition, and style

    def compose(self) -> ComposeResult:
        yield Static(_letter(self.label), classes="choice-letter")
        yield Static(classes="choice-text")

    def mark(self, shown: Text | None) -> None:
        """The letter cell: plain, or followed by ``shown`` (a place in the order, a mark)."""
        # Text's == compares the characters only, not the style: a ✓ turning green counts.
        seen = None if shown is None else (shown.plain, str(shown.style))
        if seen == self._shown:
            return
        self._shown = seen
        letter = _letter(self.label)
        if shown is not None:
            letter.append_text(shown)  # beside the letter, not in its reversed box
        self.query_one(".choice-letter", Static).update(letter)

    def show(self, text: Text) -> None:
        self.query_one(".choice-text", Static).update(text)

    def on_click(self, event: Click) -> None:
        event.stop()
        self.post_message(self.Picked(self.label))


class MoreBelow(Static):
    """A panel's last line while its text runs on below it, so that a cut is never silent
    (at 80×24 a five-choice item showed A–C, and nothing said D and E were there).

    It lies over that line, in a layer of its own, so the text keeps its room and its
    scrolling; scrolled to the end, it goes and the line it covered shows."""

    DEFAULT_CSS = """
    MoreBelow {
        layer: more-below;
        dock: bottom;
        width: 100%;
        height: 1;
        display: none;
        text-align: right;
        text-style: bold;
        color: $text-accent;
        background: $panel;
    }
    """


class ItemTextPanel(VerticalScroll):
    """A scrolling panel of one item's text, shown as stored (:attr:`raw`) or in its
    display form; a subclass composes its widgets (``compose_text``) and says how they
    show the item (``_show_text``).  Its last line says when more is below."""

    DEFAULT_CSS = """
    ItemTextPanel {
        layers: default more-below;
    }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.raw = False
        """Whether item text is shown exactly as stored instead of its display form."""
        self._item: ItemSnapshot | None = None  # the item shown, None while there is none
        self._more_below = MoreBelow(MORE_BELOW)

    def compose(self) -> ComposeResult:
        yield from self.compose_text()
        yield self._more_below

    def compose_text(self) -> ComposeResult:
        raise NotImplementedError

    def on_resize(self) -> None:
        self._mark_more_below()  # the text or the room for it changed

    def watch_scroll_y(self, old_value: float, new_value: float) -> None:
        super().watch_scroll_y(old_value, new_value)
        self._mark_more_below()

    def _mark_more_below(self) -> None:
        self._more_below.display = round(self.scroll_y) < self.max_scroll_y

    def show_raw(self, raw: bool) -> None:
        """Show the item's text as stored (``raw``) or in its display form, in place."""
        self.raw = raw
        if self._item is not None:
            self._show_text(self._item)

    def _show_text(self, item: ItemSnapshot) -> None:
        raise NotImplementedError


class ItemView(ItemTextPanel):
    """Scrollable view of one item's text (no explanation; the key only as marks on the
    choices, once revealed).

    The rows for up to eight events or choices are built once and reused, so moving
    to the next item only updates text (no mounting, which would restyle the screen).
    """

    DEFAULT_CSS = """
    ItemView {
        padding: 0 1;
        border: round $primary-darken-2;
        border-title-color: $text-muted;
    }

    ItemView:focus {
        border: round $primary;
    }
    """

    can_focus = True

    def compose_text(self) -> ComposeResult:
        yield SectionTitle(id="prompt-title")
        yield Static(id="item-prompt")
        yield SectionTitle(id="choices-title")
        for label in LETTERS[:MAX_CHOICES]:
            yield ChoiceRow(label, id=f"choice-{label}")

    _ordering = False

    def show_item(self, item: ItemSnapshot) -> None:
        """Replace the content with ``item``."""
        self._ordering = item.kind is ItemKind.ORDERING
        self._item = item
        self.query_one("#prompt-title", SectionTitle).update(
            "Question" if item.kind.is_mcq else "Scenario"
        )
        self.query_one("#choices-title", Static).update(
            "Choices" if item.kind.is_mcq else "Events (put them in logical order)"
        )
        for row in self.query(ChoiceRow):
            row.display = row.label in item.choices
            row.set_class(False, "-chosen")
            row.mark(None)
        self._show_text(item)
        self.scroll_home(animate=False)

    def _show_text(self, item: ItemSnapshot) -> None:
        raw = self.raw
        self.border_title = RAW_TITLE if raw else ""
        self.query_one("#item-prompt", Static).update(literal_item(item.prompt, raw=raw))
        for row in self.query(ChoiceRow):
            text = item.choices.get(row.label)
            if text is None:
                continue
            line = literal_item(text, raw=raw)
            if item.kind is ItemKind.TRUEFALSE and text.strip() not in ("对", "错"):
                line.append(f"  ({truefalse_word(row.label)})", style="dim")
            row.show(line)

    def show_message(self, title: str, body: str) -> None:
        """Show a message instead of an item (the queue is empty)."""
        self._item = None
        self.border_title = ""
        self.query_one("#prompt-title", SectionTitle).update(literal(title))
        self.query_one("#item-prompt", Static).update(literal(body))
        self.query_one("#choices-title", Static).update("")
        for row in self.query(ChoiceRow):
            row.display = False

    def mark_chosen(self, letters: list[str]) -> None:
        """Mark the rows already placed in the order (with their place), or the options
        chosen (with a tick): highlighted, never dimmed, since they are the answer."""
        for row in self.query(ChoiceRow):
            chosen = row.label in letters
            if row.has_class("-chosen") != chosen:
                row.set_class(chosen, "-chosen")
            if not chosen:
                row.mark(None)
            elif self._ordering:
                row.mark(Text(str(letters.index(row.label) + 1), style="bold"))
            else:
                row.mark(CHOSEN_MARK)

    def mark_against_key(self, answer: str, key: str) -> None:
        """After the reveal: the answer's rows stay highlighted, and for choices the marks
        now say what the key says: ✓ on every choice in the key, ✗ on each chosen one
        that is not (the blind phase's tick on a wrong choice read as right).  An order
        keeps its places; the reveal panel compares them with the key."""
        self.mark_chosen(list(answer))
        if self._item is None or not marks_the_key(self._item.kind):
            return
        for row in self.query(ChoiceRow):
            if row.label in key:
                row.mark(IN_KEY_MARK)
            elif row.label in answer:
                row.mark(NOT_IN_KEY_MARK)

"""The progress line: always visible, so the annotator knows where they stand.

It also carries the outcome of the last action ("✓ saved keep on econ:17"), which
is quieter (and cheaper) than a pop-up for something that happens every item, until the
next outcome or the next item.
"""

from __future__ import annotations

import re
from time import monotonic

from rich.text import Text
from textual.timer import Timer
from textual.widgets import Static

from db.words import agreeing, counted
from reviewer.queue import QueueFilter, QueueProgress
from reviewer.tui.literal import literal
from reviewer.tui.responsive import STACK_BELOW

NO_FILTER = QueueFilter().describe()  # "all items"
NOTICE_SECONDS = 10.0  # how long a notice stays over the figures, in sight (as the toast did)
WARNING_SECONDS = 4.0  # how long a key that did nothing is explained (as its toast was)
NOTE_GAP = "   "  # between the last action's note and the figures
_PART_GAP = re.compile(f" · |{NOTE_GAP}")  # where a status line too wide may break


def progress_words(progress: QueueProgress, *, short: bool = False) -> str:
    """``12 done this session · 28 waiting for you · 340 of 3,864 items have enough
    judgments``; ``short``: ``12 done now · 28 left · 340/3,864 complete`` (80 columns:
    "12 done" alone read as everything done, and showed 0 after a restart).

    What the annotator acts on comes first: a narrow terminal cuts the line's end."""
    parts = (
        [
            f"{progress.session_done:,} done now",  # this session: the long form's words
            f"{progress.items_left:,} left",
            f"{progress.items_complete:,}/{progress.items_total:,} complete",
        ]
        if short
        else [
            f"{progress.session_done:,} done this session",
            f"{progress.items_left:,} waiting for you",
            f"{progress.items_complete:,} of {counted(progress.items_total, 'item')} "
            f"{agreeing(progress.items_total, 'has', 'have')} enough judgments",
        ]
    )
    if progress.median_seconds is not None:
        unit = "s/item" if short else "s an item"
        parts.append(f"{progress.median_seconds:.0f} {unit}")
    return " · ".join(parts)


def progress_text(
    annotator: str,
    progress: QueueProgress | None,
    filters: str,
    *,
    short: bool = False,
    no_filter_named: bool = True,
) -> Text:
    """``alice · 12 done this session · 28 waiting for you · 340 of 3,864 items ...``;
    ``short`` (or not ``no_filter_named``) names the filter only when there is one."""
    text = Text()
    text.append_text(literal(annotator, "bold"))
    if progress is None:
        text.append("  ·  counting…", style="dim")
        return text
    text.append(f" · {progress_words(progress, short=short)}")
    if (short or not no_filter_named) and filters == NO_FILTER:
        return text
    text.append(" · ", style="dim")
    text.append_text(literal(filters if not short else f"filter: {filters}", "dim"))
    return text


class ProgressLine(Static):
    """Figures refreshed after every item, after the last action's outcome: the long
    form, without "all items" when that does not fit; then, below ``STACK_BELOW``
    columns, the short form; on two lines, broken between parts, when what is left does
    not fit on one."""

    DEFAULT_CSS = """
    ProgressLine {
        height: auto;
        max-height: 2;
        padding: 0 1;
        background: $panel;
    }

    ProgressLine.-notice {
        max-height: 8;
    }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._shown: tuple[str, QueueProgress | None, str] = ("", None, NO_FILTER)
        self._note = Text()
        self._note_outlasts_arrival = False  # a note that came just before its item
        self._notice = Text()
        self._notice_left = 0.0  # the seconds of sight the notices have left
        self._notice_since: float | None = None  # in sight since (monotonic); None: not
        self._notice_timer: Timer | None = None
        self._held = False
        self._warning = Text()
        self._warning_timer: Timer | None = None

    def show(self, annotator: str, progress: QueueProgress | None, filters: str) -> None:
        self._shown = (annotator, progress, filters)
        self._render_line()

    def show_notice(self, title: str, notice: str, seconds: float = NOTICE_SECONDS) -> None:
        """A notice over the figures, in the layout (a toast lay over the verdict keys),
        for ``seconds`` in sight (see :meth:`hold_notices`) or until the first action's
        outcome takes its place: who you are, on first use, and the filter kept from
        last time.  A second notice goes on a line below the first."""
        self._stop_counting()
        if self._notice:
            self._notice.append("\n")
        self._notice.append_text(titled(title, notice))
        self._notice_left = max(self._notice_left, seconds)
        self._start_counting()
        self._render_line()

    def hold_notices(self, held: bool) -> None:
        """Held, the notices are out of sight and their time stands still (another screen
        is on top, or the key needs their rows); let go, they show for the time left."""
        if held != self._held:
            self._held = held
            self._stop_counting()
            self._start_counting()
            self._render_line()

    def _start_counting(self) -> None:
        if self._notice and not self._held:
            self._notice_since = monotonic()
            self._notice_timer = self.set_timer(self._notice_left, self._clear_notice)

    def _stop_counting(self) -> None:
        if self._notice_timer is not None:
            self._notice_timer.stop()
            self._notice_timer = None
        if self._notice_since is not None:
            self._notice_left -= monotonic() - self._notice_since
            self._notice_since = None

    def _clear_notice(self) -> None:
        self._stop_counting()
        self._notice, self._notice_left = Text(), 0.0
        self._render_line()

    @property
    def notice(self) -> str:
        """The notices, in sight or held."""
        return self._notice.plain

    def show_warning(self, title: str, warning: str, seconds: float = WARNING_SECONDS) -> None:
        """Why a key did nothing ("Nothing done: …"), over the figures for ``seconds`` (a
        toast lay over the verdict keys): in place of the last one, in sight even while
        the notices are held, until the next action's outcome takes its place."""
        self._warning = titled(title, warning)
        if self._warning_timer is not None:
            self._warning_timer.stop()
        self._warning_timer = self.set_timer(seconds, self.clear_warning)
        self._render_line()

    def clear_warning(self) -> None:
        """No warning: its time is up, or what it was about is past."""
        if self._warning:
            self._warning = Text()
            self._render_line()

    @property
    def warning(self) -> str:
        return self._warning.plain

    def show_note(self, note: str, *, before_item: bool = False) -> None:
        """The last action's outcome, before the figures, until the next outcome or the
        next item (:meth:`item_arrived`).  ``before_item``: it comes just before the item
        it is about (an undo's, a saved edit's) and lasts until the item after that."""
        self._note = literal(note, "bold green" if note.startswith("✓") else "bold yellow")
        self._note_outlasts_arrival = before_item
        # The outcome ends the notices and the warning: one render for all three.
        self._stop_counting()
        self._notice, self._notice_left = Text(), 0.0
        self._warning = Text()
        self._render_line()

    def item_arrived(self) -> None:
        """An item is on screen: the note of an action before it is over (unless it came
        just before this item, about it)."""
        if self._note_outlasts_arrival:
            self._note_outlasts_arrival = False
        elif self._note:
            self._note = Text()
            self._render_line()

    @property
    def note(self) -> str:
        return self._note.plain

    def on_resize(self) -> None:
        self._render_line()

    def _render_line(self) -> None:
        width = self.content_size.width or 10_000  # not laid out yet: the long form
        forms = [(False, True), (False, False)]
        if self.app.size.width < STACK_BELOW:  # a wide screen keeps the words, on two lines
            forms.append((True, False))
        for short, named in forms:
            figures = progress_text(*self._shown, short=short, no_filter_named=named)
            line = Text(overflow="fold")
            if self._note:
                line.append_text(self._note)
                line.append(NOTE_GAP)
            line.append_text(figures)
            if line.cell_len <= width:
                break
        shown = between_parts(line, width)
        if self._note and any(part.cell_len > width for part in shown.split("\n")):
            # Two lines cannot hold both: the note gives way, cut to one line, so that
            # the figures and the filter in force still show whole on the second.
            note = self._note.copy()
            # one cell short: Textual wraps a line that fills the width at its last space
            note.truncate(width - 1, overflow="ellipsis")
            shown = Text("\n", overflow="fold").join([note, figures])
        notice = self._notice if not self._held else Text()
        above = [text for text in (notice, self._warning) if text]
        self.set_class(bool(above), "-notice")
        if above:  # wrapped by words, above the line they leave whole
            shown = Text("\n").join([*above, shown])
        self.update(shown)


def titled(title: str, text: str) -> Text:
    """``Title: text``, the title in bold yellow; untitled, the text in yellow."""
    if not title:
        return literal(text, "yellow")
    said = literal(f"{title}: ", "bold yellow")
    said.append_text(literal(text))
    return said


def between_parts(line: Text, width: int) -> Text:
    """``line`` on two lines when it is wider than ``width``, broken after the last gap
    between parts (`` · `` or the gap after the note) that keeps the first line within
    ``width``: never inside a part, as word wrapping did ("10" above, "s/item" below)."""
    if line.cell_len <= width:
        return line
    gaps = [gap for gap in _PART_GAP.finditer(line.plain) if line[: gap.start()].cell_len <= width]
    if not gaps:
        return line
    gap = gaps[-1]
    return Text("\n", overflow="fold").join([line[: gap.start()], line[gap.end() :]])

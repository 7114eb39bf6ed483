"""The progress line: always visible, so the annotator knows where they stand.

It also carries the outcome of the last action ("✓ saved keep on econ:17"), which
is quieter (and cheaper) than a pop-up for something that happens every item.
"""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static

from reviewer.queue import QueueProgress
from reviewer.tui.literal import literal
from reviewer.words import counted


def progress_words(progress: QueueProgress) -> str:
    """``12 done this session · 28 waiting for you · 340 of 3,864 items have enough judgments``.

    What the annotator acts on comes first: a narrow terminal cuts the line's end."""
    parts = [
        f"{progress.session_done:,} done this session",
        f"{progress.items_left:,} waiting for you",
        f"{progress.items_complete:,} of {counted(progress.items_total, 'item')} "
        f"{'has' if progress.items_total == 1 else 'have'} enough judgments",
    ]
    if progress.median_seconds is not None:
        parts.append(f"{progress.median_seconds:.0f} s an item")
    return " · ".join(parts)


def progress_text(annotator: str, progress: QueueProgress | None, filters: str) -> Text:
    """``alice · 12 done this session · 28 waiting for you · 340 of 3,864 items ...``."""
    text = Text()
    text.append_text(literal(annotator, "bold"))
    if progress is None:
        text.append("  ·  counting…", style="dim")
        return text
    text.append(f" · {progress_words(progress)}")
    text.append(" · ", style="dim")
    text.append_text(literal(filters, "dim"))
    return text


class ProgressLine(Static):
    """Figures refreshed after every item, after the last action's outcome."""

    DEFAULT_CSS = """
    ProgressLine {
        height: 1;
        padding: 0 1;
        background: $panel;
    }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._figures = Text()
        self._note = Text()

    def show(self, annotator: str, progress: QueueProgress | None, filters: str) -> None:
        self._figures = progress_text(annotator, progress, filters)
        self._render_line()

    def show_note(self, note: str) -> None:
        self._note = literal(note, "bold green" if note.startswith("✓") else "bold yellow")
        self._render_line()

    @property
    def note(self) -> str:
        return self._note.plain

    def _render_line(self) -> None:
        line = Text(no_wrap=True, overflow="ellipsis")
        if self._note:
            line.append_text(self._note)
            line.append("   ")
        line.append_text(self._figures)
        self.update(line)

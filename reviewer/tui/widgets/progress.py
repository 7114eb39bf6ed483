"""The progress line: always visible, so the annotator knows where they stand.

It also carries the outcome of the last action ("✓ saved keep on econ:17"), which
is quieter (and cheaper) than a pop-up for something that happens every item.
"""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static

from reviewer.queue import QueueProgress
from reviewer.tui.literal import literal


def progress_text(annotator: str, progress: QueueProgress | None, filters: str) -> Text:
    """``alice · session 3/5 done/shown · all time 120 done · 880 left · median 14 s/item``."""
    text = Text()
    text.append_text(literal(annotator, "bold"))
    if progress is None:
        text.append("  ·  counting…", style="dim")
        return text
    median = "—" if progress.median_seconds is None else f"{progress.median_seconds:.0f} s"
    text.append(
        f" · session {progress.session_done}/{progress.session_assigned} done/shown"
        f" · all time {progress.overall_done:,} done"
        f" · {progress.items_left:,} left"
        f" · median {median}/item"
    )
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

"""The progress line: always visible, so the annotator knows where they stand."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static

from reviewer.queue import QueueProgress
from reviewer.tui.literal import literal


def progress_text(annotator: str, progress: QueueProgress | None, filters: str) -> Text:
    """``alice · this session 3 done / 5 shown · overall 120 · 880 left · median 14 s/item``."""
    text = Text()
    text.append_text(literal(annotator, "bold"))
    if progress is None:
        text.append("  ·  counting…", style="dim")
        return text
    median = "—" if progress.median_seconds is None else f"{progress.median_seconds:.0f} s"
    text.append(
        f"  ·  this session {progress.session_done} done / {progress.session_assigned} shown"
        f"  ·  overall {progress.overall_done:,} done"
        f"  ·  {progress.items_left:,} left"
        f"  ·  median {median} per item"
    )
    text.append("  ·  ", style="dim")
    text.append_text(literal(filters, "dim"))
    return text


class ProgressLine(Static):
    """One line of figures, refreshed after every item."""

    def show(self, annotator: str, progress: QueueProgress | None, filters: str) -> None:
        self.update(progress_text(annotator, progress, filters))

"""A coloured revision diff: removed lines red, added lines green, changed characters marked."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static

from reviewer.revisions import DiffLine
from reviewer.tui.literal import line_broken, visible_text

LINE_STYLES = {
    "header": "bold",
    "hunk": "cyan",
    "context": "",
    "removed": "red",
    "added": "green",
}


def diff_text(lines: list[DiffLine]) -> Text:
    """Render diff lines as plain ``Text`` (item text is never read as markup)."""
    if not lines:
        return Text("No differences.", style="dim")
    text = Text()
    for index, line in enumerate(lines):
        if index:
            text.append("\n")
        start = len(text)
        text.append(visible_text(line.text), style=LINE_STYLES[line.tag])
        for begin, end in line.changes:
            text.stylize("reverse", start + begin, start + end)
    return text


class DiffView(Static):
    """Shows one revision diff."""

    def show(self, lines: list[DiffLine]) -> None:
        self.update(line_broken(diff_text(lines)))

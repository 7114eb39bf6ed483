"""The help screen (``?``): every key of the review screen, by section."""

from __future__ import annotations

from dataclasses import dataclass

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.widgets import Static

from reviewer.tui.widgets.dialog import DialogScreen
from reviewer.tui.widgets.titles import PanelTitle


@dataclass(frozen=True)
class HelpRow:
    """One key, what it does, and when it applies."""

    section: str
    keys: str
    description: str


_KEY_NAMES = {
    **{"ctrl": "Ctrl", "shift": "Shift", "alt": "Alt", "escape": "Esc", "enter": "Enter"},
    **{"space": "Space", "tab": "Tab", "question_mark": "?", "backspace": "Backspace"},
    **{"pagedown": "PgDn", "pageup": "PgUp"},
}


def key_label(binding: Binding) -> str:
    """A binding's key as the help writes keys: ``Ctrl+S``, ``Esc``, ``F2``, ``A``."""
    if binding.key_display:
        return binding.key_display
    *modifiers, key = binding.key.split("+")
    # F2, and Ctrl+S as keys are written; a letter alone stays as bound ("a"; "A" is Shift+A)
    if key[1:].isdigit() or (modifiers and len(key) == 1):
        key = key.upper()
    return "+".join(_KEY_NAMES.get(part, part) for part in (*modifiers, key))


def help_table(rows: list[HelpRow]) -> Table:
    table = Table(box=None, show_header=False, padding=(0, 2), expand=True)
    # Keys wrap at their spaces ("Shift+Space /" over "PgUp"), never cut short with "…".
    table.add_column("keys", style="bold cyan", width=16, overflow="fold")
    table.add_column("what", ratio=1)
    section = None
    for row in rows:
        if row.section != section:
            if section is not None:
                table.add_row("", "")
            table.add_row(Text(row.section, style="bold underline"), "")
            section = row.section
        table.add_row(Text(row.keys), Text(row.description))
    return table


@dataclass(frozen=True)
class HelpPage:
    """What ``?`` shows for one screen: a title, a paragraph, and its keys."""

    title: str
    intro: str
    rows: list[HelpRow]


class HelpScreen(DialogScreen[None]):
    """Lists the keys; any of Esc, q or ? closes it."""

    BINDINGS = [
        Binding("escape,q,question_mark", "close", "Close help"),
    ]

    def __init__(self, page: HelpPage) -> None:
        super().__init__()
        self.page = page

    @property
    def rows(self) -> list[HelpRow]:
        return self.page.rows

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="help-body"):
            yield PanelTitle(self.page.title)
            yield Static(Text(self.page.intro), id="help-intro")
            yield Static(help_table(self.page.rows), id="help-table")

    def action_close(self) -> None:
        self.dismiss(None)

"""KeyFooter: the footer every vetbench screen uses, without Textual 8.2.8's Footer leak."""

from __future__ import annotations

import ast
from pathlib import Path

from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import Footer

from reviewer.tui.widgets.footer import KeyFooter

TUI = Path(__file__).resolve().parent.parent / "reviewer" / "tui"


class Toggling(Screen[None]):
    """A screen whose active keys change at each refresh, as the review screen's do."""

    BINDINGS = [Binding("a", "first", "First"), Binding("b", "second", "Second")]

    def __init__(self, footer: Footer) -> None:
        super().__init__()
        self.footer = footer
        self.flip = False

    def compose(self) -> ComposeResult:
        yield self.footer

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        return (action == "first") == self.flip


async def watchers_after_changes(footer: Footer, changes: int) -> int:
    screen = Toggling(footer)
    app = App[None]()
    async with app.run_test() as pilot:
        await app.push_screen(screen)
        for _ in range(changes):
            screen.flip = not screen.flip
            screen.refresh_bindings()
            await pilot.pause()
        watchers: dict[str, list[object]] = getattr(footer, "__watchers", {})
        return sum(len(entries) for entries in watchers.values())


async def test_key_footer_keeps_no_watchers_of_removed_keys() -> None:
    leaky = await watchers_after_changes(Footer(), 20)
    fixed = await watchers_after_changes(KeyFooter(), 20)
    assert fixed <= 2, fixed  # what the keys on show now need, not one per change
    assert leaky >= 20, leaky  # Textual's own footer keeps one per change: the leak is real


def test_every_screen_uses_the_key_footer() -> None:
    """No module but the footer's own imports textual's Footer."""
    offenders = []
    for path in sorted(TUI.rglob("*.py")):
        if path.name == "footer.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            imports_footer = isinstance(node, ast.ImportFrom) and any(
                alias.name == "Footer" for alias in node.names
            )
            if imports_footer and (node.module or "").startswith("textual"):
                offenders.append(str(path.relative_to(TUI)))
    assert offenders == []

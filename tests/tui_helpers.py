"""Helpers for the review TUI tests: wait for the app to settle, read what is on screen."""

from __future__ import annotations

import html
import re

from textual.pilot import Pilot

from reviewer.tui.app import ReviewApp
from reviewer.tui.screens.review import ReviewScreen

_SVG_TEXT = re.compile(r"<text[^>]*>(.*?)</text>", re.DOTALL)


async def settle(pilot: Pilot[None]) -> None:
    """Wait until no worker runs and the review screen has handled their messages."""
    app = pilot.app
    for _ in range(200):
        await app.workers.wait_for_complete()
        await pilot.pause()
        screens = [s for s in app.screen_stack if isinstance(s, ReviewScreen)]
        idle = not any(worker.is_running for worker in app.workers)
        if idle and not (screens and screens[0].busy):
            return
    raise AssertionError("the review app did not settle")


def screen_text(app: ReviewApp) -> str:
    """Everything rendered on the terminal right now, as plain text (from an SVG screenshot)."""
    svg = app.export_screenshot()
    return html.unescape("".join(_SVG_TEXT.findall(svg))).replace("\xa0", " ")


def review_screen(app: ReviewApp) -> ReviewScreen:
    return app.review_screen

"""Helpers for the review TUI tests: wait for the app to settle, read what is on screen."""

from __future__ import annotations

import contextlib
import html
import re

from textual.pilot import Pilot
from textual.worker import WorkerCancelled, WorkerFailed

from reviewer.tui.app import ReviewApp
from reviewer.tui.screens.review import ReviewScreen

_SVG_TEXT = re.compile(r"<text[^>]*>(.*?)</text>", re.DOTALL)


REVIEW_GROUPS = {"review", "progress", "default"}
"""Worker groups of the review screens (other areas' screens may keep pollers running)."""


async def settle(pilot: Pilot[None]) -> None:
    """Wait until the review workers are done and their messages have been handled."""
    app = pilot.app
    for _ in range(400):
        await pilot.pause()
        running = [w for w in app.workers if w.is_running and w.group in REVIEW_GROUPS]
        screens = [s for s in app.screen_stack if isinstance(s, ReviewScreen)]
        if not running and not (screens and screens[0].busy):
            await pilot.pause()
            return
        if running:
            with contextlib.suppress(WorkerFailed, WorkerCancelled):
                await running[0].wait()
    raise AssertionError("the review app did not settle")


def screen_text(app: ReviewApp) -> str:
    """Everything rendered on the terminal right now, as plain text (from an SVG screenshot)."""
    svg = app.export_screenshot()
    return html.unescape("".join(_SVG_TEXT.findall(svg))).replace("\xa0", " ")


def review_screen(app: ReviewApp) -> ReviewScreen:
    return app.review_screen

"""SVG snapshots of the review screens (Textual is pinned exactly in pyproject.toml).

Update after an intended change with ``pytest tests/test_tui_snapshots.py --snapshot-update``
and look at the new SVG files before committing them.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import settle, store_item
from textual.pilot import Pilot
from textual.widgets import Input, TextArea

from db.engine import Database, open_database
from reviewer.judging import submit_judgment
from reviewer.tui.app import make_app
from reviewer.tui.timer import ActiveTimer

SIZE = (120, 40)


def fixed_clock() -> float:
    return 1000.0


@pytest.fixture
def snapshot_db(db_path: Path) -> Database:
    db = open_database(db_path)
    store_item(
        db,
        "econ:7",
        prompt=(
            "A central bank faces inflation well above its target while the housing "
            "market is still hot. Put the events in their logical order."
        ),
        key="DABC",
    )
    store_item(
        db,
        "cflue:3",
        kind="single",
        prompt="下列关于存款准备金率的说法，正确的是？",
        choices={"A": "由中央银行决定", "B": "由商业银行自行决定", "C": "由财政部决定"},
        key="A",
        explanation="存款准备金率是中央银行的货币政策工具。",
        source="cflue",
        language="zh",
    )
    return db


def app_for(db: Database, **filters: str):  # type: ignore[no-untyped-def]
    return make_app(db, "alice", timer=ActiveTimer(clock=fixed_clock), **filters)


def steps(*keys: str):  # type: ignore[no-untyped-def]
    """A run_before that presses keys one by one, waiting for the workers after each."""

    async def run(pilot: Pilot[None]) -> None:
        await settle(pilot)
        for key in keys:
            await pilot.press(key)
            await settle(pilot)
        for widget in [*pilot.app.query(Input), *pilot.app.query(TextArea)]:
            widget.cursor_blink = False
        for screen in pilot.app.screen_stack:
            for widget in [*screen.query(Input), *screen.query(TextArea)]:
                widget.cursor_blink = False
        pilot.app.clear_notifications()
        await pilot.pause()

    return run


def test_blind_ordering(snap_compare, snapshot_db: Database) -> None:  # type: ignore[no-untyped-def]
    app = app_for(snapshot_db, kind="ordering")
    assert snap_compare(app, terminal_size=SIZE, run_before=steps("d", "a"))


def test_blind_chinese_single_choice(snap_compare, snapshot_db: Database) -> None:  # type: ignore[no-untyped-def]
    app = app_for(snapshot_db, kind="single")
    assert snap_compare(app, terminal_size=SIZE, run_before=steps("a"))


def test_revealed_with_differences(snap_compare, snapshot_db: Database) -> None:  # type: ignore[no-untyped-def]
    app = app_for(snapshot_db, kind="ordering")
    assert snap_compare(app, terminal_size=SIZE, run_before=steps("a", "d", "b", "c", "enter"))


def test_help(snap_compare, snapshot_db: Database) -> None:  # type: ignore[no-untyped-def]
    app = app_for(snapshot_db, kind="ordering")
    assert snap_compare(app, terminal_size=SIZE, run_before=steps("question_mark"))


def test_edit(snap_compare, snapshot_db: Database) -> None:  # type: ignore[no-untyped-def]
    submit_judgment(
        snapshot_db, "alice", "econ:7", revision_number=1, blind_answer="DABC", verdict="flawed"
    )
    app = app_for(snapshot_db, kind="ordering")
    keys = ["j", *"econ:7", "enter", "e", "ctrl+e", *" Today.", "ctrl+r"]
    assert snap_compare(app, terminal_size=SIZE, run_before=steps(*keys))

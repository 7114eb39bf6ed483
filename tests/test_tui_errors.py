"""The app's one rule for errors (``reviewer/tui/expected.py``): any ``VetbenchError``,
or a database fault ``db.faults`` describes, is a notice and the app goes on; anything
else is a bug that ends the app with its error; and no screen catches ``ValueError``
or ``Exception`` in its place (checked on the source)."""

from __future__ import annotations

import ast
import sqlite3
from pathlib import Path

import psycopg.errors
import pytest
from helpers import ScreenHost, notices, wait_until
from sqlalchemy.exc import OperationalError
from textual import work
from textual.message import Message
from textual.worker import WorkerFailed

from db.faults import DatabaseLocked
from reviewer.tui.polling import PollingScreen
from reviewer.tui.screens.prompt import PromptScreen, Refused
from reviewer.tui.widgets.dialog import Dialog, DialogScreen

ROOT = Path(__file__).resolve().parent.parent
BROAD = {"ValueError", "Exception", "BaseException"}


def broad_catches(path: Path) -> list[str]:
    """``except`` clauses of ``path`` that catch ``ValueError``, ``Exception``, ``BaseException``
    or everything, as ``line: names``."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not isinstance(node, ast.ExceptHandler):
            continue
        caught = node.type
        names = (
            ([caught] if not isinstance(caught, ast.Tuple) else list(caught.elts))
            if caught is not None
            else []
        )
        written = {ast.unparse(name).rsplit(".", 1)[-1] for name in names}
        if caught is None or written & BROAD:
            found.append(f"{node.lineno}: {', '.join(sorted(written)) or 'everything'}")
    return found


def test_no_screen_catches_value_error_or_exception() -> None:
    found = {
        str(path.relative_to(ROOT)): catches
        for path in sorted((ROOT / "reviewer" / "tui").rglob("*.py"))
        if (catches := broad_catches(path))
    }
    assert found == {}


def test_the_source_check_sees_every_broad_catch(tmp_path: Path) -> None:
    probe = tmp_path / "probe.py"
    probe.write_text(
        "try:\n    pass\nexcept (KeyError, ValueError):\n    pass\n"
        "try:\n    pass\nexcept builtins.Exception:\n    pass\n"
        "try:\n    pass\nexcept:\n    pass\n"
        "try:\n    pass\nexcept KeyError:\n    pass\n",
        encoding="utf-8",
    )
    assert broad_catches(probe) == ["3: KeyError, ValueError", "7: Exception", "11: everything"]


class Read(Message):
    pass


class FailingPoller(PollingScreen[None]):
    """Fails its first read with ``failure``, then reads fine."""

    POLL_SECONDS = 0.05

    def __init__(self, failure: Exception) -> None:
        super().__init__()
        self.failure: Exception | None = failure
        self.reads = 0

    def on_mount(self) -> None:
        self.start_polling()

    def read_database(self) -> Message | None:
        if self.failure is not None:
            failure, self.failure = self.failure, None
            raise failure
        self.reads += 1
        return Read()


def locked_sqlite() -> OperationalError:
    return OperationalError("UPDATE item", {}, sqlite3.OperationalError("database is locked"))


def server_restarted() -> OperationalError:
    shutdown = psycopg.errors.AdminShutdown("terminating connection due to administrator command")
    return OperationalError("SELECT 1", {}, shutdown)


@pytest.mark.parametrize(
    ("failure", "shown"),
    [
        (DatabaseLocked("review.db", 60), "review.db is locked by another writer"),
        (locked_sqlite(), "the database: the database is locked by another writer"),
        (server_restarted(), "the database: the database server closed the connection"),
    ],
    ids=["vetbench-error", "database-fault", "server-restart"],
)
async def test_an_expected_error_is_a_notice_and_the_screen_goes_on(
    failure: Exception, shown: str
) -> None:
    screen = FailingPoller(failure)
    app = ScreenHost(screen)
    async with app.run_test() as pilot:
        await wait_until(pilot, lambda: bool(notices(app)), "the notice")
        assert shown in notices(app)[0]
        # The poller tries again after a pause (the database may come back) and reads.
        await wait_until(pilot, lambda: screen.reads > 0, "a read after the failure")
        assert app.is_running


async def test_any_other_error_is_a_bug_that_ends_the_app() -> None:
    app = ScreenHost(FailingPoller(KeyError("a bug")))
    with pytest.raises(KeyError, match="a bug"):
        async with app.run_test() as pilot:
            await pilot.pause(0.5)
    assert not notices(app)


class LoadingDialog(DialogScreen[None]):
    """A dialog whose loading worker fails with ``failure``."""

    def __init__(self, failure: Exception) -> None:
        super().__init__()
        self.failure = failure

    def compose(self):  # type: ignore[no-untyped-def]
        yield Dialog()

    def on_mount(self) -> None:
        self.load()

    @work(thread=True, exit_on_error=False)
    def load(self) -> None:
        raise self.failure


async def test_a_dialog_that_fails_to_load_shows_an_expected_error() -> None:
    app = ScreenHost(LoadingDialog(DatabaseLocked("review.db", 60)))  # type: ignore[arg-type]
    async with app.run_test() as pilot:
        await wait_until(pilot, lambda: bool(notices(app)), "the notice")
        assert "review.db is locked" in notices(app)[0]


async def test_a_dialog_that_fails_to_load_with_a_bug_ends_the_app() -> None:
    app = ScreenHost(LoadingDialog(ZeroDivisionError("a bug")))  # type: ignore[arg-type]
    with pytest.raises((ZeroDivisionError, WorkerFailed)):
        async with app.run_test() as pilot:
            await pilot.pause(0.5)


async def test_a_refused_value_keeps_the_prompt_open_saying_why() -> None:
    def validate(text: str) -> str:
        if text != "ok":
            raise Refused(f"'{text}' is not ok")
        return text

    prompt = PromptScreen("Value", "Type ok.", validate)
    app = ScreenHost(prompt)  # type: ignore[arg-type]
    async with app.run_test() as pilot:
        await pilot.press("n", "o", "enter")
        await pilot.pause()
        problem = prompt.query_one("#prompt-problem")
        assert "'no' is not ok" in str(problem.render())
        assert app.screen is prompt

"""`vetbench serve`: the review app in a real headless Chromium stores a judgment.

The browser is Debian's Chromium (``apt-get install chromium``; `.ci/run` installs
it when missing), driven by Playwright with ``executable_path``: no browser is
ever downloaded, and every request that would leave 127.0.0.1 (the page asks
for a web font) is aborted.  The terminal is drawn on a canvas, so the test
knows what the app shows from the websocket frames the page receives.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest
from helpers import store_item, store_person, stored_judgments

from db.engine import open_database
from db.vocabulary import Role

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
PROMPT = "Which institution sets the policy interest rate?"
WAIT_S = 60.0  # a deadline for waiting, never a measured assertion


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextlib.contextmanager
def serving(db_path: Path, *extra: str) -> Iterator[tuple[subprocess.Popen[str], int]]:
    """``vetbench --db DB serve --as alice --port P`` running until the block ends."""
    port = free_port()
    command = [
        sys.executable,
        "-m",
        "reviewer.cli",
        "--db",
        str(db_path),
        "serve",
        "--as",
        "alice",
        "--port",
        str(port),
        *extra,
    ]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    server = subprocess.Popen(
        command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    try:
        deadline = time.monotonic() + WAIT_S
        while True:
            assert server.poll() is None, server.communicate()[0]
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 1):
                break
            assert time.monotonic() < deadline, "the server did not start listening"
            time.sleep(0.1)
        yield server, port
    finally:
        for child in psutil.Process(server.pid).children(recursive=True):
            with contextlib.suppress(psutil.NoSuchProcess):
                child.terminate()
        server.terminate()
        server.communicate(timeout=30)


@pytest.fixture
def one_item_db(db_path: Path) -> Path:
    db = open_database(db_path)
    store_item(
        db,
        "mcq:1",
        kind="single",
        prompt=PROMPT,
        choices={"A": "The central bank", "B": "The treasury", "C": "Commercial banks"},
        key="A",
        explanation="Monetary policy is the central bank's.",
    )
    db.dispose()
    return db_path


def test_serve_listens_on_127_0_0_1_only_and_serves_the_page(one_item_db: Path) -> None:
    with serving(one_item_db) as (server, port):
        page = urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=30).read().decode()
        assert f"ws://127.0.0.1:{port}/ws" in page
        assert "vetbench review · alice" in page
        addresses = {
            connection.laddr.ip
            for connection in psutil.Process(server.pid).net_connections(kind="inet")
            if connection.status == psutil.CONN_LISTEN
        }
        assert addresses == {"127.0.0.1"}


def test_serve_behind_a_proxy_points_the_page_at_the_public_address(one_item_db: Path) -> None:
    with serving(one_item_db, "--public-url", "https://review.example.org/alice/") as (_, port):
        page = urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=30).read().decode()
        assert "wss://review.example.org/alice/ws" in page
        assert "https://review.example.org/alice/static/js/textual.js" in page


def test_serve_refuses_a_database_it_cannot_open(tmp_path: Path) -> None:
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "reviewer.cli",
            "--db",
            "postgresql+psycopg://nobody@127.0.0.1:1/none",
            "serve",
        ],
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 1
    assert result.stderr.startswith("error: cannot connect to postgresql+psycopg://nobody@")
    assert len(result.stderr.splitlines()) == 1


def test_serve_refuses_an_unknown_name_before_it_listens(one_item_db: Path) -> None:
    """`serve --as lenna` on a database that knows lena: one line naming lena, no server."""
    database = open_database(one_item_db)
    store_person(database, "lena", Role.LEAD)
    database.dispose()  # the server process opens the file on its own
    result = subprocess.run(
        [sys.executable, "-m", "reviewer.cli", "--db", str(one_item_db), "serve", "--as", "lenna"],
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 1
    assert len(result.stderr.splitlines()) == 1 and "lena" in result.stderr
    assert result.stderr.startswith("error: ")


@pytest.mark.slow
def test_a_browser_answers_an_item_and_the_judgment_is_stored(one_item_db: Path) -> None:
    if not Path(CHROMIUM).exists():
        pytest.skip(f"Chromium not installed at {CHROMIUM} (apt-get install chromium)")
    sync_api = pytest.importorskip("playwright.sync_api")
    received: list[str] = []

    def on_websocket(websocket) -> None:  # type: ignore[no-untyped-def]
        def on_frame(payload: str | bytes) -> None:
            text = payload.decode("utf-8", "replace") if isinstance(payload, bytes) else payload
            received.append(text)

        websocket.on("framereceived", on_frame)

    def wait_for_screen(words: str, page) -> None:  # type: ignore[no-untyped-def]
        deadline = time.monotonic() + WAIT_S
        while words not in "".join(received):
            assert time.monotonic() < deadline, f"the app never showed {words!r}"
            page.wait_for_timeout(100)

    with (
        serving(one_item_db) as (_, port),
        sync_api.sync_playwright() as playwright,
    ):
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_FLAGS)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 800})
            page.route(
                "**/*",
                lambda route: (
                    route.continue_()
                    if route.request.url.startswith(f"http://127.0.0.1:{port}/")
                    else route.abort()
                ),
            )
            page.on("websocket", on_websocket)
            page.goto(f"http://127.0.0.1:{port}/")
            page.wait_for_selector("body.-first-byte", timeout=WAIT_S * 1000)
            wait_for_screen("policy interest rate", page)
            page.locator("#terminal").click()
            page.keyboard.press("a")  # the blind answer
            page.keyboard.press("Enter")
            wait_for_screen("Your answer", page)  # the reveal
            page.keyboard.press("k")  # verdict: keep
            db = open_database(one_item_db)
            deadline = time.monotonic() + WAIT_S
            while not stored_judgments(db):
                assert time.monotonic() < deadline, "no judgment reached the database"
                page.wait_for_timeout(100)
            if screenshot := os.environ.get("VETBENCH_SERVE_SCREENSHOT"):
                page.screenshot(path=screenshot)  # to look at by eye
        finally:
            browser.close()
    [judgment] = stored_judgments(db)
    db.dispose()
    assert (judgment.item_id, judgment.blind_answer, judgment.verdict) == ("mcq:1", "A", "keep")
    assert not judgment.retracted

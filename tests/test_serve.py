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
import re
import shutil
import socket
import sqlite3
import stat
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import psutil
import pytest
import test_io_integrity
from click.testing import Result
from helpers import run_cli, store_item, store_person, stored_judgments
from served_model import free_port
from test_io_integrity import remount_read_only

from db.engine import open_database
from db.vocabulary import Role
from reviewer.cli import serve_commands
from reviewer.cli.guarded_server import MAX_HEIGHT, MAX_WIDTH, remove_own_socket

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
mounted_tmpfs = test_io_integrity.mounted_tmpfs  # a real tmpfs to make read-only


@contextlib.contextmanager
def serving(
    db_path: Path, *extra: str, port: int | None = None
) -> Iterator[tuple[subprocess.Popen[str], int]]:
    """``vetbench --db DB serve --as alice --port P`` running until the block ends (P a
    free port unless given)."""
    port = port or free_port()
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
        _stop(server)


def _stop(server: subprocess.Popen[str] | subprocess.Popen[bytes]) -> None:
    """Stop a ``vetbench serve`` process and the app sessions it started."""
    for child in psutil.Process(server.pid).children(recursive=True):
        with contextlib.suppress(psutil.NoSuchProcess):
            child.terminate()
    server.terminate()
    server.communicate(timeout=30)


def vetbench_once(*args: str) -> subprocess.CompletedProcess[str]:
    """``vetbench ARGS`` in a process of its own, for commands that must end by themselves."""
    return subprocess.run(
        [sys.executable, "-m", "reviewer.cli", *args],
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=60,
    )


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
    result = vetbench_once("--db", "postgresql+psycopg://nobody@127.0.0.1:1/none", "serve")
    assert result.returncode == 1
    assert result.stderr.startswith("error: cannot connect to postgresql+psycopg://nobody@")
    assert len(result.stderr.splitlines()) == 1


def test_serve_refuses_an_unknown_name_before_it_listens(one_item_db: Path) -> None:
    """`serve --as lenna` on a database that knows lena: one line naming lena, no server."""
    database = open_database(one_item_db)
    store_person(database, "lena", Role.LEAD)
    database.dispose()  # the server process opens the file on its own
    result = vetbench_once("--db", str(one_item_db), "serve", "--as", "lenna")
    assert result.returncode == 1
    assert len(result.stderr.splitlines()) == 1 and "lena" in result.stderr
    assert result.stderr.startswith("error: ")


def test_serve_on_a_port_in_use_or_an_address_not_here_is_one_line(one_item_db: Path) -> None:
    database = open_database(one_item_db)
    store_person(database, "lena", Role.LEAD)
    database.dispose()
    with socket.create_server(("127.0.0.1", 0)) as taken:
        port = str(taken.getsockname()[1])
        busy = vetbench_once("--db", str(one_item_db), "serve", "--as", "lena", "--port", port)
    assert busy.returncode == 1 and busy.stdout == ""  # nothing said to be served
    assert busy.stderr == (
        f"error: cannot listen on 127.0.0.1:{port}: Address already in use; "
        "choose another with --port\n"
    )
    elsewhere = vetbench_once(
        "--db", str(one_item_db), "serve", "--as", "lena", "--host", "300.1.1.1"
    )
    assert elsewhere.returncode == 1
    assert elsewhere.stderr.startswith("error: cannot listen on 300.1.1.1:8000: ")
    assert len(elsewhere.stderr.splitlines()) == 1


def test_an_address_other_machines_reach_is_refused_without_allow_remote(
    one_item_db: Path,
) -> None:
    """`serve --host 0.0.0.0` served with no warning: anyone on the network reviewed as
    alice, and the printed http://0.0.0.0:PORT opened in no browser."""
    port = str(free_port())
    serve = ("--db", str(one_item_db), "serve", "--as", "alice", "--port", port)
    for host in ("0.0.0.0", "::", "192.0.2.7"):
        refused = vetbench_once(*serve, "--host", host)
        assert refused.returncode == 1 and refused.stdout == "", refused.stderr
        assert refused.stderr.startswith(f"error: --host {host} lets other machines reach")
        assert "--allow-remote" in refused.stderr and "reverse proxy" in refused.stderr
        assert len(refused.stderr.splitlines()) == 1
    # Meant, but on every address: which one browsers open must be said.
    nowhere = vetbench_once(*serve, "--host", "0.0.0.0", "--allow-remote")
    assert nowhere.returncode == 1 and nowhere.stdout == ""
    assert nowhere.stderr.startswith(
        f"error: --host 0.0.0.0 listens on every address of this machine, and a browser "
        f"cannot open http://0.0.0.0:{port}: add --public-url"
    )
    assert len(nowhere.stderr.splitlines()) == 1
    assert _judgments(one_item_db) == []


def test_allow_remote_warns_what_it_exposes_and_prints_a_url_that_works(
    one_item_db: Path,
) -> None:
    port = free_port()
    public = f"http://localhost:{port}"
    remote = ("--host", "0.0.0.0", "--allow-remote", "--public-url", public)
    with serving(one_item_db, *remote, port=port) as (server, _):
        assert server.stdout is not None
        shown = _banner(server)
        assert "WARNING: serving on 0.0.0.0:" in shown
        assert "Anyone who can reach this port reviews as alice" in shown
        assert f"on {public} " in shown
        page = urllib.request.urlopen(f"{public}/", timeout=30).read().decode()
        assert f"ws://localhost:{port}/ws" in page
        listening = {
            connection.laddr.ip
            for connection in psutil.Process(server.pid).net_connections(kind="inet")
            if connection.status == psutil.CONN_LISTEN
        }
        assert "0.0.0.0" in listening
    # Loopback needs no flag and says nothing of the kind.
    with serving(one_item_db, "--host", "localhost") as (server, port):
        assert "WARNING" not in _banner(server)
        page = urllib.request.urlopen(f"http://localhost:{port}/", timeout=30).read().decode()
        assert f"ws://localhost:{port}/ws" in page


def _banner(server: subprocess.Popen[str]) -> str:
    """What a running ``serve`` printed up to "Press Ctrl+C", its lines joined (the
    banner wraps at the terminal's width)."""
    assert server.stdout is not None
    said: list[str] = []
    while not said or "Ctrl+C" not in said[-1]:
        said.append(server.stdout.readline())
        assert said[-1], "".join(said)  # the server ended before its banner was out
    return " ".join("".join(said).split())


def test_a_serve_refused_for_its_port_registers_no_one(tmp_path: Path) -> None:
    # On an empty database serve registered the first person (and audited it), then
    # found the port taken.
    db_path = tmp_path / "empty.db"
    assert vetbench_once("--db", str(db_path), "init").returncode == 0
    with socket.create_server(("127.0.0.1", 0)) as taken:
        port = str(taken.getsockname()[1])
        busy = vetbench_once("--db", str(db_path), "serve", "--port", port)
    assert busy.returncode == 1 and "cannot listen on" in busy.stderr, busy.stderr
    assert "registered" not in busy.stderr
    with contextlib.closing(sqlite3.connect(db_path)) as connection:
        people = connection.execute("SELECT count(*) FROM person").fetchone()
        events = connection.execute("SELECT count(*) FROM audit_event").fetchone()
    assert people == (0,) and events == (0,)


def test_a_first_use_name_the_registration_refuses_is_refused_before_the_socket_listens(
    tmp_path: Path,
) -> None:
    # On an empty database serve bound and listened on its socket, then found the name it
    # would register refused: the socket had accepted connections, and stayed behind.
    db_path, path = tmp_path / "empty.db", tmp_path / "s.sock"
    assert vetbench_once("--db", str(db_path), "init").returncode == 0
    refused = vetbench_once(
        *("--db", str(db_path), "serve", "--as", "bad\x01name", "--socket", str(path)),
        *("--public-url", "https://review.test"),
    )
    assert refused.returncode == 1 and refused.stdout == ""
    assert refused.stderr == "error: a name must be printable text on one line; it holds U+0001\n"
    assert not path.exists() and not path.is_symlink()
    with contextlib.closing(sqlite3.connect(db_path)) as connection:
        assert connection.execute("SELECT count(*) FROM person").fetchone() == (0,)


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


# --- who may open a session, and how many (issue 22, point 3) --------------------------

EVIL = "http://evil.example.com"


async def _screen_words(websocket, words: str, received: list[bytes]) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + WAIT_S
    while words not in b"".join(received).decode("utf-8", "replace"):
        assert time.monotonic() < deadline, f"the app never showed {words!r}"
        message = await websocket.receive(timeout=WAIT_S)
        if message.type.name == "BINARY":
            received.append(message.data)


async def _answer_as_alice(port: int, origin: str) -> None:
    """What the probe did: open the socket with ``origin`` and press a, Enter, k."""
    import aiohttp

    async with (
        aiohttp.ClientSession() as session,
        session.ws_connect(
            f"ws://127.0.0.1:{port}/ws?width=100&height=30", headers={"Origin": origin}
        ) as websocket,
    ):
        await _answer_a_and_keep(websocket)


async def _answer_a_and_keep(websocket) -> None:  # type: ignore[no-untyped-def]
    """In the app behind ``websocket``: answer A blind, read the reveal, keep."""
    received: list[bytes] = []
    await _screen_words(websocket, "policy interest rate", received)
    for key in ("a", "\r"):
        await websocket.send_json(["stdin", key])
    await _screen_words(websocket, "Your answer", received)
    await websocket.send_json(["stdin", "k"])
    await _screen_words(websocket, "saved keep on mcq:1", received)  # the status line


def _session_sizes(server: subprocess.Popen[str]) -> set[tuple[str | None, str | None]]:
    """The terminal sizes (COLUMNS, ROWS) the server's app processes were started with."""
    return {
        (environment.get("COLUMNS"), environment.get("ROWS"))
        for child in psutil.Process(server.pid).children(recursive=True)
        for environment in [child.environ()]
    }


def _rows_painted(frames: list[bytes]) -> set[int]:
    """The screen rows the app moved its cursor to (``ESC [ row ; column H``)."""
    return {int(row) for row in re.findall(rb"\x1b\[(\d+);\d+H", b"".join(frames))}


@contextlib.asynccontextmanager
async def _session(port: int, *, width: int, height: int) -> AsyncIterator[Any]:
    """A session opened by a page this server serves, asking a ``width`` x ``height``
    terminal; its WebSocket."""
    import aiohttp

    async with (
        aiohttp.ClientSession() as session,
        session.ws_connect(
            f"ws://127.0.0.1:{port}/ws?width={width}&height={height}",
            headers={"Origin": f"http://127.0.0.1:{port}"},
        ) as websocket,
    ):
        yield websocket


def test_a_client_asking_a_huge_terminal_gets_the_largest_one(one_item_db: Path) -> None:
    """`/ws?width=5000&height=5000` started the app 5000 x 5000, and it grew to ~390 MB."""
    import asyncio

    async def huge_session(port: int) -> None:
        async with _session(port, width=5000, height=5000) as websocket:
            received: list[bytes] = []
            await _screen_words(websocket, "policy interest rate", received)
            assert _session_sizes(server) == {(str(MAX_WIDTH), str(MAX_HEIGHT))}
            assert max(_rows_painted(received)) == MAX_HEIGHT

    with serving(one_item_db) as (server, port):
        asyncio.run(huge_session(port))


def test_a_resize_to_a_huge_terminal_gets_the_largest_one(one_item_db: Path) -> None:
    """The `resize` message was not capped either; one that is not a size is dropped."""
    import asyncio

    async def resized_session(port: int) -> set[int]:
        async with _session(port, width=100, height=30) as websocket:
            received: list[bytes] = []
            await _screen_words(websocket, "policy interest rate", received)
            assert max(_rows_painted(received)) == 30
            # A page pings its session: the answer comes back through the same socket.
            await websocket.send_json(["ping", "1700000000000"])
            while (message := await websocket.receive(timeout=WAIT_S)).type.name == "BINARY":
                pass  # the screen, still drawing
            assert message.type.name == "TEXT", message  # not closed: the session lives on
            assert message.json() == ["pong", "1700000000000"]
            await websocket.send_json(["resize", {"width": "wide", "height": 40}])
            await websocket.send_json(["resize", {"width": 5000, "height": 5000}])
            repainted: list[bytes] = []
            deadline = time.monotonic() + WAIT_S
            while time.monotonic() < deadline:  # until the app has been quiet a while
                try:
                    message = await websocket.receive(timeout=2)
                except TimeoutError:
                    if repainted:
                        break
                    continue
                if message.type.name == "BINARY":
                    repainted.append(message.data)
            return _rows_painted(repainted)

    with serving(one_item_db) as (_, port):
        assert max(asyncio.run(resized_session(port))) == MAX_HEIGHT


def _refused_status(port: int, origin: str | None) -> tuple[int, str]:
    """The answer to a WebSocket handshake from ``origin``: (HTTP status, body)."""
    import asyncio

    import aiohttp

    async def attempt() -> tuple[int, str]:
        headers = {"Origin": origin} if origin else {}
        async with aiohttp.ClientSession() as session:
            try:
                async with session.ws_connect(
                    f"ws://127.0.0.1:{port}/ws", headers=headers
                ) as websocket:
                    await websocket.send_json(["stdin", "a"])
                    return 101, ""
            except aiohttp.WSServerHandshakeError as error:
                # The same request without the upgrade shows the refusal's text.
                refused = await session.get(f"http://127.0.0.1:{port}/ws", headers=headers)
                return error.status, await refused.text()

    return asyncio.run(attempt())


def _judgments(db_path: Path) -> list:  # type: ignore[type-arg]
    db = open_database(db_path)
    try:
        return stored_judgments(db)
    finally:
        db.dispose()


def test_a_websocket_from_another_site_is_refused_and_judges_nothing(one_item_db: Path) -> None:
    """A raw client sending ``Origin: http://evil.example.com`` stored a judgment as alice."""
    import asyncio

    with serving(one_item_db, "--allow-origin", "https://review.example.org") as (server, port):
        for origin in (EVIL, f"http://127.0.0.1:{port + 1}", None):
            status, body = _refused_status(port, origin)
            assert status == 403, (origin, status)
            assert "opens sessions only for pages it serves" in body
        assert psutil.Process(server.pid).children(recursive=True) == []  # no app started
        assert _judgments(one_item_db) == []
        # The proxy's address given with --allow-origin may, and so may the page itself:
        asyncio.run(  # a deadline, so that a silent app fails the test instead of hanging it
            asyncio.wait_for(_answer_as_alice(port, "https://review.example.org"), 3 * WAIT_S)
        )
    [judgment] = _judgments(one_item_db)
    assert (judgment.blind_answer, judgment.verdict) == ("A", "keep")


async def _read_until_closed(websocket) -> None:  # type: ignore[no-untyped-def]
    async for _message in websocket:
        pass


@pytest.mark.slow  # four review apps start on the machine
def test_the_fifth_session_is_refused_with_a_message(one_item_db: Path) -> None:
    import asyncio

    import aiohttp

    async def five_sessions(port: int) -> tuple[int, str, int, str]:
        origin = {"Origin": f"http://127.0.0.1:{port}"}
        async with aiohttp.ClientSession() as session:
            sockets = []
            readers = []
            for _ in range(4):
                websocket = await session.ws_connect(
                    f"ws://127.0.0.1:{port}/ws?width=80&height=24", headers=origin
                )
                await _screen_words(websocket, "policy interest rate", [])
                sockets.append(websocket)
                # Read on, as a browser does: reading answers the server's heartbeat.
                readers.append(asyncio.create_task(_read_until_closed(websocket)))
            with pytest.raises(aiohttp.WSServerHandshakeError) as fifth:
                await session.ws_connect(f"ws://127.0.0.1:{port}/ws", headers=origin)
            said = await session.get(f"http://127.0.0.1:{port}/ws", headers=origin)
            page = await session.get(f"http://127.0.0.1:{port}/")
            answer = (fifth.value.status, await said.text(), page.status, await page.text())
            for websocket in sockets:
                await websocket.close()
            await asyncio.gather(*readers)
            return answer

    with serving(one_item_db) as (_, port):
        socket_status, socket_text, page_status, page_text = asyncio.run(five_sessions(port))
        assert socket_status == 503 and page_status == 503
        message = "already runs 4 review sessions, its limit (--max-sessions 4)"
        assert message in socket_text and message in page_text
        # The sessions closed: their slots are free again.
        deadline = time.monotonic() + WAIT_S
        while True:
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=30)
                break
            except urllib.error.HTTPError as still_full:
                assert still_full.code == 503 and time.monotonic() < deadline
                time.sleep(0.2)


def test_serve_refuses_an_origin_that_is_not_an_address(one_item_db: Path) -> None:
    result = vetbench_once("--db", str(one_item_db), "serve", "--allow-origin", "evil")
    assert result.returncode == 1
    assert (
        result.stderr
        == "error: --allow-origin/--public-url: 'evil' is not an http:// or https:// address\n"
    )


def _answers(path: Path) -> bool:
    """Whether a server accepts connections on the Unix socket ``path``."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
        try:
            probe.connect(str(path))
        except OSError:
            return False
    return True


def _answer_over_the_socket(path: Path, origin: str) -> None:
    """_answer_as_alice, through the Unix socket a proxy would connect to."""
    import asyncio

    import aiohttp

    async def answer() -> None:
        connector = aiohttp.UnixConnector(path=str(path))
        async with (
            aiohttp.ClientSession(connector=connector) as session,
            session.ws_connect(
                "ws://review.test/ws?width=100&height=30", headers={"Origin": origin}
            ) as websocket,
        ):
            await _answer_a_and_keep(websocket)

    asyncio.run(asyncio.wait_for(answer(), 3 * WAIT_S))


def test_serve_on_a_unix_socket_only_its_owner_and_group_may_open(
    one_item_db: Path, tmp_path: Path
) -> None:
    """Any user of the machine reaches a 127.0.0.1 port and may send any Origin; a Unix
    socket is a file with permissions: 0660 from its first moment, and nothing listens
    on a port.  The proxy's public address is the one origin that opens a session."""
    path = tmp_path / "alice.sock"
    path.touch()  # something that is not a socket is never replaced
    serve = ("serve", "--as", "alice", "--socket", str(path))
    # Refused before anything listens: in this process (a served app needs its own).
    taken = run_cli(one_item_db, *serve, "--public-url", "https://review.test/alice")
    assert taken.exit_code == 1 and "exists and is not a socket" in taken.stderr
    path.unlink()
    for extra, refusal in (
        ((), "--socket needs --public-url"),
        (("--port", "8001", "--public-url", "https://x.test"), "leave out --port"),
    ):
        refused = run_cli(one_item_db, *serve, *extra)
        assert refused.exit_code == 1 and refusal in refused.stderr
    args = ("--db", str(one_item_db), *serve)

    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    command = [sys.executable, "-m", "reviewer.cli", *args, "--public-url", "https://review.test"]
    server = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + WAIT_S
        while not _answers(path):
            assert server.poll() is None and time.monotonic() < deadline, "no socket"
            time.sleep(0.1)
        assert stat.S_IMODE(path.stat().st_mode) == 0o660
        assert not [
            connection
            for connection in psutil.Process(server.pid).net_connections(kind="inet")
            if connection.status == psutil.CONN_LISTEN
        ]
        # In a process of its own, with a deadline: were it to serve, it would never end.
        again = vetbench_once(*args, "--public-url", "https://review.test")
        assert again.returncode == 1 and "another server is listening there" in again.stderr
        _answer_over_the_socket(path, "https://review.test")
        assert [(j.item_id, j.verdict) for j in _judgments(one_item_db)] == [("mcq:1", "keep")]
    finally:
        _stop(server)
    assert not path.exists()  # a stopped server takes its socket away


def _serve_on(db_path: Path, path: Path) -> Result:
    """``vetbench serve --socket PATH`` in this process: for serves refused before they listen."""
    return run_cli(
        db_path, "serve", "--as", "alice", "--socket", str(path), "--public-url", "https://x.test"
    )


def _left_behind(path: Path) -> None:
    """A socket file at ``path`` that nothing listens on, as a killed server leaves it."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as gone:
        gone.bind(str(path))


def test_a_socket_in_a_folder_anyone_may_write_is_refused(
    one_item_db: Path, tmp_path: Path
) -> None:
    """Anyone could remove the socket there and put their own in its place, and the proxy
    would send the annotators' requests to their server.  /tmp's sticky bit stops that."""
    open_folder = tmp_path / "open"
    open_folder.mkdir()
    open_folder.chmod(0o777)
    path = open_folder / "alice.sock"
    refused = _serve_on(one_item_db, path)
    assert refused.exit_code == 1
    assert refused.stderr == (
        f"error: cannot listen on {path}: anyone may write in {open_folder} (mode 0777) and "
        "put their own socket in its place; choose a folder only you and your group may write\n"
    )
    assert not path.exists()
    open_folder.chmod(0o1777)  # sticky: only a file's owner removes it
    serve_commands.bind_unix_socket(path).close()
    assert stat.S_ISSOCK(path.lstat().st_mode)


@pytest.mark.skipif(os.geteuid() != 0, reason="giving a file to another user needs root")
def test_a_stopping_server_removes_its_own_socket_and_never_a_newer_one(tmp_path: Path) -> None:
    """Someone removed a running server's socket by hand and started another server on
    the path: the first one, stopping, removed the second one's socket with its own."""
    path = str(tmp_path / "review.sock")
    first = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    first.bind(path)
    bound = os.stat(path)
    os.unlink(path)  # by hand
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as newer:
        newer.bind(path)
        remove_own_socket(path, bound)
        assert os.path.exists(path)  # the newer server's socket stays
    os.unlink(path)
    first.close()
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as own:
        own.bind(path)
        remove_own_socket(path, os.stat(path))
        assert not os.path.exists(path)  # its own is removed
    remove_own_socket(path, bound)  # gone already: nothing to do, no error


def test_another_users_socket_is_never_replaced(one_item_db: Path, tmp_path: Path) -> None:
    """A socket nothing listens on is replaced only when it is ours: another user's, in
    /tmp say, is theirs (root could remove it; a user got a traceback trying)."""
    path = tmp_path / "alice.sock"
    _left_behind(path)
    os.chown(path, 65534, 65534)
    before = path.lstat()
    refused = _serve_on(one_item_db, path)
    assert refused.exit_code == 1
    owner = serve_commands._user_name(65534)
    assert refused.stderr == (
        f"error: cannot listen on {path}: a socket of {owner}'s is there, not yours to "
        "replace; choose another path\n"
    )
    assert path.lstat().st_ino == before.st_ino and path.lstat().st_uid == 65534


def test_a_socket_left_behind_that_cannot_be_removed_is_one_line(
    one_item_db: Path, mounted_tmpfs: Path
) -> None:
    path = mounted_tmpfs / "alice.sock"
    _left_behind(path)
    remount_read_only(mounted_tmpfs)
    refused = _serve_on(one_item_db, path)
    assert refused.exit_code == 1
    assert refused.stderr == (
        f"error: cannot listen on {path}: cannot remove the socket left there: "
        "Read-only file system\n"
    )


EVIL_PAGE = """<!DOCTYPE html><html><body><script>
window.outcome = "pending";
window.frames_in = 0;
const socket = new WebSocket("ws://127.0.0.1:{port}/ws?width=80&height=24");
socket.binaryType = "arraybuffer";
socket.onopen = () => {{
  window.outcome = "open";
  for (const key of ["a", "\\r", "k"]) socket.send(JSON.stringify(["stdin", key]));
}};
socket.onmessage = () => {{ window.frames_in += 1; }};
socket.onclose = () => {{ if (window.outcome === "pending") window.outcome = "refused"; }};
</script></body></html>"""


@contextlib.contextmanager
def site_with_a_page(page: list[str]) -> Iterator[int]:
    """A web server on 127.0.0.1 that answers every request with ``page[0]`` (set it once
    the port is known); its port."""
    import http.server
    import threading

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = page[0].encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    site = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=site.serve_forever, daemon=True)
    thread.start()
    try:
        yield int(site.server_address[1])
    finally:
        site.shutdown()
        site.server_close()


@contextlib.contextmanager
def chromium(*extra_flags: str) -> Iterator[object]:
    """Debian's headless Chromium through Playwright (skips when either is missing)."""
    if not Path(CHROMIUM).exists():
        pytest.skip(f"Chromium not installed at {CHROMIUM} (apt-get install chromium)")
    sync_api = pytest.importorskip("playwright.sync_api")
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=CHROMIUM, args=[*CHROMIUM_FLAGS, *extra_flags]
        )
        try:
            yield browser
        finally:
            browser.close()


def _local_only(page, *origins: str) -> None:  # type: ignore[no-untyped-def]
    """Abort every request that is not for one of ``origins`` (the web font, say)."""
    page.route(
        "**/*",
        lambda route: (
            route.continue_()
            if route.request.url.startswith(tuple(f"{origin}/" for origin in origins))
            else route.abort()
        ),
    )


@pytest.mark.slow
def test_a_page_from_another_site_cannot_open_a_session_in_chromium(one_item_db: Path) -> None:
    """A page on evil.example.com opens the app's socket and presses a, Enter, k: refused,
    nothing judged.  The same page from the address given with --allow-origin connects,
    so it is the server's check that refuses, not the browser."""
    page_text: list[str] = []
    with contextlib.ExitStack() as stack:
        site_port = stack.enter_context(site_with_a_page(page_text))
        server, port = stack.enter_context(
            serving(one_item_db, "--allow-origin", f"http://friend.example.com:{site_port}")
        )
        page_text.append(EVIL_PAGE.format(port=port))
        browser = stack.enter_context(
            chromium(
                "--host-resolver-rules=MAP evil.example.com 127.0.0.1, "
                "MAP friend.example.com 127.0.0.1"
            )
        )
        outcomes = {}
        for site in ("evil", "friend"):
            origin = f"http://{site}.example.com:{site_port}"
            page = browser.new_page()  # type: ignore[attr-defined]
            _local_only(page, origin, f"http://127.0.0.1:{port}")
            page.goto(f"{origin}/")
            page.wait_for_function("window.outcome !== 'pending'", timeout=WAIT_S * 1000)
            outcomes[site] = page.evaluate("window.outcome")
            if site == "evil":
                assert psutil.Process(server.pid).children(recursive=True) == []
                assert _judgments(one_item_db) == []
            else:
                page.wait_for_function("window.frames_in > 0", timeout=WAIT_S * 1000)
            page.close()
    assert outcomes == {"evil": "refused", "friend": "open"}


@pytest.mark.slow
def test_a_tab_over_the_limit_gets_a_page_that_says_so_in_chromium(one_item_db: Path) -> None:
    with serving(one_item_db, "--max-sessions", "1") as (_, port), chromium() as browser:
        address = f"http://127.0.0.1:{port}"
        first = browser.new_page()  # type: ignore[attr-defined]
        _local_only(first, address)
        first.goto(f"{address}/")
        first.wait_for_selector("body.-first-byte", timeout=WAIT_S * 1000)
        second = browser.new_page()  # type: ignore[attr-defined]
        _local_only(second, address)
        answer = second.goto(f"{address}/")
        assert answer is not None and answer.status == 503
        shown = second.inner_text("body")
        assert "vetbench review: no free session" in shown
        assert "already runs 1 review session, its limit (--max-sessions 1)" in shown
        assert "Close another tab of the review app, then reload this page." in shown
        first.close()  # its session ends: the second tab gets the app on reload
        deadline = time.monotonic() + WAIT_S
        while (again := second.reload()) is not None and again.status == 503:
            assert time.monotonic() < deadline, "the session of the closed tab never ended"
            second.wait_for_timeout(200)
        second.wait_for_selector("body.-first-byte", timeout=WAIT_S * 1000)

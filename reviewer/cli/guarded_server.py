"""textual-serve's server with two guards: which pages may open a session, and how many.

A browser sends every WebSocket the ``Origin`` of the page that opens it.  textual-serve
accepts any, so any web page open in an annotator's browser could drive and read the
app as them.  This server starts an app only for the origin it serves (``public_url``,
and on a loopback address the same port under ``localhost``/``127.0.0.1``/``[::1]``)
and the origins given with ``--allow-origin``; others are refused before any process
starts.  Every session is a process of its own, so at most ``max_sessions`` run at once;
another tab gets a page saying so.

The ``Origin`` check stops other web pages, not other programs: anyone with a shell on
the machine can connect to a 127.0.0.1 port and send any ``Origin``.  Given a bound
``unix_socket``, the server listens there instead, a file only its owner and their group
may open (mode 0660), and the reverse proxy connects to that.

Imported only by ``vetbench serve`` (it imports textual-serve and aiohttp).
"""

from __future__ import annotations

import asyncio
import contextlib
import html
import json
import logging
import os
import signal
import socket
from collections.abc import AsyncIterator, Iterable
from dataclasses import dataclass
from typing import Any, cast

from aiohttp import WSMessage, WSMsgType, web
from textual_serve.app_service import AppService
from textual_serve.server import Server
from yarl import URL

from db.words import counted

log = logging.getLogger("textual-serve")

_LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]")

# The largest terminal a session gets, in cells.  A 4K screen at textual-serve's default
# 16px font is about 400 x 110 cells; 500 x 200 leaves room for a smaller font, and caps
# what one client can ask of the app (a 5000 x 5000 terminal grew a session to ~390 MB).
MAX_WIDTH, MAX_HEIGHT = 500, 200


class OriginError(ValueError):
    """An ``--allow-origin`` value that is not an http(s) address."""


def origin_of(url: str) -> str:
    """``scheme://host[:port]`` of an http(s) address, as browsers write an ``Origin``
    (lowercase, no default port, no path); an :class:`OriginError` for anything else."""
    parsed = URL(url.strip())
    if parsed.scheme not in ("http", "https") or not parsed.host:
        raise OriginError(f"'{url}' is not an http:// or https:// address")
    return str(parsed.origin()).lower()


def served_origins(public_url: str, host: str, port: int, allowed: Iterable[str]) -> frozenset[str]:
    """The origins whose pages may open a session."""
    origins = {origin_of(public_url), *(origin_of(url) for url in allowed)}
    if host in ("127.0.0.1", "localhost", "::1"):
        origins |= {origin_of(f"http://{name}:{port}") for name in _LOOPBACK_NAMES}
    return frozenset(origins)


def clamped_size(width: object, height: object) -> tuple[int, int] | None:
    """``(width, height)`` in cells within 1..MAX_WIDTH and 1..MAX_HEIGHT, or None for a
    size that is not two numbers."""
    try:
        asked = int(str(width)), int(str(height))
    except ValueError:
        return None
    return max(1, min(asked[0], MAX_WIDTH)), max(1, min(asked[1], MAX_HEIGHT))


@dataclass(frozen=True)
class _Resize:
    """A ``resize`` message already read, as textual-serve reads a message."""

    width: int
    height: int
    type: WSMsgType = WSMsgType.TEXT

    def json(self) -> list[object]:
        return ["resize", {"width": self.width, "height": self.height}]


class _ClampedResizes:
    """A session's WebSocket as textual-serve reads it, its ``resize`` messages clamped
    to the largest terminal (and one that is not a size dropped)."""

    def __init__(self, websocket: web.WebSocketResponse) -> None:
        self.websocket = websocket

    def __getattr__(self, name: str) -> Any:
        """The WebSocket's own: textual-serve answers a ping with ``send_json``."""
        return getattr(self.websocket, name)

    async def __aiter__(self) -> AsyncIterator[WSMessage | _Resize]:
        async for message in self.websocket:
            if message.type is WSMsgType.TEXT:
                with contextlib.suppress(ValueError):
                    envelope = json.loads(message.data)
                    if isinstance(envelope, list) and envelope[:1] == ["resize"]:
                        asked = envelope[1] if len(envelope) > 1 else None
                        size = (
                            clamped_size(asked.get("width"), asked.get("height"))
                            if isinstance(asked, dict)
                            else None
                        )
                        if size is not None:
                            yield _Resize(*size)
                        continue  # a resize that is not a size never reaches the app
            yield message


def _page(title: str, message: str) -> str:
    return (
        "<!DOCTYPE html><html><head><meta charset='utf-8'>"
        f"<title>{html.escape(title)}</title></head>"
        "<body style='font-family: sans-serif; margin: 3em'>"
        f"<h1>{html.escape(title)}</h1><p>{html.escape(message)}</p></body></html>"
    )


def remove_own_socket(path: str, bound: os.stat_result) -> None:
    """Remove the socket file this server bound at ``path``, and nothing else: if someone
    removed it by hand and a newer server now listens there, that server's socket stays."""
    with contextlib.suppress(FileNotFoundError):
        now = os.stat(path)
        if (now.st_dev, now.st_ino) == (bound.st_dev, bound.st_ino):
            os.unlink(path)


class GuardedServer(Server):
    """A textual-serve server that checks each WebSocket's origin and caps sessions."""

    def __init__(
        self,
        command: str,
        *,
        host: str,
        port: int,
        title: str,
        public_url: str | None,
        allowed_origins: Iterable[str] = (),
        max_sessions: int = 4,
        unix_socket: socket.socket | None = None,
    ) -> None:
        super().__init__(command, host=host, port=port, title=title, public_url=public_url)
        # On a socket, the page's origin is the proxy's public address alone.
        self.origins = served_origins(
            self.public_url, "" if unix_socket else host, port, allowed_origins
        )
        self.max_sessions = max_sessions
        self.sessions = 0  # one event loop: no lock needed
        self.unix_socket = unix_socket  # bound by serve_commands.bind_unix_socket

    def serve(self, debug: bool = False) -> None:
        """textual-serve's ``serve``, on the bound Unix socket when there is one."""
        if self.unix_socket is None:
            super().serve(debug)
            return
        self.debug = debug
        self.initialize_logging()
        loop = asyncio.new_event_loop()
        with contextlib.suppress(NotImplementedError):
            loop.add_signal_handler(signal.SIGINT, self.request_exit)
            loop.add_signal_handler(signal.SIGTERM, self.request_exit)
        path = self.unix_socket.getsockname()
        bound = os.stat(path)
        try:
            web.run_app(
                self._make_app(),
                sock=self.unix_socket,
                handle_signals=False,
                loop=loop,
                print=lambda *args: None,
            )
        finally:
            remove_own_socket(path, bound)

    async def _process_messages(
        self, websocket: web.WebSocketResponse, app_service: AppService
    ) -> None:
        """textual-serve's, reading the WebSocket through :class:`_ClampedResizes`."""
        clamped = cast(web.WebSocketResponse, _ClampedResizes(websocket))
        await super()._process_messages(clamped, app_service)

    def _full_message(self) -> str:
        return (
            "This vetbench server already runs "
            f"{counted(self.max_sessions, 'review session')}, its "
            f"limit (--max-sessions {self.max_sessions}). Close another tab of the review app, "
            "then reload this page."
        )

    async def handle_index(self, request: web.Request) -> web.StreamResponse:
        if self.sessions >= self.max_sessions:
            return web.Response(
                status=503,
                text=_page("vetbench review: no free session", self._full_message()),
                content_type="text/html",
            )
        response: web.StreamResponse = await super().handle_index(request)
        return response

    # A refusal is a plain HTTP answer, not a WebSocket: hence the wider return type.
    async def handle_websocket(self, request: web.Request) -> web.StreamResponse:  # type: ignore[override]
        origin = request.headers.get("Origin", "").strip().lower()
        if origin not in self.origins:
            shown = origin or "no Origin header"
            log.warning(
                "refused a session for a page from %s: it is not %s (behind a reverse "
                "proxy, add its address with --allow-origin)",
                shown,
                ", ".join(sorted(self.origins)),
            )
            return web.Response(
                status=403,
                text=f"vetbench serve opens sessions only for pages it serves; refused {shown}\n",
            )
        if self.sessions >= self.max_sessions:
            log.warning("refused a session: %s already run", self.max_sessions)
            return web.Response(status=503, text=self._full_message() + "\n")
        # textual-serve starts the app at the size the query asks: clamp it first.
        size = clamped_size(request.query.get("width", "80"), request.query.get("height", "24"))
        width, height = size or (80, 24)
        request = request.clone(rel_url=request.rel_url.update_query(width=width, height=height))
        self.sessions += 1
        try:
            response: web.StreamResponse = await super().handle_websocket(request)
            return response
        finally:
            self.sessions -= 1

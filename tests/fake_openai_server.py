"""A real OpenAI-compatible HTTP server for tests: ``POST /v1/chat/completions`` and
``POST /v1/completions`` on 127.0.0.1.

Tests script what it answers, per request, and read back what it received:

- ``server.script(reply, reply, ...)`` queues replies answered in arrival order;
- ``server.route("some text", reply, ...)`` queues replies for requests whose user
  message contains ``"some text"`` (concurrent clients arrive in any order);
- otherwise ``server.default`` answers (a function of the recorded request).

Replies cover what real servers do: good completions (``completion``), 429 with
``Retry-After`` (``rate_limited``), 500s (``server_error``), answers slower than
the client's timeout (``completion(..., delay=...)``), bodies that are not JSON
(``malformed``), and 400s rejecting ``response_format`` (``response_format_rejected``).
Every request is recorded with its arrival time, headers and body.

``/v1/completions`` answers as vLLM's completions endpoint does: with ``echo`` and
``logprobs`` it returns the prompt and one generated token, each token with its
log-probability (``None`` for the first), its text and its character offset
(``tokens``, ``token_logprobs``, ``top_logprobs``, ``text_offset``).  Its tokenizer
is a simple one (a word or one symbol, with the spaces before it); the
log-probability of each token comes from ``server.logprob(text_before, token)``,
which tests replace to make the fake model prefer some answers.  With
``server.prompt_logprobs = False`` it answers like a server that gives none
(``logprobs: null``).

``second_opinion(reviews)`` makes a ``default`` that answers ``vetbench check``'s
reviewer questions like a careful model: per item (found by its id in the question),
the review it was given, else what the text itself shows (a table or figure it
refers to is missing); JSON when the request asks for structured output, the
plain-text lines otherwise, and a 400 for ``response_format`` when the server is
told it has no structured output.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

CHAT_PATH = "/v1/chat/completions"
COMPLETIONS_PATH = "/v1/completions"
_TOKEN = re.compile(r"\s*(?:\w+|[^\w\s])|\s+")
GENERATED_TOKEN = "\n"  # the one token an echo request generates


@dataclass(frozen=True)
class Reply:
    """One scripted answer: HTTP status, body (a dict is sent as JSON), headers, delay."""

    status: int = 200
    body: dict[str, Any] | str | bytes = ""
    headers: dict[str, str] = field(default_factory=dict)
    delay_s: float = 0.0  # answer this late (the server waits; tests never sleep)
    drip_s: float = 0.0  # send the body a byte at a time, this long apart
    cut_at: int | None = None  # send this many bytes of the body, then close the connection


@dataclass(frozen=True)
class RecordedRequest:
    """A request as the server received it."""

    received_at: float  # time.monotonic() on arrival
    method: str
    path: str
    headers: dict[str, str]  # lower-case names
    raw_body: bytes
    body: dict[str, Any] | None  # the parsed JSON body, or None

    @property
    def user_text(self) -> str:
        """The text of the last user message (what tests route on), or a completion's prompt."""
        body = self.body or {}
        if self.path == COMPLETIONS_PATH:
            return str(body.get("prompt") or "")
        messages = body.get("messages") or []
        users = [m.get("content", "") for m in messages if m.get("role") == "user"]
        return str(users[-1]) if users else ""


def fake_tokens(text: str) -> list[str]:
    """The fake model's tokens: a word or one symbol with the spaces before it."""
    tokens = _TOKEN.findall(text)
    assert "".join(tokens) == text
    return tokens


def completion(
    content: str,
    *,
    model: str = "fake-model",
    finish_reason: str = "stop",
    delay_s: float = 0.0,
    headers: dict[str, str] | None = None,
) -> Reply:
    """A well-formed chat completion whose message is ``content``."""
    body = {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": 1_700_000_000,
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content},
                "finish_reason": finish_reason,
            }
        ],
        "usage": {"prompt_tokens": 10, "completion_tokens": 20, "total_tokens": 30},
    }
    return Reply(200, body, dict(headers or {}), delay_s)


def rate_limited(
    *, retry_after: str | None = None, retry_after_ms: str | None = None, status: int = 429
) -> Reply:
    """A 429 (or another status) carrying ``Retry-After`` and/or ``retry-after-ms``."""
    headers: dict[str, str] = {}
    if retry_after is not None:
        headers["Retry-After"] = retry_after
    if retry_after_ms is not None:
        headers["retry-after-ms"] = retry_after_ms
    body = {"error": {"message": "Rate limit reached", "type": "rate_limit", "code": "rate"}}
    return Reply(status, body, headers)


def server_error(status: int = 500, message: str = "internal error") -> Reply:
    return Reply(status, {"error": {"message": message, "type": "server_error"}})


def malformed(text: str = '{"choices": [ this is not json') -> Reply:
    """A 200 whose body claims to be JSON but is not."""
    return Reply(200, text, {"Content-Type": "application/json"})


def response_format_rejected() -> Reply:
    """The 400 a server without structured output sends for ``response_format``."""
    message = "Unsupported parameter: 'response_format' of type json_schema is not supported"
    return Reply(400, {"error": {"message": message, "type": "invalid_request_error"}})


def echo_authorization(request: RecordedRequest) -> Reply:
    """A hostile 500 that echoes the Authorization header back (tests redaction)."""
    secret = request.headers.get("authorization", "")
    return server_error(500, f"bad credentials {secret} rejected")


@dataclass(frozen=True)
class ItemReview:
    """What a reviewing model says about one item (the fields of the check schema)."""

    one_defensible_answer: bool = True
    other_defensible_answers: tuple[str, ...] = ()
    key_is_right: bool = True
    proposed_key: str = ""
    needs_missing_material: bool = False
    sensitive: bool = False
    reasons: str = "The item is clear and its key follows from the text."

    def as_lines(self) -> str:
        """The plain-text answer a model gives without structured output."""

        def yes_no(value: bool, extra: str = "") -> str:
            return ("yes" if value else "no") + (f": {extra}" if extra else "")

        return "\n".join(
            [
                "Here is my review.",
                f"ONE ANSWER: {yes_no(self.one_defensible_answer, '; '.join(self.other_defensible_answers))}",
                f"KEY RIGHT: {yes_no(self.key_is_right, self.proposed_key)}",
                f"MISSING MATERIAL: {yes_no(self.needs_missing_material)}",
                f"SENSITIVE: {yes_no(self.sensitive)}",
                f"REASONS: {self.reasons}",
            ]
        )


_CHECKED_ITEM = re.compile(r"^Item (?P<id>\S+) \((?P<kind>[a-z]+)\)$", re.MULTILINE)
_MISSING_MATERIAL = re.compile(
    r"如下?表|如下?图|见下表|下表所示|the following (?:table|figure|chart)", re.I
)


def second_opinion(
    reviews: Mapping[str, ItemReview] | None = None, *, structured: bool = True
) -> Callable[[RecordedRequest], Reply]:
    """A ``default`` answering ``vetbench check``: ``reviews[item id]``, else a review of
    what the text shows; JSON for structured requests, the lines otherwise (and a 400
    for ``response_format`` when ``structured`` is False, as servers without it do)."""
    given = dict(reviews or {})

    def answer(request: RecordedRequest) -> Reply:
        asked_structured = "response_format" in (request.body or {})
        if asked_structured and not structured:
            return response_format_rejected()
        match = _CHECKED_ITEM.search(request.user_text)
        if match is None:
            return completion("I can only review items.")
        review = given.get(match["id"])
        if review is None:
            missing = bool(_MISSING_MATERIAL.search(request.user_text))
            review = ItemReview(
                needs_missing_material=missing,
                reasons="It refers to a table that is not given."
                if missing
                else ItemReview.reasons,
            )
        if asked_structured:
            body = asdict(review)
            body["other_defensible_answers"] = list(review.other_defensible_answers)
            return completion(json.dumps(body, ensure_ascii=False))
        return completion(review.as_lines())

    return answer


class _QuietServer(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        return  # a client that timed out and hung up is expected here, not an error


class FakeOpenAIServer:
    """A threading HTTP server on 127.0.0.1 (port 0) that answers scripted replies."""

    def __init__(self, default: Callable[[RecordedRequest], Reply] | None = None) -> None:
        self.default: Callable[[RecordedRequest], Reply] = default or (
            lambda _request: completion("OK")
        )
        self.logprob: Callable[[str, str], float] = lambda _before, _token: -1.0
        """The fake model's log-probability of ``token`` after ``text_before``."""
        self.prompt_logprobs = True  # False: answer echo requests with logprobs null
        self.completion_delay_s = 0.0  # answer completions this late (to see concurrency)
        # What GET /v1/models and GET /version answer (vLLM's shapes); None: 404.
        self.models: list[dict[str, Any]] | None = None
        self.version: str | None = None
        self.requests: list[RecordedRequest] = []
        self._queue: list[Reply] = []
        self._routes: list[tuple[str, list[Reply]]] = []
        self._lock = threading.Lock()
        self._arrived = threading.Condition(self._lock)
        self._in_flight = 0
        self.max_in_flight = 0  # the most requests the server was answering at once
        self._stopping = threading.Event()
        self._server = _QuietServer(("127.0.0.1", 0), self._handler_class())
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )

    # -- scripting ---------------------------------------------------------------------

    def script(self, *replies: Reply) -> None:
        """Queue replies for the next requests, in arrival order (before routes and default)."""
        with self._lock:
            self._queue.extend(replies)

    def route(self, needle: str, *replies: Reply) -> None:
        """Queue replies for requests whose last user message contains ``needle``."""
        with self._lock:
            for existing, queue in self._routes:
                if existing == needle:
                    queue.extend(replies)
                    return
            self._routes.append((needle, list(replies)))

    def _next_reply(self, request: RecordedRequest) -> Reply:
        with self._lock:
            if self._queue:
                return self._queue.pop(0)
            for needle, queue in self._routes:
                if needle in request.user_text and queue:
                    return queue.pop(0)
        return self.default(request)

    # -- reading back ------------------------------------------------------------------

    @property
    def base_url(self) -> str:
        port = self._server.server_address[1]
        return f"http://127.0.0.1:{port}/v1"

    def cli_options(self, model: str, api_key_env: str) -> list[str]:
        """The command-line options that point a vetbench command at ``model`` on this
        server, its API key read from ``api_key_env``."""
        return ["--model", model, "--base-url", self.base_url, "--api-key-env", api_key_env]

    def completion_requests(self) -> list[RecordedRequest]:
        """Recorded ``/v1/completions`` requests."""
        with self._lock:
            return [r for r in self.requests if r.path == COMPLETIONS_PATH]

    def echo_completion(self, request: RecordedRequest) -> Reply:
        """The completions endpoint's answer, as vLLM gives it (see the module docstring)."""
        body = request.body or {}
        prompt = body.get("prompt")
        if not isinstance(prompt, str):
            return Reply(400, {"error": {"message": "prompt must be a string"}})
        echo, wanted = bool(body.get("echo")), body.get("logprobs")
        text = (prompt if echo else "") + GENERATED_TOKEN
        logprobs = None
        if wanted is not None and self.prompt_logprobs:
            tokens = [*(fake_tokens(prompt) if echo else []), GENERATED_TOKEN]
            offsets, values, position = [], [], 0
            context = "" if echo else prompt
            for index, token in enumerate(tokens):
                offsets.append(position)
                first = echo and index == 0
                values.append(None if first else self.logprob(context, token))
                context += token
                position += len(token)
            logprobs = {
                "tokens": tokens,
                "token_logprobs": values,
                "top_logprobs": [
                    None if v is None else {t: v} for t, v in zip(tokens, values, strict=True)
                ],
                "text_offset": offsets,
            }
        choice = {"index": 0, "text": text, "logprobs": logprobs, "finish_reason": "length"}
        return Reply(
            200,
            {
                "id": "cmpl-fake",
                "object": "text_completion",
                "created": 1_700_000_000,
                "model": body.get("model", "fake-model"),
                "choices": [choice],
                "usage": {"prompt_tokens": 10, "completion_tokens": 1, "total_tokens": 11},
            },
            delay_s=self.completion_delay_s,
        )

    def chat_requests(self, needle: str | None = None) -> list[RecordedRequest]:
        """Recorded chat requests, optionally only those whose user message has ``needle``."""
        with self._lock:
            found = [r for r in self.requests if r.path == CHAT_PATH]
        return [r for r in found if needle is None or needle in r.user_text]

    def wait_for_requests(self, count: int, timeout: float = 10.0) -> bool:
        """Block until ``count`` requests have arrived (or ``timeout``); True if they did."""
        with self._arrived:
            return self._arrived.wait_for(lambda: len(self.requests) >= count, timeout)

    def everything_received(self) -> str:
        """All request lines, headers and bodies as one text, except the Authorization header."""
        with self._lock:
            recorded = list(self.requests)
        parts = []
        for request in recorded:
            headers = {k: v for k, v in request.headers.items() if k != "authorization"}
            parts.append(f"{request.method} {request.path}\n{json.dumps(headers)}\n")
            parts.append(request.raw_body.decode("utf-8", "replace"))
        return "\n".join(parts)

    # -- lifecycle ---------------------------------------------------------------------

    def start(self) -> FakeOpenAIServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()  # releases replies still waiting out their delay
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def __enter__(self) -> FakeOpenAIServer:
        return self.start()

    def __exit__(self, *_exc: object) -> None:
        self.stop()

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
                return  # keep test output clean

            def do_GET(self) -> None:
                if self.path == "/v1/models" and server.models is not None:
                    self._send(Reply(200, {"object": "list", "data": server.models}))
                elif self.path == "/version" and server.version is not None:
                    self._send(Reply(200, {"version": server.version}))
                else:
                    self._send(Reply(404, {"error": {"message": f"no route {self.path}"}}))

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    body = json.loads(raw) if raw else None
                except ValueError:
                    body = None
                request = RecordedRequest(
                    received_at=time.monotonic(),
                    method="POST",
                    path=self.path,
                    headers={k.lower(): v for k, v in self.headers.items()},
                    raw_body=raw,
                    body=body if isinstance(body, dict) else None,
                )
                with server._arrived:
                    server.requests.append(request)
                    server._in_flight += 1
                    server.max_in_flight = max(server.max_in_flight, server._in_flight)
                    server._arrived.notify_all()
                try:
                    if self.path == COMPLETIONS_PATH:
                        self._send(server.echo_completion(request))
                    elif self.path != CHAT_PATH:
                        self._send(Reply(404, {"error": {"message": f"no route {self.path}"}}))
                    else:
                        self._send(server._next_reply(request))
                finally:
                    with server._lock:
                        server._in_flight -= 1

            def _send(self, reply: Reply) -> None:
                if reply.delay_s and server._stopping.wait(reply.delay_s):
                    return
                if isinstance(reply.body, dict):
                    payload = json.dumps(reply.body).encode()
                elif isinstance(reply.body, str):
                    payload = reply.body.encode()
                else:
                    payload = reply.body
                headers = {"Content-Type": "application/json", **reply.headers}
                try:
                    self.send_response(reply.status)
                    for name, value in headers.items():
                        self.send_header(name, value)
                    self.send_header("Content-Length", str(len(payload)))
                    self.end_headers()
                    if reply.cut_at is not None:
                        self.wfile.write(payload[: reply.cut_at])
                        self.close_connection = True
                        return
                    if not reply.drip_s:
                        self.wfile.write(payload)
                    for index in range(len(payload) if reply.drip_s else 0):
                        self.wfile.write(payload[index : index + 1])
                        self.wfile.flush()
                        if server._stopping.wait(reply.drip_s):
                            return
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (timeout); nothing to answer

        return Handler

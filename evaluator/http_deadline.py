"""A whole answer within the timeout: an HTTP transport that gives each request one deadline.

httpx's timeouts (which the openai SDK uses) bound each step: connecting, and each read
of the body.  A server that sends its answer a byte a second never lets one read time
out, and held a run for minutes past ``--timeout``.  :class:`DeadlineTransport` starts
a clock when a request goes out and ends the body's reading once the deadline passes,
as a read timeout, which the client counts and retries as any other timeout.
"""

from __future__ import annotations

import time
from collections.abc import Iterator

import openai

try:  # the HTTP library the openai SDK is built on: httpx2 from openai 3, httpx before
    import httpx2 as httpx
except ImportError:  # pragma: no cover - an older openai
    import httpx  # type: ignore[no-redef]

__all__ = ["DeadlineTransport", "deadline_http_client", "never_connected"]


def deadline_http_client(seconds: float) -> openai.DefaultHttpxClient:
    """The openai SDK's own HTTP client, each answer read whole within ``seconds`` (httpx's
    limits: 100 connections, and ``--concurrency`` is at most 64)."""
    return openai.DefaultHttpxClient(transport=DeadlineTransport(httpx.HTTPTransport(), seconds))


def never_connected(cause: BaseException | None) -> bool:
    """Whether the HTTP error behind an ``openai.APIConnectionError`` is one of making the
    connection (refused, no such host), not one of a connection that broke mid-answer."""
    return cause is None or isinstance(cause, httpx.ConnectError)


class DeadlineTransport(httpx.BaseTransport):
    """``inner`` with every request's response read in full within ``seconds`` of sending."""

    def __init__(self, inner: httpx.BaseTransport, seconds: float) -> None:
        self._inner = inner
        self._seconds = seconds

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        deadline = time.monotonic() + self._seconds
        response = self._inner.handle_request(request)
        stream = response.stream
        if isinstance(stream, httpx.SyncByteStream):
            response.stream = _DeadlineStream(stream, deadline, self._seconds, request)
        return response

    def close(self) -> None:
        self._inner.close()


class _DeadlineStream(httpx.SyncByteStream):
    def __init__(
        self, inner: httpx.SyncByteStream, deadline: float, seconds: float, request: httpx.Request
    ) -> None:
        self._inner = inner
        self._deadline = deadline
        self._seconds = seconds
        self._request = request

    def __iter__(self) -> Iterator[bytes]:
        for chunk in self._inner:
            if time.monotonic() > self._deadline:
                raise httpx.ReadTimeout(
                    f"the answer took longer than {self._seconds:g} s", request=self._request
                )
            yield chunk

    def close(self) -> None:
        self._inner.close()

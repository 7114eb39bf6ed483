"""What one call to an OpenAI-compatible server is, and what comes back of it.

``evaluator.openai_client`` takes :class:`ChatRequest` (and score mode's
``LogprobRequest``) and yields :class:`ChatOutcome` and :class:`LogprobOutcome`: a
response or a :class:`ChatError`, never an exception, so a batch goes on past one
failed request.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from db.json_types import JsonObject
from db.words import counted
from evaluator.prompt_logprobs import LogprobRequest

__all__ = [
    "ChatCancelledError",
    "ChatError",
    "ChatOutcome",
    "ChatRequest",
    "ChatResponse",
    "LogprobOutcome",
    "ServerFacts",
    "not_found_hint",
    "server_message",
]


class ChatCancelledError(Exception):
    """The run was stopped (Ctrl-C) while this request waited to retry."""


@dataclass(frozen=True)
class ChatError:
    """A request that failed for good. ``message`` never contains the API key."""

    kind: str  # timeout | connection | rate-limit | server | malformed | rejected | cancelled
    message: str
    attempts: int
    status: int | None = None
    fatal: bool = False  # every other request will fail the same way (bad key, unknown model)

    def __str__(self) -> str:
        return f"{self.message} ({self.kind}, {counted(self.attempts, 'attempt')})"

    @property
    def retry_cannot_fix(self) -> bool:
        """The server refused the request itself (an HTTP 4xx other than the retried 408,
        409 and 429: an unknown model or path, a bad parameter): asked again, with the
        same settings, it refuses again."""
        return self.kind == "rejected" and self.status is not None and 400 <= self.status < 500


def server_message(body: object) -> str | None:
    """The server's own words in an error body: OpenAI's and vLLM's ``{"error":
    {"message"}}``, FastAPI's ``{"detail"}`` (``transformers serve``: a string, or a list of
    field errors), a bare ``{"error": "text"}`` or text; None where it says none."""
    if isinstance(body, str) and body.strip():
        return body
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and isinstance(inner.get("message"), str):
            return str(inner["message"])
        for key in ("error", "message", "detail"):
            if isinstance(body.get(key), str):
                return str(body[key])
        detail = body.get("detail")
        if isinstance(detail, list) and detail:
            return "; ".join(
                str(d.get("msg", d)) if isinstance(d, dict) else str(d) for d in detail
            )
    return None


def not_found_hint(model: str, base_url: str) -> str:
    """What an HTTP 404 most likely means, in parentheses: a base URL without the ``/v1``
    that OpenAI-compatible servers (vLLM, llama.cpp, SGLang, OpenAI) answer under, or else
    a model the server does not serve."""
    if "/v1" not in urlsplit(base_url).path:
        return (
            f" (the base URL {base_url} has no /v1 in its path: OpenAI-compatible servers "
            f"answer under one, e.g. {base_url}/v1)"
        )
    return f" (is the model '{model}' served at {base_url}?)"


@dataclass(frozen=True)
class ChatRequest:
    """One chat completion to make. ``tag`` is the caller's handle, returned with the outcome."""

    messages: tuple[tuple[str, str], ...]  # (role, content) pairs
    max_tokens: int | None = None
    temperature: float = 0.0
    stop: tuple[str, ...] = ()
    seed: int | None = None
    json_schema: Mapping[str, Any] | None = None  # {"name": ..., "schema": {...}} when wanted
    tag: Any = None
    # Never sent: which draw a sampled request is (the item it writes).  Asked again with
    # the same draw it is the same request by design, so a cached answer serves it.
    draw: str | None = None

    @classmethod
    def user(cls, text: str, **kwargs: Any) -> ChatRequest:
        """A request with a single user message."""
        return cls(messages=(("user", text),), **kwargs)

    def message_dicts(self) -> list[dict[str, str]]:
        return [{"role": role, "content": content} for role, content in self.messages]


@dataclass(frozen=True)
class ChatResponse:
    text: str
    finish_reason: str | None
    structured: bool  # sent with response_format and the server accepted it
    cached: bool
    attempts: int  # 0 for a cache hit
    latency_s: float
    raw: JsonObject = field(repr=False)  # the completion as the server sent it


@dataclass(frozen=True)
class ChatOutcome:
    request: ChatRequest
    response: ChatResponse | None = None
    error: ChatError | None = None
    latency_s: float = 0.0  # from the start of the request to its outcome, retries included


@dataclass(frozen=True)
class ServerFacts:
    """What an OpenAI-compatible server reports about itself (None: it did not say)."""

    model_id: str | None  # the model's id in the server's /models list
    model_root: str | None  # the weights behind that id, where they differ (vLLM's root)
    version: str | None  # the server software's version (vLLM's /version)
    listed: bool = True  # False: the model list did not come in time (what it serves unknown)

    def identity(self) -> dict[str, str] | None:
        """What tells these weights and this server from others served under the same
        model name: the root and version, where said (empty when the server says
        neither); None when it is unknown (the model list did not come)."""
        if not self.listed:
            return None
        said = {"model_root": self.model_root, "version": self.version}
        return {name: value for name, value in said.items() if value is not None}


@dataclass(frozen=True)
class LogprobOutcome:
    request: LogprobRequest
    log_likelihood: float | None = None
    tokens: int = 0  # continuation tokens summed
    error: ChatError | None = None
    latency_s: float = 0.0

"""One client for OpenAI-compatible chat APIs, used by item generation and API evaluation.

It wraps the official ``openai`` package (whose own retries are switched off)
and adds what a long batch job needs:

- retries with capped, jittered exponential backoff that honour ``Retry-After``
  on 429 and 5xx and retry timeouts and dropped connections (``retry_policy``);
- bounded concurrency (a thread pool), results yielded as soon as each finishes;
- a response cache in the database (``response_cache``), so a re-run pays for nothing twice,
  keyed by what the server says it serves, asked once before the first lookup;
- counters (ok, invalid, retried, failed, cached) for progress bars;
- structured output (a JSON schema) when asked, falling back to plain text for the
  rest of the run when the server rejects ``response_format``;
- the log-probability of a continuation (score mode), from the completions endpoint
  with ``echo`` and ``logprobs``, as vLLM serves it (:meth:`ChatClient.prompt_logprobs_all`).

The API key is read from the environment variable the caller names and is
never printed, logged, stored, or put in an error message or ``repr``.
"""

from __future__ import annotations

import json
import os
import re
import threading
import time
import warnings
from collections.abc import Callable, Generator, Iterable, Mapping
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import replace
from typing import Any, TypeVar

import openai
from tenacity import RetryCallState, Retrying, retry_if_exception, stop_after_attempt

from db.engine import Database
from db.errors import VetbenchError
from db.json_types import JsonObject
from evaluator.backends.settings import DEFAULT_API_KEY_ENV
from evaluator.chat_calls import (
    ChatCancelledError,
    ChatError,
    ChatOutcome,
    ChatRequest,
    ChatResponse,
    LogprobOutcome,
    ServerFacts,
    not_found_hint,
    server_message,
)
from evaluator.http_deadline import deadline_http_client, never_connected
from evaluator.prompt_logprobs import (
    NO_PROMPT_LOGPROBS,
    PROBE_CONTEXT_LENGTH,
    PROBE_TEXT,
    SCORING_PARAMS,
    LogprobRequest,
    continuation_logprob,
)
from evaluator.response_cache import ResponseCache, cache_key, reproducible
from evaluator.retry_policy import (
    MalformedResponseError,
    is_retryable,
    wait_retry_after_or_backoff,
)
from evaluator.server_facts import ServerUnreachableError, connection_reason, read_server_facts

# Sent when no key is set and a --base-url is given: local servers (vLLM, llama.cpp) ignore it.
LOCAL_SERVER_PLACEHOLDER_KEY = "no-key"
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,63}$")
_REDACTED = "[redacted]"
# HTTP statuses after which every further request would fail the same way.
_FATAL_STATUS = frozenset({401, 403, 404})


def _longest_answer(max_tokens: int) -> int:
    """The most characters an answer of ``max_tokens`` tokens can sensibly hold: 64 a token
    (tokens run a few characters; a long run of spaces or digits may be one), 16,384 at
    the least."""
    return max(64 * max_tokens, 16_384)


def _as_sent(response: openai.BaseModel) -> dict[str, Any]:
    """The response as the server sent it, as JSON.  A field of another shape than the
    SDK's model (``text_offset: 5``) is kept as sent, for the readers to refuse in one
    line; pydantic would also warn of each one, hundreds of lines of library source on
    the terminal before that line."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return response.model_dump(mode="json", exclude_unset=True)


class ClientConfigError(VetbenchError, ValueError):
    """The client cannot be set up (missing key, bad variable name); the message says how to fix it."""


Job = TypeVar("Job")
Result = TypeVar("Result")


class CallCounters:
    """Thread-safe tallies for a progress bar: ok, invalid, retried, failed, cached.

    The client counts ok, retried, failed and cached; ``invalid`` is for callers
    whose responses arrived but could not be used (generation rejects).
    """

    NAMES = ("ok", "invalid", "retried", "failed", "cached")

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._values = dict.fromkeys(self.NAMES, 0)

    def add(self, name: str, amount: int = 1) -> None:
        with self._lock:
            self._values[name] += amount

    def __getattr__(self, name: str) -> int:
        if name in CallCounters.NAMES:
            with self._lock:
                return self._values[name]
        raise AttributeError(name)

    def snapshot(self) -> dict[str, int]:
        with self._lock:
            return dict(self._values)


def read_api_key(api_key_env: str, *, base_url: str | None) -> str:
    """The key from ``$api_key_env``; a placeholder for a local server when it is unset."""
    if not _ENV_NAME.match(api_key_env or ""):
        # Never echo the value: people sometimes paste the key itself here.
        raise ClientConfigError(
            "--api-key-env takes the NAME of an environment variable that holds the key "
            "(e.g. OPENAI_API_KEY), not the key itself"
        )
    key = os.environ.get(api_key_env, "").strip()
    if key:
        return key
    if base_url:
        return LOCAL_SERVER_PLACEHOLDER_KEY
    raise ClientConfigError(
        f"no API key: set the environment variable {api_key_env} "
        "(or give --base-url for a local server that needs none)"
    )


class ChatClient:
    """Chat completions against one model on one OpenAI-compatible server."""

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key_env: str = DEFAULT_API_KEY_ENV,
        timeout: float = 60.0,
        max_retries: int = 5,
        concurrency: int = 4,
        database: Database | None = None,
        backoff_initial_s: float = 1.0,
        backoff_max_s: float = 60.0,
        counters: CallCounters | None = None,
        use_cache: bool = True,
    ) -> None:
        if not model.strip():
            raise ClientConfigError("the model name is empty")
        if timeout <= 0:
            raise ClientConfigError(f"timeout must be positive, got {timeout}")
        if max_retries < 0:
            raise ClientConfigError(f"max retries must be 0 or more, got {max_retries}")
        if concurrency < 1:
            raise ClientConfigError(f"concurrency must be at least 1, got {concurrency}")
        self.model = model
        self.api_key_env = api_key_env
        self.timeout = timeout
        self.max_retries = max_retries
        self.concurrency = concurrency
        self.max_wait = backoff_max_s
        self.counters = counters or CallCounters()
        self._key = read_api_key(api_key_env, base_url=base_url)
        # Each answer whole within ``timeout``, not each read of it (evaluator.http_deadline).
        self._openai = openai.OpenAI(
            base_url=base_url,
            api_key=self._key,
            timeout=timeout,
            max_retries=0,
            http_client=deadline_http_client(timeout),
        )
        # The URL actually used (openai also reads OPENAI_BASE_URL when none is given).
        self.base_url = str(self._openai.base_url).rstrip("/")
        if self._openai.base_url.scheme not in ("http", "https") or not self._openai.base_url.host:
            # Else every request fails as a connection error, retried, and the run with it.
            raise ClientConfigError(
                f"the base URL '{base_url or self.base_url}' is not an http:// or https:// address "
                "(e.g. http://127.0.0.1:8000/v1)"
            )
        # use_cache False (--no-cache): every request asked, nothing read or stored.
        self._cache = ResponseCache(database) if database is not None and use_cache else None
        self._facts: ServerFacts | None = None  # asked once (server_facts)
        self._facts_lock = threading.Lock()
        self._wait = wait_retry_after_or_backoff(initial=backoff_initial_s, maximum=backoff_max_s)
        self._adjustments_lock = threading.Lock()
        self._structured_supported: bool | None = None  # None until a server answers
        # OpenAI's reasoning models refuse max_tokens and want max_completion_tokens.
        self._token_parameter = "max_tokens"

    def __repr__(self) -> str:
        return (
            f"ChatClient(model={self.model!r}, base_url={self.base_url!r}, "
            f"api_key_env={self.api_key_env!r})"
        )

    @property
    def structured_output_supported(self) -> bool | None:
        """False once the server rejected ``response_format``; None before any answer."""
        with self._adjustments_lock:
            return self._structured_supported

    # -- one request -------------------------------------------------------------------

    def complete(
        self, request: ChatRequest, *, stop_event: threading.Event | None = None
    ) -> ChatOutcome:
        """Make one request (or answer it from the cache), retrying as the policy allows."""
        started = time.perf_counter()
        outcome = self._complete(request, stop_event or threading.Event())
        return replace(outcome, latency_s=time.perf_counter() - started)

    def _complete(self, request: ChatRequest, stop_event: threading.Event) -> ChatOutcome:
        structured = (
            request.json_schema is not None and self.structured_output_supported is not False
        )
        keys = self._cache_keys(request, structured)
        cached = self._cached(request, keys)
        if cached is not None:
            return cached
        try:
            response = None
            # Each adjustment happens at most once: structured output off, then the
            # token-limit parameter renamed for servers that refuse max_tokens.
            for _adjustment in range(3):
                try:
                    response = self._request_with_retries(request, structured, stop_event)
                    break
                except _StructuredOutputRejectedError:
                    with self._adjustments_lock:
                        self._structured_supported = False
                    structured = False
                except _TokenParameterRejectedError:
                    with self._adjustments_lock:
                        self._token_parameter = "max_completion_tokens"
                # An earlier run may have stored the answer to the adjusted request.
                cached = self._cached(request, self._cache_keys(request, structured))
                if cached is not None:
                    return cached
            if response is None:
                raise _Failed(ChatError("rejected", "the server refused every request form", 1))
        except ChatCancelledError:
            return ChatOutcome(request, error=ChatError("cancelled", "stopped before an answer", 0))
        except _Failed as failed:
            self.counters.add("failed")
            return ChatOutcome(request, error=failed.error)
        if structured:
            with self._adjustments_lock:
                self._structured_supported = True
        keys = self._cache_keys(request, structured)
        if self._cache is not None and keys:
            self._cache.put(keys[0], self.model, self._cache_record(response))  # as finally sent
        self.counters.add("ok")
        return ChatOutcome(request, response=response)

    def _cache_keys(self, request: ChatRequest, structured: bool) -> list[str]:
        """Keys to look up: the structured request's first (when wanted), then the plain one.
        None when the answer is not cached: no cache, a sampled request without a seed
        (``response_cache.reproducible``), or a server whose model list did not come."""
        server = self._server_identity()
        draw = {"draw": request.draw} if request.draw is not None else {}
        if server is None or not reproducible({**self._params(request, False), **draw}):
            return []
        variants = [True, False] if structured else [False]
        return [
            cache_key(
                model=self.model,
                base_url=self.base_url,
                messages=request.message_dicts(),
                params={**self._params(request, with_schema), **draw},
                server=server,
            )
            for with_schema in variants
        ]

    def _server_identity(self) -> dict[str, str] | None:
        """What the server says it serves, as cache keys take it; None without a cache, or
        when it is unknown (a server not reached now is asked by the requests, which
        fail as they would have)."""
        if self._cache is None:
            return None
        try:
            return self.server_facts().identity()
        except ClientConfigError:
            return None

    def _cached(self, request: ChatRequest, keys: list[str]) -> ChatOutcome | None:
        if self._cache is None:
            return None
        started = time.perf_counter()
        for key in keys:
            record = self._cache.get(key)
            if record is None:
                continue
            self.counters.add("ok")
            self.counters.add("cached")
            finish_reason, completion = record.get("finish_reason"), record.get("completion")
            response = ChatResponse(
                text=str(record.get("text", "")),
                finish_reason=finish_reason if isinstance(finish_reason, str) else None,
                structured=bool(record.get("structured", False)),
                cached=True,
                attempts=0,
                latency_s=time.perf_counter() - started,
                raw=dict(completion) if isinstance(completion, Mapping) else {},
            )
            return ChatOutcome(request, response=response)
        return None

    @staticmethod
    def _cache_record(response: ChatResponse) -> JsonObject:
        return {
            "text": response.text,
            "finish_reason": response.finish_reason,
            "structured": response.structured,
            "completion": response.raw,
        }

    def _params(self, request: ChatRequest, structured: bool) -> dict[str, Any]:
        """The parameters sent besides model and messages (also what the cache key covers)."""
        params: dict[str, Any] = {"temperature": request.temperature}
        if request.max_tokens is not None:
            with self._adjustments_lock:
                params[self._token_parameter] = request.max_tokens
        if request.stop:
            params["stop"] = list(request.stop)
        if request.seed is not None:
            params["seed"] = request.seed
        if structured and request.json_schema is not None:
            params["response_format"] = {
                "type": "json_schema",
                "json_schema": dict(request.json_schema),
            }
        return params

    def _retrying(self, stop_event: threading.Event) -> Retrying:
        """The retry policy: capped backoff honouring Retry-After, cancelled by ``stop_event``."""

        def sleep(seconds: float) -> None:
            if stop_event.wait(seconds):
                raise ChatCancelledError

        def count_retry(_state: RetryCallState) -> None:
            self.counters.add("retried")

        return Retrying(
            stop=stop_after_attempt(self.max_retries + 1),
            wait=self._wait,
            retry=retry_if_exception(is_retryable),
            sleep=sleep,
            before_sleep=count_retry,
            reraise=True,
        )

    def _request_with_retries(
        self, request: ChatRequest, structured: bool, stop_event: threading.Event
    ) -> ChatResponse:
        attempts = 0
        retrying = self._retrying(stop_event)
        params = self._params(request, structured)
        messages = request.message_dicts()

        def attempt() -> ChatResponse:
            nonlocal attempts
            if stop_event.is_set():
                raise ChatCancelledError
            attempts += 1
            started = time.perf_counter()
            try:
                completion = self._openai.chat.completions.create(
                    model=self.model,
                    messages=messages,  # type: ignore[arg-type]
                    **params,
                )
            except json.JSONDecodeError as error:
                raise MalformedResponseError(f"the response body is not JSON: {error}") from None
            return self._read_completion(
                completion, structured, attempts, started, max_tokens=request.max_tokens
            )

        try:
            return retrying(attempt)
        except ChatCancelledError:
            raise
        except openai.BadRequestError as error:
            if structured and _rejects_response_format(error):
                raise _StructuredOutputRejectedError from None
            if "max_tokens" in params and "max_completion_tokens" in _error_text(error):
                raise _TokenParameterRejectedError from None
            raise _Failed(self._describe_failure(error, attempts)) from None
        except Exception as error:
            raise _Failed(self._describe_failure(error, attempts)) from None

    def _read_completion(
        self,
        completion: Any,
        structured: bool,
        attempts: int,
        started: float,
        *,
        max_tokens: int | None = None,
    ) -> ChatResponse:
        """Check the completion's shape and turn it into a ``ChatResponse`` (redacted).
        An answer far longer than ``max_tokens`` tokens could be is refused: the server
        ignored the limit, and the text would be stored twice, megabytes an item."""
        if not isinstance(completion, openai.BaseModel):
            raise MalformedResponseError("the response is not a JSON chat completion")
        raw = _as_sent(completion)
        choices = raw.get("choices")
        if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
            said = server_message(raw.get("error"))  # an error sent with HTTP 200
            raise MalformedResponseError(
                "the response has no choices" + (f" (the server says: {said})" if said else "")
            )
        message = choices[0].get("message")
        if not isinstance(message, dict):
            raise MalformedResponseError("the response's first choice has no message")
        content = message.get("content")
        if content is None:  # a refusal, a tool call, reasoning out of budget: no answer
            reason = choices[0].get("finish_reason")
            raise MalformedResponseError(f"the message has no content (finish reason: {reason})")
        if not isinstance(content, str):
            raise MalformedResponseError("the response's message content is not text")
        if content and max_tokens is not None and len(content) > _longest_answer(max_tokens):
            raise MalformedResponseError(
                f"the answer is {len(content):,} characters long, more than {max_tokens:,} "
                "tokens can hold: the server did not keep to the token limit asked"
            )
        return ChatResponse(
            text=self._redact(content),
            finish_reason=choices[0].get("finish_reason"),
            structured=structured,
            cached=False,
            attempts=attempts,
            latency_s=time.perf_counter() - started,
            raw=json.loads(self._redact(json.dumps(raw, ensure_ascii=False))),
        )

    def _describe_failure(self, error: Exception, attempts: int) -> ChatError:
        if isinstance(error, openai.APITimeoutError):
            kind, message, status = "timeout", f"no answer within {self.timeout:g} s", None
        elif isinstance(error, openai.APIConnectionError) and never_connected(error.__cause__):
            kind, message, status = "connection", f"cannot reach {self.base_url}", None
        elif isinstance(error, openai.APIConnectionError):  # it answered, then broke off
            reason = connection_reason(error.__cause__) or type(error.__cause__).__name__
            message = f"the connection to {self.base_url} broke off mid-answer ({reason})"
            kind, status = "connection", None
        elif isinstance(error, MalformedResponseError):
            kind, message, status = "malformed", str(error), None
        elif isinstance(error, openai.APIStatusError):
            status = error.status_code
            kind = (
                "rate-limit"
                if status == 429
                else "server"
                if status >= 500 or status in (408, 409)
                else "rejected"
            )
            message = f"HTTP {status}: {_error_message(error)}"
            if status in (401, 403):
                message += f" (check the key in ${self.api_key_env})"
            elif status == 404:
                message += not_found_hint(self.model, self.base_url)
        else:
            kind, message, status = "rejected", f"{type(error).__name__}: {error}", None
        return ChatError(
            kind=kind,
            message=self._redact(message),
            attempts=attempts,
            status=status,
            fatal=status in _FATAL_STATUS,
        )

    def _redact(self, text: str) -> str:
        """Remove the key from text that came from a server (a hostile one might echo it)."""
        if self._key and self._key != LOCAL_SERVER_PLACEHOLDER_KEY and len(self._key) >= 4:
            return text.replace(self._key, _REDACTED)
        return text

    # -- log-probabilities (score mode) -------------------------------------------------

    def prompt_logprob(
        self, request: LogprobRequest, *, stop_event: threading.Event | None = None
    ) -> LogprobOutcome:
        """The log-probability of the request's continuation, from the completions endpoint
        with ``echo`` and ``logprobs`` (answered from the cache when it can be)."""
        started = time.perf_counter()
        stop_event = stop_event or threading.Event()
        server = self._server_identity()
        key = cache_key(
            model=self.model,
            base_url=self.base_url,
            messages=[{"role": "prompt", "content": request.text}],
            params={"endpoint": "completions", **SCORING_PARAMS},
            server=server,
        )
        cache = self._cache if server is not None else None
        record = cache.get(key) if cache is not None else None
        if record is not None:
            self.counters.add("ok")
            self.counters.add("cached")
        else:
            try:
                record = self._logprobs_with_retries(request, stop_event)
            except ChatCancelledError:
                error = ChatError("cancelled", "stopped before an answer", 0)
                return LogprobOutcome(request, error=error)
            except _Failed as failed:
                self.counters.add("failed")
                return LogprobOutcome(
                    request, error=failed.error, latency_s=time.perf_counter() - started
                )
            self.counters.add("ok")
            if cache is not None:
                cache.put(key, self.model, record)
        latency = time.perf_counter() - started
        try:
            total, tokens = continuation_logprob(record, request)
        except MalformedResponseError as error:
            failure = ChatError("malformed", self._redact(str(error)), 1, fatal=True)
            return LogprobOutcome(request, error=failure, latency_s=latency)
        return LogprobOutcome(request, total, tokens, latency_s=latency)

    def _logprobs_with_retries(
        self, request: LogprobRequest, stop_event: threading.Event
    ) -> JsonObject:
        attempts = 0

        def attempt() -> JsonObject:
            nonlocal attempts
            if stop_event.is_set():
                raise ChatCancelledError
            attempts += 1
            try:
                completion = self._openai.completions.create(
                    model=self.model, prompt=request.text, **SCORING_PARAMS
                )
            except json.JSONDecodeError as error:
                raise MalformedResponseError(f"the response body is not JSON: {error}") from None
            if not isinstance(completion, openai.BaseModel):
                raise MalformedResponseError("the response is not a JSON completion")
            raw = _as_sent(completion)
            return dict(json.loads(self._redact(json.dumps(raw, ensure_ascii=False))))

        try:
            return self._retrying(stop_event)(attempt)
        except ChatCancelledError:
            raise
        except Exception as error:
            failure = self._describe_failure(error, attempts)
            if failure.status in (400, 404, 422):  # no completions endpoint, or no echo
                failure = replace(
                    failure, message=f"{failure.message}; {NO_PROMPT_LOGPROBS}", fatal=True
                )
            raise _Failed(failure) from None

    def probe_prompt_logprobs(self) -> str | None:
        """Ask the server once, past the cache, whether it returns prompt log-probabilities:
        None when it does, else why not (one line, from the server's answer or failure)."""
        request = LogprobRequest(PROBE_TEXT, PROBE_CONTEXT_LENGTH)
        try:
            record = self._logprobs_with_retries(request, threading.Event())
            continuation_logprob(record, request)
        except _Failed as failed:
            return str(failed.error)
        except MalformedResponseError as error:
            return self._redact(str(error))
        return None

    def server_facts(self) -> ServerFacts:
        """What the server says about itself (:func:`evaluator.server_facts.read_server_facts`),
        asked once: a run's record and its cache keys name the same weights.  One that
        cannot be reached raises :class:`ClientConfigError` (and is asked again next time)."""
        with self._facts_lock:
            if self._facts is None:
                try:
                    self._facts = read_server_facts(
                        self._openai,
                        model=self.model,
                        base_url=self.base_url,
                        timeout=self.timeout,
                        redact=self._redact,
                    )
                except ServerUnreachableError as error:
                    raise ClientConfigError(str(error)) from None
            return self._facts

    def prompt_logprobs_all(
        self, requests: Iterable[LogprobRequest]
    ) -> Generator[LogprobOutcome, None, None]:
        """Like :meth:`complete_all`, for log-probability requests."""
        return self._all(self.prompt_logprob, requests)

    # -- many requests -----------------------------------------------------------------

    def complete_all(self, requests: Iterable[ChatRequest]) -> Generator[ChatOutcome, None, None]:
        """Run requests ``concurrency`` at a time; yield each outcome as soon as it is finished.

        When the consumer stops early (Ctrl-C, ``close()``), queued requests are
        dropped, waiting retries are abandoned, and the requests already on the
        wire are allowed to finish so that what was paid for lands in the cache.
        """
        return self._all(self.complete, requests)

    def _all(
        self,
        function: Callable[..., Result],
        requests: Iterable[Job],
    ) -> Generator[Result, None, None]:
        stop_event = threading.Event()
        source = iter(requests)
        pending: set[Future[Result]] = set()
        executor = ThreadPoolExecutor(
            max_workers=self.concurrency, thread_name_prefix="vetbench-api"
        )
        try:
            exhausted = False
            while True:
                # Keep the pool busy without reading the whole input up front.
                while not exhausted and len(pending) < 2 * self.concurrency:
                    try:
                        request = next(source)
                    except StopIteration:
                        exhausted = True
                        break
                    pending.add(executor.submit(function, request, stop_event=stop_event))
                if not pending:
                    return
                done, pending = wait(pending, return_when=FIRST_COMPLETED)
                for future in done:
                    yield future.result()
        finally:
            stop_event.set()
            executor.shutdown(wait=True, cancel_futures=True)

    def close(self) -> None:
        self._openai.close()


class _StructuredOutputRejectedError(Exception):
    """The server does not accept ``response_format``; resend as plain text."""


class _TokenParameterRejectedError(Exception):
    """The model refuses ``max_tokens``; resend with ``max_completion_tokens``."""


class _Failed(Exception):
    """Carries a ``ChatError`` out of the retry loop."""

    def __init__(self, error: ChatError) -> None:
        super().__init__(error.message)
        self.error = error


def _error_message(error: openai.APIStatusError) -> str:
    """The server's own words (:func:`server_message`; the openai package hands on the
    ``error`` value as ``body``), else the package's."""
    return server_message(error.body) or error.message


def _error_text(error: openai.APIStatusError) -> str:
    return f"{error.message} {error.body}".lower()


def _rejects_response_format(error: openai.BadRequestError) -> bool:
    text = _error_text(error)
    return "response_format" in text or "json_schema" in text or "response format" in text

"""The OpenAI-compatible client against a real HTTP server on 127.0.0.1: retries that honour
Retry-After, caps on attempts and waits, timeouts, the response cache, structured-output
fallback, bounded concurrency, cancellation, and that the API key never leaks."""

from __future__ import annotations

import threading
from datetime import UTC, datetime
from pathlib import Path

import pytest
from fake_openai_server import (
    FakeOpenAIServer,
    RecordedRequest,
    Reply,
    completion,
    echo_authorization,
    malformed,
    rate_limited,
    response_format_rejected,
    server_error,
)

from db.engine import Database
from evaluator.chat_calls import ChatRequest
from evaluator.openai_client import ChatClient, ClientConfigError, read_api_key
from evaluator.retry_policy import parse_retry_after

SECRET = "sk-test-5ecret-KEY-0123456789"
SCHEMA = {
    "name": "answer",
    "strict": True,
    "schema": {
        "type": "object",
        "properties": {"answer": {"type": "string"}},
        "required": ["answer"],
        "additionalProperties": False,
    },
}


@pytest.fixture(autouse=True)
def _api_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VETBENCH_TEST_KEY", SECRET)


def make_client(server: FakeOpenAIServer, **overrides: object) -> ChatClient:
    options: dict[str, object] = {
        "base_url": server.base_url,
        "api_key_env": "VETBENCH_TEST_KEY",
        "timeout": 0.5,
        "max_retries": 3,
        "backoff_initial_s": 0.0,
        "backoff_max_s": 0.05,
    }
    options.update(overrides)
    return ChatClient("fake-model", **options)  # type: ignore[arg-type]


def test_a_good_response_sends_the_request_as_given(server: FakeOpenAIServer) -> None:
    server.script(completion("D, A, C, B"))
    client = make_client(server)
    outcome = client.complete(
        ChatRequest.user("Order these events.", max_tokens=16, stop=("Question:",))
    )
    assert outcome.error is None and outcome.response is not None
    assert outcome.response.text == "D, A, C, B"
    assert outcome.response.attempts == 1 and not outcome.response.cached
    (request,) = server.chat_requests()
    assert request.body is not None
    assert request.body["model"] == "fake-model"
    assert request.body["messages"] == [{"role": "user", "content": "Order these events."}]
    assert request.body["temperature"] == 0.0
    assert request.body["max_tokens"] == 16
    assert request.body["stop"] == ["Question:"]
    assert "response_format" not in request.body
    assert client.counters.snapshot() == {
        "ok": 1,
        "invalid": 0,
        "retried": 0,
        "failed": 0,
        "cached": 0,
    }


def test_429_waits_at_least_what_retry_after_ms_asks(server: FakeOpenAIServer) -> None:
    # Backoff alone would wait ~0 s here, so a gap of 0.25 s can only come from the header.
    server.script(rate_limited(retry_after_ms="250"), completion("ok"))
    client = make_client(server, backoff_max_s=5.0)
    outcome = client.complete(ChatRequest.user("hi"))
    assert outcome.response is not None and outcome.response.attempts == 2
    first, second = server.chat_requests()
    assert second.received_at - first.received_at >= 0.25
    assert client.counters.retried == 1


def test_500_with_retry_after_seconds_is_honoured(server: FakeOpenAIServer) -> None:
    server.script(
        Reply(503, {"error": {"message": "overloaded"}}, {"Retry-After": "0.3"}),
        completion("ok"),
    )
    client = make_client(server, backoff_max_s=5.0)
    assert client.complete(ChatRequest.user("hi")).response is not None
    first, second = server.chat_requests()
    assert second.received_at - first.received_at >= 0.3


def test_a_huge_retry_after_is_capped_by_the_longest_wait(server: FakeOpenAIServer) -> None:
    server.script(rate_limited(retry_after="3600"), completion("ok"))
    outcome = make_client(server, backoff_max_s=0.05).complete(ChatRequest.user("hi"))
    assert outcome.response is not None and outcome.response.text == "ok"
    assert len(server.chat_requests()) == 2


def test_retry_after_http_date_and_milliseconds_are_read() -> None:
    now = datetime(2025, 1, 1, 12, 0, 0, tzinfo=UTC)
    assert parse_retry_after({"Retry-After": "Wed, 01 Jan 2025 12:00:30 GMT"}, now=now) == 30
    assert parse_retry_after({"Retry-After": "Wed, 01 Jan 2025 11:00:00 GMT"}, now=now) == 0
    assert parse_retry_after({"retry-after-ms": "1500", "Retry-After": "9"}) == 1.5
    assert parse_retry_after({"Retry-After": "7"}) == 7
    assert parse_retry_after({"Retry-After": "soon"}) is None
    assert parse_retry_after({}) is None


def test_server_errors_are_retried_up_to_the_cap(server: FakeOpenAIServer) -> None:
    server.default = lambda _request: server_error(500)
    client = make_client(server, max_retries=2)
    outcome = client.complete(ChatRequest.user("hi"))
    assert outcome.response is None and outcome.error is not None
    assert outcome.error.kind == "server" and outcome.error.status == 500
    assert outcome.error.attempts == 3
    assert len(server.chat_requests()) == 3
    assert client.counters.snapshot()["retried"] == 2
    assert client.counters.failed == 1


def test_a_flaky_server_costs_retries_not_the_answer(server: FakeOpenAIServer) -> None:
    server.script(rate_limited(retry_after="0"), server_error(502), malformed(), completion("ok"))
    client = make_client(server, max_retries=3)
    outcome = client.complete(ChatRequest.user("hi"))
    assert outcome.response is not None and outcome.response.text == "ok"
    assert outcome.response.attempts == 4
    assert client.counters.retried == 3 and client.counters.failed == 0


@pytest.mark.parametrize(
    "garbage",
    [
        malformed(),
        Reply(200, {"unexpected": "shape"}),
        Reply(200, "plain words", {"Content-Type": "text/plain"}),
    ],
    ids=["not-json", "no-choices", "not-a-completion"],
)
def test_malformed_bodies_are_retried_then_reported(
    server: FakeOpenAIServer, garbage: Reply
) -> None:
    server.default = lambda _request: garbage
    outcome = make_client(server, max_retries=1).complete(ChatRequest.user("hi"))
    assert outcome.error is not None and outcome.error.kind == "malformed"
    assert len(server.chat_requests()) == 2


def test_slow_answers_time_out_and_are_retried(server: FakeOpenAIServer) -> None:
    server.script(completion("too late", delay_s=5), completion("ok"))
    outcome = make_client(server, timeout=0.3).complete(ChatRequest.user("hi"))
    assert outcome.response is not None and outcome.response.text == "ok"
    assert len(server.chat_requests()) == 2

    server.default = lambda _request: completion("too late", delay_s=5)
    failed = make_client(server, timeout=0.3, max_retries=1).complete(ChatRequest.user("again"))
    assert failed.error is not None and failed.error.kind == "timeout"
    assert failed.error.attempts == 2
    assert len(server.chat_requests("again")) == 2


def test_client_errors_are_not_retried(server: FakeOpenAIServer) -> None:
    server.script(Reply(400, {"error": {"message": "max_tokens is too large"}}))
    outcome = make_client(server).complete(ChatRequest.user("hi"))
    assert outcome.error is not None
    assert outcome.error.kind == "rejected" and outcome.error.attempts == 1
    assert "max_tokens is too large" in outcome.error.message
    assert not outcome.error.fatal
    assert len(server.chat_requests()) == 1


def test_authentication_failure_is_fatal_and_names_the_variable_not_the_key(
    server: FakeOpenAIServer,
) -> None:
    server.script(Reply(401, {"error": {"message": "invalid api key"}}))
    outcome = make_client(server).complete(ChatRequest.user("hi"))
    assert outcome.error is not None and outcome.error.fatal
    assert "VETBENCH_TEST_KEY" in str(outcome.error)
    assert SECRET not in str(outcome.error)


def test_responses_are_cached_in_the_database(server: FakeOpenAIServer, database: Database) -> None:
    server.script(completion("first"), completion("other"))
    client = make_client(server, database=database)
    request = ChatRequest.user("same question", max_tokens=8)
    assert client.complete(request).response.text == "first"  # type: ignore[union-attr]

    again = make_client(server, database=database).complete(request)  # a new run
    assert again.response is not None
    assert again.response.cached and again.response.text == "first"
    assert len(server.chat_requests()) == 1  # the cache hit sent nothing

    changed = client.complete(ChatRequest.user("same question", max_tokens=9))
    assert changed.response is not None and changed.response.text == "other"
    assert len(server.chat_requests()) == 2


def test_failures_are_not_cached(server: FakeOpenAIServer, database: Database) -> None:
    server.script(server_error(500), completion("ok"))
    client = make_client(server, database=database, max_retries=0)
    assert client.complete(ChatRequest.user("hi")).error is not None
    assert client.complete(ChatRequest.user("hi")).response.text == "ok"  # type: ignore[union-attr]
    assert len(server.chat_requests()) == 2


def null_content(finish_reason: str) -> Reply:
    """A chat completion whose message has ``"content": null``: a refusal, a tool call, or
    a reasoning model that spent its budget thinking."""
    message = {"role": "assistant", "content": None, "reasoning_content": "Let me think"}
    choice = {"index": 0, "message": message, "finish_reason": finish_reason}
    return Reply(200, {"id": "chatcmpl-fake", "object": "chat.completion", "choices": [choice]})


def test_a_message_without_content_is_a_failure_never_cached(
    server: FakeOpenAIServer, database: Database
) -> None:
    """Before, null content was stored as an empty answer and cached: a later run against
    a healthy server took the empty answer from the cache (100% unparsed)."""
    server.script(null_content("length"), null_content("length"), completion("B"))
    outcome = make_client(server, database=database, max_retries=1).complete(ChatRequest.user("hi"))
    assert outcome.error is not None and outcome.error.kind == "malformed"
    assert outcome.error.message == "the message has no content (finish reason: length)"
    again = make_client(server, database=database).complete(ChatRequest.user("hi"))
    assert again.response is not None and not again.response.cached
    assert again.response.text == "B" and len(server.chat_requests()) == 3


def test_an_error_sent_with_http_200_keeps_the_servers_message(server: FakeOpenAIServer) -> None:
    server.default = lambda _request: Reply(200, {"error": {"message": "upstream overloaded"}})
    outcome = make_client(server, max_retries=1).complete(ChatRequest.user("hi"))
    assert outcome.error is not None and outcome.error.kind == "malformed"
    assert outcome.error.message == (
        "the response has no choices (the server says: upstream overloaded)"
    )


def test_structured_output_is_requested_with_the_schema(server: FakeOpenAIServer) -> None:
    server.script(completion('{"answer": "B"}'))
    client = make_client(server)
    outcome = client.complete(ChatRequest.user("hi", json_schema=SCHEMA))
    assert outcome.response is not None and outcome.response.structured
    (request,) = server.chat_requests()
    assert request.body is not None
    assert request.body["response_format"] == {"type": "json_schema", "json_schema": SCHEMA}
    assert client.structured_output_supported is True


def test_a_server_rejecting_response_format_gets_plain_text_from_then_on(
    server: FakeOpenAIServer, database: Database
) -> None:
    server.script(response_format_rejected(), completion("Answer: B"), completion("Answer: C"))
    client = make_client(server, database=database)
    first = client.complete(ChatRequest.user("one", json_schema=SCHEMA))
    assert first.response is not None and first.response.text == "Answer: B"
    assert not first.response.structured
    assert client.structured_output_supported is False
    assert client.counters.retried == 0  # a fallback is not a retry

    second = client.complete(ChatRequest.user("two", json_schema=SCHEMA))
    assert second.response is not None and second.response.text == "Answer: C"
    sent = [r.body for r in server.chat_requests()]
    assert [("response_format" in body) for body in sent if body] == [True, False, False]

    # A new run finds the plain-text answer in the cache without asking again.
    rerun = make_client(server, database=database).complete(
        ChatRequest.user("one", json_schema=SCHEMA)
    )
    assert rerun.response is not None and rerun.response.cached
    assert len(server.chat_requests()) == 3


def test_concurrency_is_bounded_and_every_outcome_comes_back(server: FakeOpenAIServer) -> None:
    server.default = lambda request: completion(request.user_text.upper(), delay_s=0.1)
    client = make_client(server, concurrency=3, timeout=5)
    requests = [ChatRequest.user(f"q{i}", tag=i) for i in range(9)]
    outcomes = list(client.complete_all(requests))
    assert sorted(o.request.tag for o in outcomes) == list(range(9))
    assert all(o.response and o.response.text == o.request.messages[0][1].upper() for o in outcomes)
    assert server.max_in_flight <= 3


def test_stopping_early_drops_queued_requests(server: FakeOpenAIServer) -> None:
    client = make_client(server, concurrency=1)
    outcomes = client.complete_all(ChatRequest.user(f"q{i}") for i in range(20))
    next(outcomes)
    outcomes.close()  # what Ctrl-C in the consumer does
    assert len(server.chat_requests()) <= 3


def test_a_stop_interrupts_a_retry_wait(server: FakeOpenAIServer) -> None:
    server.script(rate_limited(retry_after="60"))
    client = make_client(server, backoff_max_s=60)
    stop = threading.Event()
    result: list[object] = []
    worker = threading.Thread(
        target=lambda: result.append(client.complete(ChatRequest.user("hi"), stop_event=stop))
    )
    worker.start()
    assert server.wait_for_requests(1)
    stop.set()
    worker.join(timeout=10)
    assert not worker.is_alive()
    (outcome,) = result
    assert outcome.error is not None and outcome.error.kind == "cancelled"  # type: ignore[attr-defined]
    assert len(server.chat_requests()) == 1


def test_the_key_never_leaves_the_authorization_header(
    server: FakeOpenAIServer, database: Database, db_path: Path
) -> None:
    server.script(completion("fine"))
    server.default = echo_authorization
    client = make_client(server, database=database, max_retries=1)
    assert client.complete(ChatRequest.user("one")).response is not None
    failed = client.complete(ChatRequest.user("two"))
    assert failed.error is not None
    assert SECRET not in str(failed.error) and SECRET not in repr(failed)
    assert SECRET not in repr(client)
    assert all(r.headers["authorization"] == f"Bearer {SECRET}" for r in server.chat_requests())
    assert SECRET not in server.everything_received()
    database.dispose()
    for path in db_path.parent.glob(db_path.name + "*"):
        assert SECRET.encode() not in path.read_bytes()


def test_api_key_configuration_errors_never_echo_a_key(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ClientConfigError) as pasted:
        read_api_key(SECRET, base_url=None)
    assert SECRET not in str(pasted.value)
    monkeypatch.delenv("MISSING_KEY_VAR", raising=False)
    with pytest.raises(ClientConfigError, match="MISSING_KEY_VAR"):
        read_api_key("MISSING_KEY_VAR", base_url=None)
    # A local server needs no key: a placeholder is sent instead.
    assert read_api_key("MISSING_KEY_VAR", base_url="http://127.0.0.1:1/v1") == "no-key"


@pytest.mark.parametrize("base_url", ["localhost:8000/v1", "ftp://example.org/v1", "http:///v1"])
def test_a_base_url_that_is_no_http_address_is_refused_before_any_request(base_url: str) -> None:
    """Else every request fails as a connection error, is retried, and fails the run."""
    with pytest.raises(ClientConfigError, match="is not an http:// or https:// address"):
        ChatClient("m", base_url=base_url)
    assert ChatClient("m", base_url="https://example.org/v1").base_url == "https://example.org/v1"


def test_a_model_refusing_max_tokens_gets_max_completion_tokens(
    server: FakeOpenAIServer,
) -> None:
    message = "Unsupported parameter: 'max_tokens'. Use 'max_completion_tokens' instead."

    def reasoning_model(request: RecordedRequest) -> Reply:
        if request.body and "max_tokens" in request.body:
            return Reply(400, {"error": {"message": message}})
        return completion("fine")

    server.default = reasoning_model
    client = make_client(server)
    for text in ("one", "two"):
        outcome = client.complete(ChatRequest.user(text, max_tokens=50))
        assert outcome.response is not None and outcome.response.text == "fine"
    bodies = [r.body or {} for r in server.chat_requests()]
    assert [("max_tokens" in b, b.get("max_completion_tokens")) for b in bodies] == [
        (True, None),
        (False, 50),
        (False, 50),
    ]

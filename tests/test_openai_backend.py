"""The OpenAI-compatible backend against a real HTTP server on 127.0.0.1: greedy requests built
from the Backend protocol's records, results as they finish, transport failures as errors
(not answers), the response cache, and score mode through the completions endpoint's
prompt log-probabilities (as vLLM serves them), concurrently."""

from __future__ import annotations

import csv
import json
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from fake_openai_server import FakeOpenAIServer, RecordedRequest, Reply, completion, server_error
from sqlmodel import select

from db.engine import Database, open_database
from db.models import Prediction
from db.vocabulary import FailureKind
from evaluator.backends.base import BackendError, GenerationRequest, Prompt, ScoringRequest
from evaluator.backends.openai_backend import OpenAIBackend

SECRET = "sk-backend-SECRET-1122334455"
KEY_ENV = "VETBENCH_BACKEND_TEST_KEY"
ECON_CSV = Path(__file__).resolve().parent.parent / "fixtures" / "econ_ordering.csv"


@pytest.fixture(autouse=True)
def _api_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(KEY_ENV, SECRET)


def make_backend(server: FakeOpenAIServer, **overrides: object) -> OpenAIBackend:
    options: dict[str, object] = {
        "base_url": server.base_url,
        "api_key_env": KEY_ENV,
        "timeout": 0.5,
        "max_retries": 1,
        "backoff_max_s": 0.01,
    }
    options.update(overrides)
    return OpenAIBackend("fake-model", **options)  # type: ignore[arg-type]


def request(item_id: str, question: str, **kwargs: object) -> GenerationRequest:
    prompt = Prompt(prefix="Put the events in order.\n\n", question=question)
    return GenerationRequest(item_id=item_id, prompt=prompt, **kwargs)  # type: ignore[arg-type]


def answer_by_item(recorded: RecordedRequest) -> Reply:
    # "Question 3 ..." -> "D, A, C, B" followed by a new question the stop should cut.
    return completion(f" D, A, C, B\n\nQuestion: next ({recorded.user_text[-12:]})")


def test_requests_are_greedy_user_messages_with_stops_and_budget(
    server: FakeOpenAIServer,
) -> None:
    server.default = answer_by_item
    backend = make_backend(server, concurrency=3)
    stops = ("\n\n", "\nQuestion:")
    requests = [
        request(f"item:{i}", f"Question {i}\nAnswer:", stop=stops, max_new_tokens=24)
        for i in range(7)
    ]
    results = list(backend.generate(requests))
    assert sorted(r.item_id for r in results) == sorted(r.item_id for r in requests)
    for result in results:
        assert result.error is None
        assert result.output == " D, A, C, B"  # cut at the blank line
        assert result.prompt_text.startswith("Put the events in order.\n\nQuestion ")
    for recorded in server.chat_requests():
        body = recorded.body
        assert body is not None
        assert body["model"] == "fake-model" and body["temperature"] == 0.0
        assert body["max_tokens"] == 24 and body["stop"] == list(stops)
        assert body["messages"][0]["role"] == "user"
        assert body["messages"][0]["content"].startswith("Put the events in order.")
    assert server.max_in_flight <= 3


def test_transport_failures_come_back_as_errors_not_answers(server: FakeOpenAIServer) -> None:
    def broken_for_two(recorded: RecordedRequest) -> Reply:
        if "broken" in recorded.user_text:
            return server_error(500)
        if "slow" in recorded.user_text:
            return completion("B", delay_s=5)
        return completion("B")

    server.default = broken_for_two
    backend = make_backend(server)
    results = {
        r.item_id: r
        for r in backend.generate(
            [request("ok", "fine"), request("bad", "broken"), request("late", "slow")]
        )
    }
    assert results["ok"].error is None and results["ok"].output == "B"
    assert results["bad"].error is not None and "HTTP 500" in results["bad"].error
    assert "2 attempts" in results["bad"].error and results["bad"].output == ""
    assert results["late"].error is not None and "timeout" in results["late"].error
    assert len(server.chat_requests("broken")) == 2  # max_retries=1: retried once
    assert all(SECRET not in (r.error or "") for r in results.values())


def test_answers_are_cached_so_a_repeated_run_costs_nothing(
    server: FakeOpenAIServer, database: Database
) -> None:
    server.default = lambda _r: completion("A")
    first = make_backend(server, database=database)
    assert [r.output for r in first.generate([request("x", "q")])] == ["A"]
    second = make_backend(server, database=database)
    assert [r.output for r in second.generate([request("x", "q")])] == ["A"]
    assert len(server.chat_requests()) == 1


def test_info_names_the_server_never_the_key(server: FakeOpenAIServer) -> None:
    backend = make_backend(server)
    assert backend.info.backend == "openai" and backend.info.model == "fake-model"
    assert backend.info.params["base_url"] == server.base_url
    assert SECRET not in repr(backend.info) and SECRET not in repr(backend)
    backend.close()


def test_info_records_what_the_server_says_it_serves(server: FakeOpenAIServer) -> None:
    """vLLM lists a model served under an alias with the weights behind it (``root``) and
    tells its version at /version; both are recorded, and what is not said is left out."""
    server.models = [
        {"id": "other", "object": "model", "root": "org/other"},
        {"id": "fake-model", "object": "model", "root": "org/Real-7B", "owned_by": "vllm"},
    ]
    server.version = "0.9.1"
    params = make_backend(server).info.params
    assert params["server_model_id"] == "fake-model"
    assert params["server_model_root"] == "org/Real-7B"
    assert params["server_version"] == "0.9.1"
    server.models, server.version = [{"id": "fake-model", "object": "model"}], None
    params = make_backend(server).info.params
    assert params["server_model_id"] == "fake-model"
    assert "server_model_root" not in params and "server_version" not in params
    assert server.requests == []  # asked with GETs: nothing generated


def test_scoring_is_probed_once_and_refused_with_the_servers_reason(
    server: FakeOpenAIServer,
) -> None:
    backend = make_backend(server)
    assert backend.supports_scoring is True and backend.supports_scoring is True
    assert len(server.completion_requests()) == 1  # asked once, past any cache
    server.prompt_logprobs = False
    refused = make_backend(server)
    with pytest.raises(BackendError) as caught:
        _ = refused.supports_scoring
    message = str(caught.value)
    assert message.startswith(f"openai:fake-model at {server.base_url} cannot score: ")
    assert "no log-probabilities of the prompt" in message and "\n" not in message


@pytest.mark.parametrize(
    ("body", "shown"),
    [
        ({"detail": "Server is pinned to 'x'; requested 'y'."}, "HTTP 400: Server is pinned"),
        (
            {"detail": [{"loc": ["body", "max_tokens"], "msg": "Input should be an integer"}]},
            "HTTP 400: Input should be an integer",
        ),
        ({"error": "the worker died"}, "HTTP 400: the worker died"),
        ({"error": {"message": "context too long", "type": "x"}}, "HTTP 400: context too long"),
    ],
)
def test_error_bodies_of_every_shape_reach_the_result(
    server: FakeOpenAIServer, body: dict[str, object], shown: str
) -> None:
    """FastAPI's ``detail`` (transformers serve), a bare ``error`` string, OpenAI's shape."""
    server.default = lambda _r: Reply(400, body)
    (result,) = make_backend(server).generate([request("x", "q")])
    assert result.error is not None and result.error.startswith(shown), result.error


def prefers(answer: str) -> Callable[[str, str], float]:
    """A fake model that gives each letter of ``answer``, in turn after "Answer:", -0.1 and
    any other letter -3 (punctuation and prompt tokens -0.5)."""

    def logprob(before: str, token: str) -> float:
        if "Answer:" not in before:
            return -0.5
        written = "".join(ch for ch in before.rsplit("Answer:", 1)[1] if ch.isupper())
        letter = token.strip()
        if not (letter.isalpha() and letter.isupper()):
            return -0.5
        wanted = answer[len(written)] if len(written) < len(answer) else None
        return -0.1 if letter == wanted else -3.0

    return logprob


def test_score_mode_sums_the_candidates_prompt_logprobs(server: FakeOpenAIServer) -> None:
    server.logprob = prefers("CA")
    backend = make_backend(server)
    prompt = Prompt("Put the events in order.\n\n", "Question: q\nAnswer:")
    candidates = (" A, C", " C, A", " B, D")
    (result,) = backend.score([ScoringRequest("x", prompt, candidates)])
    assert result.error is None and result.prompt_text == prompt.text
    # " C, A": -0.1 (C) -0.5 (,) -0.1 (A); the others miss one or both letters
    assert result.log_likelihoods == pytest.approx((-6.5, -0.7, -6.5))
    # The candidates go out concurrently: one request each, in whatever order they arrive.
    bodies = [sent.body or {} for sent in server.completion_requests()]
    assert sorted(body["prompt"] for body in bodies) == sorted(prompt.text + c for c in candidates)
    for body in bodies:
        assert body["echo"] is True and body["logprobs"] == 1
        assert body["max_tokens"] == 1 and body["temperature"] == 0
    backend.close()


def test_score_mode_without_prompt_logprobs_says_so(server: FakeOpenAIServer) -> None:
    server.prompt_logprobs = False
    backend = make_backend(server)
    (result,) = backend.score([ScoringRequest("x", Prompt("", "Answer:"), (" A", " B"))])
    assert result.log_likelihoods == () and result.error is not None
    assert (
        "no log-probabilities of the prompt" in result.error and "--mode generate" in result.error
    )
    backend.close()


def test_score_mode_refuses_log_probabilities_that_are_not_numbers(
    server: FakeOpenAIServer, recwarn: pytest.WarningsRecorder
) -> None:
    """A NaN ranked nothing (every candidate tied, and the item was scored wrong); a
    logprobs object of another shape is one error, without pydantic's warnings."""
    server.logprob = lambda _before, _token: float("nan")
    backend = make_backend(server)
    (result,) = backend.score([ScoringRequest("x", Prompt("", "Answer:"), (" A", " B"))])
    assert result.log_likelihoods == () and result.error is not None
    assert "log-probabilities are not numbers (nan)" in result.error
    logprobs = {"tokens": "oops", "text_offset": 5, "token_logprobs": {"a": 1}}
    choice = {"index": 0, "text": "x", "logprobs": logprobs, "finish_reason": "length"}
    body = {"id": "c", "object": "text_completion", "created": 1, "model": "m", "choices": [choice]}
    server.echo_completion = lambda _request: Reply(200, body)  # type: ignore[method-assign]
    (result,) = backend.score([ScoringRequest("y", Prompt("", "Another:"), (" A", " B"))])
    assert result.error is not None and "no log-probabilities of the prompt" in result.error
    assert [str(w.message) for w in recwarn if "Pydantic" in str(w.message)] == []
    backend.close()


def test_an_answer_far_longer_than_the_token_limit_is_a_failed_call(
    server: FakeOpenAIServer,
) -> None:
    """A server that ignores max_tokens and sends megabytes: a failed call (retried by
    --resume), nothing of it stored or cached; an answer within the limit is read."""
    server.script(completion("D" * 1_000_000), completion(" D, A, C, B"))
    backend = make_backend(server, max_retries=0)
    (result,) = backend.generate([request("x", "q", max_new_tokens=24)])
    assert result.output == "" and result.error is not None
    assert "1,000,000 characters long, more than 24 tokens can hold" in result.error
    (result,) = backend.generate([request("y", "another q", max_new_tokens=24)])
    assert result.error is None and result.output == " D, A, C, B"
    backend.close()


def test_an_answer_sent_a_byte_at_a_time_times_out_whole(server: FakeOpenAIServer) -> None:
    """--timeout bounds the whole answer, not each read of it: a server dripping its body
    a byte every 50 ms (each read in time) held a run for minutes."""
    slow = completion(" D, A, C, B")
    server.script(replace(slow, drip_s=0.05))
    backend = make_backend(server, timeout=0.5, max_retries=0)
    started = time.monotonic()
    (result,) = backend.generate([request("x", "q")])
    assert result.error is not None and "no answer within 0.5 s" in result.error
    assert time.monotonic() - started < 5
    backend.close()


def test_a_connection_that_breaks_mid_answer_is_not_called_unreachable(
    server: FakeOpenAIServer,
) -> None:
    """A server that answered in part and closed the connection was reported as one the
    client "cannot reach", which sends people to check a server that is up."""
    server.script(replace(completion(" D, A, C, B"), cut_at=20))
    backend = make_backend(server, max_retries=0)
    (result,) = backend.generate([request("x", "q")])
    assert result.error is not None
    assert result.error.startswith(f"the connection to {server.base_url} broke off mid-answer (")
    assert "cannot reach" not in result.error
    backend.close()


def test_score_requests_run_concurrently(server: FakeOpenAIServer) -> None:
    server.completion_delay_s = 0.2
    backend = make_backend(server, concurrency=4, timeout=5)
    requests = [
        ScoringRequest(f"item{n}", Prompt("", f"Question {n}\nAnswer:"), (" A", " B"))
        for n in range(4)
    ]
    results = list(backend.score(requests))
    assert sorted(r.item_id for r in results) == [f"item{n}" for n in range(4)]
    assert all(r.error is None and len(r.log_likelihoods) == 2 for r in results)
    assert server.max_in_flight > 1  # several candidates were on the wire at once
    backend.close()


def test_more_stops_than_the_api_takes_are_applied_here(server: FakeOpenAIServer) -> None:
    server.default = lambda _r: completion("C then E stop here")
    backend = make_backend(server)
    stops = ("\n\n", "\nQuestion:", "###", "<|end|>", " then")
    (result,) = backend.generate([request("x", "q", stop=stops)])
    assert result.output == "C"
    (recorded,) = server.chat_requests()
    assert recorded.body is not None and recorded.body["stop"] == list(stops[:4])


@pytest.mark.parametrize(
    ("answer", "output"),
    [
        ("\n\nB\n\nQuestion", "\n\nB"),  # a leading blank line is not a stop
        ("B", "B"),  # no stop: the whole answer
        ("A\nQuestion: x", "A"),
    ],
)
def test_answers_are_cut_as_every_backend_cuts_them(
    server: FakeOpenAIServer, answer: str, output: str
) -> None:
    server.default = lambda _r: completion(answer)
    backend = make_backend(server)
    (result,) = backend.generate([request("x", "q", stop=("\n\n", "\nQuestion:"))])
    assert result.output == output
    backend.close()


@pytest.mark.parametrize(
    ("answer", "finish_reason", "output"),
    [
        # `transformers serve` decodes a budget-cut answer whole: 龘's first bytes give U+FFFD
        ("答\ufffd案：\ufffd", "length", "答\ufffd案："),
        ("答\ufffd案：龘", "length", "答\ufffd案：龘"),
        ("答案：\ufffd", "stop", "答案：\ufffd"),  # the model ended there: its own text
    ],
)
def test_a_character_the_budget_cut_off_is_dropped_as_the_local_backend_drops_it(
    server: FakeOpenAIServer, answer: str, finish_reason: str, output: str
) -> None:
    server.default = lambda _r: completion(answer, finish_reason=finish_reason)
    backend = make_backend(server)
    (result,) = backend.generate([request("x", "q", stop=("\n\n",))])
    assert result.output == output and result.truncated == (finish_reason == "length")
    backend.close()


def eval_fixture_items(
    runner: CliRunner, db_path: Path, server: FakeOpenAIServer, *options: str
) -> Result:
    """Import the fixture ordering items, then `vetbench eval` an API model on them (0 shots)."""
    from reviewer.cli import cli

    db = ["--db", str(db_path)]
    assert runner.invoke(cli, [*db, "import", str(ECON_CSV)]).exit_code == 0
    model = server.cli_options("openai:fake-model", KEY_ENV)
    chosen = ["--status", "all", "--shots", "0", "--json"]
    return runner.invoke(cli, [*db, "eval", *model, *chosen, *options])


def test_vetbench_eval_records_transport_failures_and_resume_retries_them(
    server: FakeOpenAIServer, db_path: Path
) -> None:
    pytest.importorskip("evaluator.runner")
    from reviewer.cli import cli

    with ECON_CSV.open(encoding="utf-8", newline="") as handle:
        scenarios = [row["Question"] for row in csv.DictReader(handle)][:6]
    broken = scenarios[1:3]

    def down_for_two(recorded: RecordedRequest) -> Reply:
        if any(scenario in recorded.user_text for scenario in broken):
            # Retry-After 0 keeps the client's retries instant; they are still exhausted.
            return Reply(500, {"error": {"message": "upstream down"}}, {"Retry-After": "0"})
        return completion("D, A, C, B")

    server.default = down_for_two
    runner = CliRunner()
    db = ["--db", str(db_path)]
    first = eval_fixture_items(runner, db_path, server, "--limit", "6")
    figures = json.loads(first.stdout)
    run_id = figures["run_id"]
    assert figures["infrastructure_failures"] == 2
    # A run with failures left is no whole run to a script: exit status 75, and how to finish
    assert first.exit_code == 75, first.output
    assert f"`vetbench eval --resume {run_id}` asks again for those only" in first.stderr
    assert figures["run"]["backend"] == "openai" and figures["run"]["model"] == "fake-model"
    assert figures["run"]["params"]["base_url"] == server.base_url
    database = open_database(db_path)
    with database.session() as session:
        predictions = {
            p.item_id: p
            for p in session.exec(select(Prediction).where(Prediction.run_id == run_id))
        }
    failed = {i for i, p in predictions.items() if p.failure_kind == FailureKind.INFRASTRUCTURE}
    assert len(predictions) == 6 and len(failed) == 2
    assert all(
        predictions[i].correct is None and "HTTP 500" in (predictions[i].error or "")
        for i in failed
    )
    asked_once = len(server.chat_requests())

    server.default = lambda _recorded: completion("D, A, C, B")
    resumed = runner.invoke(
        cli, [*db, "eval", "--resume", str(run_id), "--api-key-env", KEY_ENV, "--json"]
    )
    assert resumed.exit_code == 0, resumed.output
    assert json.loads(resumed.stdout)["infrastructure_failures"] == 0
    # Only the two failed items were asked again (base URL taken from the run).
    assert len(server.chat_requests()) == asked_once + 2
    with database.session() as session:
        after = list(session.exec(select(Prediction).where(Prediction.run_id == run_id)))
    assert {p.item_id for p in after} == set(predictions)
    assert all(p.failure_kind is None and p.parsed_answer == "DACB" for p in after)
    assert SECRET.encode() not in db_path.read_bytes()
    database.dispose()


def test_a_resumed_run_asks_with_the_api_settings_it_was_started_with(
    server: FakeOpenAIServer, db_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Resuming read $OPENAI_API_KEY and the default limits: a keyed server said 401.
    The run records the key's variable (never the key) and the client's limits, and a
    resume uses them unless given again; the stored params say what it last used."""
    from reviewer.cli import cli

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with ECON_CSV.open(encoding="utf-8", newline="") as handle:
        broken = [row["Question"] for row in csv.DictReader(handle)][1]

    def keyed(recorded: RecordedRequest) -> Reply:
        if recorded.headers.get("authorization") != f"Bearer {SECRET}":
            return Reply(401, {"error": {"message": "invalid API key"}})
        if broken in recorded.user_text:
            return Reply(500, {"error": {"message": "upstream down"}}, {"Retry-After": "0"})
        return completion("D, A, C, B")

    server.default = keyed
    limits = ["--concurrency", "2", "--timeout", "7", "--max-retries", "1", "--max-wait", "0.5"]
    first = json.loads(
        eval_fixture_items(CliRunner(), db_path, server, "--limit", "3", *limits).stdout
    )
    assert first["infrastructure_failures"] == 1
    recorded = {"api_key_env": KEY_ENV, "concurrency": 2, "timeout_s": 7.0, "max_retries": 1}
    assert recorded.items() <= first["run"]["params"].items()
    assert first["run"]["params"]["max_wait_s"] == 0.5

    broken = "no such question"  # the server is back
    asked = len(server.requests)
    resumed = CliRunner().invoke(
        cli,
        [
            "--db",
            str(db_path),
            "eval",
            "--resume",
            str(first["run_id"]),
            "--max-retries",
            "0",
            "--json",
        ],
    )
    assert resumed.exit_code == 0, resumed.output
    figures = json.loads(resumed.stdout)
    assert figures["infrastructure_failures"] == 0
    assert all(
        request.headers.get("authorization") == f"Bearer {SECRET}"
        for request in server.requests[asked:]
    )
    params = figures["run"]["params"]
    assert {**recorded, "max_retries": 0}.items() <= params.items()  # given again: 0
    assert params["max_wait_s"] == 0.5
    assert SECRET.encode() not in db_path.read_bytes()


def test_vetbench_eval_takes_the_clients_timeout_retries_and_concurrency(
    server: FakeOpenAIServer, db_path: Path
) -> None:
    """A server slower than --timeout costs one try per item with --max-retries 0."""

    server.default = lambda _recorded: completion("D, A, C, B", delay_s=5.0)
    result = eval_fixture_items(
        CliRunner(),
        db_path,
        server,
        "--limit",
        "3",
        "--timeout",
        "0.3",
        "--max-retries",
        "0",
        "--concurrency",
        "3",
    )
    figures = json.loads(result.stdout)
    assert figures["infrastructure_failures"] == 3
    params = figures["run"]["params"]
    assert (params["timeout_s"], params["max_retries"], params["concurrency"]) == (0.3, 0, 3)
    assert len(server.chat_requests()) == 3  # no retries
    database = open_database(db_path)
    with database.session() as session:
        errors = [p.error or "" for p in session.exec(select(Prediction))]
    database.dispose()
    assert len(errors) == 3 and all("no answer within 0.3 s" in error for error in errors)

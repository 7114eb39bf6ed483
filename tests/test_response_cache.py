"""The API response cache through `vetbench eval` and the client, against a real HTTP server
on 127.0.0.1 and a real database: what the server says it serves is part of a request's
key (other weights under the same name are never answered with the old ones' answers),
a sampled request without a seed is never answered from it, a run says how many of its
answers came from it, and `--no-cache` asks the server again."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from click.testing import Result
from eval_helpers import ok, stored_runs
from fake_openai_server import FakeOpenAIServer, completion
from helpers import run_cli
from sqlmodel import select

from db.engine import Database, open_database
from db.models import Prediction
from evaluator.chat_calls import ChatRequest
from evaluator.openai_client import ChatClient

KEY_ENV = "CACHE_TEST_KEY"


@pytest.fixture(autouse=True)
def _api_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(KEY_ENV, "sk-cache-test")


@pytest.fixture
def url(approved: list[str], database_url: str) -> str:
    """A database holding the evaluator's mixed set (8 approved items)."""
    return database_url


def serve(server: FakeOpenAIServer, weights: str, answer: str) -> None:
    """The server now serves ``weights`` under the name ``m1`` (as vLLM started with
    ``--served-model-name m1``) and answers every question with ``answer``."""
    server.models = [{"id": "m1", "object": "model", "root": weights}]
    server.default = lambda _request: completion(answer)


def evaluate(url: str, server: FakeOpenAIServer, *args: str) -> Result:
    options = server.cli_options("openai:m1", KEY_ENV)
    return run_cli(url, "eval", *options, "--shots", "0", *args)


def outputs(url: str, run_id: int) -> list[str]:
    database = open_database(url)
    try:
        with database.session() as session:
            query = select(Prediction).where(Prediction.run_id == run_id)
            return [prediction.raw_output for prediction in session.exec(query)]
    finally:
        database.dispose()


def test_other_weights_under_the_same_name_are_asked_not_answered_from_the_cache(
    url: str, server: FakeOpenAIServer
) -> None:
    """The tester's case: a new run after the server was restarted with other weights
    under the same name and URL got every answer from the first weights' cache."""
    serve(server, "weights-A", "A")
    first = json.loads(ok(evaluate(url, server, "--json")).stdout)
    asked = len(server.chat_requests())
    assert asked == first["progress"]["done"] > 0
    serve(server, "weights-B", "B")
    second = json.loads(ok(evaluate(url, server, "--json")).stdout)
    assert len(server.chat_requests()) == 2 * asked  # every item asked again
    assert set(outputs(url, second["run_id"])) == {"B"}
    assert second["run"]["params"]["server_model_root"] == "weights-B"
    # The same weights again: answered from the cache, and the text says so.
    serve(server, "weights-A", "not asked")
    third = ok(evaluate(url, server))
    assert len(server.chat_requests()) == 2 * asked
    assert (
        f"cache         {asked} of {asked} answers from the response cache (asked before "
        "with the same requests); --no-cache asks the server again"
    ) in third.stdout
    assert set(outputs(url, 3)) == {"A"}


def test_another_server_version_is_asked_again(url: str, server: FakeOpenAIServer) -> None:
    serve(server, "weights-A", "A")
    server.version = "0.9.1"
    ok(evaluate(url, server, "--limit", "2"))
    server.version = "0.10.0"
    ok(evaluate(url, server, "--limit", "2"))
    assert len(server.chat_requests()) == 4


def test_a_server_that_says_nothing_keeps_the_keys_it_had(
    url: str, server: FakeOpenAIServer
) -> None:
    """No root and no version (OpenAI's own API lists names only): the key is what it was
    before servers were asked, so answers cached then are still found."""
    from evaluator.response_cache import cache_key

    server.models = [{"id": "m1", "object": "model"}]
    server.default = lambda _request: completion("A")
    plain = cache_key(
        model="m1",
        base_url=server.base_url,
        messages=[{"role": "user", "content": "q"}],
        params={"temperature": 0.0},
    )
    assert plain == cache_key(
        model="m1",
        base_url=server.base_url,
        messages=[{"role": "user", "content": "q"}],
        params={"temperature": 0.0},
        server={},
    )
    ok(evaluate(url, server, "--limit", "2"))
    again = ok(evaluate(url, server, "--limit", "2"))
    assert len(server.chat_requests()) == 2
    assert "2 of 2 answers from the response cache" in again.stdout


def test_no_cache_asks_the_server_and_leaves_the_cache_as_it_was(
    url: str, server: FakeOpenAIServer
) -> None:
    serve(server, "weights-A", "A")
    ok(evaluate(url, server, "--limit", "2"))
    server.default = lambda _request: completion("B")  # the same weights, as it says
    fresh = ok(evaluate(url, server, "--limit", "2", "--no-cache"))
    assert len(server.chat_requests()) == 4
    assert set(outputs(url, 2)) == {"B"} and "response cache" not in fresh.stdout
    assert stored_runs(url)[1].params["response_cache"] is False
    # Nothing stored by --no-cache: a plain run still finds the first answers.
    ok(evaluate(url, server, "--limit", "2"))
    assert len(server.chat_requests()) == 4 and set(outputs(url, 3)) == {"A"}


def interrupted_after(count: int) -> Any:
    """Patch for OpenAIBackend.generate: Ctrl-C once ``count`` results are yielded."""
    from evaluator.backends.openai_backend import OpenAIBackend

    real = OpenAIBackend.generate

    def generate(self: OpenAIBackend, requests: Any) -> Iterator[Any]:
        for done, result in enumerate(real(self, requests)):
            if done == count:
                raise KeyboardInterrupt
            yield result

    return real, generate


def test_a_resume_reuses_what_the_interrupted_run_got(
    url: str, server: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Answers that came back after Ctrl-C are in the cache: the resume takes them (the
    server says the same weights), and asks only for the rest."""
    from evaluator.backends.openai_backend import OpenAIBackend

    serve(server, "weights-A", "A")
    real, generate = interrupted_after(2)
    monkeypatch.setattr(OpenAIBackend, "generate", generate)
    assert evaluate(url, server, "--concurrency", "1").exit_code == 130
    monkeypatch.setattr(OpenAIBackend, "generate", real)
    asked = len(server.chat_requests())
    kept = len(outputs(url, 1))
    assert kept == 2 and asked >= kept
    resumed = ok(run_cli(url, "eval", "--resume", "1")).stdout
    total = len(outputs(url, 1))
    assert "finished  8/8 items" in resumed and total == 8
    # Each item asked once over both sessions: nothing the first got is asked again.
    assert len(server.chat_requests()) == total
    assert set(outputs(url, 1)) == {"A"}
    if asked > kept:  # answers that came after Ctrl-C: the resume says where they came from
        note = f"{asked - kept} of {total - kept} answers from the response cache"
        assert note in resumed


def test_a_no_cache_run_resumes_without_the_cache(
    url: str, server: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The resume of a --no-cache run keeps its predictions and asks for the rest: it
    never takes the older answers the cache holds."""
    from evaluator.backends.openai_backend import OpenAIBackend

    serve(server, "weights-A", "old")
    ok(evaluate(url, server))
    before = len(server.chat_requests())
    server.default = lambda _request: completion("new")
    real, generate = interrupted_after(2)
    monkeypatch.setattr(OpenAIBackend, "generate", generate)
    assert evaluate(url, server, "--no-cache", "--concurrency", "1").exit_code == 130
    monkeypatch.setattr(OpenAIBackend, "generate", real)
    resumed = ok(run_cli(url, "eval", "--resume", "2"))
    assert set(outputs(url, 2)) == {"new"} and "response cache" not in resumed.stdout
    assert len(outputs(url, 2)) == before


def test_a_sampled_request_without_a_seed_is_never_a_copy(
    server: FakeOpenAIServer, database: Database
) -> None:
    """At temperature > 0 a request is a draw: without a seed, asking again draws again
    (never the stored answer); with one, the same seed is the same request by design."""
    answers = iter(f"draw {n}" for n in range(10))
    server.default = lambda _request: completion(next(answers))

    def ask(**kwargs: Any) -> str:
        client = ChatClient("m1", base_url=server.base_url, api_key_env=KEY_ENV, database=database)
        try:
            outcome = client.complete(ChatRequest.user("write an item", **kwargs))
        finally:
            client.close()
        assert outcome.response is not None
        return outcome.response.text

    assert ask(temperature=0.7) == "draw 0" and ask(temperature=0.7) == "draw 1"
    assert ask(temperature=0.7, seed=3) == "draw 2" and ask(temperature=0.7, seed=3) == "draw 2"
    assert ask(temperature=0.0) == "draw 3" and ask(temperature=0.0) == "draw 3"
    # A named draw (generation's item id, never sent) is the same request by design.
    assert ask(temperature=0.7, draw="news:a1:0") == "draw 4"
    assert ask(temperature=0.7, draw="news:a1:0") == "draw 4"
    assert ask(temperature=0.7, draw="news2:a1:0") == "draw 5"
    assert len(server.chat_requests()) == 6
    assert all("draw" not in (request.body or {}) for request in server.chat_requests())


def test_the_client_asks_the_server_what_it_serves_once_for_its_keys(
    server: FakeOpenAIServer, database: Database
) -> None:
    """`generate` and `check` make a client of their own: it asks /models before its first
    cache lookup, so their answers are keyed by the weights too."""
    serve(server, "weights-A", "A")

    def ask() -> str:
        client = ChatClient("m1", base_url=server.base_url, api_key_env=KEY_ENV, database=database)
        try:
            texts = [
                o.response.text
                for o in client.complete_all([ChatRequest.user(f"q{n}") for n in range(3)])
                if o.response is not None
            ]
        finally:
            client.close()
        return "".join(sorted(texts))

    assert ask() == "AAA"
    serve(server, "weights-B", "B")
    assert ask() == "BBB"
    assert len(server.chat_requests()) == 6


def interrupted_run(url: str, server: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch) -> int:
    """Run 1, stopped by Ctrl-C after two answers (from whatever the server serves now);
    how many requests the server got."""
    from evaluator.backends.openai_backend import OpenAIBackend

    real, generate = interrupted_after(2)
    monkeypatch.setattr(OpenAIBackend, "generate", generate)
    assert evaluate(url, server, "--concurrency", "1").exit_code == 130
    monkeypatch.setattr(OpenAIBackend, "generate", real)
    assert len(outputs(url, 1)) == 2
    return len(server.chat_requests())


@pytest.mark.parametrize(
    ("change", "said"),
    [
        ("weights", "weights: weights-A then, weights-B now"),
        ("version", "server version: 0.9.1 then, 0.10.0 now"),
    ],
)
def test_a_resume_against_other_weights_is_refused_naming_both(
    url: str, server: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch, change: str, said: str
) -> None:
    """The server was restarted with other weights (or another version) under the same
    name and URL: resuming would finish the run with another model's answers, so it is
    refused in one line that names what the run recorded and what the server says now,
    before any item is asked; the run stays as it was."""
    serve(server, "weights-A", "A")
    server.version = "0.9.1"
    asked = interrupted_run(url, server, monkeypatch)
    if change == "weights":
        serve(server, "weights-B", "B")
    else:
        server.version = "0.10.0"
    refused = run_cli(url, "eval", "--resume", "1")
    assert refused.exit_code == 1
    line = refused.stderr.strip()
    assert "\n" not in line and "run 1 cannot resume" in line and said in line
    assert "start a new run (vetbench eval --model openai:m1)" in line
    assert len(server.chat_requests()) == asked and len(outputs(url, 1)) == 2
    assert stored_runs(url)[0].status == "interrupted"
    # The weights it started with again: it resumes, with nothing to note.
    serve(server, "weights-A", "A")
    server.version = "0.9.1"
    resumed = ok(run_cli(url, "eval", "--resume", "1"))
    assert "finished  8/8 items" in resumed.stdout and "not checked" not in resumed.stderr
    assert set(outputs(url, 1)) == {"A"}


@pytest.mark.parametrize("said_first", [False, True])
def test_a_resume_where_one_side_says_nothing_goes_on_and_says_so(
    url: str, server: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch, said_first: bool
) -> None:
    """A run recorded without the weights (started before servers were asked, or against
    one that did not say) resumes against a server that says them, and a run that recorded
    them resumes against a server that no longer says: nothing to compare, so it goes on,
    and a note says what was not checked."""
    if said_first:
        serve(server, "weights-A", "A")
    else:
        server.models = [{"id": "m1", "object": "model"}]  # no root: names only
        server.default = lambda _request: completion("A")
    interrupted_run(url, server, monkeypatch)
    if said_first:
        server.models = None  # no model list now (404)
    else:
        serve(server, "weights-B", "A")
    resumed = ok(run_cli(url, "eval", "--resume", "1"))
    assert "finished  8/8 items" in resumed.stdout
    note = (
        "run 1 recorded weights weights-A, the server says none now"
        if said_first
        else "the server says weights weights-B, run 1 recorded none"
    )
    assert (
        f"note: {note}: that the server serves the weights run 1 started with is not checked"
        in resumed.stderr
    )
    # What the server said is recorded where the run had nothing; a record is never replaced.
    params = stored_runs(url)[0].params
    assert params["server_model_root"] == ("weights-A" if said_first else "weights-B")


def test_the_first_resume_records_the_weights_a_run_lacked_and_the_next_is_checked(
    url: str, server: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A run started against a server that did not say its weights or version resumes
    against one that says both: nothing to compare yet, so it goes on, and records them,
    saying so and that its earlier answers are not known to come from them.  The next
    resume is then checked: other weights are refused, the same ones finish the run."""
    from evaluator.backends.openai_backend import OpenAIBackend

    server.models = [{"id": "m1", "object": "model"}]  # names only, and no /version
    server.default = lambda _request: completion("A")
    interrupted_run(url, server, monkeypatch)
    assert "server_model_root" not in stored_runs(url)[0].params
    serve(server, "weights-B", "A")
    server.version = "0.10.0"
    real, generate = interrupted_after(2)
    monkeypatch.setattr(OpenAIBackend, "generate", generate)
    first = run_cli(url, "eval", "--resume", "1")
    assert first.exit_code == 130
    assert (
        "note: the server says weights weights-B, run 1 recorded none; the server says "
        "server version 0.10.0, run 1 recorded none: that the server serves the weights run 1 "
        "started with is not checked; run 1 now records the weights and server version the "
        "server says, and a later resume is checked against them (its answers from before "
        "this resume are not known to come from them)"
    ) in " ".join(first.stderr.split())
    params = stored_runs(url)[0].params
    assert (params["server_model_root"], params["server_version"]) == ("weights-B", "0.10.0")
    monkeypatch.setattr(OpenAIBackend, "generate", real)

    asked = len(server.chat_requests())
    serve(server, "weights-C", "C")
    refused = run_cli(url, "eval", "--resume", "1")
    assert refused.exit_code == 1
    assert "run 1 cannot resume" in refused.stderr
    assert "weights: weights-B then, weights-C now" in refused.stderr
    assert len(server.chat_requests()) == asked

    serve(server, "weights-B", "A")
    resumed = ok(run_cli(url, "eval", "--resume", "1"))
    assert "finished  8/8 items" in resumed.stdout and "not checked" not in resumed.stderr
    assert set(outputs(url, 1)) == {"A"}


def test_a_resume_where_neither_side_names_the_weights_says_so(
    url: str, server: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """OpenAI's own API lists names only, and has no /version: nothing to compare."""
    server.models = [{"id": "m1", "object": "model"}]
    server.default = lambda _request: completion("A")
    interrupted_run(url, server, monkeypatch)
    resumed = ok(run_cli(url, "eval", "--resume", "1"))
    assert (
        "note: neither run 1's record nor the server says which weights it serves"
    ) in resumed.stderr

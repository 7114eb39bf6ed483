"""The backend registry (one way to open any model spec) and the scripted model it offers:
forms, settings, errors a person can act on, and scripted runs through the real CLI."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from eval_helpers import (
    MIXED_SET_ANSWERS,
    eval_json,
    mixed_set,
    mixed_set_url,
    ordering,
    refusal,
    store,
)
from fake_openai_server import FakeOpenAIServer
from helpers import APPROVED_ITEMS, run_cli, write_file
from served_model import free_port
from sqlmodel import select

from db.engine import Database, open_database
from db.items import iter_items
from db.models import EvalRun, Prediction
from db.vocabulary import EvalMode
from evaluator.backends.base import BackendError, GenerationRequest, Prompt
from evaluator.backends.registry import find_provider, known_forms, open_backend, recorded_spec
from evaluator.backends.scripted import Script, ScriptedBackend
from evaluator.backends.settings import ApiSettings, BackendSettings
from evaluator.item_filter import ItemFilter
from evaluator.runner import create_run, execute_run
from evaluator.runs import run_figures
from evaluator.session import check_model

KEY_ENV = "VETBENCH_REGISTRY_TEST_KEY"


def test_every_form_has_its_provider() -> None:
    assert find_provider("openai:gpt-4o-mini").backend == "openai"
    assert find_provider("scripted:answers.json").backend == "scripted"
    assert find_provider("demo").form == "demo"
    assert find_provider("model.GGUF").form == "FILE.gguf"
    assert find_provider("HuggingFaceTB/SmolLM2-135M").backend == "transformers"
    assert find_provider("./models/mine").backend == "transformers"


@pytest.mark.parametrize("spec", ["anthropic:claude", "hf:gpt2", "  "])
def test_an_unknown_form_fails_with_the_known_ones(spec: str) -> None:
    with pytest.raises(BackendError) as caught:
        open_backend(spec)
    message = str(caught.value)
    assert known_forms() in message
    assert "openai:NAME" in message and "scripted:FILE" in message and "demo" in message


def test_api_models_take_the_api_settings(
    monkeypatch: pytest.MonkeyPatch, server: FakeOpenAIServer
) -> None:
    monkeypatch.setenv(KEY_ENV, "sk-registry-test")
    api = ApiSettings(base_url=server.base_url, api_key_env=KEY_ENV, concurrency=3, max_retries=0)
    backend = open_backend("openai:some-model", BackendSettings(api=api))
    try:
        assert backend.info.backend == "openai" and backend.info.model == "some-model"
        params = backend.info.params
        assert params["base_url"] == server.base_url
        assert params["concurrency"] == 3 and params["max_retries"] == 0
        assert "server_model_id" not in params  # no model list served: nothing recorded
        # Whether it can score is asked of the server, which gives no log-probabilities.
        server.prompt_logprobs = False
        with pytest.raises(BackendError, match="cannot score"):
            _ = backend.supports_scoring
        assert find_provider("openai:some-model").cannot_score is None
    finally:
        backend.close()


def test_a_server_that_cannot_be_reached_is_said_when_the_backend_opens(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Before, it opened, and the run retried every item for 22 s and failed."""
    monkeypatch.setenv(KEY_ENV, "sk-registry-test")
    url = f"http://127.0.0.1:{free_port()}/v1"  # nothing listens there
    api = ApiSettings(base_url=url, api_key_env=KEY_ENV)
    with pytest.raises(BackendError) as caught:
        open_backend("openai:some-model", BackendSettings(api=api))
    assert str(caught.value).startswith(f"cannot reach the server at {url} (Connection refused)")


def test_an_api_model_without_its_key_is_explained(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(KEY_ENV, raising=False)
    with pytest.raises(BackendError, match=KEY_ENV):
        open_backend("openai:some-model", BackendSettings(api=ApiSettings(api_key_env=KEY_ENV)))


def test_a_missing_key_is_said_before_the_open_in_the_opens_words(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``check_model`` reads the key the client will read, with the settings the model
    will open with; a local server (``--base-url``) needs none, and without settings (not
    known yet) the open is left to say it."""
    monkeypatch.delenv(KEY_ENV, raising=False)
    settings = BackendSettings(api=ApiSettings(api_key_env=KEY_ENV))
    with pytest.raises(BackendError) as opened:
        open_backend("openai:some-model", settings)
    with pytest.raises(BackendError) as checked:
        check_model("openai:some-model", EvalMode.GENERATE, settings)
    assert str(checked.value) == str(opened.value)
    local = ApiSettings(api_key_env=KEY_ENV, base_url="http://127.0.0.1:9/v1")
    check_model("openai:some-model", EvalMode.GENERATE, BackendSettings(api=local))
    check_model("openai:some-model", EvalMode.GENERATE)


def test_a_bad_batch_size_is_refused_before_any_model_loads() -> None:
    with pytest.raises(BackendError, match="batch size must be at least 1"):
        BackendSettings(batch_size=0)
    assert BackendSettings(batch_size="16").batch_size == "16"


def test_a_resumed_run_keeps_its_recorded_choices() -> None:
    given = BackendSettings(threads=2)
    resumed = given.resuming(
        {"base_url": "http://host/v1", "prefix_cache": False, "chat_template": False}
    )
    assert resumed.api.base_url == "http://host/v1" and resumed.threads == 2
    assert resumed.prefix_cache is False and resumed.chat_template is False
    explicit = BackendSettings(api=ApiSettings(base_url="http://mine/v1"))
    assert explicit.resuming({"base_url": "http://host/v1"}).api.base_url == "http://mine/v1"
    assert given.resuming({"chat_template": True}) == given


def test_a_resumed_run_keeps_its_recorded_api_settings_unless_given_again() -> None:
    recorded = {
        "base_url": "http://host/v1",
        "api_key_env": "SERVER_KEY",
        "concurrency": 16,
        "timeout_s": 7,
        "max_retries": 1,
        "max_wait_s": 0.5,
    }
    resumed = BackendSettings().resuming(recorded).api
    assert resumed == ApiSettings("http://host/v1", "SERVER_KEY", 16, 7.0, 1, 0.5)
    # given again (even at its default), or set to another value: the given one wins
    given = BackendSettings(api=ApiSettings(concurrency=4, timeout=2.0))
    again = given.resuming(recorded, given={"concurrency"}).api
    assert (again.concurrency, again.timeout, again.api_key_env) == (4, 2.0, "SERVER_KEY")
    # a run from before the key variable and the wait were recorded, or a value of
    # another type: the defaults
    older = BackendSettings().resuming({"concurrency": True, "timeout_s": "7", "max_retries": 2})
    assert older.api == ApiSettings(max_retries=2)


def test_recorded_runs_name_their_spec_again() -> None:
    assert recorded_spec("openai", "gpt-4o-mini") == "openai:gpt-4o-mini"
    assert recorded_spec("scripted", "/data/answers.json") == "scripted:/data/answers.json"
    assert recorded_spec("transformers", "demo") == "demo"


# ------------------------------------------------------------ the scripted model


def test_script_files_json_and_jsonl(tmp_path: Path) -> None:
    flat = tmp_path / "answers.json"
    flat.write_text(json.dumps({"econ:1": "D, A, C, B", "cflue:1": "答案：B"}), encoding="utf-8")
    backend = open_backend(f"scripted:{flat}")
    assert isinstance(backend, ScriptedBackend)
    assert backend.info.backend == "scripted" and backend.info.model == str(flat.resolve())
    assert backend.script.outputs == {"econ:1": "D, A, C, B", "cflue:1": "答案：B"}

    lines = tmp_path / "answers.jsonl"
    lines.write_text(
        '{"item_id": "econ:1", "output": "A, B, C, D"}\n\n{"item_id": "econ:2", "error": "timeout"}\n',
        encoding="utf-8",
    )
    script = Script.from_file(lines)
    assert script.outputs == {"econ:1": "A, B, C, D"} and script.failures == {"econ:2": "timeout"}


def test_a_scripted_answer_can_take_its_time(tmp_path: Path) -> None:
    """``"seconds"`` makes an answer take that long, as a slow model's would, and the
    answer reports it as its latency."""
    lines = write_file(
        tmp_path, "slow.jsonl", '{"item_id": "econ:1", "output": "A", "seconds": 0.3}\n'
    )
    backend = open_backend(f"scripted:{lines}")
    assert isinstance(backend, ScriptedBackend)
    request = GenerationRequest("econ:1", Prompt("", "Q"), max_new_tokens=8)
    started = time.monotonic()
    (result,) = backend.generate([request])
    assert time.monotonic() - started >= 0.3
    assert (result.output, result.latency_s) == ("A", 0.3)


# Script files the scripted backend refuses, by what is wrong with them: the file's name,
# its text, and the message naming the place.
BAD_SCRIPTS = {
    "not-an-object": (
        "a.json",
        "[1, 2]",
        "a.json: expected a JSON object of item id -> output text",
    ),
    "malformed-json": ("b.json", "{oops", "b.json:1: not valid JSON"),
    "a-line-without-item-id": (
        "c.jsonl",
        '{"item_id": "x", "output": "A"}\n{"output": "B"}\n',
        "c.jsonl:2: item_id",
    ),
    "a-line-without-output": ("d.jsonl", '{"item_id": "x"}\n', "d.jsonl:1: give output"),
    "negative-seconds": (
        "e.jsonl",
        '{"item_id": "x", "output": "A", "seconds": -1}\n',
        "e.jsonl:1: seconds: must be a number of seconds, 0 or more",
    ),
    "seconds-past-a-clock": (
        "f.jsonl",
        '{"item_id": "x", "output": "A", "seconds": 1e308}\n',
        "f.jsonl:1: seconds: must be a number of seconds, 0 or more and at most 86,400",
    ),
    "an-item-scripted-twice": (
        "g.jsonl",
        '{"item_id": "x", "output": "A"}\n\n{"item_id": "x", "error": "timeout"}\n',
        "g.jsonl:3: item_id: x is scripted on line 1 too; give each item one line",
    ),
}


@pytest.mark.parametrize(("name", "text", "message"), BAD_SCRIPTS.values(), ids=BAD_SCRIPTS.keys())
def test_bad_script_files_are_named_with_their_place(
    tmp_path: Path, name: str, text: str, message: str
) -> None:
    path = write_file(tmp_path, name, text)
    with pytest.raises(BackendError, match=message.replace("(", r"\(")):
        open_backend(f"scripted:{path}")
    with pytest.raises(BackendError, match="missing.json: cannot read the file"):
        open_backend(f"scripted:{tmp_path / 'missing.json'}")


def test_a_model_that_answers_every_key_but_the_chosen_items(database: Database) -> None:
    """The planted-flaw check: answers are right except where told otherwise."""
    mixed_set(database)
    with database.session() as session:
        items = [item for item in iter_items(session) if item.status == "approved"]
    script = Script.answer_keys(items, except_for={"econ:2": "A, B, C, D", "cflue:2": "?"})
    backend = ScriptedBackend(script, model="planted")
    run_id = create_run(database, backend.info, shots=0, item_filter=APPROVED_ITEMS)
    execute_run(database, run_id, backend)
    summary = run_figures(database, run_id).summary
    assert (summary.n, summary.correct, summary.unparsed) == (8, 6, 1)
    assert summary.by_kind["ordering"].correct == 1 and summary.by_kind["single"].correct == 1
    with database.session() as session:
        wrong = {
            row.item_id
            for row in session.exec(select(Prediction).where(Prediction.run_id == run_id))
            if not row.correct
        }
    assert wrong == {"econ:2", "cflue:2"}


def test_score_mode_ranks_the_scripted_answer_first(database: Database) -> None:
    mixed_set(database)
    backend = ScriptedBackend({"econ:1": "D, A, C, B", "cflue:3": "ABD"})
    run_id = create_run(
        database,
        backend.info,
        mode="score",
        shots=0,
        item_filter=ItemFilter(kinds=("ordering", "multi")),
    )
    execute_run(database, run_id, backend)
    with database.session() as session:
        stored = {
            row.item_id: row
            for row in session.exec(select(Prediction).where(Prediction.run_id == run_id))
        }
    assert stored["econ:1"].parsed_answer == "DACB" and stored["econ:1"].scores["key_rank"] == 1
    assert stored["cflue:3"].parsed_answer == "ABD" and stored["cflue:3"].correct is True


def test_a_scripted_model_through_the_cli_with_resume(db_path: Path, tmp_path: Path) -> None:
    mixed_set_url(db_path)
    answers = tmp_path / "answers.jsonl"
    answers.write_text(
        '{"item_id": "econ:1", "output": " D, A, C, B"}\n'
        '{"item_id": "cflue:1", "error": "timed out after 60 s"}\n',
        encoding="utf-8",
    )
    first = run_cli(db_path, "eval", "--model", f"scripted:{answers}", "--shots", "0", "--json")
    assert first.exit_code == 75, first.output  # finished with a failure left to resume
    figures = json.loads(first.stdout)
    assert figures["run"]["backend"] == "scripted" and figures["correct"] == 1
    assert figures["infrastructure_failures"] == 1 and "resume" in figures["run"]["error"]

    answers.write_text('{"item_id": "cflue:1", "output": "B"}\n', encoding="utf-8")
    after = eval_json(db_path, "--resume", str(figures["run_id"]))
    assert after["correct"] == 2 and after["infrastructure_failures"] == 0
    database = open_database(db_path)
    with database.session() as session:
        (run,) = session.exec(select(EvalRun)).all()
        assert run.model == str(answers.resolve()) and run.params["script"] == run.model
    database.dispose()


def test_a_script_that_misses_evaluated_items_or_answers_others_says_so(
    db_path: Path, tmp_path: Path
) -> None:
    """Before, the items without an answer silently read as unparsed and `bogus:9` was
    ignored without a word."""
    mixed_set_url(db_path)
    answers = write_file(tmp_path, "answers.json", '{"econ:1": " D, A, C, B", "bogus:9": "A"}')
    result = run_cli(db_path, "eval", "--model", f"scripted:{answers}", "--shots", "0")
    assert result.exit_code == 0, result.output
    assert (
        "note: the script has no answer for 7 of the 8 items evaluated "
        "(cflue:1, cflue:2, cflue:3 and 4 more): they read as unparsed"
    ) in result.stderr
    assert "note: the script answers 1 item not evaluated here: bogus:9" in result.stderr
    # a script that covers the run says nothing; nor does the oracle
    covered = write_file(tmp_path, "covered.json", json.dumps(MIXED_SET_ANSWERS))
    quiet = run_cli(db_path, "eval", "--model", f"scripted:{covered}", "--shots", "0")
    assert "script" not in quiet.stderr
    assert ScriptedBackend(model="oracle", oracle=True).notes_for(["econ:1"]) == ()


def test_scripted_without_a_file_says_what_to_give(db_path: Path) -> None:
    mixed_set_url(db_path)
    result = run_cli(db_path, "eval", "--model", "scripted:", "--shots", "0")
    assert refusal(result) == (
        "error: give a script file after scripted: (scripted:ANSWERS.json or .jsonl), "
        "or scripted:oracle for the self-test"
    )


def test_a_misspelt_oracle_is_said_to_be_no_file_beside_the_oracles_name(db_path: Path) -> None:
    """`scripted:orcale` reads as a script file that is not there; the refusal says so
    and names `scripted:oracle` beside it, so the typo shows (before: only the missing
    file, which a user who meant the oracle never asked for)."""
    mixed_set_url(db_path)
    result = run_cli(db_path, "eval", "--model", "scripted:orcale", "--shots", "0")
    said = refusal(result)
    assert said.startswith(f"error: {Path.cwd() / 'orcale'}: cannot read the file"), said
    assert "scripted:oracle answers every item right" in said


def test_evals_help_names_the_oracle_self_test(db_path: Path) -> None:
    """A newcomer told to try `--model scripted:oracle` finds it in --help, beside FILE."""
    shown = " ".join(run_cli(db_path, "eval", "--help").output.split())
    assert "scripted:oracle answers every item right, a self-test without a model" in shown


def test_the_cli_refuses_unknown_forms_and_empty_selections(
    db_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert run_cli(db_path, "init").exit_code == 0
    # The model is the first thing to fix, the items after it.
    unknown = run_cli(db_path, "eval", "--model", "hf:gpt2")
    assert unknown.exit_code == 1 and "unknown model 'hf:gpt2'" in unknown.stderr
    assert "scripted:FILE" in unknown.stderr
    empty = run_cli(db_path, "eval", "--model", "scripted:oracle")
    assert empty.exit_code == 1 and "no items to evaluate" in empty.stderr
    database = open_database(db_path)
    store(database, [("econ:1", ordering(1))])
    database.dispose()
    unknown = run_cli(db_path, "eval", "--model", "hf:gpt2")
    assert unknown.exit_code == 1 and "unknown model 'hf:gpt2'" in unknown.stderr
    # nothing to evaluate is said before any model is opened (no server needed) ...
    monkeypatch.setenv("OPENAI_API_KEY", "sk-not-a-key")
    api = run_cli(db_path, "eval", "--model", "openai:x", "--mode", "score", "--kind", "multi")
    assert api.exit_code == 1 and "no items to evaluate" in api.stderr
    # ... once the key it would open with is set: a missing one is said first.
    monkeypatch.delenv("OPENAI_API_KEY")
    api = run_cli(db_path, "eval", "--model", "openai:x", "--mode", "score", "--kind", "multi")
    assert api.exit_code == 1 and "no API key" in api.stderr

"""`vetbench eval` and `vetbench runs` through the real CLI, on the tiny model and on a
fake OpenAI-compatible server: JSON and text output, filters, resume, Ctrl-C, errors.

Where the model is not what a test is about (filters, listings, tables, errors), a
scripted model answers instead: the same registry, run loop and storage, without
loading transformers."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from itertools import takewhile
from pathlib import Path
from typing import Any

import pytest
from click.testing import Result
from eval_helpers import MIXED_SET_ANSWERS, eval_json, ok, refusal, stored_runs
from fake_openai_server import FakeOpenAIServer, RecordedRequest, Reply, completion
from helpers import FIXTURES, run_cli, store_item, write_folder
from served_model import free_port
from sqlmodel import select
from tiny_model import tiny_model_dir

from db.engine import open_database
from db.items import count_items
from db.models import EvalRun, Prediction
from db.visible_text import east_asian_cell_len


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> str:
    return str(tiny_model_dir(tmp_path_factory))


@pytest.fixture
def scripted(tmp_path: Path) -> str:
    """A scripted model (``scripted:FILE``) that answers the mixed set's items right."""
    path = tmp_path / "answers.json"
    path.write_text(json.dumps(MIXED_SET_ANSWERS, ensure_ascii=False), encoding="utf-8")
    return f"scripted:{path}"


@pytest.fixture
def url(approved: list[str], database_url: str) -> str:
    """A database holding the evaluator's mixed set: 8 approved items, 4 agreed ones
    (conftest's ``approved``: built once per test process and backend, and copied)."""
    return database_url


def eval_on(url: str, server: FakeOpenAIServer, *args: str) -> Result:
    """``vetbench eval`` of the fake server's model, its key read from ``FAKE_KEY``."""
    return run_cli(url, "eval", *server.cli_options("openai:fake-model", "FAKE_KEY"), *args)


def stored(url: str, run_id: int) -> list[Prediction]:
    database = open_database(url)
    try:
        with database.session() as session:
            return list(session.exec(select(Prediction).where(Prediction.run_id == run_id)))
    finally:
        database.dispose()


def test_eval_prints_the_run_id_and_its_figures_as_json(url: str, tiny: str) -> None:
    figures = eval_json(url, "--model", tiny, "--shots", "1")
    run_id = figures["run_id"]
    assert figures["run"]["model"] == tiny and figures["run"]["status"] == "finished"
    assert figures["run"]["mode"] == "generate" and figures["run"]["shots"] == 1
    assert figures["progress"]["done"] == figures["progress"]["total"] == 8
    assert figures["n"] == 8 and figures["infrastructure_failures"] == 0
    assert 0 <= figures["accuracy"] <= 1 and len(figures["accuracy_ci"]) == 2
    assert set(figures["by_kind"]) == {"ordering", "single", "multi", "truefalse"}
    assert len(stored(url, run_id)) == 8
    notes = figures["run"]["params"]["shot_notes"]  # --json: in the JSON, not on stderr
    assert any("not-yet-approved" in note for note in notes)  # the shots came from agreed items


def test_eval_prints_readable_figures(url: str, scripted: str) -> None:
    result = ok(run_cli(url, "eval", "--model", scripted, "--shots", "0", "--kind", "ordering"))
    assert "run 1: 2 items" in result.stderr
    assert "accuracy" in result.stdout and "pairwise" in result.stdout
    assert "(scripted, generate, 0-shot)  finished  2/2 items" in result.stdout
    one = ok(
        run_cli(url, "eval", "-m", scripted, "--shots", "0", "--kind", "ordering", "--limit", "1")
    )
    assert "run 2: 1 item\n" in one.stderr


def test_a_series_says_its_notes_once_and_points_to_them_after(url: str, scripted: str) -> None:
    """Each run of a series starts with the same notes: a series of 40 printed them 40
    times over its progress; now in full at its first run, then one line."""
    args = ("--protocol", "cflue", "--limit", "1", "--repeats", "3", "--permute-options")
    series = ok(run_cli(url, "eval", "-m", scripted, *args)).stderr
    assert series.count("note: answers may run to the model's own limit") == 1, series
    first = re.findall(r"^run (\d+): 1 item$", series, re.MULTILINE)[0]
    assert series.count(f"notes: as for run {first}, above") == 2, series


def test_a_run_whose_answers_may_run_to_the_models_limit_says_so_and_how_to_cap_them(
    url: str, scripted: str
) -> None:
    """The cflue protocol lets the model write to its own limit, as CFLUE's code does: a
    small model that never stops takes minutes an item on a CPU, so the start says so."""
    uncapped = ok(run_cli(url, "eval", "-m", scripted, "--protocol", "cflue", "--limit", "1"))
    assert "note: answers may run to the model's own limit" in uncapped.stderr
    assert "--max-new-tokens N (F4: Max new tokens) caps them" in uncapped.stderr
    capped = ["--protocol", "cflue", "--limit", "1", "--max-new-tokens", "64"]
    assert "own limit" not in ok(run_cli(url, "eval", "-m", scripted, *capped)).stderr
    custom = ok(run_cli(url, "eval", "-m", scripted, "--shots", "0", "--limit", "1")).stderr
    assert "own limit" not in custom  # the kind's own small budget


def test_the_figures_by_source_line_up_however_long_or_wide_the_names(
    url: str, scripted: str
) -> None:
    database = open_database(url)
    store_item(database, "long:1", source="econ_ordering_5events_extended", status="approved")
    store_item(database, "wide:1", source="证券专项考试题库", status="approved")
    database.dispose()
    result = ok(run_cli(url, "eval", "--model", scripted, "--shots", "0", "--kind", "ordering"))
    lines = result.stdout.splitlines()
    after = lines[lines.index("by source:") + 1 :]
    rows = list(takewhile(lambda line: line.startswith("  "), after))  # the block, no legend
    assert [row.split()[0] for row in rows] == [
        "econ",
        "econ_ordering_5events_extended",
        "证券专项考试题库",
    ]
    assert len({east_asian_cell_len(row.split("n=")[0]) for row in rows}) == 1


@pytest.mark.parametrize(
    ("options", "count"),
    [
        (("--kind", "single", "--kind", "multi"), 4),
        (("--source", "econ"), 2),
        (("--status", "agreed"), 4),
        (("--status", "all"), 12),
        (("--limit", "3"), 3),
    ],
)
def test_eval_filters_select_the_items(
    url: str, scripted: str, options: tuple[str, ...], count: int
) -> None:
    figures = eval_json(url, "--model", scripted, "--shots", "0", *options)
    assert figures["progress"]["total"] == count


def test_score_mode_through_the_cli(url: str, tiny: str) -> None:
    figures = eval_json(
        url, "-m", tiny, "--mode", "score", "--kind", "multi", "--allow-fewer-shots"
    )
    assert figures["run"]["mode"] == "score" and figures["unparsed"] == 0
    for prediction in stored(url, figures["run_id"]):
        assert prediction.scores["candidates"] == 15 and prediction.parsed_answer


def test_runs_list_show_and_compare(url: str, scripted: str) -> None:
    ok(run_cli(url, "eval", "--model", scripted, "--shots", "0"))
    ok(run_cli(url, "eval", "--model", scripted, "--shots", "1"))

    listing = ok(run_cli(url, "runs")).stdout
    assert "   2  finished" in listing and "   1  finished" in listing
    assert "answers.json" in listing
    assert [run["id"] for run in json.loads(ok(run_cli(url, "runs", "--json")).stdout)] == [2, 1]

    shown = ok(run_cli(url, "runs", "show", "1")).stdout
    assert "accuracy" in shown and "econ:1" in shown and "cflue:6" in shown
    as_json = json.loads(ok(run_cli(url, "runs", "show", "1", "--json")).stdout)
    assert len(as_json["predictions"]) == 8 and "prompt" not in as_json["predictions"][0]

    one = ok(run_cli(url, "runs", "show", "2", "--item", "econ:1", "--prompt")).stdout
    assert "key           DACB" in one and "raw output:" in one
    prompt = one.split("prompt:\n", 1)[1]
    assert prompt.startswith("The following questions each describe")
    assert "Question: Scenario 11" in prompt  # the shot
    assert prompt.rstrip().endswith("Answer:")

    # --prompt without --item: every prediction in full, each prompt as --item shows it
    every = json.loads(ok(run_cli(url, "runs", "show", "2", "--prompt", "--json")).stdout)
    assert len(every["predictions"]) == 8
    for prediction in every["predictions"]:
        alone = ok(
            run_cli(url, "runs", "show", "2", "--item", prediction["item_id"], "--prompt", "--json")
        ).stdout
        assert prediction["prompt"] == json.loads(alone)["prompt"] != ""
    in_full = ok(run_cli(url, "runs", "show", "2", "--prompt")).stdout
    assert in_full.count("prompt:\n") == 8 and prompt in in_full

    compared = ok(run_cli(url, "runs", "compare", "1", "2")).stdout
    assert "runs 1 (A) and 2 (B): 8 shared items" in compared
    comparison = json.loads(ok(run_cli(url, "runs", "compare", "1", "2", "--json")).stdout)
    assert sum(comparison["counts"].values()) == 8
    missing = run_cli(url, "runs", "compare", "2", "3")
    assert missing.exit_code == 1 and "there is no run 3 (the newest is run 2)" in missing.stderr


def test_an_interrupted_run_resumes_from_the_cli(
    url: str, scripted: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from evaluator.backends.scripted import ScriptedBackend

    real_generate = ScriptedBackend.generate

    def ctrl_c_after_three(self: ScriptedBackend, requests: Any) -> Iterator[Any]:
        for count, result in enumerate(real_generate(self, requests)):
            if count == 3:
                raise KeyboardInterrupt
            yield result

    monkeypatch.setattr(ScriptedBackend, "generate", ctrl_c_after_three)
    interrupted = run_cli(url, "eval", "--model", scripted, "--shots", "1")
    assert interrupted.exit_code == 130
    assert "vetbench eval --resume 1" in interrupted.stderr
    assert len(stored(url, 1)) == 3

    monkeypatch.setattr(ScriptedBackend, "generate", real_generate)
    resumed = eval_json(url, "--resume", "1")
    assert resumed["run_id"] == 1 and resumed["run"]["status"] == "finished"
    assert resumed["progress"]["done"] == 8 and len(stored(url, 1)) == 8


def test_repeats_never_started_after_ctrl_c_are_said(
    url: str, scripted: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ctrl-C in repeat 2 of 3: --resume finishes run 2, and nobody makes repeat 3; the
    interrupt, the resume and the table say so (before, nothing did)."""
    from evaluator.backends.scripted import ScriptedBackend

    real_generate = ScriptedBackend.generate
    answered: list[int] = []

    def ctrl_c_in_the_second_run(self: ScriptedBackend, requests: Any) -> Iterator[Any]:
        for result in real_generate(self, requests):
            if len(answered) == 3:  # run 1's two items, then one of run 2's
                raise KeyboardInterrupt
            answered.append(1)
            yield result

    monkeypatch.setattr(ScriptedBackend, "generate", ctrl_c_in_the_second_run)
    args = ("--model", scripted, "--shots", "0", "--kind", "ordering", "--repeats", "3")
    args += ("--permute-options",)  # 0-shot repeats differ only so
    interrupted = run_cli(url, "eval", *args)
    assert interrupted.exit_code == 130 and len(stored_runs(url)) == 2
    assert interrupted.stderr.splitlines()[-1] == (
        "interrupted: finished predictions are kept; continue with `vetbench eval --resume 2`; "
        "1 more planned run of this series was never started (--resume finishes run 2 only: "
        "run the evaluation again for a full series)"
    )

    monkeypatch.setattr(ScriptedBackend, "generate", real_generate)
    resumed = ok(run_cli(url, "eval", "--resume", "2"))
    assert (
        "note: run 2 is repeat 2 of 3 (0-shot); repeat 3 of its series was never started: "
        "--resume finishes run 2 only, and the series' figures count 2 of 3 runs"
    ) in resumed.stderr
    assert len(stored_runs(url)) == 2
    table = ok(run_cli(url, "runs", "table")).stdout
    assert "mean over 2 of 3 planned runs (runs 1, 2)" in table


def test_a_resume_refuses_what_would_change_the_runs_plan(url: str, scripted: str) -> None:
    """`eval --resume 1 --shots 3 --kind ordering` exited 0, ignoring both: a run resumes
    as it was planned.  How the model runs may be given again."""
    ok(run_cli(url, "eval", "--model", scripted, "--shots", "1", "--limit", "2"))
    before = stored(url, 1)
    planned = ["--shots", "3", "--kind", "ordering", "--status", "all", "--shots-for", "single=0"]
    refused = run_cli(url, "eval", "--resume", "1", *planned, "--seed", "9")
    assert refused.exit_code == 1
    assert refused.stderr.strip().splitlines() == [
        "error: --resume continues a run exactly as it was planned; --shots, --shots-for, "
        "--status, --kind, --seed do not apply (start a new run to change them)"
    ]
    one = run_cli(url, "eval", "--resume", "1", "--protocol", "cflue")
    assert one.exit_code == 1 and "--protocol does not apply (start a new run to change it)" in (
        one.stderr
    )
    assert stored(url, 1) == before and len(stored_runs(url)) == 1
    ok(run_cli(url, "eval", "--resume", "1", "--model", scripted, "--threads", "1", "--json"))


def test_an_unreachable_server_ends_eval_in_one_line_and_makes_no_run(url: str) -> None:
    """Before, the run was made and failed after ~22 s of retries on every item."""
    base_url = f"http://127.0.0.1:{free_port()}/v1"  # nothing listens there
    args = ["--model", "openai:fake", "--base-url", base_url, "--shots", "0", "--limit", "3"]
    result = run_cli(url, "eval", *args)
    assert result.exit_code == 1
    (line,) = result.stderr.strip().splitlines()
    assert line.startswith(f"error: cannot reach the server at {base_url} (Connection refused)")
    assert "--base-url" in line
    assert stored_runs(url) == []


def test_an_openai_model_runs_against_a_compatible_server(
    url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    def answer(request: RecordedRequest) -> Reply:
        return completion("A, B, C, D" if "Question:" in request.user_text else "B")

    monkeypatch.setenv("FAKE_KEY", "sk-test")
    with FakeOpenAIServer(default=answer) as server:
        result = eval_on(url, server, "--shots", "0", "--json")
    figures = json.loads(ok(result).stdout)
    assert figures["run"]["backend"] == "openai" and figures["run"]["model"] == "fake-model"
    assert figures["progress"]["done"] == 8 and figures["unparsed"] == 0
    assert "sk-test" not in result.stdout


@pytest.mark.parametrize("problem", ["no /v1 in the base URL", "the wrong model"])
def test_a_run_the_server_refuses_says_to_start_a_new_run_not_to_resume(
    url: str, problem: str
) -> None:
    """An HTTP 404 (no route: the base URL lacks /v1) or 400 (the server serves another
    model) comes back on every retry, and a resume keeps the run's model: the note says to
    start a new run with the right --model and --base-url, and why the 404 came."""
    pinned = Reply(400, {"detail": "Server is pinned to 'fake-model'; requested 'tiny'."})
    with FakeOpenAIServer(default=lambda _request: pinned) as server:
        base_url = server.base_url.removesuffix("/v1") if "/v1" in problem else server.base_url
        args = ("--model", "openai:tiny", "--base-url", base_url, "--shots", "0", "--limit", "2")
        result = run_cli(url, "eval", *args)
        shown = run_cli(url, "runs", "show", "1")
    assert result.exit_code == 1, result.output
    for output in (result.output, shown.output):
        (note,) = [line for line in output.splitlines() if line.startswith("note ")]
        assert note.endswith(
            "a retry cannot fix this: start a new run with the right --model and --base-url"
        ), note
        assert "resume" not in output
        if "/v1" in problem:
            assert "HTTP 404" in note and "has no /v1 in its path: " in note
            assert f"e.g. {base_url}/v1)" in note
        else:
            assert "HTTP 400: Server is pinned to 'fake-model'; requested 'tiny'." in note
        assert "failed        2 (infrastructure; the note below says why)" in output


def test_a_server_error_still_says_to_resume(url: str) -> None:
    with FakeOpenAIServer(default=lambda _request: Reply(503, {"error": "overloaded"})) as server:
        args = ("--model", "openai:x", "--base-url", server.base_url, "--shots", "0")
        result = run_cli(url, "eval", *args, "--limit", "1", "--max-retries", "0")
    (note,) = [line for line in result.output.splitlines() if line.startswith("note ")]
    assert "HTTP 503" in note and note.endswith("resume the run to retry it"), note


def test_score_mode_through_an_api_that_returns_prompt_logprobs(
    url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """vLLM's completions endpoint with echo and logprobs: candidates ranked by their
    summed log-probabilities, several requests in flight at once."""
    keys = {"Question 3": "ABD", "Question 4": "BC"}

    def logprob(before: str, token: str) -> float:
        question = next((q for q in keys if q in before), None)
        if question is None or not before.rstrip().endswith("Answer:"):
            return -0.5  # the prompt's own tokens, and letters after the first
        return -0.1 if token.strip() == keys[question] else -4.0

    monkeypatch.setenv("FAKE_KEY", "sk-test")
    with FakeOpenAIServer() as server:
        server.logprob = logprob
        server.completion_delay_s = 0.05
        result = eval_on(
            url,
            server,
            "--mode",
            "score",
            "--kind",
            "multi",
            "--shots",
            "0",
            "--concurrency",
            "8",
            "--json",
        )
        in_flight = server.max_in_flight
        sent = server.completion_requests()
    figures = json.loads(ok(result).stdout)
    assert figures["run"]["mode"] == "score" and figures["accuracy"] == 1.0
    # One probe (does the server return prompt log-probabilities?), then every
    # non-empty set of four options, for two items.
    assert len(sent) == 1 + 2 * 15
    assert in_flight > 1
    for prediction in stored(url, figures["run_id"]):
        assert prediction.scores["candidates"] == 15 and prediction.scores["key_rank"] == 1


def test_score_mode_against_a_server_without_logprobs_is_refused_before_any_item(
    url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_KEY", "sk-test")
    with FakeOpenAIServer() as server:
        server.prompt_logprobs = False
        result = eval_on(url, server, "--mode", "score", "--kind", "single", "--shots", "0")
        sent = server.completion_requests()
    assert result.exit_code == 1
    (line,) = result.output.strip().splitlines()
    assert "cannot score" in line and "no log-probabilities of the prompt" in line
    assert len(sent) == 1  # the probe; no item was sent
    database = open_database(url)
    with database.session() as session:
        assert session.exec(select(EvalRun)).all() == []
    database.dispose()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("eval",), "give --model MODEL (or --resume RUN_ID): `--model demo` is the bundled"),
        (("eval", "--model", "./no/such/model", "--shots", "0"), "no such model directory"),
        (("eval", "--model", "openai:x", "--mode", "score", "--shots", "0"), "no API key"),
        (
            ("eval", "--model", "openai:x", "--base-url", "localhost:8000", "--shots", "0"),
            "the base URL 'localhost:8000' is not an http:// or https:// address",
        ),
        (("eval", "--model", "demo", "--batch-size", "0"), "batch size must be at least 1"),
        (("eval", "--resume", "99"), "there is no run 99"),
        (("runs", "show", "99"), "there is no run 99 (no runs yet)"),
        (("runs", "compare", "1", "98"), "there is no run"),
    ],
)
def test_mistakes_are_explained_without_a_traceback(
    url: str, args: tuple[str, ...], message: str
) -> None:
    result = run_cli(url, *args)
    assert result.exit_code == 1
    assert message in result.stderr
    assert "Traceback" not in result.output + result.stderr


def test_an_items_scores_are_rounded_like_the_other_figures(url: str, tmp_path: Path) -> None:
    """One pair of six out of order: pairwise 5/6, printed 0.833 as every figure is (the
    stored value, and --json, keep every digit)."""
    answers = tmp_path / "answers.json"
    answers.write_text(json.dumps({**MIXED_SET_ANSWERS, "econ:1": "A, D, C, B"}))
    ok(run_cli(url, "eval", "--model", f"scripted:{answers}", "--shots", "0", "--kind", "ordering"))
    shown = ok(run_cli(url, "runs", "show", "1", "--item", "econ:1"))
    (scores,) = [line for line in shown.stdout.splitlines() if line.startswith("scores")]
    assert scores.startswith("scores        correct false, pairwise 0.833, extracted {"), scores
    as_json = json.loads(ok(run_cli(url, "runs", "show", "1", "--item", "econ:1", "--json")).stdout)
    assert as_json["scores"]["pairwise"] == pytest.approx(5 / 6, abs=1e-12)


NO_API_KEY = (
    "no API key: set the environment variable OPENAI_API_KEY "
    "(or give --base-url for a local server that needs none)"
)


@pytest.mark.parametrize(
    ("model", "said"),
    [
        (
            "scripted:{tmp}/missing.json",
            "{tmp}/missing.json: cannot read the file: No such file or directory (scripted:FILE "
            "reads answers written in advance; scripted:oracle answers every item right)",
        ),
        ("{tmp}/missing.gguf", "{tmp}/missing.gguf: no such GGUF file"),
        ("{tmp}/no/such/model", "{tmp}/no/such/model: no such model directory"),
        ("openai:gpt-4o-mini", NO_API_KEY),
    ],
    ids=["script-file", "gguf-file", "model-folder", "api-key"],
)
def test_a_model_that_cannot_open_is_said_before_the_items_and_shots(
    url: str, scripted: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, model: str, said: str
) -> None:
    """The model is the first thing to fix: with a model that opens, these choices fall
    short of shots or select no items; with one that cannot open, that is what the command
    says, in the words the open would fail with, before any model loads.  Before, only a
    script file was looked at first, and after the items: a missing .gguf file or folder,
    or no API key, was said once the shots were fixed."""
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    for problem, choices in (("too few shots", ()), ("no items", ("--status", "rejected"))):
        assert problem in run_cli(url, "eval", "--model", scripted, *choices).stderr
        result = run_cli(url, "eval", "--model", model.format(tmp=tmp_path), *choices)
        assert refusal(result) == f"error: {said.format(tmp=tmp_path)}"


def _unknown_architecture(tmp_path: Path) -> Path:
    return write_folder(tmp_path, "model", {"config.json": '{"model_type": "no_such_arch"}'})


def _not_gguf(tmp_path: Path) -> Path:
    gguf = tmp_path / "model.gguf"
    gguf.write_bytes(b"PK\x03\x04" + bytes(60))
    return gguf


@pytest.mark.parametrize(
    ("make", "said"),
    [
        (_unknown_architecture, "cannot load the model"),
        (_not_gguf, "not a GGUF model transformers can read"),
    ],
    ids=["unknown-architecture", "not-gguf"],
)
def test_a_model_transformers_cannot_read_is_named(
    url: str, tmp_path: Path, make: Callable[[Path], Path], said: str
) -> None:
    """A folder of an unknown architecture, or a .gguf file that is not one: the file's
    fault, said in one line naming it, as a missing folder is."""
    model = make(tmp_path)
    result = run_cli(url, "eval", "--model", str(model), "--shots", "0")
    assert result.exit_code == 1
    assert f"{model}: {said}" in result.stderr
    assert "Traceback" not in result.output + result.stderr


def test_no_matching_items_is_explained(url: str, scripted: str) -> None:
    result = run_cli(url, "eval", "--model", scripted, "--status", "rejected")
    assert result.exit_code == 1 and "no items to evaluate (status rejected)" in result.stderr


def test_an_empty_status_says_how_many_items_another_one_holds(url: str, scripted: str) -> None:
    """A new project has nothing approved: eval says what it would take to evaluate the
    items there are, counted within the kinds and sources asked for, and says nothing
    of other statuses where those hold nothing either."""
    database = open_database(url)
    with database.session() as session:
        orders = count_items(session, kinds=["ordering"])
    database.dispose()
    assert orders > 1
    narrowed = run_cli(
        url, "eval", "--model", scripted, "--status", "rejected", "--kind", "ordering"
    )
    assert refusal(narrowed) == (
        "error: no items to evaluate (status rejected; kind ordering); "
        f"{orders} items have another status: `vetbench eval --status all` takes them"
    )
    nowhere = run_cli(
        url, "eval", "--model", scripted, "--status", "rejected", "--kind", "truefalse",
        "--source", "econ",
    )  # fmt: skip
    assert nowhere.stderr.strip() == (
        "error: no items to evaluate (status rejected; kind truefalse; source econ)"
    )
    misspelt = run_cli(url, "eval", "--model", scripted, "--source", "none")
    assert misspelt.stderr.strip() == (
        "error: no items come from source 'none'; sources: cflue, econ, shots"
    )


def test_bad_templates_and_shot_files_are_named(url: str, scripted: str, tmp_path: Path) -> None:
    templates = write_folder(tmp_path, "templates", {"question.en.txt": "Q: $scenario"})
    result = run_cli(
        url, "eval", "--model", scripted, "--shots", "0", "--templates", str(templates)
    )
    assert result.exit_code == 1 and "question.en.txt: unknown placeholder" in result.stderr

    shots = tmp_path / "shots.jsonl"
    shots.write_text('{"kind": "ordering"}\n', encoding="utf-8")
    result = run_cli(url, "eval", "--model", scripted, "--shot-file", str(shots))
    assert result.exit_code == 1 and f"{shots}:1: choices" in result.stderr
    database = open_database(url)
    with database.session() as session:
        assert session.exec(select(EvalRun)).all() == []  # nothing half-made
    database.dispose()


def test_a_templates_folder_without_templates_is_refused(
    url: str, scripted: str, tmp_path: Path
) -> None:
    """A run with it would record the folder, its prompts all in the built-in wording."""
    folder = write_folder(tmp_path, "templates", {"single.j2": "{{ question }}"})
    result = run_cli(url, "eval", "--model", scripted, "--templates", str(folder))
    assert result.exit_code == 1
    assert result.stderr.startswith(f"error: {folder}: no prompt template in this folder;")
    assert "question.LANG.txt" in result.stderr and len(result.stderr.splitlines()) == 1
    assert stored_runs(url) == []


def test_a_templates_folder_for_some_kinds_names_the_others(
    url: str, scripted: str, tmp_path: Path
) -> None:
    templates = {
        "instructions.ordering.en.txt": "Order them.",
        "shot.zh.txt": "$question_block $answer",
    }
    folder = write_folder(tmp_path, "templates", templates)
    args = ("--model", scripted, "--shots", "0", "--templates", str(folder))
    result = ok(run_cli(url, "eval", *args))
    # 0 shots: shot.zh.txt is used by no prompt; the ordering items get their instructions
    assert (
        f"note: the templates folder {folder} holds no template for the single/zh and "
        "multi/en and truefalse/zh items: they are asked in the built-in wording"
    ) in result.stderr
    params = eval_json(url, *args)["run"]["params"]
    assert params["templates_dir"] == str(folder)
    assert params["templates_read"] == ["instructions.ordering.en.txt", "shot.zh.txt"]
    every = ok(run_cli(url, "eval", *args[:3], "1", *args[4:], "--kind", "single"))
    assert "holds no template" not in every.stderr  # with a shot, single/zh reads shot.zh.txt


def test_a_kind_given_twice_by_shots_for_is_refused(url: str, scripted: str) -> None:
    args = ("--shots-for", "single=0", "--shots-for", "single=3")
    result = run_cli(url, "eval", "--model", scripted, *args)
    assert result.exit_code == 1 and result.stderr == (
        "error: --shots-for gives single twice (single=0, single=3): give each kind once\n"
    )
    assert stored_runs(url) == []


def test_shots_for_a_kind_not_evaluated_is_said(url: str, scripted: str) -> None:
    args = ("--model", scripted, "--shots", "0", "--shots-for", "ordering=2", "--kind", "single")
    result = ok(run_cli(url, "eval", *args))
    assert "note: --shots-for ordering=2 is not used: no ordering item is evaluated" in (
        result.stderr
    )
    params = eval_json(url, *args)["run"]["params"]
    assert params["shots_by_kind"] == {"single": 0}
    assert params["shot_notes"] == [
        "--shots-for ordering=2 is not used: no ordering item is evaluated"
    ]


def test_a_shot_file_through_the_cli(url: str, scripted: str) -> None:
    result = ok(
        run_cli(
            url,
            "eval",
            "--model",
            scripted,
            "--kind",
            "ordering",
            "--shot-file",
            str(FIXTURES / "shots_ordering.jsonl"),
            "--json",
        )
    )
    figures = json.loads(result.stdout)
    (prediction, *_) = stored(url, figures["run_id"])
    assert prediction.prompt.count("Answer:") == 6  # five shots and the question
    assert "not-yet-approved" not in result.stderr


def test_eval_json_prints_only_json_its_notes_inside(url: str, scripted: str) -> None:
    """A program reading ``--json`` gets one JSON document and nothing else, even when the
    run falls short of shots: the notes are in it (``run.params.shot_notes``)."""
    result = ok(
        run_cli(url, "eval", "--model", scripted, "--shots", "5", "--allow-fewer-shots", "--json")
    )
    assert result.stderr == ""
    figures = json.loads(result.stdout)
    assert figures["run"]["params"]["shot_notes"], "the mixed set leaves too few shots"
    assert figures["accuracy"] == 1.0
    shown = ok(run_cli(url, "eval", "--model", scripted, "--shots", "5", "--allow-fewer-shots"))
    assert "note: " in shown.stderr  # without --json a person reads them

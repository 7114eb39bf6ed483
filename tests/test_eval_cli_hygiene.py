"""`eval`, `runs` and `generate` as a careful command line: untrusted text never reaches the
terminal raw, an empty selection is said before any model loads, a model cache that cannot
be written is one line, and the acting person is the one every other command records."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from eval_helpers import mixed_set, mixed_set_url, ok, refusal
from fake_openai_server import FakeOpenAIServer, server_error
from helpers import run_cli
from test_generation import ARTICLES_CSV, generate, ordering_answer
from test_generation import KEY_ENV as GENERATION_KEY_ENV

from db.audit import read_audit
from db.engine import Database, open_database
from db.identity import resolve_identity

ESC = "\x1b"
HOSTILE = f"{ESC}]0;owned{ESC}\\{ESC}[2J{ESC}[31mred"


@pytest.fixture
def url(db_path: Path) -> str:
    return mixed_set_url(db_path)


def hostile_model(tmp_path: Path, name: str) -> str:
    """A scripted model whose file name and outputs carry terminal escape sequences."""
    folder = tmp_path / f"models{ESC}[2J"
    folder.mkdir(exist_ok=True)
    path = folder / f"{name}{ESC}[31m.json"
    outputs = {"econ:1": f"D, A, C, B {HOSTILE}\nline two", "cflue:1": f"答案：C{HOSTILE}"}
    path.write_text(json.dumps(outputs), encoding="utf-8")
    return f"scripted:{path}"


def test_eval_and_runs_show_untrusted_text_with_visible_stand_ins(url: str, tmp_path: Path) -> None:
    first, second = hostile_model(tmp_path, "one"), hostile_model(tmp_path, "two")
    outputs = [
        run_cli(url, "eval", "--model", first, "--shots", "0", "--kind", "ordering"),
        run_cli(url, "eval", "--model", first, "--shots", "0", "--kind", "single"),
        run_cli(url, "eval", "--model", second, "--shots", "0", "--kind", "single"),
        run_cli(url, "runs"),
        run_cli(url, "runs", "show", "1"),
        run_cli(url, "runs", "show", "1", "--item", "econ:1", "--prompt"),
        run_cli(url, "runs", "compare", "2", "3"),
        run_cli(url, "runs", "suspects"),
        run_cli(url, "runs", "table"),
        run_cli(url, "runs", "table", "--format", "md"),
    ]
    for result in outputs:
        ok(result)
        assert ESC not in result.output + result.stderr, result.output
    header, listing = outputs[0].stdout, outputs[3].stdout
    assert "␛[31m.json" in header and "␛[31m.json" in listing
    one = outputs[5].stdout
    raw = one.split("raw output:\n", 1)[1]
    assert raw.startswith("D, A, C, B ␛]0;owned␛\\␛[2J␛[31mred\nline two")  # lines kept
    suspects = outputs[7].stdout
    assert "cflue:1: key B, both models that answered it (" in suspects
    assert ") answer C\n" in suspects and "␛[31m" in suspects


def test_generate_shows_untrusted_failures_with_visible_stand_ins(
    db_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(GENERATION_KEY_ENV, "sk-generate")
    with FakeOpenAIServer(default=lambda _r: server_error(500, f"boom {HOSTILE}")) as server:
        result = generate(
            db_path, server, "--articles", str(ARTICLES_CSV), "--kind", "ordering",
            "--max-retries", "0",
        )  # fmt: skip
    assert result.exit_code == 1
    assert ESC not in result.output + result.stderr
    assert "boom ␛]0;owned" in result.stderr


def test_an_empty_selection_is_said_before_any_model_loads(url: str) -> None:
    # A hub id not in the local cache: had it been opened first, that would be the error.
    # (A missing model folder is said first: seeing that takes no load.)
    result = run_cli(url, "eval", "--model", "vetbench-tests/no-such-model", "--status", "rejected")
    assert refusal(result) == (
        "error: no items to evaluate (status rejected); "
        "12 items have another status: `vetbench eval --status all` takes them"
    )


def test_an_unwritable_model_cache_is_one_line(
    url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from evaluator.demo_model import ModelNotFoundError, demo_gguf_path

    try:
        demo_gguf_path()
    except ModelNotFoundError:
        pytest.skip("the demo model's package is not installed")
    blocked = tmp_path / "not-a-folder"
    blocked.write_text("a file where the cache folder should be", encoding="utf-8")
    monkeypatch.setenv("VETBENCH_CACHE", str(blocked))
    result = run_cli(url, "eval", "--model", "demo", "--kind", "ordering", "--shots", "0")
    assert result.exit_code == 1
    lines = result.stderr.strip().splitlines()
    assert lines[-1].startswith("error: cannot write the model cache")
    assert "VETBENCH_CACHE" in lines[-1] and "Traceback" not in result.stderr


def test_eval_and_generate_record_the_acting_person(
    database: Database, database_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    mixed_set(database)
    acting = resolve_identity(database, None, register=False).name
    model = hostile_model(tmp_path, "audited")
    ok(run_cli(database_url, "eval", "--model", model, "--shots", "0", "--kind", "single"))
    monkeypatch.setenv(GENERATION_KEY_ENV, "sk-generate")
    with FakeOpenAIServer(default=ordering_answer) as server:
        generator = server.cli_options("fake-model", GENERATION_KEY_ENV)
        run_cli(
            database_url, "generate", *generator, "--articles", str(ARTICLES_CSV),
            "--kind", "ordering", "--max-retries", "0",
        )  # fmt: skip
    database = open_database(database_url)
    with database.session() as session:
        events = read_audit(session, actions=("eval-run", "generate"))
    database.dispose()
    assert {event.action for event in events} == {"eval-run", "generate"}
    assert {event.actor for event in events} == {acting}

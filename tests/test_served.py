"""`vetbench eval` through a real model server: `transformers serve` of the tiny chat model
on 127.0.0.1 (one server for the module), against the local transformers backend on the
same model and prompts.  Generate mode answers alike, item for item, at concurrency 1
and 8; CFLUE's protocol with long answers; score mode refused in one line before any
item is sent (this server returns no prompt log-probabilities); the server's own error
bodies reach the predictions; and a server killed mid-run loses nothing on --resume."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from eval_helpers import mixed_set_url, ok
from helpers import FIXTURES, run_cli
from served_model import ServedModel
from sqlmodel import select
from tiny_model import tiny_model_dir

from db.engine import open_database
from db.models import EvalRun, Prediction

# One test process runs this module (scripts/test.sh: --dist loadgroup), so that its server
# of the tiny model starts once, not in each process that draws one of its tests.
pytestmark = pytest.mark.xdist_group(__name__)

ITEMS = 8  # the mixed set's approved items: every kind, in English and Chinese


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tiny_model_dir(tmp_path_factory, chat=True)


@pytest.fixture(scope="module")
def served(model_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServedModel]:
    with ServedModel(model_dir, tmp_path_factory.mktemp("served") / "server.log") as server:
        yield server


def local_options(model_dir: Path) -> tuple[str, ...]:
    """The local backend in the server's precision: float32 (``auto`` would pick bfloat16
    on a CPU with bfloat16 units, and the server loads the weights as saved)."""
    return ("--model", str(model_dir), "--dtype", "float32")


def predictions(url: str, run_id: int) -> dict[str, Prediction]:
    database = open_database(url)
    try:
        with database.session() as session:
            found = session.exec(select(Prediction).where(Prediction.run_id == run_id))
            return {prediction.item_id: prediction for prediction in found}
    finally:
        database.dispose()


def run_row(url: str, run_id: int) -> EvalRun:
    database = open_database(url)
    try:
        with database.session() as session:
            run = session.get(EvalRun, run_id)
            assert run is not None
            return run
    finally:
        database.dispose()


def count(url: str, table: type[EvalRun] | type[Prediction]) -> int:
    """Rows of ``table`` stored so far (runs, or predictions of any run)."""
    database = open_database(url)
    try:
        with database.session() as session:
            return len(session.exec(select(table.id)).all())
    finally:
        database.dispose()


def evaluate(url: str, *args: str) -> dict[str, object]:
    figures: dict[str, object] = json.loads(ok(run_cli(url, "eval", *args, "--json")).stdout)
    return figures


def assert_same_answers(local: dict[str, Prediction], served: dict[str, Prediction]) -> None:
    """Every item answered alike: the same text generated, the same answer parsed."""
    assert set(served) == set(local)
    for item_id, prediction in served.items():
        assert prediction.error is None, (item_id, prediction.error)
        assert prediction.raw_output == local[item_id].raw_output, item_id
        assert prediction.parsed_answer == local[item_id].parsed_answer, item_id


@pytest.mark.slow
def test_served_answers_match_the_local_backend_at_concurrency_1_and_8(
    database_url: str, tmp_path: Path, model_dir: Path, served: ServedModel
) -> None:
    url = mixed_set_url(database_url)
    common = ("--shots", "1", "--seed", "7")
    local = evaluate(url, *local_options(model_dir), *common)
    before = len(served.generation_requests())
    one = evaluate(url, *served.cli_options(), *common, "--concurrency", "1")
    assert len(served.generation_requests()) == before + ITEMS
    # Another database, so its response cache is empty and all eight go to the server.
    other = mixed_set_url(tmp_path / "other.db")
    eight = evaluate(other, *served.cli_options(), *common, "--concurrency", "8")
    assert served.generation_requests()[before:] == [200] * (2 * ITEMS)

    answers = predictions(url, int(str(local["run_id"])))
    assert len(answers) == ITEMS
    assert len({p.raw_output for p in answers.values()}) > 1  # answers that can differ
    assert_same_answers(answers, predictions(url, int(str(one["run_id"]))))
    assert_same_answers(answers, predictions(other, int(str(eight["run_id"]))))
    # The run records the server it reached and the model id the server reports.
    recorded = run_row(url, int(str(one["run_id"]))).params
    assert recorded["base_url"] == served.base_url
    assert recorded["server_model_id"] == str(model_dir)
    assert "server_version" not in recorded  # transformers serve reports none
    assert run_row(other, int(str(eight["run_id"]))).params["concurrency"] == 8


@pytest.mark.slow
def test_cflue_protocol_with_long_answers_matches_the_local_backend(
    db_path: Path, model_dir: Path, served: ServedModel
) -> None:
    url = mixed_set_url(db_path)
    common = ("--protocol", "cflue", "--kind", "single", "--max-new-tokens", "160")
    local = evaluate(url, *local_options(model_dir), *common)
    remote = evaluate(url, *served.cli_options(), *common, "--concurrency", "2")
    answers = predictions(url, int(str(local["run_id"])))
    assert len(answers) == 2
    assert all(len(p.raw_output) > 200 for p in answers.values())  # long answers indeed
    assert_same_answers(answers, predictions(url, int(str(remote["run_id"]))))


def test_score_mode_is_refused_in_one_line_before_any_item_is_sent(
    db_path: Path, served: ServedModel
) -> None:
    url = mixed_set_url(db_path)
    before = len(served.generation_requests())
    result = run_cli(url, "eval", *served.cli_options(), "--mode", "score", "--shots", "0")
    assert result.exit_code == 1
    lines = result.output.strip().splitlines()
    assert len(lines) == 1, result.output
    assert "cannot score" in lines[0] and "no log-probabilities of the prompt" in lines[0]
    assert "--mode generate" in lines[0]
    assert len(served.generation_requests()) == before + 1  # the one probe, no item
    assert count(url, EvalRun) == 0


def test_the_servers_own_error_text_reaches_the_prediction(
    db_path: Path, served: ServedModel
) -> None:
    """transformers serve answers a model it does not serve with a FastAPI body,
    ``{"detail": "..."}``: the prediction says what the server said."""
    url = mixed_set_url(db_path)
    result = run_cli(
        url,
        "eval",
        "--model",
        "openai:another-model",
        "--base-url",
        served.base_url,
        "--limit",
        "1",
        "--shots",
        "0",
        "--max-retries",
        "0",
    )
    assert result.exit_code == 1
    (failed,) = predictions(url, 1).values()
    assert failed.error is not None
    assert "HTTP 400" in failed.error and "Server is pinned to" in failed.error


@pytest.mark.slow
def test_a_server_killed_mid_run_loses_nothing_on_resume(
    db_path: Path, served: ServedModel
) -> None:
    url = mixed_set_url(db_path)
    command = [
        sys.executable,
        "-c",
        "from reviewer.cli import main; main()",
        "--db",
        url,
        "eval",
        *served.cli_options(),
        "--shots",
        "0",
        "--max-new-tokens",
        "64",
        "--concurrency",
        "1",
        "--max-retries",
        "1",
        "--max-wait",
        "0.2",
    ]
    env = {**os.environ, "PYTHONPATH": str(FIXTURES.parent)}
    evaluation = subprocess.Popen(
        command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        deadline = time.monotonic() + 300
        while not count(url, Prediction):
            assert evaluation.poll() is None, evaluation.communicate()
            assert time.monotonic() < deadline, "no prediction stored in time"
            time.sleep(0.02)
        served.kill()
        evaluation.communicate(timeout=300)
    finally:
        if evaluation.poll() is None:
            evaluation.kill()
    first = predictions(url, 1)
    kept = {item: p for item, p in first.items() if p.error is None}
    failed = [p for p in first.values() if p.error is not None]
    assert kept and len(kept) < ITEMS  # killed mid-run indeed
    assert all("cannot reach" in (p.error or "") for p in failed)

    served.start()  # a new server process on the same port
    resumed = evaluate(url, "--resume", "1", "--concurrency", "1")
    assert resumed["run_id"] == 1
    final = predictions(url, 1)
    assert len(final) == ITEMS and all(p.error is None for p in final.values())
    # Nothing recomputed: the new server was asked only for what was missing, and what
    # was finished before the kill is the same row, untouched.
    assert served.generation_requests() == [200] * (ITEMS - len(kept))
    for item_id, prediction in kept.items():
        again = final[item_id]
        assert (again.id, again.raw_output, again.created_at) == (
            prediction.id,
            prediction.raw_output,
            prediction.created_at,
        )

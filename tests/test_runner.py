"""The run loop: a frozen item set, each prediction stored as soon as it is finished,
resume without recomputation, infrastructure failures retried, Ctrl-C, score mode."""

from __future__ import annotations

import hashlib
import math
import os
import shutil
import socket
from dataclasses import replace
from pathlib import Path

import pytest
from eval_helpers import ordering, store
from helpers import APPROVED_ITEMS, BUILTIN_TEMPLATES, FIXTURES
from sqlmodel import select
from tiny_model import tiny_model_dir

from db.engine import Database
from db.items import get_item
from db.models import EvalRun, Prediction
from db.validation import ItemDraft
from db.vocabulary import ItemKind, ItemStatus
from evaluator.backends.scripted import BeforeAnswer, Script, ScriptedBackend
from evaluator.item_filter import ItemFilter
from evaluator.prompts import ShotGroup, build_prompt, load_templates
from evaluator.runner import (
    RunProgress,
    RunSetupError,
    create_run,
    execute_run,
    pending_item_ids,
)

ANSWERS = {
    "econ:1": " D, A, C, B",  # right (key DACB)
    "econ:2": " A, B, C, D",  # wrong (key BADC)
    "cflue:1": "B",  # right
    "cflue:2": "我不确定",  # unparsed
    "cflue:3": "AB",  # wrong (key ABD)
    "cflue:4": "BC",  # right
    "cflue:5": "对",  # right (A)
    "cflue:6": "A",  # wrong (key B)
}


TIMEOUT = "timed out after 60 s"


def failing(item_ids: set[str] | list[str]) -> Script:
    """ANSWERS, but these items time out (infrastructure failures)."""
    return Script(ANSWERS, failures=dict.fromkeys(item_ids, TIMEOUT))


def raising(error: BaseException, *, before_answer: int) -> BeforeAnswer:
    """A hook that raises ``error`` before the answer at this position (a crash, a Ctrl-C)."""

    def hook(position: int, _item_id: str) -> None:
        if position == before_answer:
            raise error

    return hook


def new_run(database: Database, backend: ScriptedBackend, **options: object) -> int:
    settings: dict[str, object] = {"shots": 1, "item_filter": APPROVED_ITEMS, **options}
    return create_run(database, backend.info, **settings)  # type: ignore[arg-type]


def predictions(database: Database, run_id: int) -> dict[str, Prediction]:
    with database.session() as session:
        rows = session.exec(select(Prediction).where(Prediction.run_id == run_id)).all()
    return {row.item_id: row for row in rows}


def get_run(database: Database, run_id: int) -> EvalRun:
    with database.session() as session:
        run = session.get(EvalRun, run_id)
    assert run is not None
    return run


def test_a_run_freezes_the_approved_set_and_its_settings(
    database: Database, approved: list[str]
) -> None:
    backend = ScriptedBackend(ANSWERS)
    run_id = new_run(database, backend)
    run = get_run(database, run_id)
    assert run.item_ids == approved
    assert run.model == "scripted" and run.backend == "scripted" and run.shots == 1
    assert run.status == "interrupted"  # created, not yet executed: resumable
    params = run.params
    assert params["template_hash"] == load_templates().hash
    assert params["seed"] == 1234 and params["device"] == "none"
    assert params["revisions"] == {item_id: 1 for item_id in approved}
    assert params["shots_used"] == {
        "ordering/en/4": [{"id": "shots:1", "revision": 1}],  # orders: per number of events
        "single/zh": [{"id": "shots:2", "revision": 1}],
        "multi/en": [{"id": "shots:3", "revision": 1}],
        "truefalse/zh": [{"id": "shots:4", "revision": 1}],
    }
    # Every approved item is evaluated, so the shots had to come from agreed items.
    assert any("not-yet-approved shots:1" in note for note in params["shot_notes"])

    # Items approved later do not join the frozen set.
    store(database, [("econ:9", ordering(9))])
    execute_run(database, run_id, backend)
    assert set(predictions(database, run_id)) == set(approved)


def test_each_prediction_is_in_the_database_as_soon_as_it_is_finished(
    database: Database,
    approved: list[str],
) -> None:
    backend = ScriptedBackend(ANSWERS)
    run_id = new_run(database, backend)
    seen: list[RunProgress] = []

    def check(progress: RunProgress) -> None:
        stored = predictions(database, run_id)
        assert len(stored) == progress.finished_this_session
        assert progress.last is not None and progress.last.item_id in stored
        assert get_run(database, run_id).status == "running"
        seen.append(progress)

    status = execute_run(database, run_id, backend, on_progress=check)
    assert status == "finished"
    assert len(seen) == 8 and seen[-1].done == 8 and seen[-1].total == 8
    assert seen[-1].correct == 4 and seen[-1].unparsed == 1
    assert seen[-1].accuracy == 0.5
    run = get_run(database, run_id)
    assert run.status == "finished" and run.finished_at is not None and run.error is None


def test_a_prediction_stores_prompt_output_answer_scores_and_latency(
    database: Database,
    approved: list[str],
) -> None:
    backend = ScriptedBackend(ANSWERS, latency_s=0.25)
    run_id = new_run(database, backend)
    execute_run(database, run_id, backend)
    stored = predictions(database, run_id)

    right = stored["econ:1"]
    with database.session() as session:
        item, shot = get_item(session, "econ:1"), get_item(session, "shots:1")
    assert item is not None and shot is not None
    assert right.prompt == build_prompt(item, [shot], load_templates()).text
    assert right.prompt_hash == hashlib.sha256(right.prompt.encode()).hexdigest()
    assert right.raw_output == " D, A, C, B" and right.parsed_answer == "DACB"
    assert right.correct is True and right.failure_kind is None
    assert right.scores == {
        "correct": True,
        "pairwise": 1.0,
        # what each extractor read (the first decides), and the label the key starts with
        "extracted": {"lenient": "DACB", "econlogicqa": "DACB", "econlogicqa-start": "DACB"},
        "key_position": "D",
    }
    assert right.latency_s == 0.25 and right.revision_number == 1

    wrong = stored["econ:2"]  # A, B, C, D against B, A, D, C: 4 of 6 pairs agree
    assert wrong.correct is False and wrong.scores["pairwise"] == pytest.approx(4 / 6)
    unparsed = stored["cflue:2"]
    assert unparsed.parsed_answer is None and unparsed.failure_kind == "unparsed"
    assert unparsed.correct is False
    multi = stored["cflue:3"]
    assert multi.parsed_answer == "AB" and multi.scores["set_f1"] == pytest.approx(0.8)
    assert stored["cflue:5"].parsed_answer == "A" and stored["cflue:5"].correct is True

    request = backend.requests_seen["econ:1"]
    assert request.stop == ("\n\n", "\nQuestion:") and request.max_new_tokens == 24
    assert backend.requests_seen["cflue:1"].stop == ("\n\n", "\n题目：")


def test_a_stopped_run_resumes_without_recomputing_finished_items(
    database: Database, approved: list[str]
) -> None:
    first = ScriptedBackend(ANSWERS)
    run_id = new_run(database, first)
    calls = 0

    def stop_after_three() -> bool:
        nonlocal calls
        calls += 1
        return calls >= 3

    assert execute_run(database, run_id, first, should_stop=stop_after_three) == "interrupted"
    kept = predictions(database, run_id)
    assert len(kept) == 3 and get_run(database, run_id).status == "interrupted"

    second = ScriptedBackend(ANSWERS)
    assert execute_run(database, run_id, second) == "finished"
    (call,) = second.generate_calls
    assert sorted(call) == sorted(set(approved) - set(kept))  # only the 5 unfinished items
    after = predictions(database, run_id)
    assert len(after) == 8
    for item_id, row in kept.items():
        assert (after[item_id].id, after[item_id].created_at) == (row.id, row.created_at)

    third = ScriptedBackend(ANSWERS)
    assert execute_run(database, run_id, third) == "finished"  # nothing left to do
    assert third.generate_calls == []


def test_infrastructure_failures_are_kept_apart_and_retried_on_resume(
    database: Database,
    approved: list[str],
) -> None:
    flaky = ScriptedBackend(failing(["cflue:3"]))
    run_id = new_run(database, flaky)
    assert execute_run(database, run_id, flaky) == "finished"
    failed = predictions(database, run_id)["cflue:3"]
    assert failed.failure_kind == "infrastructure" and failed.correct is None
    assert failed.error == "timed out after 60 s" and failed.parsed_answer is None
    run = get_run(database, run_id)
    assert run.error == f"1 infrastructure failure: {TIMEOUT}; resume the run to retry it"
    assert pending_item_ids(database, run_id) == ["cflue:3"]

    healthy = ScriptedBackend(ANSWERS)
    execute_run(database, run_id, healthy)
    assert healthy.generate_calls == [["cflue:3"]]
    retried = predictions(database, run_id)["cflue:3"]
    assert retried.id == failed.id  # the failed attempt is replaced, not duplicated
    assert retried.failure_kind is None and retried.parsed_answer == "AB"
    assert get_run(database, run_id).error is None


def test_a_run_whose_every_prediction_failed_is_marked_failed(
    database: Database, approved: list[str]
) -> None:
    down = ScriptedBackend(failing(approved))
    run_id = new_run(database, down)
    assert execute_run(database, run_id, down) == "failed"
    assert get_run(database, run_id).error == (
        f"all 8 predictions failed: {TIMEOUT}; resume the run to retry them"
    )


def test_the_run_says_why_its_predictions_failed_most_often(
    database: Database, approved: list[str]
) -> None:
    """The reason most failures gave, and how many gave another: nobody has to read the
    predictions one by one to learn that the server was down."""
    refused = "cannot reach http://127.0.0.1:9/v1 (connection, 3 attempts)"
    script = Script(
        ANSWERS, failures={**dict.fromkeys(approved[:5], refused), approved[5]: TIMEOUT}
    )
    flaky = ScriptedBackend(script)
    run_id = new_run(database, flaky)
    assert execute_run(database, run_id, flaky) == "finished"
    assert get_run(database, run_id).error == (
        f"6 infrastructure failures: {refused} (1 other failure gave another); "
        "resume the run to retry them"
    )


def test_ctrl_c_marks_the_run_interrupted_and_keeps_finished_predictions(
    database: Database,
    approved: list[str],
) -> None:
    backend = ScriptedBackend(ANSWERS, before_answer=raising(KeyboardInterrupt(), before_answer=2))
    run_id = new_run(database, backend)
    with pytest.raises(KeyboardInterrupt):
        execute_run(database, run_id, backend)
    run = get_run(database, run_id)
    assert run.status == "interrupted" and run.finished_at is not None
    assert len(predictions(database, run_id)) == 2
    assert len(pending_item_ids(database, run_id)) == 6


def test_a_crash_marks_the_run_failed_with_the_reason(
    database: Database, approved: list[str]
) -> None:
    backend = ScriptedBackend(
        ANSWERS, before_answer=raising(RuntimeError("the accelerator caught fire"), before_answer=1)
    )
    run_id = new_run(database, backend)
    with pytest.raises(RuntimeError):
        execute_run(database, run_id, backend)
    run = get_run(database, run_id)
    assert run.status == "failed" and "caught fire" in (run.error or "")
    assert len(predictions(database, run_id)) == 1


def test_the_backend_must_be_the_one_the_run_was_made_for(
    database: Database, approved: list[str]
) -> None:
    run_id = new_run(database, ScriptedBackend(ANSWERS))
    with pytest.raises(RunSetupError, match="evaluates scripted:scripted"):
        execute_run(database, run_id, ScriptedBackend(ANSWERS, model="another"))


def test_a_run_still_running_in_another_process_is_not_resumed(
    database: Database, approved: list[str]
) -> None:
    backend = ScriptedBackend(ANSWERS)
    run_id = new_run(database, backend)
    with database.transaction() as session:
        run = session.get(EvalRun, run_id)
        assert run is not None
        run.status = "running"
        run.host = socket.gethostname()
        run.params = {**run.params, "pid": os.getppid()}  # alive: the test runner's parent
        session.add(run)
    with pytest.raises(RunSetupError, match="still running"):
        execute_run(database, run_id, backend)


def test_no_matching_items_is_an_error(database: Database, approved: list[str]) -> None:
    with pytest.raises(RunSetupError, match="no items to evaluate.*kind ordering"):
        new_run(
            database,
            ScriptedBackend(),
            item_filter=ItemFilter(statuses=("rejected",), kinds=("ordering",)),
        )


def test_limit_takes_the_first_items(database: Database, approved: list[str]) -> None:
    run_id = new_run(database, ScriptedBackend(), item_filter=replace(APPROVED_ITEMS, limit=3))
    assert get_run(database, run_id).item_ids == approved[:3]


def test_changed_templates_stop_a_resume(
    database: Database, tmp_path: Path, approved: list[str]
) -> None:
    templates = tmp_path / "templates"
    shutil.copytree(BUILTIN_TEMPLATES, templates)
    backend = ScriptedBackend(ANSWERS)
    run_id = new_run(database, backend, templates_dir=templates)
    assert get_run(database, run_id).params["templates_dir"] == str(templates.resolve())
    (templates / "question.en.txt").write_text("Q: $question\n$options\nA:", encoding="utf-8")
    with pytest.raises(RunSetupError, match="templates changed"):
        execute_run(database, run_id, backend)


def test_shots_can_come_from_a_shot_file(
    database: Database, tmp_path: Path, approved: list[str]
) -> None:
    shot_file = tmp_path / "shots.jsonl"
    shutil.copy(FIXTURES / "shots_ordering.jsonl", shot_file)
    backend = ScriptedBackend(ANSWERS)
    run_id = new_run(
        database,
        backend,
        shots=5,
        shot_file=shot_file,
        item_filter=replace(APPROVED_ITEMS, kinds=("ordering",)),
    )
    params = get_run(database, run_id).params
    assert [s["id"] for s in params["shots_used"]["ordering/en/4"]] == [
        f"shots.jsonl:{n}" for n in range(1, 6)
    ]
    execute_run(database, run_id, backend, should_stop=lambda: True)
    (first,) = predictions(database, run_id).values()
    assert "A city's only steel mill announces it will close." in first.prompt
    assert "Answer: D, A, C, B\n\n" in first.prompt

    shot_file.write_text(shot_file.read_text(encoding="utf-8")[:-50], encoding="utf-8")
    with pytest.raises(RunSetupError, match="shot file .* changed"):
        execute_run(database, run_id, backend)


def test_score_mode_ranks_every_candidate_answer(database: Database, approved: list[str]) -> None:
    favourites = {
        "econ:1": " D, A, C, B",
        "econ:2": " C, D, B, A",
        "cflue:1": "B",
        "cflue:3": " ABD",
    }
    backend = ScriptedBackend(favourites)  # the scripted answer is the candidate ranked first
    run_id = new_run(database, backend, mode="score")
    assert execute_run(database, run_id, backend) == "finished"
    (requests,) = backend.score_calls
    by_id = {request.item_id: request for request in requests}
    assert len(by_id["econ:1"].candidates) == 24 and " D, A, C, B" in by_id["econ:1"].candidates
    assert by_id["cflue:1"].candidates == ("A", "B", "C", "D")  # Chinese: no space after 答案：
    assert len(by_id["cflue:3"].candidates) == 15 and " ABD" in by_id["cflue:3"].candidates
    assert by_id["cflue:5"].candidates == ("A", "B")

    stored = predictions(database, run_id)
    assert stored["econ:1"].parsed_answer == "DACB" and stored["econ:1"].correct is True
    assert stored["econ:1"].raw_output == "D, A, C, B"
    assert stored["econ:1"].scores["key_rank"] == 1 and stored["econ:1"].scores["candidates"] == 24
    assert stored["econ:2"].parsed_answer == "CDBA" and stored["econ:2"].correct is False
    assert stored["cflue:3"].parsed_answer == "ABD" and stored["cflue:3"].correct is True
    assert len(stored["econ:2"].scores["log_likelihoods"]) == 10  # the best ten are kept
    assert stored["econ:2"].scores["log_likelihoods"]["CDBA"] == 0.0
    assert stored["econ:2"].scores["log_likelihoods"]["ABCD"] == -1.0  # every other candidate


def test_score_mode_leaves_out_items_with_too_many_candidates(
    database: Database, approved: list[str]
) -> None:
    six_events = ItemDraft(
        kind="ordering",
        prompt="A long chain of events. Put them in order.",
        choices={label: f"Event {label}." for label in "ABCDEF"},
        key="FEDCBA",
    )
    store(database, [("long:1", six_events)], status=ItemStatus.APPROVED)
    run_id = new_run(database, ScriptedBackend(), mode="score")
    run = get_run(database, run_id)
    assert "long:1" not in run.item_ids and "long:1" in run.params["excluded"]
    generate_run = new_run(database, ScriptedBackend())
    assert "long:1" in get_run(database, generate_run).item_ids


@pytest.mark.slow
def test_a_run_on_the_tiny_model_stores_the_exact_prompts(
    database: Database, tmp_path_factory: pytest.TempPathFactory, approved: list[str]
) -> None:
    from evaluator.backends.transformers_backend import TransformersBackend

    backend = TransformersBackend(
        str(tiny_model_dir(tmp_path_factory)), device="cpu", dtype="float32"
    )
    run_id = create_run(database, backend.info, shots=1, item_filter=APPROVED_ITEMS)
    assert execute_run(database, run_id, backend) == "finished"
    stored = predictions(database, run_id)
    assert set(stored) == set(approved)
    shots_used = get_run(database, run_id).params["shots_used"]
    with database.session() as session:
        for item_id, row in stored.items():
            item = get_item(session, item_id)
            assert item is not None
            group = ShotGroup.of(item).name  # type: ignore[arg-type]
            shots = [get_item(session, s["id"]) for s in shots_used[group]]
            assert row.prompt == build_prompt(item, shots, load_templates()).text  # type: ignore[arg-type]
            assert row.failure_kind in (None, "unparsed") and row.latency_s > 0


def test_a_score_that_is_not_a_number_fails_the_prediction_for_any_backend() -> None:
    """A NaN log-likelihood (a half-precision overflow, a server's) ranks nothing: the item
    is a failed call, retried by --resume, never a wrong answer in the figures."""
    from db.items import ItemSnapshot
    from evaluator.backends.base import ScoringResult
    from evaluator.run_plan import Shown
    from evaluator.run_predict import scored_prediction

    item = ItemSnapshot(
        id="s:1", kind=ItemKind.SINGLE, source="s", source_ref="", language="en",
        status="approved", revision=1, prompt="Which?", choices={"A": "a", "B": "b"}, key="A",
        explanation=None,
    )  # fmt: skip
    for scores in ((math.nan, -1.0), (-math.inf, -1.0)):
        result = ScoringResult("s:1", "Which?\nAnswer:", scores, latency_s=0.1)
        prediction = scored_prediction(Shown(item, None), item, result, ("A", "B"))
        assert prediction.is_infrastructure_failure and prediction.correct is None
        assert prediction.error == "backend returned scores that are not numbers (NaN or infinite)"
    fine = ScoringResult("s:1", "Which?\nAnswer:", (-0.5, -1.0), latency_s=0.1)
    assert scored_prediction(Shown(item, None), item, fine, ("A", "B")).correct is True

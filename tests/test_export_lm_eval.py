"""The lm-eval export: lm-eval's own task loader finds and builds the tasks, and each document's
prompt is exactly the one vetbench builds for that item. No model is run here."""

from __future__ import annotations

import functools
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from eval_helpers import mixed_set, ordering, store
from helpers import APPROVED_ITEMS
from sqlmodel import select

from db.engine import Database
from db.items import iter_items
from db.models import EvalRun, Prediction
from db.validation import ItemDraft
from db.vocabulary import ItemStatus
from evaluator.backends.scripted import ScriptedBackend
from evaluator.exports.folder import MANIFEST_NAME
from evaluator.exports.lm_eval import export_lm_eval, read_answer
from evaluator.exports.selection import ExportError, Selection
from evaluator.extractors import LENIENT, read_answers
from evaluator.item_filter import ItemFilter
from evaluator.kinds import MAX_SCORE_CANDIDATES
from evaluator.prompts import build_prompt, load_templates, select_shots, stop_sequences
from evaluator.run_plan import generation_requests, plan_run
from evaluator.runner import create_run, execute_run

lm_eval_tasks = pytest.importorskip("lm_eval.tasks")

ROOT = Path(__file__).resolve().parent.parent
SHOT_FILE = ROOT / "fixtures" / "shots_ordering.jsonl"


@functools.cache
def lm_eval_builtin_task_names() -> frozenset[str]:
    """Every task, group and tag name lm_eval ships (built once per test process)."""
    return frozenset(lm_eval_tasks.TaskManager().all_tasks)


def load_tasks(folder: Path, names: list[str], *, defaults: bool = False) -> dict[str, Any]:
    manager = lm_eval_tasks.TaskManager(include_path=str(folder), include_defaults=defaults)
    return manager.load(names)


def read_manifest(folder: Path) -> dict[str, Any]:
    """The manifest an export wrote into ``folder``."""
    return json.loads((folder / MANIFEST_NAME).read_text(encoding="utf-8"))


def exported(database: Database, out: Path, **options: Any) -> dict[str, Any]:
    """Export the items as the lm-eval task folder ``out`` (``options``: those of
    ``export_lm_eval``); the manifest it wrote."""
    export_lm_eval(database, out, **options)
    return read_manifest(out)


def vetbench_prompts(database: Database, shots: int) -> dict[str, str]:
    """The prompt vetbench gives each approved item: seeded shots from outside the set."""
    templates = load_templates()
    with database.session() as session:
        pool = list(iter_items(session))
    evaluated = [item for item in pool if item.status == ItemStatus.APPROVED]
    excluded = {item.id for item in evaluated}
    prompts = {}
    for item in evaluated:
        chosen = select_shots(
            pool, item.kind, shots, seed=1234, exclude_ids=excluded, language=item.language
        )
        prompts[item.id] = build_prompt(item, chosen, templates).text
    return prompts


# Both databases' runs in one process: lm_eval's index of its own tasks (~9 s) is built once.
@pytest.mark.xdist_group("lm_eval_builtin_index")
@pytest.mark.slow
def test_task_loader_finds_and_builds_the_tasks(database: Database, tmp_path: Path) -> None:
    approved = mixed_set(database)
    out = tmp_path / "task"
    summary = export_lm_eval(database, out, shots=5)
    assert summary.count == 8 and summary.by_kind["ordering"] == 2
    assert "vetbench" in summary.tasks and "--include_path" in summary.command

    # the exported names clash with none of lm_eval's own (whose index takes 8 s to build)
    manager = lm_eval_tasks.TaskManager(include_path=str(out), include_defaults=False)
    exported = {"vetbench", "vetbench_mc", "vetbench_ordering", "vetbench_mc_multi"}
    assert exported <= set(manager.all_tasks)
    assert not exported & lm_eval_builtin_task_names()
    loaded = manager.load(["vetbench"])
    assert set(loaded["tasks"]) == {
        "vetbench_multi",
        "vetbench_ordering",
        "vetbench_single",
        "vetbench_truefalse",
    }
    expected = vetbench_prompts(database, shots=5)
    seen = {}
    for task in loaded["tasks"].values():
        assert task.OUTPUT_TYPE == "generate_until"
        for doc in task.test_docs():
            assert task.doc_to_text(doc) == expected[doc["id"]]
            assert task.fewshot_context(doc, 0) == expected[doc["id"]]
            seen[doc["id"]] = doc
    assert sorted(seen) == sorted(approved)


@pytest.mark.parametrize("shot_file", [None, SHOT_FILE])
def test_documents_carry_the_prompts_vetbench_eval_sends(
    database: Database, tmp_path: Path, shot_file: Path | None
) -> None:
    """The same items, shots and seed through `vetbench eval` (a real run, scripted answers) and
    through the export give the same prompt text for every item."""
    mixed_set(database)
    kinds = ("ordering",) if shot_file else ()
    backend = ScriptedBackend()
    run_id = create_run(
        database,
        backend.info,
        shots=5,
        item_filter=ItemFilter(statuses=("approved",), kinds=tuple(kinds)),
        shot_file=shot_file,
    )
    execute_run(database, run_id, backend)
    with database.session() as session:
        run = session.get(EvalRun, run_id)
        assert run is not None
        sent = {
            p.item_id: p.prompt
            for p in session.exec(select(Prediction).where(Prediction.run_id == run_id))
        }
    out = tmp_path / "task"
    manifest = exported(
        database, out, selection=Selection(kinds=kinds), shots=5, shot_file=shot_file
    )
    documents = {}
    for task in manifest["tasks"]:
        for line in (out / "data" / f"{task}.jsonl").read_text(encoding="utf-8").splitlines():
            document = json.loads(line)
            documents[document["id"]] = document["prompt"]
    assert documents == sent
    assert manifest["shots_used"] == {
        group: [shot["id"] for shot in shots] for group, shots in run.params["shots_used"].items()
    }


def test_generation_settings_and_scoring_match_vetbench(database: Database, tmp_path: Path) -> None:
    mixed_set(database)
    out = tmp_path / "task"
    export_lm_eval(database, out, shots=1)
    tasks = load_tasks(out, ["vetbench"])["tasks"]

    ordering_task = tasks["vetbench_ordering"]
    kwargs = ordering_task.config.generation_kwargs
    assert kwargs["do_sample"] is False
    assert set(kwargs["until"]) == set(stop_sequences("ordering", load_templates(), "en"))
    doc = next(d for d in ordering_task.test_docs() if d["id"] == "econ:1")
    assert ordering_task.doc_to_target(doc) == "D, A, C, B"
    # the answer is read by vetbench's extraction and scored by its metrics
    assert ordering_task.process_results(doc, [" D, A, C, B"]) == {
        "exact_match": 1.0,
        "unparsed": 0.0,
        "pairwise_accuracy": 1.0,
    }
    assert ordering_task.process_results(doc, ["The order is D, A, B, C."])[
        "pairwise_accuracy"
    ] == pytest.approx(5 / 6)
    assert ordering_task.process_results(doc, ["A company grows."])["unparsed"] == 1.0
    babble = ordering_task.process_results(doc, [" D, A, C, B, A, C, D, E, F, G"])
    assert babble["unparsed"] == 1.0  # read whole, as vetbench eval reads it: no order

    multi = tasks["vetbench_multi"]
    multi_doc = next(d for d in multi.test_docs() if d["id"] == "cflue:3")  # key ABD
    figures = multi.process_results(multi_doc, ["答案：BA"])
    assert figures["exact_match"] == 0.0 and figures["set_f1"] == pytest.approx(0.8)
    aggregate = multi.aggregation()["weighted_f1"]
    assert aggregate([("ABD", "ABD"), ("BC", None)]) == pytest.approx(0.5)

    truefalse = tasks["vetbench_truefalse"]
    tf_doc = next(d for d in truefalse.test_docs() if d["id"] == "cflue:6")  # key B
    assert truefalse.process_results(tf_doc, ["错"])["exact_match"] == 1.0


@pytest.mark.parametrize(
    ("kind", "output", "labels", "expected"),
    [
        # read whole, as vetbench eval reads it: no early stop at a first whole answer
        ("ordering", "Not A, B, C, D. The correct order is D, A, C, B.", "ABCD", "DACB"),
        ("ordering", " D, A, C, B", "ABCD", "DACB"),
        ("ordering", "The order is D, A, C", "ABCD", None),
        ("multi", "A\nB\n答案：BD", "ABCD", "BD"),
        ("single", "C is tempting.\nBut the answer is B.", "ABCD", "B"),
        ("truefalse", "错\n对", "AB", "A"),
    ],
)
def test_read_answer_reads_the_whole_output_as_vetbench_does(
    kind: str, output: str, labels: str, expected: str | None
) -> None:
    assert read_answer(kind, output, labels) == expected
    assert (
        read_answer(kind, output, labels) == read_answers((LENIENT,), kind, output, labels)[LENIENT]
    )


def test_score_mode_variant_ranks_every_candidate(database: Database, tmp_path: Path) -> None:
    mixed_set(database)
    store(
        database,
        [
            (
                "big:1",
                ItemDraft(
                    kind="ordering",
                    prompt="Six events.",
                    choices={label: f"event {label}" for label in "ABCDEF"},
                    key="FEDCBA",
                ),
            )
        ],
    )
    out = tmp_path / "task"
    summary = export_lm_eval(database, out, shots=0)
    manifest = read_manifest(out)
    assert manifest["left_out_of_score_mode"] == ["big:1"]
    assert summary.by_kind["ordering"] == 3

    tasks = load_tasks(out, ["vetbench_mc"])["tasks"]
    ordering_task = tasks["vetbench_mc_ordering"]
    assert ordering_task.OUTPUT_TYPE == "multiple_choice"
    doc = next(d for d in ordering_task.test_docs() if d["id"] == "econ:1")
    choices = ordering_task.doc_to_choice(doc)
    assert len(choices) == 24 <= MAX_SCORE_CANDIDATES
    assert choices[ordering_task.doc_to_target(doc)] == "D, A, C, B"
    # "Answer: D, A, C, B" as written; in a chat turn the answer opens the assistant's
    # reply, so lm-eval leaves the delimiter out, as vetbench eval strips it
    target = ordering_task.doc_to_target(doc)
    plain = ordering_task.construct_requests(doc, doc["prompt"])
    assert plain[target].args == (doc["prompt"], " D, A, C, B")
    chat = ordering_task.construct_requests(doc, doc["prompt"], apply_chat_template=True)
    assert chat[target].args == (doc["prompt"], "D, A, C, B")

    multi_doc = next(d for d in tasks["vetbench_mc_multi"].test_docs() if d["id"] == "cflue:4")
    multi_choices = tasks["vetbench_mc_multi"].doc_to_choice(multi_doc)
    assert len(multi_choices) == 15
    assert multi_choices[tasks["vetbench_mc_multi"].doc_to_target(multi_doc)] == "BC"

    single = tasks["vetbench_mc_single"]  # Chinese items: "答案：B", no space
    single_doc = next(d for d in single.test_docs() if d["id"] == "cflue:2")
    assert single.doc_to_choice(single_doc) == ["A", "B", "C", "D"]
    assert single.doc_to_target(single_doc) == 2
    requests = single.construct_requests(single_doc, single.doc_to_text(single_doc))
    assert requests[2].args == (single_doc["prompt"], "C")


# How far the two log-likelihoods of a candidate may differ beyond the item's constant, as
# a share of the larger one: float32's spread was under 1e-5 of it; bfloat16 keeps 8
# significant bits, and lm-eval pads and batches otherwise, so the last of them differs.
RELATIVE_TOLERANCE = {"float32": 1e-4, "bfloat16": 2**-8}


@pytest.mark.parametrize("dtype", sorted(RELATIVE_TOLERANCE))
def test_score_mode_ranks_as_lm_eval_does_through_a_chat_template(
    database: Database, tmp_path: Path, dtype: str
) -> None:
    """A real score-mode run of a model with a chat template, and lm-eval's HF backend on
    the exported ``multiple_choice`` tasks with ``--apply_chat_template`` and the model
    arguments of the export's own command, give every candidate the same log-likelihood
    up to one constant per item (lm-eval also scores the newline that ends the template,
    the same for every candidate), so the same answer.  In bfloat16 too: the command's
    ``softmax_dtype=float32`` is what makes it so (without it lm-eval's log-softmax is
    bfloat16, and here 2 of 8 answers differed, one an exact tie; on an H200, 17 of 51).
    A fixed bound of 0.02 held on one CPU and not on one with AMX-BF16 (0.032 at a
    log-likelihood of -14): bfloat16's error grows with the number it rounds."""
    if database.engine.dialect.name != "sqlite":
        pytest.skip("the model and lm-eval are under test, not the database")
    from lm_eval.api.registry import get_model
    from tiny_model import tiny_model_dir

    from evaluator.backends.transformers_backend import TransformersBackend

    mixed_set(database)
    model = tiny_model_dir(chat=True)
    backend = TransformersBackend(str(model), device="cpu", dtype=dtype)
    run_id = create_run(database, backend.info, mode="score", shots=1, item_filter=APPROVED_ITEMS)
    execute_run(database, run_id, backend)
    with database.session() as session:
        predictions = session.exec(select(Prediction).where(Prediction.run_id == run_id)).all()
        ours = {p.item_id: (p.parsed_answer, p.scores["log_likelihoods"]) for p in predictions}
        sent = {p.item_id: p.prompt for p in predictions}
    out = tmp_path / "task"
    command = export_lm_eval(database, out, shots=1).command.split()
    model_args = command[command.index("--model_args") + 1].replace("MODEL", str(model))
    harness = get_model("hf").create_from_arg_string(
        f"{model_args},dtype={dtype}", {"device": "cpu", "batch_size": "1"}
    )
    compared = 0
    for task in load_tasks(out, ["vetbench_mc"])["tasks"].values():
        for doc in task.test_docs():
            context = harness.apply_chat_template([{"role": "user", "content": doc["prompt"]}])
            assert context == sent[doc["id"]], doc["id"]
            requests = task.construct_requests(doc, context, apply_chat_template=True)
            theirs = [ll for ll, _greedy in harness.loglikelihood(requests, disable_tqdm=True)]
            best, likelihoods = ours[doc["id"]]
            assert doc["candidates"][theirs.index(max(theirs))] == best, doc["id"]
            offsets = [
                theirs[doc["candidates"].index(candidate)] - ll
                for candidate, ll in likelihoods.items()
            ]
            tolerance = RELATIVE_TOLERANCE[dtype] * max(abs(ll) for ll in likelihoods.values())
            assert max(offsets) - min(offsets) < tolerance, (doc["id"], offsets, tolerance)
            compared += 1
    assert compared == len(ours) == 8


CHINESE_MULTI = ItemDraft(
    kind="multi",
    prompt="下列哪些属于货币政策工具？",
    choices={"A": "存款准备金率", "B": "再贴现率", "C": "个人所得税", "D": "政府采购"},
    key="AB",
    language="zh",
)
"""A Chinese multi-answer item: its own answer delimiter, stops and template language."""


def multi_in_three_tasks(database: Database) -> None:
    """The mixed set, a Chinese multi-answer item and a six-option one: the multi-answer
    kind's items then have two budgets and two languages (three tasks)."""
    mixed_set(database)
    six = ItemDraft(
        kind="multi",
        prompt="Question 8: which of these are financial assets?",
        choices={label: f"Holding {label}" for label in "ABCDEF"},
        key="ACE",
    )
    store(database, [("cflue:7", CHINESE_MULTI), ("cflue:8", six)])


def test_a_kind_that_mixes_answer_delimiters_gets_a_score_task_for_each(
    database: Database, tmp_path: Path
) -> None:
    """lm-eval writes one target_delimiter per task: English multi-answer items ("Answer: BC")
    and a Chinese one ("答案：AB") are split into two tasks named by template language."""
    mixed_set(database)
    store(database, [("cflue:7", CHINESE_MULTI)])
    out = tmp_path / "task"
    manifest = exported(database, out, shots=0)
    assert [t for t in manifest["score_tasks"] if "multi" in t] == [
        "vetbench_mc_multi_en",
        "vetbench_mc_multi_zh",
    ]
    tasks = load_tasks(out, ["vetbench_mc"])["tasks"]
    for name, item_id, expected in (
        ("vetbench_mc_multi_en", "cflue:4", " BC"),
        ("vetbench_mc_multi_zh", "cflue:7", "AB"),
    ):
        task = tasks[name]
        [doc] = [d for d in task.test_docs() if d["id"] == item_id]
        requests = task.construct_requests(doc, doc["prompt"])
        assert requests[task.doc_to_target(doc)].args == (doc["prompt"], expected)


@pytest.mark.xdist_group("lm_eval_builtin_index")
def test_each_item_keeps_the_budget_and_stops_vetbench_eval_gives_it(
    database: Database, tmp_path: Path
) -> None:
    """A multi-answer item with six options gets a larger answer budget from `vetbench eval`
    than one with four, and a Chinese one stops at its own new-question cue: lm-eval gives
    a task's items one budget and one list of stops, so the kind is split into a task for
    each (the four-option items no longer get the six-option budget, nor English items
    the Chinese stop), and the group `vetbench_multi` still covers the kind."""
    multi_in_three_tasks(database)
    backend = ScriptedBackend()
    run_id = create_run(database, backend.info, shots=0, item_filter=APPROVED_ITEMS)
    with database.session() as session:
        run = session.get(EvalRun, run_id)
        assert run is not None
        requests = {r.item_id: r for r in generation_requests(plan_run(database, run))}
    out = tmp_path / "task"
    manifest = exported(database, out, shots=0)
    assert [t for t in manifest["tasks"] if "multi" in t] == [
        "vetbench_multi_en_4_options",
        "vetbench_multi_en_6_options",
        "vetbench_multi_zh_4_options",
    ]
    assert "vetbench_ordering" in manifest["tasks"]  # one budget and language: as it was

    loaded = load_tasks(out, ["vetbench"])["tasks"]
    seen = set()
    for name in manifest["tasks"]:
        task = loaded[name]
        kwargs = task.config.generation_kwargs
        for doc in task.test_docs():
            request = requests[doc["id"]]
            assert kwargs["max_gen_toks"] == request.max_new_tokens == doc["max_new_tokens"]
            assert kwargs["until"] == list(request.stop)
            seen.add(doc["id"])
    assert seen == set(requests) and len(seen) == 10
    budgets = {requests[i].max_new_tokens for i in ("cflue:3", "cflue:8")}
    assert len(budgets) == 2  # the case this is about: one kind, two budgets
    group = load_tasks(out, ["vetbench_multi"])["tasks"]
    assert sorted(group) == [t for t in manifest["tasks"] if "multi" in t]


def test_shot_file_and_relocated_folder(database: Database, tmp_path: Path) -> None:
    mixed_set(database)
    out = tmp_path / "task"
    export_lm_eval(
        database, out, selection=Selection(kinds=("ordering",)), shots=3, shot_file=SHOT_FILE
    )
    moved = tmp_path / "elsewhere" / "copy"
    shutil.copytree(out, moved)
    shutil.rmtree(out)

    tasks = load_tasks(moved, ["vetbench"])["tasks"]
    assert set(tasks) == {"vetbench_ordering"}
    docs = list(tasks["vetbench_ordering"].test_docs())
    prompt = docs[0]["prompt"]
    assert prompt.count("Question:") == 4  # three shots from the file, then the item
    file_shots = [json.loads(line) for line in SHOT_FILE.read_text(encoding="utf-8").splitlines()]
    assert [shot["prompt"] in prompt for shot in file_shots] == [True, True, True, False, False]
    assert all(doc["prefix"] == docs[0]["prefix"] for doc in docs)  # one shared prefix


def test_bad_requests_change_nothing(database: Database, tmp_path: Path) -> None:
    store(database, [("x:1", ordering(1))], status=ItemStatus.PENDING)
    with pytest.raises(ExportError, match="no items to export"):
        export_lm_eval(database, tmp_path / "task")
    with pytest.raises(ExportError, match="shots"):
        export_lm_eval(
            database, tmp_path / "task", selection=Selection(statuses=("pending",)), shots=-1
        )
    assert not (tmp_path / "task").exists()


def run_python(script: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``python SCRIPT ARGS`` in a process of its own, this checkout importable (as an
    installed vetbench is where lm_eval runs)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    command = [sys.executable, str(script), *args]
    return subprocess.run(command, capture_output=True, text=True, env=env, timeout=120)


# What a model answers each multi-answer item (by id): across the kind's three tasks the
# classes' supports and predictions pool, so the kind's weighted F1 (1/3) is not the mean
# of its tasks' (0.5, 0, 1 over 2, 1 and 1 items: 0.5 weighted by size).
MULTI_ANSWERS = {"cflue:3": "ABD", "cflue:4": "AB", "cflue:7": "答案：AB", "cflue:8": "ABD"}


@pytest.mark.slow
def test_a_split_kind_s_weighted_f1_is_vetbench_s_over_all_its_items(
    database: Database, tmp_path: Path
) -> None:
    """lm-eval itself runs the export (its evaluator, a model answering as scripted): each
    task's weighted_f1 is vetbench's over that task's items, the kind's group reports none
    (lm-eval's groups average their tasks' figures, and CFLUE's F1 is no average), the
    manifest says so, and the utils.py reader gives, from lm-eval's logged samples, the
    weighted F1 a `vetbench eval` run with the same answers reports for the kind."""
    from lm_eval import simple_evaluate
    from lm_eval.api.model import LM
    from lm_eval.loggers import EvaluationTracker

    from evaluator.backends.scripted import Script
    from evaluator.exports.lm_eval import weighted_f1_by_kind
    from evaluator.metrics import weighted_f1
    from evaluator.runs import run_figures

    multi_in_three_tasks(database)
    out = tmp_path / "task"
    manifest = exported(database, out, selection=Selection(kinds=("multi",)), shots=0)
    docs = {
        doc["prompt"]: doc
        for task in manifest["tasks"]
        for doc in map(json.loads, (out / "data" / f"{task}.jsonl").read_text().splitlines())
    }

    class Answering(LM):  # type: ignore[misc]
        def generate_until(self, requests: list[Any]) -> list[str]:
            return [MULTI_ANSWERS[docs[request.args[0]]["id"]] for request in requests]

        def loglikelihood(self, requests: list[Any]) -> list[Any]:
            raise NotImplementedError

        def loglikelihood_rolling(self, requests: list[Any]) -> list[Any]:
            raise NotImplementedError

    tasks = lm_eval_tasks.TaskManager(include_path=str(out), include_defaults=False)
    tracker = EvaluationTracker(output_path=str(tmp_path / "lm_eval_out"))
    evaluated = simple_evaluate(
        model=Answering(),
        tasks=["vetbench_multi"],
        task_manager=tasks,
        bootstrap_iters=0,
        evaluation_tracker=tracker,
    )
    assert evaluated is not None
    results, samples = evaluated["results"], evaluated["samples"]
    assert (
        sorted(samples)
        == manifest["tasks"]
        == [
            "vetbench_multi_en_4_options",
            "vetbench_multi_en_6_options",
            "vetbench_multi_zh_4_options",
        ]
    )
    for task, logged in samples.items():
        keys = [sample["doc"]["answer"] for sample in logged]
        read = [read_answer("multi", MULTI_ANSWERS[s["doc"]["id"]], "ABCD") for s in logged]
        assert results[task]["weighted_f1,none"] == pytest.approx(weighted_f1(keys, read))
    group = results["vetbench_multi"]
    assert not any(name.startswith("weighted_f1") for name in group)
    assert group["exact_match,none"] == pytest.approx(2 / 4)  # cflue:3 and cflue:7 right
    note = manifest["group_figures"]["vetbench_multi"]
    assert "no weighted_f1" in note and "python utils.py SAMPLES.jsonl" in note

    # The same answers through `vetbench eval`: its weighted F1 of the kind is the reader's.
    backend = ScriptedBackend(Script(MULTI_ANSWERS))
    run_id = create_run(
        database, backend.info, shots=0, item_filter=ItemFilter(("approved",), ("multi",))
    )
    execute_run(database, run_id, backend)
    vetbench = run_figures(database, run_id).summary.by_kind["multi"].weighted_f1
    [kind] = weighted_f1_by_kind(sample for logged in samples.values() for sample in logged)
    assert (kind.kind, kind.items) == ("multi", 4)
    assert kind.weighted_f1 == pytest.approx(vetbench) == pytest.approx(1 / 3)
    weighted_mean = (
        sum(results[task]["weighted_f1,none"] * len(logged) for task, logged in samples.items()) / 4
    )
    assert weighted_mean == pytest.approx(0.5)  # what a size-weighted group figure would say

    # As lm_eval --log_samples --output_path writes them, read by the folder's utils.py.
    tracker.save_results_aggregated(results=evaluated, samples=samples)
    for task in evaluated["configs"]:
        tracker.save_results_samples(task_name=task, samples=samples[task])
    files = sorted(str(path) for path in (tmp_path / "lm_eval_out").rglob("samples_*.jsonl"))
    assert len(files) == 3
    printed = run_python(out / "utils.py", *files)
    assert printed.returncode == 0, printed.stderr
    assert printed.stdout == "multi: weighted F1 0.3333 over 4 items\n"
    twice = run_python(out / "utils.py", *files, files[0])
    assert twice.returncode == 1 and "is in the samples twice" in twice.stderr


def test_the_samples_reader_names_the_file_and_line_it_cannot_read(tmp_path: Path) -> None:
    from evaluator.exports.lm_eval import read_samples, weighted_f1_by_kind

    path = tmp_path / "samples_vetbench_multi_2026.jsonl"
    path.write_text('{"doc": {"id": "a", "kind": "multi"}, "weighted_f1": ["A", "A"]}\n[1]\n')
    with pytest.raises(ExportError, match=r"samples_vetbench_multi_2026.jsonl, line 2: not an"):
        read_samples([path])
    with pytest.raises(ExportError, match=r"not a sample of a vetbench task: weighted_f1 \['A'\]"):
        weighted_f1_by_kind([{"doc": {"id": "a", "kind": "multi"}, "weighted_f1": ["A"]}])

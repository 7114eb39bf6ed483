"""vetbench eval against lm-eval's HF backend: same model, items, prompts and shots, one run.

What it does:

1. Builds a database from ``fixtures/``: the ordering CSVs and the CFLUE-style MCQ file
   are imported with the real importer; a lead approves every sound item and rejects the
   flawed ones listed in ``fixtures/README.md`` through ``reviewer.adjudication.decide``
   (the path behind ``vetbench decide``).  Shots must come from approved items outside
   the evaluated set, so the shot pool is imported as sources of its own and approved
   too: ``fixtures/shots_ordering.jsonl`` for ordering items and, for each MCQ type,
   the first five sound records of ``cflue_mcq.json`` (written to a side file; the
   rest is evaluated).
2. Exports the evaluated set (approved items of the evaluated sources) with
   ``vetbench export --format lm-eval`` (``evaluator.exports.lm_eval``), 5 shots.
3. Runs each tool in a fresh child process, one after the other, on the demo model
   (SmolLM2-135M-Instruct, CPU, batch size 8 for both): vetbench's run loop
   (``create_run`` + ``execute_run``, as ``vetbench eval --model demo --shots 5`` does)
   once with ``--dtype auto`` (bfloat16 where the CPU has bfloat16 matrix units) and
   once in float32, and ``lm_eval.simple_evaluate`` with ``--model hf`` (float32),
   ``--apply_chat_template`` (vetbench uses the model's chat template too) and
   ``--log_samples``.
4. Prints items per second of each (evaluation only, model loading apart), the ratio
   of vetbench's default (``auto``) to lm-eval (target: at least 5x), how often the
   parsed answers under bfloat16 agree with float32, the share of items whose parsed
   answers agree with lm-eval's (its outputs read as the exported task reads them,
   ``evaluator.exports.lm_eval.read_answer``), the share of identical prompts (chat
   template applied), accuracy, and each child's peak memory (RSS, from
   ``/proc/self/status`` VmHWM).

Run: ``.venv/bin/python bench/bench_eval_speed.py`` (add ``--keep DIR`` to keep the
database, the task folder and the samples).  Other CPU load on the machine skews both
timings; the ratio is what to read.  ``--model SPEC --device cuda`` measures another
local model on a GPU (lm-eval then runs in bfloat16 too), ``--limit N`` only the first
items: a smoke test, whose prompts and answers are not comparable (vetbench then draws
shots from the approved items it does not evaluate, the export from none of its own);
``bench/gpu_check.sh`` runs it that way.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

FIXTURES = ROOT / "fixtures"
EVALUATED_SOURCES = ("econ_ordering", "econ_ordering_5events", "cflue_mcq")
MCQ_SHOT_SOURCE = "cflue_shots"
ORDERING_SHOT_SOURCE = "shots_ordering"
SHOTS = 5
LEAD = "bench-lead"
TARGET_RATIO = 5.0
BATCH_SIZE = "8"
REASONS = (  # first words of a flaw in fixtures/README.md -> the lead's rejection reason
    ("two valid orders", "several-valid-orders"),
    ("no clear order", "no-clear-order"),
    ("wrong key", "wrong-key"),
    ("near-duplicate", "duplicate"),
    ("two correct options", "flawed"),
)


# ------------------------------------------------------------------ database


def flawed_items() -> dict[str, str]:
    """Item id -> rejection reason, from the table of deliberate flaws in fixtures/README.md."""
    flawed = {}
    for line in (FIXTURES / "README.md").read_text(encoding="utf-8").splitlines():
        match = re.match(r"^\| `([a-z_0-9]+:\d+)` \| (.+) \|$", line)
        if match:
            description = match.group(2)
            reason = next((r for start, r in REASONS if description.startswith(start)), "other")
            flawed[match.group(1)] = reason
    if not flawed:
        raise SystemExit("fixtures/README.md lists no flawed items; cannot tell sound from flawed")
    return flawed


def split_mcq_file(workdir: Path, flawed: dict[str, str]) -> dict[str, str]:
    """Write the MCQ records to be evaluated and the shot records to two files; returns the
    flaw reasons under the ids the evaluated records get (``cflue_mcq:N``, renumbered)."""
    records = json.loads((FIXTURES / "cflue_mcq.json").read_text(encoding="utf-8"))
    shots, evaluated, renamed = [], [], {}
    shots_per_type: dict[str, int] = defaultdict(int)
    for number, record in enumerate(records, start=1):
        original_id = f"cflue_mcq:{number}"
        if original_id not in flawed and shots_per_type[record["task"]] < SHOTS:
            shots_per_type[record["task"]] += 1
            shots.append(record)
            continue
        evaluated.append(record)
        if original_id in flawed:
            renamed[f"cflue_mcq:{len(evaluated)}"] = flawed[original_id]
    for name, chosen in ((MCQ_SHOT_SOURCE, shots), ("cflue_mcq", evaluated)):
        (workdir / f"{name}.json").write_text(
            json.dumps(chosen, ensure_ascii=False, indent=1), encoding="utf-8"
        )
    return renamed


def build_database(workdir: Path) -> Path:
    from db.engine import open_database
    from db.importer import import_files
    from db.people import ensure_person
    from db.vocabulary import Role
    from reviewer.adjudication import decide

    listed = flawed_items()
    flawed = {k: v for k, v in listed.items() if not k.startswith("cflue_mcq:")}
    flawed.update(split_mcq_file(workdir, listed))
    db_path = workdir / "bench.db"
    database = open_database(db_path)
    files = [
        FIXTURES / "econ_ordering.csv",
        FIXTURES / "econ_ordering_5events.csv",
        workdir / "cflue_mcq.json",
        FIXTURES / "shots_ordering.jsonl",
        workdir / f"{MCQ_SHOT_SOURCE}.json",
    ]
    report = import_files(database, files)
    for file_report in report.files:
        if file_report.error:
            raise SystemExit(f"import failed: {file_report.error}")
    with database.transaction() as session:
        ensure_person(session, LEAD, Role.LEAD)
    from db.items import iter_items

    with database.session() as session:
        ids = [item.id for item in iter_items(session)]
    for item_id in ids:
        if item_id in flawed:
            decide(database, LEAD, item_id, "rejected", reason=flawed[item_id], comment="bench")
        else:
            decide(database, LEAD, item_id, "approved", comment="bench")
    database.dispose()
    return db_path


# -------------------------------------------------------------------- workers


def peak_rss_mib() -> float:
    """This process's peak resident memory.  VmHWM belongs to the process image, so unlike
    ``ru_maxrss`` it does not inherit the parent's peak across fork + exec."""
    status = Path("/proc/self/status")
    if status.exists():
        for line in status.read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024  # kB
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


@dataclass(frozen=True)
class Worker:
    """What a child process is told (``--worker ...``): what to read, where to write its
    figures, and how to run the model."""

    source: Path  # the database (vetbench) or the exported task folder (lm-eval)
    out: Path
    batch_size: str
    model: str
    device: str
    dtype: str  # vetbench's --dtype; lm-eval runs float32 on a CPU, bfloat16 on a GPU
    limit: int | None

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> Worker:
        source = args.db if args.worker == "vetbench" else args.task
        return cls(
            source, args.out, args.batch_size, args.model, args.device, args.dtype, args.limit
        )

    def write_figures(
        self, started: float, loaded: float, finished: float, figures: dict[str, Any]
    ) -> None:
        """The child's figures, with its loading and evaluation timed apart and its peak memory."""
        timings = {
            "load_s": loaded - started,
            "eval_s": finished - loaded,
            "peak_rss_mib": peak_rss_mib(),
        }
        self.out.write_text(
            json.dumps({**figures, **timings}, ensure_ascii=False, default=str), encoding="utf-8"
        )


def run_vetbench(worker: Worker) -> None:
    """Child process: vetbench's run loop on the evaluated set, timed apart from loading."""
    from db.engine import open_database
    from evaluator.backends.registry import open_backend
    from evaluator.backends.settings import BackendSettings
    from evaluator.item_filter import ItemFilter
    from evaluator.runner import create_run, execute_run

    database = open_database(worker.source)
    started = time.perf_counter()
    settings = BackendSettings(
        device=worker.device, batch_size=worker.batch_size, dtype=worker.dtype
    )
    backend = open_backend(worker.model, settings)
    loaded = time.perf_counter()
    item_filter = ItemFilter(
        statuses=("approved",), sources=tuple(EVALUATED_SOURCES), limit=worker.limit
    )
    run_id = create_run(
        database, backend.info, mode="generate", shots=SHOTS, item_filter=item_filter
    )
    status = execute_run(database, run_id, backend)
    finished = time.perf_counter()
    backend.close()
    with database.session() as session:
        from db.models import EvalRun

        run = session.get(EvalRun, run_id)
        assert run is not None
        items = len(run.item_ids)
    worker.write_figures(
        started,
        loaded,
        finished,
        {"run_id": run_id, "status": str(status), "items": items, "params": backend.info.params},
    )


def run_lm_eval(worker: Worker) -> None:
    """Child process: lm-eval's HF backend on the exported task, timed apart from loading
    (float32 on the CPU, bfloat16 on a GPU, as vetbench's auto)."""
    import lm_eval
    from lm_eval.api.registry import get_model
    from lm_eval.tasks import TaskManager

    from evaluator.backends.local_model import resolve_model_source

    model_dir = resolve_model_source(worker.model).path
    dtype = "bfloat16" if worker.device == "cuda" else "float32"
    started = time.perf_counter()
    model = get_model("hf").create_from_arg_string(
        f"pretrained={model_dir},dtype={dtype}",
        {"device": worker.device, "batch_size": worker.batch_size},
    )
    loaded = time.perf_counter()
    manager = TaskManager(include_path=str(worker.source), include_defaults=False)
    results = lm_eval.simple_evaluate(
        model=model,
        tasks=["vetbench"],
        task_manager=manager,
        apply_chat_template=True,
        log_samples=True,
        bootstrap_iters=0,
        limit=worker.limit,
    )
    finished = time.perf_counter()
    assert results is not None
    samples = []
    for task_samples in results["samples"].values():
        for sample in task_samples:
            doc = sample["doc"]
            samples.append(
                {
                    "id": doc["id"],
                    "kind": doc["kind"],
                    "labels": doc["labels"],
                    "output": sample["resps"][0][0],
                    "prompt": sample["arguments"][0][0],
                }
            )
    exact_match = {
        name: figures.get("exact_match,none") for name, figures in results["results"].items()
    }
    worker.write_figures(
        started,
        loaded,
        finished,
        {"items": len(samples), "exact_match": exact_match, "samples": samples},
    )


def child(arguments: list[str], timeout_s: int) -> None:
    started = time.perf_counter()
    completed = subprocess.run(
        [sys.executable, __file__, *arguments], timeout=timeout_s, capture_output=True, text=True
    )
    if completed.returncode != 0:
        sys.stderr.write(completed.stdout[-4000:] + completed.stderr[-8000:])
        raise SystemExit(f"{arguments[0]} failed (exit {completed.returncode})")
    label = (
        " ".join(arguments[1:2] + arguments[arguments.index("--dtype") + 1 :][:1])
        if "--dtype" in arguments
        else arguments[1]
    )
    print(f"  {label} done in {time.perf_counter() - started:.0f} s", flush=True)


# -------------------------------------------------------------------- report


def answers_of(db_path: Path, run_id: int) -> dict[str, Any]:
    from db.engine import open_database
    from evaluator.runs import all_predictions

    database = open_database(db_path)
    try:
        return {view.item_id: view for view in all_predictions(database, run_id)}
    finally:
        database.dispose()


def precision_agreement(
    db_path: Path, bf16: dict[str, Any], fp32: dict[str, Any]
) -> dict[str, Any]:
    """How often the parsed answers of the two precisions agree, and their accuracies."""
    low, full = answers_of(db_path, bf16["run_id"]), answers_of(db_path, fp32["run_id"])
    shared = sorted(set(low) & set(full))
    same = sum(low[item].parsed_answer == full[item].parsed_answer for item in shared)
    return {
        "shared": len(shared),
        "agreement": same / len(shared) if shared else None,
        "accuracy_low": sum(bool(low[i].correct) for i in shared) / len(shared) if shared else None,
        "accuracy_full": sum(bool(full[i].correct) for i in shared) / len(shared)
        if shared
        else None,
    }


def compare(db_path: Path, vetbench: dict[str, Any], harness: dict[str, Any]) -> dict[str, Any]:
    from evaluator.exports.lm_eval import read_answer

    ours = answers_of(db_path, vetbench["run_id"])
    theirs = {sample["id"]: sample for sample in harness["samples"]}
    shared = sorted(set(ours) & set(theirs))
    agree, same_prompt, disagreements = 0, 0, []
    correct_ours = correct_theirs = 0
    for item_id in shared:
        view, sample = ours[item_id], theirs[item_id]
        # read as the exported task reads it: where vetbench would have stopped generating
        parsed = read_answer(sample["kind"], sample["output"], sample["labels"])
        correct_ours += int(bool(view.correct))
        correct_theirs += int(parsed == view.key)
        same_prompt += int(sample["prompt"] == view.prompt)
        if parsed == view.parsed_answer:
            agree += 1
        else:
            disagreements.append(
                {
                    "item": item_id,
                    "vetbench": [view.parsed_answer, view.raw_output],
                    "lm_eval": [parsed, sample["output"]],
                }
            )
    return {
        "shared": len(shared),
        "only_vetbench": len(set(ours) - set(theirs)),
        "only_lm_eval": len(set(theirs) - set(ours)),
        "agreement": agree / len(shared) if shared else None,
        "same_prompt": same_prompt / len(shared) if shared else None,
        "accuracy_vetbench": correct_ours / len(shared) if shared else None,
        "accuracy_lm_eval": correct_theirs / len(shared) if shared else None,
        "disagreements": disagreements,
    }


def report(
    runs: dict[str, dict[str, Any]],
    harness: dict[str, Any],
    comparison: dict[str, Any],
    precision: dict[str, Any],
) -> None:
    vetbench = runs["auto"]
    rates = {name: figures["items"] / figures["eval_s"] for name, figures in runs.items()}
    theirs = harness["items"] / harness["eval_s"]
    ratio = rates["auto"] / theirs
    print()
    print(
        f"items: {vetbench['items']} (vetbench), {harness['items']} (lm-eval), {SHOTS} shots, "
        f"batch size {BATCH_SIZE}; load average now {os.getloadavg()[0]:.1f}"
    )
    print(f"{'':<22} {'items/s':>8} {'eval s':>8} {'load s':>8} {'peak RSS':>10}")
    rows = [
        (f"vetbench {runs[name]['params'].get('dtype')} ({name})", runs[name], rates[name])
        for name in runs
    ]
    rows.append(("lm-eval HF float32", harness, theirs))
    for name, figures, rate in rows:
        print(
            f"{name:<22} {rate:>8.2f} {figures['eval_s']:>8.1f} {figures['load_s']:>8.1f} "
            f"{figures['peak_rss_mib']:>7.0f} MiB"
        )
    verdict = "meets" if ratio >= TARGET_RATIO else "MISSES"
    print(
        f"speed ratio vetbench (--dtype auto) / lm-eval: {ratio:.2f}x "
        f"({verdict} the {TARGET_RATIO:.0f}x target); float32 alone: "
        f"{rates['float32'] / theirs:.2f}x"
    )
    if precision["agreement"] is not None:
        print(
            f"bfloat16 vs float32: parsed answers agree on {100 * precision['agreement']:.1f}% "
            f"of {precision['shared']} items; accuracy {100 * precision['accuracy_low']:.1f}% vs "
            f"{100 * precision['accuracy_full']:.1f}%"
        )
    print(
        f"vetbench float32 vs lm-eval: parsed answers agree on "
        f"{100 * comparison['agreement']:.1f}% of {comparison['shared']} items; identical "
        f"prompts: {100 * comparison['same_prompt']:.1f}%"
    )
    print(
        f"accuracy: vetbench {100 * comparison['accuracy_vetbench']:.1f}%, "
        f"lm-eval {100 * comparison['accuracy_lm_eval']:.1f}% "
        f"(lm-eval's own exact_match by task: {harness['exact_match']})"
    )
    print(f"vetbench backend (auto): {json.dumps(vetbench['params'], default=str)}")
    for row in comparison["disagreements"][:10]:
        print(f"  differs {row['item']}: vetbench {row['vetbench']!r} / lm-eval {row['lm_eval']!r}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--keep", type=Path, help="Work in this folder and keep its files.")
    parser.add_argument("--vetbench-batch-size", default=BATCH_SIZE)
    parser.add_argument("--lm-eval-batch-size", default=BATCH_SIZE)
    parser.add_argument("--timeout", type=int, default=3600, help="Per tool, in seconds.")
    parser.add_argument("--worker", choices=("vetbench", "lm-eval"), help=argparse.SUPPRESS)
    parser.add_argument("--db", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--task", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--out", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--batch-size", help=argparse.SUPPRESS)
    parser.add_argument("--dtype", default="auto", help=argparse.SUPPRESS)
    parser.add_argument("--model", default="demo", help="A local model spec [default: demo].")
    parser.add_argument("--device", default="cpu", choices=("cpu", "cuda"))
    parser.add_argument("--limit", type=int, help="Only the first N items (per lm-eval task).")
    args = parser.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
    if args.worker is not None:
        run_worker = run_vetbench if args.worker == "vetbench" else run_lm_eval
        run_worker(Worker.from_args(args))
        return
    common = ["--model", args.model, "--device", args.device]
    common += ["--limit", str(args.limit)] if args.limit else []

    workdir = args.keep or Path(tempfile.mkdtemp(prefix="vetbench-speed-"))
    workdir.mkdir(parents=True, exist_ok=True)
    print(f"work folder: {workdir}", flush=True)
    db_path = build_database(workdir)

    from db.engine import open_database
    from evaluator.demo_model import demo_model_dir
    from evaluator.exports.lm_eval import export_lm_eval
    from evaluator.exports.selection import Selection

    if args.model == "demo":
        demo_model_dir()  # convert the demo model once, outside both timings
    database = open_database(db_path)
    summary = export_lm_eval(
        database,
        workdir / "task",
        selection=Selection(statuses=("approved",), sources=EVALUATED_SOURCES),
        shots=SHOTS,
    )
    database.dispose()
    print(f"exported {summary.count} items {summary.by_kind} to {summary.path}", flush=True)

    harness_out = workdir / "lm_eval.json"
    runs: dict[str, dict[str, Any]] = {}
    for dtype in ("auto", "float32"):
        vetbench_out = workdir / f"vetbench-{dtype}.json"
        child(
            ["--worker", "vetbench", "--db", str(db_path), "--out", str(vetbench_out)]
            + ["--batch-size", args.vetbench_batch_size, *common, "--dtype", dtype],
            args.timeout,
        )
        runs[dtype] = json.loads(vetbench_out.read_text(encoding="utf-8"))
    child(
        ["--worker", "lm-eval", "--task", str(workdir / "task"), "--out", str(harness_out)]
        + ["--batch-size", args.lm_eval_batch_size, *common],
        args.timeout,
    )
    harness = json.loads(harness_out.read_text(encoding="utf-8"))
    comparison = compare(db_path, runs["float32"], harness)
    precision = precision_agreement(db_path, runs["auto"], runs["float32"])
    (workdir / "comparison.json").write_text(
        json.dumps({**comparison, "precision": precision}, ensure_ascii=False, indent=1),
        encoding="utf-8",
    )
    report(runs, harness, comparison, precision)


if __name__ == "__main__":
    main()

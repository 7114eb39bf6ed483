"""The CUDA path measured in one prepared run, on a bare GPU box (``bash bench/gpu_check.sh``).

For each model (by default the SmolLM2-135M-shaped one, ``--model smollm2-360m`` the
larger; both built here from ``bench/gpu/*.config.json`` with seeded random weights and
the demo model's tokenizer from ``.gpu/tokenizer``; a real model folder given with
``--model NAME=DIR`` is used as it is), on the fixtures' approved items, 5 shots, in bfloat16 on the GPU:

- **generate**: ``vetbench eval`` against lm-eval's HF backend on the exported task
  (``vetbench export --format lm-eval``: the same prompts): items/s of each, their
  ratio, how often the parsed answers agree, and how many prompts are identical;
- **score**: ``vetbench eval --mode score`` against lm-eval's log-likelihood ranking of
  the same candidates (the export's ``multiple_choice`` tasks): items/s and agreement
  of the top-ranked candidate;
- **cflue**: ``vetbench eval --protocol cflue`` with free-length answers (up to
  ``--cflue-max-new-tokens``; random weights never stop on their own, so every answer
  runs to that bound and is counted as truncated where the run records it);
- the GPU's peak memory in each vetbench process and the batch sizes chosen from free
  memory.

Random weights make accuracy meaningless, but not the comparison: both tools run the
same weights on the same prompts with greedy decoding.  The final norm's weight is
scaled so that the logits are spread and greedy choices are never near-ties (as
``tests/tiny_model.py`` does), so agreement measures the tools, not rounding.

``--modes`` runs some of the three (``score``: only score mode) and ``--dtype float32``
runs both tools in float32; score mode reports agreement by kind and, for each item the
tools rank differently, both margins (a tie that rounding decides, or a real difference).

Every figure goes to the console and to one JSON file (``--out``).  Each tool runs in
a child process of this script (``--child``), so that model loads, peak memory and
timings belong to one tool.  Without a GPU (``bench/gpu_dry_run.sh``) the same steps
run on the CPU in float32 on two items per task, with the shots of the fixtures' shot
files (see ``dry_run_shot_file``): that checks the recipe, not the GPU.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.bench_eval_speed import EVALUATED_SOURCES, SHOTS, build_database  # noqa: E402

CONFIGS = ROOT / "bench" / "gpu"
FIXTURE_SHOT_FILES = sorted((ROOT / "fixtures").glob("shots_*.jsonl"))
TOKENIZER = ROOT / ".gpu" / "tokenizer"
# One model per command: on the H200 (2026-12-04) the 135M model took 5 min 55 s with
# 1,024-token CFLUE answers (133 s of it), so two models outran a 7.5-minute command.
DEFAULT_MODELS = ("smollm2-135m",)
SEED = 20261201
LOGIT_SPREAD = 20.0  # final-norm scale: well-separated logits, no near-ties under bfloat16


# ------------------------------------------------------------------------ models


def build_model(name: str, folder: Path) -> Path:
    """A model of ``name``'s shape (``bench/gpu/NAME.config.json``) with seeded random
    weights and the demo model's tokenizer, saved in bfloat16 under ``folder``."""
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM, AutoTokenizer

    if not (TOKENIZER / "tokenizer.json").exists():
        raise SystemExit(f"no tokenizer at {TOKENIZER}: run bash bench/gpu_prepare.sh first")
    target = folder / name
    if (target / "config.json").exists():
        return target
    config = AutoConfig.from_pretrained(CONFIGS / f"{name}.config.json")
    torch.manual_seed(SEED)
    model = AutoModelForCausalLM.from_config(config, dtype=torch.bfloat16)
    with torch.no_grad():
        model.get_decoder().norm.weight.mul_(LOGIT_SPREAD)
    model.save_pretrained(target)
    AutoTokenizer.from_pretrained(TOKENIZER).save_pretrained(target)
    for extra in ("chat_template.jinja", "generation_config.json"):
        if (TOKENIZER / extra).exists() and not (target / extra).exists():
            (target / extra).write_bytes((TOKENIZER / extra).read_bytes())
    return target


# ----------------------------------------------------------------------- children


def vetbench_child(db: Path, out: Path, runs: list[list[str]]) -> None:
    """Child: each ``vetbench eval`` of ``runs`` in this process, through the CLI itself,
    recording the GPU's peak memory and every batch size the backend chose."""
    import torch

    from evaluator.backends import transformers_backend
    from reviewer.cli import cli

    chosen: list[int] = []
    decide = transformers_backend.TransformersBackend._batch_limit

    def recorded(self: Any, tokens_per_sequence: int) -> int:  # observes, changes nothing
        size = decide(self, tokens_per_sequence)
        chosen.append(size)
        return size

    transformers_backend.TransformersBackend._batch_limit = recorded  # type: ignore[method-assign]
    figures = []
    for arguments in runs:
        chosen.clear()
        if torch.cuda.is_available():
            torch.cuda.reset_peak_memory_stats()
        started = time.perf_counter()
        cli.main(["--db", str(db), "eval", *arguments], standalone_mode=False)
        figures.append(
            {
                "arguments": arguments,
                "wall_s": time.perf_counter() - started,
                "batch_sizes": sorted(set(chosen)),
                "peak_gpu_mib": torch.cuda.max_memory_allocated() / 2**20
                if torch.cuda.is_available()
                else None,
            }
        )
    out.write_text(json.dumps(figures), encoding="utf-8")


def lm_eval_child(
    task_dir: Path,
    model_dir: Path,
    device: str,
    dtype: str,
    groups: list[str],
    limit: int | None,
    out: Path,
) -> None:
    """Child: lm-eval's HF backend on the exported generation tasks and/or the score-mode
    (``multiple_choice``) tasks (``groups``), each timed apart from the one model load."""
    import lm_eval
    from lm_eval.api.registry import get_model
    from lm_eval.tasks import TaskManager

    batch = "auto" if device == "cuda" else "8"
    # softmax_dtype=float32, as the export's command says: vetbench's log-softmax is float32.
    model = get_model("hf").create_from_arg_string(
        f"pretrained={model_dir},dtype={dtype},softmax_dtype=float32",
        {"device": device, "batch_size": batch},
    )
    manager = TaskManager(include_path=str(task_dir), include_defaults=False)
    figures: dict[str, Any] = {}
    for group in groups:
        started = time.perf_counter()
        results = lm_eval.simple_evaluate(
            model=model,
            tasks=[group],
            task_manager=manager,
            apply_chat_template=True,
            log_samples=True,
            bootstrap_iters=0,
            limit=limit,
        )
        assert results is not None
        samples = []
        for task_samples in results["samples"].values():
            for sample in task_samples:
                doc = sample["doc"]
                row = {"id": doc["id"], "kind": doc["kind"], "labels": doc["labels"]}
                if group == "vetbench":
                    row |= {"output": sample["resps"][0][0], "prompt": sample["arguments"][0][0]}
                else:  # the candidate lm-eval ranks first, in vetbench's canonical form
                    likelihoods = [resp[0][0] for resp in sample["resps"]]
                    ranked = sorted(likelihoods, reverse=True)
                    row["answer"] = doc["candidates"][likelihoods.index(ranked[0])]
                    row["margin"] = ranked[0] - ranked[1] if len(ranked) > 1 else None
                samples.append(row)
        figures[group] = {"eval_s": time.perf_counter() - started, "samples": samples}
    out.write_text(json.dumps(figures, ensure_ascii=False), encoding="utf-8")


def run_child(arguments: list[str], timeout_s: int) -> None:
    completed = subprocess.run(
        [sys.executable, __file__, *arguments], timeout=timeout_s, capture_output=True, text=True
    )
    if completed.returncode != 0:
        sys.stderr.write(completed.stdout[-3000:] + completed.stderr[-6000:])
        raise SystemExit(f"gpu_check: child {arguments[:2]} failed (exit {completed.returncode})")


# --------------------------------------------------------------------- the report


def vetbench_cli(db: Path, *arguments: str) -> Any:
    """``vetbench --db DB ARGUMENTS --json`` in a light child (no torch), parsed."""
    completed = subprocess.run(
        [sys.executable, "-m", "reviewer.cli", "--db", str(db), *arguments, "--json"],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
    )
    return json.loads(completed.stdout)


def newest_runs(db: Path, count: int) -> list[dict[str, Any]]:
    """The figures of the ``count`` newest runs, oldest first, every prediction with its
    exact prompt (one light child a run: on the box each costs about a second)."""
    listed = vetbench_cli(db, "runs")[:count]
    return [
        vetbench_cli(db, "runs", "show", str(run["id"]), "--prompt") for run in reversed(listed)
    ]


def agreement(ours: dict[str, str | None], theirs: dict[str, str | None]) -> dict[str, Any]:
    shared = sorted(set(ours) & set(theirs))
    same = sum(ours[item] == theirs[item] for item in shared)
    return {
        "items": len(shared),
        "agree": same,
        "agreement": same / len(shared) if shared else None,
    }


def rate(items: int, seconds: float | None) -> float | None:
    return items / seconds if seconds else None


def dry_run_shot_file(work: Path) -> Path:
    """The fixtures' shot pools in one file, for a dry run.  It evaluates a few items
    (``--limit``), and a limited run draws its shots from outside the items it evaluates
    while the export draws from outside all of them; from one shot file both take the
    same shots, so prompts and answers can be compared before any GPU time is spent."""
    texts = [path.read_text(encoding="utf-8") for path in FIXTURE_SHOT_FILES]
    path = work / "shots.jsonl"
    path.write_text("".join(t if t.endswith("\n") else t + "\n" for t in texts), encoding="utf-8")
    return path


def score_disagreements(ours: list[dict[str, Any]], theirs: list[dict[str, Any]]) -> dict[str, Any]:
    """Score mode, item by item: agreement per kind, and for each item where the two
    tools rank different candidates first, both margins (best minus second-best
    log-likelihood), which tell a near-tie that rounding decides from a real difference."""
    by_id = {s["id"]: s for s in theirs}
    per_kind: dict[str, list[int]] = {}
    differ = []
    for prediction in ours:
        sample = by_id.get(prediction["item_id"])
        if sample is None:
            continue
        counts = per_kind.setdefault(sample["kind"], [0, 0])
        counts[1] += 1
        if prediction["parsed_answer"] == sample["answer"]:
            counts[0] += 1
            continue
        likelihoods = sorted(
            ((prediction.get("scores") or {}).get("log_likelihoods") or {}).values(), reverse=True
        )
        differ.append(
            {
                "item": prediction["item_id"],
                "kind": sample["kind"],
                "vetbench": prediction["parsed_answer"],
                "lm_eval": sample["answer"],
                "vetbench_margin": likelihoods[0] - likelihoods[1]
                if len(likelihoods) > 1
                else None,
                "lm_eval_margin": sample.get("margin"),
            }
        )
    return {
        "per_kind": {kind: f"{a} of {n}" for kind, (a, n) in sorted(per_kind.items())},
        "disagreements": differ,
    }


HARNESS_GROUPS = {"generate": "vetbench", "score": "vetbench_mc"}
"""The lm-eval task group each compared mode runs (the CFLUE run has no peer)."""


def with_speed_ratio(figures: dict[str, Any]) -> dict[str, Any]:
    ours, other = figures["vetbench_items_per_s"], figures["lm_eval_items_per_s"]
    return figures | {"speed_ratio": ours / other if ours and other else None}


def generate_figures(run: dict[str, Any], harness: dict[str, Any]) -> dict[str, Any]:
    """Generate mode: how often the parsed answers and the prompts are the same."""
    from evaluator.exports.lm_eval import read_answer  # lm-eval's output, read as vetbench reads

    samples = harness["samples"]
    theirs = {s["id"]: read_answer(s["kind"], s["output"], s["labels"]) for s in samples}
    ours = {p["item_id"]: p["parsed_answer"] for p in run["predictions"]}
    our_prompts = {p["item_id"]: p["prompt"] for p in run["predictions"]}
    their_prompts = {s["id"]: s["prompt"] for s in samples}
    shared = set(our_prompts) & set(their_prompts)
    return with_speed_ratio(
        agreement(ours, theirs)
        | {
            "identical_prompts": sum(our_prompts[i] == their_prompts[i] for i in shared),
            "vetbench_items_per_s": run["progress"]["items_per_second"],
            "lm_eval_items_per_s": rate(len(theirs), harness["eval_s"]),
            "vetbench_accuracy": run["accuracy"],
        }
    )


def score_figures(run: dict[str, Any], harness: dict[str, Any]) -> dict[str, Any]:
    """Score mode: how often the top-ranked candidates are the same, and where not, why."""
    samples = harness["samples"]
    return with_speed_ratio(
        agreement(
            {p["item_id"]: p["parsed_answer"] for p in run["predictions"]},
            {s["id"]: s["answer"] for s in samples},
        )
        | {
            "vetbench_items_per_s": run["progress"]["items_per_second"],
            "lm_eval_items_per_s": rate(len(samples), harness["eval_s"]),
        }
        | score_disagreements(run["predictions"], samples)
    )


def cflue_figures(run: dict[str, Any], max_new_tokens: int) -> dict[str, Any]:
    """The CFLUE protocol's free-length run: speed and how long the answers ran."""
    outputs = [p["raw_output"] or "" for p in run["predictions"]]
    return {
        "items": run["n"],
        "items_per_s": run["progress"]["items_per_second"],
        "max_new_tokens": max_new_tokens,
        "truncated": run.get("truncated"),
        "mean_output_chars": sum(map(len, outputs)) / len(outputs) if outputs else None,
    }


def measure(model: str, model_dir: Path, work: Path, args: argparse.Namespace) -> dict[str, Any]:
    """vetbench's runs of the modes asked for (one child), lm-eval's on the same exported
    tasks (another child), and the figures that compare them."""
    db, task = work / "bench.db", work / "task"
    limit = ["--limit", str(args.limit)] if args.limit else []
    sources = [option for source in EVALUATED_SOURCES for option in ("--source", source)]
    common = ["--model", str(model_dir), "--device", args.device, "--dtype", args.dtype, *limit]
    shots = ["--shots", str(SHOTS)]
    shots += ["--shot-file", str(args.shot_file)] if args.shot_file else []
    cflue = ["--protocol", "cflue", "--source", "cflue_mcq"]
    cflue += ["--max-new-tokens", str(args.cflue_max_new_tokens)]
    planned = {
        "generate": [*common, *shots, *sources],
        "score": [*common, *shots, "--mode", "score", *sources],
        "cflue": [*common, *cflue],
    }
    modes = [mode for mode in planned if mode in args.modes]
    child_out = work / f"{model}-vetbench.json"
    runs = json.dumps([planned[mode] for mode in modes])
    run_child(
        ["--child", "vetbench", "--db", str(db), "--out", str(child_out), "--runs", runs],
        args.timeout,
    )
    stored = dict(zip(modes, newest_runs(db, len(modes)), strict=True))
    figures: dict[str, Any] = {
        "model_dir": str(model_dir),
        "vetbench_processes": json.loads(child_out.read_text(encoding="utf-8")),
    }

    groups = [HARNESS_GROUPS[mode] for mode in modes if mode in HARNESS_GROUPS]
    if groups:
        harness_out = work / f"{model}-lm-eval.json"
        harness_args = ["--child", "lm-eval", "--task", str(task), "--model-dir", str(model_dir)]
        harness_args += ["--device", args.device, "--dtype", args.dtype, "--out", str(harness_out)]
        harness_args += ["--groups", ",".join(groups), *limit]
        run_child(harness_args, args.timeout)
        harness = json.loads(harness_out.read_text(encoding="utf-8"))
        if "generate" in stored:
            figures["generate"] = generate_figures(stored["generate"], harness["vetbench"])
        if "score" in stored:
            figures["score"] = score_figures(stored["score"], harness["vetbench_mc"])
    if "cflue" in stored:
        figures["cflue"] = cflue_figures(stored["cflue"], args.cflue_max_new_tokens)
    return figures


def environment(device: str, dtype: str) -> dict[str, Any]:
    import torch
    import transformers

    figures: dict[str, Any] = {
        "device": device,
        "dtype": dtype,
        "torch": torch.__version__,
        "transformers": transformers.__version__,
        "python": sys.version.split()[0],
    }
    if device == "cuda":
        free, total = torch.cuda.mem_get_info()
        figures |= {
            "gpu": torch.cuda.get_device_name(0),
            "gpu_free_gib": free / 2**30,
            "gpu_total_gib": total / 2**30,
            "bf16": torch.cuda.is_bf16_supported(),
        }
    return figures


def print_report(report: dict[str, Any]) -> None:
    env = report["environment"]
    print(
        f"\n{env.get('gpu', 'CPU (dry run: the recipe, not GPU figures)')} · {env['dtype']}"
        f" · torch {env['torch']} · transformers {env['transformers']}"
        f" · {report['seconds']:.0f} s in all"
    )
    header = f"{'model':<16} {'mode':<9} {'items':>5} {'vetbench/s':>11} {'lm-eval/s':>10} {'ratio':>6} {'agree':>7}"
    print(header)

    def number(value: float | None, digits: int = 2) -> str:
        return "-" if value is None else f"{value:.{digits}f}"

    for model, figures in report["models"].items():
        for mode in ("generate", "score"):
            if mode not in figures:
                continue
            row = figures[mode]
            agree = "-" if row["agreement"] is None else f"{100 * row['agreement']:.1f}%"
            print(
                f"{model:<16} {mode:<9} {row['items']:>5} {number(row['vetbench_items_per_s']):>11} "
                f"{number(row['lm_eval_items_per_s']):>10} {number(row['speed_ratio']):>6} {agree:>7}"
            )
        if "cflue" in figures:
            cflue = figures["cflue"]
            print(
                f"{model:<16} cflue     {cflue['items']:>5} {number(cflue['items_per_s']):>11}"
                f"   free-length up to {cflue['max_new_tokens']} tokens, truncated {cflue['truncated']}"
            )
        peaks = [p["peak_gpu_mib"] for p in figures["vetbench_processes"] if p["peak_gpu_mib"]]
        batches = sorted({b for p in figures["vetbench_processes"] for b in p["batch_sizes"]})
        prompts = figures.get("generate", {})
        if prompts:
            print(
                f"{'':<16} identical prompts {prompts['identical_prompts']} of {prompts['items']}"
            )
        print(
            f"{'':<16} peak GPU memory {number(max(peaks) if peaks else None, 0)} MiB;"
            f" batch sizes chosen {batches}"
        )
        if "score" in figures:
            score = figures["score"]
            kinds = ", ".join(f"{kind} {agreed}" for kind, agreed in score["per_kind"].items())
            print(f"{'':<16} score agreement by kind: {kinds}")
            for row in score["disagreements"]:
                print(
                    f"{'':<16}   {row['item']} ({row['kind']}): vetbench {row['vetbench']!r}"
                    f" by {number(row['vetbench_margin'], 4)}, lm-eval {row['lm_eval']!r}"
                    f" by {number(row['lm_eval_margin'], 4)}"
                )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=Path("gpu_check.json"))
    parser.add_argument(
        "--model",
        action="append",
        default=[],
        metavar="NAME[=DIR]",
        help="A model shape from bench/gpu/ (built with random weights) or NAME=DIR, a real "
        "model folder. Default: smollm2-135m.",
    )
    parser.add_argument("--limit", type=int, help="Only the first N items (per lm-eval task).")
    parser.add_argument("--cflue-max-new-tokens", type=int, default=256)
    parser.add_argument(
        "--modes",
        type=lambda text: text.split(","),
        default=["generate", "score", "cflue"],
        help="Comma-separated: generate, score, cflue (default all three).",
    )
    parser.add_argument(
        "--dtype",
        choices=("bfloat16", "float32"),
        help="Both tools' precision (default bfloat16 on a GPU, float32 on the CPU).",
    )
    parser.add_argument(
        "--timeout", type=int, help="Per child process, seconds (240 on a GPU, 1800 on a CPU)."
    )
    parser.add_argument("--work", type=Path, help="Work folder (kept); default: a temporary one.")
    parser.add_argument("--child", choices=("vetbench", "lm-eval"), help=argparse.SUPPRESS)
    parser.add_argument("--db", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--runs", help=argparse.SUPPRESS)
    parser.add_argument("--task", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--model-dir", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--device", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--groups", help=argparse.SUPPRESS)
    args = parser.parse_args()
    for name in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "HF_DATASETS_OFFLINE"):
        os.environ.setdefault(name, "1")
    if args.child == "vetbench":
        vetbench_child(args.db, args.out, json.loads(args.runs))
        return
    if args.child == "lm-eval":
        lm_eval_child(
            args.task,
            args.model_dir,
            args.device,
            args.dtype,
            args.groups.split(","),
            args.limit,
            args.out,
        )
        return

    import torch

    started = time.perf_counter()
    args.device = "cuda" if torch.cuda.is_available() else "cpu"
    args.dtype = args.dtype or ("bfloat16" if args.device == "cuda" else "float32")
    unknown = set(args.modes) - {"generate", "score", "cflue"}
    if unknown:
        parser.error(
            f"--modes: unknown {', '.join(sorted(unknown))} (choose generate, score, cflue)"
        )
    if args.timeout is None:  # a dry run on a shared CPU is slow; it checks the recipe only
        args.timeout = 240 if args.device == "cuda" else 1800
    if args.device == "cpu" and args.limit is None:
        args.limit = 2
        args.cflue_max_new_tokens = min(args.cflue_max_new_tokens, 16)
        print("gpu_check: no CUDA GPU: a dry run of the recipe on the CPU, 2 items per task")
    work = args.work or Path(tempfile.mkdtemp(prefix="vetbench-gpu-"))
    work.mkdir(parents=True, exist_ok=True)
    db = build_database(work)
    args.shot_file = dry_run_shot_file(work) if args.device == "cpu" else None

    from db.engine import open_database
    from evaluator.exports.lm_eval import export_lm_eval
    from evaluator.exports.selection import Selection

    database = open_database(db)
    export_lm_eval(
        database,
        work / "task",
        selection=Selection(statuses=("approved",), sources=EVALUATED_SOURCES),
        shots=SHOTS,
        shot_file=args.shot_file,
    )
    database.dispose()

    report: dict[str, Any] = {"environment": environment(args.device, args.dtype), "models": {}}
    for spec in args.model or list(DEFAULT_MODELS):
        name, _, given = spec.partition("=")
        model_dir = Path(given) if given else build_model(name, work / "models")
        print(
            f"=== {name} ({'folder ' + given if given else 'random weights from its config'})",
            flush=True,
        )
        report["models"][name] = measure(name, model_dir, work, args)
        # Written after each model too: a lease that ends early still brings figures back.
        report["seconds"] = time.perf_counter() - started
        args.out.write_text(json.dumps(report, indent=1, ensure_ascii=False), encoding="utf-8")
    print_report(report)
    print(f"\nfigures: {args.out.resolve()}")


if __name__ == "__main__":
    main()

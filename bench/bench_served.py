"""The local transformers backend against the same model served by ``transformers serve``:
items per second and agreement, on the same items, with the server asked 1, 4 and 16
requests at a time.

1. A database with the ordering items of ``fixtures/econ_ordering.csv`` (``--items`` of
   them evaluated) and the shot pool ``fixtures/shots_ordering.jsonl``, all approved.
2. ``vetbench eval --model DIR --dtype float32`` (the local backend, in the precision
   the server loads the weights in), then ``transformers serve DIR`` on 127.0.0.1 and
   ``vetbench eval --model openai:DIR --base-url ... --concurrency N`` for each N, each
   on a fresh copy of the database (the response cache would answer a repeat for free).
3. Items per second are each run's own figure (model loading apart); agreement is the
   share of items whose parsed answer (and whose generated text) equals the local one.

Run: ``.venv/bin/python bench/bench_served.py [--model DIR] [--items 16]
[--concurrency 1,4,16] [--continuous-batching]``; the model defaults to the demo model
(SmolLM2-135M-Instruct, converted once into the vetbench cache).  The machine's load
average is printed first: other work on the machine skews every figure.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from served_model import ServedModel  # noqa: E402

from bench.bench_demo_eval import build_database  # noqa: E402
from evaluator.run_text import number  # noqa: E402


def run_and_read(db: Path, env: dict[str, str], *args: str) -> tuple[dict[str, object], float]:
    """``vetbench eval ARGS --json`` in a child process: its figures and wall time."""
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", "from reviewer.cli import main; main()", "--db", str(db), "eval"]
        + [*args, "--json"],
        env=env,
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        raise SystemExit(f"vetbench eval {' '.join(args)} failed:\n{done.stderr[-2000:]}")
    figures: dict[str, object] = json.loads(done.stdout)
    return figures, time.perf_counter() - started


def row(label: str, figures: dict[str, object], wall: float) -> str:
    """A table row: the run's items per second, its wall time and accuracy (in percent, as
    vetbench prints it)."""
    progress = figures["progress"]
    assert isinstance(progress, dict)
    accuracy = figures.get("accuracy")
    shown = number(float(accuracy) if isinstance(accuracy, float | int) else None, percent=True)
    return f"{label:<30} {float(progress['items_per_second']):>8.2f} {wall:>7.1f} {shown:>9}"


def outputs(db: Path, run_id: int) -> dict[str, tuple[str | None, str]]:
    """Each item's parsed answer and generated text in run ``run_id``."""
    from db.engine import open_database
    from evaluator.runs import all_predictions

    database = open_database(db)
    try:
        return {
            p.item_id: (p.parsed_answer, p.raw_output) for p in all_predictions(database, run_id)
        }
    finally:
        database.dispose()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", help="a transformers model folder [default: the demo model]")
    parser.add_argument("--items", type=int, default=16)
    parser.add_argument("--shots", type=int, default=1)
    parser.add_argument("--concurrency", default="1,4,16", help="comma-separated")
    parser.add_argument("--device", default="cpu", help="cpu or cuda (both sides)")
    parser.add_argument(
        "--continuous-batching", action="store_true", help="serve with continuous batching"
    )
    args = parser.parse_args()
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(ROOT)}
    os.environ["HF_HUB_OFFLINE"] = "1"
    if args.model:
        model = Path(args.model).resolve()
    else:
        from evaluator.demo_model import demo_model_dir

        model = demo_model_dir()
    load = ", ".join(f"{value:.1f}" for value in os.getloadavg())
    print(f"model {model.name}, {args.items} ordering items, {args.shots} shot(s), {args.device}")
    print(f"load average (1, 5, 15 min): {load} on {os.cpu_count()} CPUs\n")
    common = ("--shots", str(args.shots), "--source", "econ_ordering", "--limit", str(args.items))

    with tempfile.TemporaryDirectory() as folder:
        template = Path(folder) / "template.db"
        build_database(template, env)
        local_db = Path(folder) / "local.db"
        shutil.copy(template, local_db)
        local = ("--model", str(model), "--dtype", "float32", "--device", args.device)
        figures, wall = run_and_read(local_db, env, *local, *common)
        reference = outputs(local_db, int(str(figures["run_id"])))
        print(f"{'setting':<30} {'items/s':>8} {'wall s':>7} {'accuracy':>9} {'same answers':>13}")
        print(row("local (transformers)", figures, wall))

        extra = ("--continuous-batching",) if args.continuous_batching else ()
        label = "served, CB" if extra else "served"
        with ServedModel(
            model, Path(folder) / "server.log", device=args.device, extra_args=extra
        ) as server:
            for concurrency in args.concurrency.split(","):
                db = Path(folder) / f"served-{concurrency}.db"
                shutil.copy(template, db)
                options = (*server.cli_options(), "--concurrency", concurrency, "--timeout", "600")
                figures, wall = run_and_read(db, env, *options, *common)
                given = outputs(db, int(str(figures["run_id"])))
                parsed = sum(given[k][0] == reference[k][0] for k in given) / max(len(given), 1)
                text = sum(given[k][1] == reference[k][1] for k in given) / max(len(given), 1)
                print(
                    f"{row(f'{label}, concurrency {concurrency}', figures, wall)} "
                    f"{number(parsed, percent=True):>13}  (text {number(text, percent=True)})"
                )
    print(f"\nload average after: {', '.join(f'{v:.1f}' for v in os.getloadavg())}")


if __name__ == "__main__":
    main()

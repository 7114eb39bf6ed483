"""How fast the demo model loads and evaluates: conversion vs cached load, and items per
second of ``vetbench eval --model demo --shots 5`` with and without shared-prefix reuse.

1. Load times: the first load of the demo model (GGUF -> transformers conversion, in a
   fresh cache folder) and a cached load, each in a fresh child process.
2. Evaluation speed: a database with the ordering items of ``fixtures/econ_ordering.csv``
   (evaluated; ``--items`` of them) and ``fixtures/shots_ordering.jsonl`` (the shot pool),
   all approved; then the real command ``vetbench eval --model demo --shots 5 --source
   econ_ordering --json`` in a child process per setting: prefix reuse on/off and the
   batch sizes given.  Items per second are the run's own figure (evaluation only, model
   loading apart); the wall time includes loading.  Predictions are compared between
   settings: greedy decoding should give the same answers whatever the batching.

Run: ``.venv/bin/python bench/bench_demo_eval.py [--items 30] [--batch-sizes 8]``.
Other load on the machine skews the timings; compare settings within one run.
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
FIXTURES = ROOT / "fixtures"
VETBENCH = [str(Path(sys.executable).parent / "vetbench")]


def child(code: str, env: dict[str, str]) -> tuple[float, str]:
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    )
    return time.perf_counter() - started, done.stdout.strip()


def load_times(env: dict[str, str]) -> dict[str, float]:
    """First load (conversion) in a fresh cache, then a cached load, in child processes."""
    code = (
        "import time; t = time.perf_counter()\n"
        "from evaluator.backends.registry import open_backend\n"
        "from evaluator.backends.settings import BackendSettings\n"
        "backend = open_backend('demo', BackendSettings(device='cpu'))\n"
        "print(f'{backend.load_seconds:.2f} {time.perf_counter() - t:.2f}')\n"
    )
    with tempfile.TemporaryDirectory() as cache:
        fresh = {**env, "VETBENCH_CACHE": cache}
        _wall, first = child(code, fresh)
        _wall, cached = child(code, fresh)
    first_load, first_total = map(float, first.split())
    cached_load, cached_total = map(float, cached.split())
    return {
        "first load: conversion + loading": first_load,
        "first load, with Python imports": first_total,
        "cached load: loading": cached_load,
        "cached load, with Python imports": cached_total,
    }


def build_database(path: Path, env: dict[str, str]) -> None:
    subprocess.run(
        [
            *VETBENCH,
            "--db",
            str(path),
            "import",
            str(FIXTURES / "econ_ordering.csv"),
            str(FIXTURES / "shots_ordering.jsonl"),
        ],
        env=env,
        check=True,
        capture_output=True,
    )
    sys.path.insert(0, str(ROOT))
    from sqlmodel import select

    from db.engine import open_database
    from db.import_statuses import decide_as
    from db.models import Item

    database = open_database(path)
    with database.transaction() as session:  # the benchmark needs approved items, not a review
        ids = list(session.exec(select(Item.id)).all())
        decide_as(session, "bench-lead", ids, "approved", "bench: demo evaluation")
    database.dispose()


def evaluate(db: Path, env: dict[str, str], items: int, *extra: str) -> dict[str, Any]:
    started = time.perf_counter()
    done = subprocess.run(
        [
            *VETBENCH,
            "--db",
            str(db),
            "eval",
            "--model",
            "demo",
            "--shots",
            "5",
            "--source",
            "econ_ordering",
            "--limit",
            str(items),
            "--json",
            *extra,
        ],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    figures = json.loads(done.stdout)
    return {
        "run_id": figures["run_id"],
        "items_per_second": figures["progress"]["items_per_second"],
        "wall_s": time.perf_counter() - started,
        "accuracy": figures["accuracy"],
        "unparsed_rate": figures["unparsed_rate"],
    }


def answers(db: Path, run_id: int) -> dict[str, str | None]:
    from db.engine import open_database
    from evaluator.runs import all_predictions

    database = open_database(db)
    try:
        return {v.item_id: v.parsed_answer for v in all_predictions(database, run_id)}
    finally:
        database.dispose()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--items", type=int, default=30)
    parser.add_argument("--batch-sizes", default="8", help="comma-separated, e.g. 1,4,8,16")
    parser.add_argument("--skip-load", action="store_true", help="skip the load-time part")
    parser.add_argument("--threads", help="CPU threads for every setting [default: torch's]")
    args = parser.parse_args()
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(ROOT)}
    from evaluator.run_text import number  # figures in percent, as vetbench prints them

    if not args.skip_load:
        for name, value in load_times(env).items():
            print(f"{name:<48} {value:6.2f}")

    with tempfile.TemporaryDirectory() as folder:
        db = Path(folder) / "bench.db"
        build_database(db, env)
        settings: list[tuple[str, tuple[str, ...]]] = [
            (f"prefix reuse, batch {size}", ("--batch-size", size))
            for size in args.batch_sizes.split(",")
        ]
        settings.append(("no prefix reuse, batch 8", ("--batch-size", "8", "--no-prefix-cache")))
        threads = ("--threads", args.threads) if args.threads else ()
        reference: dict[str, str | None] | None = None
        print(
            f"\n{args.items} ordering items, 5 shots, demo model on the CPU, "
            f"{args.threads or 'default'} thread(s)"
        )
        print(f"{'setting':<28} {'items/s':>8} {'wall s':>8} {'accuracy':>9} {'same answers':>13}")
        for label, extra in settings:
            result = evaluate(db, env, args.items, *extra, *threads)
            given = answers(db, result["run_id"])
            reference = reference or given
            same = sum(given[k] == reference.get(k) for k in given) / max(len(given), 1)
            print(
                f"{label:<28} {result['items_per_second']:>8.2f} {result['wall_s']:>8.1f} "
                f"{number(result['accuracy'], percent=True):>9} {number(same, percent=True):>13}"
            )


if __name__ == "__main__":
    main()

"""Review TUI figures on a 40,000-item database: launch time, next-item latency, peak memory.

    python bench/bench_tui.py [--db /tmp/review40k.db] [--items 40000] [--moves 200]

- launch: a fresh process (imports, opening the database, first queue query,
  first render) until the first item is on screen, headless; median of 3.
- next item: through Pilot, the time from a key press until the next item is on
  screen (``ItemLoaded`` handled and the screen refreshed): ``s`` (skip) and a full
  judgment (answer, reveal, ``k``: the judgment is stored, then the next item loads).
- queue only: ``ReviewQueue.skip`` without the UI, for comparison.
- peak RSS of this process (the database is built in a child process, so it
  does not count).

Targets (issue 3 and 7): launch < 1.5 s, next item p95 < 50 ms, peak RSS < 300 MB.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

LAUNCH_PROBE = """
import sys, time
import reviewer.cli  # what `vetbench review` imports before the app
from reviewer.tui.app import ReviewApp, make_app
from reviewer.tui.screens.review import ReviewScreen

class FirstItem(ReviewScreen):
    def on_item_loaded(self, message):
        super().on_item_loaded(message)
        self.call_after_refresh(lambda: self.app.exit(time.time()))

class Probe(ReviewApp):
    def get_default_screen(self):
        return FirstItem(self.database, self.queue, self.timer)

base = make_app(sys.argv[1], "launch-probe")
app = Probe(base.database, base.queue, base.timer)
print(app.run(headless=True, size=(120, 40)))
"""


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


def describe(values: list[float]) -> str:
    return (
        f"p50 {statistics.median(values):6.1f} ms   p95 {percentile(values, 0.95):6.1f} ms   "
        f"max {max(values):6.1f} ms   (n={len(values)})"
    )


def ensure_database(path: Path, items: int) -> None:
    if path.exists():
        return
    print(f"building {path} with {items:,} items …", flush=True)
    subprocess.run(
        [sys.executable, str(ROOT / "bench" / "review_db.py"), str(path), "--items", str(items)],
        check=True,
    )


def measure_launch(path: Path, runs: int = 3) -> list[float]:
    seconds = []
    for _ in range(runs):
        started = time.time()
        result = subprocess.run(
            [sys.executable, "-c", LAUNCH_PROBE, str(path)],
            capture_output=True,
            text=True,
            check=True,
            cwd=ROOT,
        )
        shown = float(result.stdout.strip().splitlines()[-1])
        seconds.append(shown - started)
    return seconds


async def measure_moves(path: Path, moves: int) -> dict[str, list[float]]:
    from db.engine import open_database
    from reviewer.tui.app import ReviewApp, make_app
    from reviewer.tui.messages import ItemLoaded
    from reviewer.tui.screens.review import Phase, ReviewScreen

    shown_at: list[float] = []

    class TimedScreen(ReviewScreen):
        def on_item_loaded(self, message: ItemLoaded) -> None:
            super().on_item_loaded(message)
            # Stop the clock once the new item has been laid out and drawn.
            self.call_after_refresh(lambda: shown_at.append(time.perf_counter()))

    class TimedApp(ReviewApp):
        def get_default_screen(self):  # type: ignore[no-untyped-def]
            return TimedScreen(self.database, self.queue, self.timer)

    db = open_database(path)
    base = make_app(db, "bench")
    app = TimedApp(base.database, base.queue, base.timer)
    results: dict[str, list[float]] = {"skip": [], "judge": []}
    async with app.run_test(size=(120, 40)) as pilot:

        async def wait_shown(count: int) -> None:
            while len(shown_at) < count:
                await asyncio.sleep(0.0005)

        await wait_shown(1)
        screen = app.review_screen
        for _ in range(moves):
            count = len(shown_at)
            started = time.perf_counter()
            await pilot.press("s")
            await wait_shown(count + 1)
            results["skip"].append((shown_at[-1] - started) * 1000)
        for _ in range(max(moves // 4, 10)):
            item = screen.item
            assert item is not None and screen.phase is Phase.BLIND
            keys = [letter.lower() for letter in item.key]
            await pilot.press(*keys, "enter")
            count = len(shown_at)
            started = time.perf_counter()
            await pilot.press("k")
            await wait_shown(count + 1)
            results["judge"].append((shown_at[-1] - started) * 1000)
            await app.workers.wait_for_complete()
    db.dispose()
    return results


def measure_queue(path: Path, moves: int) -> list[float]:
    from db.engine import open_database
    from reviewer.queue import ReviewQueue

    db = open_database(path)
    queue = ReviewQueue(db, "bench-queue")
    times = []
    for _ in range(moves):
        started = time.perf_counter()
        queue.skip()
        times.append((time.perf_counter() - started) * 1000)
    queue.release_claim()
    db.dispose()
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", type=Path, default=Path("/tmp/vetbench-review40k.db"))
    parser.add_argument("--items", type=int, default=40_000)
    parser.add_argument("--moves", type=int, default=200)
    parser.add_argument("--json", action="store_true", help="print the figures as JSON too")
    args = parser.parse_args()
    ensure_database(args.db, args.items)

    # Every run works on a fresh copy, so runs compare (judging changes the database).
    with tempfile.TemporaryDirectory() as scratch:
        work = Path(scratch) / "review.db"
        shutil.copyfile(args.db, work)
        launch = measure_launch(work)
        queue_only = measure_queue(work, args.moves)
        moves = asyncio.run(measure_moves(work, args.moves))
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024

    print(f"database: {args.db} ({args.items:,} items)")
    print(
        f"launch to first item (headless, fresh process): median {statistics.median(launch):.2f} s "
        f"(runs: {', '.join(f'{s:.2f}' for s in launch)})"
    )
    print(f"next item, queue only:            {describe(queue_only)}")
    print(f"next item through Pilot (skip):   {describe(moves['skip'])}")
    print(f"judge + next item through Pilot:  {describe(moves['judge'])}")
    print(f"peak RSS of the benchmark process (app + Pilot): {peak_mb:.0f} MB")
    if args.json:
        print(
            json.dumps(
                {
                    "launch_s": launch,
                    "queue_ms": {
                        "p50": statistics.median(queue_only),
                        "p95": percentile(queue_only, 0.95),
                    },
                    "skip_ms": {
                        "p50": statistics.median(moves["skip"]),
                        "p95": percentile(moves["skip"], 0.95),
                    },
                    "judge_ms": {
                        "p50": statistics.median(moves["judge"]),
                        "p95": percentile(moves["judge"], 0.95),
                    },
                    "peak_rss_mb": peak_mb,
                }
            )
        )


if __name__ == "__main__":
    main()

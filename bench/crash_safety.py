"""Crash safety (issue 7): kill the review app and a running evaluation with SIGKILL at
random moments, many times, and check that nothing acknowledged was lost.

- Review: a child process runs the real review app (headless, through Textual's
  Pilot) and judges item after item with key presses; after each judgment the app
  reports as stored, the child logs its id.  The parent kills the child at a random
  moment, then checks that every logged judgment is in the database and that
  ``PRAGMA integrity_check`` passes.  The next round carries on with the queue.
- Evaluation: a child runs ``vetbench eval`` on a model; the parent kills it at a
  random moment, checks integrity, and remembers the predictions already stored.
  ``vetbench eval --resume`` then finishes the run; the remembered predictions must
  be untouched (same rows, not recomputed) and every item must have one.

    python bench/crash_safety.py --rounds 20 [--model DIR | --scripted-seconds 0.1]
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


@dataclass
class CrashReport:
    rounds: int = 0
    acknowledged: int = 0  # judgments or predictions the killed process had reported stored
    lost: list[str] = field(default_factory=list)
    integrity: list[str] = field(default_factory=list)  # any integrity_check answer but "ok"
    notes: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.lost and not self.integrity


def sqlite_integrity(path: Path) -> str:
    with sqlite3.connect(path) as connection:
        return "; ".join(row[0] for row in connection.execute("PRAGMA integrity_check"))


def _kill_at_random_moment(
    child: subprocess.Popen[bytes],
    rng: random.Random,
    progress: Callable[[], int],
    *,
    startup_limit: float = 90.0,
) -> None:
    """SIGKILL ``child`` at a random moment: one round in four anywhere after start
    (start-up included), the others a random time after it has begun storing work."""
    if rng.random() < 0.25:
        delay = rng.uniform(0.0, 4.0)
    else:
        before = progress()
        deadline = time.monotonic() + startup_limit
        while progress() == before and child.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        delay = rng.uniform(0.0, 2.5)
    try:
        child.wait(timeout=delay)
    except subprocess.TimeoutExpired:
        os.kill(child.pid, signal.SIGKILL)
        child.wait()


# --- review app ------------------------------------------------------------------------


async def _judge_forever(db_path: str, name: str, log_path: str) -> None:
    """Child: drive the real review app, logging each judgment once the app has stored it."""
    from reviewer.tui.app import make_app
    from reviewer.tui.screens.review import Phase

    app = make_app(db_path, name)
    with open(log_path, "a", encoding="utf-8") as log:
        async with app.run_test(size=(120, 40)) as pilot:
            screen = app.review_screen
            while True:
                await pilot.pause()
                if screen.phase is Phase.EMPTY:
                    return
                if screen.phase not in (Phase.BLIND, Phase.REVEALED) or screen.item is None:
                    continue
                done = len(screen.queue.session_judgments)
                # Revealed: an earlier child saw its key and was killed before its verdict;
                # the item comes back revealed with that child's blind answer, to judge.
                if screen.phase is Phase.BLIND:
                    for letter in screen.item.key[:-1]:
                        await pilot.press(letter.lower())
                    await pilot.press("enter")
                await pilot.press("k")
                while len(screen.queue.session_judgments) == done:
                    await pilot.pause()
                log.write(f"{screen.queue.session_judgments[-1]}\n")
                log.flush()


def seed_review_items(db_path: Path, count: int) -> None:
    from bench.concurrent_annotators import seed_items

    seed_items(str(db_path), count, overlap=2)


def crash_review_app(db_path: Path, *, rounds: int, seed: int = 0, items: int = 400) -> CrashReport:
    rng = random.Random(seed)
    seed_review_items(db_path, items)
    report = CrashReport()
    with tempfile.TemporaryDirectory() as scratch:
        log = Path(scratch) / "acknowledged.log"
        log.touch()
        for round_number in range(rounds):
            child = subprocess.Popen(
                [
                    sys.executable,
                    __file__,
                    "review-child",
                    str(db_path),
                    "crash-annotator",
                    str(log),
                ],
                cwd=ROOT,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            _kill_at_random_moment(child, rng, lambda: len(log.read_text()))
            report.rounds += 1
            integrity = sqlite_integrity(db_path)
            if integrity != "ok":
                report.integrity.append(f"round {round_number}: {integrity}")
        acknowledged = [int(line) for line in log.read_text().split()]
    with sqlite3.connect(db_path) as connection:
        stored = {row[0] for row in connection.execute("SELECT id FROM judgment")}
    report.acknowledged = len(acknowledged)
    report.lost = [f"judgment {jid}" for jid in acknowledged if jid not in stored]
    return report


# --- evaluation ----------------------------------------------------------------------------


def seed_eval_items(db_path: Path, count: int) -> None:

    from sqlalchemy import select

    from db.import_statuses import decide_as
    from db.models import Item

    seed_review_items(db_path, count)
    from db.engine import open_database

    db = open_database(db_path)
    with db.transaction() as session:  # the evaluated set is the approved one
        ids = list(session.execute(select(Item.id)).scalars())
        decide_as(session, "bench-lead", ids, "approved", "bench: crash safety")
    db.dispose()


def slow_script(db_path: Path, path: Path, seconds: float) -> str:
    """The spec of a scripted model whose every answer (``A``) takes ``seconds``: a run
    that lasts long enough to be killed in the middle, with no model to load (what is
    tested is the run loop's writes, not a model)."""
    with sqlite3.connect(db_path) as connection:
        ids = [row[0] for row in connection.execute("SELECT id FROM item ORDER BY id")]
    lines = (json.dumps({"item_id": item_id, "output": "A", "seconds": seconds}) for item_id in ids)
    path.write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")
    return f"scripted:{path}"


def _predictions(db_path: Path) -> dict[str, tuple[int, str]]:
    with sqlite3.connect(db_path) as connection:
        rows = connection.execute(
            "SELECT item_id, id, created_at FROM prediction WHERE failure_kind IS NOT 'infrastructure'"
        )
        return {item: (pid, created) for item, pid, created in rows}


def _count_predictions(db_path: Path) -> int:
    try:
        with sqlite3.connect(db_path) as connection:
            return connection.execute("SELECT count(*) FROM prediction").fetchone()[0]
    except sqlite3.Error:  # busy or not created yet: no progress seen this time
        return -1


def crash_evaluation(
    db_path: Path,
    model: str | Callable[[Path], str],
    *,
    rounds: int,
    seed: int = 0,
    items: int = 60,
) -> CrashReport:
    """Kill ``vetbench eval`` on ``model`` (a spec, or a function of the seeded database
    that makes one, as :func:`slow_script`) ``rounds`` times, then resume it to the end."""
    rng = random.Random(seed)
    seed_eval_items(db_path, items)
    if callable(model):
        model = model(db_path)
    report = CrashReport()
    vetbench = [sys.executable, "-m", "reviewer.cli", "--db", str(db_path)]
    eval_args = ["eval", "--model", model, "--shots", "0", "--batch-size", "4", "--device", "cpu"]
    survivors: dict[str, tuple[int, str]] = {}
    run_id: int | None = None
    for round_number in range(rounds):
        args = eval_args if run_id is None else ["eval", "--resume", str(run_id)]
        child = subprocess.Popen(
            vetbench + args, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        _kill_at_random_moment(child, rng, lambda: _count_predictions(db_path))
        report.rounds += 1
        integrity = sqlite_integrity(db_path)
        if integrity != "ok":
            report.integrity.append(f"round {round_number}: {integrity}")
        with sqlite3.connect(db_path) as connection:
            row = connection.execute("SELECT max(id) FROM eval_run").fetchone()
        run_id = row[0] if row and row[0] is not None else None
        now = _predictions(db_path)
        report.lost += [
            f"prediction for {item}" for item, seen in survivors.items() if now.get(item) != seen
        ]
        survivors = now
    report.acknowledged = len(survivors)
    if run_id is None:
        report.notes.append("no run was created before the kills")
        return report
    finish = subprocess.run(
        vetbench + ["eval", "--resume", str(run_id), "--json"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    final = _predictions(db_path)
    report.lost += [
        f"prediction for {item}" for item, seen in survivors.items() if final.get(item) != seen
    ]
    if finish.returncode != 0 or len(final) != items:
        report.notes.append(
            f"resume ended with {finish.returncode}, {len(final)} of {items} items predicted: "
            f"{finish.stderr[-500:]}"
        )
    return report


def main() -> None:
    if len(sys.argv) == 5 and sys.argv[1] == "review-child":
        asyncio.run(_judge_forever(sys.argv[2], sys.argv[3], sys.argv[4]))
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument(
        "--model", help="model for the evaluation crashes (default: demo)", default="demo"
    )
    parser.add_argument(
        "--scripted-seconds",
        type=float,
        help="evaluate a scripted model whose answers take this long instead of --model",
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        review = crash_review_app(Path(scratch) / "review.db", rounds=args.rounds)
        model = args.model
        if args.scripted_seconds is not None:
            script = Path(scratch) / "slow.jsonl"
            model = functools.partial(slow_script, path=script, seconds=args.scripted_seconds)
        evaluation = crash_evaluation(Path(scratch) / "eval.db", model, rounds=args.rounds)
    for name, report in (("review app", review), ("evaluation", evaluation)):
        print(
            json.dumps(
                {
                    "target": name,
                    "kills": report.rounds,
                    "acknowledged": report.acknowledged,
                    "lost": len(report.lost),
                    "integrity_failures": len(report.integrity),
                    "notes": report.notes,
                }
            )
        )


if __name__ == "__main__":
    main()

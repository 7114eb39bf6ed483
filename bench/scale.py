"""Every scale figure of issue 7 in one run, on the 40,000-item scale database.

1. import plus duplicate detection of 40,000 items (real CFLUE questions with
   variations, plus ordering items) through the real importer — target ≤ 30 s;
2. agreement statistics over those items with 3 annotators each — target ≤ 2 s
   (``bench/bench_agreement.py`` on the same database);
3. a lead approves the agreed items; export of the approved set to JSONL — target ≤ 10 s;
4. the review TUI on a 40,000-item review database: launch, next-item latency p50/p95
   through Pilot — target p95 ≤ 50 ms — and peak memory — target ≤ 300 MB
   (``bench/bench_tui.py``).

    python bench/scale.py [--out DIR]

Needs ``../shared/data/cflue/knowledge.json``.  Each step runs in its own process so
memory and import costs do not leak between them.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


def _run(script: str, *args: str) -> str:
    result = subprocess.run(
        [sys.executable, str(ROOT / "bench" / script), *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    return result.stdout


def approve_and_export(db_path: Path, out: Path) -> tuple[int, int, float]:
    from db.engine import open_database
    from db.people import ensure_person
    from db.vocabulary import Role
    from evaluator.exports.item_files import export_items
    from evaluator.exports.selection import Selection
    from reviewer.adjudication import approve_agreed

    db = open_database(db_path)
    with db.transaction() as session:
        ensure_person(session, "scale-lead", Role.LEAD)
    approved = approve_agreed(db, "scale-lead")
    started = time.perf_counter()
    summary = export_items(db, out, format="jsonl", selection=Selection(statuses=("approved",)))
    seconds = time.perf_counter() - started
    db.dispose()
    return approved, summary.count, seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, help="keep the databases here")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        out = args.out or Path(scratch)
        out.mkdir(parents=True, exist_ok=True)
        print("== 1. import + duplicate detection (bench/scale_data.py)")
        print(_run("scale_data.py", str(out)), flush=True)
        db_path = out / "scale.db"
        print("== 2. agreement statistics (bench/bench_agreement.py)")
        print(_run("bench_agreement.py", "--db", str(db_path)), flush=True)
        print("== 3. approve the agreed items, export the approved set")
        approved, exported, seconds = approve_and_export(db_path, out / "approved.jsonl")
        print(
            f"approved {approved:,}; exported {exported:,} items in {seconds:.2f} s (target ≤ 10 s)\n"
        )
        print("== 4. review TUI (bench/bench_tui.py)")
        print(_run("bench_tui.py", "--db", str(out / "review40k.db")), flush=True)


if __name__ == "__main__":
    main()

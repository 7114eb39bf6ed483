"""Many annotator processes judging into one database at once (issue 7).

Each worker process is one annotator running the review code path the TUI and
`vetbench judge` share: take the next item from its queue (``ReviewQueue``),
submit a judgment (``submit_judgment``), and log the stored judgment id with the
time the submit took.  The parent then checks every logged judgment against the
database: none lost, none extra, no error reached a worker.

    python bench/concurrent_annotators.py [--processes 8] [--seconds 60] [--db URL]

prints throughput (judgments per second) and the worst and p99 submit wait.
``tests/test_concurrency.py`` runs the same harness for a shorter time.
"""

from __future__ import annotations

import argparse
import random
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from sqlalchemy import func, select  # noqa: E402
from sqlmodel import col  # noqa: E402

from db.engine import open_database  # noqa: E402
from db.items import add_item  # noqa: E402
from db.models import Judgment, Person  # noqa: E402
from db.settings import set_setting  # noqa: E402
from db.validation import ItemDraft, validate_draft  # noqa: E402

SUPPLIER_EVENTS = (  # every seeded item's events A to D, in the order of their letters
    "Buyers look for new suppliers",
    "The supplier announces the increase",
    "Input costs rise",
    "Contracts are renegotiated",
)


@dataclass
class ConcurrencyResult:
    processes: int
    seconds: float
    logged: int  # judgments the workers were told were stored
    stored: int  # judgments found in the database
    missing: list[str] = field(default_factory=list)  # logged but not stored
    errors: list[str] = field(default_factory=list)  # anything a worker saw go wrong
    waits: list[float] = field(default_factory=list)  # seconds each submit took

    @property
    def throughput(self) -> float:
        return self.logged / self.seconds if self.seconds else 0.0

    def summary(self) -> str:
        waits = sorted(self.waits) or [0.0]
        p99 = waits[min(len(waits) - 1, int(len(waits) * 0.99))]
        return (
            f"{self.processes} annotator processes for {self.seconds:.0f} s: "
            f"{self.logged} judgments ({self.throughput:.1f}/s), "
            f"stored {self.stored}, lost {len(self.missing)}, errors {len(self.errors)}; "
            f"submit wait median {statistics.median(waits) * 1000:.1f} ms, "
            f"p99 {p99 * 1000:.1f} ms, worst {waits[-1] * 1000:.1f} ms"
        )


def seed_items(db_url: str, count: int, overlap: int) -> None:
    db = open_database(db_url)
    with db.transaction() as session:
        set_setting(session, "overlap", str(overlap))
        for index in range(count):
            draft = ItemDraft(
                kind="ordering",
                prompt=f"Scenario {index}: a supplier raises prices; order the events.",
                choices=dict(zip("ABCD", SUPPLIER_EVENTS, strict=True)),
                key="C, B, A, D",
            )
            assert validate_draft(draft) == []
            add_item(session, f"conc:{index}", "conc", draft, author="bench")
    db.dispose()


def worker(db_url: str, name: str, seconds: float, log_path: Path) -> None:
    """One annotator: judge queue items until time is up, logging each stored judgment."""
    from reviewer.judging import submit_judgment
    from reviewer.queue import ReviewQueue

    rng = random.Random(name)
    db = open_database(db_url)
    deadline = time.monotonic() + seconds
    with log_path.open("a", encoding="utf-8") as log:
        try:
            queue = ReviewQueue(db, name)
            while time.monotonic() < deadline:
                item = queue.fetch_next()
                if item is None:
                    break
                answer = item.key if rng.random() < 0.8 else item.key[::-1]
                started = time.perf_counter()
                receipt = submit_judgment(
                    db,
                    name,
                    item.id,
                    revision_number=item.revision,
                    blind_answer=answer,
                    verdict="keep",
                    seconds=rng.uniform(5, 60),
                )
                waited = time.perf_counter() - started
                log.write(f"OK\t{receipt.judgment_id}\t{item.id}\t{waited:.6f}\n")
                log.flush()
        except Exception as error:  # reported to the parent, which fails the run
            log.write(f"ERROR\t{type(error).__name__}: {error}\n".replace("\n", " ") + "\n")
            log.flush()
    db.dispose()


def run_annotators(
    db_url: str, *, processes: int = 8, seconds: float = 60.0, items: int = 4000, overlap: int = 3
) -> ConcurrencyResult:
    """Seed ``items`` items, run ``processes`` annotator processes at once, check the result."""
    seed_items(db_url, items, overlap)
    with tempfile.TemporaryDirectory() as scratch:
        logs = [Path(scratch) / f"annotator{i}.log" for i in range(processes)]
        started = time.monotonic()
        children = [
            subprocess.Popen(
                [
                    sys.executable,
                    __file__,
                    "worker",
                    db_url,
                    f"annotator{i}",
                    str(seconds),
                    str(log),
                ],
                cwd=ROOT,
            )
            for i, log in enumerate(logs)
        ]
        codes = [child.wait() for child in children]
        elapsed = time.monotonic() - started
        lines = [line for log in logs if log.exists() for line in log.read_text().splitlines()]
    result = ConcurrencyResult(
        processes=processes, seconds=min(elapsed, seconds), logged=0, stored=0
    )
    result.errors = [line for line in lines if not line.startswith("OK\t")]
    result.errors += [f"worker exited with {code}" for code in codes if code != 0]
    logged = {
        int(parts[1]): parts[2]
        for parts in (line.split("\t") for line in lines)
        if parts[0] == "OK"
    }
    result.waits = [float(line.split("\t")[3]) for line in lines if line.startswith("OK\t")]
    result.logged = len(logged)
    db = open_database(db_url)
    with db.session() as session:
        rows = session.execute(select(col(Judgment.id), col(Judgment.item_id))).all()
        stored: dict[int | None, str] = dict(rows)
        result.stored = session.execute(select(func.count()).select_from(Judgment)).scalar_one()
        annotators = session.execute(select(func.count()).select_from(Person)).scalar_one()
    db.dispose()
    result.missing = [f"{jid} {item}" for jid, item in logged.items() if stored.get(jid) != item]
    if annotators != processes:
        result.errors.append(f"{annotators} people registered, expected {processes}")
    return result


def sqlite_integrity(path: Path) -> str:
    """``PRAGMA integrity_check`` of a SQLite file: "ok" when it is sound."""
    with sqlite3.connect(path) as connection:
        return "; ".join(row[0] for row in connection.execute("PRAGMA integrity_check"))


def main() -> None:
    if len(sys.argv) == 6 and sys.argv[1] == "worker":
        worker(sys.argv[2], sys.argv[3], float(sys.argv[4]), Path(sys.argv[5]))
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--processes", type=int, default=8)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--items", type=int, default=8000)
    parser.add_argument("--db", help="database URL or path (default: a new SQLite file)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        db_url = args.db or str(Path(scratch) / "concurrency.db")
        result = run_annotators(
            db_url, processes=args.processes, seconds=args.seconds, items=args.items
        )
        print(result.summary())
        for line in result.errors[:20] + result.missing[:20]:
            print("  problem:", line)
        if "://" not in db_url:
            print("integrity_check:", sqlite_integrity(Path(db_url)))


if __name__ == "__main__":
    main()

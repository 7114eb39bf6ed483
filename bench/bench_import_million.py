"""Benchmark: import 1,000,000 EconLogicQA ordering rows, with bounded memory.

Writes a CSV of ``--rows`` generated ordering items (distinct random scenarios of
about 200 characters with four events; ``--copies``, 1% by default, are planted
copies of earlier rows, events shuffled and the key remapped, half with a word of
the scenario changed), then runs ``vetbench import`` on it in a child process, with
duplicate detection as usual, and prints the wall time, rows per second, the
child's peak resident memory (target: at most 1 GB) and how many planted copies were
flagged as duplicates of their original.  A second run pipes the same file through
standard input (``vetbench import -``).

    .venv/bin/python bench/bench_import_million.py [--rows 1000000] [--copies 0.01]
        [--keep DIR] [--no-pipe]
"""

from __future__ import annotations

import argparse
import csv
import itertools
import os
import random
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SEED = 20261130
SYLLABLES = [
    "ba",
    "be",
    "bi",
    "bo",
    "bu",
    "ca",
    "ce",
    "ci",
    "co",
    "cu",
    "da",
    "de",
    "di",
    "do",
    "du",
    "fa",
    "fe",
    "fi",
    "fo",
    "fu",
    "ga",
    "ge",
    "gi",
    "go",
    "gu",
    "la",
    "le",
    "li",
    "lo",
    "lu",
    "ma",
    "me",
    "mi",
    "mo",
    "mu",
    "na",
    "ne",
    "ni",
    "no",
    "nu",
    "pa",
    "pe",
    "pi",
    "po",
    "pu",
    "ra",
    "re",
    "ri",
    "ro",
    "ru",
    "sa",
    "se",
    "si",
    "so",
    "su",
    "ta",
    "te",
    "ti",
    "to",
    "tu",
]
TARGET_PEAK_BYTES = 1 << 30


def _vocabulary(size: int = 20_000) -> list[str]:
    """Pseudo-words of two to four syllables: varied text, like real items, not a few repeats."""
    rng = random.Random(SEED - 1)
    return ["".join(rng.choices(SYLLABLES, k=rng.randint(2, 4))) for _ in range(size)]


WORDS = _vocabulary()
# Zipf's law, as in real text: the n-th most common word is used about 1/n as often.
CUMULATIVE = list(itertools.accumulate(1 / rank for rank in range(1, len(WORDS) + 1)))


def _sentence(rng: random.Random, words: int) -> str:
    return " ".join(rng.choices(WORDS, cum_weights=CUMULATIVE, k=words)).capitalize() + "."


ORIGINALS_KEPT = 20_000  # originals a planted copy is drawn from (a uniform sample so far)


def write_rows(path: Path, rows: int, copies: float = 0.0) -> dict[int, int]:
    """Write the CSV; about ``copies`` of the rows are planted copies of an earlier row:
    half with their events shuffled and the key remapped (the same canonical text), half
    with one word of the scenario changed as well.  Returns copy row -> original row
    (1-based data rows, as the importer numbers ids)."""
    rng = random.Random(SEED)
    planted: dict[int, int] = {}
    originals: list[tuple[int, str, list[str], list[str]]] = []
    seen = 0
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle, lineterminator="\n")
        writer.writerow(["Question", "A", "B", "C", "D", "Answer"])
        for row in range(1, rows + 1):
            if originals and rng.random() < copies:
                original_row, scenario, events, key = rng.choice(originals)
                order = rng.sample(range(4), 4)  # new position of each old event
                new_events = [""] * 4
                for old, new in enumerate(order):
                    new_events[new] = events[old]
                new_key = ["ABCD"[order["ABCD".index(label)]] for label in key]
                if rng.random() < 0.5:
                    words = scenario.split(" ")
                    position = rng.randrange(2, len(words) - 6)
                    words[position] = rng.choice(WORDS)
                    scenario = " ".join(words)
                writer.writerow([scenario, *new_events, ", ".join(new_key)])
                planted[row] = original_row
                continue
            scenario = f"Case {row}: {_sentence(rng, 22)} Put the events in logical order."
            events = [_sentence(rng, 5) for _ in range(4)]
            key = rng.sample("ABCD", 4)
            writer.writerow([scenario, *events, ", ".join(key)])
            seen += 1  # reservoir sampling: every original so far equally likely to be copied
            if len(originals) < ORIGINALS_KEPT:
                originals.append((row, scenario, events, key))
            elif (slot := rng.randrange(seen)) < ORIGINALS_KEPT:
                originals[slot] = (row, scenario, events, key)
    return planted


def planted_found(database: Path, source: str, planted: dict[int, int]) -> str:
    """How many planted copies were flagged (pointing at their original, or at an earlier
    copy of it), and how many other items were flagged."""
    connection = sqlite3.connect(f"file:{database}?mode=ro", uri=True)
    try:
        links = dict(
            connection.execute(
                "SELECT id, suspected_duplicate_of FROM item WHERE suspected_duplicate_of IS NOT NULL"
            )
        )
    finally:
        connection.close()
    original_of = {f"{source}:{copy}": f"{source}:{row}" for copy, row in planted.items()}
    flagged = [item_id for item_id in original_of if item_id in links]
    right = sum(
        1
        for item_id in flagged
        if original_of.get(links[item_id], links[item_id]) == original_of[item_id]
    )
    others = len(set(links) - set(original_of))
    share = f" ({len(flagged) / len(original_of):.1%})" if original_of else ""
    return (
        f"planted copies flagged: {len(flagged):,} of {len(original_of):,}{share}, {right:,} "
        f"pointing at their original or an earlier copy of it; other items flagged: {others:,}"
    )


def run_import(database: Path, csv_path: Path, *, piped: bool) -> tuple[float, int, str]:
    """Wall seconds, peak RSS in bytes of this child alone (``wait4``), and its output."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    command = [sys.executable, "-m", "reviewer.cli", "--db", str(database), "import"]
    command += ["-", "--format", "econlogicqa", "--source", "bench"] if piped else [str(csv_path)]
    with (
        csv_path.open("rb") as stdin,
        tempfile.TemporaryFile() as stdout,
        tempfile.TemporaryFile() as stderr,
    ):
        started = time.perf_counter()
        child = subprocess.Popen(
            command,
            stdin=stdin if piped else subprocess.DEVNULL,
            stdout=stdout,
            stderr=stderr,
            env=env,
        )
        _, status, usage = os.wait4(child.pid, 0)
        elapsed = time.perf_counter() - started
        child.returncode = os.waitstatus_to_exitcode(status)
        stdout.seek(0)
        stderr.seek(0)
        output, errors = stdout.read().decode(), stderr.read().decode()
    if child.returncode != 0:
        print(output, errors, sep="\n")
        sys.exit(f"import failed with status {child.returncode}")
    return elapsed, usage.ru_maxrss * 1024, output  # ru_maxrss is in KiB on Linux


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--keep", type=Path, help="Write the files here and keep them.")
    parser.add_argument("--no-pipe", action="store_true", help="Skip the standard-input run.")
    parser.add_argument(
        "--copies",
        type=float,
        default=0.01,
        help="Share of rows that are planted copies of an earlier row (default 0.01).",
    )
    args = parser.parse_args()
    directory = args.keep or Path(tempfile.mkdtemp(prefix="vetbench-million-"))
    directory.mkdir(parents=True, exist_ok=True)
    try:
        csv_path = directory / "ordering.csv"
        started = time.perf_counter()
        planted = write_rows(csv_path, args.rows, args.copies)
        size_mb = csv_path.stat().st_size / 1e6
        print(
            f"wrote {args.rows:,} rows ({size_mb:,.0f} MB, {len(planted):,} planted copies) "
            f"in {time.perf_counter() - started:.1f} s"
        )
        runs = [("file", False)] if args.no_pipe else [("file", False), ("stdin pipe", True)]
        for label, piped in runs:
            database = directory / f"million-{'pipe' if piped else 'file'}.db"
            database.unlink(missing_ok=True)
            elapsed, peak, output = run_import(database, csv_path, piped=piped)
            total = [line for line in output.splitlines() if line.strip().startswith("total")]
            print(
                f"{label}: {elapsed:.1f} s, {args.rows / elapsed:,.0f} rows/s, "
                f"peak RSS {peak / 2**20:,.0f} MiB "
                f"({'within' if peak <= TARGET_PEAK_BYTES else 'over'} the 1 GiB target)"
            )
            print("   ", total[0].strip() if total else output.strip().splitlines()[-1])
            print("   ", planted_found(database, "bench" if piped else "ordering", planted))
    finally:
        if args.keep is None:
            shutil.rmtree(directory, ignore_errors=True)


if __name__ == "__main__":
    main()

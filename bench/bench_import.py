"""Benchmark: import 40,000 items with near-duplicate detection into a fresh SQLite file.

The input is synthetic: the real CFLUE knowledge file (when present) copied with small
text variations up to about three quarters of the items, plus generated English
ordering items for the rest, written as one CFLUE JSON file and one EconLogicQA CSV
file and imported in one ``import_files`` call.  Prints items per second, seconds per
phase and the number of suspected duplicates.  Also times the real CFLUE file alone
through the command line.

    .venv/bin/python bench/bench_import.py [--items 40000] [--keep DIR]
"""

from __future__ import annotations

import argparse
import ast
import csv
import itertools
import json
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from db.engine import open_database  # noqa: E402
from db.import_report import ImportProgress  # noqa: E402
from db.importer import import_files  # noqa: E402

CFLUE_KNOWLEDGE = ROOT.parent / "shared" / "data" / "cflue" / "knowledge.json"
SEED = 20261129
FILLER_HANZI = "的了在是有和与及或其中对该此等"
TASKS = ("单项选择题", "多项选择题", "判断题")


def noisy_copy(rng: random.Random, text: str, edits: int, alphabet: str = FILLER_HANZI) -> str:
    """A copy of ``text`` with ``edits`` characters replaced, inserted or deleted (the new
    ones drawn from ``alphabet``); a text under 8 characters is never shortened.
    tests/test_dedup.py makes its near-duplicates with it too."""
    chars = list(text)
    for _ in range(edits):
        position = rng.randrange(len(chars))
        roll = rng.random()
        if roll < 0.4:
            chars[position] = rng.choice(alphabet)
        elif roll < 0.7 or len(chars) < 8:
            chars.insert(position, rng.choice(alphabet))
        else:
            del chars[position]
    return "".join(chars)


def _generated_mcq(rng: random.Random, index: int) -> dict[str, object]:
    """An MCQ record for machines without the real file: random Chinese text."""
    pool = "货币政策银行利率通胀市场资本证券基金保险期货会计审计税收财政债券股票汇率贷款存款风险收益企业负债资产"
    task = rng.choice(TASKS)
    labels = "AB" if task == "判断题" else "ABCD"
    choices = (
        {"A": "对", "B": "错"}
        if task == "判断题"
        else {label: "".join(rng.choices(pool, k=rng.randint(4, 12))) for label in labels}
    )
    answer = rng.choice(labels) if task != "多项选择题" else "".join(sorted(rng.sample(labels, 2)))
    return {
        "名称": "合成题库",
        "task": task,
        "question": f"第{index}题："
        + "".join(rng.choices(pool, k=rng.randint(15, 60)))
        + "（　）。",
        "choices": repr(choices),
        "answer": answer,
        "analysis": None,
    }


def make_mcq_records(count: int, rng: random.Random) -> list[dict[str, object]]:
    if CFLUE_KNOWLEDGE.exists():
        originals = json.loads(CFLUE_KNOWLEDGE.read_text(encoding="utf-8"))
    else:
        originals = [_generated_mcq(rng, i) for i in range(4000)]
    records: list[dict[str, object]] = []
    copy = 0
    while len(records) < count:
        for original in originals:
            if len(records) == count:
                break
            record = dict(original)
            if copy:
                # Copies differ a little (near-duplicates) or a lot (new questions).
                edits = rng.choice((0, 1, 2, 4, 40))
                record["question"] = noisy_copy(rng, str(original["question"]), edits)
                if edits == 40:
                    choices = ast.literal_eval(str(original["choices"]))
                    record["choices"] = repr(
                        {label: noisy_copy(rng, text, 3) for label, text in choices.items()}
                    )
            records.append(record)
        copy += 1
    return records


def _english_vocabulary(rng: random.Random, size: int = 6000) -> list[str]:
    letters = "eeeeeeeeeeeettttttttaaaaaaaooooooiiiiiinnnnnnsssssshhhhhrrrrrddddllllucmwfgypbvkjxqz"
    return sorted({"".join(rng.choices(letters, k=rng.randint(2, 9))) for _ in range(size)})


def make_ordering_rows(count: int, rng: random.Random) -> list[list[str]]:
    vocabulary = _english_vocabulary(rng)
    rng.shuffle(vocabulary)  # which words are common should not follow the alphabet
    cumulative = list(itertools.accumulate(1 / (rank + 1) for rank in range(len(vocabulary))))

    def sentence(words: int) -> str:
        return " ".join(rng.choices(vocabulary, cum_weights=cumulative, k=words)).capitalize() + "."

    rows: list[list[str]] = []
    while len(rows) < count:
        events = [sentence(rng.randint(6, 12)) for _ in range(4)]
        scenario = sentence(rng.randint(12, 25)) + " Put the following events in logical order."
        order = rng.sample("ABCD", 4)
        rows.append([scenario, *events, ", ".join(order), sentence(10)])
        if rng.random() < 0.1 and len(rows) < count:  # a near-copy now and then
            rows.append([scenario.replace(" the ", " a ", 1), *events, ", ".join(order), ""])
    return rows


def write_inputs(directory: Path, items: int) -> tuple[Path, Path]:
    rng = random.Random(SEED)
    mcq_count = items * 3 // 4
    mcq_path = directory / "bench_mcq.json"
    mcq_path.write_text(
        json.dumps(make_mcq_records(mcq_count, rng), ensure_ascii=False), encoding="utf-8"
    )
    csv_path = directory / "bench_ordering.csv"
    with csv_path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["Question", "A", "B", "C", "D", "Answer", "Explanation"])
        writer.writerows(make_ordering_rows(items - mcq_count, rng))
    return mcq_path, csv_path


class PhaseTimer:
    """Collects the time spent in each importer phase from its progress callback."""

    def __init__(self) -> None:
        self.phases: dict[str, float] = {}
        self._phase: str | None = None
        self._since = time.perf_counter()

    def __call__(self, event: ImportProgress) -> None:
        key = f"{Path(event.path).name}: {event.phase}"
        if key != self._phase:
            now = time.perf_counter()
            if self._phase is not None:
                self.phases[self._phase] = self.phases.get(self._phase, 0.0) + now - self._since
            self._phase, self._since = key, now

    def finish(self) -> None:
        self(ImportProgress("", "end", 0, 0))


def bench_synthetic(directory: Path, items: int) -> None:
    started = time.perf_counter()
    paths = write_inputs(directory, items)
    print(f"wrote {items:,} synthetic items in {time.perf_counter() - started:.1f} s")
    database = open_database(directory / "bench.db")
    timer = PhaseTimer()
    started = time.perf_counter()
    report = import_files(database, list(paths), progress=timer)
    elapsed = time.perf_counter() - started
    timer.finish()
    database.dispose()
    tally = report.tally
    print(
        f"import + duplicate detection: {elapsed:.1f} s for {tally.added:,} items "
        f"({tally.added / elapsed:,.0f} items/s)"
    )
    print(f"suspected duplicates: {tally.duplicates:,}; invalid: {report.invalid}")
    for file_report in report.files:
        kinds = ", ".join(f"{t.added} {k}" for k, t in sorted(file_report.by_kind.items()))
        print(
            f"  {Path(file_report.path).name}: {kinds}; {file_report.tally.duplicates:,} duplicates"
        )
    print("  time by phase (parse and validate are counted in 'validating'):")
    for phase, seconds in timer.phases.items():
        print(f"    {phase:<45} {seconds:6.2f} s")
    if not report.ok:
        print("import failed:", *(f.error or f.problems[:3] for f in report.files), sep="\n")
        sys.exit(1)


def bench_real_cflue(directory: Path) -> None:
    if not CFLUE_KNOWLEDGE.exists():
        print(f"real CFLUE file not found at {CFLUE_KNOWLEDGE}; skipped")
        return
    vetbench = Path(sys.executable).parent / "vetbench"
    command = [str(vetbench), "--db", str(directory / "cflue.db"), "import", str(CFLUE_KNOWLEDGE)]
    for attempt in ("first", "second"):
        started = time.perf_counter()
        result = subprocess.run(command, capture_output=True, text=True, check=False)
        elapsed = time.perf_counter() - started
        summary = result.stdout.strip().splitlines()
        print(
            f"vetbench import knowledge.json ({attempt} time): {elapsed:.1f} s, "
            f"exit {result.returncode}: {summary[-1].strip() if summary else result.stderr}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=40_000)
    parser.add_argument("--keep", type=Path, help="write the inputs and databases here")
    args = parser.parse_args()
    if args.keep:
        args.keep.mkdir(parents=True, exist_ok=True)
        directory = args.keep
    else:
        directory = Path(tempfile.mkdtemp(prefix="vetbench-bench-"))
    try:
        bench_synthetic(directory, args.items)
        bench_real_cflue(directory)
    finally:
        if not args.keep:
            shutil.rmtree(directory, ignore_errors=True)


if __name__ == "__main__":
    main()

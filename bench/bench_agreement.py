"""Benchmark: every agreement statistic over 40,000 items with 3 annotators each.

Builds a realistic SQLite database (a mix of ordering, single, multi and
true/false items from several sources; a pool of annotators of varying skill,
3 per item; some wrong keys, flawed items, retracted and repeated judgments,
edited items and lead decisions), then times loading the judgments and
computing everything ``vetbench agreement --json`` shows, bootstrap intervals
included.  Target: under 2 s.

    .venv/bin/python bench/bench_agreement.py [--items 40000] [--resamples 1000] [--db FILE]
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from datetime import timedelta
from pathlib import Path

import numpy as np
from sqlalchemy import insert

from db.engine import Database, open_database
from db.models import Decision, Item, ItemRevision, Judgment, Person, utcnow
from db.vocabulary import Role, Verdict

KINDS = ("ordering", "single", "multi", "truefalse")
KIND_SHARES = (0.25, 0.45, 0.20, 0.10)
ANNOTATORS = ("ana", "ben", "chen", "dara", "emil", "fang")
SKILL = (0.92, 0.88, 0.85, 0.8, 0.9, 0.75)  # chance of finding the right answer blind
PER_ITEM = 3


def random_answer(rng: np.random.Generator, kind: str, size: int) -> str:
    letters = "ABCDEFGH"[:size]
    if kind == "ordering":
        return "".join(rng.permutation(list(letters)))
    if kind == "multi":
        while True:
            chosen = [letter for letter in letters if rng.random() < 0.5]
            if len(chosen) >= 2:
                return "".join(chosen)
    return letters[int(rng.integers(size))]


def near_miss(rng: np.random.Generator, kind: str, answer: str, size: int) -> str:
    """A plausible wrong answer: two events swapped, one letter more or less, another choice."""
    letters = "ABCDEFGH"[:size]
    if kind == "ordering":
        order = list(answer)
        i = int(rng.integers(size - 1))
        order[i], order[i + 1] = order[i + 1], order[i]
        return "".join(order)
    if kind == "multi":
        flip = letters[int(rng.integers(size))]
        chosen = set(answer) ^ {flip}
        if not chosen:
            chosen = {flip}
        return "".join(sorted(chosen))
    others = [letter for letter in letters if letter != answer]
    return others[int(rng.integers(len(others)))]


def build(db: Database, items: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    now = utcnow()
    people = [
        {"id": i + 1, "name": name, "role": Role.ANNOTATOR.value, "created_at": now}
        for i, name in enumerate(ANNOTATORS)
    ]
    people.append(
        {"id": len(people) + 1, "name": "lead", "role": Role.LEAD.value, "created_at": now}
    )
    item_rows, revision_rows, judgment_rows, decision_rows = [], [], [], []
    revision_id = 0
    clock = now - timedelta(days=30)
    kinds = rng.choice(KINDS, size=items, p=KIND_SHARES)
    for index in range(items):
        kind = str(kinds[index])
        size = {"ordering": 4 + int(rng.random() < 0.2), "truefalse": 2}.get(
            kind, 4 + int(rng.integers(3))
        )
        source = (
            "econlogicqa-gen"
            if kind == "ordering"
            else ("cflue" if rng.random() < 0.8 else "generated")
        )
        truth = random_answer(rng, kind, size)
        quality = rng.random()
        key = near_miss(rng, kind, truth, size) if quality < 0.08 else truth
        flawed = 0.08 <= quality < 0.16
        item_id = f"{source}:{index}"
        revisions = 2 if rng.random() < 0.03 else 1
        item_rows.append(
            {
                "id": item_id,
                "kind": kind,
                "source": source,
                "source_ref": "",
                "language": "en",
                "status": "conflict",
                "current_revision": revisions,
                "meta": {},
                "created_at": now,
            }
        )
        for number in range(1, revisions + 1):
            revision_id += 1
            revision_rows.append(
                {
                    "id": revision_id,
                    "item_id": item_id,
                    "number": number,
                    "prompt": f"prompt {index}",
                    "choices": {},
                    "key": key,
                    "explanation": None,
                    "author": "bench",
                    "change_note": "",
                    "provenance": {},
                    "created_at": now,
                }
            )
            for person in rng.choice(len(ANNOTATORS), size=PER_ITEM, replace=False).tolist():
                blind = truth if rng.random() < SKILL[person] else near_miss(rng, kind, truth, size)
                if flawed:
                    verdict = str(
                        rng.choice(["flawed", "sensitive", "duplicate", "keep", "ambiguous"])
                    )
                elif blind != key:
                    verdict = str(
                        rng.choice(["wrong-key", "keep", "ambiguous"], p=[0.6, 0.25, 0.15])
                    )
                else:
                    verdict = (
                        "keep"
                        if rng.random() < 0.95
                        else str(rng.choice([v.value for v in Verdict]))
                    )
                if kind != "ordering" and verdict == "no-order":
                    verdict = "flawed"
                retract_first = rng.random() < 0.03
                for attempt in range(2 if retract_first else 1):
                    clock += timedelta(milliseconds=int(rng.integers(50, 5000)))
                    judgment_rows.append(
                        {
                            "item_id": item_id,
                            "revision_id": revision_id,
                            "revision_number": number,
                            "annotator_id": person + 1,
                            "blind_answer": blind,
                            "verdict": verdict,
                            "alternative_orders": [],
                            "corrected_key": None,
                            "duplicate_of": None,
                            "comment": "",
                            "seconds": float(rng.lognormal(3.6, 0.6)),
                            "created_at": clock,
                            "retracted": retract_first and attempt == 0,
                            "retracted_at": None,
                        }
                    )
        if rng.random() < 0.2:
            decision_rows.append(
                {
                    "item_id": item_id,
                    "lead_id": len(people),
                    "status": "approved" if not flawed else "rejected",
                    "revision_number": revisions,
                    "final_key": key,
                    "reason": None if not flawed else "flawed",
                    "comment": "",
                    "created_at": clock,
                }
            )
    with db.transaction() as session:
        for model, rows in (
            (Person, people),
            (Item, item_rows),
            (ItemRevision, revision_rows),
            (Judgment, judgment_rows),
            (Decision, decision_rows),
        ):
            for start in range(0, len(rows), 20_000):
                session.execute(insert(model), rows[start : start + 20_000])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=40_000)
    parser.add_argument("--resamples", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--repeat", type=int, default=3, help="timed runs; the best is reported")
    parser.add_argument("--db", type=Path, help="reuse or create this SQLite file")
    args = parser.parse_args()

    from reviewer.agreement import BootstrapSettings, agreement_from_data, load_judgments
    from reviewer.agreement.nominal import import_reference_libraries

    import_reference_libraries()  # one-off import cost, paid once per process, not timed

    with tempfile.TemporaryDirectory() as scratch:
        path = args.db or Path(scratch) / "bench.db"
        fresh = not path.exists()
        db = open_database(path)
        if fresh:
            started = time.perf_counter()
            build(db, args.items, args.seed)
            print(f"built {path} in {time.perf_counter() - started:.1f} s")
        settings = BootstrapSettings(resamples=args.resamples, seed=1)
        timings = []
        for _ in range(args.repeat):
            started, cpu_started = time.perf_counter(), time.process_time()
            data = load_judgments(db)
            loaded = time.perf_counter()
            report = agreement_from_data(data, settings)
            finished = time.perf_counter()
            cpu = time.process_time() - cpu_started
            timings.append((finished - started, loaded - started, finished - loaded, cpu))
        total, load, compute, cpu = min(timings)
        figures = report.figures
        print(
            f"items judged: {figures.items_judged:,}  compared: {figures.items_compared:,}  "
            f"judgments: {figures.judgments:,}  annotators: {figures.annotators}"
        )
        summary = {
            "alpha verdict": figures.verdict.alpha.to_json(),
            "alpha keep/drop": figures.keep_drop.alpha.to_json(),
            "fleiss verdict": figures.verdict.fleiss.to_json(),
            "alpha answer (multi, MASI)": figures.answer_alpha["multi"].alpha.to_json(),
            "mean kendall tau": figures.orders.mean_tau.to_json(),
            "likely wrong keys": len(figures.key.likely_wrong_keys),
        }
        print(json.dumps(summary, indent=1))
        print(f"bootstrap resamples: {args.resamples}; best of {args.repeat} runs")
        print(
            f"load {load:.3f} s + compute {compute:.3f} s = {total:.3f} s wall, "
            f"{cpu:.3f} s CPU (target < 2 s)"
        )
        db.dispose()


if __name__ == "__main__":
    main()

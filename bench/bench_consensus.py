"""Benchmark: the consensus model (`vetbench consensus`) over many judged items.

Builds the same realistic SQLite database as ``bench_agreement.py`` (a mix of kinds,
annotators of varying skill, 3 per item, wrong keys, flawed items, retracted and
repeated judgments, edits and decisions), then times importing crowd-kit, reading the
inputs and fitting both models, and prints what the consensus found.  Its peer, in the
same run on the same ratings: the fit with crowd-kit's own model classes instead of
``db/dawid_skene.py``'s (which do their EM steps on arrays), whether both decide the same,
and how far apart their figures are at most (0: the same to the last bit).  ``--items 49``
is about the demo database's size.

    .venv/bin/python bench/bench_consensus.py [--items 10000] [--db FILE]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING
from unittest import mock

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # run as a script, bench/ itself is first on the path
    sys.path.insert(0, str(ROOT))

from bench.bench_agreement import build  # noqa: E402
from db.engine import open_database  # noqa: E402

if TYPE_CHECKING:
    from db.consensus import Consensus
    from db.consensus_inputs import ConsensusInputs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--db", type=Path, help="reuse or create this SQLite file")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        path = args.db or Path(scratch) / "bench.db"
        fresh = not path.exists()
        db = open_database(path, create=True)
        if fresh:
            started = time.perf_counter()
            build(db, args.items, args.seed)
            print(f"built {args.items:,} items in {time.perf_counter() - started:.1f} s")
        started = time.perf_counter()
        # What the first fit pays once (scipy: the reliabilities' intervals), paid here so
        # that neither of the two fits timed below pays it.
        import crowdkit.aggregation  # noqa: F401
        import scipy.stats  # noqa: F401

        from db import dawid_skene  # noqa: F401

        print(f"crowd-kit and scipy imported in {time.perf_counter() - started:.2f} s")
        from db.consensus_inputs import consensus_inputs

        with db.session() as session:
            started = time.perf_counter()
            inputs = consensus_inputs(session)
            read = time.perf_counter() - started
        consensus, fitted = timed_fit(inputs)
        print(
            f"{len(inputs.ratings):,} ratings of {len(inputs.items):,} items read in {read:.2f} s, "
            f"both models fitted in {fitted:.2f} s"
        )
        from crowdkit.aggregation import DawidSkene, OneCoinDawidSkene

        import db.dawid_skene as ours

        with (
            mock.patch.object(ours, "FastOneCoinDawidSkene", OneCoinDawidSkene),
            mock.patch.object(ours, "FastDawidSkene", DawidSkene),
        ):
            stock, stock_fitted = timed_fit(inputs)
        ours_json, stock_json = consensus.to_json(confidence=0.95), stock.to_json(confidence=0.95)
        differences = list(figure_differences(ours_json, stock_json))
        same = all(difference is not None for difference in differences)
        largest = max((d for d in differences if d is not None), default=0.0)
        print(
            f"with crowd-kit's own model classes: {stock_fitted:.2f} s "
            f"({stock_fitted / fitted:.1f}x the time), the same decisions and counts: "
            f"{'yes' if same else 'NO'}, figures within {largest:.1e}"
        )
        outcomes = Counter(item.outcome(0.95).value for item in consensus.items)
        print("at confidence 0.95:", ", ".join(f"{k} {v:,}" for k, v in sorted(outcomes.items())))
        for rater in consensus.raters:
            print(
                f"  {rater.name:<8} {rater.kind:<6} {rater.reliability:.3f} "
                f"[{rater.low:.3f}, {rater.high:.3f}] n={rater.n:,}"
                f"{'' if rater.counted else '  (guessing: not counted)'}"
            )


def figure_differences(ours: object, theirs: object) -> Iterator[float | None]:
    """How far each figure of two consensus JSON documents is apart; None where anything
    but a float differs (a decision, a count, a name, the shape)."""
    if isinstance(ours, float) and isinstance(theirs, float):
        yield abs(ours - theirs)
    elif isinstance(ours, dict) and isinstance(theirs, dict) and ours.keys() == theirs.keys():
        for key in ours:
            yield from figure_differences(ours[key], theirs[key])
    elif isinstance(ours, list) and isinstance(theirs, list) and len(ours) == len(theirs):
        for mine, their in zip(ours, theirs, strict=True):
            yield from figure_differences(mine, their)
    elif ours != theirs:
        yield None


def timed_fit(inputs: ConsensusInputs) -> tuple[Consensus, float]:
    """The consensus of ``inputs`` fitted anew (not the fit kept for the same inputs),
    and the seconds it took."""
    from db import consensus

    consensus._fits.clear()
    started = time.perf_counter()
    fitted = consensus.consensus_from_inputs(inputs)
    return fitted, time.perf_counter() - started


if __name__ == "__main__":
    main()

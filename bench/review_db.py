"""Build a large review database quickly (Core inserts), for the review benchmarks.

``build_review_database(path, items=40_000)`` makes a migrated SQLite file with
a mix of ordering and multiple-choice items in every status the queue meets:
most items already judged by three annotators (agreed or conflict), some with
one judgment (in review), the rest pending.  The annotator ``bench`` has
already judged part of the in-review items, so the queue has to walk past them
(a harder case than an empty database).

Run directly: ``python bench/review_db.py /tmp/review40k.db [--items N]``.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

from sqlalchemy import insert

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from db.engine import open_database  # noqa: E402
from db.models import Item, ItemRevision, Judgment, Person  # noqa: E402
from db.planner_statistics import gather_statistics  # noqa: E402
from db.vocabulary import ItemStatus, Verdict  # noqa: E402

ANNOTATORS = ("ann1", "ann2", "ann3", "bench")
KINDS = ("ordering", "ordering", "single", "multi", "truefalse")


def _item_rows(count: int, rng: random.Random) -> tuple[list[dict], list[dict]]:
    now = datetime(2026, 1, 1, tzinfo=UTC)
    items: list[dict] = []
    revisions: list[dict] = []
    for index in range(count):
        kind = KINDS[index % len(KINDS)]
        source = "econ-bench" if kind == "ordering" else "cflue-bench"
        item_id = f"{source}:{index:05d}"
        if kind == "ordering":
            choices = {label: f"Event {label} of scenario {index}" for label in "ABCD"}
            key = "".join(rng.sample("ABCD", 4))
            prompt = f"Scenario {index}: a firm changes prices; order the events logically."
        elif kind == "truefalse":
            choices = {"A": "对", "B": "错"}
            key = rng.choice("AB")
            prompt = f"判断题 {index}：银行的存款准备金率由中央银行决定。"
        else:
            choices = {label: f"选项 {label}（{index}）" for label in "ABCD"}
            key = rng.choice("ABCD") if kind == "single" else "".join(sorted(rng.sample("ABCD", 2)))
            prompt = f"问题 {index}：下列关于货币政策的说法，正确的是？"
        items.append(
            {
                "id": item_id,
                "kind": kind,
                "source": source,
                "source_ref": f"record {index}",
                "language": "en" if kind == "ordering" else "zh",
                "status": ItemStatus.PENDING.value,
                "current_revision": 1,
                "suspected_duplicate_of": None,
                "duplicate_similarity": None,
                "meta": {},
                "created_at": now + timedelta(seconds=index),
            }
        )
        revisions.append(
            {
                "id": index + 1,
                "item_id": item_id,
                "number": 1,
                "kind": kind,
                "prompt": prompt,
                "choices": choices,
                "key": key,
                "explanation": f"Explanation {index}.",
                "author": "import",
                "change_note": "import",
                "provenance": {},
                "created_at": now,
            }
        )
    return items, revisions


def build_review_database(path: Path, items: int = 40_000, seed: int = 7) -> None:
    """Create ``path`` (replacing it) with ``items`` items and judgments in every status."""
    path = Path(path)
    for suffix in ("", "-wal", "-shm"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)
    rng = random.Random(seed)
    db = open_database(path)
    item_rows, revision_rows = _item_rows(items, rng)
    people = [
        {
            "id": i + 1,
            "name": name,
            "role": "annotator",
            "created_at": datetime(2026, 1, 1, tzinfo=UTC),
        }
        for i, name in enumerate(ANNOTATORS)
    ]
    judgments: list[dict] = []
    now = datetime(2026, 1, 2, tzinfo=UTC)
    fully_judged = int(items * 0.75)
    half_judged = int(items * 0.15)
    for index, (item, revision) in enumerate(zip(item_rows, revision_rows, strict=True)):
        judges: tuple[int, ...]
        if index < fully_judged:
            judges = (1, 2, 3)
        elif index < fully_judged + half_judged:
            # In review: one judgment; the bench annotator made half of them.
            judges = (4,) if index % 2 else (1,)
        else:
            judges = ()
        agree = True
        for person_id in judges:
            keep = rng.random() < 0.85
            agree = agree and keep
            judgments.append(
                {
                    "item_id": item["id"],
                    "revision_id": revision["id"],
                    "revision_number": 1,
                    "annotator_id": person_id,
                    "blind_answer": revision["key"],
                    "verdict": Verdict.KEEP.value if keep else Verdict.FLAWED.value,
                    "alternative_orders": [],
                    "corrected_key": None,
                    "duplicate_of": None,
                    "comment": "",
                    "seconds": round(rng.uniform(5, 60), 1),
                    "created_at": now + timedelta(seconds=len(judgments)),
                    "retracted": False,
                    "retracted_at": None,
                }
            )
        if len(judges) >= 3:
            item["status"] = (ItemStatus.AGREED if agree else ItemStatus.CONFLICT).value
        elif judges:
            item["status"] = ItemStatus.IN_REVIEW.value
    with db.transaction() as session:
        session.execute(insert(Person), people)
        session.execute(insert(Item), item_rows)
        session.execute(insert(ItemRevision), revision_rows)
        for start in range(0, len(judgments), 20_000):
            session.execute(insert(Judgment), judgments[start : start + 20_000])
        gather_statistics(session)  # as an import of these items would
    db.dispose()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("path", type=Path)
    parser.add_argument("--items", type=int, default=40_000)
    args = parser.parse_args()
    started = time.perf_counter()
    build_review_database(args.path, args.items)
    print(f"built {args.path} with {args.items:,} items in {time.perf_counter() - started:.1f} s")


if __name__ == "__main__":
    main()

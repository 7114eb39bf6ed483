"""The 40,000-item scale database of issue 7, built through the real import path.

Items: the real CFLUE questions (``../shared/data/cflue/knowledge.json``) multiplied
with variations (options shuffled with the key remapped, amounts and years
changed, a clause added), plus EconLogicQA-style ordering items recombined from
the team's own fixtures.  They are written as CFLUE JSON and EconLogicQA CSV
files and imported with ``db.importer.import_files`` — the code `vetbench import`
runs — so the import figure includes parsing, validation and duplicate detection.

Judgments: 3 annotators on every item (from a pool of 6 with different skill),
bulk-inserted, then statuses refreshed by the same rule the app uses
(agreed when all keep and all blind answers equal the key, else conflict).

    python bench/scale_data.py OUT_DIR [--items 40000]
"""

from __future__ import annotations

import argparse
import ast
import csv
import json
import random
import re
import sys
import time
from datetime import timedelta
from itertools import permutations
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from sqlalchemy import insert, select, update  # noqa: E402

from db.engine import Database, open_database  # noqa: E402
from db.import_report import ImportReport  # noqa: E402
from db.importer import import_files  # noqa: E402
from db.models import Item, ItemRevision, Judgment, Person, utcnow  # noqa: E402
from db.vocabulary import ItemStatus, Verdict  # noqa: E402

CFLUE = ROOT.parent / "shared" / "data" / "cflue" / "knowledge.json"
FIXTURE_ORDERING = ROOT / "fixtures" / "econ_ordering.csv"
ANNOTATORS = ("ana", "ben", "chen", "dara", "emil", "fang")
SKILL = (0.93, 0.9, 0.86, 0.82, 0.9, 0.78)  # chance a blind answer equals the key
ORDERING_SHARE = 0.2
CLAUSES_ZH = (
    "（根据现行规定）",
    "（单位：万元）",
    "（不考虑其他因素）",
    "（2023年修订）",
    "（以下说法）",
)
CLAUSES_EN = (
    " (under current rules)",
    " (ignore taxes)",
    " (in the base year)",
    " (all else equal)",
)


def _vary_text(text: str, rng: random.Random, variant: int) -> str:
    """Change numbers and add a clause so variants are similar but not identical."""
    if variant == 0:
        return text
    text = re.sub(r"\d+", lambda m: str(int(m.group()) + variant), text, count=2)
    clauses = CLAUSES_ZH if re.search(r"[\u4e00-\u9fff]", text) else CLAUSES_EN
    return text + clauses[rng.randrange(len(clauses))]


def cflue_variants(count: int, rng: random.Random) -> list[dict]:
    """``count`` CFLUE records: the originals, then variants with shuffled options."""
    originals = json.loads(CFLUE.read_text(encoding="utf-8"))
    records: list[dict] = []
    variant = 0
    while len(records) < count:
        for original in originals:
            if len(records) == count:
                break
            choices = ast.literal_eval(original["choices"])
            labels = list(choices)
            texts = list(choices.values())
            answer = original["answer"]
            if variant and original["task"] != "判断题":
                order = list(range(len(labels)))
                rng.shuffle(order)
                texts = [texts[i] for i in order]
                new_label = {labels[old]: labels[new] for new, old in enumerate(order)}
                answer = "".join(sorted(new_label[letter] for letter in answer))
            records.append(
                {
                    **original,
                    "question": _vary_text(original["question"], rng, variant),
                    "choices": repr(dict(zip(labels, texts, strict=True))),
                    "answer": answer,
                }
            )
        variant += 1
    return records


def ordering_rows(count: int, rng: random.Random) -> list[dict]:
    """Ordering items recombined from the fixtures: a scenario with its events, varied."""
    with FIXTURE_ORDERING.open(encoding="utf-8", newline="") as handle:
        bases = list(csv.DictReader(handle))
    rows = []
    for index in range(count):
        base = bases[index % len(bases)]
        variant = index // len(bases)
        events = {label: base[label] for label in "ABCD"}
        key = [letter.strip() for letter in base["Answer"].split(",")]
        # Relabel the events: the same logical order under a new permutation of letters.
        shuffled = list(permutations("ABCD"))[rng.randrange(24)]
        relabel = dict(zip("ABCD", shuffled, strict=True))
        new_events = {relabel[old]: text for old, text in events.items()}
        rows.append(
            {
                "Question": _vary_text(base["Question"], rng, variant) + f" (case {index})",
                **{label: new_events[label] for label in "ABCD"},
                "Answer": ", ".join(relabel[letter] for letter in key),
                "Explanation": base.get("Explanation", ""),
            }
        )
    return rows


def write_inputs(out_dir: Path, items: int, seed: int = 7) -> list[Path]:
    rng = random.Random(seed)
    out_dir.mkdir(parents=True, exist_ok=True)
    ordering_count = int(items * ORDERING_SHARE)
    mcq_path = out_dir / "cflue_scale.json"
    mcq_path.write_text(
        json.dumps(cflue_variants(items - ordering_count, rng), ensure_ascii=False),
        encoding="utf-8",
    )
    csv_path = out_dir / "econ_scale.csv"
    rows = ordering_rows(ordering_count, rng)
    with csv_path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    return [mcq_path, csv_path]


def import_inputs(db: Database, paths: list[Path]) -> tuple[ImportReport, float]:
    started = time.perf_counter()
    report = import_files(db, paths)
    return report, time.perf_counter() - started


def _blind_answer(rng: random.Random, kind: str, key: str, labels: str, skill: float) -> str:
    if rng.random() < skill:
        return key
    if kind == "ordering":
        order = list(key)
        i = rng.randrange(len(order) - 1)
        order[i], order[i + 1] = order[i + 1], order[i]
        return "".join(order)
    if kind == "multi":
        flipped = set(key) ^ {rng.choice(labels)}
        return "".join(sorted(flipped)) or key
    return rng.choice([label for label in labels if label != key] or [key])


def add_judgments(db: Database, seed: int = 11, per_item: int = 3) -> int:
    """3 annotators' judgments on every item, bulk-inserted; statuses follow the app's rule."""
    rng = random.Random(seed)
    with db.transaction() as session:
        people = {}
        for name in ANNOTATORS:
            person = Person(name=name)
            session.add(person)
            session.flush()
            people[name] = person.id
        rows = session.execute(
            select(
                Item.id,
                Item.kind,
                ItemRevision.id,
                ItemRevision.number,
                ItemRevision.key,
                ItemRevision.choices,
            ).join(
                ItemRevision,
                (ItemRevision.item_id == Item.id) & (ItemRevision.number == Item.current_revision),
            )
        ).all()
        judgments, agreed, conflict = [], [], []
        start = utcnow()
        for n, (item_id, kind, revision_id, number, key, choices) in enumerate(rows):
            labels = "".join(choices)
            unanimous = True
            for name in rng.sample(ANNOTATORS, per_item):
                answer = _blind_answer(rng, kind, key, labels, SKILL[ANNOTATORS.index(name)])
                verdict = (
                    Verdict.KEEP
                    if answer == key or rng.random() < 0.3
                    else (Verdict.AMBIGUOUS if kind == "ordering" else Verdict.WRONG_KEY)
                )
                unanimous &= verdict == Verdict.KEEP and answer == key
                judgments.append(
                    {
                        "item_id": item_id,
                        "revision_id": revision_id,
                        "revision_number": number,
                        "annotator_id": people[name],
                        "blind_answer": answer,
                        "verdict": verdict,
                        "alternative_orders": [answer] if verdict == Verdict.AMBIGUOUS else [],
                        "corrected_key": answer if verdict == Verdict.WRONG_KEY else None,
                        "comment": "",
                        "seconds": round(rng.uniform(8, 90), 1),
                        "created_at": start + timedelta(milliseconds=n),
                        "retracted": False,
                    }
                )
            (agreed if unanimous else conflict).append(item_id)
        session.execute(insert(Judgment), judgments)
        for status, ids in ((ItemStatus.AGREED, agreed), (ItemStatus.CONFLICT, conflict)):
            for chunk in range(0, len(ids), 5000):
                session.execute(
                    update(Item).where(Item.id.in_(ids[chunk : chunk + 5000])).values(status=status)
                )
    return len(judgments)


def build_scale_database(out_dir: Path, items: int = 40_000) -> tuple[Path, dict[str, float]]:
    """Write the inputs, import them into a new SQLite file, add judgments; return timings."""
    db_path = out_dir / "scale.db"
    for suffix in ("", "-wal", "-shm"):
        Path(f"{db_path}{suffix}").unlink(missing_ok=True)
    paths = write_inputs(out_dir, items)
    db = open_database(db_path)
    report, import_seconds = import_inputs(db, paths)
    if not report.ok:
        raise SystemExit("\n".join(line for f in report.files for line in f.problem_lines()))
    started = time.perf_counter()
    judgments = add_judgments(db)
    figures = {
        "items": float(report.tally.added),
        "import_seconds": import_seconds,
        "suspected_duplicates": float(report.tally.duplicates),
        "judgments": float(judgments),
        "judgments_seconds": time.perf_counter() - started,
    }
    db.dispose()
    return db_path, figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out_dir", type=Path)
    parser.add_argument("--items", type=int, default=40_000)
    args = parser.parse_args()
    if not CFLUE.exists():
        raise SystemExit(f"needs the real CFLUE questions at {CFLUE}")
    db_path, figures = build_scale_database(args.out_dir, args.items)
    print(f"built {db_path}")
    for name, value in figures.items():
        print(f"  {name:22} {value:,.2f}")


if __name__ == "__main__":
    main()

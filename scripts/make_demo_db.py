"""Build the demo database from ``fixtures/`` (kept as it is when it already exists).

What it holds, so every screen has something to show:

- the fixture items (36 + 3 ordering items, 38 multiple-choice items), imported with
  the real importer (the two near-duplicates are flagged);
- a lead, ``lena``, and two SIMULATED annotators, ``demo-ann`` and ``demo-bo``, who
  have judged about two thirds of the items through the real review code path.  They
  catch the deliberately flawed items listed in ``fixtures/README.md`` (those become
  conflicts for the lead), and ``demo-bo`` slips on a few sound items;
- the agreed items approved by ``lena``, so there is an approved set to evaluate;
- the review guidelines (``fixtures/guidelines.md``), set by ``lena`` before any
  judgment, so every judgment records version 1 and ``g`` in the app shows them.

The rest stays pending for you to review.

    python scripts/make_demo_db.py demo.db
"""

from __future__ import annotations

import argparse
import random
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"
FIXTURE_FILES = ("econ_ordering.csv", "econ_ordering_5events.csv", "cflue_mcq.json")
GUIDELINES = FIXTURES / "guidelines.md"
LEAD, ANNOTATORS = "lena", ("demo-ann", "demo-bo")
SHARE_JUDGED = 0.65

# What a careful annotator says about each deliberately flawed fixture item.
FLAW_VERDICTS: dict[str, dict[str, object]] = {
    "econ_ordering:7": {"verdict": "ambiguous", "alternative_orders": ["DACB"]},
    "econ_ordering:19": {"verdict": "ambiguous", "alternative_orders": ["BCAD"]},
    "econ_ordering:12": {"verdict": "wrong-key", "corrected_key": "DACB"},
    "econ_ordering:27": {"verdict": "wrong-key", "corrected_key": "CDAB"},
    "econ_ordering:23": {"verdict": "no-order"},
    "econ_ordering:34": {"verdict": "duplicate", "duplicate_of": "econ_ordering:1"},
    "cflue_mcq:13": {"verdict": "wrong-key", "corrected_key": "B"},
    "cflue_mcq:19": {"verdict": "wrong-key", "corrected_key": "B"},
    "cflue_mcq:22": {"verdict": "wrong-key", "corrected_key": "AC"},
    "cflue_mcq:26": {"verdict": "flawed", "comment": "B (再贷款) is also correct"},
    "cflue_mcq:37": {"verdict": "duplicate", "duplicate_of": "cflue_mcq:2"},
}


def build_demo_database(path: Path) -> str:
    from db.engine import open_database
    from db.guidelines import set_guidelines
    from db.importer import import_files
    from db.items import iter_items
    from db.people import ensure_person
    from db.vocabulary import Role
    from reviewer.adjudication import approve_agreed
    from reviewer.judging import submit_judgment

    db = open_database(path)
    report = import_files(db, [FIXTURES / name for name in FIXTURE_FILES])
    if not report.ok:
        raise SystemExit("the fixtures did not import cleanly:\n" + str(report))
    with db.transaction() as session:
        ensure_person(session, LEAD, Role.LEAD)
        set_guidelines(
            session, GUIDELINES.read_text(encoding="utf-8"), lead=LEAD, file_name=GUIDELINES.name
        )
    rng = random.Random(2026)
    with db.session() as session:
        items = list(iter_items(session))
    for item in items:
        flawed = item.id in FLAW_VERDICTS
        if not flawed and rng.random() > SHARE_JUDGED:
            continue
        for annotator in ANNOTATORS:
            fields: dict[str, object] = {"verdict": "keep"}
            answer = item.key
            if flawed and annotator == ANNOTATORS[0]:
                fields = dict(FLAW_VERDICTS[item.id])
                answer = str(fields.get("corrected_key") or item.key)
            elif annotator == ANNOTATORS[1] and rng.random() < 0.1 and len(item.key) > 1:
                answer = item.key[1] + item.key[0] + item.key[2:]  # a slip on a sound item
            submit_judgment(
                db,
                annotator,
                item.id,
                revision_number=item.revision,
                blind_answer=answer,
                seconds=round(rng.uniform(12, 75), 1),
                **fields,  # type: ignore[arg-type]
            )
    approved = approve_agreed(db, LEAD)
    db.dispose()
    return (
        # two lines: one ran past 80 columns and the terminal cut "approved" in two
        f"demo database {path}: {len(items)} items, judged by {', '.join(ANNOTATORS)} "
        f"(simulated),\n{approved} approved by {LEAD}, guidelines from {GUIDELINES.name}"
    )


def main() -> None:
    # argparse: `--help` is a question, not the name of a database to build.
    parser = argparse.ArgumentParser(
        prog="python scripts/make_demo_db.py",
        description="Build the demo database from fixtures/ (kept when it already exists).",
    )
    parser.add_argument("db_path", metavar="DB_PATH", type=Path, help="the SQLite file to build")
    path: Path = parser.parse_args().db_path
    if path.exists():
        print(f"using the existing demo database {path} (delete it to start over)")
        return
    sys.path.insert(0, str(ROOT))
    print(build_demo_database(path))


if __name__ == "__main__":
    main()

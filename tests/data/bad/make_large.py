"""Make the bad-input files with a field of several megabytes, which are too big to commit.

``tests/test_bad_inputs.py`` calls :func:`make_large` for every entry of ``expected.json``
marked ``"generated": true``; run this file directly to write them into a folder by hand:
``python tests/data/bad/make_large.py /tmp/out``.
"""

from __future__ import annotations

import csv
import json
import sys
from pathlib import Path

FIELD_CHARS = 5 * 1024 * 1024  # several megabytes: far past any sane question
FILLER = "Demand rises and prices follow. "


def _huge_text() -> str:
    repeats = FIELD_CHARS // len(FILLER) + 1
    return (FILLER * repeats)[:FIELD_CHARS]


def _large_csv(path: Path) -> None:
    """Line 2 is a good row; line 3 carries a 5 MB Question."""
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle, lineterminator="\n")
        writer.writerow(["Question", "A", "B", "C", "D", "Answer", "Explanation"])
        events = ["Prices rise.", "Demand rises.", "Supply expands.", "Prices settle."]
        writer.writerow(
            ["A market heats up. Order the events.", *events, "B, A, C, D", "Cause first."]
        )
        writer.writerow([_huge_text(), *events, "B, A, C, D", "Cause first."])


def _large_json(path: Path) -> None:
    """Record 1 is good; record 2's question is 5 MB."""
    good = {
        "名称": "银行从业资格",
        "task": "判断题",
        "question": "通货膨胀会降低货币的购买力。",
        "choices": repr({"A": "对", "B": "错"}),
        "answer": "A",
        "analysis": None,
    }
    huge = {**good, "question": _huge_text()}
    path.write_text(json.dumps([good, huge], ensure_ascii=False, indent=2) + "\n", encoding="utf-8")


MAKERS = {"large_field.csv": _large_csv, "large_field.json": _large_json}


def make_large(name: str, directory: Path) -> Path:
    """Write the generated file ``name`` (a key of ``expected.json``) into ``directory``."""
    path = directory / name
    MAKERS[name](path)
    return path


if __name__ == "__main__":
    target = Path(sys.argv[1]) if len(sys.argv) > 1 else Path.cwd()
    target.mkdir(parents=True, exist_ok=True)
    for file_name in MAKERS:
        print(make_large(file_name, target))

"""`runs table` on an 80-column terminal: its text tables ran to 576 columns, and the
terminal folded every row over eight lines.  Now each table's columns come in blocks that
fit, each repeating the model column; piped, and in the other formats, nothing changed."""

from __future__ import annotations

import json
import re
import sys
from collections import Counter
from pathlib import Path

import pytest
from helpers import FIXTURES, built_demo_database, run_at_80_columns, run_cli

from db.visible_text import east_asian_cell_len

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="pseudo-terminals are POSIX")

SHOT_FILES = [
    argument
    for kind in ("ordering", "single", "multi", "truefalse")
    for argument in ("--shot-file", str(FIXTURES / f"shots_{kind}.jsonl"))
]
FIGURE = re.compile(r"\d+\.\d\d(?:±\d+\.\d\d)?|—")


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("table")
    path = built_demo_database(folder / "demo.db")
    items = json.loads(run_cli(path, "items", "--json").stdout)
    guesses = folder / "guesses.json"
    guesses.write_text(json.dumps({item["id"]: "A" for item in items}), encoding="utf-8")
    for arguments in (
        ("--model", "scripted:oracle", *SHOT_FILES, "--repeats", "2", "--permute-options"),
        ("--model", f"scripted:{guesses}", *SHOT_FILES),
        ("--model", "scripted:oracle", "--protocol", "econlogicqa", *SHOT_FILES[:2]),
        ("--model", "scripted:oracle", "--protocol", "cflue", "--permute-options"),
        ("--model", f"scripted:{guesses}", "--protocol", "cflue"),
    ):
        evaluated = run_cli(path, "eval", *arguments)
        assert evaluated.exit_code == 0, evaluated.output
    return path


def _at_80_columns(db: Path, *args: str) -> str:
    ended, shown = run_at_80_columns(db, *args)
    assert ended == 0, shown
    return shown


def test_a_wide_table_comes_in_blocks_that_fit_80_columns(demo: Path) -> None:
    piped = run_cli(demo, "runs", "table").output
    shown = _at_80_columns(demo, "runs", "table")
    widest = max(shown.splitlines(), key=east_asian_cell_len)
    assert east_asian_cell_len(widest) <= 80, widest
    # Every figure of every table, as often as piped: none lost where the columns split.
    assert Counter(FIGURE.findall(shown)) == Counter(FIGURE.findall(piped))
    # Each block repeats the model column: its title, and every row's label.
    blocks = shown.count("(continued: column")
    assert blocks >= 3, shown
    header_lines = [line for line in shown.splitlines() if line.startswith("model ")]
    assert len(header_lines) == 2 + blocks  # two tables, and a block each continues
    for label in ("oracle", "random choice", "random (1,000 simulated guessers)"):
        assert sum(line.startswith(label) for line in shown.splitlines()) >= len(header_lines)
    # The titles and notes break at blanks under 80 columns, whole words kept.
    assert "Accuracy by item kind and shots (EconLogicQA-style table: the paper's" in shown


def test_piped_and_other_formats_keep_one_line_a_row(demo: Path) -> None:
    """Scripts and papers read these: one line a row, as before, whatever the terminal."""
    piped = run_cli(demo, "runs", "table").output.splitlines()
    assert piped[1].startswith("model   ")
    assert "ordering 5-shot    ordering 5-shot (permuted options)    ordering 1-shot" in piped[1]
    assert len(piped[1]) > 300 and "continued" not in "\n".join(piped)
    for table_format in ("md", "latex"):
        on_terminal = _at_80_columns(demo, "runs", "table", "--format", table_format)
        assert on_terminal == run_cli(demo, "runs", "table", "--format", table_format).output


def test_a_table_on_no_release_says_its_items_were_chosen_without_one(demo: Path) -> None:
    titles = [
        table["title"] for table in json.loads(run_cli(demo, "runs", "table", "--json").stdout)
    ]
    assert titles and all(title.endswith(", on items chosen without a release") for title in titles)

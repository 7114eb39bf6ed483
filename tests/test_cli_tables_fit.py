"""The CLI's tables on an 80-column terminal: every line fits (Chinese counted two cells
wide), nothing is lost, and piped output keeps one row a line as scripts read it."""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

import pytest
from helpers import built_demo_database, run_cli, run_in_terminal

from db.visible_text import east_asian_cell_len
from reviewer.cli.tables import table_lines

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="pseudo-terminals are POSIX")

TABLES = (
    ("items",),
    ("items", "--source", "cflue_mcq"),
    ("config", "list"),
    ("agreement", "--as", "lena"),
    ("consensus", "--as", "lena"),
    ("audit", "--as", "lena", "--limit", "60"),
)


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return built_demo_database(tmp_path_factory.mktemp("demo") / "demo.db")


def _characters(text: str) -> Counter[str]:
    """What a reader sees, wherever the lines break: every character but blanks."""
    return Counter(character for character in text if not character.isspace())


@pytest.mark.parametrize("arguments", TABLES, ids=" ".join)
def test_a_table_fits_an_80_column_terminal_and_keeps_every_character(
    demo: Path, arguments: tuple[str, ...], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "80")
    status, shown = run_in_terminal(demo, *arguments)
    assert status == 0, shown
    widest = max(shown.splitlines(), key=east_asian_cell_len)
    assert east_asian_cell_len(widest) <= 80, widest
    piped = run_cli(demo, *arguments)
    assert piped.exit_code == 0, piped.output
    assert _characters(shown) == _characters(piped.stdout)


def test_piped_tables_keep_one_row_a_line(demo: Path) -> None:
    """Scripts read these: one item a line, one setting a line, as before."""
    items = run_cli(demo, "items").stdout.splitlines()
    assert len(items) == 77 and all(":" in line.split()[0] for line in items)
    assert items[0].startswith("econ_ordering:1          ordering   approved   A coffee chain")
    settings = run_cli(demo, "config", "list").stdout.splitlines()
    assert settings[0] == "overlap = 2 (default)    # independent judgments each item needs (k)"
    assert max(map(len, settings)) > 80  # not fitted to any width


def test_a_chinese_cell_wraps_in_cells_and_no_line_starts_with_its_punctuation() -> None:
    rows = [("cflue:1", "single", "中国人民银行下调法定存款准备金率，通常会导致（ ）。")]
    lines = table_lines(rows, ("id", "kind", "text"), width=40)
    assert [east_asian_cell_len(line) <= 40 for line in lines] == [True] * len(lines)
    assert len(lines) > 2 and not any(line.strip()[0] in "，。）" for line in lines[1:])
    assert lines[0] == "id       kind    text"
    assert "".join(line[17:] for line in lines[1:]) == rows[0][2]


def test_columns_give_up_width_to_their_longest_word_before_words_break() -> None:
    rows = [("Krippendorff's alpha, keep/drop", "0.776", "share of agreeing pairs")]
    lines = table_lines(rows, ("statistic", "value", "note"), width=50)
    assert lines == [
        "statistic             value  note",
        "Krippendorff's        0.776  share of agreeing",
        "alpha, keep/drop             pairs",
    ]

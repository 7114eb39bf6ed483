"""The CLI's tables and sentences on an 80-column terminal: every line fits (Chinese
counted two cells wide), nothing is lost, and piped output keeps one row a line as scripts
read it.  Notes, lists and item texts wrap at words under their indent instead of running
past the edge, where the terminal cut them mid-word ("login o" / "n PostgreSQL")."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from helpers import (
    FIXTURES,
    built_demo_database,
    fits_80_columns_as_piped,
    run_cli,
    run_in_terminal,
)

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
MESSAGES = (
    ("stats",),  # by flag: eight names and counts on one line
    ("consensus",),  # a non-lead's note on what the consensus shows
    ("conflicts",),  # a non-lead's count
    ("conflicts", "--as", "lena"),  # each item's scenario, explanation and judgments
    ("triage", "--limit", "5"),  # an order's key in the header; the notes after the list
    ("triage", "--limit", "5", "--as", "lena"),
    ("release", "show", "v1"),  # the kappa paradox note
    ("release", "verify", "v1"),  # the release's hash after its name and count
    ("runs",),  # the model label "oracle (econlogicqa)" in its column
    ("runs", "show", "1"),  # the run's header: how it ran, its state
    ("runs", "compare", "1", "2"),  # why their prompts differ (other shots)
    ("runs", "show", "1", "--item", "econ_ordering:1"),  # its scores, each extractor's answer
)
# Refusals longer than 80 columns: a VetbenchError the group says (db.people), a
# command's own (common.fail, here with Chinese, two cells a character), and click's usage
# error (every status named).
ERRORS = (
    ("users", "add", "newbie", "--role", "lead", "--as", "demo-ann"),
    ("items", "--source", "一个拼错了的来源名称，长得足以超过八十列的宽度"),
    ("items", "--status", "bogus"),
)
ECONLOGICQA_EVAL = (
    "eval",
    "--model",
    "scripted:oracle",
    "--protocol",
    "econlogicqa",
    "--shot-file",
    str(FIXTURES / "shots_ordering.jsonl"),
    "--status",
    "all",
)


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = built_demo_database(tmp_path_factory.mktemp("demo") / "demo.db")
    made = run_cli(path, "release", "create", "v1", "--as", "lena")
    assert made.exit_code == 0, made.output
    evaluated = run_cli(path, *ECONLOGICQA_EVAL)
    assert evaluated.exit_code == 0, evaluated.output
    return path


@pytest.mark.parametrize("arguments", TABLES + MESSAGES, ids=" ".join)
def test_a_table_fits_an_80_column_terminal_and_keeps_every_character(
    demo: Path, arguments: tuple[str, ...]
) -> None:
    fits_80_columns_as_piped(demo, *arguments)


@pytest.mark.parametrize("arguments", ERRORS, ids=("refusal", "chinese", "usage"))
def test_an_error_fits_an_80_column_terminal_at_words_and_stays_one_line_piped(
    demo: Path, arguments: tuple[str, ...]
) -> None:
    """An error ran on as one line past the terminal's edge, which cut it mid-word; now it
    breaks at blanks, the lines after the first under the message, and piped it is the one
    line scripts and tests read."""
    status = 2 if "--status" in arguments else 1  # click's usage errors end with 2
    shown = fits_80_columns_as_piped(demo, *arguments, status=status)
    said = shown[shown.index("rror: ") - 1 :].splitlines()
    assert len(said) > 1 and all(line.startswith(" " * 7) for line in said[1:]), shown
    piped = run_cli(demo, *arguments).stderr
    assert piped.splitlines()[-1] == " ".join(line.strip() for line in said)


def test_piped_tables_keep_one_row_a_line(demo: Path) -> None:
    """Scripts read these: one item a line, one setting a line, as before."""
    items = run_cli(demo, "items").stdout.splitlines()
    assert len(items) == 77 and all(":" in line.split()[0] for line in items)
    assert items[0].startswith("econ_ordering:1          ordering   approved   A coffee chain")
    settings = run_cli(demo, "config", "list").stdout.splitlines()
    assert settings[0] == "overlap = 2 (default)    # independent judgments each item needs (k)"
    assert max(map(len, settings)) > 80  # not fitted to any width


def test_an_orders_key_stays_on_one_line_and_piped_lines_stay_whole(demo: Path) -> None:
    shown = fits_80_columns_as_piped(demo, "triage", "--limit", "5")
    assert "[ordering, conflict, revision 1,\n       key B, A, D, C]" in shown
    assert "\u00a0" not in shown
    piped = run_cli(demo, "triage", "--limit", "5").stdout
    assert (
        "  2. econ_ordering:34  score 2.50  [ordering, conflict, revision 1, key B, A, D, C]\n"
        in piped
    )
    stats = run_cli(demo, "stats").stdout.splitlines()
    assert stats[-1].startswith("by flag: duplicate 2, needs-media 0, html 0,")
    assert stats[-1].endswith("second-opinion 0")


def test_a_new_releases_hash_wraps_whole_on_a_terminal(
    demo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "80")
    status, shown = run_in_terminal(demo, "release", "create", "v2", "--as", "lena")
    assert status == 0, shown
    made, hashed = shown.splitlines()
    assert made == "release v2: 37 items, hash" and len(hashed.strip()) == 64


def test_evals_notes_wrap_on_a_terminal_and_stay_whole_in_a_pipe(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The notes go to standard error: wrapped when it is a terminal (the evaluation path
    has no ICU: at blanks), one line each when it is not."""
    demo = built_demo_database(tmp_path / "demo.db")
    monkeypatch.setenv("COLUMNS", "80")
    status, shown = run_in_terminal(demo, *ECONLOGICQA_EVAL)
    assert status == 0, shown
    note = "note: 20 single items left out: the econlogicqa protocol reads ordering items"
    assert f"{note}\n  only\n" in shown
    piped = run_cli(demo, *ECONLOGICQA_EVAL)
    assert f"{note} only\n" in piped.stderr


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


def test_an_exports_verdict_fits_an_80_column_terminal(demo: Path, tmp_path: Path) -> None:
    """`release verify --export` ran its verdict (the path, the part, a 64-digit hash) past
    the terminal's edge, cut mid-word; it now wraps as `release verify NAME` does."""
    out = tmp_path / "v1.csv"
    exported = run_cli(demo, "export", "--release", "v1", "--format", "econlogicqa",
                       "--kind", "ordering", str(out))  # fmt: skip
    assert exported.exit_code == 0, exported.output
    shown = fits_80_columns_as_piped(demo, "release", "verify", "v1", "--export", str(out))
    assert "matches the ordering items of release v1" in " ".join(shown.split())


def test_ctrl_c_says_how_to_resume_within_80_columns(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The interrupt's line ran past the edge, so the terminal cut the command to copy
    ("--resum" / "e 1"); it now breaks at blanks under its first word, the command whole."""
    demo = built_demo_database(tmp_path / "demo.db")
    slow = tmp_path / "slow.jsonl"  # every order takes an hour: Ctrl-C comes first
    ids = [f"econ_ordering:{n}" for n in range(1, 40)]
    slow.write_text(
        "".join(json.dumps({"item_id": i, "output": "A, B, C, D", "seconds": 3600}) + "\n"
                for i in ids),
        encoding="utf-8",
    )  # fmt: skip
    monkeypatch.setenv("COLUMNS", "80")
    code, shown = run_in_terminal(
        demo, "eval", "--model", f"scripted:{slow}", "--kind", "ordering", "--shots", "0",
        ctrl_c_at=b"evaluating for",
    )  # fmt: skip
    assert code == 130, shown
    said = shown[shown.index("interrupted: ") :].splitlines()
    assert max(map(east_asian_cell_len, said)) <= 80, said
    assert len(said) > 1 and all(line.startswith("  ") for line in said[1:]), said
    assert any("--resume 1`" in line for line in said), said

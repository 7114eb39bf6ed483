"""`vetbench eval` says what it is doing while it is slow, in a process of its own: in a
terminal, the phase and the elapsed time redrawn every second even before the first item
finishes; without one (a script, a log), plain lines now and then and never a carriage
return.  A scripted model whose answers take their time stands in for a slow model (the
model is not what these tests are about).

The display does not depend on the database, so these run on a SQLite file only."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from eval_helpers import MIXED_SET_ANSWERS, mixed_set_url
from helpers import FIXTURES, run_in_terminal

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="pseudo-terminals are POSIX")

CONTROL = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def slow_script(tmp_path: Path, seconds: dict[str, float]) -> str:
    """``scripted:FILE`` answering the mixed set's items right, ``seconds[item]`` each."""
    path = tmp_path / "slow.jsonl"
    lines = [
        json.dumps({"item_id": item, "output": output, "seconds": seconds.get(item, 0)})
        for item, output in MIXED_SET_ANSWERS.items()
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return f"scripted:{path}"


def test_a_terminal_sees_the_phase_and_the_time_before_the_first_item(tmp_path: Path) -> None:
    """The first item takes 2.5 s: the line counts the seconds meanwhile, at 0 of 2."""
    url = mixed_set_url(tmp_path / "t.db")
    model = slow_script(tmp_path, {"econ:1": 2.5})
    code, shown = run_in_terminal(
        url, "eval", "--model", model, "--shots", "0", "--kind", "ordering"
    )
    assert code == 0, shown
    drawn = [CONTROL.sub("", line).strip() for line in re.split(r"[\r\n]", shown)]
    assert any(line.startswith("loading the model scripted:") for line in drawn), shown
    waiting = {
        match.group(1)
        for line in drawn
        if (match := re.search(r" 0/2  evaluating for (\d) s$", line))
    }
    assert {"1", "2"} <= waiting, shown  # redrawn while nothing finished
    assert any(re.search(r" 2/2  evaluating for \d s  acc 100\.0%", line) for line in drawn)


def test_a_terminal_sees_the_time_left_in_words_not_a_bare_clock(tmp_path: Path) -> None:
    """Once an item has finished the line says ``about N s left`` beside the time taken,
    as `runs show` words it; click's unlabelled ``00:00:01`` is not drawn."""
    url = mixed_set_url(tmp_path / "t.db")
    model = slow_script(tmp_path, {"econ:1": 1.5, "econ:2": 1.5})
    code, shown = run_in_terminal(
        url, "eval", "--model", model, "--shots", "0", "--kind", "ordering"
    )
    assert code == 0, shown
    drawn = [CONTROL.sub("", line).strip() for line in re.split(r"[\r\n]", shown)]
    assert any(
        re.search(r" 1/2  evaluating for \d s, about \d s left  acc", line) for line in drawn
    )
    assert not any(re.search(r"\d\d:\d\d:\d\d", line) for line in drawn), shown


def quicker(gap_s: float) -> str:
    """The same command with the plain lines' clock shortened, so the test is short."""
    return (
        "import sys, reviewer.cli.live_progress as live; "
        f"live.QUIET_FOR_S = 0.5; live.PLAIN_EVERY_S = 1.0; live.PLAIN_GAP_S = {gap_s}; "
        "from reviewer.cli import main; sys.argv[0] = 'vetbench'; main()"
    )


def run_piped(url: str, *args: str, code: str | None = None) -> subprocess.CompletedProcess[str]:
    """``vetbench --db URL ARGS`` with its output and errors into pipes (no terminal)."""
    command = ["-c", code] if code else ["-m", "reviewer.cli"]
    return subprocess.run(
        [sys.executable, *command, "--db", url, *args],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(FIXTURES.parent)},
        stdin=subprocess.DEVNULL,
        timeout=120,
        check=False,
    )


def plain_counts(tmp_path: Path, gap_s: float) -> list[int]:
    """The items done that each plain line of a run of the 8 items says, the first item
    taking 2.5 s and the others none; checks that the lines are plain."""
    url = mixed_set_url(tmp_path / "t.db")
    model = slow_script(tmp_path, {"econ:1": 2.5})
    result = run_piped(url, "eval", "--model", model, "--shots", "0", code=quicker(gap_s))
    assert result.returncode == 0, result.stderr
    assert "\r" not in result.stderr and "\x1b" not in result.stderr
    lines = result.stderr.splitlines()
    assert lines[0] == "run 1: 8 items", lines
    counts = [
        re.fullmatch(r"run 1: (\d)/8 items, (\d) s(, about \d+ s left)?(  .*)?", line)
        for line in lines[1:]
    ]
    assert all(counts), lines
    done = [int(match.group(1)) for match in counts if match]
    assert done[0] == 0  # said while the first item was still being answered
    assert done[-1] == 8 and done == sorted(done)
    return done


def test_without_a_terminal_a_slow_run_prints_plain_lines(tmp_path: Path) -> None:
    """Every PLAIN_EVERY_S while the first item takes its time, and every tenth of the
    items (here each of 8) once the run has taken QUIET_FOR_S; never a carriage return."""
    done = plain_counts(tmp_path, gap_s=0.0)
    assert done[:2] == [0, 0]
    assert set(range(1, 9)) <= set(done)


def test_without_a_terminal_a_batch_gives_one_line_not_one_a_tenth(tmp_path: Path) -> None:
    """Seven items finished in a burst cross seven tenths: within PLAIN_GAP_S of the
    latest line they give none but the last (a clock line may fall among them)."""
    done = plain_counts(tmp_path, gap_s=2.0)
    assert len([count for count in done if 0 < count < 8]) <= 1, done


def test_without_a_terminal_a_quick_run_prints_no_progress_lines(tmp_path: Path) -> None:
    """A run done before QUIET_FOR_S says only how many items it has: scripts stay quiet."""
    url = mixed_set_url(tmp_path / "t.db")
    result = run_piped(url, "eval", "--model", slow_script(tmp_path, {}), "--shots", "0")
    assert result.returncode == 0, result.stderr
    assert result.stderr.splitlines() == ["run 1: 8 items"]

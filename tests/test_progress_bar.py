"""The CLI's progress line, drawn on a real terminal (a pseudo-terminal) 80 columns wide:
it is redrawn in place, so it must never be wider than the terminal."""

from __future__ import annotations

import os
import pty
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
# What `vetbench eval` shows after the bar, as long as it gets.
CHILD = """
from reviewer.cli.output import TerminalProgressBar

bar = TerminalProgressBar(
    37,
    "run 1",
    describe=lambda done: f"acc 0.07 [0.021, 0.234]  unparsed {done}  0.22 it/s",
)
for done in range(1, 38):
    bar.advance(done)
bar.close()
"""
# What `vetbench eval` shows now: the phase and elapsed time before the same text.
LIVE_CHILD = """
from reviewer.cli.live_progress import LiveProgress

bar = LiveProgress(
    "run 1",
    phase="evaluating",
    total=37,
    describe=lambda done: f"acc 0.07 [0.021, 0.234]  unparsed {done}  0.22 it/s",
)
for done in range(1, 38):
    bar.advance(done)
bar.close()
"""
CONTROL = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def drawn_lines(child_code: str, columns: int) -> list[str]:
    """The lines ``child_code`` draws on a pseudo-terminal ``columns`` wide."""
    controller, terminal = pty.openpty()
    environment = {**os.environ, "COLUMNS": str(columns), "PYTHONPATH": str(ROOT)}
    child = subprocess.Popen(
        [sys.executable, "-c", child_code], stderr=terminal, env=environment, cwd=ROOT
    )
    os.close(terminal)
    output = b""
    while True:
        try:
            chunk = os.read(controller, 4096)
        except OSError:  # the child closed its end
            break
        if not chunk:
            break
        output += chunk
    os.close(controller)
    assert child.wait(timeout=60) == 0
    lines = [CONTROL.sub("", line) for line in re.split(r"[\r\n]", output.decode())]
    return [line for line in lines if line.strip()]


@pytest.mark.skipif(sys.platform == "win32", reason="pseudo-terminals are POSIX")
@pytest.mark.parametrize("columns", [80, 120])
def test_the_progress_line_fits_the_terminal(columns: int) -> None:
    drawn = drawn_lines(CHILD, columns)
    assert any("37/37" in line and "unparsed 37  0.22 it/s" in line for line in drawn)
    assert max(len(line.rstrip()) for line in drawn) <= columns


@pytest.mark.skipif(sys.platform == "win32", reason="pseudo-terminals are POSIX")
@pytest.mark.parametrize("columns", [80, 120])
def test_the_line_with_its_phase_and_time_fits_the_terminal(columns: int) -> None:
    """Too long for 80 columns, the text is cut at its end (``…``), the bar kept."""
    drawn = drawn_lines(LIVE_CHILD, columns)
    finished = [line for line in drawn if "37/37" in line]
    assert finished and all(re.search(r"evaluating for \d s  acc 0.07", line) for line in finished)
    assert all(re.search(r"\[#{5,}\]", line) for line in finished)
    if columns == 120:
        assert any(line.rstrip().endswith("unparsed 37  0.22 it/s") for line in finished)
    else:
        assert all(line.rstrip().endswith("…") for line in finished)
    assert max(len(line.rstrip()) for line in drawn) <= columns


# The ticker thread's start, marked on the terminal, then a progress line.
TICKER_CHILD = """
import sys
import threading

from reviewer.cli.live_progress import LiveProgress

start = threading.Thread.start


def marked_start(thread):
    sys.stderr.write("ticker starts\\n")
    sys.stderr.flush()
    start(thread)


threading.Thread.start = marked_start
LiveProgress("run 1", phase="evaluating", total=3).close()
"""


@pytest.mark.skipif(sys.platform == "win32", reason="pseudo-terminals are POSIX")
def test_the_ticker_runs_before_the_line_shows() -> None:
    """Ctrl-C as soon as `eval`'s line showed could land inside Thread.start, which it left
    with its lock broken: a traceback (RuntimeError) in place of the resume line.  The
    ticker now starts before anything is drawn."""
    drawn = drawn_lines(TICKER_CHILD, 80)
    assert drawn[0] == "ticker starts"
    assert any("run 1" in line for line in drawn[1:])

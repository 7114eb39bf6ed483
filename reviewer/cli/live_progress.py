"""What a slow CLI step shows while it runs, so that it never looks stuck.

In a terminal, :class:`LiveProgress` redraws one line on stderr every second, even when
no item has finished: the step's phase (``loading the model demo``, ``evaluating``), how
long it has taken and, once items finish, about how long is left (``evaluating for 9 s,
about 32 s left``), after the progress bar once the step counts items.  When stderr
is not a terminal (a script, a log file) it never draws: once the step has taken
``QUIET_FOR_S`` it prints a plain line every tenth of its items or every
``PLAIN_EVERY_S``, whichever comes first (``run 1: 12/37 items, 1 min 40 s, about 3 min
10 s left``), so a fast step prints nothing and a slow one says how far it is.  A batch
that finishes several tenths at once gives one line, not one each: lines are
``PLAIN_GAP_S`` apart at least, but the last.

The figures shown are the caller's (``vetbench eval`` hands it the evaluator's
``RunProgress``): this module only decides when and how they are written.
"""

from __future__ import annotations

import shutil
import sys
import threading
import time
from collections.abc import Callable
from typing import Generic

import click

from reviewer.cli.output import State, TerminalProgressBar, terminal_text

TICK_S = 1.0  # how often a terminal's line is redrawn
PLAIN_EVERY_S = 30.0  # at most this long between two plain lines
QUIET_FOR_S = 10.0  # a step that ends sooner prints no plain line
PLAIN_STEPS = 10  # a plain line at every tenth of the items
PLAIN_GAP_S = 5.0  # the least time between two plain lines (but the last)
_CLEAR_LINE = "\r\x1b[K"


class LiveProgress(Generic[State]):
    """One slow step's progress on stderr: ``label`` names it (``run 1``, ``loading the
    model demo``), ``phase`` says what it is doing (``evaluating``), ``total`` its items
    (0: a step that counts none, as a model load), ``done`` those finished before.

    ``advance(state)`` counts one more item; ``describe(state)`` is the text after the
    counts (running accuracy).  ``plain`` False keeps a step without a terminal silent
    (``--json``).  ``close()`` stops it (a terminal's line is ended with a newline)."""

    def __init__(
        self,
        label: str,
        *,
        phase: str = "",
        total: int = 0,
        done: int = 0,
        describe: Callable[[State], str] = lambda _state: "",
        plain: bool = True,
    ) -> None:
        self._label = label
        self._phase = phase
        self._total = total
        self._done = done
        self._counted = 0  # items finished since this step started: the pace of what is left
        self._describe = describe
        self._state: State | None = None
        self._started = time.monotonic()
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._terminal = sys.stderr.isatty()
        self._bar: TerminalProgressBar[State] | None = None
        self._drawn = False  # a bar-less line is on the terminal
        self._plain = plain and not self._terminal
        self._last_plain = self._started
        self._last_step = self._step(done)  # the tenth the latest plain line said
        if not (self._terminal or self._plain):
            return
        # The ticker starts before the first line shows (the bar draws itself when made):
        # a Ctrl-C as soon as the line is in sight then cannot land inside Thread.start,
        # which it leaves with its lock broken (RuntimeError) in place of the resume line.
        with self._lock:
            threading.Thread(target=self._tick, daemon=True, name=label).start()
            if self._terminal and total:
                self._bar = TerminalProgressBar(
                    total,
                    label,
                    describe=self._bar_text,
                    done=done,
                    idle=self._phase_text,
                )
            self._redraw()

    def advance(self, state: State) -> None:
        with self._lock:
            self._done += 1
            self._counted += 1
            self._state = state
            if self._bar is not None:
                self._bar.advance(state)
            elif self._plain and self._step(self._done) > self._last_step:
                self._print_plain(now=self._done >= self._total)  # the last: at once

    def echo(self, text: str) -> None:
        """A line of its own on stderr (a note) without tearing the drawn line."""
        with self._lock:
            self._clear()
            click.echo(text, err=True)
            self._draw()

    def close(self) -> None:
        self._stop.set()
        with self._lock:
            if self._bar is not None:
                self._bar.close()
                self._bar = None
            elif self._drawn:
                click.echo("", err=True)
                self._drawn = False
            self._terminal = self._plain = False

    # ------------------------------------------------------------------ inside

    def _elapsed(self) -> str:
        from evaluator.run_text import duration  # the CLI loads the evaluator when it runs

        return duration(time.monotonic() - self._started)

    def _left(self) -> str:
        """``about 32 s left`` at the pace of the items finished so far; empty before the
        first (or after the last)."""
        from evaluator.run_text import time_left

        if not self._counted:
            return ""
        pace = (time.monotonic() - self._started) / self._counted
        return time_left(pace * (self._total - self._done))

    def _timed(self, said: str) -> str:
        left = self._left()
        return f"{said}, {left}" if left else said

    def _phase_text(self) -> str:
        """``evaluating for 9 s, about 32 s left`` (or only the times when no phase is
        named)."""
        return self._timed(
            f"{self._phase} for {self._elapsed()}" if self._phase else self._elapsed()
        )

    def _bar_text(self, state: State) -> str:
        return "  ".join(part for part in (self._phase_text(), self._describe(state)) if part)

    def _step(self, done: int) -> int:
        return done * PLAIN_STEPS // self._total if self._total else 0

    def _tick(self) -> None:
        while not self._stop.wait(TICK_S):
            with self._lock:
                self._redraw()

    def _redraw(self) -> None:
        if self._terminal:
            self._draw()
        elif self._plain:
            waited = time.monotonic() - self._last_plain
            stepped = self._step(self._done) > self._last_step  # held back by the gap
            if waited >= PLAIN_EVERY_S:
                self._print_plain(now=True)
            elif stepped and waited >= PLAIN_GAP_S:
                self._print_plain()

    def _draw(self) -> None:
        if not self._terminal:
            return
        if self._bar is not None:
            self._bar.redraw()
            return
        width = shutil.get_terminal_size().columns - 1
        line = f"{self._label}… {self._elapsed()}"
        click.echo(_CLEAR_LINE + terminal_text(line, width), err=True, nl=False)
        self._drawn = True

    def _clear(self) -> None:
        if self._terminal:
            click.echo(_CLEAR_LINE, err=True, nl=False)
            if self._bar is not None:
                self._bar.forget_line()

    def _print_plain(self, *, now: bool = False) -> None:
        """The plain line, unless the step is still quiet; unless ``now``, not under
        ``PLAIN_GAP_S`` after the latest (the ticker prints it once the gap has passed)."""
        clock = time.monotonic()
        if clock - self._last_plain < PLAIN_GAP_S and not now:
            return
        self._last_step = self._step(self._done)
        if clock - self._started < QUIET_FOR_S:
            return
        self._last_plain = clock
        if self._total:
            counts = self._timed(
                f"{self._label}: {self._done}/{self._total} items, {self._elapsed()}"
            )
        else:
            counts = f"{self._label}… {self._elapsed()}"
        said = self._describe(self._state) if self._state is not None else ""
        click.echo("  ".join(part for part in (counts, said) if part), err=True)

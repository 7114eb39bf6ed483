"""What the CLI prints: untrusted text made safe for a terminal, JSON documents, and
progress bars on stderr."""

from __future__ import annotations

import itertools
import json
import shutil
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Generic, Protocol, TypeVar

import click

from db.visible_text import east_asian_cell_len, one_line, visible_text

State = TypeVar("State")
MIN_BAR = 5  # cells of bar a progress line keeps however long its text


def terminal_text(value: object, width: int | None = None) -> str:
    """Any untrusted value (a name, an id, a comment, model output) fit for one line of a terminal.

    Control characters are shown, never sent (ESC -> ``␛``, a newline -> ``␊``), as the
    review app shows them; with ``width``, longer text is cut and ends in ``…``.
    """
    return one_line(str(value), width)


def column(texts: Sequence[str], at_least: int = 0) -> list[str]:
    """``texts`` (already fit for a terminal) padded with spaces to the widest of them in
    terminal cells, or to ``at_least``: a column of names stays aligned when some are
    Chinese (two cells a character), where ``str.ljust`` counts characters."""
    cells = [east_asian_cell_len(text) for text in texts]
    width = max([at_least, *cells])
    return [text + " " * (width - used) for text, used in zip(texts, cells, strict=True)]


ERROR = "error: "
MIN_WRAPPED = 20  # a line narrower than this after its indent reads worse than one run on


def wrapped(text: str, *, first: str = "", hang: str = "", width: int | None = None) -> str:
    """``first`` then ``text`` (already fit for a terminal), as lines of at most ``width``
    terminal cells, or of the terminal's width when the output is one and it is narrower;
    each line after the first starts with ``hang``.  Lines break where the typesetter
    allows (``reviewer.line_breaking``: between words, between Chinese characters but not
    before their closing punctuation), counted in cells (a Chinese character takes two),
    where ``textwrap`` counts characters and breaks only at spaces.  Without ``width``,
    output that is no terminal (a pipe, a file) keeps each line whole.  Not for the
    evaluation path (``eval``, ``runs``): the typesetter is ICU, which the bare GPU box does
    not carry (``tests/test_eval_path_imports.py``): it has :func:`plainly_wrapped`."""
    limit = min((w for w in (width, terminal_width()) if w), default=None)
    if limit is None:
        return first + text
    room = max(limit - max(east_asian_cell_len(first), east_asian_cell_len(hang)), MIN_WRAPPED)
    lines = [line for paragraph in text.split("\n") for line in wrapped_lines(paragraph, room)]
    return "\n".join((hang if index else first) + line for index, line in enumerate(lines))


def terminal_width(*, err: bool = False) -> int | None:
    """The terminal's width in cells when standard output (with ``err``, standard error) is
    one, else None (a pipe, a file: what a script reads keeps its lines whole)."""
    stream = sys.stderr if err else sys.stdout
    return shutil.get_terminal_size().columns if stream is not None and stream.isatty() else None


def plainly_wrapped(
    text: str, *, first: str = "", hang: str = "", err: bool = False, room: int = MIN_WRAPPED
) -> str:
    """:func:`wrapped` for the evaluation path, which has no ICU: ``first`` then ``text``
    broken at blanks by ``wcwidth.wrap`` (the notes and labels of runs, and error lines),
    only when the output (with ``err``, standard error) is a terminal narrower than the
    line; each line after the first starts with ``hang``, and holds at least ``room``
    cells of ``text`` (a narrower column of a table: less).  ``wcwidth`` counts cells as
    the terminal does (a Chinese character takes two, where ``textwrap`` counts one); a
    word wider than the room is folded, and a hyphen is no break (``--resume`` stays
    whole to copy)."""
    limit = terminal_width(err=err)
    if limit is None or east_asian_cell_len(first + text) <= limit:
        return first + text
    import wcwidth

    margin = max(east_asian_cell_len(first), east_asian_cell_len(hang))
    lines = wcwidth.wrap(text, max(limit - margin, room), break_on_hyphens=False) or [""]
    return "\n".join((hang if index else first) + line for index, line in enumerate(lines))


def error_text(message: str) -> str:
    """``error: MESSAGE`` (shown safely) as standard error shows it: on a terminal
    narrower than the line, broken at blanks with the lines after the first under the
    message; piped, one line.  No ICU: errors end evaluations too."""
    return plainly_wrapped(terminal_text(message), first=ERROR, hang=" " * len(ERROR), err=True)


def wrapped_lines(paragraph: str, room: int) -> list[str]:
    """``paragraph`` (one line) cut where the typesetter allows into lines of at most
    ``room`` cells (a piece wider than that is folded)."""
    from reviewer.line_breaking import wrap_offsets

    # No break after a hyphen (as a non-breaking one, the same length): a command's
    # options (--resume) and ids (econ-1) stay whole to copy.
    cuts = [0, *wrap_offsets(paragraph.replace("-", "\u2011"), room), len(paragraph)]
    return [paragraph[start:end].rstrip() for start, end in itertools.pairwise(cuts)]


def terminal_block(value: str) -> str:
    """Untrusted multi-line text for a terminal: newlines and tabs kept, other controls shown."""
    return visible_text(value)


# JSON escapes C0 controls itself; these it would write raw (the same JSON value either way).
_JSON_RAW_CONTROLS = {code: f"\\u{code:04x}" for code in [0x7F, *range(0x80, 0xA0)]}


def print_json(data: Any) -> None:
    """``data`` as JSON on standard output: indented for a person at a terminal, one line
    when piped or captured, so that a program reading the output (or only its last line,
    as line-oriented tools do) gets the whole document."""
    indent = 2 if sys.stdout.isatty() else None
    text = json.dumps(data, ensure_ascii=False, indent=indent, default=str)
    click.echo(text.translate(_JSON_RAW_CONTROLS))


class ShownAsJson(Protocol):
    # Mapping, not db.json_types.JsonObject: evaluator's JSON alias is a wider one.
    def to_json(self) -> Mapping[str, object]: ...


def printed_json_or_empty(
    rows: Sequence[ShownAsJson], *, as_json: bool, empty: str, err: bool = False
) -> bool:
    """With --json print ``rows`` as a JSON list; without, print ``empty`` (on stderr with
    ``err``) when there are none.

    True when that is all the command prints; False when the rows still want their table.
    """
    if as_json:
        print_json([row.to_json() for row in rows])
        return True
    if not rows:
        click.echo(empty, err=err)
        return True
    return False


class TerminalProgressBar(Generic[State]):
    """A progress bar on stderr, shown only when a person is watching (a terminal).

    ``describe`` turns the latest state handed to ``advance`` into the text shown
    after the bar (running accuracy, ok/invalid counts); ``idle`` gives that text
    before the first state (what a slow first item is waiting on).  No unlabelled clock
    (click's ``00:00:32``) is drawn: a caller that knows the time left says it in its text.
    """

    def __init__(
        self,
        total: int,
        label: str,
        *,
        describe: Callable[[State], str],
        done: int = 0,
        idle: Callable[[], str] | None = None,
    ) -> None:
        self._bar: Any = None
        if total and sys.stderr.isatty():
            self._bar = click.progressbar(
                length=total,
                label=label,
                file=sys.stderr,
                # 0: click sizes the bar to what the line leaves of the terminal's width
                # on every redraw, so the line never wraps (a wrapped line is not redrawn
                # in place: at 80 columns each update scrolled onto a new line).
                width=0,
                show_pos=True,
                show_eta=False,
                item_show_func=lambda state: self._fitted(
                    describe(state) if state else idle() if idle is not None else None
                ),
            )
            self._bar.__enter__()
            if done:
                self._bar.update(done)

    def _fitted(self, text: str | None) -> str | None:
        """The text after the counts, cut (``…``) to what the terminal's width leaves
        beside them and a bar of ``MIN_BAR`` cells: a longer line would wrap."""
        if text is None or self._bar is None:
            return text
        bar = self._bar
        counts = len(f"{bar.length}/{bar.length}")
        beside = len(bar.label) + len("  []  ") + MIN_BAR + counts + len("  ")
        return terminal_text(text, max(shutil.get_terminal_size().columns - beside, 1))

    def advance(self, state: State) -> None:
        if self._bar is not None:
            self._bar.update(1, state)

    def redraw(self) -> None:
        """Draw the line again, as it reads now (its text may count time)."""
        if self._bar is not None:
            self._bar.render_progress()

    def forget_line(self) -> None:
        """The line was cleared from the terminal: the next redraw draws it whole (click
        writes only a line that changed)."""
        if self._bar is not None:
            self._bar._last_line = None

    def close(self) -> None:
        if self._bar is not None:
            self._bar.__exit__(None, None, None)
            self._bar = None

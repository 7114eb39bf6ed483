"""Rich ``Text`` and Textual ``Content`` that wrap at :mod:`reviewer.line_breaking`'s opportunities.

Textual 8 shows a ``rich.text.Text`` by converting it to its own ``Content``, which
wraps with ``rich._wrap.divide_line`` (breaks only at spaces, folds Chinese
anywhere).  Rich renderables such as a ``Table`` cell wrap through ``Text.wrap``,
which calls the same function.  So the hook is in two places:

- :class:`LineBrokenText` is a ``Text``: inside rich renderables its ``wrap`` and
  its measurement use the tailored UAX #14 opportunities; handed to a widget, its
  ``visualize`` (Textual's protocol for objects that bring their own visual)
  returns a :class:`LineBrokenContent`;
- :class:`LineBrokenContent` is a ``Content`` whose wrapping step cuts at the same
  opportunities.  Everything else (spans and styles, alignment, ``line-pad``,
  ellipsis, mouse selection, which maps screen cells back to offsets) is Textual's.

``_wrap_and_format`` below follows ``textual.content.Content._wrap_and_format`` of
Textual 8.2.8 (pinned exactly in pyproject.toml) with one change, the line
division; ``tests/test_line_breaking.py`` checks that both render English alike.
"""

from __future__ import annotations

from collections.abc import Callable

from rich.cells import cell_len
from rich.console import Console, ConsoleOptions, JustifyMethod, OverflowMethod
from rich.containers import Lines
from rich.measure import Measurement
from rich.text import Text
from textual._loop import loop_last
from textual.content import Content, _FormattedLine
from textual.css.types import TextAlign, TextOverflow
from textual.selection import Selection
from textual.style import Style
from textual.visual import RulesMap

from reviewer.line_breaking import minimal_width, wrap_offsets


def _offsets(line: str, width: int, fold: bool) -> list[int]:
    return wrap_offsets(line, width, fold=fold, cell_len=cell_len)


class LineBrokenContent(Content):
    """Textual ``Content`` that wraps Chinese and mixed text where a typesetter would."""

    @classmethod
    def from_rich(cls, text: Text) -> LineBrokenContent:
        """The same characters, spans and base style as ``text``."""
        content = Content.from_rich_text(text)
        return cls(content.plain, list(content.spans), strip_control_codes=False)

    @property
    def without_spans(self) -> Content:
        # Content.get_height measures on this copy: it must wrap the same way.
        if self.spans:
            return LineBrokenContent(self.plain, [], strip_control_codes=False)
        return self

    def get_minimal_width(self, rules: RulesMap) -> int:
        """The widest piece that cannot be broken (Content's own counts whole space-less runs)."""
        widest = max((minimal_width(line, cell_len) for line in self.plain.splitlines()), default=0)
        return widest + rules.get("line_pad", 0) * 2

    def _wrap_and_format(
        self,
        width: int,
        align: TextAlign = "left",
        overflow: TextOverflow = "fold",
        no_wrap: bool = False,
        line_pad: int = 0,
        tab_size: int = 8,
        selection: Selection | None = None,
        selection_style: Style | None = None,
        post_style: Style | None = None,
        get_style: Callable[[str | Style], Style] = Style.parse,  # type: ignore[assignment]  # as Content declares it
    ) -> list[_FormattedLine]:
        if no_wrap:  # nothing to break: Textual's own crop, fold or ellipsis
            return super()._wrap_and_format(
                width,
                align,
                overflow,
                no_wrap,
                line_pad,
                tab_size,
                selection,
                selection_style,
                post_style,
                get_style,
            )
        output_lines: list[_FormattedLine] = []
        for y, line in enumerate(self.split(allow_blank=True)):
            if post_style is not None:
                line = line.stylize(post_style)
            if selection_style is not None and selection is not None:
                span = selection.get_span(y)
                if span is not None:
                    start, end = span
                    if end == -1:
                        end = len(line.plain)
                    line = line.stylize(selection_style, start, end)
            line = line.expand_tabs(tab_size)
            offsets = _offsets(line.plain, width - line_pad * 2, overflow == "fold")
            ellipsis = overflow == "ellipsis"
            divided_lines = [
                piece.truncate(width, ellipsis=ellipsis)
                if last
                else piece.rstrip().truncate(width, ellipsis=ellipsis)
                for last, piece in loop_last(line.divide(offsets))
            ]
            new_lines = [
                _FormattedLine(
                    get_style,
                    content.rstrip_end(width).pad(line_pad, line_pad),
                    width,
                    offset,
                    y,
                    align=align,
                )
                for content, offset in zip(divided_lines, [0, *offsets], strict=False)
            ]
            new_lines[-1].line_end = True
            output_lines.extend(new_lines)
        return output_lines


class LineBrokenText(Text):
    """A rich ``Text`` that wraps at the tailored UAX #14 opportunities, in rich and in Textual."""

    def visualize(self) -> LineBrokenContent:
        """Textual's visual protocol: a widget given this Text shows a LineBrokenContent."""
        return LineBrokenContent.from_rich(self)

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        lines = self.plain.splitlines()
        widest = max((cell_len(line) for line in lines), default=0)
        narrowest = max((minimal_width(line, cell_len) for line in lines), default=0)
        return Measurement(narrowest, widest)

    def wrap(
        self,
        console: Console,
        width: int,
        *,
        justify: JustifyMethod | None = None,
        overflow: OverflowMethod | None = None,
        tab_size: int = 8,
        no_wrap: bool | None = None,
    ) -> Lines:
        """``rich.text.Text.wrap`` with the line division replaced (rich 15's steps otherwise)."""
        wrap_justify = justify or self.justify or "default"
        wrap_overflow = overflow or self.overflow or "fold"
        no_wrap = bool(no_wrap if no_wrap is not None else self.no_wrap) or overflow == "ignore"
        lines = Lines()
        for line in self.split(allow_blank=True):
            if "\t" in line:
                line.expand_tabs(tab_size)
            if no_wrap:
                if overflow == "ignore":
                    lines.append(line)
                    continue
                new_lines = Lines([line])
            else:
                new_lines = line.divide(_offsets(line.plain, width, wrap_overflow == "fold"))
                for piece in new_lines:
                    piece.rstrip_end(width)
            if wrap_justify:
                new_lines.justify(console, width, justify=wrap_justify, overflow=wrap_overflow)
            for piece in new_lines:
                piece.truncate(width, overflow=wrap_overflow)
            lines.extend(new_lines)
        return lines


_TEXT_SETTINGS = ("style", "justify", "overflow", "no_wrap", "end", "tab_size")
"""What a rich ``Text`` holds besides its characters and spans (what ``Text.copy`` copies)."""


def line_broken(text: Text) -> LineBrokenText:
    """``text`` (its characters, spans and settings) as a :class:`LineBrokenText`.

    For panels that assemble a ``Text`` from several pieces of item or model text:
    ``static.update(line_broken(case_text(case)))``.
    """
    if isinstance(text, LineBrokenText):
        return text
    broken = LineBrokenText(text.plain, **{name: getattr(text, name) for name in _TEXT_SETTINGS})
    broken.spans = list(text.spans)
    return broken

"""Fitted tables (F2's figures, F3's queue) at 80 columns: a wrapped column breaks only
between words, never inside "Krippendorff's" or "keep/drop", and the table still fits."""

from __future__ import annotations

from helpers import screen_text
from textual.app import App, ComposeResult
from textual.widgets import DataTable

from reviewer.tui.literal import literal
from reviewer.tui.widgets.table_fit import fill_fitted, longest_word

LABELS = ("statistic", "value", "95% CI", "n", "note")
NOTE = (
    "every compared judgment has the same verdict (keep); the coefficient needs two "
    "categories in use, so it is undefined here\nann: verdict wrong-key, proposes D, A, C, B"
)
STATISTICS = (
    "Krippendorff's alpha, verdicts",
    "Krippendorff's alpha, keep/drop",
    "Fleiss' kappa, keep/drop",
    "Raw agreement, blind answers",
)


class Figures(App[None]):
    def compose(self) -> ComposeResult:
        yield DataTable(id="figures")


async def test_wrapped_columns_break_between_words_and_fit_80_columns() -> None:
    app = Figures()
    async with app.run_test(size=(80, 70)) as pilot:  # tall: every row in view
        table = app.query_one(DataTable)
        rows = [
            (
                None,
                (
                    literal(name),
                    "-0.067",
                    "[-0.122, -0.030] of 1000 resamples",
                    "49",
                    literal(NOTE),
                ),
            )
            for name in STATISTICS
        ]
        fill_fitted(table, LABELS, rows, wrap=(0, 4))
        await pilot.pause()
        widths = [column.width for column in table.columns.values()]
        assert widths[0] >= len("Krippendorff's") and widths[4] >= len("categories")
        assert table.virtual_size.width <= 80, widths  # no sideways scrolling
        shown = screen_text(app)
        for word in {*" ".join(STATISTICS).split(), *NOTE.split(), *LABELS[-1:]}:
            assert word in shown, word  # every word whole on screen (none cut in two)


def test_the_longest_word_of_a_cell() -> None:
    assert longest_word("Fleiss' kappa, keep/drop") == len("keep/drop")
    assert longest_word(literal("Krippendorff's alpha,\nverdicts")) == len("Krippendorff's")
    assert 0 < longest_word("中国人民银行的货币政策") <= 4  # wide text breaks between characters


async def test_a_cell_of_several_lines_wraps_at_spaces_not_after_a_hyphen() -> None:
    """A line that reaches the column's edge just after "wrong-" moves "wrong-key" whole
    to the next line, in a cell of two lines (as F3's reasons are: one per annotator)."""
    app = Figures()
    async with app.run_test(size=(40, 10)) as pilot:
        table = app.query_one(DataTable)
        cell = "a" * 28 + " wrong-key, proposes D, A, C, B\nbo: answered C, B, A, D blind"
        fill_fitted(table, ("why",), [("one", (literal(cell),))], wrap=(0,))
        await pilot.pause()
        assert [column.width for column in table.columns.values()] == [36]
        assert "wrong-key," in screen_text(app)


async def test_a_column_empty_in_every_row_gives_its_room_only_when_needed() -> None:
    """An empty "comment" kept its label's width while "note" wrapped beside it (and in
    the judged list, "when" went onto two lines): where the columns do not fit, a column
    empty in every row goes; where they fit, it stays, its heading saying what it holds."""
    labels = ("item", "note", "comment")
    note = "every judgment agrees"
    rows = [("one", (literal("econ:1"), literal(note), literal(""))), ("two", ("econ:2", "", " "))]
    app = Figures()
    async with app.run_test(size=(40, 10)) as pilot:
        table = app.query_one(DataTable)
        fill_fitted(table, labels, rows, wrap=(1, 2))
        await pilot.pause()
        assert [str(column.label) for column in table.columns.values()] == ["item", "note"]
        assert [column.width for column in table.columns.values()] == [6, len(note)]
        assert table.get_row_at(1) == ["econ:2", ""]  # each row's cells of the columns shown
        assert table.virtual_size.width <= 40
        await pilot.resize_terminal(80, 10)
        fill_fitted(table, labels, rows, wrap=(1, 2))
        await pilot.pause()
        assert [str(column.label) for column in table.columns.values()] == list(labels)


async def test_a_heading_narrower_column_wraps_its_heading_and_keeps_its_longest_word() -> None:
    """Headings were one line: "your answer" in a column narrowed to 10 cells showed as
    "your answe". Now a heading wider than its column wraps at its spaces (the header
    grows to two lines), and no column goes narrower than its heading's longest word."""
    rows = [("one", (literal("econ:1"), literal("B, A, C, D, E")))]
    app = Figures()
    async with app.run_test(size=(22, 10)) as pilot:
        table = app.query_one(DataTable)
        fill_fitted(table, ("item", "your answer"), rows, wrap=(1,))
        await pilot.pause()
        column = list(table.columns.values())[1]
        assert (str(column.label), column.width, table.header_height) == ("your\nanswer", 10, 2)
        assert "answer" in screen_text(app) and "D, E" in screen_text(app)
        await pilot.resize_terminal(16, 10)  # too narrow even then: "answer" stays whole
        fill_fitted(table, ("item", "your answer"), rows, wrap=(1,))
        await pilot.pause()
        assert list(table.columns.values())[1].width == len("answer")
        await pilot.resize_terminal(40, 10)  # room enough: one line again
        fill_fitted(table, ("item", "your answer"), rows, wrap=(1,))
        await pilot.pause()
        assert str(list(table.columns.values())[1].label) == "your answer"
        assert table.header_height == 1

"""A result table (``evaluator.result_table``) as text with aligned columns, Markdown, CSV or
LaTeX (booktabs): figures in percent, as the papers print them."""

from __future__ import annotations

import csv
import io
from collections.abc import Callable

from evaluator.result_table import ResultTable, Spread
from evaluator.run_text import fixed

__all__ = ["FORMATS", "render_table"]

FORMATS = ("text", "md", "csv", "latex")


def _percent(spread: Spread | None, *, with_sd: bool = True) -> str:
    if spread is None or spread.mean is None:
        return "—"
    text = fixed(spread.mean, 2, scale=100)
    if with_sd and spread.sd is not None:
        text += f"±{fixed(spread.sd, 2, scale=100)}"
    return text


def render_table(
    table: ResultTable,
    table_format: str,
    *,
    clean: Callable[[str], str] = str,
    width: int | None = None,
) -> str:
    """``table`` as text (aligned columns), Markdown, CSV or LaTeX (booktabs), figures in
    percent; ``clean`` is applied to every model name, subject and title (untrusted text).
    Text for a terminal ``width`` cells wide, when the table is wider, has its title broken
    into lines and its columns in blocks that fit (``evaluator.table_blocks``); without
    ``width`` (piped), one line per row."""
    if table_format not in FORMATS:
        raise ValueError(f"unknown table format '{table_format}' (choose {', '.join(FORMATS)})")
    if table_format == "csv":
        return _csv(table, clean)
    from tabulate import tabulate

    headers = [clean(table.row_header), *(clean(column.title) for column in table.columns)]
    body = [[clean(row.label), *(_percent(cell) for cell in row.cells)] for row in table.rows]
    if table_format == "md":
        escape = str.maketrans({"|": "\\|"})
        headers = [header.translate(escape) for header in headers]
        body = [[cell.translate(escape) for cell in row] for row in body]
        return f"**{clean(table.title)}** (%)\n\n" + tabulate(
            body, headers, tablefmt="github", disable_numparse=True
        )
    if table_format == "latex":
        return f"% {clean(table.title)} (figures in %)\n" + tabulate(
            body, headers, tablefmt="latex_booktabs", disable_numparse=True
        )
    title = f"{clean(table.title)} (%)"
    text = tabulate(body, headers, tablefmt="simple", disable_numparse=True)
    if width is None:
        return f"{title}\n{text}"
    from evaluator.table_blocks import broken, fits, in_blocks

    fitted = text if fits(text, width) else in_blocks(headers, body, width)
    return "\n".join([*broken(title, width), fitted])


def _csv(table: ResultTable, clean: Callable[[str], str]) -> str:
    """One line per row; each figure as its mean and its sd in percent (empty when none)."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    header = [clean(table.row_header)]
    for column in table.columns:
        header += [clean(column.title), f"{clean(column.title)} sd"]
    writer.writerow(header)
    for row in table.rows:
        line = [clean(row.label)]
        for cell in row.cells:
            line += [
                "" if cell is None or cell.mean is None else fixed(cell.mean, 4, scale=100),
                "" if cell is None or cell.sd is None else fixed(cell.sd, 4, scale=100),
            ]
        writer.writerow(line)
    return out.getvalue().rstrip("\n")

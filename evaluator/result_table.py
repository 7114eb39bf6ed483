"""The value a paper-style table is (``evaluator.tables``, ``evaluator.table_breakdowns``):
columns, rows of cells, each cell a :class:`Spread` (mean ± sd over a series' runs), with
the table's notes; ``evaluator.table_render`` writes one as text, Markdown, CSV or LaTeX."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from statistics import mean, stdev

from db.json_types import JsonObject
from evaluator.results import FieldsAsJson, Figures

__all__ = [
    "BASELINE_LABEL",
    "ResultTable",
    "Spread",
    "TableColumn",
    "TableRow",
    "series_spread",
]

SPREAD_METRICS = (
    "accuracy",
    "weighted_f1",
    "bleu_1",
    "bleu_4",
    "rouge_1",
    "rouge_2",
    "rouge_l",
    "position_bias",
)
BASELINE_LABEL = "random choice"


@dataclass(frozen=True)
class Spread(FieldsAsJson):
    """A figure over the runs of a series: mean, sample standard deviation (None for one
    run), and how many runs had it."""

    mean: float | None
    sd: float | None
    n: int

    @classmethod
    def of(cls, values: Iterable[float | None]) -> Spread:
        present = [value for value in values if value is not None]
        return cls(
            mean=mean(present) if present else None,
            sd=stdev(present) if len(present) > 1 else None,
            n=len(present),
        )

    def named(self, metric: str) -> JsonObject:
        """``{metric: mean, metric_sd: sd, metric_n: n}``: under the metric's own name
        stands what it stands for everywhere else, a value of that figure (so a reader
        that checks every ``accuracy`` in a document, as the oracle self-test does,
        finds fractions only), with the rest beside it, as ``accuracy_ci`` is."""
        return {metric: self.mean, f"{metric}_sd": self.sd, f"{metric}_n": self.n}


def series_spread(figures: Sequence[Figures]) -> dict[str, Spread]:
    """Mean ± sd of the headline figures over several runs' figures."""
    return {metric: Spread.of(getattr(run, metric) for run in figures) for metric in SPREAD_METRICS}


@dataclass(frozen=True)
class TableColumn:
    key: str
    title: str


@dataclass(frozen=True)
class TableRow:
    label: str
    cells: tuple[Spread | None, ...]
    runs: tuple[int, ...]  # the runs behind the row (none for the baseline)
    baseline: bool = False

    def to_json(self, columns: Sequence[TableColumn]) -> JsonObject:
        return {
            "label": self.label,
            "baseline": self.baseline,
            "runs": list(self.runs),
            "cells": {
                column.key: None if cell is None else cell.to_json()
                for column, cell in zip(columns, self.cells, strict=True)
            },
        }


@dataclass(frozen=True)
class ResultTable:
    """One table: its columns, and its rows (the baseline row last)."""

    name: str  # "econlogicqa", "cflue", "subject", "length"
    title: str
    row_header: str
    columns: tuple[TableColumn, ...]
    rows: tuple[TableRow, ...]
    release: str | None = None  # the release the runs' items came from (None: not one)
    notes: tuple[str, ...] = ()  # where runs shown side by side evaluated other items

    def to_json(self) -> JsonObject:
        return {
            "name": self.name,
            "title": self.title,
            "row_header": self.row_header,
            "columns": [{"key": c.key, "title": c.title} for c in self.columns],
            "rows": [row.to_json(self.columns) for row in self.rows],
            "release": self.release,
            "notes": list(self.notes),
        }

"""Tables that sit next to the papers' own: models as rows, figures as mean ± sd over repeats.

- ``econlogicqa`` shape (the EconLogicQA paper's table): one column per item kind
  and number of shots (``ordering 1-shot``, ``ordering 5-shot`` ...; the shots the
  prompts got: ``ordering 0-shot (5 asked)`` when fewer than asked), cells are
  accuracies.  Runs of another protocol or of score mode get columns of their own.
- ``cflue`` shape (the CFLUE paper's Knowledge Assessment table), over runs of the
  ``cflue`` protocol: accuracy, weighted F1, BLEU-1, BLEU-4, ROUGE-1, ROUGE-2, ROUGE-L.
- breakdowns (``evaluator.table_breakdowns``): accuracy by CFLUE subject (名称) or by
  the item's length, groups as rows and models as columns.

Every table has a random-choice baseline, exact per item (1/n! for an order of n
events, 1/k for one of k options, 1/(2^k - 1) for a non-empty set of k options) and
averaged over the items of the column (or row).  The two paper shapes also have a
random row like CFLUE's: mean ± sd of accuracy (and weighted F1) over 1,000 seeded
simulated guessers on the same items (``evaluator.random_baseline``).

The ``econlogicqa`` shape is titled EconLogicQA-style: the paper's prompt and
answer regex are unpublished, so its figures follow vetbench's reading of them.
The ``cflue`` shape names each row's prompt wording: the built-in one, or the
official one read from a CFLUE repository (``--cflue-repo``, with the file's hash).

A cell is the mean over the runs of one *series* (``vetbench eval --repeats N`` or
one protocol call) with the sample standard deviation when there are several, as
CFLUE's ± columns report (``evaluator.result_table``).  For each model and column the
latest series counts; where it evaluated other items than an older series of the same
cell, the table's notes say so (``evaluator.table_runs``), and where the models of one
column (of the CFLUE table: its rows) evaluated other items, the notes say that too.  Runs with
``--permute-options`` fill columns of their own.  A model name served by several servers
is a model per server (``TableRun.model``: ``m1 @ 127.0.0.1:8001``).  Only finished runs are read.
Figures are fractions; ``evaluator.table_render`` writes them as percentages, as the
papers print them.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from statistics import mean

from db.engine import Database
from db.vocabulary import EvalMode, EvalProtocol, ItemKind
from evaluator.cflue_wording import wording_of
from evaluator.item_lengths import TOKENS
from evaluator.item_sets import differing_item_sets, group_by_release, unanswered_items
from evaluator.metrics import ScoredPrediction, summarize_predictions
from evaluator.random_baseline import GUESSERS, simulated_guessers
from evaluator.result_table import BASELINE_LABEL, ResultTable, Spread, TableColumn, TableRow
from evaluator.results import Figures
from evaluator.table_breakdowns import breakdown_table, length_groups, subject_of
from evaluator.table_runs import (
    TableRun,
    evaluated_items,
    finished_runs,
    incomplete_series_note,
    latest_series,
    replacement_note,
    variant_suffix,
)

__all__ = ["SHAPES", "paper_tables"]

SHAPES = ("econlogicqa", "cflue")
CFLUE_COLUMNS = (
    ("accuracy", "Acc"),
    ("weighted_f1", "Weighted-F1"),
    ("bleu_1", "BLEU-1"),
    ("bleu_4", "BLEU-4"),
    ("rouge_1", "ROUGE-1"),
    ("rouge_2", "ROUGE-2"),
    ("rouge_l", "ROUGE-L"),
)
SIMULATED_LABEL = f"random ({GUESSERS:,} simulated guessers)"


def _cell(entries: Sequence[tuple[TableRun, Figures]], metric: str) -> Spread | None:
    spread = Spread.of(getattr(figures, metric) for _, figures in entries)
    return spread if spread.n else None


def _baseline(entries: Iterable[tuple[TableRun, Figures]]) -> Spread | None:
    chances = [figures.chance for _, figures in entries if figures.chance is not None]
    return Spread(mean(chances), None, len(chances)) if chances else None


def _guessed(
    entries: Sequence[tuple[TableRun, Figures]], kind: str | None = None
) -> tuple[Spread | None, Spread | None]:
    """Accuracy and weighted F1 of the simulated guessers on the items of ``entries``
    (each model's items once, not once per repeat), of ``kind`` when given."""
    rows: dict[str, ScoredPrediction] = {}
    for run, _figures in entries:
        for row in run.outcomes:
            if kind is None or ItemKind(row.kind).value == kind:
                rows.setdefault(row.item_id, row)
    found = simulated_guessers(list(rows.values()))
    if found is None:
        return None, None
    accuracy = Spread(found.accuracy_mean, found.accuracy_sd, found.guessers)
    f1 = (
        None
        if found.weighted_f1_mean is None
        else Spread(found.weighted_f1_mean, found.weighted_f1_sd, found.guessers)
    )
    return accuracy, f1


# ---------------------------------------------------------------------- shapes


def _econlogicqa_table(runs: Sequence[TableRun]) -> ResultTable | None:
    cells: dict[tuple[str, _Column], list[tuple[TableRun, Figures]]] = defaultdict(list)
    for run in runs:
        summary = summarize_predictions(run.outcomes)
        for kind, figures in summary.by_kind.items():
            asked, got = run.shots_for(kind)
            column = (
                kind, run.protocol, run.record.mode.value, asked, got, run.permuted, run.departures
            )  # fmt: skip
            cells[(run.model, column)].append((run, figures))
    if not cells:
        return None
    kinds = [kind.value for kind in ItemKind]
    column_keys = sorted(
        {column for _model, column in cells},
        key=lambda c: (kinds.index(c[0]), c[1] != EvalProtocol.CUSTOM, c[1:]),
    )
    columns = tuple(TableColumn(_column_key(c), _column_title(c)) for c in column_keys)
    models = list(dict.fromkeys(model for model, _column in cells))
    rows = []
    notes: list[str] = []
    chosen_by_column: dict[_Column, list[tuple[TableRun, Figures]]] = defaultdict(list)
    chosen_by_cell: dict[tuple[str, _Column], list[tuple[TableRun, Figures]]] = {}
    for model in models:
        row_cells: list[Spread | None] = []
        row_runs: set[int] = set()
        for column in column_keys:
            entries = cells.get((model, column))
            if not entries:
                row_cells.append(None)
                continue
            latest = latest_series(entries)
            where = f"{model}, {_column_title(column)}"
            if (note := replacement_note(where, entries, latest, column[0])) is not None:
                notes.append(note)
            if (note := incomplete_series_note(where, latest)) is not None:
                notes.append(note)
            chosen_by_cell[(model, column)] = latest
            chosen_by_column[column] += latest
            row_runs.update(run.record.id for run, _ in latest)
            row_cells.append(_cell(latest, "accuracy"))
        rows.append(TableRow(model, tuple(row_cells), tuple(sorted(row_runs))))
    rows.append(
        TableRow(
            BASELINE_LABEL,
            tuple(_baseline(chosen_by_column[column]) for column in column_keys),
            (),
            baseline=True,
        )
    )
    rows.append(
        TableRow(
            SIMULATED_LABEL,
            tuple(_guessed(chosen_by_column[column], column[0])[0] for column in column_keys),
            (),
            baseline=True,
        )
    )
    for column in column_keys:
        side_by_side = {
            model: chosen_by_cell[(model, column)]
            for model in models
            if (model, column) in chosen_by_cell
        }
        note = _other_items_note(_column_title(column), side_by_side, column[0])
        notes += [note] if note else []
    return ResultTable(
        "econlogicqa",
        "Accuracy by item kind and shots (EconLogicQA-style table: the paper's prompt and "
        "answer regex are unpublished)",
        "model",
        columns,
        tuple(rows),
        notes=tuple(notes),
    )


_Column = tuple[str, str, str, int, str, bool, tuple[str, ...]]
"""kind, protocol, mode, shots asked, shots got when fewer ("" when all), permuted options,
and a layout or reader not the protocol's own (``TableRun.departures``)."""


def _other_items_note(
    where: str,
    side_by_side: Mapping[str, Sequence[tuple[TableRun, Figures]]],
    kind: str | None = None,
) -> str | None:
    """``where: the models evaluated other items (a 5, b 19)`` when the rows shown side by
    side in ``where`` (a column, or the whole CFLUE table) evaluated other items (of
    ``kind`` when given).  Runs of one setting are compared whole, by item set
    (:func:`paper_tables`); this names where runs of other settings (a ``--kind`` or
    ``--limit`` run) meet."""
    settings = {_setting(run) for chosen in side_by_side.values() for run, _figures in chosen}
    items = {row: evaluated_items(chosen, kind) for row, chosen in side_by_side.items()}
    if len(settings) < 2 or len(set(items.values())) < 2:
        return None
    counts = ", ".join(f"{row} {len(evaluated)}" for row, evaluated in items.items())
    return f"{where}: the models evaluated other items ({counts})"


def _column_key(column: _Column) -> str:
    kind, protocol, mode, shots, got, permuted, departures = column
    suffix = "" if protocol == EvalProtocol.CUSTOM else f"/{protocol}"
    suffix += "" if mode == EvalMode.GENERATE else f"/{mode}"
    suffix += variant_suffix(permuted, departures)
    shots_text = f"{got}-of-{shots}" if got else str(shots)
    return f"{kind}/{shots_text}-shot{suffix}"


def _column_title(column: _Column) -> str:
    """``ordering 5-shot (econlogicqa)``; ``ordering 0-shot (5 asked)`` for fewer shots."""
    kind, protocol, mode, shots, got, permuted, departures = column
    extra = [f"{shots} asked"] if got else []
    extra += [] if protocol == EvalProtocol.CUSTOM else [protocol]
    extra += departures
    extra += [] if mode == EvalMode.GENERATE else [mode]
    extra += ["permuted options"] if permuted else []
    return f"{kind} {got or shots}-shot" + (f" ({', '.join(extra)})" if extra else "")


def _cflue_table(runs: Sequence[TableRun]) -> ResultTable | None:
    # A model's runs with another prompt wording are another row: the figures differ.
    by_model: dict[str, list[tuple[TableRun, Figures]]] = defaultdict(list)
    for run in runs:
        if run.protocol == EvalProtocol.CFLUE:
            how = [f"{wording_of(run.record.params.wording)} wording", *run.departures]
            how += ["permuted options"] if run.permuted else []
            label = f"{run.model} ({', '.join(how)})"
            by_model[label].append((run, summarize_predictions(run.outcomes)))
    if not by_model:
        return None
    columns = tuple(TableColumn(key, title) for key, title in CFLUE_COLUMNS)
    rows = []
    notes: list[str] = []
    chosen: list[tuple[TableRun, Figures]] = []
    chosen_by_row: dict[str, list[tuple[TableRun, Figures]]] = {}
    for label, entries in by_model.items():
        latest = latest_series(entries)
        if (note := replacement_note(label, entries, latest)) is not None:
            notes.append(note)
        if (note := incomplete_series_note(label, latest)) is not None:
            notes.append(note)
        chosen += latest
        chosen_by_row[label] = latest
        rows.append(
            TableRow(
                label,
                tuple(_cell(latest, key) for key, _title in CFLUE_COLUMNS),
                tuple(sorted(run.record.id for run, _ in latest)),
            )
        )
    # Only accuracy has an exact random baseline; the guessers add F1; text overlap has none.
    rows.append(
        TableRow(
            BASELINE_LABEL,
            (_baseline(chosen), *(None for _ in CFLUE_COLUMNS[1:])),
            (),
            baseline=True,
        )
    )
    if (note := _other_items_note("every column", chosen_by_row)) is not None:
        notes.append(note)
    accuracy, f1 = _guessed(chosen)
    rows.append(
        TableRow(
            SIMULATED_LABEL,
            (accuracy, f1, *(None for _ in CFLUE_COLUMNS[2:])),
            (),
            baseline=True,
        )
    )
    return ResultTable(
        "cflue",
        "CFLUE protocol: answers and explanations (CFLUE's Knowledge Assessment table)",
        "model",
        columns,
        tuple(rows),
        notes=tuple(notes),
    )


def paper_tables(
    db: Database,
    *,
    shapes: Sequence[str] = SHAPES,
    breakdowns: Sequence[str] = (),
    protocol: str | None = None,
    models: Sequence[str] = (),
    run_ids: Sequence[int] = (),
    length_unit: str = TOKENS,
) -> list[ResultTable]:
    """The tables asked for, over the finished runs (of ``protocol``, of ``models``, or
    the runs ``run_ids``); a shape without runs is left out.  Length breakdowns count
    ``length_unit`` (tokens of each run's tokenizer, or characters).

    Runs on different releases are never in one table: each release gets its own tables
    (and runs on items chosen without a release theirs), titled with it; a table whose runs of one setting
    evaluated different items says so in its ``notes``."""
    runs = finished_runs(db, protocol=protocol, models=models, run_ids=run_ids)
    tables = []
    for release, group in group_by_release(runs, lambda run: run.record.item_set).items():
        where = f"release {release}" if release is not None else "items chosen without a release"
        for table in _tables_of(db, group, shapes, breakdowns, length_unit):
            shown = {run_id for row in table.rows for run_id in row.runs}
            in_table = [run for run in group if run.record.id in shown]
            notes = differing_item_sets(
                (run.record.id, _setting(run), run.record.item_set) for run in in_table
            )
            notes += unanswered_items((run.record.id, run.outcomes) for run in in_table)
            tables.append(
                replace(
                    table,
                    title=f"{table.title}, on {where}",
                    release=release,
                    notes=(*table.notes, *notes),
                )
            )
    return tables


def _setting(run: TableRun) -> str:
    """What a run's figures fill in a table: its protocol, mode and kinds."""
    kinds = sorted({row.kind.value for row in run.outcomes})
    return f"{', '.join(kinds)} ({run.protocol}, {run.record.mode.value})"


def _tables_of(
    db: Database,
    runs: Sequence[TableRun],
    shapes: Sequence[str],
    breakdowns: Sequence[str],
    length_unit: str,
) -> list[ResultTable]:
    """The tables asked for over ``runs`` (all on one item set)."""
    # Breakdowns of the CFLUE table alone read the CFLUE protocol's runs.
    broken_down = (
        [run for run in runs if run.protocol == EvalProtocol.CFLUE]
        if tuple(shapes) == ("cflue",)
        else runs
    )
    tables: list[ResultTable | None] = []
    if "econlogicqa" in shapes:
        tables.append(_econlogicqa_table(runs))
    if "cflue" in shapes:
        tables.append(_cflue_table(runs))
    if "subject" in breakdowns:
        tables.append(breakdown_table(broken_down, "subject", lambda _run: subject_of))
    if "length" in breakdowns:
        tables.append(breakdown_table(broken_down, "length", length_groups(db, length_unit)))
    return [table for table in tables if table is not None]

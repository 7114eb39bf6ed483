"""Tables that sit next to the papers' own: models as rows, figures as mean ± sd over repeats.

- ``econlogicqa`` shape (the EconLogicQA paper's table): one column per item kind
  and number of shots (``ordering 1-shot``, ``ordering 5-shot`` ...; the shots the
  prompts got: ``ordering 0-shot (5 asked)`` when fewer than asked), cells are
  accuracies.  Runs of another protocol or of score mode get columns of their own.
- ``cflue`` shape (the CFLUE paper's Knowledge Assessment table), over runs of the
  ``cflue`` protocol: accuracy, weighted F1, BLEU-1, BLEU-4, ROUGE-1, ROUGE-2, ROUGE-L.
- breakdowns: accuracy by CFLUE subject (名称) or by the length of the item's
  question and options (:data:`LENGTH_BUCKETS`), in tokens of each run's tokenizer
  (``evaluator.item_lengths``; characters for a run without one, or when asked),
  groups as rows and models as columns.

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
CFLUE's ± columns report.  For each model and column the latest series counts; where
it evaluated other items than an older series of the same cell (a quick ``--limit``
check after the full run), the table's notes say so and name the older runs, and where
the models of one column evaluated other items, the notes say that too.  Runs with
``--permute-options`` fill columns of their own.  Only finished runs are read.
Figures are fractions; ``evaluator.table_render`` writes them as percentages, as the
papers print them.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from statistics import mean, stdev

from db.engine import Database
from db.json_types import JsonObject
from db.vocabulary import EvalMode, EvalProtocol, ItemKind, RunStatus
from db.words import counted
from evaluator.cflue_wording import wording_of
from evaluator.item_lengths import CHARS, TOKENS, token_lengths
from evaluator.item_sets import differing_item_sets, group_by_release, unanswered_items
from evaluator.metrics import ScoredPrediction, figures_of, summarize_predictions
from evaluator.protocols import run_departures
from evaluator.random_baseline import GUESSERS, simulated_guessers
from evaluator.results import FieldsAsJson, Figures, RunRecord

__all__ = [
    "LENGTH_BUCKETS",
    "SHAPES",
    "ResultTable",
    "Spread",
    "TableColumn",
    "TableRow",
    "paper_tables",
    "series_spread",
]

SHAPES = ("econlogicqa", "cflue")
BREAKDOWNS = ("subject", "length")
LENGTH_BUCKETS = (0, 50, 100, 200, 400)
"""Lower edges, in tokens (or characters) of question and options: <50, 50–99, 100–199,
200–399, ≥400."""
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
CFLUE_COLUMNS = (
    ("accuracy", "Acc"),
    ("weighted_f1", "Weighted-F1"),
    ("bleu_1", "BLEU-1"),
    ("bleu_4", "BLEU-4"),
    ("rouge_1", "ROUGE-1"),
    ("rouge_2", "ROUGE-2"),
    ("rouge_l", "ROUGE-L"),
)
BASELINE_LABEL = "random choice"
SIMULATED_LABEL = f"random ({GUESSERS:,} simulated guessers)"


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


# ---------------------------------------------------------------- reading runs


@dataclass(frozen=True)
class _Run:
    record: RunRecord
    outcomes: list[ScoredPrediction]

    @property
    def protocol(self) -> str:
        return self.record.params.protocol.value

    @property
    def permuted(self) -> bool:
        return self.record.params.permute_options

    @property
    def departures(self) -> tuple[str, ...]:
        """A layout or deciding reader not the protocol's own (``read by lenient``)."""
        return run_departures(self.record.params)

    @property
    def series(self) -> str:
        repeat = self.record.params.repeat
        return repeat.series if repeat is not None and repeat.series else f"run:{self.record.id}"

    def shots_for(self, kind: str) -> tuple[int, str]:
        """The shots ``kind`` asked for, and those it got when fewer (else "")."""
        got = self.record.params.shot_counts(self.record.shots).of_kind(kind)
        return got.asked, got.used_text if got.short else ""

    @property
    def shots_setting(self) -> str:
        """The run's shots in a breakdown's setting: ``5``, or each kind's when they differ
        from it (``ordering 0-shot (5 asked), single 5-shot``)."""
        got = self.record.params.shot_counts(self.record.shots)
        return str(self.record.shots) if got.plain else got.label()


def _finished_runs(
    db: Database, *, protocol: str | None, models: Sequence[str], run_ids: Sequence[int]
) -> list[_Run]:
    from evaluator.runs import run_outcomes, run_records

    chosen = []
    for record in run_records(db):
        if record.status is not RunStatus.FINISHED:
            continue
        if run_ids and record.id not in run_ids:
            continue
        if models and record.model not in models:
            continue
        run = _Run(record, [])
        if protocol is not None and run.protocol != protocol:
            continue
        chosen.append(_Run(record, run_outcomes(db, record.id)))
    return chosen


def _latest_series(entries: Sequence[tuple[_Run, Figures]]) -> list[tuple[_Run, Figures]]:
    """The entries of the series whose newest run is newest."""
    by_series: dict[str, list[tuple[_Run, Figures]]] = defaultdict(list)
    for entry in entries:
        by_series[entry[0].series].append(entry)
    return max(by_series.values(), key=lambda group: max(run.record.id for run, _ in group))


def _items(entries: Iterable[tuple[_Run, Figures]], kind: str | None) -> frozenset[str]:
    """The items ``entries`` evaluated (of ``kind`` when given)."""
    return frozenset(
        row.item_id
        for run, _figures in entries
        for row in run.outcomes
        if kind is None or row.kind.value == kind
    )


def _run_ids(entries: Iterable[tuple[_Run, Figures]]) -> str:
    ids = sorted({run.record.id for run, _figures in entries})
    return f"run{'s' if len(ids) > 1 else ''} {', '.join(map(str, ids))}"


def _replacement_note(
    where: str,
    entries: Sequence[tuple[_Run, Figures]],
    latest: Sequence[tuple[_Run, Figures]],
    kind: str | None = None,
) -> str | None:
    """A sentence when ``latest``, the series a cell shows, evaluated other items than an
    older series of its ``entries``, which it replaced in the table (None when none did)."""
    shown = _items(latest, kind)
    older = [entry for entry in entries if entry not in latest]
    replaced = [entry for entry in older if _items([entry], kind) != shown]
    if not replaced:
        return None
    counts = sorted({len(_items([entry], kind)) for entry in replaced})
    newest_replaced = max(run.record.id for run, _figures in replaced)
    return (
        f"{where}: shows {_run_ids(latest)} on {counted(len(shown), 'item')}; older "
        f"{_run_ids(replaced)} evaluated other items ({' or '.join(map(str, counts))}; "
        f"`runs table --run {newest_replaced}` shows it)"
    )


def _cell(entries: Sequence[tuple[_Run, Figures]], metric: str) -> Spread | None:
    spread = Spread.of(getattr(figures, metric) for _, figures in entries)
    return spread if spread.n else None


def _baseline(entries: Iterable[tuple[_Run, Figures]]) -> Spread | None:
    chances = [figures.chance for _, figures in entries if figures.chance is not None]
    return Spread(mean(chances), None, len(chances)) if chances else None


def _guessed(
    entries: Sequence[tuple[_Run, Figures]], kind: str | None = None
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


def _econlogicqa_table(runs: Sequence[_Run]) -> ResultTable | None:
    cells: dict[tuple[str, _Column], list[tuple[_Run, Figures]]] = defaultdict(list)
    for run in runs:
        summary = summarize_predictions(run.outcomes)
        for kind, figures in summary.by_kind.items():
            asked, got = run.shots_for(kind)
            column = (
                kind, run.protocol, run.record.mode.value, asked, got, run.permuted, run.departures
            )  # fmt: skip
            cells[(run.record.model, column)].append((run, figures))
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
    chosen_by_column: dict[_Column, list[tuple[_Run, Figures]]] = defaultdict(list)
    chosen_by_cell: dict[tuple[str, _Column], list[tuple[_Run, Figures]]] = {}
    for model in models:
        row_cells: list[Spread | None] = []
        row_runs: set[int] = set()
        for column in column_keys:
            entries = cells.get((model, column))
            if not entries:
                row_cells.append(None)
                continue
            latest = _latest_series(entries)
            where = f"{model}, {_column_title(column)}"
            if (note := _replacement_note(where, entries, latest, column[0])) is not None:
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
        by_model = {
            model: _items(chosen_by_cell[(model, column)], column[0])
            for model in models
            if (model, column) in chosen_by_cell
        }
        # Runs of one setting are compared whole, by item set (paper_tables); this names
        # the columns where runs of other settings (a --kind or --limit run) meet.
        settings = {_setting(run) for run, _figures in chosen_by_column[column]}
        if len(settings) > 1 and len(set(by_model.values())) > 1:
            counts = ", ".join(f"{model} {len(items)}" for model, items in by_model.items())
            notes.append(f"{_column_title(column)}: the models evaluated other items ({counts})")
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
and a layout or reader not the protocol's own (``_Run.departures``)."""


def _column_key(column: _Column) -> str:
    kind, protocol, mode, shots, got, permuted, departures = column
    suffix = "" if protocol == EvalProtocol.CUSTOM else f"/{protocol}"
    suffix += "" if mode == EvalMode.GENERATE else f"/{mode}"
    suffix += _variant_suffix(permuted, departures)
    shots_text = f"{got}-of-{shots}" if got else str(shots)
    return f"{kind}/{shots_text}-shot{suffix}"


def _variant_suffix(permuted: bool, departures: tuple[str, ...]) -> str:
    """A column key's tail for permuted options and a layout or reader not the protocol's
    own: ``/permuted/read-by-lenient``."""
    return ("/permuted" if permuted else "") + "".join(
        f"/{part.replace(' ', '-')}" for part in departures
    )


def _column_title(column: _Column) -> str:
    """``ordering 5-shot (econlogicqa)``; ``ordering 0-shot (5 asked)`` for fewer shots."""
    kind, protocol, mode, shots, got, permuted, departures = column
    extra = [f"{shots} asked"] if got else []
    extra += [] if protocol == EvalProtocol.CUSTOM else [protocol]
    extra += departures
    extra += [] if mode == EvalMode.GENERATE else [mode]
    extra += ["permuted options"] if permuted else []
    return f"{kind} {got or shots}-shot" + (f" ({', '.join(extra)})" if extra else "")


def _cflue_table(runs: Sequence[_Run]) -> ResultTable | None:
    # A model's runs with another prompt wording are another row: the figures differ.
    by_model: dict[str, list[tuple[_Run, Figures]]] = defaultdict(list)
    for run in runs:
        if run.protocol == EvalProtocol.CFLUE:
            how = [f"{wording_of(run.record.params.wording)} wording", *run.departures]
            how += ["permuted options"] if run.permuted else []
            label = f"{run.record.model} ({', '.join(how)})"
            by_model[label].append((run, summarize_predictions(run.outcomes)))
    if not by_model:
        return None
    columns = tuple(TableColumn(key, title) for key, title in CFLUE_COLUMNS)
    rows = []
    notes: list[str] = []
    chosen: list[tuple[_Run, Figures]] = []
    for label, entries in by_model.items():
        latest = _latest_series(entries)
        if (note := _replacement_note(label, entries, latest)) is not None:
            notes.append(note)
        chosen += latest
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


def length_bucket(length: int, unit: str = CHARS) -> str:
    """The length bucket of an item's question and options (``unit``: tokens or chars)."""
    edges = LENGTH_BUCKETS
    for low, high in zip(edges, edges[1:], strict=False):
        if low <= length < high:
            return f"{low}–{high - 1} {unit}"
    return f"≥{edges[-1]} {unit}"


def _length_groups(
    db: Database, unit: str
) -> Callable[[_Run], Callable[[ScoredPrediction], str | None]]:
    """For each run, the length bucket of its items: in tokens of its own tokenizer (if
    asked and it loads), else in characters."""

    def of_run(run: _Run) -> Callable[[ScoredPrediction], str | None]:
        tokens = (
            token_lengths(db, run.record.params, [row.item_id for row in run.outcomes])
            if unit == TOKENS
            else None
        )
        if tokens is None:
            return lambda row: length_bucket(row.text_length, CHARS)
        return lambda row: (
            length_bucket(tokens[row.item_id], TOKENS) if row.item_id in tokens else None
        )

    return of_run


def _breakdown_table(
    runs: Sequence[_Run],
    name: str,
    groups_of: Callable[[_Run], Callable[[ScoredPrediction], str | None]],
) -> ResultTable | None:
    """Accuracy per group (rows) for each model and setting (columns): a model's runs of
    one protocol, mode and number of shots make one column (its latest series)."""
    by_setting: dict[_Setting, list[_Run]] = defaultdict(list)
    for run in runs:
        setting = (
            run.record.model,
            run.protocol,
            run.record.mode.value,
            run.shots_setting,
            run.permuted,
            run.departures,
        )
        by_setting[setting].append(run)
    latest: dict[_Setting, list[_Run]] = {}
    notes: list[str] = []
    for setting, setting_runs in by_setting.items():
        entries = [(run, _EMPTY) for run in setting_runs]
        chosen = _latest_series(entries)
        latest[setting] = [run for run, _ in chosen]
        if (note := _replacement_note(_setting_title(setting), entries, chosen)) is not None:
            notes.append(note)
    groups: dict[str, dict[_Setting, list[Figures]]] = defaultdict(lambda: defaultdict(list))
    chance: dict[str, list[ScoredPrediction]] = defaultdict(list)
    for setting, setting_runs in latest.items():
        for run in setting_runs:
            grouped: dict[str, list[ScoredPrediction]] = defaultdict(list)
            group_of = groups_of(run)
            for row in run.outcomes:
                group = group_of(row)
                if group is not None:
                    grouped[group].append(row)
            for group, members in grouped.items():
                groups[group][setting].append(figures_of(members))
                if setting_runs.index(run) == 0:  # the items once, not once per repeat
                    chance[group] += members
    settings = [setting for setting in latest if any(setting in g for g in groups.values())]
    if not settings:
        return None
    per_model: dict[str, int] = defaultdict(int)
    for model, *_rest in settings:
        per_model[model] += 1
    columns = (
        *(
            TableColumn(
                "/".join(setting[:4]) + _variant_suffix(setting[4], setting[5]),
                setting[0] if per_model[setting[0]] == 1 else _setting_title(setting),
            )
            for setting in settings
        ),
        TableColumn("random", BASELINE_LABEL),
    )
    order = sorted(groups, key=_group_order if name == "length" else str)
    rows = tuple(
        TableRow(
            group,
            (
                *(
                    Spread.of(f.accuracy for f in groups[group][setting])
                    if groups[group].get(setting)
                    else None
                    for setting in settings
                ),
                _chance_of(chance[group]),
            ),
            tuple(sorted(run.record.id for s in settings for run in latest[s])),
        )
        for group in order
    )
    title = (
        "Accuracy by CFLUE subject (名称)"
        if name == "subject"
        else "Accuracy by item length (question and options)"
    )
    return ResultTable(
        name, title, "subject" if name == "subject" else "length", columns, rows, notes=tuple(notes)
    )


def _subject(row: ScoredPrediction) -> str | None:
    return row.subject


_Setting = tuple[str, str, str, str, bool, tuple[str, ...]]
"""A breakdown's column: model, protocol, mode, shots, permuted options, and a layout or
reader not the protocol's own."""


def _setting_title(setting: _Setting) -> str:
    model, protocol, mode, shots, permuted, departures = setting
    extra = [] if protocol == EvalProtocol.CUSTOM else [protocol]
    extra += departures
    extra += [] if mode == EvalMode.GENERATE else [mode]
    shots_text = f"{shots}-shot" if shots.isdigit() else shots
    extra += [shots_text, *(["permuted options"] if permuted else [])]
    return f"{model} ({', '.join(extra)})"


_EMPTY = Figures(
    n=0, scored=0, correct=0, unparsed=0, infrastructure_failures=0, accuracy=None,
    accuracy_ci=None, unparsed_rate=None, pairwise_accuracy=None, weighted_f1=None,
    set_f1=None, chance=None, explained=0, bleu_1=None, bleu_4=None, rouge_1=None,
    rouge_2=None, rouge_l=None, extractors={}, key_positions={}, position_bias=None,
    truncated=0,
)  # fmt: skip


def _group_order(label: str) -> tuple[str, int]:
    """Length buckets by unit, then from short to long."""
    digits = "".join(ch for ch in label.split("–")[0] if ch.isdigit())
    return (label.rsplit(" ", 1)[-1], int(digits or 0) + (1 if label.startswith("≥") else 0))


def _chance_of(rows: Sequence[ScoredPrediction]) -> Spread | None:
    chance = figures_of(rows).chance if rows else None
    return None if chance is None else Spread(chance, None, 1)


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
    (and runs on no release theirs), titled with it; a table whose runs of one setting
    evaluated different items says so in its ``notes``."""
    runs = _finished_runs(db, protocol=protocol, models=models, run_ids=run_ids)
    tables = []
    for release, group in group_by_release(runs, lambda run: run.record.item_set).items():
        where = f"release {release}" if release is not None else "no release"
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


def _setting(run: _Run) -> str:
    """What a run's figures fill in a table: its protocol, mode and kinds."""
    kinds = sorted({row.kind.value for row in run.outcomes})
    return f"{', '.join(kinds)} ({run.protocol}, {run.record.mode.value})"


def _tables_of(
    db: Database,
    runs: Sequence[_Run],
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
        tables.append(_breakdown_table(broken_down, "subject", lambda _run: _subject))
    if "length" in breakdowns:
        tables.append(_breakdown_table(broken_down, "length", _length_groups(db, length_unit)))
    return [table for table in tables if table is not None]

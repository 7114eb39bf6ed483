"""Breakdown tables: accuracy by CFLUE subject (名称) or by the length of the item's
question and options (:data:`LENGTH_BUCKETS`), in tokens of each run's tokenizer
(``evaluator.item_lengths``; characters for a run without one, or when asked), groups
as rows and each model's settings as columns, with a random-choice column exact per item.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence

from db.engine import Database
from db.vocabulary import EvalMode, EvalProtocol
from evaluator.item_lengths import CHARS, TOKENS, token_lengths
from evaluator.metrics import ScoredPrediction, figures_of
from evaluator.result_table import BASELINE_LABEL, ResultTable, Spread, TableColumn, TableRow
from evaluator.results import Figures
from evaluator.table_runs import TableRun, latest_series, replacement_note, variant_suffix

__all__ = [
    "BREAKDOWNS",
    "LENGTH_BUCKETS",
    "breakdown_table",
    "length_bucket",
    "length_groups",
    "subject_of",
]

BREAKDOWNS = ("subject", "length")
LENGTH_BUCKETS = (0, 50, 100, 200, 400)
"""Lower edges, in tokens (or characters) of question and options: <50, 50–99, 100–199,
200–399, ≥400."""


def length_bucket(length: int, unit: str = CHARS) -> str:
    """The length bucket of an item's question and options (``unit``: tokens or chars)."""
    edges = LENGTH_BUCKETS
    for low, high in zip(edges, edges[1:], strict=False):
        if low <= length < high:
            return f"{low}–{high - 1} {unit}"
    return f"≥{edges[-1]} {unit}"


def length_groups(
    db: Database, unit: str
) -> Callable[[TableRun], Callable[[ScoredPrediction], str | None]]:
    """For each run, the length bucket of its items: in tokens of its own tokenizer (if
    asked and it loads), else in characters."""

    def of_run(run: TableRun) -> Callable[[ScoredPrediction], str | None]:
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


def breakdown_table(
    runs: Sequence[TableRun],
    name: str,
    groups_of: Callable[[TableRun], Callable[[ScoredPrediction], str | None]],
) -> ResultTable | None:
    """Accuracy per group (rows) for each model and setting (columns): a model's runs of
    one protocol, mode and number of shots make one column (its latest series)."""
    by_setting: dict[_Setting, list[TableRun]] = defaultdict(list)
    for run in runs:
        setting = (
            run.model,
            run.protocol,
            run.record.mode.value,
            run.shots_setting,
            run.permuted,
            run.departures,
        )
        by_setting[setting].append(run)
    latest: dict[_Setting, list[TableRun]] = {}
    notes: list[str] = []
    for setting, setting_runs in by_setting.items():
        entries = [(run, _EMPTY) for run in setting_runs]
        chosen = latest_series(entries)
        latest[setting] = [run for run, _ in chosen]
        if (note := replacement_note(_setting_title(setting), entries, chosen)) is not None:
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
                "/".join(setting[:4]) + variant_suffix(setting[4], setting[5]),
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


def subject_of(row: ScoredPrediction) -> str | None:
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

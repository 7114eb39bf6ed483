"""A run's figures as labelled text: one formatter for the CLI and the app.

``vetbench eval`` and ``vetbench runs show`` print these rows one per line; the
evaluation screen (F4) puts the same rows in its title, table cells and summary
lines, so both always show the same figures under the same names (as
``reviewer/agreement/rows.py`` does for agreement).  Text for people is in percent
(``75.0%``), as the papers, ``runs table`` and the app print it; ``--json`` keeps
fractions (``0.750``) for scripts: every function takes ``percent``.
Nothing here knows a widget or a terminal; callers make model text safe to show.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from db.json_types import JsonValue
from db.vocabulary import EvalProtocol
from evaluator.protocols import run_departures
from evaluator.results import ExtractorFigures, Figures, RunProgress, RunRecord, Score

__all__ = [
    "FigureRow",
    "duration",
    "extractor_text",
    "FIGURE_TERMS",
    "fixed",
    "figure_change",
    "figure_rows",
    "interval",
    "legend_lines",
    "number",
    "position_text",
    "rate",
    "run_how",
    "run_state",
    "score_items",
    "secondary_text",
    "shots_label",
    "speed",
    "time_left",
]


FLOAT_SLACK = 1e-6
"""A figure this close to 0 or 1 is 0 or 1: floating-point error of sums, and the packages'
own (the ``rouge`` package's F-score of a perfect match is 0.999999995, its 1e-8 in the
denominator).  A figure short of 1 by less would need over a million items."""


def fixed(value: float, decimals: int, *, scale: float = 1.0) -> str:
    """The fraction ``value`` times ``scale`` with ``decimals`` decimals, never rounded onto
    a bound it does not reach: 3863 of 3864 (0.99974) is ``0.999``, not a perfect ``1.000``;
    0.0004 is ``0.001``, not ``0.000``.  Every figure a run or table prints goes through it."""
    text = f"{scale * value:.{decimals}f}"
    step = 10.0**-decimals
    if value < 1 - FLOAT_SLACK and float(text) >= scale:
        return f"{scale - step:.{decimals}f}"
    if value > FLOAT_SLACK and float(text) <= 0:
        return f"{step:.{decimals}f}"
    return text


def number(value: float | None, *, percent: bool = False, decimals: int | None = None) -> str:
    """A fraction as ``0.750`` (or ``75.0%``; ``decimals`` other than 3, or 1 in percent),
    by :func:`fixed`; ``—`` for a figure with nothing behind it."""
    if value is None:
        return "—"
    if percent:
        return f"{fixed(value, 1 if decimals is None else decimals, scale=100)}%"
    return fixed(value, 3 if decimals is None else decimals)


def interval(
    bounds: tuple[float, float] | None, *, percent: bool = False, decimals: int | None = None
) -> str:
    """A 95% interval as ``[0.409, 0.929]`` (or ``[40.9, 92.9]``; ``decimals`` as
    :func:`number` takes them); ``—`` when there is none."""
    if not bounds:
        return "—"
    low, high = bounds
    if percent:
        places = 1 if decimals is None else decimals
        return f"[{100 * low:.{places}f}, {100 * high:.{places}f}]"
    places = 3 if decimals is None else decimals
    return f"[{low:.{places}f}, {high:.{places}f}]"


CHANGE_DECIMALS = 2
"""Percent decimals of a changed figure (``runs rescore``): one more than every other figure
prints, so that one prediction read differently in a few thousand still shows a change."""


def figure_change(stored: JsonValue, now: JsonValue) -> str:
    """A figure read differently, as stored and now: ``85.71% -> 100.00%`` (a fraction in
    percent, by :func:`number`), ``[48.69, 97.43] -> [64.57, 100.00]`` (an interval),
    ``1 -> 0`` (a count); ``—`` for a figure with nothing behind it."""
    return f"{_changed_value(stored)} -> {_changed_value(now)}"


def _changed_value(value: JsonValue) -> str:
    if isinstance(value, float):
        return number(value, percent=True, decimals=CHANGE_DECIMALS)
    bounds = (
        [bound for bound in value if isinstance(bound, float)] if isinstance(value, list) else []
    )
    if len(bounds) == 2:  # an interval: [low, high]
        return interval((bounds[0], bounds[1]), percent=True, decimals=CHANGE_DECIMALS)
    return "—" if value is None else str(value)


def duration(seconds: float | None) -> str:
    if seconds is None:
        return "—"
    seconds = round(seconds)
    if seconds < 60:
        return f"{seconds} s"
    minutes, seconds = divmod(seconds, 60)
    if minutes < 60:
        return f"{minutes} min {seconds:02d} s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes:02d} min"


def time_left(seconds: float | None) -> str:
    """``about 1 min 40 s left``, as every line that says it words it; empty when nothing
    is left or there is no estimate yet."""
    if not seconds or seconds <= 0:
        return ""
    return f"about {duration(max(seconds, 1.0))} left"


def rate(progress: RunProgress) -> str:
    """``0.50 items/s`` over the latest session."""
    speed = progress.items_per_second
    return "— items/s" if speed is None else f"{speed:.2f} items/s"


def speed(progress: RunProgress) -> str:
    """``0.50 items/s, about 1 min 40 s left``: the rate and, while the run goes on, the time
    left (``runs show``'s speed line and F4's live line word it alike)."""
    left = time_left(progress.eta_s)
    return f"{rate(progress)}, {left}" if left else rate(progress)


@dataclass(frozen=True)
class FigureRow:
    """One figure beside accuracy (or a family of them, ``BLEU-1/4``): name and fractions."""

    label: str
    values: tuple[float, ...]

    def text(self, *, percent: bool = False) -> str:
        return "/".join(number(value, percent=percent) for value in self.values)


def figure_rows(figures: Figures) -> list[FigureRow]:
    """The figures beside accuracy that apply to these predictions, in reading order:
    pairwise accuracy (orders), weighted and set F1 (multiple choice), the explanation
    metrics (CFLUE's protocol), and the accuracy of a random choice."""
    families = (
        ("pairwise", (figures.pairwise_accuracy,)),
        ("weighted F1", (figures.weighted_f1,)),
        ("set F1", (figures.set_f1,)),
        ("BLEU-1/4", (figures.bleu_1, figures.bleu_4)),
        ("ROUGE-1/2/L", (figures.rouge_1, figures.rouge_2, figures.rouge_l)),
        ("chance", (figures.chance,)),
    )
    return [
        FigureRow(label, tuple(value for value in values if value is not None))
        for label, values in families
        if all(value is not None for value in values)
    ]


FIGURE_TERMS: dict[str, str] = {
    "pairwise": "orders: the share of event pairs put in the key's relative order",
    "weighted F1": "multiple choice: F1 per answer, weighted by how often each is the key "
    "(CFLUE's figure)",
    "set F1": "multi-answer: overlap of the chosen letters with the key's (partial credit)",
    "BLEU-1/4": "the explanation's words against the item's analysis (CFLUE's protocol)",
    "ROUGE-1/2/L": "the explanation's words against the item's analysis (CFLUE's protocol)",
    "chance": "the accuracy of answering at random on these items (e.g. 1/n! for an "
    "order of n events, 1/k for one of k options)",
    "extractor": "NAME read N of M: the answers that reader found in the M outputs of "
    "the kinds it reads, and how many are right; the one that decides gives the "
    "accuracy above, the others are read beside it",
}
"""What the terms beside accuracy mean, one short line each, for a legend under them."""


def legend_lines(figures: Figures) -> list[str]:
    """``chance: the accuracy of ...`` for each term :func:`figure_rows` and the extractor
    lines print for ``figures``, in their order (nothing where none is printed)."""
    terms = [row.label for row in figure_rows(figures)]
    if figures.extractors:
        terms.append("extractor")
    names_by_meaning: dict[str, list[str]] = {}  # BLEU and ROUGE say the same: one line
    for term in terms:
        names_by_meaning.setdefault(FIGURE_TERMS[term], []).append(term)
    return [f"{', '.join(names)}: {meaning}" for meaning, names in names_by_meaning.items()]


def secondary_text(figures: Figures, *, percent: bool = False) -> str:
    """:func:`figure_rows` on one line: ``pairwise 75.0%, chance 4.2%``."""
    rows = figure_rows(figures)
    return ", ".join(f"{row.label} {row.text(percent=percent)}" for row in rows) or "—"


def extractor_text(name: str, read: ExtractorFigures, *, percent: bool = False) -> str:
    """``cflue read 18 of 20, right 9 (0.450)``: what one extractor recovered."""
    return (
        f"{name} read {read.parsed} of {read.parsed + read.unparsed}, "
        f"right {read.correct} ({number(read.accuracy, percent=percent)})"
    )


def position_text(figures: Figures, *, percent: bool = False, with_bias: bool = True) -> str:
    """Accuracy by the label the key was shown under, and (``with_bias``) the spread
    between them (``A 1.000 (n=1)  B 0.000 (n=3)  bias 1.000``); empty without key
    positions."""
    if not figures.key_positions:
        return ""
    shown = "  ".join(
        f"{label} {number(row.accuracy, percent=percent)} (n={row.n})"
        for label, row in figures.key_positions.items()
    )
    bias = figures.position_bias
    if not with_bias or bias is None:
        return shown
    return f"{shown}  bias {number(bias, percent=percent)}"


def shots_label(run: RunRecord) -> str:
    """The shots a run's prompts got: ``5-shot`` when every kind got what the run asked
    for, else each kind's: ``ordering 0-shot (5 asked), single 5-shot``."""
    return run.params.shot_counts(run.shots).label()


def run_how(run: RunRecord) -> str:
    """How a run asks: ``transformers, generate, 5-shot, cflue protocol, repeat 2/3,
    options permuted`` (the protocol, a layout or deciding reader not the protocol's own,
    repeat and permutation only when they apply; the shots as :func:`shots_label` says
    them)."""
    params = run.params
    parts = [run.backend, run.mode.value, shots_label(run)]
    if params.protocol is not EvalProtocol.CUSTOM:
        parts.append(f"{params.protocol.value} protocol")
    parts += run_departures(params)
    if params.repeat is not None and params.repeat.count > 1:  # a protocol's series: no repeat
        parts.append(f"repeat {params.repeat.index + 1}/{params.repeat.count}")
    if params.permute_options:
        parts.append("options permuted")
    return ", ".join(parts)


def run_state(run: RunRecord) -> str:
    """Its status, saying when a run marked running has lost its process."""
    return run.status + (" (stale: its process is gone)" if run.stale else "")


def score_items(scores: Score | None) -> tuple[list[str], dict[str, JsonValue]]:
    """A prediction's stored scores as ``name value`` texts (each value as JSON writes
    it, its fractions as every figure is: ``pairwise 0.667``), and score mode's
    log-likelihoods by candidate, apart (one line each)."""
    stored = {} if scores is None else scores.to_json()
    likelihoods = stored.pop("log_likelihoods", None)
    items = [f"{name} {_score_text(value)}" for name, value in stored.items()]
    return items, likelihoods if isinstance(likelihoods, dict) else {}


def _score_text(value: JsonValue) -> str:
    """One stored score as JSON writes it, but a fraction by :func:`number` (three
    decimals, as every figure; other numbers to three decimals too), nested ones included."""
    if isinstance(value, float):
        return number(value) if 0 <= value <= 1 else f"{value:.3f}"
    if isinstance(value, dict):
        inner = (
            f"{json.dumps(key, ensure_ascii=False)}: {_score_text(v)}" for key, v in value.items()
        )
        return "{" + ", ".join(inner) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(map(_score_text, value)) + "]"
    return json.dumps(value, ensure_ascii=False)

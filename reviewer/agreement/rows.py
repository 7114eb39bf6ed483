"""The agreement figures as labelled rows: one list shared by the CLI table, the
Markdown report and the TUI screen, so the three always show the same things; and the
consensus's reliability rows, shared by `vetbench consensus` and F2 likewise."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from db.kappa_paradox import DECIMALS
from db.vocabulary import ItemKind, values
from reviewer.agreement.annotators import AnnotatorStats
from reviewer.agreement.bootstrap import Figure
from reviewer.agreement.summary import AgreementFigures

if TYPE_CHECKING:
    from db.consensus import RaterReliability

KIND_ORDER = values(ItemKind)


@dataclass(frozen=True)
class FigureRow:
    label: str
    figure: Figure
    note: str = ""  # e.g. the distance or the number of raters


def headline_rows(figures: AgreementFigures) -> list[FigureRow]:
    """Every headline figure, in reading order."""
    verdict, binary = figures.verdict, figures.keep_drop
    raters = f"{verdict.fleiss_raters} raters per item" if verdict.fleiss_raters else ""
    rows = [
        FigureRow("Krippendorff's alpha, verdicts", verdict.alpha),
        FigureRow("Krippendorff's alpha, keep/drop", binary.alpha),
        FigureRow("Fleiss' kappa, verdicts", verdict.fleiss, raters),
        FigureRow("Fleiss' kappa, keep/drop", binary.fleiss, raters),
        FigureRow("Raw agreement, verdicts", verdict.percent, "share of agreeing pairs"),
        FigureRow("Raw agreement, keep/drop", binary.percent, "share of agreeing pairs"),
        FigureRow("Raw agreement, blind answers", figures.answer_percent, "share of equal pairs"),
    ]
    for kind in KIND_ORDER:
        if kind in figures.answer_alpha:
            alpha = figures.answer_alpha[kind]
            rows.append(
                FigureRow(f"Krippendorff's alpha, {kind} answers", alpha.alpha, alpha.distance)
            )
    orders = figures.orders
    rows += [
        FigureRow("Exact order agreement", orders.exact, "ordering items"),
        FigureRow("Mean Kendall's tau", orders.mean_tau, "ordering items"),
        FigureRow("Mean Kendall's W", orders.mean_w, "per item, averaged"),
        FigureRow("Blind answers equal to the key", figures.key.overall, "n = judgments"),
    ]
    return rows


HEADLINE_COLUMNS = ("statistic", "value", "95% CI", "n", "note")


def headline_cells(figures: AgreementFigures) -> list[tuple[str, str, str, str, str]]:
    """The headline table of `vetbench agreement` and the report, under
    :data:`HEADLINE_COLUMNS`: each figure's label, value, interval (or why it is not
    defined), n and note."""
    return [
        (row.label, value_text(row.figure), detail_text(row.figure), f"{row.figure.n:,}", row.note)
        for row in headline_rows(figures)
    ]


@dataclass(frozen=True)
class AnnotatorCells:
    """One annotator's figures as table cells; each table lists the ones it has room for."""

    judged: str
    keep_rate: str
    agreement: tuple[str, str, str, str]  # verdicts agree, answers agree, answer = key,
    # agrees with the decision
    median_seconds: str  # "20", or "20 (1 of 8 timed)" when some judgments have no time
    verdicts_given: str  # "keep 12, flawed 3"


def annotator_cells(stats: AnnotatorStats) -> AnnotatorCells:
    agreement = (
        stats.verdict_agreement,
        stats.answer_agreement,
        stats.key_agreement,
        stats.decision_agreement,
    )
    first, second, third, fourth = (value_text(figure) for figure in agreement)
    return AnnotatorCells(
        judged=f"{stats.judgments:,}",
        keep_rate=percent_text(stats.keep_rate),
        agreement=(first, second, third, fourth),
        median_seconds=median_seconds_text(stats),
        verdicts_given=", ".join(f"{name} {count}" for name, count in stats.verdicts.items()),
    )


def median_seconds_text(stats: AnnotatorStats, number: str = "{:.0f}") -> str:
    """The median time of the judgments with a recorded time (written by ``number``):
    ``20``, or ``20 (1 of 8 timed)`` when some have none (0 s: a sheet row without
    ``seconds``, a `judge` without ``--seconds``), which the median leaves out; ``— (0 of
    8 timed)``."""
    median = "—" if stats.median_seconds is None else number.format(stats.median_seconds)
    if stats.timed >= stats.judgments:
        return median
    return f"{median} ({stats.timed:,} of {stats.judgments:,} timed)"


RELIABILITY_COLUMNS = ("rater", "kind", "reliability", "interval", "answers", "note")


def reliability_cells(rater: RaterReliability) -> tuple[str, str, str, str, str, str]:
    """One rater's row of the consensus's reliability table (F2's Annotators tab and
    `vetbench consensus`), under :data:`RELIABILITY_COLUMNS`; the name is the caller's
    to make safe for its medium."""
    return (
        rater.name,
        rater.kind,
        f"{rater.reliability:.2f}",
        f"{rater.low:.2f}–{rater.high:.2f}",
        f"{rater.n:,}",
        rater.note,
    )


def value_text(figure: Figure, digits: int = DECIMALS) -> str:
    return "—" if figure.value is None else f"{figure.value:.{digits}f}"


def percent_text(figure: Figure) -> str:
    """``83%``, or ``—`` for a share that is not defined."""
    return "—" if figure.value is None else f"{figure.value:.0%}"


def detail_text(figure: Figure) -> str:
    """The cell beside a figure's value: its interval, or why it is not defined."""
    return interval_text(figure) if figure.defined else figure.reason or ""


def pair_rows(figures: AgreementFigures) -> list[tuple[str, str, list[str]]]:
    """Each pair of annotators and its Cohen's kappa as table cells: on all verdicts, on
    keep/drop, and how many items both judged; the names are the caller's to join and
    make safe for its medium."""
    pairs = zip(figures.verdict.cohen, figures.keep_drop.cohen, strict=True)
    return [
        (
            full.first,
            full.second,
            [figure_text(full.kappa), figure_text(binary.kappa), f"{full.kappa.n:,}"],
        )
        for full, binary in pairs
    ]


BREAKDOWN_COLUMNS = (
    "compared",
    "alpha verdicts",
    "alpha keep/drop",
    "alpha answers",
    "answer = key",
    "likely wrong keys",
)
"""The columns of :func:`breakdown_cells`, after the group's name."""


def breakdown_cells(
    group: AgreementFigures, reasons: list[str], *, answer_intervals: bool = False
) -> list[str]:
    """One group's (a kind's, a source's) row of the breakdown, under
    :data:`BREAKDOWN_COLUMNS`: items compared, alpha on verdicts and on keep/drop, each
    kind's alpha on answers (with its interval where ``answer_intervals``), blind answers
    equal to the key, likely wrong keys.  A figure that is not defined reads ``— (1)``,
    its reason appended to ``reasons`` for the table's notes (:func:`footnoted`)."""
    # in reading order, so that the notes' numbers run down the table
    verdicts = footnoted(group.verdict.alpha, reasons)
    keep_drop = footnoted(group.keep_drop.alpha, reasons)
    answers = [
        f"{kind} {footnoted(alpha.alpha, reasons, interval=answer_intervals)}"
        for kind, alpha in group.answer_alpha.items()
    ]
    return [
        f"{group.items_compared:,}",
        verdicts,
        keep_drop,
        ", ".join(answers),
        value_text(group.key.overall),
        str(len(group.key.likely_wrong_keys)),
    ]


@dataclass(frozen=True)
class BreakdownTable:
    """One breakdown (by kind, by source) as a table: each group's name and cells under
    :data:`BREAKDOWN_COLUMNS`, then the notes its ``— (1)`` cells refer to."""

    rows: list[tuple[str, list[str]]]
    notes: list[str]


def breakdown_table(
    groups: dict[str, AgreementFigures], *, answer_intervals: bool = False
) -> BreakdownTable:
    """The table of one breakdown, its notes numbered from 1 (:func:`breakdown_cells`);
    the names are the caller's to make safe for its medium."""
    reasons: list[str] = []
    rows = [
        (name, breakdown_cells(group, reasons, answer_intervals=answer_intervals))
        for name, group in groups.items()
    ]
    return BreakdownTable(rows, numbered_notes(reasons))


def footnoted(figure: Figure, reasons: list[str], *, interval: bool = True) -> str:
    """A figure's cell where a table has no room for sentences: its value (and interval),
    or ``— (2)`` when it is undefined, ``reasons[1]`` saying why (each reason listed once,
    under the table).  A reason in the cell made its column as wide as the sentence and
    pushed the columns after it off the screen, even at 150 columns."""
    if figure.defined:
        return figure_text(figure) if interval else value_text(figure)
    if not figure.reason:
        return "—"
    if figure.reason not in reasons:
        reasons.append(figure.reason)
    return f"— ({reasons.index(figure.reason) + 1})"


def numbered_notes(reasons: list[str]) -> list[str]:
    """The notes under a table whose cells say ``— (1)``: ``(1) why``, one a line."""
    return [f"({number}) {reason}" for number, reason in enumerate(reasons, start=1)]


def figure_text(figure: Figure) -> str:
    """``0.812 [0.701, 0.904]``: the value and, when there is one, its interval."""
    return f"{value_text(figure)} {interval_text(figure)}".strip()


def interval_text(figure: Figure, digits: int = 3) -> str:
    if figure.ci95 is None:
        return ""
    low, high = figure.ci95
    return f"[{low:.{digits}f}, {high:.{digits}f}]"

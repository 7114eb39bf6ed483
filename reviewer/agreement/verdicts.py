"""Agreement on verdicts: over the seven verdict categories, and collapsed to keep/drop.

Point estimates come from the reference libraries (``krippendorff``,
statsmodels' ``fleiss_kappa``, scikit-learn's ``cohen_kappa_score``).  For the
intervals, alpha and Fleiss' kappa on both codings share one resampling of the
compared items, and each annotator pair's two Cohen's kappas share one
resampling of the items both judged: a keep/drop pattern is a function of the
verdict pattern, so its weights are carried over instead of drawn again.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from db.serial_imports import one_thread_importing
from reviewer.agreement.bootstrap import (
    BootstrapSettings,
    Figure,
    WeightedStatistic,
    with_intervals,
)
from reviewer.agreement.coefficients import (
    FloatArray,
    IntArray,
    alpha_statistic,
    coarsen,
    cohen_statistic,
    fleiss_statistic,
    restrict,
    unit_patterns,
)
from reviewer.agreement.data import KEEP, JudgmentData, within_unit_pairs
from reviewer.agreement.nominal import (
    Codes,
    alpha_point,
    fleiss_point,
    modal_raters,
    percent_agreement,
)

KEEP_DROP_LABELS = ("keep", "drop")


@dataclass(frozen=True)
class PairKappa:
    """Cohen's kappa of two annotators over the items both judged."""

    first: str
    second: str
    kappa: Figure


@dataclass(frozen=True)
class VerdictAgreement:
    """Agreement on one coding of the verdicts (all categories, or keep/drop)."""

    alpha: Figure
    fleiss: Figure
    fleiss_raters: int | None  # judgments per item in the Fleiss subset
    percent: Figure
    cohen: list[PairKappa]


def keep_drop_mapping(data: JudgmentData) -> IntArray:
    """Verdict code -> 0 (keep) or 1 (drop)."""
    return (np.arange(len(data.verdict_names)) != KEEP).astype(np.int64)


def verdict_codes(data: JudgmentData, *, keep_drop: bool) -> Codes:
    """Each judgment's verdict as a category code; keep/drop maps every non-keep verdict to drop."""
    if keep_drop:
        codes = keep_drop_mapping(data)[data.row_verdict]
        return Codes(data.row_unit, data.row_annotator, codes, KEEP_DROP_LABELS, data.n_units)
    return Codes(
        data.row_unit, data.row_annotator, data.row_verdict, data.verdict_names, data.n_units
    )


def verdict_agreement(
    data: JudgmentData, settings: BootstrapSettings, *, with_pairs: bool = True
) -> tuple[VerdictAgreement, VerdictAgreement]:
    """Agreement over all verdicts and over keep/drop: alpha, Fleiss' kappa, raw agreement
    and (``with_pairs``) Cohen's kappa for every pair of annotators."""
    full = verdict_codes(data, keep_drop=False)
    binary = verdict_codes(data, keep_drop=True)
    raters = modal_raters(full)
    figures = [
        alpha_point(full, what="verdict"),
        alpha_point(binary, what="keep/drop verdict"),
        fleiss_point(full, raters, what="verdict"),
        fleiss_point(binary, raters, what="keep/drop verdict"),
    ]
    patterns = unit_patterns(full.row_unit, full.codes, full.n_units, full.n_values)
    if patterns.n_units:
        coarse, carry = coarsen(patterns, keep_drop_mapping(data), len(KEEP_DROP_LABELS))
        rated = patterns.sizes == raters
        full_fleiss = fleiss_statistic(restrict(patterns, rated), raters or 2)
        coarse_fleiss = fleiss_statistic(restrict(coarse, coarse.sizes == raters), raters or 2)
        coarse_rated = coarse.sizes == raters
        full_alpha, coarse_alpha = alpha_statistic(patterns), alpha_statistic(coarse)
        figures = with_intervals(
            figures,
            [
                full_alpha,
                _carried(coarse_alpha, carry),
                lambda weights: full_fleiss(weights[:, rated]),
                _carried(coarse_fleiss, carry[:, coarse_rated]),
            ],
            patterns.counts,
            settings,
            "verdict",
        )
    pairs = cohen_kappa_pairs(data, settings) if with_pairs else ([], [])
    return (
        VerdictAgreement(figures[0], figures[2], raters, percent_agreement(full), pairs[0]),
        VerdictAgreement(figures[1], figures[3], raters, percent_agreement(binary), pairs[1]),
    )


def _carried(statistic: WeightedStatistic, carry: FloatArray) -> WeightedStatistic:
    """``statistic`` of coarse patterns, taking the weights of the fine patterns."""
    return lambda weights: statistic(weights @ carry)


def _cohen_point(cells: IntArray, counts: IntArray, n_values: int, labels: Sequence[str]) -> Figure:
    """Cohen's kappa (scikit-learn) from confusion cells ``first * n_values + second``."""
    with one_thread_importing():
        from sklearn.metrics import cohen_kappa_score

    first, second = np.divmod(cells, n_values)
    total = int(counts.sum())
    first_share = np.bincount(first, weights=counts, minlength=n_values) / total
    second_share = np.bincount(second, weights=counts, minlength=n_values) / total
    if np.isclose((first_share * second_share).sum(), 1.0):
        return Figure.undefined(
            f"both gave every shared item the same verdict ({labels[int(first[0])]}), "
            "so chance agreement is total",
            n=total,
        )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # scikit-learn warns about labels absent from one side
        value = cohen_kappa_score(first, second, labels=np.arange(n_values), sample_weight=counts)
    return Figure.of(value, total)


def _coarse_cells(cells: IntArray, n_values: int, mapping: IntArray) -> tuple[IntArray, FloatArray]:
    """Keep/drop confusion cells of verdict cells, and the matrix carrying weights across."""
    first, second = np.divmod(cells, n_values)
    coarse = mapping[first] * 2 + mapping[second]
    distinct, inverse = np.unique(coarse, return_inverse=True)
    carry = np.zeros((cells.size, distinct.size))
    carry[np.arange(cells.size), inverse] = 1.0
    return distinct, carry


def cohen_kappa_pairs(
    data: JudgmentData, settings: BootstrapSettings
) -> tuple[list[PairKappa], list[PairKappa]]:
    """Cohen's kappa over all verdicts and over keep/drop for every pair of annotators
    with at least one item judged by both, in name order."""
    names = data.annotator_names
    n_values = len(data.verdict_names)
    mapping = keep_drop_mapping(data)
    first, second = within_unit_pairs(data.row_unit)
    # Rows are sorted by annotator within a unit, so the first row has the lower index.
    pair_id = data.row_annotator[first] * len(names) + data.row_annotator[second]
    cell = data.row_verdict[first] * n_values + data.row_verdict[second]
    # Count each (pair, cell) once: kappa depends on the confusion table only.
    keys, counts = np.unique(pair_id * n_values**2 + cell, return_counts=True)
    pair_of_key, cell_of_key = np.divmod(keys, n_values**2)
    full: list[PairKappa] = []
    binary: list[PairKappa] = []
    for pair in np.unique(pair_of_key).tolist():
        selected = pair_of_key == pair
        cells, cell_counts = cell_of_key[selected], counts[selected]
        a, b = divmod(pair, len(names))
        first_name, second_name = sorted((names[a], names[b]))
        coarse_cells, carry = _coarse_cells(cells, n_values, mapping)
        coarse_counts = (cell_counts @ carry).astype(np.int64)
        full_kappa, coarse_kappa = (
            cohen_statistic(cells, n_values),
            cohen_statistic(coarse_cells, 2),
        )
        kappas = with_intervals(
            [
                _cohen_point(cells, cell_counts, n_values, data.verdict_names),
                _cohen_point(coarse_cells, coarse_counts, 2, KEEP_DROP_LABELS),
            ],
            [full_kappa, _carried(coarse_kappa, carry)],
            cell_counts,
            settings,
            f"cohen/{first_name}/{second_name}",
        )
        full.append(PairKappa(first_name, second_name, kappas[0]))
        binary.append(PairKappa(first_name, second_name, kappas[1]))
    order = sorted(range(len(full)), key=lambda index: (full[index].first, full[index].second))
    return [full[index] for index in order], [binary[index] for index in order]

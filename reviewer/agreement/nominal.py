"""Agreement on categorical codes per judgment: alpha, Fleiss' kappa, raw agreement.

The same functions serve verdicts (7 categories, or keep/drop) and blind answers
(each distinct answer a category); Cohen's kappa per pair is in ``verdicts``.  Point estimates come from the reference
libraries (``krippendorff``, statsmodels, scikit-learn); intervals from the
vectorised bootstrap in ``bootstrap`` and ``coefficients``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from db.serial_imports import one_thread_importing
from reviewer.agreement.bootstrap import BootstrapSettings, Figure, with_interval
from reviewer.agreement.coefficients import alpha_statistic, unit_patterns
from reviewer.agreement.data import within_unit_pairs

IntArray = NDArray[np.int64]
FloatArray = NDArray[np.float64]

NO_PAIRS = "no item has judgments from two annotators"


@dataclass(frozen=True)
class Codes:
    """One categorical code per judgment row, with the category names."""

    row_unit: IntArray  # sorted
    row_annotator: IntArray
    codes: IntArray
    labels: Sequence[str]
    n_units: int

    @property
    def n_values(self) -> int:
        return len(self.labels)


def import_reference_libraries() -> None:
    """Import krippendorff, statsmodels and scikit-learn now (they take a second or two)."""
    with one_thread_importing():
        import krippendorff  # noqa: F401
        from sklearn.metrics import cohen_kappa_score  # noqa: F401
        from statsmodels.stats.inter_rater import fleiss_kappa  # noqa: F401


def _pairable_value_counts(codes: Codes) -> tuple[FloatArray, IntArray]:
    """(units with two or more judgments) x categories counts, and the used categories."""
    table = np.bincount(
        codes.row_unit * codes.n_values + codes.codes, minlength=codes.n_units * codes.n_values
    ).reshape(codes.n_units, codes.n_values)
    pairable = table[table.sum(axis=1) >= 2]
    used = np.flatnonzero(pairable.sum(axis=0))
    return pairable.astype(np.float64), used


def _one_category_reason(codes: Codes, used: IntArray, what: str) -> str:
    return (
        f"every compared judgment has the same {what} ({codes.labels[int(used[0])]}); "
        "the coefficient needs two categories in use"
    )


def alpha_point(codes: Codes, *, what: str = "value") -> Figure:
    """Nominal Krippendorff's alpha (the ``krippendorff`` package) over every unit judged
    at least twice, missing judgments allowed; no interval."""
    with one_thread_importing():
        import krippendorff

    table, used = _pairable_value_counts(codes)
    if table.shape[0] == 0:
        return Figure.undefined(NO_PAIRS)
    if used.size < 2:
        return Figure.undefined(_one_category_reason(codes, used, what), n=table.shape[0])
    value = krippendorff.alpha(value_counts=table[:, used], level_of_measurement="nominal")
    return Figure.of(value, table.shape[0])


def krippendorff_alpha(
    codes: Codes, settings: BootstrapSettings, name: str, *, what: str = "value"
) -> Figure:
    """Nominal Krippendorff's alpha with its bootstrap interval."""
    figure = alpha_point(codes, what=what)
    patterns = unit_patterns(codes.row_unit, codes.codes, codes.n_units, codes.n_values)
    return with_interval(figure, alpha_statistic(patterns), patterns.counts, settings, name)


def distance_alpha(
    codes: Codes,
    distance: FloatArray | None,
    settings: BootstrapSettings,
    name: str,
    *,
    what: str = "value",
) -> Figure:
    """Krippendorff's alpha with a distance matrix over the categories (None: nominal).

    For value domains too large for the ``krippendorff`` package's dense
    (units x values x values) arrays, and for distances it does not offer (MASI).
    """
    patterns = unit_patterns(codes.row_unit, codes.codes, codes.n_units, codes.n_values)
    if patterns.n_units == 0:
        return Figure.undefined(NO_PAIRS)
    used = np.unique(patterns.codes[patterns.codes >= 0])
    if used.size < 2:
        return Figure.undefined(_one_category_reason(codes, used, what), n=patterns.n_units)
    statistic = alpha_statistic(patterns, distance)
    value = float(statistic(patterns.counts[None, :].astype(np.float64))[0])
    figure = Figure.of(value, patterns.n_units)
    return with_interval(figure, statistic, patterns.counts, settings, name)


def modal_raters(codes: Codes) -> int | None:
    """The most common number of judgments among units judged at least twice (ties: larger)."""
    sizes = np.bincount(codes.row_unit, minlength=codes.n_units)
    sizes = sizes[sizes >= 2]
    if sizes.size == 0:
        return None
    frequency = np.bincount(sizes)
    return int(np.flatnonzero(frequency == frequency.max())[-1])


def fleiss_point(codes: Codes, raters: int | None, *, what: str = "value") -> Figure:
    """Fleiss' kappa (statsmodels) over the units with exactly ``raters`` judgments; no interval.

    Fleiss' kappa needs the same number of ratings per item; units judged more or
    fewer times are left out (Krippendorff's alpha uses them all).
    """
    with one_thread_importing():
        from statsmodels.stats.inter_rater import fleiss_kappa

    if raters is None:
        return Figure.undefined(NO_PAIRS)
    sizes = np.bincount(codes.row_unit, minlength=codes.n_units)
    rows = (sizes == raters)[codes.row_unit]
    table = np.bincount(
        codes.row_unit[rows] * codes.n_values + codes.codes[rows],
        minlength=codes.n_units * codes.n_values,
    ).reshape(codes.n_units, codes.n_values)
    table = table[sizes == raters]
    used = np.flatnonzero(table.sum(axis=0))
    if used.size < 2:
        return Figure.undefined(_one_category_reason(codes, used, what), n=table.shape[0])
    return Figure.of(fleiss_kappa(table[:, used], method="fleiss"), table.shape[0])


def per_unit_pair_agreement(codes: Codes) -> tuple[FloatArray, IntArray]:
    """Per unit judged at least twice: the share of annotator pairs giving the same code."""
    first, second = within_unit_pairs(codes.row_unit)
    unit = codes.row_unit[first]
    same = (codes.codes[first] == codes.codes[second]).astype(np.float64)
    pairs = np.bincount(unit, minlength=codes.n_units)
    agreeing = np.bincount(unit, weights=same, minlength=codes.n_units)
    compared = np.flatnonzero(pairs)
    return agreeing[compared] / pairs[compared], compared


def percent_agreement(codes: Codes) -> Figure:
    """Raw agreement: per item, the share of annotator pairs that agree; averaged over items."""
    shares, _ = per_unit_pair_agreement(codes)
    if shares.size == 0:
        return Figure.undefined(NO_PAIRS)
    return Figure.of(float(shares.mean()), int(shares.size))

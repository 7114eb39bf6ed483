"""Chance-corrected agreement coefficients over weighted unit patterns, vectorised.

A *pattern* is a distinct unit: the sorted value codes its annotators gave.
Each function takes a (resamples x patterns) weight matrix and returns one
coefficient per row; the point estimate is the single row of true counts, a
bootstrap resample is a row of multinomial counts (see ``bootstrap``).

- Krippendorff's alpha uses the coincidence-matrix formulation with any
  distance matrix over the values: alpha = 1 - (n - 1) * sum_u D_u / n'Dn,
  where D_u = sum over ordered pairs of values in unit u of their distance,
  divided by (m_u - 1), and n holds the pairable values per category.
- Fleiss' kappa for units with the same number of ratings.
- Cohen's kappa from a confusion table of two annotators.

The product's point estimates come from the reference libraries where they fit
(``krippendorff``, ``statsmodels``, ``scikit-learn``); tests check that these
formulas give the same numbers, so the intervals are centred on the same thing.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import NDArray

from db.serial_imports import one_thread_importing
from reviewer.agreement.bootstrap import WeightedStatistic

if TYPE_CHECKING:
    from scipy import sparse

IntArray = NDArray[np.int64]
FloatArray = NDArray[np.float64]

# MASI's monotonicity weight: identical sets, one a subset of the other, overlapping, disjoint.
_MASI_IDENTICAL, _MASI_SUBSET, _MASI_OVERLAP = 1.0, 2.0 / 3.0, 1.0 / 3.0


@dataclass(frozen=True)
class Patterns:
    """Distinct units as sorted value codes (``-1`` pads shorter units) and their unit counts."""

    codes: IntArray  # patterns x max judgments per unit
    counts: IntArray  # units showing each pattern
    n_values: int  # codes run from 0 to n_values - 1

    @property
    def n_units(self) -> int:
        return int(self.counts.sum())

    @property
    def sizes(self) -> IntArray:
        return (self.codes >= 0).sum(axis=1)

    def value_counts(self) -> sparse.csr_array:
        """(patterns x values) counts of each value in each pattern."""
        with one_thread_importing():  # scipy is imported by whichever thread needs it first
            from scipy import sparse

        rows, positions = np.nonzero(self.codes >= 0)
        values = self.codes[rows, positions]
        return sparse.csr_array(
            (np.ones(values.size), (rows, values)), shape=(self.codes.shape[0], self.n_values)
        )

    def dense_value_counts(self) -> FloatArray:
        return self.value_counts().toarray()


def unit_patterns(
    row_unit: IntArray,
    row_code: IntArray,
    n_units: int,
    n_values: int,
    *,
    min_size: int = 2,
    exact_size: int | None = None,
) -> Patterns:
    """Group units (rows sorted by unit) by the multiset of their codes.

    Keeps units with at least ``min_size`` codes, or exactly ``exact_size``.
    """
    sizes = np.bincount(row_unit, minlength=n_units)
    wanted = sizes == exact_size if exact_size is not None else sizes >= min_size
    keep_rows = wanted[row_unit]
    if not keep_rows.any():
        return Patterns(np.zeros((0, 1), dtype=np.int64), np.zeros(0, dtype=np.int64), n_values)
    units = row_unit[keep_rows]
    codes = row_code[keep_rows]
    starts = np.concatenate(([0], np.flatnonzero(np.diff(units)) + 1))
    unit_number = np.cumsum(np.concatenate(([0], (np.diff(units) != 0).astype(np.int64))))
    position = np.arange(units.size) - starts[unit_number]
    width = int(sizes[wanted].max())
    padding = np.iinfo(np.int64).max  # sorts after every code
    table = np.full((starts.size, width), padding, dtype=np.int64)
    table[unit_number, position] = codes
    table.sort(axis=1)
    table[table == padding] = -1
    base = n_values + 1
    if width * np.log2(base) < 62:
        # One integer per unit (digits code + 1 in base n_values + 1): a 1-D unique is fast.
        signature = ((table + 1) * base ** np.arange(width, dtype=np.int64)).sum(axis=1)
        _, first, counts = np.unique(signature, return_index=True, return_counts=True)
        distinct = table[first]
    else:
        distinct, counts = np.unique(table, axis=0, return_counts=True)
    return Patterns(distinct.astype(np.int64), counts.astype(np.int64), n_values)


def _pair_distance_sums(patterns: Patterns, distance: FloatArray | None) -> FloatArray:
    """Per pattern: the sum of distances over ordered pairs of its values, over (m - 1)."""
    codes = patterns.codes
    total = np.zeros(codes.shape[0])
    for first, second in combinations(range(codes.shape[1]), 2):
        a, b = codes[:, first], codes[:, second]
        valid = (a >= 0) & (b >= 0)
        if distance is None:
            pair = (a != b).astype(np.float64)
        else:
            pair = distance[np.where(valid, a, 0), np.where(valid, b, 0)]
        total += np.where(valid, 2.0 * pair, 0.0)
    sizes = patterns.sizes
    return np.divide(total, sizes - 1, out=np.zeros_like(total), where=sizes > 1)


def alpha_statistic(patterns: Patterns, distance: FloatArray | None = None) -> WeightedStatistic:
    """Krippendorff's alpha as a function of pattern weights (None distance = nominal)."""
    observed = _pair_distance_sums(patterns, distance)
    value_counts = patterns.value_counts()
    pairable = patterns.sizes >= 2

    def statistic(weights: FloatArray) -> FloatArray:
        weights = np.where(pairable, weights, 0.0)
        per_value = np.asarray((value_counts.T @ weights.T).T)  # resamples x values
        values = per_value.sum(axis=1)
        if distance is None:
            expected = values**2 - (per_value**2).sum(axis=1)
        else:
            expected = ((per_value @ distance) * per_value).sum(axis=1)
        numerator = (values - 1) * (weights @ observed)
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(expected > 0, 1.0 - numerator / expected, np.nan)

    return statistic


def fleiss_statistic(patterns: Patterns, raters: int) -> WeightedStatistic:
    """Fleiss' kappa as a function of pattern weights (every pattern has ``raters`` values)."""
    table = patterns.dense_value_counts()
    per_unit_agreement = ((table**2).sum(axis=1) - raters) / (raters * (raters - 1))

    def statistic(weights: FloatArray) -> FloatArray:
        units = weights.sum(axis=1)
        with np.errstate(divide="ignore", invalid="ignore"):  # a resample may lack such units
            observed = (weights @ per_unit_agreement) / units
            shares = (weights @ table) / (units * raters)[:, None]
            expected = (shares**2).sum(axis=1)
            return np.where(expected < 1.0, (observed - expected) / (1.0 - expected), np.nan)

    return statistic


def cohen_statistic(cells: IntArray, n_values: int) -> WeightedStatistic:
    """Cohen's kappa as a function of weights over confusion cells ``first * n_values + second``."""
    first, second = np.divmod(cells, n_values)
    agree = (first == second).astype(np.float64)
    first_onehot = np.eye(n_values)[first]
    second_onehot = np.eye(n_values)[second]

    def statistic(weights: FloatArray) -> FloatArray:
        total = weights.sum(axis=1)
        with np.errstate(divide="ignore", invalid="ignore"):
            observed = (weights @ agree) / total
            first_share = (weights @ first_onehot) / total[:, None]
            second_share = (weights @ second_onehot) / total[:, None]
            expected = (first_share * second_share).sum(axis=1)
            return np.where(expected < 1.0, (observed - expected) / (1.0 - expected), np.nan)

    return statistic


def letter_set_masks(values: Sequence[str]) -> IntArray:
    """Bit masks of answer letter sets: ``"ABD"`` -> 0b1011."""
    masks = np.zeros(len(values), dtype=np.int64)
    for index, value in enumerate(values):
        for letter in value:
            masks[index] |= 1 << (ord(letter) - ord("A"))
    return masks


def _popcount(masks: IntArray) -> IntArray:
    counts = np.zeros(masks.shape, dtype=np.int64)
    remaining = masks.copy()
    while remaining.any():
        counts += remaining & 1
        remaining >>= 1
    return counts


def masi_distance_matrix(values: Sequence[str]) -> FloatArray:
    """MASI distances (Passonneau 2006) between answer sets such as ``"AB"`` and ``"ABD"``.

    1 - Jaccard * m, where m is 1 for identical sets, 2/3 when one contains the
    other, 1/3 when they overlap otherwise and 0 when disjoint; nltk's
    ``masi_distance`` is the reference.
    """
    masks = letter_set_masks(values)
    a, b = masks[:, None], masks[None, :]
    intersection = _popcount(a & b)
    union = _popcount(a | b)
    size_a, size_b = _popcount(a), _popcount(b)
    monotonicity = np.select(
        [
            (size_a == size_b) & (size_a == intersection),
            intersection == np.minimum(size_a, size_b),
            intersection > 0,
        ],
        [_MASI_IDENTICAL, _MASI_SUBSET, _MASI_OVERLAP],
        default=0.0,
    )
    jaccard = np.divide(
        intersection, union, out=np.zeros(intersection.shape, dtype=np.float64), where=union > 0
    )
    distance = 1.0 - jaccard * monotonicity
    np.fill_diagonal(distance, 0.0)  # a value is at no distance from itself
    return distance


def coarsen(patterns: Patterns, mapping: IntArray, n_values: int) -> tuple[Patterns, FloatArray]:
    """The patterns after mapping every code through ``mapping`` (e.g. verdict -> keep/drop),
    and the (patterns x coarse patterns) 0/1 matrix that carries pattern weights across."""
    padding = np.iinfo(np.int64).max
    codes = np.where(patterns.codes >= 0, mapping[np.maximum(patterns.codes, 0)], padding)
    codes.sort(axis=1)
    codes[codes == padding] = -1
    distinct, inverse = np.unique(codes, axis=0, return_inverse=True)
    inverse = inverse.reshape(-1)
    counts = np.bincount(inverse, weights=patterns.counts, minlength=distinct.shape[0])
    carry = np.zeros((codes.shape[0], distinct.shape[0]))
    carry[np.arange(codes.shape[0]), inverse] = 1.0
    return Patterns(distinct.astype(np.int64), counts.astype(np.int64), n_values), carry


def restrict(patterns: Patterns, keep: NDArray[np.bool_]) -> Patterns:
    """Only the patterns where ``keep`` is true (e.g. those with the Fleiss number of raters)."""
    return Patterns(patterns.codes[keep], patterns.counts[keep], patterns.n_values)

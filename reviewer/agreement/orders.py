"""Agreement on blind orders of ordering items: exact matches, Kendall's tau, Kendall's W.

An order such as ``"DACB"`` ranks the events: D first, A second, ...  Orders are
turned into rank matrices (one row per judgment, one column per event letter)
so that every pair of annotators and every item is handled with array
operations.  Each item counts once: per-item means of the pairwise figures are
averaged over items.  A stored answer that is not a permutation of the judged
revision's events (which the review path does not allow) is left out of tau and W.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations

import numpy as np
from numpy.typing import NDArray

from db.answers import MAX_EVENTS
from db.vocabulary import ItemKind
from reviewer.agreement.bootstrap import Figure
from reviewer.agreement.data import JudgmentData, within_unit_pairs
from reviewer.agreement.nominal import NO_PAIRS

IntArray = NDArray[np.int64]
FloatArray = NDArray[np.float64]

NO_ORDERING = "no ordering item has judgments from two annotators"


@dataclass(frozen=True)
class ItemConcordance:
    """Kendall's W of one ordering item revision."""

    item_id: str
    revision: int
    w: float
    raters: int


@dataclass(frozen=True)
class OrderAgreement:
    exact: Figure  # per item: share of annotator pairs with the same order; mean over items
    mean_tau: Figure  # per item: mean Kendall's tau over annotator pairs; mean over items
    mean_w: Figure  # Kendall's W per item, averaged over items
    items: list[ItemConcordance]


def rank_matrix(answers: NDArray[np.str_]) -> tuple[IntArray, NDArray[np.bool_]]:
    """Ranks (0 = first) of events A, B, ... in each order, and whether it is a valid order.

    An order is valid when it places each of the first ``len(order)`` letters
    exactly once; invalid orders get -1 ranks.
    """
    count = answers.size
    ranks = np.full((count, MAX_EVENTS), -1, dtype=np.int64)
    if count == 0:
        return ranks, np.zeros(0, dtype=bool)
    lengths = np.char.str_len(answers).astype(np.int64)
    letters = np.char.ljust(answers.astype(f"<U{MAX_EVENTS}"), MAX_EVENTS)
    codes = letters.view(np.uint32).reshape(count, MAX_EVENTS).astype(np.int64) - ord("A")
    positions = np.arange(MAX_EVENTS)
    in_order = positions[None, :] < lengths[:, None]
    valid = (lengths >= 2) & (lengths <= MAX_EVENTS)
    valid &= np.all(~in_order | ((codes >= 0) & (codes < lengths[:, None])), axis=1)
    rows, columns = np.nonzero(in_order & valid[:, None])
    ranks[rows, codes[rows, columns]] = columns
    # Every event must be placed exactly once.
    valid &= np.all(~in_order | (ranks >= 0), axis=1)
    ranks[~valid] = -1
    return ranks, valid


def pair_tau(first: IntArray, second: IntArray, lengths: IntArray) -> FloatArray:
    """Kendall's tau between rank rows ``first[i]`` and ``second[i]`` over their ``lengths[i]`` events."""
    concordant = np.zeros(first.shape[0])
    compared = np.zeros(first.shape[0])
    for a, b in combinations(range(MAX_EVENTS), 2):
        both = b < lengths
        same_direction = (first[:, a] < first[:, b]) == (second[:, a] < second[:, b])
        concordant += np.where(both, same_direction, 0.0)
        compared += both
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(compared > 0, 2.0 * concordant / compared - 1.0, np.nan)


def order_agreement(data: JudgmentData, *, with_items: bool = True) -> OrderAgreement:
    """Exact-match rate, mean pairwise Kendall's tau and Kendall's W for ordering items.

    Without ``with_items`` the per-item W list stays empty (breakdowns only need the mean).
    """
    ordering = data.unit_kind == ItemKind.ORDERING.value
    rows = np.flatnonzero(ordering[data.row_unit])
    first, second = within_unit_pairs(data.row_unit[rows])
    if first.size == 0:
        undefined = Figure.undefined(
            NO_ORDERING if ordering.any() else "no ordering item was judged"
        )
        return OrderAgreement(undefined, undefined, undefined, [])
    first, second = rows[first], rows[second]
    unit_of_pair = data.row_unit[first]
    pairs_per_unit = np.bincount(unit_of_pair, minlength=data.n_units)
    compared_units = np.flatnonzero(pairs_per_unit)

    same = (data.row_answer[first] == data.row_answer[second]).astype(np.float64)
    exact_share = np.bincount(unit_of_pair, weights=same, minlength=data.n_units)[compared_units]
    exact = Figure.of(
        float((exact_share / pairs_per_unit[compared_units]).mean()), compared_units.size
    )

    # Ranks of each distinct answer once; a row's order must also fit its item's events.
    value_ranks, value_valid = rank_matrix(data.answer_values)
    value_lengths = np.char.str_len(data.answer_values).astype(np.int64)
    unit_lengths = value_lengths[data.unit_key]
    all_ranks = value_ranks[data.row_answer]
    all_valid = value_valid[data.row_answer] & (
        value_lengths[data.row_answer] == unit_lengths[data.row_unit]
    )
    all_valid &= value_valid[data.unit_key][data.row_unit]

    both_valid = all_valid[first] & all_valid[second]
    tau = pair_tau(all_ranks[first], all_ranks[second], unit_lengths[unit_of_pair])
    tau_pairs = np.bincount(unit_of_pair, weights=both_valid, minlength=data.n_units)
    tau_sums = np.bincount(
        unit_of_pair, weights=np.where(both_valid, tau, 0.0), minlength=data.n_units
    )
    tau_units = np.flatnonzero(tau_pairs)
    mean_tau = (
        Figure.of(float((tau_sums[tau_units] / tau_pairs[tau_units]).mean()), tau_units.size)
        if tau_units.size
        else Figure.undefined("no two valid orders of the same item")
    )

    mean_w, items = _kendall_w(data, rows[all_valid[rows]], all_ranks, unit_lengths, with_items)
    return OrderAgreement(exact, mean_tau, mean_w, items)


def _kendall_w(
    data: JudgmentData, rows: IntArray, ranks: IntArray, unit_lengths: IntArray, with_items: bool
) -> tuple[Figure, list[ItemConcordance]]:
    """Kendall's W (no ties) per item with at least two valid orders, and its mean."""
    units = data.row_unit[rows]
    raters = np.bincount(units, minlength=data.n_units)
    rank_sums = np.zeros((data.n_units, MAX_EVENTS))
    np.add.at(rank_sums, units, ranks[rows] + 1.0)  # ranks 1..n
    compared = np.flatnonzero(raters >= 2)
    if compared.size == 0:
        return Figure.undefined(NO_PAIRS.replace("item", "ordering item")), []
    m = raters[compared].astype(np.float64)
    n = unit_lengths[compared].astype(np.float64)
    mean_sum = m * (n + 1.0) / 2.0
    in_item = np.arange(MAX_EVENTS)[None, :] < n[:, None]
    spread = np.where(in_item, (rank_sums[compared] - mean_sum[:, None]) ** 2, 0.0).sum(axis=1)
    w = 12.0 * spread / (m**2 * (n**3 - n))
    if not with_items:
        return Figure.of(float(w.mean()), compared.size), []
    items = [
        ItemConcordance(str(item), int(revision), float(value), int(count))
        for item, revision, value, count in zip(
            data.unit_item[compared].tolist(),
            data.unit_revision[compared].tolist(),
            w.tolist(),
            raters[compared].tolist(),
            strict=True,
        )
    ]
    return Figure.of(float(w.mean()), compared.size), items

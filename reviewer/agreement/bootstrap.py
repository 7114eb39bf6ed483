"""Figures with 95% bootstrap confidence intervals, resampled over items, fast and seeded.

Every coefficient here (Krippendorff's alpha, Fleiss' kappa, Cohen's kappa) is
a function of sums over units.  Units that look the same (the same multiset of
values, or the same pair of values for Cohen) contribute the same terms, so a
statistic needs only its *distinct* unit patterns and how many units show each.
Resampling N units with replacement is then exactly a multinomial draw of
pattern counts, ``Multinomial(N, counts / N)``: a resample costs one draw per
distinct pattern instead of one per unit, and all resamples of a statistic are
evaluated together as a (resamples x patterns) weight matrix.

The default of 1000 resamples is the usual choice for percentile intervals
(Efron & Tibshirani); their ends then move between seeds by a few percent of
the interval's width.  For 40,000 items judged
by 3 annotators (``bench/bench_agreement.py``) every interval of the report
together (overall, by kind, by source, each annotator pair) costs about 0.5 s
of CPU on top of 0.5 s for the point estimates and 0.5 s for loading; 2000
resamples would add another 0.3 s.  Related coefficients share one resampling
(see ``with_intervals``).  Each resampling draws from its own random stream,
seeded by ``(seed, statistic name)``, so a figure does not change when other
figures are added.
"""

from __future__ import annotations

import math
import zlib
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from db.json_types import JsonObject

DEFAULT_RESAMPLES = 1000
DEFAULT_SEED = 20240601
# Weight matrices are built in chunks of about this many cells (resamples x patterns).
_CHUNK_CELLS = 2_000_000
# Patterns shown by at most this many units are drawn unit by unit (see resample_weights).
_RARE_PATTERN_UNITS = 16
# Fewer usable resamples than this share means the interval is not reported.
_MIN_DEFINED_SHARE = 0.5

WeightedStatistic = Callable[[NDArray[np.float64]], NDArray[np.float64]]


@dataclass(frozen=True)
class BootstrapSettings:
    """How many resamples to draw (0 turns intervals off) and the seed that makes them repeatable."""

    resamples: int = DEFAULT_RESAMPLES
    seed: int = DEFAULT_SEED

    def rng(self, name: str) -> np.random.Generator:
        """The random stream of one named statistic."""
        return np.random.default_rng([self.seed, zlib.crc32(name.encode("utf-8"))])


@dataclass(frozen=True)
class Figure:
    """One statistic: its value (None when undefined, with the reason), its 95% interval
    (None when not computed or not defined) and ``n``, what it was computed over."""

    value: float | None
    n: int
    ci95: tuple[float, float] | None = None
    reason: str | None = None

    @classmethod
    def undefined(cls, reason: str, n: int = 0) -> Figure:
        return cls(value=None, n=n, reason=reason)

    @classmethod
    def of(cls, value: float, n: int, reason: str | None = None) -> Figure:
        """A figure from a computed value; NaN becomes None with ``reason``."""
        if value is None or not math.isfinite(value):
            return cls(value=None, n=n, reason=reason or "undefined for these judgments")
        return cls(value=float(value), n=n)

    @property
    def defined(self) -> bool:
        return self.value is not None

    def to_json(self) -> JsonObject:
        data: JsonObject = {
            "value": None if self.value is None else round(self.value, 6),
            "ci95": None if self.ci95 is None else [round(self.ci95[0], 6), round(self.ci95[1], 6)],
            "n": self.n,
        }
        if self.reason:
            data["reason"] = self.reason
        return data


def resample_weights(
    counts: NDArray[np.int64], settings: BootstrapSettings, name: str
) -> Iterator[NDArray[np.float64]]:
    """Chunks of a (resamples x patterns) matrix: how often each pattern is drawn per resample."""
    total = int(counts.sum())
    rng = settings.rng(name)
    # A multinomial costs one binomial draw per pattern, however rare.  Rare patterns
    # are pooled into one cell instead; the units falling into it are then drawn one
    # by one among the rare patterns' units.  Both steps are exact, so together they
    # are exactly the multinomial, at a fraction of the cost when most patterns are rare.
    rare = counts <= _RARE_PATTERN_UNITS
    common_index, rare_index = np.flatnonzero(~rare), np.flatnonzero(rare)
    rare_units = np.repeat(np.arange(rare_index.size), counts[rare_index])
    probabilities = np.append(counts[common_index], rare_units.size) / total
    chunk = max(1, _CHUNK_CELLS // max(1, counts.size))
    remaining = settings.resamples
    while remaining > 0:
        size = min(chunk, remaining)
        drawn = rng.multinomial(total, probabilities, size=size)
        weights = np.zeros((size, counts.size))
        weights[:, common_index] = drawn[:, :-1]
        if rare_units.size:
            pooled = drawn[:, -1]
            picks = rare_units[rng.integers(0, rare_units.size, size=int(pooled.sum()))]
            cells = np.repeat(np.arange(size) * rare_index.size, pooled) + picks
            weights[:, rare_index] = np.bincount(cells, minlength=size * rare_index.size).reshape(
                size, rare_index.size
            )
        yield weights
        remaining -= size


def percentile_interval(values: NDArray[np.float64]) -> tuple[float, float] | None:
    """The 2.5 and 97.5 percentiles of the defined resampled values (None if too few)."""
    defined = values[np.isfinite(values)]
    if values.size == 0 or defined.size < _MIN_DEFINED_SHARE * values.size:
        return None
    low, high = np.percentile(defined, [2.5, 97.5])
    return float(low), float(high)


def with_intervals(
    figures: Sequence[Figure],
    statistics: Sequence[WeightedStatistic],
    counts: NDArray[np.int64],
    settings: BootstrapSettings,
    name: str,
) -> list[Figure]:
    """``figures`` with percentile bootstrap intervals, all from ONE resampling of the patterns.

    Statistics of the same items (a coefficient over all verdicts and over
    keep/drop, say) share the resamples: cheaper, and their intervals describe
    the same resampled item sets.
    """
    wanted = [index for index, figure in enumerate(figures) if figure.defined]
    if not wanted or settings.resamples <= 0 or counts.sum() < 2:
        return list(figures)
    values: list[list[NDArray[np.float64]]] = [[] for _ in wanted]
    for weights in resample_weights(counts, settings, name):
        for slot, index in enumerate(wanted):
            values[slot].append(statistics[index](weights))
    result = list(figures)
    for slot, index in enumerate(wanted):
        figure = figures[index]
        interval = percentile_interval(np.concatenate(values[slot]))
        result[index] = (
            Figure(figure.value, figure.n, ci95=interval)
            if interval is not None
            else Figure(
                figure.value,
                figure.n,
                reason="no interval: most resamples have a single category",
            )
        )
    return result


def with_interval(
    figure: Figure,
    statistic: WeightedStatistic,
    counts: NDArray[np.int64],
    settings: BootstrapSettings,
    name: str,
) -> Figure:
    """``figure`` with a percentile bootstrap interval from ``statistic`` over pattern weights."""
    return with_intervals([figure], [statistic], counts, settings, name)[0]

"""crowd-kit's two Dawid–Skene models as the consensus fits them (``db/consensus.py``),
with every step of their EM loop done on whole arrays.

crowd-kit 1.4 writes each EM iteration as a dozen pandas operations (joins, group-bys,
clips and aligned divisions), whose fixed cost outweighs the arithmetic on a small
study: the demo database's 98 ratings take 80 iterations and seconds to fit, and adaptive
routing fits before every item it serves.  The subclasses below do the E-step, the
confusion-matrix M-step, the one-coin error matrices and every iteration's evidence lower
bound (the convergence test) with numpy indexing and sums over the same frames, and hand
each step's result back as the frame crowd-kit's own step returns: the same index, columns
and values (``tests/test_dawid_skene.py`` fits both on random and study data and compares
every figure exactly, and the iterations one by one).

What follows from the ratings alone is found once a fit, not at every iteration: where
each rating's task and (rater, label) stand in the frames, and each step's axes, read off
crowd-kit's own step the first time it runs (that one call is crowd-kit's, as is any call
on frames these lookups do not serve).  The EM loop, the majority-vote start, the gold
label correction and the one-coin model's skills stay crowd-kit's.

The sums over ratings stay pandas' group-by sums (compensated summation, in the ratings'
order), on arrays laid out without the joins, so every probability, prior and error
matrix is crowd-kit's to the last bit.  Only the evidence lower bound is summed in
another order; it decides nothing but when the loop stops, which the tests check is at
the same iteration.  crowd-kit's steps also clip what they are handed in place (the
priors in the E-step, the probabilities in the evidence lower bound), which the fit then
returns; these do too.  ``pyproject.toml`` pins crowd-kit to 1.4.x, whose private steps
these replace; :func:`_check_crowdkit` refuses a crowd-kit without them.  Of crowd-kit,
only the module of these two models is imported (:func:`_enter_crowdkit_packages_bare`).
"""

from __future__ import annotations

import functools
import importlib.machinery
import importlib.util
import sys
from types import ModuleType
from typing import Any

import numpy as np
import pandas as pd

__all__ = ["FastDawidSkene", "FastOneCoinDawidSkene"]

_CROWDKIT_PACKAGES = ("crowdkit.aggregation", "crowdkit.aggregation.classification")


def _enter_crowdkit_packages_bare() -> None:
    """Let crowd-kit's module of its two Dawid–Skene models be imported without the rest
    of ``crowdkit.aggregation``, whose ``__init__`` imports every aggregator crowd-kit has
    and with them scipy.stats, scikit-learn and NLTK: 2 to 3 s of CPU in every process
    that fits, most of what adaptive routing added to a ``vetbench next``.

    The two packages above the module are entered without running their ``__init__``;
    the first time anything asks one of them for a name it would define (``from
    crowdkit.aggregation import GLAD``), it runs its ``__init__`` then, in place, so the
    process still sees the whole package, with these same classes in it."""
    for name in _CROWDKIT_PACKAGES:
        if name not in sys.modules:
            sys.modules[name] = _package_entered_bare(name)


def _package_entered_bare(name: str) -> ModuleType:
    spec = importlib.util.find_spec(name)
    if spec is None or spec.loader is None:
        raise ModuleNotFoundError(f"No module named {name!r}", name=name)
    package = importlib.util.module_from_spec(spec)
    loader = spec.loader

    def run_init_then_get(attribute: str) -> Any:
        # PEP 562: asked for the names the package lacks.  A submodule's is not one of
        # them: the import system then imports it (``from . import base``).
        submodule = f"{name}.{attribute}"
        if (
            attribute.startswith("__")
            or submodule in sys.modules
            or importlib.machinery.PathFinder.find_spec(submodule, package.__path__)
        ):
            raise AttributeError(f"module {name!r} has no attribute {attribute!r}")
        del package.__getattr__
        loader.exec_module(package)
        return getattr(package, attribute)

    package.__getattr__ = run_init_then_get  # type: ignore[method-assign]
    return package


_enter_crowdkit_packages_bare()
from crowdkit.aggregation.classification import dawid_skene as _crowdkit_dawid_skene  # noqa: E402
from crowdkit.aggregation.classification.dawid_skene import (  # noqa: E402
    DawidSkene,
    OneCoinDawidSkene,
)

_EPS: float = float(_crowdkit_dawid_skene._EPS)  # crowd-kit's floor on probabilities


def _check_crowdkit() -> None:
    """Refuse loudly where crowd-kit no longer has the steps this module replaces: a
    renamed one would be left in use unseen, and a changed one compared with nothing."""
    replaced = (
        (DawidSkene, "_e_step"),
        (DawidSkene, "_m_step"),
        (DawidSkene, "_evidence_lower_bound"),
        (OneCoinDawidSkene, "_process_skills_to_errors"),
    )
    missing = [f"{cls.__name__}.{name}" for cls, name in replaced if not hasattr(cls, name)]
    if missing:
        raise RuntimeError(f"crowd-kit changed ({', '.join(missing)} gone): see db/dawid_skene.py")


_check_crowdkit()


def _group_sums(values: np.ndarray, groups: np.ndarray, count: int) -> np.ndarray:
    """Each column of ``values`` summed over the rows of each group (``groups[i]``: the
    group of row ``i``; every group from 0 to ``count - 1`` has a row): a ``count`` x
    columns array.  pandas' group-by, as crowd-kit's steps sum: compensated (Kahan)
    summation in row order, so the sums are crowd-kit's to the last bit."""
    sums = pd.DataFrame(values).groupby(groups, sort=True).sum().to_numpy()
    assert len(sums) == count
    return sums


class _RowsOf:
    """Where each rating's task and (rater, label) stand in a fit's frames.  The EM loop
    hands every step the same ratings and frames indexed alike, so the lookups are made
    once a fit, not once an iteration; frames indexed otherwise get lookups of their own.
    ``complete``: every rating's task and (rater, label) is in the frames (crowd-kit's
    joins would give the others no values: its own step handles them)."""

    def __init__(self, data: pd.DataFrame, tasks: pd.Index, pairs: pd.Index) -> None:
        self.data, self.tasks, self.pairs = data, tasks, pairs
        self.task_rows = tasks.get_indexer(data["task"])
        self.error_rows = pairs.get_indexer(
            pd.MultiIndex.from_arrays([data["worker"], data["label"]])
        )
        self.complete = bool((self.task_rows >= 0).all() and (self.error_rows >= 0).all())

    def serves(self, data: pd.DataFrame, tasks: pd.Index, pairs: pd.Index) -> bool:
        return data is self.data and tasks.equals(self.tasks) and pairs.equals(self.pairs)

    @classmethod
    def kept(
        cls, rows: _RowsOf | None, data: pd.DataFrame, tasks: pd.Index, pairs: pd.Index
    ) -> _RowsOf:
        """``rows`` where they serve these frames, else new lookups."""
        return (
            rows
            if rows is not None and rows.serves(data, tasks, pairs)
            else cls(data, tasks, pairs)
        )


class _StepAxes:
    """The index and columns of what one of crowd-kit's steps returned for these ratings
    and labels, which follow from them alone: the steps done on arrays return their values
    on the same axes."""

    def __init__(self, data: pd.DataFrame, labels: pd.Index, found: pd.DataFrame) -> None:
        self.data, self.labels = data, labels
        self.index, self.columns = found.index, found.columns

    def serves(self, data: pd.DataFrame, labels: pd.Index) -> bool:
        return data is self.data and labels.equals(self.labels)

    @functools.cached_property
    def raters(self) -> tuple[np.ndarray, int]:
        """Where each row's rater (the first index level: the error matrices' rows are
        (rater, label given)) stands among the raters, and how many raters there are;
        only the confusion-matrix M-step asks."""
        rows, raters = pd.factorize(self.index.get_level_values(0))
        return rows, len(raters)


class _ArraySteps:
    """The E-step and the evidence lower bound of both models, on arrays."""

    _e_axes: _StepAxes | None = None
    _e_rows: _RowsOf | None = None
    _bound_rows: _RowsOf | None = None

    def _e_step(  # crowd-kit's is static: an instance one serves
        self, data: pd.DataFrame, priors: pd.Series[Any], errors: pd.DataFrame
    ) -> pd.DataFrame:
        """Each task's probabilities of its true label given its ratings: the prior times
        each rating's chance under each label (the rater's error matrix), normalised; in
        log2, each task's row shifted to a maximum of 0 before exponentiating, as
        crowd-kit does.  Its task order (first seen in the ratings) and columns are read
        off crowd-kit's first E-step of the fit."""
        labels = errors.columns
        axes = self._e_axes
        if axes is None or not axes.serves(data, labels) or not priors.index.equals(labels):
            found = DawidSkene._e_step(data, priors, errors)
            self._e_axes = _StepAxes(data, labels, found)
            return found
        rows = self._e_rows = _RowsOf.kept(self._e_rows, data, axes.index, errors.index)
        if not rows.complete:
            return DawidSkene._e_step(data, priors, errors)
        priors.clip(lower=_EPS, inplace=True)
        per_rating = np.log2(errors.to_numpy())[rows.error_rows]
        log_likelihoods = np.log2(priors.to_numpy()) + _group_sums(
            per_rating, rows.task_rows, len(axes.index)
        )
        scaled = np.exp2(log_likelihoods - log_likelihoods.max(axis=1, keepdims=True))
        scaled /= scaled.sum(axis=1, keepdims=True)
        return pd.DataFrame(scaled, index=axes.index, columns=axes.columns)

    def _evidence_lower_bound(
        self,
        data: pd.DataFrame,
        probas: pd.DataFrame,
        priors: pd.Series[Any],
        errors: pd.DataFrame,
    ) -> float:
        """The expected joint log-likelihood of the ratings and the labels under
        ``probas``, plus the entropy of ``probas``."""
        labels = probas.columns
        rows = self._bound_rows = _RowsOf.kept(self._bound_rows, data, probas.index, errors.index)
        log_errors = np.log(errors.reindex(columns=labels).to_numpy())[rows.error_rows]
        log_priors = np.log(priors.clip(lower=_EPS).reindex(labels).to_numpy())
        joint = float((probas.to_numpy()[rows.task_rows] * (log_errors + log_priors)).sum())
        probas.clip(lower=_EPS, inplace=True)
        chances = probas.to_numpy()
        return joint - float((np.log(chances) * chances).sum())


class FastDawidSkene(_ArraySteps, DawidSkene):
    """crowd-kit's ``DawidSkene`` (a confusion matrix per rater), its EM steps on arrays."""

    _m_axes: _StepAxes | None = None
    _m_rows: _RowsOf | None = None

    def _m_step(  # type: ignore[override]  # crowd-kit's is static
        self,
        data: pd.DataFrame,
        probas: pd.DataFrame,
        initial_error: pd.DataFrame | None = None,
        initial_error_strategy: Any = None,
    ) -> pd.DataFrame:
        """Each rater's confusion matrix: for each (rater, label given), the sum over
        their ratings of each true label's probability, floored at crowd-kit's epsilon and
        divided by the rater's sums.  Its rows and columns are read off crowd-kit's first
        M-step of the fit (and any with initial error matrices is crowd-kit's)."""
        labels = probas.columns
        axes = self._m_axes
        if initial_error is not None or axes is None or not axes.serves(data, labels):
            found = DawidSkene._m_step(data, probas, initial_error, initial_error_strategy)
            if initial_error is None:
                self._m_axes = _StepAxes(data, labels, found)
            return found
        rows = self._m_rows = _RowsOf.kept(self._m_rows, data, probas.index, axes.index)
        if not rows.complete:
            return DawidSkene._m_step(data, probas)
        sums = _group_sums(probas.to_numpy()[rows.task_rows], rows.error_rows, len(axes.index))
        floored = np.where(sums < _EPS, _EPS, sums)  # as DataFrame.clip(lower=) does
        rater_rows, raters = axes.raters
        totals = _group_sums(floored, rater_rows, raters)
        return pd.DataFrame(floored / totals[rater_rows], index=axes.index, columns=axes.columns)


class FastOneCoinDawidSkene(_ArraySteps, OneCoinDawidSkene):
    """crowd-kit's ``OneCoinDawidSkene`` (one accuracy per rater), its E-step, evidence
    lower bound and error matrices on arrays."""

    _m_axes: _StepAxes | None = None

    def _process_skills_to_errors(  # type: ignore[override]  # crowd-kit's is static
        self, data: pd.DataFrame, probas: pd.DataFrame, skills: pd.Series[Any]
    ) -> pd.DataFrame:
        """Each rater's error matrix from their accuracy ``s``: ``s`` where the label
        they gave is the true one, ``(1 - s) / (K - 1)`` elsewhere, over the rows
        (rater, label given) and the columns that crowd-kit's M-step finds.

        Only those rows and columns are read from its M-step, whose values this model
        throws away: the rows follow from the ratings alone and the columns from the
        labels', so the M-step runs again only when either changes, not at every
        iteration (a third of one)."""
        labels = probas.columns
        if self._m_axes is None or not self._m_axes.serves(data, labels):
            self._m_axes = _StepAxes(data, labels, DawidSkene._m_step(data, probas))
        pairs, columns = self._m_axes.index, self._m_axes.columns
        skill = skills.reindex(pairs.get_level_values(0)).to_numpy()[:, None]
        given = np.asarray(pairs.get_level_values(1))[:, None]
        same = given == np.asarray(columns)[None, :]
        values = np.where(same, skill, (1 - skill) / (len(columns) - 1))
        clipped = np.clip(values, _EPS, 1 - _EPS)  # as DataFrame.clip does, element by element
        return pd.DataFrame(clipped, index=pairs, columns=columns)

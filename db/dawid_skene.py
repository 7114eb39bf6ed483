"""crowd-kit's two Dawid–Skene models as the consensus fits them (``db/consensus.py``),
with two of their steps done on whole arrays, and what every iteration looked up again
looked up once a fit.

crowd-kit 1.4 writes each EM iteration as a dozen pandas operations, whose fixed cost
outweighs the arithmetic on a small study: the demo database's 98 ratings take 80
iterations and seconds to fit.  Two steps were over half of it:

- the one-coin model's M-step fills each rater's error matrix row by row with
  ``DataFrame.apply`` and a ``.loc`` lookup per cell;
- every iteration's evidence lower bound (the convergence test) joins, renames and
  aligns three frames.

The subclasses below do those two with numpy indexing on the same frames: the same
arithmetic in the same order per element, so the same fit (``tests/test_dawid_skene.py``
fits both on random and study data and compares every figure).  What follows from the
ratings alone is found once a fit, not at every iteration: where each rating's task and
(rater, label) stand in the frames, and the one-coin error matrices' rows and columns,
for which it ran crowd-kit's whole confusion-matrix M-step and kept only its axes (the
README's consensus benchmark has the times).  The EM loop, the E and M steps, the
majority-vote start and the gold-label correction stay crowd-kit's.

crowd-kit's evidence lower bound also clips the probabilities it is handed in place,
which the fit then returns (each at least 1e-10); this one does too.  On pandas 2 it
clipped the priors the fit returns as well (``rename(copy=False)`` shared them), which
pandas 3, the tested one, no longer does: these follow pandas 3.  ``pyproject.toml`` pins crowd-kit to 1.4.x, whose private steps these
replace; :func:`_check_crowdkit` refuses a crowd-kit without them.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from crowdkit.aggregation import DawidSkene, OneCoinDawidSkene
from crowdkit.aggregation.classification import dawid_skene as _crowdkit_dawid_skene

__all__ = ["FastDawidSkene", "FastOneCoinDawidSkene"]

_EPS: float = float(_crowdkit_dawid_skene._EPS)  # crowd-kit's floor on probabilities


def _check_crowdkit() -> None:
    """Refuse loudly where crowd-kit no longer has the steps this module replaces: a
    renamed one would be left in use unseen, and a changed one compared with nothing."""
    replaced = (
        (DawidSkene, "_evidence_lower_bound"),
        (OneCoinDawidSkene, "_process_skills_to_errors"),
        (DawidSkene, "_m_step"),
    )
    missing = [f"{cls.__name__}.{name}" for cls, name in replaced if not hasattr(cls, name)]
    if missing:
        raise RuntimeError(f"crowd-kit changed ({', '.join(missing)} gone): see db/dawid_skene.py")


_check_crowdkit()


class _RowsOf:
    """Where each rating's task and (rater, label) stand in a fit's frames.  The EM loop
    hands every step the same ratings and frames indexed alike (tasks, and (rater, label)
    pairs, in the order the ratings first show them), so the lookups are made once a fit,
    not once an iteration; frames indexed otherwise get lookups of their own."""

    def __init__(self, data: pd.DataFrame, tasks: pd.Index, pairs: pd.Index) -> None:
        self.data, self.tasks, self.pairs = data, tasks, pairs
        self.task_rows = tasks.get_indexer(data["task"])
        self.error_rows = pairs.get_indexer(
            pd.MultiIndex.from_arrays([data["worker"], data["label"]])
        )

    def serves(self, data: pd.DataFrame, tasks: pd.Index, pairs: pd.Index) -> bool:
        return data is self.data and tasks.equals(self.tasks) and pairs.equals(self.pairs)


class _ErrorAxes:
    """The rows (rater, label given) and columns of a fit's error matrices, which follow
    from the ratings and their labels alone: read once a fit off crowd-kit's M-step, whose
    values the one-coin model throws away; other ratings or labels get axes of their own."""

    def __init__(self, data: pd.DataFrame, probas: pd.DataFrame) -> None:
        self.data, self.labels = data, probas.columns
        found = DawidSkene._m_step(data, probas)
        self.pairs, self.columns = found.index, found.columns

    def serves(self, data: pd.DataFrame, labels: pd.Index) -> bool:
        return data is self.data and labels.equals(self.labels)


class _ArrayEvidence:
    """crowd-kit's evidence lower bound of a fit, on arrays: the expected joint
    log-likelihood of the ratings and the labels under ``probas``, plus the entropy of
    ``probas``."""

    _rows: _RowsOf | None = None

    def _evidence_lower_bound(
        self,
        data: pd.DataFrame,
        probas: pd.DataFrame,
        priors: pd.Series[Any],
        errors: pd.DataFrame,
    ) -> float:
        labels = probas.columns
        if self._rows is None or not self._rows.serves(data, probas.index, errors.index):
            self._rows = _RowsOf(data, probas.index, errors.index)
        task_rows, error_rows = self._rows.task_rows, self._rows.error_rows
        log_errors = np.log(errors.reindex(columns=labels).to_numpy())[error_rows]
        log_priors = np.log(priors.clip(lower=_EPS).reindex(labels).to_numpy())
        joint = float((probas.to_numpy()[task_rows] * (log_errors + log_priors)).sum())
        probas.clip(lower=_EPS, inplace=True)
        chances = probas.to_numpy()
        return joint - float((np.log(chances) * chances).sum())


class FastDawidSkene(_ArrayEvidence, DawidSkene):
    """crowd-kit's ``DawidSkene`` (a confusion matrix per rater), its evidence lower
    bound on arrays."""


class FastOneCoinDawidSkene(_ArrayEvidence, OneCoinDawidSkene):
    """crowd-kit's ``OneCoinDawidSkene`` (one accuracy per rater), its evidence lower
    bound and its error matrices on arrays."""

    _axes: _ErrorAxes | None = None

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
        if self._axes is None or not self._axes.serves(data, probas.columns):
            self._axes = _ErrorAxes(data, probas)
        pairs, columns = self._axes.pairs, self._axes.columns
        skill = skills.reindex(pairs.get_level_values(0)).to_numpy()[:, None]
        given = np.asarray(pairs.get_level_values(1))[:, None]
        same = given == np.asarray(columns)[None, :]
        values = np.where(same, skill, (1 - skill) / (len(columns) - 1))
        clipped = np.clip(values, _EPS, 1 - _EPS)  # as DataFrame.clip does, element by element
        return pd.DataFrame(clipped, index=pairs, columns=columns)

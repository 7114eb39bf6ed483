"""A random row like the papers': seeded simulated guessers, mean ± sd of their figures.

CFLUE's table reports a random baseline as a simulated guesser, mean ± sd, with an
F1 column (Random 21.92 ± 0.46, F1 21.58 ± 0.46).  :func:`simulated_guessers` plays
:data:`GUESSERS` guessers over the same items as the runs of a table cell: each
picks, for every item, one of the item's possible answers uniformly at random
(any order of an ordering item's events, any one option of a single-choice or
true/false item, any non-empty set of options of a multi-answer item), and is
scored like a model: accuracy over every item, weighted F1 (CFLUE's: each answer
string a class, weighted by the key's support) over the multiple-choice items.
The draws come from one seed and fall on the items in id order, so a table is the same
every time it is printed, and the same items give every table the same row.
The exact expectation of accuracy (``metrics.chance_accuracy``) stands beside it.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from statistics import mean, stdev
from typing import Any

from db.answers import LETTERS
from db.vocabulary import ItemKind
from evaluator.kinds import Metric, kind_spec
from evaluator.metrics import ScoredPrediction

__all__ = ["GUESSERS", "GUESSER_SEED", "GuesserFigures", "simulated_guessers"]

GUESSERS = 1000
GUESSER_SEED = 20240101


@dataclass(frozen=True)
class GuesserFigures:
    """Mean and sample sd over the guessers; F1 is None without multiple-choice items."""

    guessers: int
    accuracy_mean: float
    accuracy_sd: float
    weighted_f1_mean: float | None
    weighted_f1_sd: float | None


def _order_hits(rng: Any, keys: Sequence[str], events: int, guessers: int) -> Any:
    """Whether each guesser's random order of ``events`` events equals each key."""
    import numpy as np

    key_positions = np.array([[LETTERS.index(letter) for letter in key] for key in keys])
    guesses = np.argsort(rng.random((guessers, len(keys), events)), axis=-1)
    return (guesses == key_positions[None, :, :]).all(axis=-1)


def _weighted_f1s(keys: Any, guesses: Any, classes: int) -> Any:
    """CFLUE's weighted F1 of every guesser (a row of ``guesses``) against ``keys``:
    scikit-learn's ``f1_score(average="weighted")``, computed for all rows at once."""
    import numpy as np

    rows = guesses.shape[0]
    offsets = (np.arange(rows) * classes)[:, None]
    support = np.bincount(keys, minlength=classes).astype(float)
    predicted = np.bincount((guesses + offsets).ravel(), minlength=rows * classes)
    hits_at = np.where(guesses == keys[None, :], guesses + offsets, -1).ravel()
    hits = np.bincount(hits_at[hits_at >= 0], minlength=rows * classes)
    predicted = predicted.reshape(rows, classes)
    hits = hits.reshape(rows, classes)
    denominator = support[None, :] + predicted
    f1 = np.divide(2 * hits, denominator, out=np.zeros_like(denominator), where=denominator > 0)
    return (f1 * support[None, :]).sum(axis=1) / support.sum()


def simulated_guessers(
    rows: Sequence[ScoredPrediction], *, guessers: int = GUESSERS, seed: int = GUESSER_SEED
) -> GuesserFigures | None:
    """The figures of ``guessers`` random guessers on the items of ``rows`` (see the
    module docstring); None when no row says how many events or options its item has."""
    import numpy as np

    # by id: the draws fall on the same items whatever order the runs stored them in
    items = sorted(
        (row for row in rows if not row.is_infrastructure_failure and row.labels > 0),
        key=lambda row: row.item_id,
    )
    if not items or guessers < 2:
        return None
    rng = np.random.default_rng(seed)
    hits = np.zeros((guessers, len(items)), dtype=bool)
    classes: dict[str, int] = {}
    chosen_columns: list[int] = []
    chosen_guesses: list[Any] = []
    groups: dict[tuple[ItemKind, int], list[int]] = defaultdict(list)
    for column, row in enumerate(items):
        groups[(ItemKind(row.kind), row.labels)].append(column)
    for (kind, labels), columns in groups.items():
        keys = [items[column].key for column in columns]
        if kind is ItemKind.ORDERING:
            hits[:, columns] = _order_hits(rng, keys, labels, guessers)
            continue
        candidates = kind_spec(kind).candidates(LETTERS[:labels])
        codes = np.array([classes.setdefault(answer, len(classes)) for answer in candidates])
        guessed = codes[rng.integers(0, len(candidates), size=(guessers, len(columns)))]
        key_codes = np.array([classes.setdefault(key, len(classes)) for key in keys])
        hits[:, columns] = guessed == key_codes[None, :]
        if kind_spec(kind).measures(Metric.WEIGHTED_F1):
            chosen_columns += columns
            chosen_guesses.append(guessed)
    accuracies = hits.mean(axis=1).tolist()
    f1s: list[float] | None = None
    if chosen_columns:
        chosen_keys = np.array([classes[items[column].key] for column in chosen_columns])
        guessed_all = np.concatenate(chosen_guesses, axis=1)
        f1s = _weighted_f1s(chosen_keys, guessed_all, len(classes)).tolist()
    return GuesserFigures(
        guessers=guessers,
        accuracy_mean=mean(accuracies),
        accuracy_sd=stdev(accuracies),
        weighted_f1_mean=mean(f1s) if f1s else None,
        weighted_f1_sd=stdev(f1s) if f1s else None,
    )

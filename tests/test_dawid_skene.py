"""``db.dawid_skene``'s models fit exactly as crowd-kit's own: the same probabilities,
priors and error matrices to the last bit, and the same iterations, on planted ratings shaped like a review study's
(item-relative labels ``KEY``, ``ALT1`` …; raters of mixed skill; items with one to
five ratings; gold rows counted three times; gold labels pinning the keep/drop model)."""

from __future__ import annotations

import random
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from crowdkit.aggregation import DawidSkene, OneCoinDawidSkene

from db.dawid_skene import FastDawidSkene, FastOneCoinDawidSkene

LABELS = ("KEY", "ALT1", "ALT2", "ALT3")
SKILLS = (0.97, 0.9, 0.75, 0.5, 0.3)


def planted_ratings(seed: int, items: int, raters: int, labels: int) -> pd.DataFrame:
    """Ratings of ``items`` tasks by up to ``raters`` raters of mixed skill, the truth
    ``KEY`` four times in five, a wrong answer drawn from the other ``labels``."""
    chance = random.Random(seed)
    space = LABELS[:labels]
    rows = []
    for task in range(items):
        truth = "KEY" if chance.random() < 0.8 else chance.choice(space)
        judged_by = chance.sample(range(raters), chance.randint(1, min(5, raters)))
        for rater in judged_by:
            right = chance.random() < SKILLS[rater % len(SKILLS)]
            rows.append((f"item:{task}", f"rater{rater}", truth if right else chance.choice(space)))
        if task % 7 == 0:  # a gold item, its truth three times as the consensus adds it
            rows += [(f"item:{task}", "gold", truth)] * 3
    return pd.DataFrame(rows, columns=["task", "worker", "label"])


# (seed, items, raters, labels): a handful of items; fits that iterate long, as the demo
# database's 98 ratings do 80 times; a study's worth; two labels (keep/drop), four.
LONG_ONE_COIN = (3, 49, 2, 2)
LONG_CONFUSION = (4, 49, 3, 3)
SHAPES = [(1, 6, 3, 2), LONG_ONE_COIN, LONG_CONFUSION, (4, 120, 6, 4), (5, 200, 8, 2)]


def _fitted(model: Any, data: pd.DataFrame, *gold: pd.Series[Any]) -> tuple[Any, ...]:
    probas = model.fit_predict_proba(data, *gold)
    return probas, model.priors_, model.errors_, model.loss_history_


def assert_same_fit(
    ours: Any, theirs: Any, data: pd.DataFrame, *gold: pd.Series[Any], long: bool = False
) -> None:
    """The same fit; ``long``: one that follows the EM a long way (50 iterations or more)."""
    probas, priors, errors, losses = _fitted(ours, data, *gold)
    their_probas, their_priors, their_errors, their_losses = _fitted(theirs, data, *gold)
    pd.testing.assert_frame_equal(probas, their_probas, check_exact=True)
    pd.testing.assert_series_equal(priors, their_priors, check_exact=True)
    pd.testing.assert_frame_equal(errors, their_errors, check_exact=True)
    assert len(losses) == len(their_losses)  # the same iterations, stopped at the same one
    assert losses == pytest.approx(their_losses, rel=1e-12, abs=1e-12)
    assert len(losses) >= 50 or not long


@pytest.mark.parametrize("shape", SHAPES, ids=lambda shape: "x".join(map(str, shape)))
def test_the_one_coin_model_fits_as_crowdkits(shape: tuple[int, int, int, int]) -> None:
    data = planted_ratings(*shape)
    ours, theirs = FastOneCoinDawidSkene(n_iter=100), OneCoinDawidSkene(n_iter=100)
    assert_same_fit(ours, theirs, data, long=shape == LONG_ONE_COIN)


@pytest.mark.parametrize("shape", SHAPES, ids=lambda shape: "x".join(map(str, shape)))
def test_the_confusion_matrix_model_fits_as_crowdkits_with_and_without_gold(
    shape: tuple[int, int, int, int],
) -> None:
    data = planted_ratings(*shape)
    long = shape == LONG_CONFUSION
    assert_same_fit(FastDawidSkene(n_iter=100), DawidSkene(n_iter=100), data, long=long)
    gold = data[data["worker"] == "gold"].drop_duplicates("task").set_index("task")["label"]
    assert len(gold) > 0
    assert_same_fit(FastDawidSkene(n_iter=100), DawidSkene(n_iter=100), data, gold)


@pytest.mark.parametrize("model", [FastOneCoinDawidSkene, FastDawidSkene])
def test_a_model_fitted_again_on_other_ratings_fits_them_as_a_new_one(model: type[Any]) -> None:
    """What a fit looks up once (the ratings' places in its frames, the one-coin error
    matrices' axes) is found again for other ratings, of other raters and labels."""
    reused = model(n_iter=100)
    _fitted(reused, planted_ratings(*LONG_CONFUSION))
    other = planted_ratings(6, 30, 4, 4)
    theirs = OneCoinDawidSkene if model is FastOneCoinDawidSkene else DawidSkene
    assert_same_fit(reused, theirs(n_iter=100), other)


@pytest.mark.parametrize("model", [FastOneCoinDawidSkene, FastDawidSkene])
def test_a_fit_runs_crowdkits_own_steps_once_to_read_their_axes(
    model: type[Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The steps on arrays are what the EM loop runs: crowd-kit's E- and M-steps run once
    a fit (their results' axes are read off them), not once an iteration."""
    calls: Counter[str] = Counter()
    for name in ("_e_step", "_m_step"):
        own = getattr(DawidSkene, name)

        def counted(*args: Any, _own: Any = own, _name: str = name) -> Any:
            calls[_name] += 1
            return _own(*args)

        monkeypatch.setattr(DawidSkene, name, staticmethod(counted))
    fitted = model(n_iter=100)
    long = LONG_ONE_COIN if model is FastOneCoinDawidSkene else LONG_CONFUSION
    _fitted(fitted, planted_ratings(*long))
    assert len(fitted.loss_history_) >= 50
    assert calls == {"_e_step": 1, "_m_step": 1}


def test_a_fit_imports_crowdkits_two_models_not_its_every_aggregator() -> None:
    """A process that fits imports neither scipy.stats, scikit-learn nor NLTK (crowd-kit's
    package imports them all, seconds of CPU); the package is whole when asked for later."""
    script = """
import sys
from db.consensus import _jeffreys
import pandas as pd
import db.dawid_skene as ours
rows = [(f"item:{i}", f"rater{r}", "KEY" if (i + r) % 4 else "ALT1") for i in range(6) for r in range(3)]
data = pd.DataFrame(rows, columns=["task", "worker", "label"])
ours.FastDawidSkene(n_iter=100).fit_predict_proba(data)
ours.FastOneCoinDawidSkene(n_iter=100).fit_predict_proba(data)
_jeffreys(3, 5)
print(sorted(m for m in ("scipy.stats", "sklearn", "nltk") if m in sys.modules))
from crowdkit.aggregation import GLAD, DawidSkene
from crowdkit.aggregation.classification import OneCoinDawidSkene
print(DawidSkene is ours.DawidSkene, OneCoinDawidSkene is ours.OneCoinDawidSkene, GLAD.__name__)
"""
    done = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        cwd=Path(__file__).parent.parent,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["[]", "True True GLAD"]

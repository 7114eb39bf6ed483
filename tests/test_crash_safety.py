"""SIGKILL the review app and a running evaluation at random moments: nothing that was
acknowledged is lost, the SQLite file stays sound, and the evaluation resumes where it
stopped.  The harness is ``bench/crash_safety.py``; here it runs a few rounds each."""

from __future__ import annotations

import functools
import os
from pathlib import Path

import pytest

from bench.crash_safety import crash_evaluation, crash_review_app, slow_script

pytestmark = pytest.mark.slow
ROUNDS = int(os.environ.get("VETBENCH_CRASH_ROUNDS", "6"))


def test_killing_the_review_app_loses_no_submitted_judgment(tmp_path: Path) -> None:
    report = crash_review_app(tmp_path / "review.db", rounds=ROUNDS, seed=1)
    assert report.rounds == ROUNDS
    assert report.acknowledged > 0, "the app never got to store a judgment"
    assert report.lost == []
    assert report.integrity == []


def test_killing_an_evaluation_keeps_finished_predictions_and_resumes(tmp_path: Path) -> None:
    """The run loop's writes are what is tested, not a model: a scripted model whose
    answers take 0.25 s each keeps a 40-item run going for 10 s, with no model to
    load in each of the seven processes (a real model's run loop is the same code)."""
    model = functools.partial(slow_script, path=tmp_path / "slow.jsonl", seconds=0.25)
    report = crash_evaluation(tmp_path / "eval.db", model, rounds=ROUNDS, seed=2, items=40)
    assert report.rounds == ROUNDS
    assert report.lost == []
    assert report.integrity == []
    assert report.notes == []  # the resumed run finished every item

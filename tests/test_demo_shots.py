"""The demo's evaluation is a real 5-shot run: the `vetbench eval` command of
``scripts/demo.sh``, run as written on the demo database (``scripts/make_demo_db.py``)
with the oracle self-test in place of the demo model, gives every kind its 5 shots from
the fixtures' shot pools: no "only N of 5" note, no not-yet-approved shots, plain labels."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

import pytest
from eval_helpers import ok, stored_runs
from helpers import run_cli

from evaluator.run_params import RunParams

ROOT = Path(__file__).resolve().parent.parent


def demo_eval_arguments() -> list[str]:
    """The arguments of demo.sh's `vetbench eval` command (its continuation lines joined),
    without the "$@" it passes through."""
    script = (ROOT / "scripts" / "demo.sh").read_text(encoding="utf-8")
    joined = script.replace("\\\n", " ")
    (line,) = [line for line in joined.splitlines() if line.strip().startswith("vetbench eval")]
    words = shlex.split(line)
    assert words[:2] == ["vetbench", "eval"] and words[-1] == "$@"
    return words[2:-1]


@pytest.fixture(scope="module")
def demo_db(tmp_path_factory: pytest.TempPathFactory) -> str:
    sys.path.insert(0, str(ROOT / "scripts"))
    try:
        from make_demo_db import build_demo_database
    finally:
        sys.path.remove(str(ROOT / "scripts"))
    path = tmp_path_factory.mktemp("demo") / "demo.db"
    build_demo_database(path)
    return str(path)


def test_the_demo_run_is_a_real_five_shot_run(
    demo_db: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    arguments = demo_eval_arguments()
    model = arguments.index("--model")
    assert arguments[model + 1] == "demo" and arguments[arguments.index("--shots") + 1] == "5"
    arguments[model + 1] = "scripted:oracle"  # the demo model's answers are not the point
    monkeypatch.chdir(ROOT)  # demo.sh runs from the repository root
    result = ok(run_cli(demo_db, "eval", *arguments))
    assert "note:" not in result.stderr, result.stderr
    (run,) = stored_runs(demo_db)
    params = RunParams.from_json(run.params)
    counts = params.shot_counts(5)
    assert {kind.kind for kind in counts.kinds} == {"ordering", "single", "multi", "truefalse"}
    assert counts.plain and params.shot_notes == ()
    # both languages of the multiple-choice items get shots in their own language
    assert {"single/zh", "single/en", "truefalse/zh"} <= set(params.shots_used)
    assert all(len(shots) == 5 for shots in params.shots_used.values())
    listing = ok(run_cli(demo_db, "runs")).stdout.splitlines()
    assert len(listing) == 2 and "generate/5" in listing[1]
    assert "(scripted, generate, 5-shot)" in ok(run_cli(demo_db, "runs", "show", "1")).stdout

"""The demo's evaluation is a real 5-shot run: the `vetbench eval` command of
``scripts/demo.sh``, run as written on the demo database (``scripts/make_demo_db.py``)
with the oracle self-test in place of the demo model, gives every kind its 5 shots from
the fixtures' shot pools: no "only N of 5" note, no not-yet-approved shots, plain labels.
The demo builder also answers ``--help`` as a question."""

from __future__ import annotations

import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from eval_helpers import ok, stored_runs
from helpers import built_demo_database, run_cli

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
    return str(built_demo_database(tmp_path_factory.mktemp("demo") / "demo.db"))


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


def paper_section_eval_commands() -> list[tuple[int, list[str]]]:
    """The `vetbench eval` commands of the README's fenced blocks under "Evaluating as the
    papers did" (the paper protocols and the oracle self-test) that run the demo model or
    the oracle, with their README lines (API models need a server, `--resume` a run)."""
    from test_readme_options import README, usages

    lines = README.read_text(encoding="utf-8").splitlines()
    start = lines.index("## Evaluating as the papers did")
    end = next(n for n in range(start + 1, len(lines)) if lines[n].startswith("## "))
    kept, fenced = [], False
    for number, line in enumerate(lines):
        if line.strip().startswith("```"):
            fenced = not fenced
        inside = start <= number < end and (fenced or line.strip().startswith("```"))
        kept.append(line if inside else "")
    commands = []
    for usage in usages("\n".join(kept)):
        words = list(usage.words[2:])
        model = words[words.index("--model") + 1] if "--model" in words else None
        if usage.words[:2] == ("vetbench", "eval") and model in ("demo", "scripted:oracle"):
            commands.append((usage.line, words))
    return commands


def test_the_readme_paper_protocol_commands_run_on_the_demo_database(
    demo_db: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As written (the oracle in place of the demo model): the EconLogicQA lines refused
    "too few shots" there, since the demo database evaluates every approved order."""
    commands = paper_section_eval_commands()
    assert len(commands) >= 5, commands
    monkeypatch.chdir(ROOT)  # the shot files are named from the repository root
    for line, arguments in commands:
        arguments[arguments.index("--model") + 1] = "scripted:oracle"
        result = run_cli(demo_db, "eval", *arguments)
        assert result.exit_code == 0, f"README line {line}: {result.output}"


@pytest.mark.parametrize("asked", ["--help", "-h"])
def test_asking_the_demo_builder_for_help_builds_nothing(tmp_path: Path, asked: str) -> None:
    """``--help`` was taken for the name of the database to build (a file ``--help``)."""
    script = ROOT / "scripts" / "make_demo_db.py"
    done = subprocess.run(
        [sys.executable, str(script), asked], cwd=tmp_path, capture_output=True, text=True
    )
    assert done.returncode == 0 and "DB_PATH" in done.stdout, done.stderr
    assert list(tmp_path.iterdir()) == []

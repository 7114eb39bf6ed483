"""The evaluation path runs without the interface-only packages.

A bare GPU box gets vetbench's evaluation as a handful of carried wheels
(``bench/gpu/wheels.txt``, ``bench/gpu_prepare.sh``): at most 50 MiB, so Textual,
ICU line breaking, the PostgreSQL driver, plotting and the other packages only the
app, the browser server or the agreement statistics use must not be needed to build
a database from files, decide items, evaluate a local model (generate and score mode,
the CFLUE protocol), read the runs and export an lm-eval task.  Each step runs here in
a child process in which importing any of them fails, as it would on the box.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from tiny_model import tiny_model_dir

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"
INTERFACE_ONLY = (
    "textual",
    "textual_serve",
    "textual_plotext",
    "plotext",
    "icu4py",
    "psycopg",
    "pylatexenc",
    "krippendorff",
    "openai",
    "gguf",
    "playwright",
)

_RUNNER = """
import contextlib, importlib.abc, io, json, sys
blocked = set(sys.argv[1].split(","))

class Blocked(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in blocked:
            raise ModuleNotFoundError(f"{name} is not on the evaluation path", name=name)
        return None

sys.meta_path.insert(0, Blocked())
from reviewer.cli import cli
printed = []
for arguments in json.loads(sys.argv[2]):
    with contextlib.redirect_stdout(io.StringIO()) as out:
        cli.main(arguments, prog_name="vetbench", standalone_mode=False)
    printed.append(out.getvalue())
print(json.dumps(printed))
"""


def _vetbench(*commands: list[str]) -> list[str]:
    """Each ``vetbench`` command in turn, in one child process where every interface-only
    package is missing; what each printed."""
    completed = subprocess.run(
        [sys.executable, "-c", _RUNNER, ",".join(INTERFACE_ONLY), json.dumps(commands)],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert completed.returncode == 0, completed.stdout[-2000:] + completed.stderr[-4000:]
    printed: list[str] = json.loads(completed.stdout.splitlines()[-1])
    return printed


def test_the_blocker_blocks() -> None:
    """The check itself: a command that needs a blocked package fails in the child."""
    completed = subprocess.run(
        [sys.executable, "-c", _RUNNER, "click", '[["--help"]]'],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert completed.returncode != 0
    assert "click is not on the evaluation path" in completed.stderr


@pytest.mark.slow
def test_import_decide_evaluate_and_export_need_no_interface_package(
    tmp_path: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    db = ["--db", str(tmp_path / "eval.db")]
    model = str(tiny_model_dir(tmp_path_factory, chat=True))
    approved = ("econ_ordering:1", "econ_ordering:2", "cflue_mcq:1", "cflue_mcq:2", "cflue_mcq:3")
    evaluate = [*db, "eval", "--model", model, "--device", "cpu"]
    printed = _vetbench(
        [*db, "import", str(FIXTURES / "econ_ordering.csv"), str(FIXTURES / "cflue_mcq.json")],
        [*db, "users", "add", "lena", "--role", "lead"],
        *([*db, "decide", item, "--as", "lena", "--status", "approved"] for item in approved),
        [*evaluate, "--shots", "1"],
        [*evaluate, "--mode", "score"],
        [*evaluate, "--protocol", "cflue", "--max-new-tokens", "8"],
        [*db, "runs", "--json"],
        [*db, "runs", "table"],
        [*db, "export", "--format", "lm-eval", "--out", str(tmp_path / "task")],
    )
    runs = json.loads(printed[-3])
    assert [run["status"] for run in runs] == ["finished"] * 3
    assert runs[0]["total"] == 3  # the approved multiple-choice items, under the CFLUE protocol
    assert printed[-2].startswith("Accuracy by item kind")
    assert (tmp_path / "task" / "utils.py").exists()

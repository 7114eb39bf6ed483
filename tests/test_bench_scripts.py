"""Every benchmark starts the way its docstring says to run it,
``.venv/bin/python bench/NAME.py``: from another folder, with only ``bench/`` on the
path as Python puts it there for a script (``--help``: nothing is measured)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SCRIPTS = sorted(
    path
    for path in (ROOT / "bench").glob("*.py")
    if path.name != "__init__.py" and f"bench/{path.name}" in path.read_text(encoding="utf-8")
)


def test_every_benchmark_says_how_to_run_it() -> None:
    """A benchmark whose docstring names no command line would be missed below."""
    assert len(SCRIPTS) >= 10


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda path: path.stem)
def test_the_benchmark_starts_as_its_docstring_says(script: Path, tmp_path: Path) -> None:
    started = subprocess.run(
        [sys.executable, str(script), "--help"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert started.returncode == 0, started.stderr
    assert "usage:" in started.stdout

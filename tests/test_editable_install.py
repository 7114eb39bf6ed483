"""`pip install -e .` (what scripts/setup.sh runs) builds its editable wheel quietly: a
plain path entry, without setuptools' import hook and the "Editable installation" warning
box it prints about it.  The wheel is built here the way pip builds it, through
setuptools' PEP 660 hook, in a process of its own on a copy of the project."""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PROJECT_FILES = ("pyproject.toml", "README.md", "db", "reviewer", "evaluator")

BUILD = """
import sys, warnings
from setuptools import build_meta
from setuptools.warnings import SetuptoolsWarning

warnings.simplefilter("error", SetuptoolsWarning)  # the box is one of these
print(build_meta.build_editable(sys.argv[1]))
"""


def test_the_editable_install_is_a_plain_path_entry_without_warnings(tmp_path: Path) -> None:
    pytest.importorskip("setuptools", minversion="77")  # pyproject.toml's build requirement
    project = tmp_path / "project"
    ignored = shutil.ignore_patterns("__pycache__", "*.pyc")
    for name in PROJECT_FILES:
        source = ROOT / name
        if source.is_dir():
            shutil.copytree(source, project / name, ignore=ignored)
        else:
            project.mkdir(exist_ok=True)
            shutil.copy2(source, project / name)
    built = subprocess.run(
        [sys.executable, "-c", BUILD, str(tmp_path / "wheel")],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert built.returncode == 0, built.stderr
    assert "Editable installation" not in built.stderr
    wheel = tmp_path / "wheel" / built.stdout.strip().splitlines()[-1]
    with zipfile.ZipFile(wheel) as archive:
        added = [name for name in archive.namelist() if not name.startswith("vetbench-")]
        assert len(added) == 1 and added[0].endswith(".pth"), added  # no finder module
        entry = archive.read(added[0]).decode().strip()
    assert Path(entry) == project.resolve()

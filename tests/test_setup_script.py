"""scripts/setup.sh after a first setup cut short: ``python -m venv`` interrupted (Ctrl-C
in the first minute of ``bash scripts/demo.sh``) leaves .venv with its python but no pip
and no activate script, and the next run stopped at ``. .venv/bin/activate: No such file
or directory`` for good.  setup.sh now makes such a .venv again, and leaves a whole one
alone.  The venv is made by the real ``python -m venv``, without pip (seconds instead of
the full setup's minutes): what follows the venv is skipped by setup.sh's own stamp."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
STAMPED = ("pyproject.toml", "scripts/setup.sh", "scripts/tested-versions.txt")


def run_setup(project: Path, python: str) -> subprocess.CompletedProcess[str]:
    env = {key: value for key, value in os.environ.items() if key != "VIRTUAL_ENV"}
    return subprocess.run(
        ["bash", "scripts/setup.sh"],
        cwd=project,
        env={**env, "PYTHON": python},
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_a_venv_cut_short_is_made_again_and_a_whole_one_is_kept(tmp_path: Path) -> None:
    project = tmp_path / "project"
    (project / "scripts").mkdir(parents=True)
    for name in STAMPED:
        shutil.copy2(ROOT / name, project / name)
    stamp = hashlib.sha256(b"".join((project / name).read_bytes() for name in STAMPED))
    # What an interrupted `python -m venv .venv` leaves: the interpreter linked, no more.
    interrupted = project / ".venv" / "bin"
    interrupted.mkdir(parents=True)
    (interrupted / "python").symlink_to(sys.executable)
    # The venv as setup.sh asks for it, without pip, then setup.sh's stamp of a finished
    # setup, so that it stops there instead of installing everything.
    python = tmp_path / "python3"
    python.write_text(
        f'#!/bin/sh\n"{sys.executable}" "$@" --without-pip && '
        f"echo {stamp.hexdigest()} > .venv/.vetbench-setup\n"
    )
    python.chmod(0o755)

    made_again = run_setup(project, str(python))
    assert made_again.returncode == 0, made_again.stderr
    assert (project / ".venv" / "bin" / "activate").is_file()
    assert (project / ".venv" / ".vetbench-setup").read_text().strip() == stamp.hexdigest()

    kept = run_setup(project, "/bin/false")  # a whole .venv: no venv is made at all
    assert kept.returncode == 0, kept.stderr

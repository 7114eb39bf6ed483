#!/usr/bin/env bash
# The CUDA path in one prepared command, for a bare GPU box where nothing can be fetched
# (one H200 lent for about 15 minutes, at most 10 a command): vetbench against lm-eval's
# HF backend in bfloat16 on a SmolLM2-shaped model built from bench/gpu/*.config.json
# (--model smollm2-360m: the larger one; one model per command), generate and score mode,
# the CFLUE protocol with free-length answers, peak GPU memory and the batch sizes chosen
# from free memory (see bench/gpu_check.py).  About 5 minutes with the wheels' install.
#
# Here, once:  bash bench/gpu_prepare.sh           (.whl/ and .gpu/, both git-ignored)
# On the box:  bash bench/gpu_check.sh [--model NAME=DIR ...]   (carry .whl and .gpu)
#               --modes score --dtype float32: only score mode, both tools in float32
#
# The carried wheels are installed with --no-index --no-deps into a scratch folder
# (VETBENCH_GPU_SITE, default /tmp/vetbench-site) unless this Python already has them.
# PYTHON: the interpreter (default .venv/bin/python where it exists, else python3).
# Figures: the console and $OUT/gpu_check.json (OUT unset: the repository root).
# Without a GPU the same steps run on the CPU on 2 items per task (bench/gpu_dry_run.sh).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
if [[ -z "${PYTHON:-}" ]]; then
    if [[ -x "$ROOT/.venv/bin/python" ]]; then PYTHON="$ROOT/.venv/bin/python"; else PYTHON=python3; fi
fi
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 HF_DATASETS_OFFLINE=1 PYTHONUNBUFFERED=1

if ! "$PYTHON" -c 'import sqlmodel, lm_eval, rapidfuzz' >/dev/null 2>&1; then
    if ! compgen -G "$ROOT/.whl/*.whl" >/dev/null; then
        echo "gpu_check: this Python lacks vetbench's packages and no wheels are in $ROOT/.whl" \
             "(run bash bench/gpu_prepare.sh where pip works, and carry .whl)" >&2
        exit 2
    fi
    site="${VETBENCH_GPU_SITE:-/tmp/vetbench-site}"
    "$PYTHON" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
        --target "$site" "$ROOT"/.whl/*.whl
    export PYTHONPATH="$site${PYTHONPATH:+:$PYTHONPATH}"
fi
export PYTHONPATH="$ROOT${PYTHONPATH:+:$PYTHONPATH}"
out_dir="${OUT:-$ROOT}"
exec "$PYTHON" "$ROOT/bench/gpu_check.py" --out "$out_dir/gpu_check.json" "$@"

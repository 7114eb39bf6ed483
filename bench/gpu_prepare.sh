#!/usr/bin/env bash
# Prepares, on this CPU machine (GPU_PYTHON_VERSION, GPU_WHEELS and GPU_TOKENIZER change
# the Python the wheels are for, default 3.12, and where they go), everything bench/gpu_check.sh needs on a bare GPU box
# where nothing can be fetched and at most 64 MiB travels with the working tree:
#
#   .whl/            Python 3.12 manylinux wheels of exactly the packages in
#                    bench/gpu/wheels.txt (what the evaluation path and lm-eval import
#                    that the box lacks), downloaded with --no-deps;
#   .gpu/tokenizer/  the demo model's tokenizer, chat template and generation settings
#                    (a few MB), so that bench/gpu_check.sh can build SmolLM2-shaped
#                    models from bench/gpu/*.config.json with the real tokenizer.
#
# Both folders are git-ignored; carry them (`carry: [".whl", ".gpu"]`).  It ends by
# printing the size of the wheels and of everything that travels, against the limits.
#
#   bash bench/gpu_prepare.sh            # then: bash bench/gpu_dry_run.sh, or on the box:
#                                        # bash bench/gpu_check.sh
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
PYTHON="${PYTHON:-$ROOT/.venv/bin/python}"
WHEELS="${GPU_WHEELS:-$ROOT/.whl}"
TOKENIZER="${GPU_TOKENIZER:-$ROOT/.gpu/tokenizer}"
PY_VERSION="${GPU_PYTHON_VERSION:-3.12}"  # the box's Python
WHEEL_LIMIT_MIB=50
TREE_LIMIT_MIB=64

if [[ ! -x "$PYTHON" ]]; then
    echo "gpu_prepare: no Python at $PYTHON (run bash scripts/setup.sh first, or set PYTHON=...)" >&2
    exit 2
fi

mkdir -p "$WHEELS"
rm -f "$WHEELS"/*.whl
mapfile -t wanted < <(grep -v '^\s*#' bench/gpu/wheels.txt | grep -v '^\s*$')
platforms=()
for tag in manylinux_2_28_x86_64 manylinux_2_27_x86_64 manylinux_2_17_x86_64 \
           manylinux2014_x86_64 manylinux1_x86_64; do
    platforms+=(--platform "$tag")
done
for requirement in "${wanted[@]}"; do
    if ! "$PYTHON" -m pip download -q --no-deps --only-binary=:all: --python-version "$PY_VERSION" \
            --implementation cp "${platforms[@]}" -d "$WHEELS" "$requirement" 2>/dev/null; then
        # Published as source only (jieba): a pure-Python wheel built here installs anywhere.
        "$PYTHON" -m pip wheel -q --no-deps -w "$WHEELS" "$requirement"
    fi
done
count=$(find "$WHEELS" -maxdepth 1 -type f -name '*.whl' | wc -l)
if [[ "$count" -ne "${#wanted[@]}" ]]; then
    echo "gpu_prepare: expected ${#wanted[@]} wheels in $WHEELS, found $count" >&2
    exit 1
fi

PYTHONPATH="$ROOT" "$PYTHON" - "$TOKENIZER" <<'PY'
import shutil
import sys
from pathlib import Path

from evaluator.demo_model import demo_model_dir

target = Path(sys.argv[1])
source = demo_model_dir()  # converts the demo model's GGUF once, then reads the cache
target.mkdir(parents=True, exist_ok=True)
names = ("tokenizer.json", "tokenizer_config.json", "chat_template.jinja", "generation_config.json")
for name in names:
    if (source / name).exists():
        shutil.copy2(source / name, target / name)
print(f"tokenizer files from {source} -> {target}")
PY

mib() { du -sb "$@" | awk '{s += $1} END {printf "%.1f", s / 1048576}'; }
wheels_mib=$(mib "$WHEELS")
tracked_mib=$(git ls-files -z | du -cb --files0-from=- | tail -n 1 | awk '{printf "%.1f", $1 / 1048576}')
carried_mib=$(mib "$WHEELS" "$(dirname "$TOKENIZER")")
total_mib=$(awk -v a="$tracked_mib" -v b="$carried_mib" 'BEGIN {printf "%.1f", a + b}')
echo "wheels: $count files, $wheels_mib MiB (limit $WHEEL_LIMIT_MIB MiB)"
echo "travels: tree $tracked_mib MiB + .whl and .gpu $carried_mib MiB = $total_mib MiB (limit $TREE_LIMIT_MIB MiB)"
if awk -v w="$wheels_mib" -v t="$total_mib" -v wl="$WHEEL_LIMIT_MIB" -v tl="$TREE_LIMIT_MIB" \
        'BEGIN {exit !(w > wl || t > tl)}'; then
    echo "gpu_prepare: over a limit" >&2
    exit 1
fi

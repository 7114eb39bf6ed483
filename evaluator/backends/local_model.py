"""Which weights a MODEL argument names, and which device and dtype they run on.

MODEL is ``demo`` (SmolLM2-135M-Instruct, see :mod:`evaluator.demo_model`), a local
model directory, a Hugging Face hub id already in the local cache (never downloaded:
vetbench works offline), or a ``.gguf`` file (converted once and cached).  The device
is CUDA when there is a GPU, else the CPU; the dtype bfloat16 where the hardware
multiplies it natively, else float32.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from evaluator.backends.base import BackendError
from evaluator.backends.settings import DEVICES, DTYPES

__all__ = [
    "DEMO_MODEL",
    "ModelSource",
    "cpu_has_bf16_units",
    "find_model_source",
    "resolve_device",
    "resolve_model_source",
]

DEMO_MODEL = "demo"


@dataclass(frozen=True)
class ModelSource:
    """Where a MODEL argument points: what ``from_pretrained`` loads, and a readable origin."""

    path: str
    origin: str  # "demo", "directory", "gguf", "hub cache"


def find_model_source(model: str) -> ModelSource:
    """Where a MODEL argument points, by a look at the disk alone: nothing is converted
    or loaded (a ``.gguf`` file, the demo's too, is its own source).  A ``BackendError``
    says what is missing, so a model that cannot open is said before a run is weighed."""
    from evaluator.demo_model import ModelNotFoundError, demo_gguf_path

    if model == DEMO_MODEL:
        try:
            return ModelSource(str(demo_gguf_path()), "demo")
        except ModelNotFoundError as error:
            raise BackendError(str(error)) from None
    candidate = Path(model).expanduser()
    if model.lower().endswith(".gguf"):
        if not candidate.is_file():
            raise BackendError(f"{candidate}: no such GGUF file")
        return ModelSource(str(candidate), "gguf")
    if candidate.is_dir():
        if not (candidate / "config.json").is_file():
            raise BackendError(f"{candidate}: not a transformers model directory (no config.json)")
        return ModelSource(str(candidate.resolve()), "directory")
    if candidate.exists():
        raise BackendError(f"{candidate}: neither a model directory nor a .gguf file")
    if model.startswith((".", "/", "~")) or model.count("/") > 1:
        raise BackendError(f"{candidate}: no such model directory")
    return ModelSource(model, "hub cache")


def resolve_model_source(model: str) -> ModelSource:
    """Turn a MODEL argument into something ``from_pretrained`` can load offline: a GGUF
    file (the demo's too) converted once, into a cached checkpoint directory."""
    from evaluator.demo_model import convert_gguf

    found = find_model_source(model)
    if found.origin in ("demo", "gguf"):
        return replace(found, path=str(convert_gguf(Path(found.path))))
    return found


# CPU flags (Linux /proc/cpuinfo) of matrix units that multiply bfloat16 natively.
BF16_CPU_FLAGS = frozenset({"amx_bf16", "avx512_bf16"})


def cpu_has_bf16_units(cpuinfo: str | None = None) -> bool:
    """True when the CPU multiplies bfloat16 in hardware (AMX or AVX-512 BF16).

    Read from the ``flags`` lines of ``/proc/cpuinfo`` (or ``cpuinfo``); where that
    file does not exist, torch's own check of oneDNN's bfloat16 support answers.
    """
    if cpuinfo is None:
        try:
            cpuinfo = Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace")
        except OSError:
            return _torch_says_bf16()
    flags = {
        flag
        for line in cpuinfo.splitlines()
        if line.startswith("flags")
        for flag in line.partition(":")[2].split()
    }
    return bool(flags & BF16_CPU_FLAGS)


def _torch_says_bf16() -> bool:
    import torch

    check = getattr(torch.ops.mkldnn, "_is_mkldnn_bf16_supported", None)
    try:
        return bool(check()) if check is not None else False
    except RuntimeError:
        return False


def resolve_device(requested: str, dtype: str = "auto") -> tuple[str, Any]:
    """The device and torch dtype to run on.

    Device ``auto``: CUDA when there is a GPU, else the CPU.  Dtype ``auto``: bfloat16
    on a GPU and on a CPU with bfloat16 matrix units (:func:`cpu_has_bf16_units`),
    float32 on any other CPU.
    """
    import torch

    if requested not in DEVICES:
        raise BackendError(f"unknown device '{requested}' (choose {', '.join(DEVICES)})")
    if dtype not in DTYPES:
        raise BackendError(f"unknown dtype '{dtype}' (choose {', '.join(DTYPES)})")
    if requested == "cuda" and not torch.cuda.is_available():
        raise BackendError("--device cuda was asked for, but no CUDA GPU is available")
    device = (
        "cuda"
        if requested == "cuda" or (requested == "auto" and torch.cuda.is_available())
        else "cpu"
    )
    if dtype == "auto":
        dtype = "bfloat16" if device == "cuda" or cpu_has_bf16_units() else "float32"
    return device, torch.bfloat16 if dtype == "bfloat16" else torch.float32

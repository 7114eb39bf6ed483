"""Writes the bytecode of what vetbench imports, once, on every core.

``scripts/setup.sh`` installs with ``pip --no-compile``: pip compiling every module of
every wheel (all of torch's, transformers' ...) was 60% of a first setup, and vetbench
imports a fifth of those modules.  This imports every vetbench module and every library
a vetbench module imports, even inside a function (the heavy ones are imported lazily),
so that Python writes their bytecode now, in parallel, rather than each command
compiling them again: where PYTHONDONTWRITEBYTECODE is set (some machines set it), the
first import never writes it.  A library that does not import here (an optional one, a
GPU-only one) is skipped; its modules compile when first used, as always.

Usage: python scripts/warm_bytecode.py [PACKAGE ...]   (default: db reviewer evaluator)
"""

from __future__ import annotations

import ast
import importlib
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FIRST_PARTY = ("db", "reviewer", "evaluator")
HEAVY = ("torch", "transformers", "accelerate")  # one process of their own: the long pole
ALSO = ("transformers:LlamaForCausalLM",)  # the demo model's class, loaded by name at run time


def top_module(name: str) -> str:
    """``transformers`` for ``transformers.utils`` and for ``transformers:AutoModel``."""
    return name.split(":")[0].split(".")[0]


def first_party_modules(packages: tuple[str, ...]) -> list[str]:
    """Every module of ``packages`` but a ``__main__`` (importing one runs it)."""
    found = []
    for package in packages:
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = path.relative_to(ROOT).with_suffix("").parts
            if parts[-1] == "__main__":
                continue
            found.append(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return found


def imported_libraries(packages: tuple[str, ...]) -> set[str]:
    """Every absolute import in ``packages`` naming another distribution's module
    (``from transformers import AutoModel`` gives ``transformers`` and, since the
    library loads its names lazily, ``transformers:AutoModel``)."""
    found: set[str] = set()
    for package in packages:
        for path in (ROOT / package).rglob("*.py"):
            tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
            for node in ast.walk(tree):
                if isinstance(node, ast.Import):
                    found.update(alias.name for alias in node.names)
                elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                    found.add(node.module)
                    found.update(f"{node.module}:{alias.name}" for alias in node.names)
    return {name for name in found if top_module(name) not in FIRST_PARTY}


def warm(names: list[str]) -> None:
    """Import each of ``names`` (``module`` or ``module:attribute``), skipping failures."""
    for name in names:
        module, _, attribute = name.partition(":")
        try:
            imported = importlib.import_module(module)
            if attribute:
                getattr(imported, attribute, None)
        except Exception:  # noqa: BLE001 - optional and platform-specific libraries
            continue


def main(argv: list[str]) -> int:
    if argv[:1] == ["--import"]:
        warm(argv[1:])
        return 0
    packages = tuple(argv) or FIRST_PARTY
    libraries = sorted(imported_libraries(packages) | set(ALSO))
    heavy = [name for name in libraries if top_module(name) in HEAVY]
    rest = [name for name in libraries if name not in heavy]
    rest += first_party_modules(packages)
    environment = {**os.environ, "PYTHONPATH": str(ROOT)}
    environment.pop("PYTHONDONTWRITEBYTECODE", None)
    workers = [
        subprocess.Popen(
            [sys.executable, __file__, "--import", *names],
            env=environment,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        for names in (heavy, rest)
    ]
    failed = [code for code in (worker.wait() for worker in workers) if code != 0]
    if failed:  # a warm-up only: what it did not compile compiles when first imported
        print(f"warm_bytecode: an import process exited with {failed[0]}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

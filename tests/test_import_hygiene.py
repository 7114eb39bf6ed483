"""The layering rules of ARCHITECTURE.md, checked: db/ and evaluator/ never import Textual,
db/ never imports torch or transformers, and the CLI and TUI start without them."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

FORBIDDEN = {
    "db": {"textual", "torch", "transformers", "reviewer", "evaluator"},
    "evaluator": {"textual", "reviewer"},
}


def imported_modules(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module.split(".")[0])
    return names


@pytest.mark.parametrize("package", sorted(FORBIDDEN))
def test_package_does_not_import_forbidden_layers(package: str) -> None:
    offenders = {
        str(path.relative_to(ROOT)): sorted(imported_modules(path) & FORBIDDEN[package])
        for path in (ROOT / package).rglob("*.py")
    }
    assert {path: mods for path, mods in offenders.items() if mods} == {}


def test_reviewer_never_imports_torch_at_module_level() -> None:
    offenders = []
    for path in (ROOT / "reviewer").rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in tree.body:  # module level only; imports inside functions are fine
            if isinstance(node, ast.Import | ast.ImportFrom):
                module = node.module if isinstance(node, ast.ImportFrom) else node.names[0].name
                if module and module.split(".")[0] in {"torch", "transformers"}:
                    offenders.append(str(path))
    assert offenders == []


@pytest.mark.parametrize(
    "code",
    [
        "import reviewer.cli",
        "from reviewer.cli import cli; cli.main(['--help'], standalone_mode=False)",
    ],
)
def test_cli_starts_without_heavy_libraries(code: str) -> None:
    probe = (
        f"{code}\nimport sys\n"
        "heavy = sorted(m for m in ('torch', 'transformers') if m in sys.modules)\n"
        "print('HEAVY=' + ','.join(heavy))"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, cwd=ROOT, check=True
    )
    assert result.stdout.strip().splitlines()[-1] == "HEAVY="

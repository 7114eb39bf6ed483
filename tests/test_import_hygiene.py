"""The import rules of ARCHITECTURE.md, checked: one test per row of its table.

| package                   | never imports                                                  |
|---------------------------|----------------------------------------------------------------|
| db/                       | reviewer, evaluator, Textual, torch, transformers              |
| db/vocabulary.py          | anything outside the standard library                          |
| evaluator/                | reviewer, Textual; torch and transformers at module level      |
| reviewer/ review domain   | reviewer.cli, reviewer.tui, evaluator, Textual, torch, transformers |
| reviewer/cli/             | Textual, torch, transformers, the evaluator at module level    |
| reviewer/tui/             | reviewer.cli; torch and transformers at module level           |
| reviewer/cli/, reviewer/tui/ | the ORM models (db.models), SQLAlchemy, SQLModel: anywhere  |

The review domain is every module under ``reviewer/`` outside ``reviewer/cli`` and
``reviewer/tui``.  "At module level" means run on import: anywhere but inside a
function, and not under ``if TYPE_CHECKING:``.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
HEAVY = {"torch", "transformers"}
DB_MAY_IMPORT = {"db", "sqlalchemy", "sqlmodel", "alembic", "rapidfuzz", "numpy", "ijson"}
# The consensus model's inference (db/consensus.py): inside functions only.
DB_MAY_IMPORT_IN_FUNCTIONS = {"pandas", "crowdkit", "scipy"}
# crowd-kit's models as the consensus fits them: it imports pandas and crowd-kit on
# import, so the other modules of db/ import it inside functions only.
DB_LATE_MODULE = "db.dawid_skene"


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(node: ast.AST, *, module_level_only: bool) -> Iterator[str]:
    """Dotted names of the absolute imports under ``node`` (``from a.b import c`` gives
    ``a.b`` and ``a.b.c``); with ``module_level_only``, only those run on import."""
    for child in ast.iter_child_nodes(node):
        if module_level_only and isinstance(
            child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda
        ):
            continue
        if module_level_only and isinstance(child, ast.If) and _is_type_checking(child):
            yield from (
                name
                for branch in child.orelse
                for name in _imports(ast.Module([branch], []), module_level_only=True)
            )
            continue
        if isinstance(child, ast.Import):
            yield from (alias.name for alias in child.names)
        elif isinstance(child, ast.ImportFrom) and child.module and child.level == 0:
            yield child.module
            yield from (f"{child.module}.{alias.name}" for alias in child.names)
        yield from _imports(child, module_level_only=module_level_only)


def imported(path: Path, *, module_level_only: bool = False) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return set(_imports(tree, module_level_only=module_level_only))


def _matches(name: str, forbidden: set[str]) -> bool:
    return any(name == rule or name.startswith(rule + ".") for rule in forbidden)


def offenders(
    paths: list[Path], forbidden: set[str], *, module_level_only: bool = False
) -> dict[str, list[str]]:
    found = {
        str(path.relative_to(ROOT)): sorted(
            name
            for name in imported(path, module_level_only=module_level_only)
            if _matches(name, forbidden)
        )
        for path in paths
    }
    return {path: names for path, names in found.items() if names}


def modules(folder: str) -> list[Path]:
    return sorted((ROOT / folder).rglob("*.py"))


def review_domain() -> list[Path]:
    interfaces = (ROOT / "reviewer" / "cli", ROOT / "reviewer" / "tui")
    return [
        path
        for path in modules("reviewer")
        if not path.is_relative_to(interfaces[0]) and not path.is_relative_to(interfaces[1])
    ]


def test_db_imports_only_the_standard_library_and_its_storage_libraries() -> None:
    # _typeshed: the standard library's type stubs (under TYPE_CHECKING only).
    allowed = set(sys.stdlib_module_names) | DB_MAY_IMPORT | {"_typeshed"}
    late = allowed | DB_MAY_IMPORT_IN_FUNCTIONS
    found = {
        str(path.relative_to(ROOT)): sorted(
            name for name in imported(path) if name.split(".")[0] not in late
        )
        for path in modules("db")
    }
    assert {path: names for path, names in found.items() if names} == {}
    late_module = ROOT / (DB_LATE_MODULE.replace(".", "/") + ".py")
    found = {
        str(path.relative_to(ROOT)): sorted(
            name
            for name in imported(path, module_level_only=True)
            if name.split(".")[0] not in (late if path == late_module else allowed)
            or _matches(name, {DB_LATE_MODULE})
        )
        for path in modules("db")
    }
    assert {path: names for path, names in found.items() if names} == {}
    assert late_module.exists()
    assert offenders(modules("db"), {"reviewer", "evaluator", "textual", *HEAVY}) == {}


def test_vocabulary_loads_nothing_but_the_standard_library() -> None:
    probe = (
        "import sys\n"
        "before = set(sys.modules)\n"
        "import db.vocabulary\n"
        "loaded = {name.split('.')[0] for name in set(sys.modules) - before}\n"
        "print(','.join(sorted(loaded - set(sys.stdlib_module_names) - {'db'})))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, cwd=ROOT, check=True
    )
    assert result.stdout.strip() == ""
    # db/__init__.py counts too: importing the package must not pull a library in.
    names = {name.split(".")[0] for name in imported(ROOT / "db" / "__init__.py")}
    assert names <= set(sys.stdlib_module_names) | {"db"}
    names = {name.split(".")[0] for name in imported(ROOT / "db" / "vocabulary.py")}
    assert names <= set(sys.stdlib_module_names)


def test_evaluator_never_imports_the_reviewer_or_textual() -> None:
    assert offenders(modules("evaluator"), {"reviewer", "textual"}) == {}
    assert offenders(modules("evaluator"), HEAVY, module_level_only=True) == {}


def test_review_domain_imports_neither_interfaces_nor_evaluator_nor_heavy_libraries() -> None:
    domain = review_domain()
    assert ROOT / "reviewer" / "judging.py" in domain
    assert ROOT / "reviewer" / "agreement" / "summary.py" in domain
    assert not any("cli" in path.parts or "tui" in path.parts for path in domain)
    forbidden = {"reviewer.cli", "reviewer.tui", "evaluator", "textual", *HEAVY}
    assert offenders(domain, forbidden) == {}


def test_cli_imports_no_textual_torch_transformers_or_evaluator_at_module_level() -> None:
    forbidden = {"textual", "evaluator", "reviewer.tui", *HEAVY}
    assert offenders(modules("reviewer/cli"), forbidden, module_level_only=True) == {}


def test_tui_never_imports_the_cli_nor_heavy_libraries_at_module_level() -> None:
    assert offenders(modules("reviewer/tui"), {"reviewer.cli"}) == {}
    assert offenders(modules("reviewer/tui"), HEAVY, module_level_only=True) == {}


STORAGE = {"db.models", "sqlalchemy", "sqlmodel"}


def test_commands_and_screens_hold_no_orm_rows_and_build_no_queries() -> None:
    """Commands and widgets call domain functions (``db/``, the review domain, the
    evaluator) and get frozen values back: no ORM model, no SQL, even inside a function."""
    assert offenders(modules("reviewer/cli") + modules("reviewer/tui"), STORAGE) == {}


@pytest.mark.parametrize(
    "code",
    [
        "import reviewer.cli",
        "from reviewer.cli import cli; cli.main(['--help'], standalone_mode=False)",
    ],
)
def test_cli_starts_without_heavy_libraries_textual_or_the_evaluator(code: str) -> None:
    """The rules above, transitively: ``vetbench --help`` loads none of them."""
    assert loaded_by(code, {"torch", "transformers", "textual", "evaluator"}) == []


def test_the_review_app_and_the_queue_start_without_numpy() -> None:
    """numpy is the near-duplicate detector's (``db/dedup.py``): the app, the queue and
    the commands that read flags import ``db.flags`` without it, as a tenth of their
    start once went to loading numpy."""
    code = "import reviewer.cli, reviewer.queue, reviewer.tui.app, db.flags, db.items"
    assert loaded_by(code, {"numpy"}) == []


def loaded_by(code: str, names: set[str]) -> list[str]:
    """Which of the modules ``names`` a fresh interpreter holds after running ``code``."""
    probe = (
        f"{code}\nimport sys\n"
        f"loaded = sorted(name for name in {sorted(names)!r} if name in sys.modules)\n"
        "print('LOADED=' + ','.join(loaded))"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, cwd=ROOT, check=True
    )
    return [name for name in result.stdout.strip().splitlines()[-1][7:].split(",") if name]


def test_the_checks_see_imports_where_they_hide(tmp_path: Path) -> None:
    """The AST reader finds nested, aliased and from-imports, and tells module level
    from function bodies and TYPE_CHECKING blocks."""
    source = tmp_path / "probe.py"
    source.write_text(
        "from __future__ import annotations\n"
        "from typing import TYPE_CHECKING\n"
        "import textual.app as tapp\n"
        "from reviewer import tui\n"
        "try:\n    import torch\nexcept ImportError:\n    pass\n"
        "if TYPE_CHECKING:\n    import transformers\n"
        "def late():\n    import evaluator.runner\n",
        encoding="utf-8",
    )
    everything = imported(source)
    assert {"textual.app", "reviewer", "reviewer.tui", "torch", "transformers"} <= everything
    assert "evaluator.runner" in everything
    on_import = imported(source, module_level_only=True)
    assert {"textual.app", "reviewer.tui", "torch"} <= on_import
    assert "transformers" not in on_import and "evaluator.runner" not in on_import

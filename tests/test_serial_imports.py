"""The statistics libraries that worker threads import lazily are imported one thread at
a time (``db.serial_imports``): scikit-learn imported by two threads at once fails, and
the review app's F3 and F2 workers, opened quickly one after the other, ended the app so."""

from __future__ import annotations

import ast
import subprocess
import sys
import textwrap
from pathlib import Path

from conftest import ROOT

SERIAL = frozenset({"sklearn", "crowdkit", "scipy", "statsmodels", "krippendorff"})
"""What ``db.serial_imports`` says is imported only under its lock, where imported lazily."""
SERIAL_MODULES = {"db.dawid_skene": ROOT / "db" / "dawid_skene.py"}
"""Modules of ours that import crowd-kit on import: imported under the lock too, and
their own imports run under their importer's."""

# Two threads in a process that has imported no scikit-learn yet, each entering it by
# another module (Cohen's kappa; what crowd-kit's models check their input with), the
# second 50 ms after the first, while the first is inside the package.  Without the lock
# this failed in 6 runs of 6 ("cannot import name '_MetadataRequester' from partially
# initialized module").
TWO_THREADS_IMPORTING = textwrap.dedent(
    """
    import sys, threading, time
    from db.serial_imports import one_thread_importing

    assert "sklearn" not in sys.modules
    failures = []

    def cohen():
        from sklearn.metrics import cohen_kappa_score

    def validation():
        from sklearn.utils.validation import check_array

    def run(imports):
        try:
            with one_thread_importing():
                imports()
        except BaseException as error:
            failures.append(repr(error))

    threads = [threading.Thread(target=run, args=(f,)) for f in (cohen, validation)]
    for thread in threads:
        thread.start()
        time.sleep(0.05)
    for thread in threads:
        thread.join()
    print(failures)
    """
)


def test_two_threads_entering_scikit_learn_at_once_under_the_lock_both_succeed() -> None:
    probe = [sys.executable, "-c", TWO_THREADS_IMPORTING]
    result = subprocess.run(probe, capture_output=True, text=True, cwd=ROOT, check=True)
    assert result.stdout.strip() == "[]", result.stdout  # no thread failed


def _under_the_lock(node: ast.With) -> bool:
    return any(
        isinstance(item.context_expr, ast.Call)
        and isinstance(item.context_expr.func, ast.Name)
        and item.context_expr.func.id == "one_thread_importing"
        for item in node.items
    )


def _unlocked_imports(path: Path) -> list[str]:
    """Imports of the libraries in SERIAL inside functions but outside the lock, and any
    at module level (imported by whichever thread imports that module first: a screen's
    worker, for one)."""
    found: list[str] = []

    def visit(node: ast.AST, in_function: bool, locked: bool) -> None:
        if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING":
            return  # for the type checker only: never imported when the code runs
        if isinstance(node, ast.Import | ast.ImportFrom):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
            if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            serial = {name for name in names if name.split(".")[0] in SERIAL}
            serial |= set(names) & set(SERIAL_MODULES)
            lazy_unlocked = in_function and not locked and serial
            at_top = not in_function and serial and path not in SERIAL_MODULES.values()
            if lazy_unlocked or at_top:
                found.append(f"{path}:{node.lineno}")
        for child in ast.iter_child_nodes(node):
            visit(
                child,
                in_function or isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef),
                locked or (isinstance(node, ast.With) and _under_the_lock(node)),
            )

    visit(ast.parse(path.read_text(encoding="utf-8")), in_function=False, locked=False)
    return found


def test_every_lazy_import_of_these_libraries_holds_the_lock(tmp_path: Path) -> None:
    files = [
        path for area in ("db", "reviewer", "evaluator") for path in (ROOT / area).rglob("*.py")
    ]
    assert [place for path in files for place in _unlocked_imports(path)] == []
    # The check finds what it looks for.
    sample = tmp_path / "sample.py"
    sample.write_text(
        "from sklearn import metrics\n"  # scikit-learn at module level
        "from scipy import sparse\n"  # scipy at module level
        "if TYPE_CHECKING:\n"
        "    from scipy.stats import norm\n"  # for the type checker only: fine
        "def kappa():\n"
        "    from scipy.stats import beta\n"  # lazy, unlocked
        "    with one_thread_importing():\n"
        "        from crowdkit.aggregation import DawidSkene\n"  # lazy, locked: fine
        "def fit():\n"
        "    from db.dawid_skene import FastDawidSkene\n",  # our crowd-kit module, unlocked
        encoding="utf-8",
    )
    assert _unlocked_imports(sample) == [
        f"{sample}:1",
        f"{sample}:2",
        f"{sample}:6",
        f"{sample}:10",
    ]

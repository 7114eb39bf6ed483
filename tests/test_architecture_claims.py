"""ARCHITECTURE.md's claims that the source itself shows, checked on the source.

- "JSON is made at the edge, once": every ``--json`` printer prints a typed result's
  own ``to_json()`` (or a list of them); no command builds a JSON dict by hand or calls
  ``json.dumps`` itself (``reviewer/cli/output.py:print_json`` is the one that does).
- "Every command that writes a file the user named writes it through
  ``evaluator/exports/atomic_write.py``": nothing else in the review domain, the
  interfaces or the exports opens a file for writing, stages a temporary file or
  folder, or renames one into place.
- "The CLI group prints that line": no command catches an expected error only to
  print it (``except SomeError as error: fail(str(error))``), which would be a second
  place deciding how one is shown.

- "One module per screen, styled from a ``.tcss`` file ... while each reusable widget
  (in ``widgets/``) keeps its own ``DEFAULT_CSS``": no class in ``screens/`` (a screen,
  or a widget only its screen uses) carries ``DEFAULT_CSS``.
- "No module in ``db/``, ``reviewer/`` or ``evaluator/`` is longer than 700 lines."
- "No text writes ``item(s)``": no string in the three areas but a docstring has a word
  with ``(s)`` after it; counts go through ``db/words.py``.
- "Where things are" names every module of the three areas and every migration, and no
  module that is gone.

(The import rules are checked in ``tests/test_import_hygiene.py``; the agreement rows
shared by the CLI, the report and the screen in ``tests/test_tui_lead.py``.)
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def sources(*folders: str) -> Iterator[tuple[str, ast.AST]]:
    for folder in folders:
        for path in sorted((ROOT / folder).rglob("*.py")):
            yield str(path.relative_to(ROOT)), ast.parse(path.read_text(encoding="utf-8"))


def found_in(
    check: Callable[[ast.AST], list[str]], *folders: str, but: str
) -> dict[str, list[str]]:
    """What ``check`` finds in each module under ``folders``, by path; ``but``: the one
    module the claim names as the place that may do it."""
    return {
        path: lines for path, tree in sources(*folders) if path != but and (lines := check(tree))
    }


def _called_name(call: ast.Call) -> str:
    """``print_json``, ``json.dumps``, ``handle.write_text``: the called name as written."""
    return ast.unparse(call.func)


def _is_to_json(node: ast.AST) -> bool:
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "to_json"
    )


def hand_made_json(tree: ast.AST) -> list[str]:
    """Where ``tree`` prints JSON that is not a result's ``to_json()``, or dumps JSON."""
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        name = _called_name(node)
        if name.endswith("json.dumps"):
            found.append(f"{node.lineno}: {name}")
        if name == "print_json":
            [argument] = node.args
            printed = argument.elt if isinstance(argument, ast.ListComp) else argument
            if not _is_to_json(printed):
                found.append(f"{node.lineno}: print_json({ast.unparse(argument)[:40]})")
    return found


def test_json_is_made_once_by_each_results_to_json() -> None:
    by_hand = found_in(hand_made_json, "reviewer/cli", "reviewer/tui", but="reviewer/cli/output.py")
    assert by_hand == {}


WRITERS = {
    "os.replace",
    "os.rename",
    "shutil.move",
    "shutil.copy",
    "shutil.copyfile",
    "tempfile.mkstemp",
    "tempfile.mkdtemp",
    "tempfile.NamedTemporaryFile",
}
WRITER_METHODS = {"write_text", "write_bytes", "rename", "symlink_to"}


def _writes(call: ast.Call) -> bool:
    name = _called_name(call)
    if name in WRITERS:
        return True
    if isinstance(call.func, ast.Attribute) and call.func.attr in WRITER_METHODS:
        return True
    if name == "open" or (isinstance(call.func, ast.Attribute) and call.func.attr == "open"):
        modes = [keyword.value for keyword in call.keywords if keyword.arg == "mode"]
        modes += call.args[1:2] if name == "open" else call.args[:1]
        return any(
            isinstance(mode, ast.Constant) and set(str(mode.value)) & set("wax+") for mode in modes
        )
    return False


def file_writes(tree: ast.AST) -> list[str]:
    return [
        f"{node.lineno}: {_called_name(node)}"
        for node in ast.walk(tree)
        if isinstance(node, ast.Call) and _writes(node)
    ]


def test_every_file_the_user_names_is_written_through_atomic_write() -> None:
    writers = found_in(
        file_writes, "reviewer", "evaluator/exports", but="evaluator/exports/atomic_write.py"
    )
    assert writers == {}


def reprinted_errors(tree: ast.AST) -> list[str]:
    """Handlers in ``tree`` that only print the error they caught, as the group would."""
    return [
        f"{handler.lineno}: except {ast.unparse(handler.type) if handler.type else ''}"
        for handler in ast.walk(tree)
        if isinstance(handler, ast.ExceptHandler)
        and handler.name is not None
        and [ast.unparse(statement) for statement in handler.body] == [f"fail(str({handler.name}))"]
    ]


def test_commands_leave_expected_errors_to_the_group() -> None:
    assert found_in(reprinted_errors, "reviewer/cli", but="") == {}


def test_the_checks_see_what_they_look_for() -> None:
    printed = ast.parse(
        "print_json(report.to_json())\n"
        "print_json([row.to_json(x=1) for row in rows])\n"
        "print_json({'id': item.id})\n"
        "print_json([{'id': row.id} for row in rows])\n"
        "text = json.dumps(data)\n"
    )
    assert [line.split(":")[0] for line in hand_made_json(printed)] == ["3", "4", "5"]
    written = ast.parse(
        "path.write_text('x')\n"
        "open(path, 'w')\n"
        "open(path)\n"
        "path.open('a', encoding='utf-8')\n"
        "path.open(encoding='utf-8')\n"
        "os.replace(a, b)\n"
        "staging.rename(target)\n"
        "tempfile.mkdtemp()\n"
        "text.replace('a', 'b')\n"
    )
    assert [line.split(":")[0] for line in file_writes(written)] == ["1", "2", "4", "6", "7", "8"]
    caught = ast.parse(
        "try:\n    f()\nexcept GoldError as error:\n    fail(str(error))\n"
        "try:\n    f()\nexcept GoldError as error:\n    fail(f'{name}: {error}')\n"
        "try:\n    f()\nexcept OSError as error:\n    cleanup()\n    fail(str(error))\n"
    )
    assert [line.split(":")[0] for line in reprinted_errors(caught)] == ["3"]
    styled = ast.parse(
        "class A(DialogScreen[None]):\n    DEFAULT_CSS = ''\n"
        "class B(Widget):\n    DEFAULT_CSS = ''\n"
        "class C(Screen):\n    CSS_PATH = 'c.tcss'\n"
        "class D(textual.screen.ModalScreen[bool]):\n    DEFAULT_CSS = ''\n"
    )
    assert classes_with_default_css(styled) == ["1: A", "3: B", "7: D"]
    hedged = ast.parse(
        '"""Each character(s) of a docstring."""\n'
        "note = f'{n} item(s) left'\n"
        "label = 'Skip (s)'\n"
        "log.info('only %d row(s)', n)\n"
        "error = 'an http(s) address'\n"
    )
    assert [line.split(":")[0] for line in hedged_plurals(hedged)] == ["2", "4"]


def classes_with_default_css(tree: ast.AST) -> list[str]:
    """The classes in ``tree`` that set ``DEFAULT_CSS``."""
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.ClassDef):
            continue
        if any(
            isinstance(statement, ast.Assign)
            and any(getattr(target, "id", None) == "DEFAULT_CSS" for target in statement.targets)
            for statement in node.body
        ):
            found.append(f"{node.lineno}: {node.name}")
    return found


def test_screens_take_their_styles_from_tcss_files() -> None:
    assert found_in(classes_with_default_css, "reviewer/tui/screens", but="") == {}


_HEDGED_PLURAL = re.compile(r"(?<![a-z])(?!http\()[a-z]+\(s\)")  # item(s), not http(s)


def hedged_plurals(tree: ast.AST) -> list[str]:
    """The strings in ``tree``, docstrings aside, that hedge a plural: ``item(s)``."""
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    return [
        f"{node.lineno}: {node.value[:50]}"
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and id(node) not in docstrings
        and _HEDGED_PLURAL.search(node.value)
    ]


def test_counts_are_said_in_words_not_hedged() -> None:
    assert found_in(hedged_plurals, "db", "reviewer", "evaluator", but="") == {}


MOST_LINES = 700


def test_no_module_is_longer_than_700_lines() -> None:
    longer = {
        str(path.relative_to(ROOT)): count
        for folder in ("db", "reviewer", "evaluator")
        for path in sorted((ROOT / folder).rglob("*.py"))
        if (count := len(path.read_text(encoding="utf-8").splitlines())) > MOST_LINES
    }
    assert longer == {}


# Modules the map describes by what they are rather than by name: packages' own files,
# the migrations (each one step of the schema), and the review screen's widgets ("one
# module per region of the review screen").
UNNAMED_IN_THE_MAP = (
    "__init__.py",
    "__main__.py",
    "db/migrations/versions/",
    "reviewer/tui/widgets/",
)


def _named_modules(text: str) -> set[str]:
    """Every ``name.py`` or ``path/name.py`` written in backticks."""
    return set(re.findall(r"`([\w/.]+\.py)`", text))


def test_the_map_names_every_module_and_none_that_is_gone() -> None:
    text = (ROOT / "ARCHITECTURE.md").read_text(encoding="utf-8")
    modules = [
        str(path.relative_to(ROOT))
        for folder in ("db", "reviewer", "evaluator")
        for path in sorted((ROOT / folder).rglob("*.py"))
    ]
    named = _named_modules(text)
    named_files = {Path(name).name for name in named}
    unnamed = [
        module
        for module in modules
        if Path(module).name not in named_files
        and not any(part in module for part in UNNAMED_IN_THE_MAP)
    ]
    assert unnamed == []
    file_names = {path.name for path in ROOT.glob("[!.]*/**/*.py")}
    gone = [
        name
        for name in sorted(named)
        if not ((ROOT / name).is_file() if "/" in name else name in file_names)
    ]
    assert gone == []
    # the migrations by number, each with what it changes
    steps = {path.name[:4] for path in (ROOT / "db/migrations/versions").glob("[0-9]*.py")}
    assert sorted(step for step in steps if f"`{step}`" not in text) == []
    assert _named_modules("`db/items.py` and `rows.py`, not items.py") == {"db/items.py", "rows.py"}

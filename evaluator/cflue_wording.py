"""CFLUE's official prompt wording, read from a local clone of its repository as data.

vetbench ships no copy of CFLUE's wording: its built-in ``cflue`` layout says the same
things in its own words.  ``vetbench eval --protocol cflue --cflue-repo PATH`` reads
the official wording from ``PATH/utils/format_example.py`` instead, so that prompts are
byte-identical to those of CFLUE's evaluation code.  The module is parsed with
:mod:`ast` and only its string literals are read: it is never imported or run.

What is read, and checked, in each of ``format_one_example`` (single choice, and true/false
as the official code asks it) and ``format_multi_example`` (multiple answers):

- the literal assigned to ``template``: an instruction header, a blank line, then
  ``{question}``, a line break and ``{choices}``; the header becomes the
  ``instructions.single.zh.txt`` / ``instructions.multi.zh.txt`` template of the
  ``cflue`` layout, whose question block is already ``$question`` / ``$options``;
- each option written as ``f'{choice}. {content}'`` and the options joined by a
  line break, as vetbench's ``option.txt`` (``$label. $text``) writes them.

A file of another shape is refused with a one-line error naming the file and line,
rather than read into prompts that would silently differ.
"""

from __future__ import annotations

import ast
import hashlib
from dataclasses import dataclass
from pathlib import Path

from db.errors import VetbenchError
from evaluator.results import JsonObject

__all__ = [
    "BUILT_IN",
    "FROM_REPOSITORY",
    "PROMPT_MODULE",
    "CflueWording",
    "WordingError",
    "read_cflue_wording",
    "wording_of",
]

PROMPT_MODULE = Path("utils") / "format_example.py"
BUILT_IN = "built-in"
FROM_REPOSITORY = "cflue-repo"
# The function that builds each kind's prompt, and the instructions template it fills.
_FUNCTIONS = {
    "format_one_example": "instructions.single.zh.txt",
    "format_multi_example": "instructions.multi.zh.txt",
}
_TEMPLATE_TAIL = "\n\n{question}\n{choices}"
_OPTION_SEPARATOR = "\n"


class WordingError(VetbenchError, ValueError):
    """A CFLUE repository whose prompt module cannot be read as expected; names the place."""


@dataclass(frozen=True)
class CflueWording:
    """The instruction headers read from CFLUE's repository, and where they came from."""

    instructions: dict[str, str]  # template file name -> header text
    path: Path
    sha256: str

    def to_json(self) -> JsonObject:
        """What a run records about its wording (``params["wording"]``)."""
        return {"source": FROM_REPOSITORY, "path": str(self.path), "sha256": self.sha256}


def wording_of(recorded: object) -> str:
    """A run's recorded wording in a few words: ``CFLUE repo (sha256 1a2b3c4d)`` or
    ``built-in`` (runs from before wording was recorded used the built-in one)."""
    if isinstance(recorded, dict) and recorded.get("source") == FROM_REPOSITORY:
        return f"CFLUE repo (sha256 {str(recorded.get('sha256', ''))[:8]})"
    if isinstance(recorded, dict) and recorded.get("source") == "templates":
        return f"templates folder {recorded.get('path')}"
    return BUILT_IN


def _template_literal(function: ast.FunctionDef, path: Path) -> tuple[str, int]:
    for node in ast.walk(function):
        if (
            isinstance(node, ast.Assign)
            and any(isinstance(t, ast.Name) and t.id == "template" for t in node.targets)
            and isinstance(node.value, ast.Constant)
            and isinstance(node.value.value, str)
        ):
            return node.value.value, node.lineno
    raise WordingError(
        f"{path}:{function.lineno}: {function.name} assigns no string literal to 'template'"
    )


def _check_options(function: ast.FunctionDef, path: Path) -> None:
    """The options must be written ``f'{choice}. {content}'`` and joined by a line break."""
    for node in ast.walk(function):
        if not (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "join"
            and isinstance(node.func.value, ast.Constant)
        ):
            continue
        pieces = [
            piece
            for piece in ast.walk(node)
            if isinstance(piece, ast.JoinedStr)
            and [type(value) for value in piece.values]
            == [ast.FormattedValue, ast.Constant, ast.FormattedValue]
        ]
        separator = node.func.value.value
        if (
            separator == _OPTION_SEPARATOR
            and pieces
            and all(isinstance(v, ast.Constant) and v.value == ". " for v in pieces[0].values[1:2])
        ):
            return
        raise WordingError(
            f"{path}:{node.lineno}: {function.name} writes its options otherwise than "
            f"'{{choice}}. {{content}}' one per line; vetbench cannot reproduce it"
        )
    raise WordingError(f"{path}:{function.lineno}: {function.name} joins no options")


def read_cflue_wording(repository: Path) -> CflueWording:
    """The official instruction headers from a clone of CFLUE's repository (see the
    module docstring); a :class:`WordingError` names what is missing or different."""
    root = Path(repository).expanduser().resolve()
    path = root / PROMPT_MODULE
    if not root.is_dir():
        raise WordingError(f"{root}: not a folder (give a clone of CFLUE's repository)")
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise WordingError(f"{path}: no such file (is {root} a clone of CFLUE?)") from None
    except OSError as error:
        raise WordingError(f"{path}: cannot read ({error.strerror})") from None
    try:
        tree = ast.parse(data.decode("utf-8"), filename=str(path))
    except UnicodeDecodeError as error:
        raise WordingError(f"{path}: not UTF-8 text ({error.reason})") from None
    except SyntaxError as error:
        raise WordingError(f"{path}:{error.lineno}: not valid Python ({error.msg})") from None
    functions = {
        node.name: node
        for node in tree.body
        if isinstance(node, ast.FunctionDef) and node.name in _FUNCTIONS
    }
    instructions = {}
    for name, template_file in _FUNCTIONS.items():
        function = functions.get(name)
        if function is None:
            raise WordingError(f"{path}: no function {name}")
        template, line = _template_literal(function, path)
        if not template.endswith(_TEMPLATE_TAIL):
            raise WordingError(
                f"{path}:{line}: the template of {name} does not end with a blank line, "
                "{question}, a line break and {choices}"
            )
        header = template.removesuffix(_TEMPLATE_TAIL)
        if not header.strip():
            raise WordingError(f"{path}:{line}: the template of {name} has no instructions")
        _check_options(function, path)
        instructions[template_file] = header
    return CflueWording(instructions, path, hashlib.sha256(data).hexdigest())

"""The display form of item text: HTML entities decoded, LaTeX shown as Unicode.

CFLUE was scraped from web pages: its text carries HTML entities, often escaped
twice (``&amp;nbsp;``, ``&amp;amp;``), and a few items carry LaTeX (accounting
entries in ``\\begin{align}``, formulas in ``$...$``).  People should read
"借：银行存款  106" and "f₀₋₁=1.41", not the source.  The stored text never
changes: this is only how it is shown, and ``raw=True`` gives it back untouched.

- Entities (the rule of :mod:`db.markup`, which the ``html`` flag uses too): only
  well-formed ones (``&name;``, ``&#123;``, ``&#x7b;``) are decoded, repeatedly
  until nothing changes, so ``&amp;nbsp;`` becomes a no-break space and
  "R&D" or "AT&T" stay as they are.  Decoding never interprets markup: a decoded
  ``<img src=...>`` is shown as those characters.
- LaTeX: only spans that are LaTeX are converted (an environment
  ``\\begin{x}...\\end{x}``, ``$...$`` by pandoc's rule, ``$$...$$``, ``\\(...\\)``,
  ``\\[...\\]``, and bare math commands such as ``\\frac{a}{b}`` or ``\\times``), with
  pylatexenc's ``LatexNodes2Text``; everything else, backslashes included, is left
  alone.  Fractions get the parentheses they need, sub- and superscripts become
  Unicode where every character has a form, and a command written against a
  Chinese character (``\\quad贷``, as MathJax reads it) keeps the character.

Standard library, ``db.markup`` and pylatexenc only, so the CLI can use it as well as
the TUI.
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Callable
from functools import lru_cache
from typing import Any

from db.markup import MAX_ENTITY_ROUNDS, decode_entities

__all__ = [
    "MAX_ENTITY_ROUNDS",
    "decode_entities",
    "display_text",
    "has_display_form",
    "latex_spans",
    "latex_to_unicode",
]

# Commands that mark a span as LaTeX even without $ delimiters; a backslash before
# any other word (a path, "公司\机构") is ordinary text.
_BARE_MATH_COMMANDS = (
    "frac|dfrac|tfrac|cfrac|sqrt|times|div|cdot|cdots|ldots|dots|pm|mp|le|leq|ge|geq|"
    "ne|neq|approx|equiv|sim|propto|infty|sum|prod|int|partial|nabla|to|rightarrow|"
    "leftarrow|Rightarrow|Leftarrow|leftrightarrow|in|notin|subset|subseteq|cup|cap|"
    "forall|exists|quad|qquad|overline|bar|hat|mathrm|mathbf|text|log|ln|exp|max|min|lim|"
    "alpha|beta|gamma|Gamma|delta|Delta|epsilon|varepsilon|zeta|eta|theta|Theta|lambda|"
    "Lambda|mu|nu|xi|pi|Pi|rho|sigma|Sigma|tau|phi|Phi|varphi|chi|psi|Psi|omega|Omega"
)
_BRACED = r"\{(?:[^{}]|\{[^{}]*\})*\}"  # a {group}, one level of nesting inside
_LATEX_SPAN = re.compile(
    "|".join(
        (
            r"\\begin\{(?P<env>[A-Za-z]+\*?)\}.*?\\end\{(?P=env)\}",
            r"\$\$.+?\$\$",
            r"\\\[.+?\\\]",
            r"\\\(.+?\\\)",
            # pandoc's rule: no space inside either dollar, no digit right after the
            # closing one, so "$5 and $7" stays money
            r"(?<![\\$])\$(?=[^\s$])(?:[^$\n\\]|\\.)+?(?<=[^\s\\])\$(?![0-9$])",
            rf"\\(?:{_BARE_MATH_COMMANDS})(?![A-Za-z])"
            rf"(?:\s*\[[^\]]*\])?(?:\s*{_BRACED}|[_^](?:{_BRACED}|\\?[A-Za-z0-9]))*",
        )
    ),
    re.DOTALL,
)
# "\quad贷": pylatexenc, like TeX engines, reads every letter as part of the name;
# MathJax, which these items were written for, stops at the first non-ASCII one.
_COMMAND_BEFORE_NON_ASCII = re.compile(r"(\\[A-Za-z]+)(?=[^\x00-\x7f])")

_SUBSCRIPTS = dict(
    zip(
        "0123456789+-=()aehijklmnoprstuvxβγρφχ",
        "₀₁₂₃₄₅₆₇₈₉₊₋₌₍₎ₐₑₕᵢⱼₖₗₘₙₒₚᵣₛₜᵤᵥₓᵦᵧᵨᵩᵪ",
        strict=True,
    )
)
_SUPERSCRIPTS = dict(
    zip(
        "0123456789+-=()abcdefghijklmnoprstuvwxyzABDEGHIJKLMNOPRTUVW",
        "⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻⁼⁽⁾ᵃᵇᶜᵈᵉᶠᵍʰⁱʲᵏˡᵐⁿᵒᵖʳˢᵗᵘᵛʷˣʸᶻᴬᴮᴰᴱᴳᴴᴵᴶᴷᴸᴹᴺᴼᴾᴿᵀᵁⱽᵂ",
        strict=True,
    )
)
_FRACTIONS = ("frac", "dfrac", "tfrac", "cfrac")
_ALIGNED_ENVIRONMENTS = ("aligned", "alignedat", "gathered", "split")


def display_text(text: str, *, raw: bool = False) -> str:
    """``text`` as people should read it; ``raw=True`` returns it exactly as stored."""
    if raw or not text:
        return text
    return _display_form(text)


def has_display_form(text: str) -> bool:
    """Whether the display form differs from the stored text (a raw view shows something else)."""
    return bool(text) and _display_form(text) != text


def latex_spans(text: str) -> list[tuple[int, int]]:
    """``(start, end)`` of each LaTeX span in ``text``, in order."""
    return [match.span() for match in _LATEX_SPAN.finditer(text)]


def latex_to_unicode(text: str) -> str:
    """``text`` with each LaTeX span replaced by readable Unicode; the rest untouched."""
    pieces: list[str] = []
    position = 0
    for start, end in latex_spans(text):
        converted = _convert_span(text[start:end])
        if start == 0:
            converted = converted.lstrip("\n")
        if end == len(text):
            converted = converted.rstrip("\n")
        pieces += [text[position:start], converted]
        position = end
    pieces.append(text[position:])
    return "".join(pieces)


@lru_cache(maxsize=2048)
def _display_form(text: str) -> str:
    return latex_to_unicode(decode_entities(text))


def _convert_span(span: str) -> str:
    walker_module, converter = _latex_tools()
    source = _COMMAND_BEFORE_NON_ASCII.sub(r"\1{}", span)
    try:
        walker = walker_module.LatexWalker(
            source, latex_context=_walker_context(), tolerant_parsing=True
        )
        nodes = walker.get_latex_nodes()[0]
        converted: str = converter.nodelist_to_text(nodes)
    except Exception:  # pylatexenc refused this span: show it as written, lose nothing
        return span
    lines = [line.rstrip() for line in converted.split("\n")]
    if len(lines) > 1:  # an environment: keep its relative indentation only
        lines = textwrap.dedent("\n".join(lines)).split("\n")
    return "\n".join(lines)


def _script(table: dict[str, str], mark: str) -> Callable[[Any, Any], str]:
    """Sub- or superscript: Unicode forms when every character has one, else ``_(...)``."""

    def to_text(node: Any, l2tobj: Any) -> str:
        argument = node.nodeargd.argnlist[-1] if node.nodeargd else None
        text = l2tobj.nodelist_to_text([argument]).strip() if argument is not None else ""
        if text and all(character in table for character in text):
            return "".join(table[character] for character in text)
        return f"{mark}({text})" if len(text) > 1 else mark + text

    return to_text


def _fraction(node: Any, l2tobj: Any) -> str:
    """``a/b``, with parentheses around a numerator or denominator that needs them."""
    numerator, denominator = (
        l2tobj.nodelist_to_text([argument]).strip() for argument in node.nodeargd.argnlist[-2:]
    )

    def operand(text: str) -> str:
        return text if all(c.isalnum() or c == "." for c in text) else f"({text})"

    return f"{operand(numerator)}/{operand(denominator)}"


@lru_cache(maxsize=1)
def _walker_context() -> Any:
    """pylatexenc's parsing context plus the fractions and ^ _ as commands with one argument."""
    from pylatexenc import latexwalker
    from pylatexenc.macrospec import MacroSpec, MacroStandardArgsParser, SpecialsSpec

    context = latexwalker.get_default_latex_context_db()
    context.add_context_category(
        "vetbench",
        prepend=True,
        macros=[MacroSpec(name, "{{") for name in _FRACTIONS],
        specials=[
            SpecialsSpec("^", MacroStandardArgsParser("{")),
            SpecialsSpec("_", MacroStandardArgsParser("{")),
        ],
    )
    return context


@lru_cache(maxsize=1)
def _latex_tools() -> tuple[Any, Any]:
    """pylatexenc's walker module and a LatexNodes2Text with this module's additions."""
    from pylatexenc import latexwalker
    from pylatexenc.latex2text import (
        EnvironmentTextSpec,
        LatexNodes2Text,
        MacroTextSpec,
        SpecialsTextSpec,
        get_default_latex_context_db,
    )

    context = get_default_latex_context_db()
    align = context.get_environment_spec("align").simplify_repl
    context.add_context_category(
        "vetbench",
        prepend=True,
        macros=[MacroTextSpec(name, simplify_repl=_fraction) for name in _FRACTIONS],
        specials=[
            SpecialsTextSpec("^", simplify_repl=_script(_SUPERSCRIPTS, "^")),
            SpecialsTextSpec("_", simplify_repl=_script(_SUBSCRIPTS, "_")),
        ],
        environments=[
            EnvironmentTextSpec(name, simplify_repl=align) for name in _ALIGNED_ENVIRONMENTS
        ],
    )
    return latexwalker, LatexNodes2Text(latex_context=context)

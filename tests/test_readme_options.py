"""Every `vetbench …` command the README shows exists, with every `--option` it gives.

The README is the newcomer's whole guide: a command or option it names that the CLI
does not have is a dead end.  This reads every fenced shell block (continuation lines
joined, comments dropped, pipelines and `&&` lists split), every inline
`` `vetbench …` `` span and the command table's first column, finds the command each names (global options such as
``--db PATH`` before it are skipped), and checks each option against that command's
``--help`` (its visible options).  A problem names the README line."""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import click

from reviewer.cli import cli

README = Path(__file__).resolve().parent.parent / "README.md"
SHELL_BLOCKS = ("bash", "sh", "shell", "console", "")
SEPARATORS = {"|", "||", "&&", ";", "&", "(", ")"}
OPTION = re.compile(r"^--?[A-Za-z][\w-]*")
INLINE = re.compile(r"`(vetbench(?: [^`]*)?)`")
CODE = re.compile(r"`([^`]+)`")
ALTERNATIVES = re.compile(r"\\?\|")  # `a\|b` in a Markdown table, `a|b` elsewhere


@dataclass(frozen=True)
class Usage:
    """A `vetbench` command as the README writes it: its words, and its line."""

    line: int
    words: tuple[str, ...]


def _segments(words: list[str]) -> Iterator[list[str]]:
    """Words split at pipes, `&&`, `;` ...: one list per simple command."""
    current: list[str] = []
    for word in words:
        if word in SEPARATORS:
            yield current
            current = []
        else:
            current.append(word)
    yield current


def _shell_words(text: str) -> list[str]:
    lexer = shlex.shlex(text, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    lexer.commenters = "#"
    try:
        return list(lexer)
    except ValueError:  # an unbalanced quote: fall back to plain words
        return text.split()


def usages(markdown: str) -> list[Usage]:
    """Every `vetbench` command in ``markdown``'s shell blocks and inline code spans."""
    found: list[Usage] = []
    language: str | None = None  # None: outside a fenced block
    pending, start = "", 0
    for number, line in enumerate(markdown.splitlines(), start=1):
        fence = line.strip()
        if fence.startswith("```"):
            language = fence[3:].strip().lower() if language is None else None
            continue
        if language is None:
            spans = INLINE.findall(line)
            if line.startswith("| `"):  # the command table: its first cell names commands
                first_cell = line.split(" | ", 1)[0]
                spans += [
                    f"vetbench {span}"
                    for span in CODE.findall(first_cell)
                    if span.split()[0] in cli.commands
                ]
            for span in spans:
                words = [word.strip("[](),") for word in span.split()]
                found.append(Usage(number, tuple(word for word in words if word)))
            continue
        if language not in SHELL_BLOCKS:
            continue
        if not pending:
            start = number
        if line.rstrip().endswith("\\"):
            pending += line.rstrip()[:-1] + " "
            continue
        text, pending = pending + line, ""
        for segment in _segments(_shell_words(text)):
            if segment[:1] == ["vetbench"]:
                found.append(Usage(start, tuple(segment)))
    return found


def _visible_options(command: click.Command) -> set[str]:
    """The option names ``command --help`` lists."""
    context = click.Context(command, info_name=command.name)
    names: set[str] = set()
    for param in command.get_params(context):
        if isinstance(param, click.Option) and not param.hidden:
            names.update(param.opts)
            names.update(param.secondary_opts)
    return names


def _takes_value(command: click.Command, name: str) -> bool:
    context = click.Context(command, info_name=command.name)
    for param in command.get_params(context):
        if isinstance(param, click.Option) and name in param.opts + param.secondary_opts:
            return not param.is_flag and not param.count
    return False


def problems(usage: Usage, root: click.Command = cli) -> list[str]:
    """What ``usage`` names that the CLI lacks, each with its README line."""
    where = f"README.md:{usage.line}: `{' '.join(usage.words)}`"
    words = list(usage.words[1:])
    command, path = root, ["vetbench"]
    # Options of the group before the command (--db PATH ...), then the command's words.
    while words:
        word = words[0]
        if OPTION.match(word) and isinstance(command, click.Group):
            name = word.split("=", 1)[0]
            if name not in _visible_options(command):
                return [f"{where}: `{' '.join(path)}` has no option {name}"]
            words.pop(0)
            if "=" not in word and _takes_value(command, name) and words:
                words.pop(0)
            continue
        if isinstance(command, click.Group):
            # `config set\|get\|list` (the table's alternatives): each must exist
            names = ALTERNATIVES.split(word)
            unknown = [name for name in names if name not in command.commands]
            sub = None if unknown else command.commands[names[0]]
            if sub is not None:
                command, path = sub, [*path, word]
                words.pop(0)
                continue
            return [f"{where}: `{' '.join(path)}` has no command {unknown[0]}"]
        break
    known = _visible_options(command)
    missing = []
    for piece in (piece for word in words for piece in ALTERNATIVES.split(word)):
        match = OPTION.match(piece)
        if match and match.group(0) not in known:
            missing.append(f"{where}: `{' '.join(path)}` has no option {match.group(0)}")
    return missing


def test_the_checker_finds_a_missing_option_and_an_unknown_command() -> None:
    markdown = "\n".join(
        [
            "Run `vetbench items --search 增值税 --no-such-option`.",
            "| `stats`, `items [--kind K] [--exam NAME]` | counts | `not-a-command --x` |",
            "| `release verify NAME\\|--export PATH`, `config set\\|get\\|drop` | releases |",
            "```bash",
            "vetbench --db demo.db eval --model demo \\",
            "  --shots 5 --allow-fewer-shots   # a comment --not-an-option",
            "cat x.jsonl | vetbench import - --format jsonl && vetbench frobnicate",
            "vetbench runs show 1 --prompt --item econ:1",
            "```",
            "```json",
            '{"not": "vetbench eval --bogus"}',
            "```",
        ]
    )
    found = usages(markdown)
    assert [(usage.line, usage.words[:2]) for usage in found] == [
        (1, ("vetbench", "items")),
        (2, ("vetbench", "stats")),
        (2, ("vetbench", "items")),
        (3, ("vetbench", "release")),
        (3, ("vetbench", "config")),
        (5, ("vetbench", "--db")),
        (7, ("vetbench", "import")),
        (7, ("vetbench", "frobnicate")),
        (8, ("vetbench", "runs")),
    ]
    reported = [problem for usage in found for problem in problems(usage)]
    assert reported == [
        "README.md:1: `vetbench items --search 增值税 --no-such-option`: "
        "`vetbench items` has no option --no-such-option",
        "README.md:3: `vetbench config set\\|get\\|drop`: `vetbench config` has no command drop",
        "README.md:7: `vetbench frobnicate`: `vetbench` has no command frobnicate",
    ]


def test_every_command_and_option_the_readme_names_exists() -> None:
    found = usages(README.read_text(encoding="utf-8"))
    assert len(found) > 50  # the README's commands were read
    reported = [problem for usage in found for problem in problems(usage)]
    assert not reported, "\n".join(reported)

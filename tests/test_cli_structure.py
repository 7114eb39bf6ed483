"""The shared pieces the CLI's commands are built from: option stacks given as one value,
names repeated for a fast --help, each module's COMMANDS."""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Iterator
from pathlib import Path

import click
from click.testing import CliRunner

import reviewer.cli
from reviewer.cli import cli, eval_commands, options, runs_commands


def test_names_repeated_for_help_are_the_evaluators() -> None:
    from evaluator.extractors import EXTRACTORS
    from evaluator.prompts import LAYOUTS
    from evaluator.table_breakdowns import BREAKDOWNS
    from evaluator.table_render import FORMATS
    from evaluator.tables import SHAPES

    assert runs_commands.TABLE_SHAPES == SHAPES
    assert runs_commands.TABLE_BREAKDOWNS == BREAKDOWNS
    assert runs_commands.TABLE_FORMATS == FORMATS
    assert eval_commands.LAYOUT_NAMES == LAYOUTS
    assert tuple(EXTRACTORS) == eval_commands.EXTRACTOR_NAMES


def test_eval_defaults_repeated_for_help_are_the_evaluators() -> None:
    """The same choices make the same runs from `vetbench eval` and the app's form."""
    from evaluator.prompts import DEFAULT_SHOT_SEED
    from evaluator.session import DEFAULT_SHOTS, EvalChoices

    assert eval_commands.DEFAULT_SHOTS == DEFAULT_SHOTS
    assert eval_commands.DEFAULT_SEED == DEFAULT_SHOT_SEED == EvalChoices().seed


def _scope_command() -> click.Command:
    @click.command()
    @options.item_scope
    def show(scope: options.ItemScope) -> None:
        click.echo(f"{scope.kinds} {scope.sources} {scope.narrowed}")

    return show


def test_item_scope_is_none_for_every_kind_and_source() -> None:
    result = CliRunner().invoke(_scope_command(), [])
    assert result.exit_code == 0, result.output
    assert result.output == "None None False\n"


def test_item_scope_keeps_repeated_kinds_and_sources() -> None:
    result = CliRunner().invoke(
        _scope_command(), ["--kind", "single", "--kind", "multi", "--source", "a"]
    )
    assert result.exit_code == 0, result.output
    assert result.output == "('single', 'multi') ('a',) True\n"


def test_item_scope_refuses_an_unknown_kind() -> None:
    result = CliRunner().invoke(_scope_command(), ["--kind", "essay"])
    assert result.exit_code == 2
    assert "'essay' is not one of" in result.output


def test_every_command_module_adds_its_commands_once() -> None:
    modules = [
        importlib.import_module(f"reviewer.cli.{info.name}")
        for info in pkgutil.iter_modules(reviewer.cli.__path__)
        if info.name.endswith("_commands")
    ]
    listed = [command.name for module in modules for command in module.COMMANDS]
    assert len(listed) == len(set(listed))
    assert sorted(listed) == sorted(cli.commands)


def _commands(
    command: click.Command, path: str = "vetbench"
) -> Iterator[tuple[str, click.Command]]:
    yield path, command
    if isinstance(command, click.Group):
        for name, sub in command.commands.items():
            yield from _commands(sub, f"{path} {name}")


def test_every_required_option_is_refused_when_left_out() -> None:
    """Since click 8.3 an option's explicit default of None is a value, so a required
    option given one would let None through (as `export` without --format once did)."""
    required = [
        (path, option)
        for path, command in _commands(cli)
        for option in command.params
        if isinstance(option, click.Option) and option.required
    ]
    assert any(path == "vetbench generate" for path, _ in required)
    for path, option in required:
        context = click.Context(click.Command(path), info_name=path)
        try:
            option.handle_parse_result(context, {}, [])
        except click.MissingParameter:
            continue
        raise AssertionError(f"{path}: {option.opts[0]} left out is not refused")


def test_export_without_a_format_asks_for_one_where_the_extension_leaves_a_choice(
    tmp_path: Path,
) -> None:
    never = tmp_path / "never-opened.db"
    result = CliRunner().invoke(cli, ["--db", str(never), "export", "--out", "x.csv"])
    assert result.exit_code == 1
    assert "which format? x.csv could be econlogicqa or judging: say it with --format" in (
        result.output
    )
    assert not never.exists() and not Path("x.csv").exists()


def test_every_help_fits_an_80_column_terminal() -> None:
    """Click wraps the help text but not a choice list beside an option (`--flag
    [duplicate|needs-media|…]` ran to 105 columns), and counts a Chinese character one
    column where a terminal shows it two: no line of any --help may be wider than 80."""
    from db.visible_text import east_asian_cell_len

    runner = CliRunner()
    wide: list[str] = []
    for path, _command in _commands(cli):
        words = path.split()[1:]
        shown = runner.invoke(cli, [*words, "--help"], env={"COLUMNS": "80"}, terminal_width=80)
        assert shown.exit_code == 0, shown.output
        wide += [
            f"{path}: {line}"
            for line in shown.output.splitlines()
            if east_asian_cell_len(line) > 80
        ]
    assert wide == []


def test_every_option_that_takes_several_values_says_so() -> None:
    """`eval --kind single --kind multi` evaluates both, but its help read "Only this
    kind."; an option declared several only to refuse a second value (``options.once``,
    review's and next's filters) is not repeatable and says nothing."""
    from reviewer.cli.common import remember_filter_sources

    silent = [
        f"{path} {option.opts[0]}"
        for path, command in _commands(cli)
        for option in command.params
        if isinstance(option, click.Option)
        and option.multiple
        and option.callback not in (options.once, remember_filter_sources)
        and not any(word in (option.help or "") for word in ("repeatable", "repeat for each"))
    ]
    assert silent == []

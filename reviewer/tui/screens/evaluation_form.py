"""The evaluation screen's start form: its fields, how they are made, how its number fields and
its "Shots from" field read as the evaluation core's choices (``vetbench eval``'s
``--shot-file`` and ``--shots-from``), and what it says to do about too few shots."""

from __future__ import annotations

import glob
import os
from pathlib import Path

from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.widgets import Button, Checkbox, Input, Label, Select, Static

from db.vocabulary import ALL, EvalMode, EvalProtocol, ItemKind, values
from evaluator.backends.settings import DTYPES
from reviewer.tui.widgets.drop_down import DropDown

SHOT_CHOICES = (0, 1, 2, 3, 5, 10)
SHOTS_DEFAULT = "default"  # the protocol's own shots (5 for custom), as `vetbench eval`
APPROVED_ITEMS = "approved"  # the Items choice that is not a release: today's approved items
RELEASE_PREFIX = "release:"  # Items values of releases (a release may be called "approved")


def drop_down(widget_id: str, options: list[tuple[str, str]], value: str) -> Select[str]:
    """One of the start form's choices: compact, never blank."""
    return DropDown(options, value=value, allow_blank=False, id=widget_id, compact=True)


def text_field(
    widget_id: str, value: str = "", placeholder: str = "", *, number: bool = False
) -> Input:
    """One of the start form's typed fields, compact; a number field takes whole numbers
    and may be left empty (the default it names: one run, the protocol's budget), so that
    an empty one is not shown as invalid once focus leaves it."""
    return Input(
        value,
        placeholder=placeholder,
        type="integer" if number else "text",
        valid_empty=number,
        id=widget_id,
        compact=True,
    )


def fewer_shots_hint() -> str:
    """What to do about too few shots, in the form's words; the example shot files by
    their real path where they are at hand, as ``vetbench eval`` says them."""
    from evaluator.run_create import shot_examples  # with the evaluator: not at app start

    examples = shot_examples()
    files = f"such as {examples}" if examples else "JSONL item files, one item a line"
    return (
        "Choose fewer shots, tick 'Allow fewer shots', or say where shots come from under "
        f"'Shots from': shot files ({files}), or a source or status."
    )


def whole_number(text: str, name: str) -> int | None:
    """A number field's whole number (the core checks its range); None when it is empty.
    ``name`` names the field in the refusal."""
    from evaluator.run_create import RunSetupError

    text = text.strip()
    if not text:
        return None
    # The field takes signs too; ten digits are past any range the core takes (and int()
    # refuses thousands).
    if not text.isdecimal() or len(text) > 9:
        raise RunSetupError(f"{name}: write a whole number, not '{text}'")
    return int(text)


def shots_from_field(text: str) -> tuple[tuple[Path, ...], str | None]:
    """The form's "Shots from" as ``vetbench eval``'s ``--shot-file`` files or its
    ``--shots-from`` source or status: shot files, separated by spaces (a pattern such as
    ``fixtures/shots_*.jsonl`` stands for the files it matches), or one word that names
    no file, a source or status; empty, neither.  A file that is not there is refused
    here, as the command line refuses it."""
    from evaluator.run_create import RunSetupError, names_a_file

    words = text.split()
    if len(words) == 1 and not names_a_file(words[0]):
        return (), words[0]
    files: list[Path] = []
    for word in words:
        if glob.has_magic(word):
            matched = sorted(glob.glob(os.path.expanduser(word)))
            if not matched:
                raise RunSetupError(f"Shots from: no file matches '{word}'")
            files += [Path(found) for found in matched]
        elif Path(word).expanduser().is_file():
            files.append(Path(word).expanduser())
        else:
            raise RunSetupError(
                f"Shots from: no file '{word}' (give shot files, or one source or status)"
            )
    return tuple(files), None


def start_form() -> ComposeResult:
    """The start form: the model and the choices ``vetbench eval`` takes as flags, Start
    and Stop, and the place under them that says why the last Start made no run."""
    with Vertical(id="start-form"):
        with Horizontal(classes="form-row"):
            yield Label("Model", classes="field-label")
            yield text_field(
                "model-spec",
                "demo",
                "demo, a model folder, openai:NAME or scripted:FILE",
            )
            yield Label("Protocol", classes="field-label")
            yield drop_down(
                "protocol",
                [(name, name) for name in values(EvalProtocol)],
                EvalProtocol.CUSTOM.value,
            )
            yield Button("Start", id="start", variant="primary", compact=True)
            yield Button("Stop", id="stop", variant="error", disabled=True, compact=True)
        with Horizontal(classes="form-row"):
            yield Label("Kind", classes="field-label")
            yield drop_down(
                "kind",
                [("all kinds", ALL), *[(kind, kind) for kind in values(ItemKind)]],
                ALL,
            )
            yield Label("Shots", classes="field-label")
            yield drop_down(
                "shots",
                [
                    (SHOTS_DEFAULT, SHOTS_DEFAULT),
                    *[(str(n), str(n)) for n in SHOT_CHOICES],
                ],
                SHOTS_DEFAULT,
            )
            yield Label("Repeats", classes="field-label")
            yield text_field("repeats", "1", number=True)
            yield Checkbox("Permute options", id="permute", compact=True)
        with Horizontal(classes="form-row"):
            yield Label("Dtype", classes="field-label")
            yield drop_down("dtype", [(name, name) for name in DTYPES], "auto")
            yield Label("Max new tokens", classes="field-label")
            yield text_field("max-tokens", "", "protocol's", number=True)
            yield Checkbox("Allow fewer shots", id="fewer-shots", compact=True)
        with Horizontal(classes="form-row"):
            yield Label("Mode", classes="field-label")
            yield drop_down(
                "mode",
                [(name, name) for name in values(EvalMode)],
                EvalMode.GENERATE.value,
            )
            yield Label("Items", classes="field-label")
            yield drop_down("items", [("approved items", APPROVED_ITEMS)], APPROVED_ITEMS)
        with Horizontal(classes="form-row"):
            yield Label("Shots from", classes="field-label")
            yield text_field("shots-from", "", "stored items; or shot files, or a source or status")
        # why the last Start made no run: kept in view, next to what it is about
        yield Static("", id="start-message")

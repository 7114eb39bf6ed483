"""What a refused run says to do about too few shots, each way one that works as typed.

``--shot-file`` is repeatable, one file a kind: the example files are named one by one
(``--shot-file .../shots_single.jsonl --shot-file .../shots_multi.jsonl``), never as a
pattern the shell would expand into arguments without the option.  Several short kinds
need ``--shots-for`` each (``--shots-for multi=0 --shots-for single=0``), not one of
them.  Without ``--shot-file`` or ``--shots-from`` the shots were already looked for
among every stored item, so one source or status (a part of them) is not offered.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from pathlib import Path

__all__ = ["SHOT_EXAMPLES", "fewer_shots_advice", "shot_examples"]

SHOT_EXAMPLES = Path(__file__).resolve().parent.parent / "fixtures"
"""The repository's example shot files (``shots_*.jsonl``): at hand in a checkout and an
editable install (``pip install -e .``), not shipped in a wheel (not package data)."""


def shot_examples() -> str | None:
    """The example shot files as a pattern with their real path (never a relative
    ``fixtures/``, which a user's own folder lacks); None where they are not at hand."""
    if any(SHOT_EXAMPLES.glob("shots_*.jsonl")):
        return str(SHOT_EXAMPLES / "shots_*.jsonl")
    return None


def _example_options(kinds: Collection[str], given: Sequence[Path]) -> str:
    """``--shot-file .../shots_multi.jsonl --shot-file ...``: the example file of each of
    ``kinds`` that is at hand and not ``given`` already; empty when there is none."""
    files = [SHOT_EXAMPLES / f"shots_{kind}.jsonl" for kind in sorted(kinds)]
    return " ".join(
        f"--shot-file {path}" for path in files if path.is_file() and path.resolve() not in given
    )


def _more_shots(kinds: Collection[str], shot_files: Sequence[Path], shots_from: str | None) -> str:
    """Where else the short ``kinds``' shots could come from than where they were looked."""
    examples = _example_options(kinds, shot_files)
    if shot_files:
        add = f"add {examples}" if examples else "add shots to the shot files"
        return f"{add}, or draw them with --shots-from SOURCE|STATUS instead"
    files = (
        f"--shot-file FILE, one a kind (e.g. {examples})"
        if examples
        else "--shot-file FILE (a JSONL item file: one item a line; repeatable)"
    )
    if shots_from is not None:
        return f"give shots with {files} or --shots-from another source or status"
    return f"give shots with {files}"


def fewer_shots_advice(
    kinds: Collection[str],
    *,
    shot_files: Sequence[Path] = (),
    shots_from: str | None = None,
    fixed_shots: bool = False,
) -> str:
    """The ways out of too few shots for ``kinds``: more shots, fewer asked (unless the
    protocol fixes them), or ``--allow-fewer-shots``."""
    each = " ".join(f"--shots-for {kind}=0" for kind in sorted(kinds))
    ask_fewer = "" if fixed_shots else f", ask for fewer (--shots 0, or {each})"
    return (
        f"{_more_shots(kinds, shot_files, shots_from)}{ask_fewer}, or run with fewer with "
        "--allow-fewer-shots"
    )

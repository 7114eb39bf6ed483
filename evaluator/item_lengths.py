"""How long an item is, for ``vetbench runs table --by length``: in tokens or characters.

The papers' length analyses count tokens, so a run's items are measured in tokens
of the run's own tokenizer: a local model's (the ``model_path`` its run recorded,
read offline).  A run without a tokenizer vetbench can load (an API model, a
scripted one) is measured in characters, and its rows say so.  Characters remain
a choice for every run (``--length-unit chars``).

An item's length is that of its question and its options (each option's text),
without the template's words, so lengths compare across layouts (characters are
counted by ``evaluator.runs``, tokens here).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import lru_cache
from typing import Any

from db.engine import Database
from db.items import get_item
from evaluator.run_params import RunParams

__all__ = ["CHARS", "LENGTH_UNITS", "TOKENS", "run_tokenizer", "token_lengths"]

TOKENS = "tokens"
CHARS = "chars"
LENGTH_UNITS = (TOKENS, CHARS)


@lru_cache(maxsize=8)
def _tokenizer(path: str) -> Any:
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(path, local_files_only=True)


def run_tokenizer(params: RunParams) -> Callable[[str], int] | None:
    """The token counter of a run's model (from its recorded ``model_path``), or None."""
    path = params.backend.get("model_path")
    if not isinstance(path, str) or not path:
        return None
    try:
        tokenizer = _tokenizer(path)
    except (OSError, ValueError):  # moved or deleted since the run: no tokens to count
        return None
    return lambda text: len(tokenizer(text, add_special_tokens=False)["input_ids"])


def token_lengths(
    db: Database, params: RunParams, item_ids: Sequence[str]
) -> dict[str, int] | None:
    """The length in tokens of each item a run evaluated (at the revision it recorded),
    or None when the run's tokenizer cannot be loaded (count characters instead)."""
    count = run_tokenizer(params)
    if count is None:
        return None
    lengths: dict[str, int] = {}
    with db.session() as session:
        for item_id in item_ids:
            item = get_item(session, item_id, params.revisions.get(item_id))
            if item is not None:
                lengths[item_id] = count("\n".join([item.prompt, *item.choices.values()]))
    return lengths

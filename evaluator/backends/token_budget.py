"""How many tokens a local model may write for one answer: the one asked for, or its own.

A request without a budget (CFLUE's protocol: the official code sets none) gets the
model's own limit: its generation config's ``max_new_tokens``, else its ``max_length``
less the prompt, else the rest of its context.  No budget ever runs past the end of
the model's context (its position limit, else its tokenizer's).
"""

from __future__ import annotations

from typing import Any

__all__ = ["DEFAULT_CONTEXT", "context_length", "own_max_new_tokens", "token_budget"]

DEFAULT_CONTEXT = 2048  # for a model that states no limit of its own


def context_length(model: Any, tokenizer: Any) -> int:
    """How many tokens ``model`` reads at most."""
    config = model.config.get_text_config()
    for value in (
        getattr(config, "max_position_embeddings", None),
        getattr(tokenizer, "model_max_length", None),
    ):
        if isinstance(value, int) and 0 < value < 10**8:  # tokenizers say 1e30 for "none"
            return value
    return DEFAULT_CONTEXT


def _generation_setting(model: Any, name: str) -> int | None:
    """A value the model's generation config sets itself (not transformers' default)."""
    config = getattr(model, "generation_config", None)
    value = config.to_diff_dict().get(name) if config is not None else None
    return value if isinstance(value, int) and value > 0 else None


def own_max_new_tokens(model: Any) -> int | None:
    """``max_new_tokens`` as the model's generation config sets it, if it does."""
    return _generation_setting(model, "max_new_tokens")


def token_budget(model: Any, tokenizer: Any, max_new_tokens: int | None, prompt_tokens: int) -> int:
    """New tokens one answer may take (see the module docstring)."""
    room = max(1, context_length(model, tokenizer) - prompt_tokens)
    if max_new_tokens is not None:
        return min(max_new_tokens, room)
    own = own_max_new_tokens(model)
    if own is not None:
        return min(own, room)
    length = _generation_setting(model, "max_length")
    if length is not None and length > prompt_tokens:
        return min(length - prompt_tokens, room)
    return room

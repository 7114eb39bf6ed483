"""Score mode over an OpenAI-compatible API: what a request for prompt log-probabilities
sends, and how the continuation's log-probability is read out of the echoed answer.

The completions endpoint, asked with ``echo`` and ``logprobs``, returns the prompt's own
tokens with their log-probabilities (vLLM does; OpenAI's API and ``transformers serve``
do not).  :func:`continuation_logprob` sums those of the tokens after the context.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, TypedDict

from evaluator.retry_policy import MalformedResponseError


@dataclass(frozen=True)
class LogprobRequest:
    """The log-probability of ``text[context_length:]`` following ``text[:context_length]``."""

    text: str
    context_length: int  # characters of the context; the continuation is the rest
    tag: Any = None


NO_PROMPT_LOGPROBS = (
    "the server returned no log-probabilities of the prompt's tokens (vLLM's completions "
    "endpoint does, with echo and logprobs; OpenAI's API and transformers serve do not): "
    "evaluate with --mode generate"
)


class _ScoringParams(TypedDict):
    """The fields of a scoring request besides model and prompt."""

    echo: bool
    logprobs: int
    max_tokens: int
    temperature: float


SCORING_PARAMS: _ScoringParams = {"echo": True, "logprobs": 1, "max_tokens": 1, "temperature": 0}
"""What a scoring request sends: the prompt echoed with each token's log-probability, and
one generated token (some servers refuse none); vLLM and lm-eval's local-completions ask so."""

PROBE_TEXT = "Question: 1 + 1 = ? Answer: 2"
PROBE_CONTEXT_LENGTH = len("Question: 1 + 1 = ? Answer:")
"""The one cheap request that asks a server whether it returns prompt log-probabilities."""


def continuation_logprob(
    completion: Mapping[str, Any], request: LogprobRequest
) -> tuple[float, int]:
    """The summed log-probability of the continuation's tokens in an echoed completion,
    and how many tokens that is.

    Tokens are placed by their ``text_offset``: a token counts when it ends after the
    context (one that straddles the boundary belongs to the continuation, as its
    probability is conditioned on the context alone) and starts before the end of the
    echoed text (the one generated token is left out).
    """
    choices = completion.get("choices")
    choice = choices[0] if isinstance(choices, list) and choices else None
    logprobs = choice.get("logprobs") if isinstance(choice, dict) else None
    if not isinstance(logprobs, dict):
        raise MalformedResponseError(NO_PROMPT_LOGPROBS)
    tokens, values, offsets = (
        logprobs.get("tokens"),
        logprobs.get("token_logprobs"),
        logprobs.get("text_offset"),
    )
    if not (
        isinstance(tokens, list)
        and isinstance(values, list)
        and isinstance(offsets, list)
        and len(tokens) == len(values) == len(offsets)
    ):
        raise MalformedResponseError(NO_PROMPT_LOGPROBS)
    end = len(request.text)
    total, counted = 0.0, 0
    for token, value, offset in zip(tokens, values, offsets, strict=True):
        if not isinstance(offset, int) or not isinstance(token, str):
            raise MalformedResponseError("the response's token offsets are not numbers")
        if offset + len(token) <= request.context_length or offset >= end:
            continue
        if not isinstance(value, int | float):
            raise MalformedResponseError(NO_PROMPT_LOGPROBS)
        if not math.isfinite(value):  # scored, a NaN made every candidate tie, and wrong
            raise MalformedResponseError(
                f"the response's log-probabilities are not numbers ({value}); "
                "the candidates cannot be ranked"
            )
        total += float(value)
        counted += 1
    if counted == 0:
        raise MalformedResponseError("the response holds no tokens of the answer")
    return total, counted

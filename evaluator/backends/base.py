"""The protocol every model backend implements, and the plain records that cross it.

The run loop (``evaluator.runner``) builds prompts, hands them to a backend in
batches, and stores each result as soon as it comes back.  A backend knows
nothing about the database, extraction or metrics.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from db.errors import VetbenchError
from db.json_types import JsonObject


class BackendError(VetbenchError, RuntimeError):
    """A model, device or setting that cannot be used; the message says why and what to do."""


@dataclass(frozen=True)
class Prompt:
    """A prompt split where items diverge: ``prefix`` (instructions + shots) is shared by
    every item of a run, so a backend can compute it once and reuse its key-value cache."""

    prefix: str
    question: str

    @property
    def text(self) -> str:
        return self.prefix + self.question


@dataclass(frozen=True)
class GenerationRequest:
    item_id: str
    prompt: Prompt
    stop: tuple[str, ...] = ()  # stop as soon as one of these appears (a new question)
    # None: the model's own limit, bounded by its context.  Nothing else ends an answer
    # early (evaluator.stopping says why), so every backend reads the same text.
    max_new_tokens: int | None = 32
    # What a model that knows the key writes, in the shown labels and the protocol's
    # form; only for a backend that says ``wants_reference`` (the oracle self-test).
    reference: str | None = field(default=None, compare=False, repr=False)


@dataclass(frozen=True)
class GenerationResult:
    item_id: str
    prompt_text: str  # the exact text the model saw (chat template applied)
    output: str  # the generated text, cut at the first stop string
    latency_s: float
    error: str | None = None  # set for infrastructure failures (timeout, retries exhausted)
    truncated: bool = False  # the token budget ran out before the model ended its answer
    retry_cannot_fix: bool = False  # the error is a refusal no retry changes (an HTTP 4xx)


@dataclass(frozen=True)
class ScoringRequest:
    """Rank ``candidates`` (answer strings such as "B" or "D, A, C, B") after one prompt."""

    item_id: str
    prompt: Prompt
    candidates: tuple[str, ...]
    reference: str | None = field(default=None, compare=False, repr=False)  # see above


@dataclass(frozen=True)
class ScoringResult:
    item_id: str
    prompt_text: str
    log_likelihoods: tuple[float, ...]  # one per candidate, same order
    latency_s: float
    error: str | None = None
    retry_cannot_fix: bool = False  # as GenerationResult's


@dataclass
class BackendInfo:
    """What a run records about the backend in ``EvalRun.params``."""

    backend: str  # the provider: "transformers", "openai", "scripted"
    model: str
    params: JsonObject = field(default_factory=dict)


class Backend(Protocol):
    info: BackendInfo

    @property
    def supports_scoring(self) -> bool:
        """Whether ``score`` works; an API backend asks its server (and may raise a
        ``BackendError`` saying why it cannot)."""
        ...

    # A backend may also set ``wants_reference = True`` (read with getattr): its requests
    # then carry the key's answer text (``reference``); only the oracle self-test does.
    # And it may have ``notes_for(item_ids) -> tuple[str, ...]`` (read with getattr): what
    # to tell before a run of those items starts (a script without answers for some).

    def generate(self, requests: Sequence[GenerationRequest]) -> Iterator[GenerationResult]:
        """Answer every request; yield each result as soon as it is finished (any order)."""
        ...

    def score(self, requests: Sequence[ScoringRequest]) -> Iterator[ScoringResult]:
        """Log-likelihood of each candidate continuation; yield per request as finished."""
        ...

    def close(self) -> None: ...

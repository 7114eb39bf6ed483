"""A backend that answers from a script, for run-loop tests: it records every call, and can
fail items (infrastructure errors), press Ctrl-C, or crash after a number of answers."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field

from evaluator.backends.base import (
    BackendInfo,
    GenerationRequest,
    GenerationResult,
    ScoringRequest,
    ScoringResult,
)


@dataclass
class ScriptedBackend:
    """Answers ``outputs[item_id]`` (default ``""``), scores with ``scorer(item_id, candidate)``."""

    outputs: Mapping[str, str] = field(default_factory=dict)
    model: str = "scripted"
    failing: set[str] = field(default_factory=set)  # answered with an infrastructure error
    interrupt_after: int | None = None  # raise KeyboardInterrupt after this many answers
    crash_after: int | None = None  # raise RuntimeError after this many answers
    scorer: Callable[[str, str], float] = lambda item_id, candidate: -len(candidate)
    supports_scoring: bool = True
    generate_calls: list[list[str]] = field(default_factory=list)
    score_calls: list[list[ScoringRequest]] = field(default_factory=list)
    requests_seen: dict[str, GenerationRequest] = field(default_factory=dict)
    closed: bool = False

    def __post_init__(self) -> None:
        self.info = BackendInfo("scripted", self.model, {"device": "none", "batch_size": 1})

    def _check(self, answered: int) -> None:
        if self.interrupt_after is not None and answered == self.interrupt_after:
            raise KeyboardInterrupt
        if self.crash_after is not None and answered == self.crash_after:
            raise RuntimeError("the accelerator caught fire")

    def generate(self, requests: Sequence[GenerationRequest]) -> Iterator[GenerationResult]:
        self.generate_calls.append([request.item_id for request in requests])
        for answered, request in enumerate(requests):
            self._check(answered)
            self.requests_seen[request.item_id] = request
            if request.item_id in self.failing:
                yield GenerationResult(
                    request.item_id, request.prompt.text, "", 0.5, error="timed out after 60 s"
                )
                continue
            yield GenerationResult(
                request.item_id, request.prompt.text, self.outputs.get(request.item_id, ""), 0.25
            )

    def score(self, requests: Sequence[ScoringRequest]) -> Iterator[ScoringResult]:
        self.score_calls.append(list(requests))
        for answered, request in enumerate(requests):
            self._check(answered)
            scores = tuple(self.scorer(request.item_id, c) for c in request.candidates)
            yield ScoringResult(request.item_id, request.prompt.text, scores, 0.125)

    def close(self) -> None:
        self.closed = True

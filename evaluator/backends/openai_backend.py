"""OpenAI-compatible API models (``vetbench eval --model openai:NAME``) behind the Backend protocol.

Each prompt goes as one user message, greedy (temperature 0), with the request's
stop strings and token budget.  Requests run ``concurrency`` at a time and each
result is yielded as soon as it is finished.  Transport failures (timeouts,
exhausted retries, garbled answers) come back as results with ``error`` set: the
run loop records them as infrastructure failures, not wrong answers, and tries
them again on resume.  Answers are cached in the database when one is given, so
a repeated run costs nothing.  API models give no log-likelihoods, so there is no
scoring mode.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from db.engine import Database
from evaluator.backends.base import (
    BackendInfo,
    GenerationRequest,
    GenerationResult,
    ScoringRequest,
    ScoringResult,
)
from evaluator.openai_client import DEFAULT_API_KEY_ENV, ChatClient, ChatRequest
from evaluator.stopping import finished_text

MAX_SERVER_STOPS = 4  # the most stop strings the OpenAI API accepts; the rest are cut here


class ScoringNotSupportedError(NotImplementedError):
    """API models return text, not log-likelihoods of given answers."""


class OpenAIBackend:
    """A model served by an OpenAI-compatible API."""

    supports_scoring = False

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key_env: str = DEFAULT_API_KEY_ENV,
        timeout: float = 60.0,
        max_retries: int = 5,
        concurrency: int = 4,
        database: Database | None = None,
        backoff_max_s: float = 60.0,
    ) -> None:
        self.client = ChatClient(
            model,
            base_url=base_url,
            api_key_env=api_key_env,
            timeout=timeout,
            max_retries=max_retries,
            concurrency=concurrency,
            database=database,
            backoff_max_s=backoff_max_s,
        )
        # Never the key: only where the model was reached and how it was asked.
        self.info = BackendInfo(
            backend="openai",
            model=model,
            params={
                "base_url": self.client.base_url,
                "temperature": 0.0,
                "concurrency": concurrency,
                "timeout_s": timeout,
                "max_retries": max_retries,
            },
        )

    def __repr__(self) -> str:
        return f"OpenAIBackend({self.client!r})"

    def generate(self, requests: Sequence[GenerationRequest]) -> Iterator[GenerationResult]:
        """Answer every request; yield each result as soon as it is finished (any order)."""
        chat_requests = (
            ChatRequest.user(
                request.prompt.text,
                max_tokens=request.max_new_tokens,
                temperature=0.0,
                stop=tuple(request.stop[:MAX_SERVER_STOPS]),
                tag=request,
            )
            for request in requests
        )
        for outcome in self.client.complete_all(chat_requests):
            request: GenerationRequest = outcome.request.tag
            if outcome.error is not None or outcome.response is None:
                yield GenerationResult(
                    item_id=request.item_id,
                    prompt_text=request.prompt.text,
                    output="",
                    latency_s=outcome.latency_s,
                    error=str(outcome.error),
                )
                continue
            # The server applies only the first few stops; the rest (and any it ignored)
            # are applied here, the same way every backend does.
            yield GenerationResult(
                item_id=request.item_id,
                prompt_text=request.prompt.text,
                output=finished_text(outcome.response.text, request.stop),
                latency_s=outcome.latency_s,
            )

    def score(self, requests: Sequence[ScoringRequest]) -> Iterator[ScoringResult]:
        raise ScoringNotSupportedError(
            "API models cannot score given answers (no log-likelihoods); "
            "evaluate them with --mode generate"
        )

    def close(self) -> None:
        self.client.close()

"""OpenAI-compatible API models (``vetbench eval --model openai:NAME``) behind the Backend protocol.

Each prompt goes as one user message, greedy (temperature 0), with the request's
stop strings and token budget.  Requests run ``concurrency`` at a time and each
result is yielded as soon as it is finished.  Transport failures (timeouts,
exhausted retries, garbled answers) come back as results with ``error`` set: the
run loop records them as infrastructure failures, not wrong answers, and tries
them again on resume.  Answers are cached in the database when one is given, keyed
by what the server says it serves too (``evaluator.response_cache``), so a repeated run
against the same weights costs nothing; ``use_cache=False`` (``--no-cache``) asks anew.

Score mode needs the log-probability of each candidate answer after the prompt.
Chat completions cannot give that; the completions endpoint can, where the server
echoes the prompt with each token's log-probability (``echo`` with ``logprobs``):
vLLM does, OpenAI's own API no longer does.  Each candidate is one request
(``prompt + candidate``, the plain prompt text: this endpoint applies no chat
template), the candidate's tokens are found by their text offsets, and their
log-probabilities are summed.  Before a score-mode run starts, one cheap request
asks the server whether it returns them; one that does not (OpenAI's API,
``transformers serve``) is refused with one line saying so, and no run is made.

On opening, the backend asks the server what it serves (``/models``, and ``/version``
where there is one, as vLLM has) and records the answers in the run's parameters:
``server_model_id``, ``server_model_root`` and ``server_version``, each where the
server says it.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Unpack

from db.engine import Database
from evaluator.backends.base import (
    BackendError,
    BackendInfo,
    GenerationRequest,
    GenerationResult,
    ScoringRequest,
    ScoringResult,
)
from evaluator.backends.settings import RESPONSE_CACHE_PARAM, ClientOptions
from evaluator.chat_calls import ChatRequest, LogprobOutcome
from evaluator.openai_client import ChatClient, ClientConfigError
from evaluator.prompt_logprobs import LogprobRequest
from evaluator.stopping import finished_text, without_unfinished_character

MAX_SERVER_STOPS = 4  # the most stop strings the OpenAI API accepts; the rest are cut here


@dataclass
class _Ranking:
    """The candidates of one scoring request as their log-probabilities come back."""

    request: ScoringRequest
    values: dict[int, float] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)
    first_error_lasting: bool = False  # errors[0], the one reported, no retry changes
    latency_s: float = 0.0

    @property
    def finished(self) -> bool:
        return len(self.values) + len(self.errors) == len(self.request.candidates)

    def result(self) -> ScoringResult:
        text = self.request.prompt.text
        if self.errors:
            return ScoringResult(
                self.request.item_id,
                text,
                (),
                self.latency_s,
                self.errors[0],
                retry_cannot_fix=self.first_error_lasting,
            )
        ordered = tuple(self.values[index] for index in range(len(self.request.candidates)))
        return ScoringResult(self.request.item_id, text, ordered, self.latency_s)


class OpenAIBackend:
    """A model served by an OpenAI-compatible API."""

    def __init__(
        self, model: str, *, database: Database | None = None, **options: Unpack[ClientOptions]
    ) -> None:
        self.client = ChatClient(model, database=database, **options)
        self._scoring_checked = False
        try:
            facts = self.client.server_facts()
        except ClientConfigError:
            self.client.close()
            raise
        # Never the key: only where the model was reached (and the variable holding the
        # key), what the server says it serves, and how it was asked; a resumed run reads
        # them back (settings.RECORDED_API_PARAMS).
        self.info = BackendInfo(
            backend="openai",
            model=model,
            params={
                "base_url": self.client.base_url,
                "api_key_env": self.client.api_key_env,
                "temperature": 0.0,
                "concurrency": self.client.concurrency,
                "timeout_s": self.client.timeout,
                "max_retries": self.client.max_retries,
                "max_wait_s": self.client.max_wait,
            },
        )
        if options.get("use_cache") is False:
            self.info.params[RESPONSE_CACHE_PARAM] = False  # its resumes keep to it
        for key, value in (
            ("server_model_id", facts.model_id),
            ("server_model_root", facts.model_root),
            ("server_version", facts.version),
        ):
            if value is not None:  # only what the server said
                self.info.params[key] = value

    @property
    def supports_scoring(self) -> bool:
        """True once the server has shown, on one cheap request, that it returns prompt
        log-probabilities; a server that does not is refused here with the reason (a
        ``BackendError``), before a run is made or any item is sent."""
        if not self._scoring_checked:
            reason = self.client.probe_prompt_logprobs()
            if reason is not None:
                raise BackendError(
                    f"openai:{self.client.model} at {self.client.base_url} cannot score: {reason}"
                )
            self._scoring_checked = True
        return True

    def __repr__(self) -> str:
        return f"OpenAIBackend({self.client!r})"

    def answer_counts(self) -> tuple[int, int]:
        """Answers so far and how many of them came from the response cache, so that a
        run can say how many of its answers were not asked of the server."""
        counts = self.client.counters.snapshot()
        return counts["ok"], counts["cached"]

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
                    retry_cannot_fix=outcome.error is not None and outcome.error.retry_cannot_fix,
                )
                continue
            # The server applies only the first few stops; the rest (and any it ignored)
            # are applied here, the same way every backend does.  A server that decodes
            # a budget-cut answer whole (`transformers serve`) ends a character cut off
            # in U+FFFD: dropped, as the local backend drops it.
            truncated = outcome.response.finish_reason == "length"
            text = outcome.response.text
            yield GenerationResult(
                item_id=request.item_id,
                prompt_text=request.prompt.text,
                output=finished_text(
                    without_unfinished_character(text) if truncated else text, request.stop
                ),
                latency_s=outcome.latency_s,
                truncated=truncated,
            )

    def score(self, requests: Sequence[ScoringRequest]) -> Iterator[ScoringResult]:
        """The summed log-probability of each candidate after the prompt, per request,
        yielded as soon as all of a request's candidates are back."""
        rankings = [_Ranking(request) for request in requests]
        jobs = (
            LogprobRequest(
                text=ranking.request.prompt.text + candidate,
                context_length=len(ranking.request.prompt.text),
                tag=(position, index),
            )
            for position, ranking in enumerate(rankings)
            for index, candidate in enumerate(ranking.request.candidates)
        )
        for outcome in self.client.prompt_logprobs_all(jobs):
            ranking = self._record(rankings, outcome)
            if ranking.finished:
                yield ranking.result()

    @staticmethod
    def _record(rankings: list[_Ranking], outcome: LogprobOutcome) -> _Ranking:
        position, index = outcome.request.tag
        ranking = rankings[position]
        ranking.latency_s = max(ranking.latency_s, outcome.latency_s)
        if outcome.error is not None or outcome.log_likelihood is None:
            if not ranking.errors:
                lasting = outcome.error is not None and outcome.error.retry_cannot_fix
                ranking.first_error_lasting = lasting
            ranking.errors.append(str(outcome.error))
        else:
            ranking.values[index] = outcome.log_likelihood
        return ranking

    def close(self) -> None:
        self.client.close()

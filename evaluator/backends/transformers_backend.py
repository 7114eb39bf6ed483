"""Local transformers models: greedy generation and log-likelihood scoring, fast on CPU and GPU.

MODEL is what :mod:`evaluator.backends.local_model` resolves: ``demo``, a model
directory, a hub id in the local cache, or a ``.gguf`` file.

Speed comes from three things:

- **The shared few-shot prefix is computed once.**  Every item of one kind and
  language in a run starts with the same instructions and shots (``Prompt.prefix``).
  Their key-value cache is computed once per run and copied into each batch, so a
  batch only runs its items' own questions.  Prompts are tokenized whole and the
  reused part is the longest common *token* prefix, so the model sees exactly the
  tokens it would see without reuse.
- **Finished sequences leave the batch.**  Each sequence stops where a served
  model's would: at a stop string (a new question, a blank line), end-of-sequence,
  or when its budget is spent (``truncated``; ``token_budget``), never because the
  text so far already reads as an answer (``evaluator.stopping``); it leaves the
  batch at once.
- **Length-sorted batches.**  Items are sorted by length, so little padding is
  wasted.  Padding goes on the left of each item's own tokens, between the shared
  prefix and the question; the attention mask hides it and position ids skip it,
  so a padded item computes what it would alone.

Scoring (``--mode score``) computes each item's prompt once (on top of the shared
prefix) and then runs all candidate answers as one batch on a copy of that cache.
"""

from __future__ import annotations

import copy
import inspect
import logging
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, TypedDict, Unpack

from evaluator.backends.base import (
    BackendError,
    BackendInfo,
    GenerationRequest,
    GenerationResult,
    Prompt,
    ScoringRequest,
    ScoringResult,
)
from evaluator.backends.local_model import resolve_device, resolve_model_source
from evaluator.backends.settings import BackendSettings, parse_batch_size
from evaluator.backends.token_budget import context_length, own_max_new_tokens, token_budget
from evaluator.stopping import cut_at_stop, without_unfinished_character

log = logging.getLogger(__name__)

# Measured with bench/bench_demo_eval.py (demo model, 5 shots, 30 ordering items, the
# idle 2-core CPU, 2026-12-06, answers running to their budget): 0.55 items/s at batch 1,
# 1.27 at 4, 2.01 at 8, 2.87 at 16 (when answers still stopped once whole, on a busy
# CPU: 0.08, 0.10, 0.25, 0.26). The key-value cache's share of memory still caps it.
DEFAULT_CPU_BATCH = 16
MAX_AUTO_BATCH = 256
CPU_MEMORY_BUDGET = 2 << 30  # bytes of key-value cache one CPU batch may take
GPU_MEMORY_SHARE = 0.6  # of the free GPU memory, for one batch


class LocalOptions(TypedDict, total=False):
    """The :class:`BackendSettings` a local model reads, as keywords of ``TransformersBackend``."""

    device: str
    dtype: str
    batch_size: str | int
    prefix_cache: bool
    chat_template: bool | None
    threads: int | None


@dataclass
class _Encoded:
    """One request's prompt: the exact text and its tokens."""

    index: int
    text: str
    ids: list[int]
    prefix_key: str


@dataclass
class _PrefixState:
    """The key-value cache of a shared prompt prefix (batch of one)."""

    length: int
    cache: Any = None

    def copy_for(self, batch: int) -> Any:
        cache = copy.deepcopy(self.cache)
        if batch > 1:
            cache.batch_repeat_interleave(batch)
        return cache


@dataclass
class _Sequence:
    """A sequence being generated."""

    encoded: _Encoded
    request: GenerationRequest
    budget: int = 1  # new tokens this sequence may write
    tokens: list[int] = field(default_factory=list)
    text: str = ""
    truncated: bool = False  # ended because the budget ran out


class TransformersBackend:
    """A local causal language model behind the :class:`~evaluator.backends.base.Backend` protocol."""

    supports_scoring = True
    model: Any  # a transformers PreTrainedModel (typed loosely: its stubs are partial)
    tokenizer: Any

    def __init__(
        self,
        model: str,
        settings: BackendSettings | None = None,
        **options: Unpack[LocalOptions],
    ) -> None:
        """``settings`` as ``open_backend`` passes them; ``options`` change some of them
        (or of the defaults): ``TransformersBackend(path, device="cpu", batch_size=4)``."""
        import torch
        import transformers
        from transformers import AutoModelForCausalLM, AutoTokenizer

        settings = replace(settings or BackendSettings(), **options)
        if settings.threads is not None:
            if settings.threads < 1:
                raise BackendError(f"threads must be at least 1, not {settings.threads}")
            # Process-wide: on a CPU shared with other work, fewer threads wait less.
            torch.set_num_threads(settings.threads)

        started = time.perf_counter()  # load time: conversion (if any) and loading, not imports
        self.source = resolve_model_source(model)
        self.device, self.dtype = resolve_device(settings.device, settings.dtype)
        self.batch_size = parse_batch_size(settings.batch_size)
        self.prefix_cache = settings.prefix_cache
        try:
            self.tokenizer = AutoTokenizer.from_pretrained(self.source.path, local_files_only=True)
            self.model = AutoModelForCausalLM.from_pretrained(
                self.source.path, dtype=self.dtype, local_files_only=True
            )
        except (OSError, ValueError) as error:  # ValueError: a config or tokenizer it cannot read
            if isinstance(error, OSError) and self.source.origin == "hub cache":
                raise BackendError(
                    f"'{model}' is not a local model directory, a .gguf file, or a model in the "
                    f"local Hugging Face cache; vetbench never downloads. Fetch it first, e.g. "
                    f"`huggingface-cli download {model}`, or give a directory."
                ) from None
            raise BackendError(f"{self.source.path}: cannot load the model ({error})") from None
        self.model.to(self.device)
        self.model.eval()
        self.load_seconds = time.perf_counter() - started
        has_template = bool(getattr(self.tokenizer, "chat_template", None))
        if settings.chat_template and not has_template:
            raise BackendError(f"{model}: the tokenizer has no chat template")
        self.chat = has_template if settings.chat_template is None else settings.chat_template
        self._eos_ids = self._end_of_sequence_ids()
        self._pad_id = self._padding_id()
        forward_parameters = inspect.signature(self.model.forward).parameters
        # transformers 5 calls the cache `cache`; 4.x called it `past_key_values`.
        self._cache_argument = "cache" if "cache" in forward_parameters else "past_key_values"
        self._keeps_logits = "logits_to_keep" in forward_parameters
        self._torch = torch
        self.info = BackendInfo(
            backend="transformers",
            model=model,
            params={
                "device": self.device,
                "dtype": str(self.dtype).removeprefix("torch."),
                "batch_size": "auto" if self.batch_size is None else self.batch_size,
                "prefix_cache": self.prefix_cache,
                "threads": torch.get_num_threads() if self.device == "cpu" else None,
                "chat_template": self.chat,
                "context_length": self.context_length,
                "own_max_new_tokens": own_max_new_tokens(self.model),
                "model_path": self.source.path,
                "model_origin": self.source.origin,
                "transformers": transformers.__version__,
                "torch": torch.__version__,
            },
        )

    # ----------------------------------------------------------------- set-up

    def _end_of_sequence_ids(self) -> set[int]:
        ids: set[int] = set()
        for value in (
            getattr(self.tokenizer, "eos_token_id", None),
            getattr(getattr(self.model, "generation_config", None), "eos_token_id", None),
        ):
            if isinstance(value, int):
                ids.add(value)
            elif isinstance(value, list | tuple):
                ids.update(int(v) for v in value)
        return ids

    @property
    def context_length(self) -> int:
        return context_length(self.model, self.tokenizer)

    def token_budget(self, max_new_tokens: int | None, prompt_tokens: int) -> int:
        """New tokens one answer may take (``evaluator.backends.token_budget``)."""
        return token_budget(self.model, self.tokenizer, max_new_tokens, prompt_tokens)

    def _budget(self, item: _Encoded, requests: Sequence[GenerationRequest]) -> int:
        return self.token_budget(requests[item.index].max_new_tokens, len(item.ids))

    def _padding_id(self) -> int:
        for value in (self.tokenizer.pad_token_id, self.tokenizer.eos_token_id):
            if isinstance(value, int):
                return value
        return 0

    def close(self) -> None:
        """Free the model's memory (the backend cannot be used afterwards)."""
        self.model = None
        if self.device == "cuda":
            self._torch.cuda.empty_cache()

    # --------------------------------------------------------------- prompts

    def render(self, prompt: Prompt) -> str:
        """The exact text the model sees: the prompt in a user turn of the chat template,
        or the prompt itself for models without one."""
        if not self.chat:
            return prompt.text
        return str(
            self.tokenizer.apply_chat_template(
                [{"role": "user", "content": prompt.text}],
                tokenize=False,
                add_generation_prompt=True,
            )
        )

    def encode(self, text: str) -> list[int]:
        # A chat template writes its own special tokens into the text.
        return list(self.tokenizer(text, add_special_tokens=not self.chat)["input_ids"])

    def _encode_all(self, prompts: Sequence[Prompt]) -> list[_Encoded]:
        encoded = []
        for index, prompt in enumerate(prompts):
            text = self.render(prompt)
            encoded.append(_Encoded(index, text, self.encode(text), prompt.prefix))
        return encoded

    def _prefix_states(self, encoded: Sequence[_Encoded]) -> dict[str, _PrefixState]:
        """One shared-prefix cache per distinct ``Prompt.prefix``: the longest common token
        prefix of its prompts, always leaving at least one token of each prompt to run."""
        groups: dict[str, list[_Encoded]] = {}
        for item in encoded:
            groups.setdefault(item.prefix_key, []).append(item)
        states = {}
        for key, members in groups.items():
            length = 0
            if self.prefix_cache and self._cache_is_reusable():
                length = _common_prefix_length([m.ids for m in members])
                length = min(length, min(len(m.ids) for m in members) - 1)
            states[key] = _PrefixState(length=max(length, 0))
        return states

    def _cache_is_reusable(self) -> bool:
        """Padding between the prefix and a question is only harmless for plain attention."""
        cache = self._new_cache()
        return not any(getattr(cache, "is_sliding", [])) and not any(
            getattr(cache, "is_linear", [])
        )

    def _ensure_prefix(self, state: _PrefixState, ids: list[int]) -> None:
        if state.length == 0 or state.cache is not None:
            return
        torch = self._torch
        cache = self._new_cache()
        prefix = torch.tensor([ids[: state.length]], device=self.device)
        self._forward(prefix, torch.ones_like(prefix), None, cache)
        state.cache = cache

    def _new_cache(self) -> Any:
        from transformers import DynamicCache

        try:
            return DynamicCache(config=self.model.config)
        except TypeError:  # transformers < 4.56 takes no config
            return DynamicCache()

    def _forward(self, input_ids: Any, attention_mask: Any, position_ids: Any, cache: Any) -> Any:
        """Logits of the last position, updating ``cache`` in place."""
        kwargs: dict[str, Any] = {self._cache_argument: cache}
        if self._keeps_logits:
            kwargs["logits_to_keep"] = 1
        output = self.model(
            input_ids=input_ids,
            attention_mask=attention_mask,
            position_ids=position_ids,
            use_cache=True,
            **kwargs,
        )
        return output.logits[:, -1, :].float()

    def _forward_all(
        self, input_ids: Any, attention_mask: Any, position_ids: Any, cache: Any
    ) -> Any:
        """Logits of every position, updating ``cache`` in place."""
        output = self.model(
            input_ids=input_ids,
            attention_mask=attention_mask,
            position_ids=position_ids,
            use_cache=True,
            **{self._cache_argument: cache},
        )
        return output.logits.float()

    # ------------------------------------------------------------ batch size

    def _kv_bytes_per_token(self) -> int:
        config = self.model.config.get_text_config()
        heads = getattr(config, "num_attention_heads", 1)
        kv_heads = getattr(config, "num_key_value_heads", None) or heads
        head_dim = getattr(config, "head_dim", None) or config.hidden_size // heads
        element = self._torch.tensor([], dtype=self.dtype).element_size()
        return 2 * config.num_hidden_layers * kv_heads * head_dim * element

    def _memory_budget(self) -> int:
        if self.device == "cuda":
            free, _total = self._torch.cuda.mem_get_info()
            return int(free * GPU_MEMORY_SHARE)
        return CPU_MEMORY_BUDGET

    def _sequences_that_fit(self, tokens_per_sequence: int) -> int:
        """How many sequences of this length one batch can hold in the memory budget."""
        config = self.model.config.get_text_config()
        element = self._torch.tensor([], dtype=self.dtype).element_size()
        per_token = self._kv_bytes_per_token() + 8 * config.hidden_size * element
        per_sequence = per_token * tokens_per_sequence + 4 * config.vocab_size
        return max(1, self._memory_budget() // max(per_sequence, 1))

    def _batch_limit(self, tokens_per_sequence: int) -> int:
        fit = self._sequences_that_fit(tokens_per_sequence)
        if self.batch_size is not None:
            return self.batch_size
        if self.device == "cuda":
            return max(1, min(MAX_AUTO_BATCH, fit))
        return max(1, min(DEFAULT_CPU_BATCH, fit))

    # ------------------------------------------------------------ generation

    def generate(self, requests: Sequence[GenerationRequest]) -> Iterator[GenerationResult]:
        """Greedy answers, yielded as each sequence finishes (longest prompts first)."""
        if not requests:
            return
        torch = self._torch
        encoded = self._encode_all([request.prompt for request in requests])
        states = self._prefix_states(encoded)
        order = sorted(encoded, key=lambda e: (e.prefix_key, -len(e.ids)))
        pending: list[_Encoded] = []
        budget = 0  # the largest answer budget in pending, kept as items join it
        with torch.inference_mode():
            for position, item in enumerate(order):
                pending.append(item)
                state = states[item.prefix_key]
                following = order[position + 1] if position + 1 < len(order) else None
                budget = max(budget, self._budget(item, requests))
                limit = self._batch_limit(len(pending[0].ids) + budget)
                if (
                    len(pending) >= limit
                    or following is None
                    or following.prefix_key != item.prefix_key
                ):
                    self._ensure_prefix(state, pending[0].ids)
                    yield from self._generate_safely(pending, requests, state)
                    pending, budget = [], 0

    def _generate_safely(
        self,
        batch: list[_Encoded],
        requests: Sequence[GenerationRequest],
        state: _PrefixState,
    ) -> Iterator[GenerationResult]:
        """Run a batch; when the GPU runs out of memory, halve it, down to single items."""
        done: set[int] = set()
        try:
            for index, result in self._generate_batch(batch, requests, state):
                done.add(index)
                yield result
        except Exception as error:
            if not _is_out_of_memory(error):
                raise
            if self.device == "cuda":
                self._torch.cuda.empty_cache()
            rest = [item for item in batch if item.index not in done]
            if len(rest) <= 1 and len(batch) <= 1:
                for item in rest:
                    yield GenerationResult(
                        requests[item.index].item_id, item.text, "", 0.0, error=f"{error}"
                    )
                return
            half = max(1, len(rest) // 2)
            log.warning("out of memory with %d sequences; retrying in halves", len(batch))
            yield from self._generate_safely(rest[:half], requests, state)
            yield from self._generate_safely(rest[half:], requests, state)

    def _generate_batch(
        self,
        batch: list[_Encoded],
        requests: Sequence[GenerationRequest],
        state: _PrefixState,
    ) -> Iterator[tuple[int, GenerationResult]]:
        """Yield ``(request index, result)`` as each sequence of the batch finishes."""
        torch = self._torch
        started = time.perf_counter()
        prefix_length = state.length
        suffixes = [item.ids[prefix_length:] for item in batch]
        width = max(len(s) for s in suffixes)
        size = len(batch)
        input_ids = torch.full((size, width), self._pad_id, dtype=torch.long)
        suffix_mask = torch.zeros((size, width), dtype=torch.long)
        for row, suffix in enumerate(suffixes):
            input_ids[row, width - len(suffix) :] = torch.tensor(suffix, dtype=torch.long)
            suffix_mask[row, width - len(suffix) :] = 1
        input_ids = input_ids.to(self.device)
        suffix_mask = suffix_mask.to(self.device)
        attention = torch.cat(
            [torch.ones((size, prefix_length), dtype=torch.long, device=self.device), suffix_mask],
            dim=1,
        )
        # Positions continue from the prefix and skip the padding.
        positions = (prefix_length + suffix_mask.cumsum(dim=1) - 1).clamp(min=0)
        cache = state.copy_for(size) if prefix_length else self._new_cache()
        logits = self._forward(input_ids, attention, positions, cache)
        next_positions = positions[:, -1] + 1
        active = [
            _Sequence(item, requests[item.index], self._budget(item, requests)) for item in batch
        ]
        while active:
            chosen = logits.argmax(dim=-1).tolist()
            keep: list[int] = []
            for row, (sequence, token) in enumerate(zip(active, chosen, strict=True)):
                if self._advance(sequence, token):
                    yield (
                        sequence.encoded.index,
                        GenerationResult(
                            sequence.request.item_id,
                            sequence.encoded.text,
                            sequence.text,
                            time.perf_counter() - started,
                            truncated=sequence.truncated,
                        ),
                    )
                else:
                    keep.append(row)
            if not keep:
                return
            tokens = torch.tensor([[chosen[row]] for row in keep], device=self.device)
            if len(keep) < len(active):
                rows = torch.tensor(keep, device=self.device)
                cache.batch_select_indices(rows)
                attention = attention[rows]
                next_positions = next_positions[rows]
                active = [active[row] for row in keep]
            attention = torch.cat(
                [
                    attention,
                    torch.ones((len(active), 1), dtype=attention.dtype, device=self.device),
                ],
                dim=1,
            )
            logits = self._forward(tokens, attention, next_positions[:, None], cache)
            next_positions = next_positions + 1

    def _advance(self, sequence: _Sequence, token: int) -> bool:
        """Add ``token`` to ``sequence``; True when the sequence is finished."""
        if token in self._eos_ids:
            return True
        sequence.tokens.append(token)
        text = str(self.tokenizer.decode(sequence.tokens, skip_special_tokens=True))
        cut = cut_at_stop(text, sequence.request.stop)
        if cut is not None:
            sequence.text = cut
            return True
        sequence.truncated = len(sequence.tokens) >= sequence.budget
        # Cut by the budget inside a character: not the U+FFFD its first bytes decode to.
        sequence.text = without_unfinished_character(text) if sequence.truncated else text
        return sequence.truncated

    # --------------------------------------------------------------- scoring

    def score(self, requests: Sequence[ScoringRequest]) -> Iterator[ScoringResult]:
        """Sum of token log-probabilities of each candidate continuation, per request.

        Candidates continue the prompt text as written (``" D, A, C, B"`` after
        ``Answer:``).  In a chat template the answer opens the assistant's turn, so
        leading whitespace is dropped there.
        """
        if not requests:
            return
        torch = self._torch
        encoded = self._encode_all([request.prompt for request in requests])
        states = self._prefix_states(encoded)
        with torch.inference_mode():
            for item in encoded:
                request = requests[item.index]
                state = states[item.prefix_key]
                self._ensure_prefix(state, item.ids)
                started = time.perf_counter()
                try:
                    scores = self._score_item(item, request.candidates, state)
                except Exception as error:
                    if not _is_out_of_memory(error):
                        raise
                    yield ScoringResult(request.item_id, item.text, (), 0.0, error=str(error))
                    continue
                yield ScoringResult(
                    request.item_id, item.text, tuple(scores), time.perf_counter() - started
                )

    def _continuation(self, item: _Encoded, candidate: str) -> list[int]:
        """The candidate's tokens after the prompt (as lm-eval splits context and continuation)."""
        if self.chat:
            candidate = candidate.lstrip()
        whole = self.encode(item.text + candidate)
        continuation = whole[len(item.ids) :]
        if whole[: len(item.ids)] != item.ids or not continuation:
            continuation = list(self.tokenizer(candidate, add_special_tokens=False)["input_ids"])
        if not continuation:
            raise ValueError(f"candidate answer {candidate!r} has no tokens")
        return continuation

    def _score_item(
        self, item: _Encoded, candidates: Sequence[str], state: _PrefixState
    ) -> list[float]:
        torch = self._torch
        prompt_length = len(item.ids)
        cache = state.copy_for(1) if state.length else self._new_cache()
        suffix = torch.tensor([item.ids[state.length :]], device=self.device)
        attention = torch.ones((1, prompt_length), dtype=torch.long, device=self.device)
        positions = torch.arange(state.length, prompt_length, device=self.device)[None, :]
        first = torch.log_softmax(self._forward(suffix, attention, positions, cache), dim=-1)[0]
        continuations = [self._continuation(item, candidate) for candidate in candidates]
        scores = [0.0] * len(candidates)
        longest = max(len(c) for c in continuations)
        chunk = self._batch_limit(prompt_length + longest) * 4
        for start in range(0, len(continuations), chunk):
            rows = continuations[start : start + chunk]
            for offset, total in enumerate(self._score_rows(rows, first, cache, prompt_length)):
                scores[start + offset] = total
        return scores

    def _score_rows(
        self, rows: list[list[int]], first: Any, prompt_cache: Any, prompt_length: int
    ) -> list[float]:
        """Log-likelihoods of ``rows`` (token lists) continuing a prompt whose cache is given."""
        torch = self._torch
        totals = [float(first[row[0]]) for row in rows]
        width = max(len(row) for row in rows) - 1
        if width == 0:
            return totals
        count = len(rows)
        inputs = torch.full((count, width), self._pad_id, dtype=torch.long)
        mask = torch.zeros((count, width), dtype=torch.long)
        for index, row in enumerate(rows):
            body = row[:-1]  # the last token is predicted, never fed
            if body:
                inputs[index, : len(body)] = torch.tensor(body)
                mask[index, : len(body)] = 1
        cache = copy.deepcopy(prompt_cache)
        if count > 1:
            cache.batch_repeat_interleave(count)
        attention = torch.cat([torch.ones((count, prompt_length), dtype=torch.long), mask], dim=1)
        positions = (prompt_length + torch.arange(width))[None, :].expand(count, -1)
        log_probs = torch.log_softmax(
            self._forward_all(
                inputs.to(self.device),
                attention.to(self.device),
                positions.to(self.device),
                cache,
            ),
            dim=-1,
        )
        for index, row in enumerate(rows):
            targets = torch.tensor(row[1:], device=self.device)
            if len(targets):
                picked = log_probs[index, : len(targets)].gather(1, targets[:, None])
                totals[index] += float(picked.sum())
        return totals


def _common_prefix_length(sequences: Sequence[Sequence[int]]) -> int:
    if not sequences:
        return 0
    first = sequences[0]
    length = min(len(s) for s in sequences)
    for sequence in sequences[1:]:
        index = 0
        while index < length and sequence[index] == first[index]:
            index += 1
        length = index
    return length


def _is_out_of_memory(error: BaseException) -> bool:
    import torch

    if isinstance(error, torch.cuda.OutOfMemoryError):
        return True
    return isinstance(error, RuntimeError) and "out of memory" in str(error).lower()

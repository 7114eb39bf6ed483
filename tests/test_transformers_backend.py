"""The transformers backend on a tiny random-weight Llama model: left-padded batches,
shared-prefix reuse (same outputs, fewer tokens run), stops, the chat template,
log-likelihood scoring against a plain forward pass, and errors."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from tiny_model import tiny_model_dir

from db.items import ItemSnapshot
from db.vocabulary import ItemKind
from evaluator.backends.base import BackendError, GenerationRequest, Prompt, ScoringRequest
from evaluator.backends.local_model import resolve_model_source
from evaluator.backends.settings import parse_batch_size
from evaluator.backends.transformers_backend import TransformersBackend
from evaluator.prompts import build_prompt, load_templates

# One test process runs this module (scripts/test.sh: --dist loadgroup), so that its three
# loads of the tiny model happen once, not in each process that draws one of its tests.
pytestmark = pytest.mark.xdist_group(__name__)


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tiny_model_dir(tmp_path_factory)


@pytest.fixture(scope="module")
def tiny_chat(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tiny_model_dir(tmp_path_factory, chat=True)


@pytest.fixture(scope="module")
def fast(tiny: Path) -> TransformersBackend:
    """Batches of 3 with the shared prefix reused."""
    return TransformersBackend(str(tiny), device="cpu", dtype="float32", batch_size=3)


@pytest.fixture(scope="module")
def plain(tiny: Path) -> TransformersBackend:
    """One item at a time, everything recomputed: the reference."""
    return TransformersBackend(
        str(tiny), device="cpu", dtype="float32", batch_size=1, prefix_cache=False
    )


def ordering_item(n: int, words: int) -> ItemSnapshot:
    filler = " ".join(["the firm raises prices"] * words)
    return ItemSnapshot(
        id=f"econ:{n}",
        kind=ItemKind.ORDERING,
        source="econ",
        source_ref="",
        language="en",
        status="approved",
        revision=1,
        prompt=f"Scenario {n}: {filler}. Put the following events in logical order.",
        choices={label: f"Event {label} of scenario {n}." for label in "ABCD"},
        key="DACB",
        explanation=None,
    )


def prompts(count: int = 7) -> list[Prompt]:
    """Prompts sharing a two-shot prefix, with questions of very different lengths."""
    templates = load_templates()
    shots = [ordering_item(100, 3), ordering_item(101, 1)]
    return [
        build_prompt(ordering_item(n, 1 + (n * 5) % 11), shots, templates) for n in range(count)
    ]


def requests(max_new_tokens: int = 10, **extra: Any) -> list[GenerationRequest]:
    return [
        GenerationRequest(f"econ:{n}", prompt, max_new_tokens=max_new_tokens, **extra)
        for n, prompt in enumerate(prompts())
    ]


def outputs(backend: TransformersBackend, batch: list[GenerationRequest]) -> dict[str, str]:
    return {result.item_id: result.output for result in backend.generate(batch)}


class ForwardSpy:
    """Counts the forward passes of a model and the token positions they run."""

    def __init__(self, model: Any) -> None:
        self.original = model.forward
        self.calls = 0
        self.tokens = 0

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        ids = kwargs["input_ids"]
        self.calls += 1
        self.tokens += ids.shape[0] * ids.shape[1]
        return self.original(*args, **kwargs)


@pytest.fixture
def spy_on() -> Iterator[Any]:
    patched: list[tuple[Any, Any]] = []

    def attach(backend: TransformersBackend) -> ForwardSpy:
        spy = ForwardSpy(backend.model)
        backend.model.forward = spy
        patched.append((backend.model, spy.original))
        return spy

    yield attach
    for model, original in patched:
        model.forward = original


def test_left_padded_batches_give_the_same_answers_as_single_items(
    fast: TransformersBackend, plain: TransformersBackend
) -> None:
    batch = requests()
    assert len({len(fast.encode(r.prompt.text)) for r in batch}) > 3  # really different lengths
    batched = outputs(fast, batch)
    single = outputs(plain, batch)
    assert batched == single
    assert all(text for text in batched.values())


def test_prefix_reuse_gives_the_same_answers_and_runs_far_fewer_tokens(
    tiny: Path, spy_on: Any
) -> None:
    reusing = TransformersBackend(str(tiny), device="cpu", dtype="float32", batch_size=3)
    recomputing = TransformersBackend(
        str(tiny), device="cpu", dtype="float32", batch_size=3, prefix_cache=False
    )
    reuse_spy, recompute_spy = spy_on(reusing), spy_on(recomputing)
    batch = requests()
    assert outputs(reusing, batch) == outputs(recomputing, batch)
    assert reuse_spy.tokens < 0.6 * recompute_spy.tokens


def test_the_reused_prefix_is_a_common_token_prefix(fast: TransformersBackend) -> None:
    batch = prompts()
    encoded = fast._encode_all(batch)
    (state,) = fast._prefix_states(encoded).values()
    prefix_tokens = len(fast.encode(batch[0].prefix))
    # At least the shared text (a token may merge across its end), more if the
    # questions happen to start alike ("Question: Scenario ...").
    assert state.length >= prefix_tokens - 2
    assert len({tuple(e.ids[: state.length]) for e in encoded}) == 1
    assert all(len(e.ids) > state.length for e in encoded)


def test_results_carry_the_exact_prompt_and_a_latency(fast: TransformersBackend) -> None:
    batch = requests(max_new_tokens=3)
    results = list(fast.generate(batch))
    assert sorted(r.item_id for r in results) == sorted(r.item_id for r in batch)
    by_id = {r.item_id: r for r in results}
    for request in batch:
        assert by_id[request.item_id].prompt_text == request.prompt.text  # no chat template
        assert by_id[request.item_id].latency_s > 0
        assert by_id[request.item_id].error is None


def natural_output(backend: TransformersBackend, max_new_tokens: int = 16) -> tuple[Prompt, str]:
    prompt = prompts(1)[0]
    (result,) = backend.generate(
        [GenerationRequest("econ:0", prompt, max_new_tokens=max_new_tokens)]
    )
    return prompt, result.output


def ascii_piece(text: str) -> tuple[int, str]:
    """A two-character ASCII piece of ``text`` after its first non-blank character."""
    start = len(text) - len(text.lstrip()) + 1
    for index in range(start, len(text) - 1):
        piece = text[index : index + 2]
        if piece.isascii() and piece.strip() and text.find(piece, start - 1) == index:
            return index, piece
    raise AssertionError(f"the tiny model's output has no ASCII piece to stop at: {text!r}")


def stopped_early(
    backend: TransformersBackend,
    spy_on: Any,
    request: Callable[[Prompt, str], GenerationRequest],
) -> tuple[str, str, int, str]:
    """Generate the tiny model's natural output, pick an ASCII piece of it, then generate again
    with ``request(prompt, piece)``, which must stop before its 16-token budget.

    Returns the new output, the natural one, and the piece's index and text."""
    prompt, text = natural_output(backend)
    index, piece = ascii_piece(text)
    spy = spy_on(backend)
    (result,) = backend.generate([request(prompt, piece)])
    assert spy.calls < 16  # it did not run on to the token budget
    return result.output, text, index, piece


def test_generation_stops_at_a_stop_string_and_cuts_it_off(
    plain: TransformersBackend, spy_on: Any
) -> None:
    def stop_at(prompt: Prompt, piece: str) -> GenerationRequest:
        return GenerationRequest("econ:0", prompt, stop=("never there", piece), max_new_tokens=16)

    output, text, index, _ = stopped_early(plain, spy_on, stop_at)
    assert output == text[:index]


def test_generation_spends_at_most_max_new_tokens(plain: TransformersBackend, spy_on: Any) -> None:
    spy = spy_on(plain)
    prompt = prompts(1)[0]
    list(plain.generate([GenerationRequest("econ:0", prompt, max_new_tokens=4)]))
    assert spy.calls <= 4  # one prefill, then one pass per further token


def test_end_of_sequence_stops_a_sequence(tiny: Path) -> None:
    backend = TransformersBackend(str(tiny), device="cpu", dtype="float32", prefix_cache=False)
    prompt, text = natural_output(backend, max_new_tokens=1)
    first_token = backend.tokenizer(text, add_special_tokens=False)["input_ids"][0]
    backend._eos_ids = {first_token}
    (result,) = backend.generate([GenerationRequest("econ:0", prompt, max_new_tokens=8)])
    assert result.output == ""


def test_a_chat_template_wraps_the_prompt_and_keeps_the_shared_prefix(tiny_chat: Path) -> None:
    reusing = TransformersBackend(str(tiny_chat), device="cpu", dtype="float32", batch_size=4)
    recomputing = TransformersBackend(
        str(tiny_chat), device="cpu", dtype="float32", prefix_cache=False
    )
    assert reusing.chat and reusing.info.params["chat_template"] is True
    batch = requests(max_new_tokens=6)
    results = {r.item_id: r for r in reusing.generate(batch)}
    for request in batch:
        assert results[request.item_id].prompt_text == (
            f"<|user|>\n{request.prompt.text}\n<|assistant|>\n"
        )
    assert {k: r.output for k, r in results.items()} == outputs(recomputing, batch)
    (state,) = reusing._prefix_states(reusing._encode_all([r.prompt for r in batch])).values()
    assert state.length > len(reusing.encode(batch[0].prompt.prefix)) - 3


def test_the_chat_template_can_be_turned_off(tiny_chat: Path) -> None:
    backend = TransformersBackend(
        str(tiny_chat), device="cpu", dtype="float32", chat_template=False
    )
    prompt = prompts(1)[0]
    assert backend.render(prompt) == prompt.text


def manual_log_likelihood(backend: TransformersBackend, prompt: Prompt, candidate: str) -> float:
    """The reference: one plain forward pass over prompt + candidate, no cache, no batch."""
    import torch

    context = backend.encode(prompt.text)
    whole = backend.encode(prompt.text + candidate)
    assert whole[: len(context)] == context
    with torch.no_grad():
        logits = backend.model(input_ids=torch.tensor([whole])).logits[0]
    log_probs = torch.log_softmax(logits.float(), dim=-1)
    return float(
        sum(
            log_probs[position - 1, whole[position]] for position in range(len(context), len(whole))
        )
    )


CANDIDATES = (" D, A, C, B", " A, B, C, D", " C, D, B, A", " B")


@pytest.mark.parametrize("prefix_cache", [True, False])
def test_scores_are_log_likelihoods_of_each_candidate(tiny: Path, prefix_cache: bool) -> None:
    backend = TransformersBackend(
        str(tiny), device="cpu", dtype="float32", prefix_cache=prefix_cache
    )
    batch = [ScoringRequest(f"econ:{n}", p, CANDIDATES) for n, p in enumerate(prompts(3))]
    results = {r.item_id: r for r in backend.score(batch)}
    for request in batch:
        result = results[request.item_id]
        assert result.error is None and result.prompt_text == request.prompt.text
        expected = [manual_log_likelihood(backend, request.prompt, c) for c in CANDIDATES]
        assert result.log_likelihoods == pytest.approx(expected, abs=2e-3)


def test_scoring_in_small_chunks_gives_the_same_scores(tiny: Path) -> None:
    whole = TransformersBackend(str(tiny), device="cpu", dtype="float32", batch_size=8)
    chunked = TransformersBackend(
        str(tiny), device="cpu", dtype="float32", batch_size=1
    )  # chunks of 4
    many = tuple(f" {a}, {b}, {c}, {d}" for a, b, c, d in ("ABCD", "DCBA", "BADC", "CDAB", "ACBD"))
    request = [ScoringRequest("econ:0", prompts(1)[0], many)]
    (first,) = whole.score(request)
    (second,) = chunked.score(request)
    assert first.log_likelihoods == pytest.approx(second.log_likelihoods, abs=1e-4)


def test_out_of_memory_batches_are_retried_in_halves(
    tiny: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    backend = TransformersBackend(str(tiny), device="cpu", dtype="float32", batch_size=4)
    real = backend._generate_batch
    sizes: list[int] = []

    def cramped(batch: list[Any], *args: Any) -> Any:
        sizes.append(len(batch))
        if len(batch) > 1:
            raise RuntimeError("CUDA out of memory. Tried to allocate 2.00 GiB")
        return real(batch, *args)

    monkeypatch.setattr(backend, "_generate_batch", cramped)
    batch = requests(max_new_tokens=3)
    results = list(backend.generate(batch))
    assert sorted(r.item_id for r in results) == sorted(r.item_id for r in batch)
    assert all(r.error is None for r in results)
    assert 4 in sizes and 2 in sizes and 1 in sizes


def test_out_of_memory_on_a_single_item_is_an_infrastructure_failure(
    tiny: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    backend = TransformersBackend(str(tiny), device="cpu", dtype="float32", batch_size=1)

    def no_memory(batch: list[Any], *args: Any) -> Any:
        raise RuntimeError("CUDA out of memory")

    monkeypatch.setattr(backend, "_generate_batch", no_memory)
    (result,) = backend.generate(requests()[:1])
    assert result.error is not None and "out of memory" in result.error


def test_other_errors_are_not_swallowed(tiny: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    backend = TransformersBackend(str(tiny), device="cpu", dtype="float32")

    def broken(batch: list[Any], *args: Any) -> Any:
        raise ValueError("a bug")

    monkeypatch.setattr(backend, "_generate_batch", broken)
    with pytest.raises(ValueError, match="a bug"):
        list(backend.generate(requests()[:1]))


def test_backend_info_records_the_settings(fast: TransformersBackend, tiny: Path) -> None:
    params = fast.info.params
    assert fast.info.backend == "transformers" and fast.info.model == str(tiny)
    assert params["device"] == "cpu" and params["dtype"] == "float32"
    assert params["batch_size"] == 3 and params["prefix_cache"] is True
    assert params["chat_template"] is False and params["model_origin"] == "directory"


def test_batch_size_is_auto_or_a_positive_number() -> None:
    assert parse_batch_size("auto") is None
    assert parse_batch_size("16") == 16
    for bad in ("0", "-2", "big"):
        with pytest.raises(BackendError, match="batch size"):
            parse_batch_size(bad)


def test_unusable_models_are_explained(tmp_path: Path) -> None:
    with pytest.raises(BackendError, match="no such model directory"):
        resolve_model_source(str(tmp_path / "missing"))
    (tmp_path / "empty").mkdir()
    with pytest.raises(BackendError, match="no config.json"):
        resolve_model_source(str(tmp_path / "empty"))
    with pytest.raises(BackendError, match="no such GGUF file"):
        resolve_model_source(str(tmp_path / "model.gguf"))
    with pytest.raises(BackendError, match="never downloads"):
        TransformersBackend("vetbench-tests/no-such-model", device="cpu")


def test_the_cpu_thread_count_can_be_set(tiny: Path) -> None:
    import torch

    before = torch.get_num_threads()
    asked = before + 1  # not what the process had (tests/conftest.py sets one thread)
    try:
        backend = TransformersBackend(str(tiny), device="cpu", threads=asked)
        assert torch.get_num_threads() == asked and backend.info.params["threads"] == asked
        with pytest.raises(BackendError, match="threads must be at least 1"):
            TransformersBackend(str(tiny), device="cpu", threads=0)
    finally:
        torch.set_num_threads(before)


def test_cuda_is_refused_without_a_gpu(tiny: Path) -> None:
    import torch

    if torch.cuda.is_available():
        pytest.skip("this machine has a GPU")
    with pytest.raises(BackendError, match="no CUDA GPU"):
        TransformersBackend(str(tiny), device="cuda")


CPUINFO_WITH_BF16 = "processor\t: 0\nflags\t\t: fpu sse2 avx2 avx512f avx512_bf16 amx_tile\n"
CPUINFO_WITHOUT = "processor\t: 0\nflags\t\t: fpu sse2 avx2 avx512f avx512bw\n"


def test_bf16_matrix_units_are_read_from_the_cpu_flags() -> None:
    from evaluator.backends.local_model import cpu_has_bf16_units

    assert cpu_has_bf16_units(CPUINFO_WITH_BF16)
    assert cpu_has_bf16_units("flags\t: sse2 amx_bf16\n")
    assert not cpu_has_bf16_units(CPUINFO_WITHOUT)
    assert not cpu_has_bf16_units("model name\t: avx512_bf16 in a name is no flag\n")


def test_auto_dtype_follows_the_cpu(monkeypatch: pytest.MonkeyPatch) -> None:
    import torch

    from evaluator.backends import local_model

    if torch.cuda.is_available():
        pytest.skip("this machine has a GPU")
    monkeypatch.setattr(local_model, "cpu_has_bf16_units", lambda: True)
    assert local_model.resolve_device("auto") == ("cpu", torch.bfloat16)
    assert local_model.resolve_device("cpu", "float32") == ("cpu", torch.float32)
    monkeypatch.setattr(local_model, "cpu_has_bf16_units", lambda: False)
    assert local_model.resolve_device("cpu") == ("cpu", torch.float32)
    assert local_model.resolve_device("cpu", "bfloat16") == ("cpu", torch.bfloat16)
    with pytest.raises(BackendError, match="unknown dtype"):
        local_model.resolve_device("cpu", "float8")


def test_a_bfloat16_model_generates_and_scores(tiny: Path) -> None:
    backend = TransformersBackend(str(tiny), device="cpu", dtype="bfloat16", batch_size=3)
    assert backend.info.params["dtype"] == "bfloat16"
    results = list(backend.generate(requests()[:3]))
    assert len(results) == 3 and all(result.error is None for result in results)
    request = ScoringRequest("s", Prompt("Question: x\nAnswer:", ""), (" A", " B"))
    (scored,) = backend.score([request])
    assert len(scored.log_likelihoods) == 2 and all(v < 0 for v in scored.log_likelihoods)


def test_a_spent_budget_marks_the_answer_truncated(plain: TransformersBackend) -> None:
    prompt = prompts(1)[0]
    (cut,) = plain.generate([GenerationRequest("econ:0", prompt, max_new_tokens=2)])
    assert cut.truncated and cut.error is None


def test_an_ended_answer_is_not_truncated(tiny: Path) -> None:
    backend = TransformersBackend(str(tiny), device="cpu", dtype="float32", prefix_cache=False)
    prompt, text = natural_output(backend, max_new_tokens=1)
    backend._eos_ids = {backend.tokenizer(text, add_special_tokens=False)["input_ids"][0]}
    (result,) = backend.generate([GenerationRequest("econ:0", prompt, max_new_tokens=8)])
    assert result.output == "" and not result.truncated


def test_without_a_budget_the_model_writes_to_its_own_limit_within_its_context(
    tiny: Path, spy_on: Any
) -> None:
    backend = TransformersBackend(str(tiny), device="cpu", dtype="float32", prefix_cache=False)
    context = backend.context_length
    assert backend.info.params["context_length"] == context
    assert backend.token_budget(None, 10) == context - 10  # no limit of its own: the context
    assert backend.token_budget(5, 10) == 5  # a budget asked for
    assert backend.token_budget(50, context - 3) == 3  # never past the context
    backend.model.generation_config.max_new_tokens = 7  # the model's own limit
    assert backend.token_budget(None, 10) == 7
    assert backend.token_budget(None, context - 2) == 2
    spy = spy_on(backend)
    prompt = prompts(1)[0]
    (result,) = backend.generate([GenerationRequest("econ:0", prompt, max_new_tokens=None)])
    assert result.truncated and spy.calls == 7  # one prefill, then one pass per token


def written_until_the_budget(backend: TransformersBackend, tokens: list[int]) -> str:
    """What the backend keeps of ``tokens`` written one by one with a budget of exactly
    that many (so the budget, not a stop or end-of-sequence, ends the answer)."""
    from evaluator.backends.transformers_backend import _Encoded, _Sequence

    request = GenerationRequest("zh:1", Prompt("", "题目："), stop=("\n\n",))
    sequence = _Sequence(_Encoded(0, "", [], ""), request, budget=len(tokens))
    finished = [backend._advance(sequence, token) for token in tokens]
    assert finished == [False] * (len(tokens) - 1) + [True] and sequence.truncated
    return sequence.text


def test_a_budget_that_ends_inside_a_chinese_character_keeps_no_replacement_character(
    plain: TransformersBackend,
) -> None:
    """Byte-level tokens carry a Chinese character's three bytes apart: a budget spent
    after one or two of them decoded to U+FFFD, stored as the answer's last character.
    The unfinished character is dropped; a U+FFFD the model wrote before it stays, and
    so do the finished characters of the token that began the unfinished one."""
    tokenizer = plain.tokenizer
    ids = tokenizer("答\ufffd案：龘", add_special_tokens=False)["input_ids"]
    assert tokenizer.decode(ids) == "答\ufffd案：龘"
    cuts = {tokenizer.decode(ids[:n]) for n in (len(ids) - 2, len(ids) - 1)}
    assert cuts == {"答\ufffd案：\ufffd"}  # 龘 cut after one byte and after two
    for n in (len(ids) - 2, len(ids) - 1):
        assert written_until_the_budget(plain, ids[:n]) == "答\ufffd案："
    assert written_until_the_budget(plain, ids) == "答\ufffd案：龘"  # whole: as it was
    # A token holding 选 and the first byte of 择: 选 stays (a streaming decoder's
    # whole-token hold-back would drop it too).
    (spanning,) = [i for i in range(len(tokenizer)) if tokenizer.decode([i]) == "选\ufffd"]
    answer = tokenizer("答案", add_special_tokens=False)["input_ids"] + [spanning]
    assert written_until_the_budget(plain, answer) == "答案选"

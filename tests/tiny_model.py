"""A tiny random-weight Llama model with a real byte-level BPE tokenizer, built offline.

Tests of batching, stopping, prefix reuse, scoring and resume need a real causal
language model that loads through ``AutoModelForCausalLM`` but runs in milliseconds.
The tokenizer is trained on the fixture texts so that it merges words as real
tokenizers do (which matters for the shared-prefix split); the weights are random
but seeded, so greedy outputs are repeatable.
"""

from __future__ import annotations

import functools
import hashlib
from pathlib import Path

import pytest

from evaluator.cache_folders import build_once

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
EOS = "<|endoftext|>"
CHAT_TEMPLATE = (
    "{% for message in messages %}<|user|>\n{{ message['content'] }}\n{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>\n{% endif %}"
)


def _corpus() -> list[str]:
    texts = []
    for name in ("econ_ordering.csv", "cflue_mcq.json", "shots_ordering.jsonl"):
        path = FIXTURES / name
        if path.exists():
            texts.extend(path.read_text(encoding="utf-8").splitlines())
    texts.append("Question: Answer: A, B, C, D\n\n题目： 答案：ABCD 对 错")
    return texts


def build_tiny_model(directory: Path, *, chat: bool = False, seed: int = 0) -> Path:
    """Save a tiny Llama model and its tokenizer in ``directory`` and return it."""
    import torch
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    directory.mkdir(parents=True, exist_ok=True)
    specials = [EOS, "<|user|>", "<|assistant|>"]
    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=600,
        special_tokens=specials,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tokenizer.train_from_iterator(_corpus(), trainer=trainer)
    fast = PreTrainedTokenizerFast(tokenizer_object=tokenizer, eos_token=EOS, pad_token=EOS)
    if chat:
        fast.chat_template = CHAT_TEMPLATE
    fast.save_pretrained(directory)

    torch.manual_seed(seed)
    config = LlamaConfig(
        vocab_size=len(fast),
        hidden_size=48,
        intermediate_size=96,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=4096,
        eos_token_id=fast.eos_token_id,
        pad_token_id=fast.pad_token_id,
        bos_token_id=None,
        tie_word_embeddings=False,
    )
    model = LlamaForCausalLM(config)
    with torch.no_grad():
        # Larger output weights spread the logits, so greedy choices are never near-ties.
        model.lm_head.weight.mul_(20)
    model.save_pretrained(directory)
    return directory


_BUILT: dict[bool, Path] = {}
TEST_MODEL_CACHE = Path(__file__).resolve().parent.parent / ".cache" / "vetbench-test"  # gitignored
BUILT_MARKER = "vetbench-tiny-model.txt"


def _build_key(chat: bool) -> str:
    """What the built model depends on: this builder, its corpus, the library versions."""
    import tokenizers
    import torch
    import transformers

    digest = hashlib.sha256(Path(__file__).read_bytes())
    for text in _corpus():
        digest.update(text.encode())
    for version in (tokenizers.__version__, torch.__version__, transformers.__version__):
        digest.update(version.encode())
    digest.update(b"chat" if chat else b"plain")
    return digest.hexdigest()[:16]


def tiny_model_dir(
    tmp_path_factory: pytest.TempPathFactory | None = None, *, chat: bool = False
) -> Path:
    """The tiny model, built once per checkout (``tmp_path_factory`` is not needed).

    Like the converted demo model it is kept in the tests' cache (.cache/vetbench-test),
    keyed by what it is built from, and built the same way (``evaluator.cache_folders``):
    pytest-xdist workers and later runs share one copy, built by one process while the
    others wait."""
    if chat not in _BUILT:
        name = "tiny-chat-model" if chat else "tiny-model"
        _BUILT[chat] = build_once(
            TEST_MODEL_CACHE / f"{name}-{_build_key(chat)}",
            functools.partial(build_tiny_model, chat=chat),
            locks=TEST_MODEL_CACHE / "locks",
            marker=BUILT_MARKER,
            marker_text=f"built by {Path(__file__).name}\n",
        )
    return _BUILT[chat]

"""A local and a served run of the same greedy text read the same answer.

The local backend decides where a sequence ends token by token (``_advance``); a
served model's text comes back whole and is cut at the same stop strings
(``finished_text``).  The tiny model cannot be made to write chosen text, so the
chosen text's tokens are fed to the local backend's own stopping step, with the
requests the run plan builds, and the same text is served by a real HTTP server to
the OpenAI-compatible backend.  Before, the local backend stopped as soon as the
text so far read as an answer, so the answer marker or the last span that follows
never counted there.
"""

from __future__ import annotations

import pytest
from fake_openai_server import FakeOpenAIServer, RecordedRequest, Reply, completion
from tiny_model import tiny_model_dir

from db.items import ItemSnapshot
from db.vocabulary import EvalMode, ItemKind
from evaluator.backends.base import GenerationRequest
from evaluator.backends.openai_backend import OpenAIBackend
from evaluator.backends.transformers_backend import TransformersBackend, _Encoded, _Sequence
from evaluator.extractors import LENIENT, read_answers
from evaluator.prompts import build_prompt, load_templates
from evaluator.protocols import protocol_spec
from evaluator.run_plan import RunPlan, Shown, generation_requests

pytestmark = pytest.mark.xdist_group(__name__)
KEY_ENV = "VETBENCH_PARITY_TEST_KEY"

# (kind, the model's greedy text, what a served run reads: the answer both must read)
CASES = [
    (
        ItemKind.ORDERING,
        "Listed as A, B, C, D the events are out of order. Correct Order: D, A, C, B",
        "DACB",
    ),
    (ItemKind.ORDERING, "Not A, B, C, D. The correct order is D, A, C, B.", "DACB"),
    (ItemKind.MULTI, "A\nB\n答案：BD", "BD"),
    (ItemKind.SINGLE, "C is tempting.\nBut the answer is B.", "B"),
    # the stop strings still end both alike: a blank line, a new question
    (ItemKind.ORDERING, " D, A, C, B\n\nQuestion: A, B, C, D", "DACB"),
    (ItemKind.SINGLE, "B\nQuestion: Answer: C", "B"),
]


def item(kind: ItemKind) -> ItemSnapshot:
    return ItemSnapshot(
        id=f"parity:{kind.value}",
        kind=kind,
        source="parity",
        source_ref="",
        language="en",
        status="approved",
        revision=1,
        prompt="Which of these holds?",
        choices={label: f"Statement {label}." for label in "ABCD"},
        key="DACB" if kind == ItemKind.ORDERING else "B",
        explanation=None,
    )


def planned_request(snapshot: ItemSnapshot) -> GenerationRequest:
    """The request a custom-protocol run builds for ``snapshot``."""
    templates = load_templates()
    plan = RunPlan(
        run_id=1,
        mode=EvalMode.GENERATE,
        items={snapshot.id: snapshot},
        shown={snapshot.id: Shown(snapshot, None)},
        prompts={snapshot.id: build_prompt(snapshot, [], templates)},
        templates=templates,
        total=1,
        protocol=protocol_spec("custom"),
        extractors=(LENIENT,),
        max_new_tokens=None,
    )
    (request,) = generation_requests(plan)
    return request


@pytest.fixture(scope="module")
def local() -> TransformersBackend:
    return TransformersBackend(
        str(tiny_model_dir()), device="cpu", dtype="float32", batch_size=1, prefix_cache=False
    )


def local_output(backend: TransformersBackend, request: GenerationRequest, text: str) -> str:
    """What the local backend keeps of ``text`` written token by token (its budget aside:
    a server cuts at ``max_tokens`` alike)."""
    tokens = backend.tokenizer(text, add_special_tokens=False)["input_ids"]
    assert backend.tokenizer.decode(tokens) == text
    sequence = _Sequence(_Encoded(0, "", [], ""), request, budget=len(tokens) + 1)
    for token in tokens:
        if backend._advance(sequence, token):
            break
    return sequence.text


def served_output(server: FakeOpenAIServer, request: GenerationRequest, text: str) -> str:
    def reply(_recorded: RecordedRequest) -> Reply:
        return completion(text)

    server.default = reply
    backend = OpenAIBackend(
        "fake-model", base_url=server.base_url, api_key_env=KEY_ENV, timeout=5.0, max_retries=1
    )
    try:
        (result,) = backend.generate([request])
    finally:
        backend.close()
    assert result.error is None
    return result.output


def lenient(kind: ItemKind, output: str) -> str | None:
    return read_answers((LENIENT,), kind, output, "ABCD")[LENIENT]


@pytest.mark.parametrize(("kind", "text", "served_reads"), CASES)
def test_local_and_served_runs_of_one_text_read_the_same_answer(
    local: TransformersBackend,
    server: FakeOpenAIServer,
    monkeypatch: pytest.MonkeyPatch,
    kind: ItemKind,
    text: str,
    served_reads: str,
) -> None:
    monkeypatch.setenv(KEY_ENV, "sk-parity")
    request = planned_request(item(kind))
    served = served_output(server, request, text)
    kept = local_output(local, request, text)
    assert kept == served
    assert lenient(kind, kept) == lenient(kind, served) == served_reads


def test_a_planned_request_ends_only_at_stop_strings_or_its_budget() -> None:
    for kind in ItemKind:
        request = planned_request(item(kind))
        assert request.stop == ("\n\n", "\nQuestion:")
        assert request.max_new_tokens is not None
        assert not hasattr(request, "complete")  # no early stop at a whole answer

"""Every `--json` output keeps its exact key structure: names, order, nesting and value types.

Scripts read these outputs (the README's "JSON output" section lists the keys), so a
refactoring must not rename, drop or reorder a key; a new key is added after the
existing ones, documented, and recorded here.  Each output is flattened to
``path: type`` lines (``run.model: str``, ``accuracy_ci[]: float``; a list contributes
the lines of all its elements) and compared, in order, with the structure recorded here.
The runs come through the real CLI, from a real OpenAI-compatible HTTP server on 127.0.0.1.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from eval_helpers import mixed_set
from fake_openai_server import FakeOpenAIServer, RecordedRequest, Reply, completion, server_error
from test_generation import KEY_ENV as GENERATION_KEY_ENV
from test_generation import generate

from db.engine import open_database
from reviewer.cli import cli

ROOT = Path(__file__).resolve().parent.parent
ARTICLES_CSV = ROOT / "fixtures" / "articles.csv"
KEY_ENV = "VETBENCH_JSON_TEST_KEY"
FAILING_TITLE = "Harbor Roasters"


def flattened(value: Any, path: str = "") -> list[str]:
    """``path: type`` lines for every leaf of ``value``, in order, without repeats."""
    lines: list[str] = []

    def add(line: str) -> None:
        if line not in lines:
            lines.append(line)

    if isinstance(value, dict):
        if not value:
            add(f"{path}: {{}}")
        for key, item in value.items():
            for line in flattened(item, f"{path}.{key}" if path else str(key)):
                add(line)
    elif isinstance(value, list):
        if not value:
            add(f"{path}: []")
        for item in value:
            for line in flattened(item, f"{path}[]"):
                add(line)
    else:
        add(f"{path}: {'null' if value is None else type(value).__name__}")
    return lines


def under(prefix: str, lines: Sequence[str]) -> list[str]:
    return [f"{prefix}{line}" for line in lines]


# ------------------------------------------------------------------ structures

GROUP_FIGURES = [
    "n: int",
    "scored: int",
    "correct: int",
    "unparsed: int",
    "infrastructure_failures: int",
    "accuracy: float",
    "accuracy_ci[]: float",
    "unparsed_rate: float",
]


def added_figures(extractors: Sequence[str], positions: str) -> list[str]:
    """Keys added after ``set_f1`` (issue 14): chance, explanation metrics (null without
    CFLUE's protocol), what each extractor recovered, accuracy by key position."""
    return [
        "chance: float",
        "explained: int",
        *[f"{name}: null" for name in ("bleu_1", "bleu_4", "rouge_1", "rouge_2", "rouge_l")],
        *[
            f"extractors.{name}.{field}: {kind}"
            for name in extractors
            for field, kind in (
                ("parsed", "int"),
                ("unparsed", "int"),
                ("correct", "int"),
                ("accuracy", "float"),
            )
        ],
        *[
            f"key_positions.{label}.{field}: {kind}"
            for label in positions
            for field, kind in (("n", "int"), ("correct", "int"), ("accuracy", "float"))
        ],
        *([] if positions else ["key_positions: {}"]),
        f"position_bias: {'float' if len(positions) > 1 else 'null'}",
    ]


def group(
    *, pairwise: bool, weighted: bool, set_f1: bool, extractors: Sequence[str], positions: str
) -> list[str]:
    """One ``by_kind``/``by_source`` entry: null where the figure does not apply."""
    return [
        *GROUP_FIGURES,
        f"pairwise_accuracy: {'float' if pairwise else 'null'}",
        f"weighted_f1: {'float' if weighted else 'null'}",
        f"set_f1: {'float' if set_f1 else 'null'}",
        *added_figures(extractors, positions),
    ]


CHOICE_READERS = ("cflue", "lenient")
ORDER_READERS = ("econlogicqa", "lenient")
KIND_GROUPS = {
    "multi": group(
        pairwise=False, weighted=True, set_f1=True, extractors=CHOICE_READERS, positions=""
    ),
    "ordering": group(
        pairwise=True, weighted=False, set_f1=False, extractors=ORDER_READERS, positions="BD"
    ),
    "single": group(
        pairwise=False, weighted=True, set_f1=False, extractors=CHOICE_READERS, positions="BC"
    ),
    "truefalse": group(
        pairwise=False, weighted=True, set_f1=False, extractors=CHOICE_READERS, positions="AB"
    ),
}
SOURCE_GROUPS = {
    "cflue": group(
        pairwise=False, weighted=True, set_f1=True, extractors=CHOICE_READERS, positions="ABC"
    ),
    "econ": group(
        pairwise=True, weighted=False, set_f1=False, extractors=ORDER_READERS, positions="BD"
    ),
}
EVERY_READER = ("cflue", "econlogicqa", "lenient")


def run_record(*, error: bool) -> list[str]:
    return [
        "id: int",
        "model: str",
        "backend: str",
        "mode: str",
        "shots: int",
        "status: str",
        "stale: bool",
        "host: str",
        f"error: {'str' if error else 'null'}",
        "filters.status[]: str",
        "params.base_url: str",
        "params.temperature: float",
        "params.concurrency: int",
        "params.timeout_s: float",
        "params.max_retries: int",
        "params.seed: int",
        "params.template_hash: str",
        "params.templates_dir: null",
        "params.shot_file: null",
        "params.shot_file_sha256: null",
        "params.shots_used.ordering/en: []",  # 0 shots: one empty list per prompt group
        "params.shots_used.single/zh: []",
        "params.shots_used.multi/en: []",
        "params.shots_used.truefalse/zh: []",
        "params.shot_notes: []",
        "params.excluded: {}",
        # added by issue 14: the protocol and everything it fixes
        "params.protocol: str",
        "params.layout: str",
        "params.extractors[]: str",
        "params.shots_by_kind.multi: int",
        "params.shots_by_kind.ordering: int",
        "params.shots_by_kind.single: int",
        "params.shots_by_kind.truefalse: int",
        "params.max_new_tokens: null",
        "params.permute_options: bool",
        "params.repeat: null",
        "params.pid: int",
        "params.session_started_at: str",
        "params.session_done_before: int",
        "params.session_device: null",
        "total: int",
        "started_at: str",
        "finished_at: str",
    ]


def figures(*, error: bool) -> list[str]:
    """``run_figures``: the run, its progress and the metrics, with their breakdowns.

    With ``error`` (run 2) the second ordering item failed: no key position B for orders.
    """
    kinds, sources = dict(KIND_GROUPS), dict(SOURCE_GROUPS)
    if error:
        kinds["ordering"] = sources["econ"] = group(
            pairwise=True, weighted=False, set_f1=False, extractors=ORDER_READERS, positions="D"
        )
    return [
        *under("run.", run_record(error=error)),
        "progress.done: int",
        "progress.total: int",
        "progress.remaining: int",
        "progress.items_per_second: float",
        "progress.eta_s: null",
        "progress.elapsed_s: float",
        *GROUP_FIGURES,
        "pairwise_accuracy: float",
        "weighted_f1: float",
        "set_f1: float",
        *added_figures(EVERY_READER, "ABCD"),
        *[line for kind, lines in kinds.items() for line in under(f"by_kind.{kind}.", lines)],
        *[
            line
            for source, lines in sources.items()
            for line in under(f"by_source.{source}.", lines)
        ],
    ]


def prediction(*, with_prompt: bool, prefix: str = "") -> list[str]:
    lines = [
        "run_id: int",
        "item_id: str",
        "kind: str",
        "source: str",
        "revision: int",
        "key: str",
        "parsed_answer: str",
        "correct: bool",
        "failure_kind: null",
        "raw_output: str",
        *(["prompt: str"] if with_prompt else []),
        "prompt_hash: str",
        "scores.correct: bool",
        "scores.pairwise: float",
        "scores.extracted.lenient: str",  # added by issue 14
        "scores.extracted.econlogicqa: str",
        "scores.key_position: str",
        "latency_s: float",
        "error: null",
        "created_at: str",
    ]
    return under(prefix, lines)


SPREAD = [
    "spread[].shots: int",
    "spread[].runs[]: int",
    *[
        f"spread[].figures.{name}.{field}: {kind}"
        for name, mean in (
            ("accuracy", "float"),
            ("weighted_f1", "float"),
            ("bleu_1", "null"),
            ("bleu_4", "null"),
            ("rouge_1", "null"),
            ("rouge_2", "null"),
            ("rouge_l", "null"),
            ("position_bias", "float"),
        )
        for field, kind in (("mean", mean), ("sd", "null"), ("n", "int"))
    ],
]
# The runs one command made (several with --repeats or a protocol's shot settings), and
# their figures' mean ± sd per shot setting: added by issue 14.
EVAL_JSON = ["run_id: int", *figures(error=False), "runs[]: int", *SPREAD]

PREDICTION_LIST = [
    # the first prediction (ordering, right) sets the order; others add their variants
    *prediction(with_prompt=False, prefix="predictions[]."),
    "predictions[].parsed_answer: null",
    "predictions[].correct: null",
    "predictions[].failure_kind: str",
    "predictions[].scores: {}",
    "predictions[].error: str",
    "predictions[].scores.extracted.cflue: str",
    "predictions[].scores.set_f1: float",
]

RUNS_SHOW_JSON = [*figures(error=True), *PREDICTION_LIST]

RUN_LISTING = [
    "[].id: int",
    "[].model: str",
    "[].backend: str",
    "[].mode: str",
    "[].shots: int",
    "[].status: str",
    "[].stale: bool",
    "[].done: int",
    "[].total: int",
    "[].infrastructure_failures: int",
    "[].correct: int",
    "[].accuracy: float",
    "[].accuracy_ci[]: float",
    "[].started_at: str",
    "[].finished_at: str",
]

COMPARISON = [
    "run_a: int",
    "run_b: int",
    "shared_items: int",
    "only_in_a: int",
    "only_in_b: int",
    "counts.both_right: int",
    "counts.both_wrong: int",
    "counts.only_a: int",
    "counts.only_b: int",
    "both_right[]: str",
    "both_wrong[]: str",
    "only_a[]: str",
    "only_b: []",
    "different_answers[].item_id: str",
    "different_answers[].key: str",
    "different_answers[].a: str",
    "different_answers[].b: str",
    "agreement: float",
    "mcnemar_p: float",
]

SUSPECTS = [
    "[].item_id: str",
    "[].kind: str",
    "[].key: str",
    "[].answer: str",
    "[].models[]: str",
    "[].runs[]: int",
]

GENERATION_SUMMARY = [
    "source: str",
    "model: str",
    "planned: int",
    "skipped: int",
    "stored: int",
    "rejected: int",
    "failed: int",
    "retried: int",
    "cached: int",
    "duplicates: int",
    "interrupted: bool",
    "reject_reasons.response: int",
    "failures[]: str",
]


# ------------------------------------------------------------------ the runs


def answer(request: RecordedRequest) -> Reply:
    """model-a knows the orders; model-b fails one ordering item; both answer B elsewhere."""
    model = (request.body or {}).get("model")
    if "Scenario 2:" in request.user_text and model == "model-b":
        return server_error(500)
    if "Scenario 1:" in request.user_text or "Scenario 2:" in request.user_text:
        return completion("D, A, C, B" if model == "model-a" else "B, A, D, C")
    return completion("ABD" if "Question 3:" in request.user_text else "B")


def vetbench(url: str, *args: str) -> Result:
    result = CliRunner().invoke(cli, ["--db", url, *args])
    assert result.exit_code == 0, result.output + result.stderr
    return result


def as_json(result: Result) -> Any:
    return json.loads(result.stdout)


@pytest.fixture
def two_runs(db_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[str, Any]]:
    """Run 1 (model-a, no failures) and run 2 (model-b, one infrastructure failure),
    0 shots each, on the mixed set; yields the database and run 1's `eval --json`."""
    monkeypatch.setenv(KEY_ENV, "sk-json-test")
    database = open_database(db_path)
    mixed_set(database)
    database.dispose()
    url = str(db_path)
    with FakeOpenAIServer(default=answer) as server:
        first = None
        for model in ("model-a", "model-b"):
            result = vetbench(
                url,
                "eval",
                "--model",
                f"openai:{model}",
                "--base-url",
                server.base_url,
                "--api-key-env",
                KEY_ENV,
                "--max-retries",
                "0",
                "--shots",
                "0",
                "--json",
            )
            first = first or as_json(result)
        yield url, first


def test_eval_json(two_runs: tuple[str, Any]) -> None:
    _url, output = two_runs
    assert flattened(output) == EVAL_JSON


def test_runs_json(two_runs: tuple[str, Any]) -> None:
    url, _ = two_runs
    assert flattened(as_json(vetbench(url, "runs", "--json"))) == RUN_LISTING


def test_runs_show_json(two_runs: tuple[str, Any]) -> None:
    url, _ = two_runs
    assert flattened(as_json(vetbench(url, "runs", "show", "2", "--json"))) == RUNS_SHOW_JSON


def test_runs_show_item_json(two_runs: tuple[str, Any]) -> None:
    url, _ = two_runs
    one = as_json(vetbench(url, "runs", "show", "1", "--item", "econ:1", "--json"))
    assert flattened(one) == prediction(with_prompt=False)
    with_prompt = as_json(
        vetbench(url, "runs", "show", "1", "--item", "econ:1", "--prompt", "--json")
    )
    assert flattened(with_prompt) == prediction(with_prompt=True)


def test_runs_compare_json(two_runs: tuple[str, Any]) -> None:
    url, _ = two_runs
    assert flattened(as_json(vetbench(url, "runs", "compare", "1", "2", "--json"))) == COMPARISON


def test_runs_suspects_json(two_runs: tuple[str, Any]) -> None:
    url, _ = two_runs
    assert flattened(as_json(vetbench(url, "runs", "suspects", "--json"))) == SUSPECTS


def test_generate_json(db_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(GENERATION_KEY_ENV, "sk-json-test")

    def unordered(request: RecordedRequest) -> Reply:
        """One article's request fails; every other item is invalid (no order given)."""
        if "Article title: " + FAILING_TITLE in request.user_text:
            return server_error(500)
        return completion(
            json.dumps(
                {
                    "scenario": "A firm faces a supply shock.",
                    "events": {"A": "a", "B": "b", "C": "c", "D": "d"},
                    "correct_order": "",
                    "explanation": "none",
                }
            )
        )

    with FakeOpenAIServer(default=unordered) as server:
        result = generate(
            db_path, server, "--articles", str(ARTICLES_CSV), "--kind", "ordering", "--json"
        )
    assert result.exit_code == 1  # the failed request: run the command again to retry it
    assert flattened(as_json(result)) == GENERATION_SUMMARY

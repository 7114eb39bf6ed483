"""Every `--json` output keeps its exact key structure: names, order, nesting and value types.

Scripts read these outputs (the README's "JSON output" section lists the keys), so a
refactoring must not rename, drop or reorder a key; a new key is added after the
existing ones, documented, and recorded here.  Each output is flattened to
``path: type`` lines (``run.model: str``, ``accuracy_ci[]: float``; a list contributes
the lines of all its elements) and compared, in order, with the structure recorded here.
The runs come through the real CLI, from a real OpenAI-compatible HTTP server on 127.0.0.1;
the review outputs from a review built with the real commands on a real SQLite file.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from click.testing import Result
from eval_helpers import mixed_set_url, ok
from fake_openai_server import FakeOpenAIServer, RecordedRequest, Reply, completion, server_error
from helpers import run_cli
from test_generation import KEY_ENV as GENERATION_KEY_ENV
from test_generation import generate

# One test process runs this module (scripts/test.sh: --dist loadgroup), so that its review,
# built with the real commands, is built once, not in each process that draws one of its
# tests.
pytestmark = pytest.mark.xdist_group(__name__)

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
        "truncated: int",  # added by issue 21
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
ORDER_READERS = ("econlogicqa", "econlogicqa-start", "lenient")
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
EVERY_READER = ("cflue", "econlogicqa", "econlogicqa-start", "lenient")


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
        "params.api_key_env: str",  # added: the key's variable (never the key), for --resume
        "params.temperature: float",
        "params.concurrency: int",
        "params.timeout_s: float",
        "params.max_retries: int",
        "params.max_wait_s: float",  # added: for --resume
        "params.seed: int",
        "params.template_hash: str",
        "params.templates_dir: null",
        "params.shot_file: null",
        "params.shot_file_sha256: null",
        # 0 shots: one empty list per prompt group (orders: per number of events, issue 21)
        "params.shots_used.ordering/en/4: []",
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
        "params.answer_budget: str",  # added by issue 21
        "params.pid: int",
        "params.session_started_at: str",
        "params.session_done_before: int",
        "params.session_device: null",
        "total: int",
        "started_at: str",
        "finished_at: str",
        # added by issue 24: the items the run evaluated
        "item_set.release: null",
        "item_set.hash: str",
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
        "scores.extracted.econlogicqa-start: str",  # added by issue 21
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
        f"spread[].figures.{name}{suffix}: {kind}"
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
        for suffix, kind in (("", mean), ("_sd", "null"), ("_n", "int"))
    ],
]
# The runs one command made (several with --repeats or a protocol's shot settings), and
# their figures' mean ± sd per shot setting: added by issue 14. Each figure's mean under
# its own name, its sd and count beside it (`accuracy`, `accuracy_sd`, `accuracy_n`):
# changed from {mean, sd, n} under the name by issue 20, so that every `accuracy` in the
# document is a fraction (the oracle self-test reads them all).
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
    "[].release: null",
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
    # added by issue 24: whether the two runs evaluated the same items
    "same_item_set: bool",
    "item_sets.a.release: null",
    "item_sets.a.hash: str",
    "item_sets.b.release: null",
    "item_sets.b.hash: str",
    "other_revisions: []",
    "paired_items: int",
    "changed_items: []",
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

REJECTS_JSON = [
    "[].id: str",
    "[].source: str",
    "[].article_id: str",
    "[].sample_index: int",
    "[].kind: str",
    "[].model: str",
    "[].prompt_hash: str",
    "[].reason: str",
    "[].raw_response: str",
    "[].created_at: str",
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
    """``vetbench --db URL ARGS``, which must succeed."""
    return ok(run_cli(url, *args))


def as_json(result: Result) -> Any:
    return json.loads(result.stdout)


@pytest.fixture
def two_runs(db_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[str, Any]]:
    """Run 1 (model-a, no failures) and run 2 (model-b, one infrastructure failure),
    0 shots each, on the mixed set; yields the database and run 1's `eval --json`."""
    monkeypatch.setenv(KEY_ENV, "sk-json-test")
    url = mixed_set_url(db_path)
    with FakeOpenAIServer(default=answer) as server:
        first = None
        for model in ("model-a", "model-b"):
            result = run_cli(
                url,
                "eval",
                *server.cli_options(f"openai:{model}", KEY_ENV),
                "--max-retries",
                "0",
                "--shots",
                "0",
                "--json",
            )
            # model-b's run finishes with its failure left to resume: exit status 75
            assert result.exit_code == (75 if model == "model-b" else 0), result.output
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
    rejects = as_json(vetbench(str(db_path), "rejects", "--json"))
    assert flattened(rejects) == REJECTS_JSON


# ------------------------------------------------------------------ reviewing

ECON_CSV = ROOT / "fixtures" / "econ_ordering.csv"
GUIDELINES_MD = ROOT / "fixtures" / "guidelines.md"


@pytest.fixture(scope="module")
def reviewed(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """A review built with the real commands: the EconLogicQA fixture imported, a lead
    (lena) and two annotators, guidelines, judgments that agree, disagree and miss the
    key, an approval, and a gold item judged once.  Returns the database and the
    ``import``, ``judge`` and ``gold list`` outputs that only these steps print."""
    url = str(tmp_path_factory.mktemp("reviewed") / "review.db")
    outputs: dict[str, Any] = {"url": url}
    outputs["import"] = as_json(vetbench(url, "import", str(ECON_CSV), "--json"))
    vetbench(url, "users", "add", "lena", "--role", "lead")
    for annotator in ("ann", "bo"):
        vetbench(url, "users", "add", annotator)
    vetbench(url, "guidelines", "set", str(GUIDELINES_MD), "--as", "lena")

    def judge(annotator: str, item: str, answer: str, verdict: str, *extra: str) -> Any:
        arguments = ("--answer", answer, "--verdict", verdict, "--seconds", "30", *extra)
        return as_json(vetbench(url, "judge", item, "--as", annotator, *arguments, "--json"))

    outputs["judge"] = judge("ann", "econ_ordering:1", "B,A,D,C", "keep")
    judge("bo", "econ_ordering:1", "B,A,D,C", "keep")
    judge("ann", "econ_ordering:2", "C,A,B,D", "keep")
    judge("bo", "econ_ordering:2", "A,C,B,D", "flawed", "--comment", "two orders work")
    judge("ann", "econ_ordering:3", "C,D,B,A", "keep")
    judge("bo", "econ_ordering:3", "C,D,B,A", "ambiguous", "--alt", "D,C,B,A")
    for annotator in ("ann", "bo"):  # both agree on an answer that is not the key
        judge(annotator, "econ_ordering:4", "A,B,C,D", "keep")
    vetbench(url, "decide", "econ_ordering:1", "--status", "approved", "--as", "lena")
    vetbench(
        url,
        "gold",
        "add",
        "econ_ordering:5",
        "--verdict",
        "keep",
        "--answer",
        "C,D,A,B",
        "--as",
        "lena",
    )
    judge("ann", "econ_ordering:5", "C,D,A,B", "keep")
    outputs["gold"] = as_json(vetbench(url, "gold", "list", "--json", "--as", "lena"))
    return outputs


IMPORT_JSON = [
    "[].path: str",
    "[].format: str",
    "[].source: str",
    "[].stored: bool",
    "[].records: int",
    "[].invalid: int",
    "[].added: int",
    "[].updated: int",
    "[].unchanged: int",
    "[].duplicates: int",
    "[].revised: []",
    "[].back_to_review: []",
    "[].error: null",
    "[].problems: []",
    "[].notes: []",
    "[].metadata_updated: []",
]

JUDGE_JSON = [
    "judgment_id: int",
    "item_id: str",
    "revision: int",
    "annotator: str",
    "verdict: str",
    "blind_answer: str",
    "matches_key: bool",
    "item_status: str",
]

FLAG_COUNTS = [
    f"by_flag.{name}: int"
    for name in (
        "duplicate",
        "needs-media",
        "html",
        "key-mismatch",
        "order-leak",
        "same-choices",
        "model-disagrees",
        "second-opinion",
    )
]

STATS_JSON = [
    "items: int",
    "by_kind.ordering: int",
    "by_status.approved: int",
    "by_status.conflict: int",
    "by_status.pending: int",
    "by_source.econ_ordering: int",
    "judgments: int",
    "retracted_judgments: int",
    "suspected_duplicates: int",
    "revisions: int",
    "decisions: int",
    "people: int",
    "people_by_role.annotator: int",
    "people_by_role.lead: int",
    *FLAG_COUNTS,
]

USERS_JSON = [
    "[].name: str",
    "[].role: str",
    "[].created_at: str",
    # issue 25: where each person stands with the qualification gate (off here)
    "[].qualification.status: str",
    "[].qualification.attempt: int",
    "[].qualification.score: null",
    "[].qualification.gold_judged: int",
    "[].qualification.pass_mark: float",
    "[].qualification.attempts: []",
]

AUDIT_JSON = [
    "[].id: int",
    "[].at: str",
    "[].person: str",
    "[].action: str",
    "[].target: str",
    # what a judgment records; every action records its own changes
    "[].changes.judgment_id: int",
    "[].changes.revision: int",
    "[].changes.verdict: str",
    "[].changes.blind_answer: str",
    "[].changes.guidelines_version: int",
    "[].os_login: str",
    "[].host: str",
    "[].db_role: null",
]

GUIDELINES_JSON = [
    "[].version: int",
    "[].author: str",
    "[].file: str",
    "[].sha256: str",
    "[].characters: int",
    "[].created_at: str",
]

GOLD_JSON = [
    "[].item_id: str",
    "[].revision: int",
    "[].current_revision: int",
    "[].verdict: str",
    "[].answer: str",
    "[].note: str",
    "[].marked_by: str",
    "[].marked_at: str",
    "[].removed_at: null",
    "[].removed_by: null",
]

CONFLICT_JUDGMENT = [
    "annotator: str",
    "revision: int",
    "blind_answer: str",
    "verdict: str",
    "alternative_orders: []",  # the first judgment gives none; a later one does
    "corrected_key: null",
    "duplicate_of: null",
    "comment: str",
    "seconds: float",
    "created_at: str",
    "matches_key: bool",
]

CONFLICTS_JSON = [
    "[].id: str",
    "[].kind: str",
    "[].source: str",
    "[].status: str",
    "[].revision: int",
    "[].prompt: str",
    *[f"[].choices.{label}: str" for label in "ABCD"],
    "[].key: str",
    "[].explanation: str",
    "[].disagreements[]: str",
    *under("[].judgments[].", CONFLICT_JUDGMENT),
    "[].earlier_judgments: []",
    "[].earlier_revisions: []",
    "[].decisions: []",
    "[].judgments[].alternative_orders[]: str",
]


def figure(path: str, *, interval: bool = False) -> list[str]:
    """One agreement figure: its value, its bootstrap interval (or null), what it is over."""
    return [
        f"{path}.value: float",
        f"{path}.ci95{'[]: float' if interval else ': null'}",
        f"{path}.n: int",
    ]


def agreement_figures(*, detailed: bool, lead: bool = True) -> list[str]:
    """``figures_json``: the whole report's (``detailed``) or one kind's or source's."""
    lines = [
        "judgments: int",
        "items_judged: int",
        "items_compared: int",
        "annotators: int",
        *figure("krippendorff_alpha.verdict", interval=True),
        *figure("krippendorff_alpha.verdict_keep_drop", interval=True),
        *figure("krippendorff_alpha.answer.ordering", interval=True),
        "krippendorff_alpha.answer.ordering.distance: str",
        *figure("fleiss_kappa.verdict", interval=True),
        "fleiss_kappa.verdict.raters: int",
        *figure("fleiss_kappa.verdict_keep_drop", interval=True),
        "fleiss_kappa.verdict_keep_drop.raters: int",
        *figure("percent_agreement.verdict"),
        *figure("percent_agreement.verdict_keep_drop"),
        *figure("percent_agreement.answer"),
        *figure("exact_order_agreement"),
        *figure("mean_kendall_tau"),
        *figure("kendall_w"),
    ]
    if detailed:
        lines += [
            *[
                f"kendall_w.items[].{key}"
                for key in ("item_id: str", "revision: int", "w: float", "raters: int")
            ],
        ]
    lines += figure("key_agreement")
    if detailed:
        lines += [
            f"key_agreement.items_below_full[].{key}"
            for key in (
                "item_id: str",
                "revision: int",
                "kind: str",
                "key: str",
                "share: float",
                "judgments: int",
            )
        ]
    if detailed and lead:
        lines += [
            f"likely_wrong_keys[].{key}"
            for key in (
                "item_id: str",
                "revision: int",
                "kind: str",
                "source: str",
                "key: str",
                "agreed_answer: str",
                "annotators: int",
                "is_current: bool",
                "decision: str",
            )
        ]
    else:
        lines.append("likely_wrong_keys: int")  # a count for those who may not see answers
    if detailed:
        for coding in ("verdict", "verdict_keep_drop"):
            lines += [
                f"cohen_kappa.{coding}[].annotators[]: str",
                *figure(f"cohen_kappa.{coding}[]", interval=True),
            ]
    return lines


def agreement_json(*, lead: bool) -> list[str]:
    breakdown = agreement_figures(detailed=False)
    return [
        *agreement_figures(detailed=True, lead=lead),
        "per_annotator[].name: str",
        "per_annotator[].judgments: int",
        *figure("per_annotator[].verdict_agreement"),
        *figure("per_annotator[].answer_agreement"),
        *figure("per_annotator[].key_agreement"),
        *figure("per_annotator[].decision_agreement"),
        "per_annotator[].median_seconds: float",
        "per_annotator[].verdicts.keep: int",
        *figure("per_annotator[].keep_rate"),
        "per_annotator[].verdicts.ambiguous: int",  # bo's verdicts come second
        "per_annotator[].verdicts.flawed: int",
        *under("by_kind.ordering.", breakdown),
        *under("by_source.econ_ordering.", breakdown),
        "bootstrap.resamples: int",
        "bootstrap.seed: int",
        "bootstrap.method: str",
        "filters.kind[]: str",
        "gold_accuracy[].name: str",
        "gold_accuracy[].judged: int",
        *figure("gold_accuracy[].accuracy"),
        *figure("gold_accuracy[].answer"),
        *figure("gold_accuracy[].verdict"),
        "notes: []",
    ]


def test_import_json(reviewed: dict[str, Any]) -> None:
    assert flattened(reviewed["import"]) == IMPORT_JSON


def test_judge_json(reviewed: dict[str, Any]) -> None:
    assert flattened(reviewed["judge"]) == JUDGE_JSON


def test_gold_list_json(reviewed: dict[str, Any]) -> None:
    assert flattened(reviewed["gold"]) == GOLD_JSON


@pytest.mark.parametrize(
    ("arguments", "structure"),
    [
        (("stats",), STATS_JSON),
        (("users", "list"), USERS_JSON),
        (("audit", "--item", "econ_ordering:2", "--as", "lena"), AUDIT_JSON),
        (("audit", "--item", "econ_ordering:2"), [*AUDIT_JSON[:7], *AUDIT_JSON[9:]]),
        (("guidelines", "list"), GUIDELINES_JSON),
        (("conflicts", "--as", "lena"), CONFLICTS_JSON),
        (("agreement", "--kind", "ordering", "--as", "lena"), agreement_json(lead=True)),
        (("agreement", "--kind", "ordering", "--as", "ann"), agreement_json(lead=False)),
    ],
    ids=[
        "stats",
        "users-list",
        "audit",
        "audit-withheld",  # another's verdict and blind answer: for leads
        "guidelines-list",
        "conflicts",
        "agreement-lead",
        "agreement",
    ],
)
def test_review_json(
    reviewed: dict[str, Any], arguments: tuple[str, ...], structure: list[str]
) -> None:
    output = as_json(vetbench(reviewed["url"], *arguments, "--json"))
    assert flattened(output) == structure

"""One specification per item kind: what it holds, and that prompts, stopping, extraction,
scoring and the lm-eval export all follow it (no kind is special-cased elsewhere)."""

from __future__ import annotations

from math import comb, factorial

import pytest

from db.vocabulary import ItemKind
from evaluator.kinds import MAX_SCORE_CANDIDATES, Metric, kind_spec
from evaluator.metrics import score_answer
from evaluator.prompts import load_templates
from evaluator.results import Score
from evaluator.stopping import cut_at_stop


def test_every_kind_has_a_specification() -> None:
    for kind in ItemKind:
        spec = kind_spec(kind)
        assert spec.kind is kind and kind_spec(kind.value) is spec
        assert spec.metrics[0] is Metric.EXACT_MATCH
    with pytest.raises(ValueError):
        kind_spec("essay")


@pytest.mark.parametrize(
    ("kind", "metrics"),
    [
        ("ordering", (Metric.EXACT_MATCH, Metric.PAIRWISE_ACCURACY)),
        ("single", (Metric.EXACT_MATCH, Metric.WEIGHTED_F1)),
        ("multi", (Metric.EXACT_MATCH, Metric.WEIGHTED_F1, Metric.SET_F1)),
        ("truefalse", (Metric.EXACT_MATCH, Metric.WEIGHTED_F1)),
    ],
)
def test_each_kind_names_the_metrics_that_apply(kind: str, metrics: tuple[Metric, ...]) -> None:
    assert kind_spec(kind).metrics == metrics


def test_per_item_scores_follow_the_metrics_of_the_kind() -> None:
    assert score_answer("ordering", "DABC", "DACB") == Score(False, pairwise=5 / 6)
    assert score_answer("multi", "AB", "ABD").set_f1 == pytest.approx(0.8)
    assert score_answer("single", "B", "B") == Score(True)
    for kind in ItemKind:
        score = score_answer(kind, None, "AB")
        measured = kind_spec(kind).measures
        assert (score.pairwise is not None) == measured(Metric.PAIRWISE_ACCURACY)
        assert (score.set_f1 is not None) == measured(Metric.SET_F1)


@pytest.mark.parametrize(
    ("kind", "output", "labels", "answer"),
    [
        ("ordering", "The order is D, A, C, B.", "ABCD", "DACB"),
        ("single", "答案：B", "ABCD", "B"),
        ("multi", "答案：DBA", "ABCD", "ABD"),
        ("truefalse", "错", "AB", "B"),  # only true/false reads 对/错
        ("single", "错", "AB", None),
    ],
)
def test_extraction_is_the_kinds_own_step(
    kind: str, output: str, labels: str, answer: str | None
) -> None:
    assert kind_spec(kind).extract(output, labels) == answer


def test_the_instructions_and_option_templates_exist() -> None:
    texts = load_templates().texts
    for kind in ItemKind:
        spec = kind_spec(kind)
        assert spec.option_template in texts
        for language in ("en", "zh"):
            assert spec.instructions_template(language) in texts


@pytest.mark.parametrize(
    ("kind", "labels", "count"),
    [
        ("ordering", "ABCD", factorial(4)),
        ("multi", "ABCD", sum(comb(4, size) for size in range(1, 5))),
        ("single", "ABCD", 4),
        ("truefalse", "AB", 2),
    ],
)
def test_score_mode_candidates(kind: str, labels: str, count: int) -> None:
    spec = kind_spec(kind)
    candidates = spec.score_candidates(labels)
    assert candidates is not None and len(candidates) == len(set(candidates)) == count
    assert spec.candidate_count(len(labels)) == count


def test_too_many_candidates_leave_an_item_out_of_score_mode() -> None:
    assert factorial(6) > MAX_SCORE_CANDIDATES >= factorial(5)
    assert kind_spec("ordering").score_candidates("ABCDEF") is None
    assert kind_spec("multi").score_candidates("ABCDEFGH") is None  # 255 letter sets


@pytest.mark.parametrize(
    ("text", "stops", "expected"),
    [
        (" D, A, C, B\n\nQuestion: next", ("\n\n", "\nQuestion:"), " D, A, C, B"),
        (" B\nQuestion: next", ("\n\n", "\nQuestion:"), " B"),
        ("\n\n D, A", ("\n\n",), None),  # a leading blank line is not a stop
        ("\n\nD, A\n\nmore", ("\n\n",), "\n\nD, A"),
        (" D, A", ("\n\n",), None),
        ("", ("\n\n",), None),
    ],
)
def test_one_stop_string_cutter(text: str, stops: tuple[str, ...], expected: str | None) -> None:
    assert cut_at_stop(text, stops) == expected

"""Metrics against scikit-learn and statsmodels, and cases computed by hand."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import norm
from sklearn.metrics import accuracy_score, f1_score
from statsmodels.stats.proportion import proportion_confint

from db.vocabulary import FailureKind, ItemKind
from evaluator.metrics import (
    CONFIDENCE_LEVEL,
    NORMAL_QUANTILE_95,
    UNPARSED_LABEL,
    ScoredPrediction,
    score_answer,
    set_f1,
    summarize_predictions,
    wilson_interval,
)
from evaluator.results import Score


def row(
    item_id: str,
    kind: str,
    key: str,
    parsed: str | None,
    *,
    source: str = "src",
    infrastructure: bool = False,
) -> ScoredPrediction:
    item_kind = ItemKind(kind)
    if infrastructure:
        return ScoredPrediction(
            item_id, item_kind, source, key, None, None, FailureKind.INFRASTRUCTURE
        )
    failure = FailureKind.UNPARSED if parsed is None else None
    score = score_answer(kind, parsed, key)
    return ScoredPrediction(item_id, item_kind, source, key, parsed, score.correct, failure, score)


def test_score_answer_ordering_by_hand() -> None:
    assert score_answer("ordering", "DACB", "DACB") == Score(correct=True, pairwise=1.0)
    # DABC against DACB: of 6 pairs only (C, B) is reversed
    assert score_answer("ordering", "DABC", "DACB") == Score(correct=False, pairwise=5 / 6)
    # the reverse order gets every pair wrong
    assert score_answer("ordering", "BCAD", "DACB").pairwise == 0.0
    assert score_answer("ordering", None, "DACB") == Score(correct=False, pairwise=0.0)


def test_score_answer_choice_kinds_by_hand() -> None:
    assert score_answer("single", "B", "B") == Score(correct=True)
    assert score_answer("single", "AB", "B") == Score(correct=False)
    assert score_answer("truefalse", None, "A") == Score(correct=False)
    # predicted {A, B}, key {A, B, D}: precision 1, recall 2/3, F1 = 0.8
    assert score_answer("multi", "AB", "ABD") == Score(correct=False, set_f1=pytest.approx(0.8))
    assert score_answer("multi", "ABD", "ABD").set_f1 == 1.0
    assert score_answer("multi", "C", "ABD").set_f1 == 0.0
    assert score_answer("multi", None, "ABD") == Score(correct=False, set_f1=0.0)


def test_set_f1_agrees_with_sklearn_on_letter_indicators() -> None:
    for predicted, key in [("AB", "ABD"), ("ACE", "BCE"), ("A", "A"), ("BD", "AC")]:
        letters = sorted(set(predicted) | set(key))
        expected = f1_score(
            [letter in key for letter in letters],
            [letter in predicted for letter in letters],
            zero_division=0,
        )
        assert set_f1(predicted, key) == pytest.approx(expected)


def test_wilson_interval_equals_statsmodels_to_the_last_bit() -> None:
    assert norm.isf((1 - CONFIDENCE_LEVEL) / 2) == NORMAL_QUANTILE_95
    # Every count of every n up to 400, and of sets the size of CFLUE's (3,864) and larger.
    for n in [*range(1, 401), 1000, 3864, 10_000]:
        counts = np.arange(n + 1)
        lows, highs = proportion_confint(counts, n, alpha=1 - CONFIDENCE_LEVEL, method="wilson")
        expected = list(zip(lows.tolist(), highs.tolist(), strict=True))
        assert [wilson_interval(int(count), n) for count in counts] == expected, n


def test_wilson_interval_by_hand() -> None:
    # 8 of 10: centre (0.8 + z^2/20) / (1 + z^2/10), half-width z*sqrt(0.016 + z^2/400)/(1 + z^2/10)
    z = 1.959963984540054
    denominator = 1 + z**2 / 10
    centre = (0.8 + z**2 / 20) / denominator
    half = z * ((0.8 * 0.2 / 10 + z**2 / 400) ** 0.5) / denominator
    assert wilson_interval(8, 10) == pytest.approx((centre - half, centre + half))
    assert wilson_interval(0, 0) == (0.0, 1.0)
    with pytest.raises(ValueError):
        wilson_interval(3, 2)


def test_summary_matches_sklearn_and_counts_failures_apart() -> None:
    rows = [
        row("o1", "ordering", "DACB", "DACB", source="econ"),
        row("o2", "ordering", "DACB", "DABC", source="econ"),
        row("o3", "ordering", "ABCD", None, source="econ"),
        row("o4", "ordering", "ABCD", None, source="econ", infrastructure=True),
        row("s1", "single", "B", "B", source="cflue"),
        row("s2", "single", "C", "AC", source="cflue"),
        row("s3", "single", "A", None, source="cflue"),
        row("m1", "multi", "ABD", "AB", source="cflue"),
        row("m2", "multi", "AC", "AC", source="cflue"),
        row("t1", "truefalse", "A", "B", source="cflue"),
    ]
    summary = summarize_predictions(rows)
    scored = [r for r in rows if r.failure_kind != FailureKind.INFRASTRUCTURE]

    assert summary.n == 10
    assert summary.infrastructure_failures == 1
    assert summary.scored == 9
    assert summary.correct == 3
    assert summary.accuracy == pytest.approx(
        accuracy_score([r.key for r in scored], [r.parsed_answer or UNPARSED_LABEL for r in scored])
    )
    assert summary.accuracy_ci == pytest.approx(wilson_interval(3, 9))
    assert summary.unparsed == 2
    assert summary.unparsed_rate == pytest.approx(2 / 9)
    # pairwise over scored ordering rows: 1, 5/6, 0 (unparsed)
    assert summary.pairwise_accuracy == pytest.approx((1 + 5 / 6 + 0) / 3)
    mcq = [r for r in scored if r.kind != "ordering"]
    assert summary.weighted_f1 == pytest.approx(
        f1_score(
            [r.key for r in mcq],
            [r.parsed_answer or UNPARSED_LABEL for r in mcq],
            average="weighted",
            zero_division=0,
        )
    )
    assert summary.set_f1 == pytest.approx((0.8 + 1.0) / 2)

    assert set(summary.by_kind) == {"ordering", "single", "multi", "truefalse"}
    ordering = summary.by_kind["ordering"]
    assert (ordering.n, ordering.scored, ordering.correct) == (4, 3, 1)
    assert ordering.weighted_f1 is None and ordering.set_f1 is None
    assert summary.by_kind["single"].accuracy == pytest.approx(1 / 3)
    assert summary.by_kind["truefalse"].accuracy_ci == pytest.approx(wilson_interval(0, 1))
    assert set(summary.by_source) == {"econ", "cflue"}
    assert summary.by_source["cflue"].accuracy == pytest.approx(2 / 6)
    assert summary.by_source["econ"].infrastructure_failures == 1


def test_weighted_f1_by_hand() -> None:
    # keys B, B, A; predictions B, unparsed, A:
    # class A: P=1 R=1 F1=1 (support 1); class B: P=1 R=1/2 F1=2/3 (support 2)
    rows = [
        row("1", "single", "B", "B"),
        row("2", "single", "B", None),
        row("3", "single", "A", "A"),
    ]
    assert summarize_predictions(rows).weighted_f1 == pytest.approx((1 * 1 + 2 * (2 / 3)) / 3)


def test_stored_scores_are_used_and_missing_ones_recomputed() -> None:
    ordering = ItemKind.ORDERING
    stored = ScoredPrediction("1", ordering, "s", "DACB", "DABC", False, None, Score(False, 0.5))
    bare = ScoredPrediction("2", ordering, "s", "DACB", "DABC", False, None, None)
    assert summarize_predictions([stored]).pairwise_accuracy == 0.5
    assert summarize_predictions([bare]).pairwise_accuracy == pytest.approx(5 / 6)


def test_empty_and_failure_only_sets_have_no_made_up_figures() -> None:
    empty = summarize_predictions([])
    assert empty.n == 0 and empty.accuracy is None and empty.accuracy_ci is None
    assert empty.by_kind == {} and empty.by_source == {}
    failed = summarize_predictions([row("x", "single", "A", None, infrastructure=True)])
    assert failed.n == 1 and failed.scored == 0
    assert failed.accuracy is None and failed.unparsed_rate is None


def test_a_changed_figure_never_reads_unchanged() -> None:
    """``runs rescore`` prints a changed figure in percent with two decimals: one prediction
    of 3864 read differently shows (99.97% -> 100.00%), as it did in four-decimal fractions;
    an interval as every interval prints, a count as it is."""
    from evaluator.run_text import figure_change

    assert figure_change(3863 / 3864, 1.0) == "99.97% -> 100.00%"
    assert figure_change(0.75, 0.75 + 1 / 3864) == "75.00% -> 75.03%"
    assert figure_change([0.4869, 0.9743], [0.6457, 1.0]) == "[48.69, 97.43] -> [64.57, 100.00]"
    assert figure_change(1, 0) == "1 -> 0" and figure_change(None, 0.5) == "— -> 50.00%"


def test_a_figure_short_of_perfect_is_never_printed_perfect() -> None:
    """3863 of 3864 right is 0.99974: rounded it read 1.000 (and 100.00 in a paper table),
    the figure an oracle self-test looks for. Figures are rounded toward the inside at the
    bounds; float error in a perfect figure (BLEU's 1.0000000000000004) stays perfect."""
    from dataclasses import replace

    from evaluator.result_table import ResultTable, Spread, TableColumn, TableRow
    from evaluator.run_text import number
    from evaluator.table_render import render_table

    assert number(3863 / 3864) == "0.999" and number(3863 / 3864, percent=True) == "99.9%"
    assert number(1 / 3864) == "0.001" and number(0.0004, percent=True) == "0.1%"
    # float error, and the rouge package's F-score of a perfect match (2 / (2 + 1e-8))
    for perfect in (1.0, 1.0000000000000004, 0.9999999999999996, 0.9999999950000449):
        assert number(perfect) == "1.000" and number(perfect, percent=True) == "100.0%"
    assert (number(0.0), number(0.5), number(0.12345)) == ("0.000", "0.500", "0.123")
    table = ResultTable(
        "cflue",
        "t",
        "model",
        (TableColumn("accuracy", "Acc"), TableColumn("bleu_1", "BLEU-1")),
        (TableRow("m", (Spread(0.99999, None, 1), Spread(1.0000000000000004, None, 1)), (1,)),),
    )
    spread = replace(table, rows=(TableRow("m", (Spread(0.5, 0.00004, 3), None), (1,)),))
    assert "50.00±0.01" in render_table(spread, "text")  # runs that differ: not ±0.00
    for table_format in ("text", "md", "latex"):
        shown = render_table(table, table_format)
        assert "99.99" in shown and "100.00" in shown and shown.count("100.00") == 1
    assert render_table(table, "csv").splitlines()[1] == "m,99.9990,,100.0000,"


def test_a_runs_speed_reads_alike_in_the_cli_and_the_app() -> None:
    """F4 said ``ETA —`` (and ``ETA 1 min 40 s``) where ``runs show`` says ``about 1 min
    40 s left``: one wording for both, the time left only while there is some."""
    from evaluator.results import RunProgress
    from evaluator.run_text import speed

    running = RunProgress(done=10, total=60, items_per_second=0.5, eta_s=100.0)
    assert speed(running) == "0.50 items/s, about 1 min 40 s left"
    finished = RunProgress(done=60, total=60, items_per_second=0.5)
    assert speed(finished) == "0.50 items/s"
    assert speed(RunProgress(done=0, total=60)) == "— items/s"

"""Agreement statistics, checked against independent reference implementations.

Judgments are stored in a real SQLite database and the product computes from
what it loads; the references (krippendorff, statsmodels, scikit-learn, SciPy,
nltk, and hand-written loops for Kendall's W and raw agreement) compute from the
test's own record of what was stored.
"""

from __future__ import annotations

import math
import random
import re
import warnings
from collections import Counter
from itertools import combinations
from statistics import mean

import krippendorff
import numpy as np
import pytest
from conftest import BuiltDatabases
from helpers import (
    FIXTURES,
    StudyItem,
    random_study,
    run_cli,
    store_decision,
    store_item,
    store_judgment,
    store_person,
)
from nltk.metrics.agreement import AnnotationTask
from nltk.metrics.distance import masi_distance
from scipy.stats import kendalltau
from sklearn.metrics import cohen_kappa_score
from statsmodels.stats.inter_rater import aggregate_raters, fleiss_kappa

from db.importer import import_files
from db.item_scope import ItemScope
from db.items import iter_items
from db.settings import set_setting
from db.vocabulary import Role, Verdict
from evaluator.exports.item_files import export_items
from reviewer.adjudication import approve_agreed, decide
from reviewer.agreement import BootstrapSettings, compute_agreement, load_judgments
from reviewer.agreement.bootstrap import resample_weights
from reviewer.agreement.coefficients import (
    alpha_statistic,
    cohen_statistic,
    fleiss_statistic,
    masi_distance_matrix,
    unit_patterns,
)
from reviewer.agreement.orders import pair_tau, rank_matrix
from reviewer.conflict_cases import conflict_queue
from reviewer.judging import submit_judgment

SEEDS = [1, 2, 3]
VERDICT_CODES = {verdict.value: code for code, verdict in enumerate(Verdict)}


# --- references computed from the test's own record -------------------------------------


def annotators_of(study: list[StudyItem]) -> list[str]:
    return sorted({name for item in study for name in item.judgments})


def reliability(study: list[StudyItem], value) -> np.ndarray:  # type: ignore[no-untyped-def]
    """annotators x items matrix for the krippendorff package (nan = missing)."""
    names = annotators_of(study)
    table = np.full((len(names), len(study)), np.nan)
    for column, item in enumerate(study):
        for row, name in enumerate(names):
            if name in item.judgments:
                table[row, column] = value(item, *item.judgments[name])
    return table


def verdict_value(_item: StudyItem, _answer: str, verdict: str) -> float:
    return VERDICT_CODES[verdict]


def keep_drop_value(_item: StudyItem, _answer: str, verdict: str) -> float:
    return float(verdict != "keep")


def reference_alpha(study: list[StudyItem], value) -> float:  # type: ignore[no-untyped-def]
    return krippendorff.alpha(
        reliability_data=reliability(study, value), level_of_measurement="nominal"
    )


def reference_fleiss(study: list[StudyItem], value) -> tuple[float, int]:  # type: ignore[no-untyped-def]
    counts = Counter(len(item.judgments) for item in study if len(item.judgments) >= 2)
    top = max(counts.values())
    raters = max(size for size, count in counts.items() if count == top)
    rows = [
        [value(item, *item.judgments[name]) for name in sorted(item.judgments)]
        for item in study
        if len(item.judgments) == raters
    ]
    table, _ = aggregate_raters(np.array(rows))
    return fleiss_kappa(table, method="fleiss"), raters


def reference_percent(study: list[StudyItem], value) -> float:  # type: ignore[no-untyped-def]
    shares = []
    for item in study:
        values = [value(item, *judgment) for judgment in item.judgments.values()]
        pairs = list(combinations(values, 2))
        if pairs:
            shares.append(sum(a == b for a, b in pairs) / len(pairs))
    return mean(shares)


def reference_cohen(study: list[StudyItem], value) -> dict[tuple[str, str], float]:  # type: ignore[no-untyped-def]
    result = {}
    for first, second in combinations(annotators_of(study), 2):
        shared = [item for item in study if first in item.judgments and second in item.judgments]
        if not shared:
            continue
        x = [value(item, *item.judgments[first]) for item in shared]
        y = [value(item, *item.judgments[second]) for item in shared]
        result[(first, second)] = cohen_kappa_score(x, y)
    return result


def ranks_of(order: str) -> list[int]:
    return [order.index(letter) for letter in sorted(order)]


def kendall_w_by_hand(orders: list[str]) -> float:
    m, n = len(orders), len(orders[0])
    sums = [sum(order.index(letter) + 1 for order in orders) for letter in sorted(orders[0])]
    mean_sum = m * (n + 1) / 2
    spread = sum((total - mean_sum) ** 2 for total in sums)
    return 12 * spread / (m**2 * (n**3 - n))


def within_kind(study: list[StudyItem], kind: str) -> list[StudyItem]:
    return [item for item in study if item.kind == kind]


# --- the product against the references on random data -----------------------------------


@pytest.fixture(params=SEEDS)
def study(  # type: ignore[no-untyped-def]
    request: pytest.FixtureRequest, database, built_databases: BuiltDatabases
) -> list[StudyItem]:
    """The seed's random study, built once per test process and backend, then copied."""
    return built_databases.fill(database, random_study, request.param)


@pytest.fixture
def report(database, study):  # type: ignore[no-untyped-def]
    return compute_agreement(database, resamples=200, seed=5)


def test_verdict_alpha_fleiss_percent_match_references(study, report) -> None:  # type: ignore[no-untyped-def]
    figures = report.figures
    assert figures.items_compared == sum(len(item.judgments) >= 2 for item in study)
    assert figures.judgments == sum(len(item.judgments) for item in study)
    for value, coding in ((verdict_value, figures.verdict), (keep_drop_value, figures.keep_drop)):
        assert coding.alpha.value == pytest.approx(reference_alpha(study, value), abs=1e-9)
        expected_fleiss, raters = reference_fleiss(study, value)
        assert coding.fleiss_raters == raters
        assert coding.fleiss.value == pytest.approx(expected_fleiss, abs=1e-9)
        assert coding.percent.value == pytest.approx(reference_percent(study, value), abs=1e-12)


def test_cohen_kappa_per_pair_matches_scikit_learn(study, report) -> None:  # type: ignore[no-untyped-def]
    for value, pairs in (
        (verdict_value, report.cohen_verdict),
        (keep_drop_value, report.cohen_keep_drop),
    ):
        expected = reference_cohen(study, value)
        got = {(pair.first, pair.second): pair.kappa for pair in pairs}
        assert set(got) == set(expected)
        for pair, figure in got.items():
            if math.isnan(expected[pair]):
                assert figure.value is None and figure.reason
            else:
                assert figure.value == pytest.approx(expected[pair], abs=1e-9)


def test_order_statistics_match_scipy_and_hand_computation(study, report) -> None:  # type: ignore[no-untyped-def]
    orders = report.figures.orders
    exact, taus, ws = [], [], {}
    for item in within_kind(study, "ordering"):
        answers = [answer for answer, _ in item.judgments.values()]
        if len(answers) < 2:
            continue
        pairs = list(combinations(answers, 2))
        exact.append(mean(a == b for a, b in pairs))
        taus.append(mean(kendalltau(ranks_of(a), ranks_of(b)).statistic for a, b in pairs))
        ws[item.item_id] = kendall_w_by_hand(answers)
    assert orders.exact.value == pytest.approx(mean(exact), abs=1e-12)
    assert orders.mean_tau.value == pytest.approx(mean(taus), abs=1e-12)
    assert orders.mean_w.value == pytest.approx(mean(ws.values()), abs=1e-12)
    assert {item.item_id: item.w for item in orders.items} == pytest.approx(ws, abs=1e-12)


def test_answer_alpha_matches_krippendorff_and_nltk_masi(study, report) -> None:  # type: ignore[no-untyped-def]
    alphas = report.figures.answer_alpha
    for kind in ("ordering", "single", "truefalse"):
        items = within_kind(study, kind)
        values = sorted({answer for item in items for answer, _ in item.judgments.values()})
        expected = reference_alpha(
            items, lambda _i, answer, _v, values=values: values.index(answer)
        )
        assert alphas[kind].distance == "nominal"
        assert alphas[kind].alpha.value == pytest.approx(expected, abs=1e-9)
    task = AnnotationTask(
        data=[
            (name, item.item_id, frozenset(answer))
            for item in within_kind(study, "multi")
            for name, (answer, _) in item.judgments.items()
        ],
        distance=masi_distance,
    )
    assert alphas["multi"].distance == "masi"
    assert alphas["multi"].alpha.value == pytest.approx(task.alpha(), abs=1e-9)


def test_key_agreement_and_likely_wrong_keys(study, report) -> None:  # type: ignore[no-untyped-def]
    answers = [(item, answer) for item in study for answer, _ in item.judgments.values()]
    key = report.figures.key
    assert key.overall.value == pytest.approx(mean(a == i.key for i, a in answers))
    assert key.overall.n == len(answers)
    below = {
        item.item_id: mean(a == item.key for a, _ in item.judgments.values())
        for item in study
        if any(a != item.key for a, _ in item.judgments.values())
    }
    assert {entry.item_id: entry.share for entry in key.items_below_full} == pytest.approx(below)
    wrong = {
        item.item_id
        for item in study
        if len(item.judgments) >= 2
        and len({a for a, _ in item.judgments.values()}) == 1
        and next(iter(item.judgments.values()))[0] != item.key
    }
    assert {entry.item_id for entry in key.likely_wrong_keys} == wrong


def test_per_annotator_figures(study, report) -> None:  # type: ignore[no-untyped-def]
    by_name = {stats.name: stats for stats in report.per_annotator}
    assert set(by_name) == set(annotators_of(study))
    for name, stats in by_name.items():
        mine = [(item, item.judgments[name]) for item in study if name in item.judgments]
        assert stats.judgments == len(mine)
        assert stats.key_agreement.value == pytest.approx(mean(a == i.key for i, (a, _) in mine))
        assert stats.verdicts == dict(Counter(v for _, (_, v) in mine))
        verdict_pairs = [
            (verdict == other[1], answer == other[0])
            for item, (answer, verdict) in mine
            for who, other in item.judgments.items()
            if who != name
        ]
        assert stats.verdict_agreement.value == pytest.approx(mean(v for v, _ in verdict_pairs))
        assert stats.answer_agreement.value == pytest.approx(mean(a for _, a in verdict_pairs))
        assert stats.median_seconds is not None and stats.median_seconds > 0


def test_breakdowns_equal_filtered_runs(database, study, report) -> None:  # type: ignore[no-untyped-def]
    for kind, figures in report.by_kind.items():
        alone = compute_agreement(database, ItemScope(kinds=(kind,)), resamples=200, seed=5).figures
        assert figures.verdict.alpha == alone.verdict.alpha
        assert figures.items_compared == alone.items_compared
        assert figures.key.overall == alone.key.overall
    for source, figures in report.by_source.items():
        items = [item for item in study if item.source == source]
        assert figures.verdict.alpha.value == pytest.approx(reference_alpha(items, verdict_value))


def test_intervals_are_seeded_and_contain_the_estimate(database, study, report) -> None:  # type: ignore[no-untyped-def]
    again = compute_agreement(database, resamples=200, seed=5)
    other_seed = compute_agreement(database, resamples=200, seed=6)
    alpha = report.figures.verdict.alpha
    assert alpha.ci95 is not None
    assert alpha.ci95 == again.figures.verdict.alpha.ci95
    assert alpha.ci95 != other_seed.figures.verdict.alpha.ci95
    low, high = alpha.ci95
    assert low <= alpha.value <= high
    none = compute_agreement(database, resamples=0)
    assert none.figures.verdict.alpha.ci95 is None
    assert none.figures.verdict.alpha.value == alpha.value


def test_json_has_the_documented_fields(report) -> None:  # type: ignore[no-untyped-def]
    data = report.to_json()
    for field in (
        "items_compared",
        "krippendorff_alpha",
        "fleiss_kappa",
        "cohen_kappa",
        "percent_agreement",
        "exact_order_agreement",
        "mean_kendall_tau",
        "kendall_w",
        "key_agreement",
        "likely_wrong_keys",
        "per_annotator",
        "by_kind",
        "by_source",
    ):
        assert field in data
    assert set(data["krippendorff_alpha"]) == {"verdict", "verdict_keep_drop", "answer"}
    assert set(data["krippendorff_alpha"]["verdict"]) >= {"value", "ci95", "n"}
    assert data["cohen_kappa"]["verdict"][0]["annotators"]


# --- the vectorised pieces against their references -------------------------------------


@pytest.mark.parametrize("seed", SEEDS)
def test_weighted_coefficients_equal_references_on_replicated_units(seed: int) -> None:
    """A bootstrap resample is pattern weights; the weighted coefficient must equal the
    reference computed on the units repeated that many times."""
    rng = np.random.default_rng(seed)
    units, raters, values = 30, 3, 4
    data = rng.integers(0, values, size=(units, raters))
    data[rng.random((units, raters)) < 0.2] = -1  # missing
    row_unit, row_code = np.nonzero(data >= 0)[0], data[data >= 0]
    patterns = unit_patterns(row_unit, row_code, units, values)
    weights = next(resample_weights(patterns.counts, BootstrapSettings(1, seed), "t"))
    replicated = np.repeat(patterns.codes, weights[0].astype(int), axis=0)
    table = np.where(replicated >= 0, replicated, np.nan).T
    expected = krippendorff.alpha(reliability_data=table, level_of_measurement="nominal")
    assert alpha_statistic(patterns)(weights)[0] == pytest.approx(expected, abs=1e-9)

    full = unit_patterns(row_unit, row_code, units, values, exact_size=raters)
    weights = next(resample_weights(full.counts, BootstrapSettings(1, seed), "f"))
    replicated = np.repeat(full.codes, weights[0].astype(int), axis=0)
    expected = fleiss_kappa(aggregate_raters(replicated, n_cat=values)[0], method="fleiss")
    assert fleiss_statistic(full, raters)(weights)[0] == pytest.approx(expected, abs=1e-9)

    x, y = rng.integers(0, values, 50), rng.integers(0, values, 50)
    cells, counts = np.unique(x * values + y, return_counts=True)
    weights = next(resample_weights(counts, BootstrapSettings(1, seed), "c"))
    first, second = np.divmod(np.repeat(cells, weights[0].astype(int)), values)
    expected = cohen_kappa_score(first, second)
    assert cohen_statistic(cells, values)(weights)[0] == pytest.approx(expected, abs=1e-9)


@pytest.mark.parametrize("seed", SEEDS)
def test_masi_alpha_matches_nltk(seed: int) -> None:
    rng = np.random.default_rng(seed)
    sets = ["A", "B", "AB", "AC", "ABC", "BD", "ABCD", "D"]
    triples = []
    for unit in range(25):
        for coder in range(3):
            if rng.random() < 0.85:
                triples.append((f"c{coder}", f"u{unit}", sets[int(rng.integers(len(sets)))]))
    task = AnnotationTask(
        data=[(c, u, frozenset(v)) for c, u, v in triples], distance=masi_distance
    )
    units = sorted({u for _, u, _ in triples})
    triples.sort(key=lambda t: units.index(t[1]))
    row_unit = np.array([units.index(u) for _, u, _ in triples])
    row_code = np.array([sets.index(v) for _, _, v in triples])
    patterns = unit_patterns(row_unit, row_code, len(units), len(sets))
    statistic = alpha_statistic(patterns, masi_distance_matrix(sets))
    assert statistic(patterns.counts[None, :].astype(float))[0] == pytest.approx(task.alpha())
    matrix = masi_distance_matrix(sets)
    for i, a in enumerate(sets):
        for j, b in enumerate(sets):
            assert matrix[i, j] == pytest.approx(masi_distance(set(a), set(b)))


@pytest.mark.parametrize("seed", SEEDS)
def test_vectorised_tau_matches_scipy(seed: int) -> None:
    rng = np.random.default_rng(seed)
    firsts, seconds, lengths, expected = [], [], [], []
    for _ in range(200):
        n = int(rng.integers(2, 9))
        a = "".join(rng.permutation(list("ABCDEFGH"[:n])))
        b = "".join(rng.permutation(list("ABCDEFGH"[:n])))
        firsts.append(a)
        seconds.append(b)
        lengths.append(n)
        expected.append(kendalltau(ranks_of(a), ranks_of(b)).statistic)
    first_ranks, first_valid = rank_matrix(np.array(firsts))
    second_ranks, second_valid = rank_matrix(np.array(seconds))
    assert first_valid.all() and second_valid.all()
    tau = pair_tau(first_ranks, second_ranks, np.array(lengths))
    assert tau == pytest.approx(expected, abs=1e-12)


def test_rank_matrix_rejects_invalid_orders() -> None:
    _, valid = rank_matrix(np.array(["ABCD", "ABCC", "ABCE", "A", "DCBA"]))
    assert valid.tolist() == [True, False, False, False, True]


# --- edge cases ------------------------------------------------------------------------


def store_unanimous(
    database, answers_by_item: dict[str, tuple[str, str, list[tuple[str, str]]]]
) -> None:  # type: ignore[no-untyped-def]
    for item_id, (kind, key, judgments) in answers_by_item.items():
        store_item(database, item_id, kind=kind, key=key)
        for number, (answer, verdict) in enumerate(judgments):
            store_judgment(database, item_id, f"a{number}", answer, verdict)


def test_no_judgments_at_all(database) -> None:
    report = compute_agreement(database)
    figures = report.figures
    assert figures.items_compared == 0
    for figure in (
        figures.verdict.alpha,
        figures.verdict.fleiss,
        figures.verdict.percent,
        figures.orders.exact,
        figures.orders.mean_tau,
        figures.key.overall,
    ):
        assert figure.value is None and figure.reason
    assert report.per_annotator == [] and figures.verdict.cohen == []
    assert report.to_json()["krippendorff_alpha"]["verdict"]["value"] is None


def test_single_annotator_leaves_coefficients_undefined(database) -> None:
    store_item(database, "o:1", key="ABCD")
    store_item(database, "o:2", key="DCBA")
    store_judgment(database, "o:1", "solo", "ABCD", "keep")
    store_judgment(database, "o:2", "solo", "ABCD", "wrong-key")
    figures = compute_agreement(database).figures
    assert figures.items_judged == 2 and figures.items_compared == 0
    assert figures.verdict.alpha.value is None
    assert "two annotators" in figures.verdict.alpha.reason
    assert figures.verdict.fleiss.value is None and figures.verdict.cohen == []
    assert figures.orders.mean_w.value is None
    assert figures.key.overall.value == 0.5  # defined: it needs no second annotator


def test_everyone_agrees_on_different_categories(database) -> None:
    store_unanimous(
        database,
        {
            "o:1": ("ordering", "ABCD", [("ABCD", "keep")] * 3),
            "o:2": ("ordering", "ABCD", [("BACD", "wrong-key")] * 3),
            "o:3": ("ordering", "DCBA", [("DCBA", "flawed")] * 3),
        },
    )
    figures = compute_agreement(database, resamples=100).figures
    assert figures.verdict.alpha.value == pytest.approx(1.0)
    assert figures.verdict.fleiss.value == pytest.approx(1.0)
    assert figures.verdict.percent.value == 1.0
    assert all(pair.kappa.value == pytest.approx(1.0) for pair in figures.verdict.cohen)
    assert figures.orders.exact.value == 1.0 and figures.orders.mean_tau.value == 1.0
    assert figures.orders.mean_w.value == pytest.approx(1.0)
    assert [w.item_id for w in figures.key.likely_wrong_keys] == ["o:2"]


def test_one_category_only_is_undefined_with_a_reason(database) -> None:
    store_unanimous(
        database, {f"s:{n}": ("single", "A", [("A", "keep"), ("A", "keep")]) for n in range(4)}
    )
    figures = compute_agreement(database).figures
    for figure in (
        figures.verdict.alpha,
        figures.verdict.fleiss,
        figures.answer_alpha["single"].alpha,
    ):
        assert figure.value is None
        assert "same" in figure.reason
    assert figures.verdict.percent.value == 1.0
    assert figures.verdict.cohen[0].kappa.value is None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # scikit-learn warns that kappa is undefined
        assert math.isnan(cohen_kappa_score(["keep"] * 4, ["keep"] * 4))


def test_an_undefined_breakdown_figure_refers_to_its_reason_listed_once_under_the_table(
    database,
) -> None:  # type: ignore[no-untyped-def]
    """The breakdown by kind and by source, as the CLI, the report and F2 show it
    (reviewer/agreement/rows.py): a reason in the cell made its column as wide as the
    sentence, and F2's columns after it ran off the screen even at 150 columns."""
    from reviewer.agreement.rows import breakdown_cells, footnoted, numbered_notes
    from reviewer.report import build_report

    kept = [("A", "keep"), ("A", "keep")]
    store_unanimous(database, {f"s:{n}": ("single", "A", kept) for n in range(3)})
    orders = [("ABCD", "keep"), ("ABCD", "flawed")]
    store_unanimous(database, {f"o:{n}": ("ordering", "ABCD", orders) for n in range(3)})
    report = compute_agreement(database, resamples=0)
    assert list(report.by_kind) == ["ordering", "single"]  # as the tables list them
    reasons: list[str] = []
    ordering = breakdown_cells(report.by_kind["ordering"], reasons)
    assert ordering[1] == "-0.667" and ordering[3] == "ordering — (1)"  # everyone: ABCD
    single = breakdown_cells(report.by_kind["single"], reasons)
    assert single[1:4] == ["— (2)", "— (3)", "single — (4)"]  # numbered in reading order
    assert len(reasons) == 4 and all("same" in reason for reason in reasons)
    # a reason met again keeps its number
    assert footnoted(report.by_kind["single"].verdict.alpha, reasons) == "— (2)"
    printed = run_cli(database, "agreement", "--bootstrap", "0").output
    by_kind = printed.split("By kind")[1].split("By source")[0]
    assert "ordering — (1)" in by_kind and "single — (4)" in by_kind
    for note in numbered_notes(reasons):
        assert f"  {note}" in by_kind
        assert f"- {note}" in build_report(database, resamples=0)


def test_the_cli_and_the_report_print_one_set_of_agreement_cells(database) -> None:  # type: ignore[no-untyped-def]
    """`vetbench agreement` and the report lay out the same headline, pair and breakdown
    cells (reviewer/agreement/rows.py), each in its medium; a breakdown numbers its own
    notes from (1)."""
    from reviewer.agreement.rows import breakdown_table, headline_cells, pair_rows
    from reviewer.report import build_report

    kept = [("A", "keep"), ("A", "keep")]
    store_unanimous(database, {f"s:{n}": ("single", "A", kept) for n in range(3)})
    orders = [("ABCD", "keep"), ("ABCD", "flawed")]
    store_unanimous(database, {f"o:{n}": ("ordering", "ABCD", orders) for n in range(3)})
    report = compute_agreement(database, resamples=0)
    by_kind = breakdown_table(report.by_kind)
    assert [name for name, _cells in by_kind.rows] == ["ordering", "single"]
    assert by_kind.rows[1][1][1:4] == ["— (2)", "— (3)", "single — (4)"]
    assert [note[:4] for note in by_kind.notes] == ["(1) ", "(2) ", "(3) ", "(4) "]
    alone = breakdown_table({"single": report.by_kind["single"]})
    assert alone.rows[0][1][1:4] == ["— (1)", "— (2)", "single — (3)"]
    printed = run_cli(database, "agreement", "--bootstrap", "0").output
    markdown = build_report(database, resamples=0)
    # the CLI pads its columns with two spaces or more; the report writes a Markdown row
    printed_rows = [re.split(r"\s{2,}", line.strip()) for line in printed.splitlines()]
    headline = headline_cells(report.figures)
    assert len(headline) > 10
    for cells in headline:
        assert [cell for cell in cells if cell] in printed_rows, cells
        assert f"| {' | '.join(cells)} |" in markdown, cells
    [(first, second, cells)] = pair_rows(report.figures)
    assert (first, second) == ("a0", "a1")
    assert [f"{first} / {second}", *cells] in printed_rows
    assert f"| {first}, {second} | {' | '.join(cells)} |" in markdown


def test_nobody_agrees(database) -> None:
    verdicts = ["keep", "flawed", "sensitive"]
    answers = ["A", "B", "C"]
    for n in range(6):
        store_item(database, f"s:{n}", kind="single", key="A")
        for who in range(3):
            shift = (who + n) % 3
            store_judgment(database, f"s:{n}", f"a{who}", answers[shift], verdicts[shift])
    figures = compute_agreement(database, resamples=100).figures
    table = np.array([[(who + n) % 3 for n in range(6)] for who in range(3)], dtype=float)
    expected = krippendorff.alpha(reliability_data=table, level_of_measurement="nominal")
    assert expected < 0
    assert figures.verdict.alpha.value == pytest.approx(expected)
    assert figures.answer_alpha["single"].alpha.value == pytest.approx(expected)
    assert figures.verdict.percent.value == 0.0
    assert figures.key.likely_wrong_keys == []


def test_missing_judgments_and_latest_judgment_wins(database) -> None:
    store_item(database, "o:1", key="ABCD")
    store_item(database, "o:2", key="ABCD")
    store_judgment(database, "o:1", "ann", "DCBA", "wrong-key")
    store_judgment(database, "o:1", "ann", "ABCD", "keep")  # newer, same revision: it counts
    store_judgment(database, "o:1", "bo", "ABCD", "keep")
    store_judgment(database, "o:1", "cy", "BACD", "flawed", retracted=True)  # undone
    store_judgment(database, "o:2", "ann", "ABCD", "keep")  # bo and cy missing
    data = load_judgments(database)
    assert data.n_rows == 3 and data.n_units == 2
    figures = compute_agreement(database).figures
    assert figures.items_compared == 1
    assert figures.verdict.percent.value == 1.0
    assert figures.key.overall.value == 1.0


def test_decisions_feed_per_annotator_agreement(database) -> None:
    store_unanimous(
        database,
        {
            "o:1": ("ordering", "ABCD", [("ABCD", "keep"), ("ABCD", "flawed")]),
            "o:2": ("ordering", "ABCD", [("ABCD", "keep"), ("ABCD", "keep")]),
        },
    )
    store_decision(database, "o:1", "lea", "rejected", None)
    stats = {s.name: s for s in compute_agreement(database, resamples=0).per_annotator}
    assert stats["a0"].decision_agreement.value == 0.0 and stats["a0"].decision_agreement.n == 1
    assert stats["a1"].decision_agreement.value == 1.0


def test_filters_by_kind_and_source(database) -> None:
    store_item(database, "o:1", key="ABCD", source="econ")
    store_item(database, "s:1", kind="single", key="A", source="cflue")
    for name in ("a", "b"):
        store_judgment(database, "o:1", name, "ABCD")
        store_judgment(database, "s:1", name, "B", "wrong-key")
    assert compute_agreement(database, ItemScope(kinds=("single",))).figures.items_judged == 1
    econ = compute_agreement(database, ItemScope(sources=("econ",)))
    assert econ.figures.key.overall.value == 1.0 and set(econ.by_kind) == {"ordering"}
    assert compute_agreement(database, ItemScope(sources=("nowhere",))).figures.judgments == 0


# --- the fixtures end to end ---------------------------------------------------------------


@pytest.mark.slow
def test_fixture_items_judged_by_three_annotators_then_resolved_and_exported(
    database, tmp_path
) -> None:  # type: ignore[no-untyped-def]
    """The issue's 'done when': three annotators judge the fixture items through the review
    path; the figures match the references; a lead resolves every item; the set exports."""
    report = import_files(
        database,
        [FIXTURES / "econ_ordering.csv", FIXTURES / "cflue_mcq.json"],
    )
    assert report.files and all(file.error is None for file in report.files)
    with database.transaction() as session:
        set_setting(session, "overlap", "3")
    with database.session() as session:
        items = list(iter_items(session))
    assert {item.kind.value for item in items} == {"ordering", "single", "multi", "truefalse"}

    rng = random.Random(11)
    study = []
    for item in items:
        entry = StudyItem(item.id, item.kind.value, item.key, item.source)
        for annotator in ("ann", "bo", "cy"):
            if rng.random() < 0.75:
                answer = item.key
            else:
                answer = random_answer_for(rng, item.kind.value, item.labels)
            verdict = (
                "keep"
                if answer == item.key and rng.random() < 0.85
                else rng.choice(["flawed", "sensitive", "keep"])
            )
            submit_judgment(
                database,
                annotator,
                item.id,
                revision_number=item.revision,
                blind_answer=answer,
                verdict=verdict,
                seconds=rng.uniform(10, 90),
                comment="" if verdict == "keep" else f"{verdict}: see the text",
            )
            entry.judgments[annotator] = (answer, verdict)
        study.append(entry)

    figures = compute_agreement(database, resamples=100).figures
    assert figures.items_compared == len(items) and figures.verdict.fleiss_raters == 3
    assert figures.verdict.alpha.value == pytest.approx(reference_alpha(study, verdict_value))
    assert figures.keep_drop.fleiss.value == pytest.approx(
        reference_fleiss(study, keep_drop_value)[0]
    )
    multi = within_kind(study, "multi")
    task = AnnotationTask(
        data=[(n, i.item_id, frozenset(a)) for i in multi for n, (a, _) in i.judgments.items()],
        distance=masi_distance,
    )
    assert figures.answer_alpha["multi"].alpha.value == pytest.approx(task.alpha())

    store_person(database, "lea", Role.LEAD)
    agreed = approve_agreed(database, "lea")
    for case in conflict_queue(database):
        if any(j.verdict != "keep" for j in case.judgments):
            decide(database, "lea", case.item.id, "rejected", reason="flawed")
        else:
            decide(database, "lea", case.item.id, "approved")
    assert agreed > 0 and conflict_queue(database) == []
    out = tmp_path / "approved.jsonl"
    summary = export_items(database, out, format="jsonl")
    with database.session() as session:
        approved = list(iter_items(session, statuses=["approved"]))
    assert summary.count == len(approved) > 0
    assert len(out.read_text(encoding="utf-8").splitlines()) == len(approved)


def random_answer_for(rng, kind: str, labels: list[str]) -> str:  # type: ignore[no-untyped-def]
    if kind == "ordering":
        return "".join(rng.sample(labels, len(labels)))
    if kind == "multi":
        return "".join(sorted(rng.sample(labels, rng.randint(2, len(labels)))))
    return rng.choice(labels)


def test_resampling_draws_whole_item_sets_with_the_right_frequencies() -> None:
    """Common patterns come from the multinomial, rare ones unit by unit: every resample has
    exactly N items, and each pattern is drawn in proportion to its items."""
    counts = np.array([400, 250, 3, 1, 1, 2, 90, 5, 16, 17])
    chunks = list(resample_weights(counts, BootstrapSettings(4000, 9), "check"))
    weights = np.concatenate(chunks)
    assert weights.shape == (4000, counts.size)
    assert (weights.sum(axis=1) == counts.sum()).all()
    assert np.array_equal(weights, np.round(weights)) and (weights >= 0).all()
    assert weights.mean(axis=0) == pytest.approx(counts, rel=0.06)
    share = counts / counts.sum()
    expected_variance = counts.sum() * share * (1 - share)
    assert weights.var(axis=0) == pytest.approx(expected_variance, rel=0.15)
    again = np.concatenate(list(resample_weights(counts, BootstrapSettings(4000, 9), "check")))
    assert np.array_equal(weights, again)

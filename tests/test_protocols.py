"""The papers' protocols through the real CLI: CFLUE's (zero-shot, answer and explanation,
CFLUE's own extraction beside vetbench's, BLEU/ROUGE), EconLogicQA's (a 1-shot and a
5-shot run), repeats with mean ± sd, permuted options, shots per kind, and the tables.

Models are scripted (``scripted:FILE``): their outputs are written here, so every
figure can be computed again from the packages the official code uses."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import Result
from eval_helpers import (
    mixed_set,
    mixed_set_url,
    ok,
    ordering,
    single_zh,
    store,
    stored_predictions,
    stored_runs,
)
from helpers import APPROVED_ITEMS, run_cli

from db.engine import Database, open_database
from db.vocabulary import ItemStatus

# What a scripted model writes for each item of the mixed set (keys: cflue:1 B, cflue:2 C,
# cflue:3 ABD, cflue:4 BC, cflue:5 A, cflue:6 B; econ:1 DACB, econ:2 BADC).
CFLUE_OUTPUTS = {
    "cflue:1": "答案：B\n解析：我国A股市场实行T+1交易制度。",  # right
    "cflue:2": "答案：B\n解析：选项C不对，A股实行T+1。",  # wrong (key C)
    "cflue:3": "ABD",  # right: leading letters
    "cflue:4": "我认为答案是：C",  # wrong: official reads C, as does the lenient reader
    "cflue:5": "答案：A\n解析：准备金率下调增加可贷资金，属于扩张性政策。",  # right
    # Two lines, the first without an answer: CFLUE's rule reads only that first line.
    "cflue:6": "好的\n答案：B",
}
ECON_OUTPUTS = {
    "econ:1": " D, A, C, B\nQuestion: a new question the stop cuts",
    "econ:2": " The order is B, A, D, C.",  # found anywhere; the start-anchored reader: nothing
}


def eval_figures(url: str | Database, model: str, *args: str) -> tuple[Result, dict[str, Any]]:
    """``vetbench eval --model MODEL ARGS --json``, which must succeed: its result and figures."""
    result = ok(run_cli(url, "eval", "--model", model, *args, "--json"))
    return result, json.loads(result.stdout)


def script(tmp_path: Path, name: str, outputs: dict[str, str]) -> str:
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps(outputs, ensure_ascii=False), encoding="utf-8")
    return f"scripted:{path}"


@pytest.fixture
def url(db_path: Path) -> str:
    return mixed_set_url(db_path)


# ------------------------------------------------------------------------- CFLUE


def official_figures(outputs: dict[str, str]) -> dict[str, float]:
    """The figures as CFLUE's published code computes them, with the packages it calls."""
    import jieba
    from rouge import Rouge
    from sacrebleu.metrics import BLEU
    from sklearn.metrics import accuracy_score, f1_score

    keys = {"cflue:1": "B", "cflue:2": "C", "cflue:3": "ABD", "cflue:4": "BC"}
    keys |= {"cflue:5": "A", "cflue:6": "B"}
    analyses = {
        "cflue:1": "A股实行T+1交易制度。",
        "cflue:2": "A股实行T+1交易制度。",
        "cflue:5": "准备金率下调增加可贷资金。",
        "cflue:6": "准备金率下调增加可贷资金。",
    }
    read = {"cflue:1": "B", "cflue:2": "B", "cflue:3": "ABD", "cflue:4": "C", "cflue:5": "A"}
    read["cflue:6"] = "X"  # unparsed
    y_true = [keys[item] for item in keys]
    y_pred = [read[item] for item in keys]
    references, candidates = [], []
    for item, analysis in analyses.items():
        references.append(" ".join(jieba.lcut(analysis)))
        lines = outputs[item].strip().split("\n")
        explanation = lines[1].replace("解析：", "") if len(lines) == 2 else outputs[item]
        candidates.append(" ".join(jieba.lcut(explanation)))
    bleu = BLEU().corpus_score(candidates, [references])
    rouge = Rouge().get_scores(candidates, references, avg=True)
    return {
        "accuracy": float(accuracy_score(y_true, y_pred)),
        "weighted_f1": float(f1_score(y_true, y_pred, average="weighted")),
        "bleu_1": bleu.precisions[0] / 100,
        "bleu_4": bleu.score / 100,
        "rouge_1": rouge["rouge-1"]["f"],
        "rouge_2": rouge["rouge-2"]["f"],
        "rouge_l": rouge["rouge-l"]["f"],
    }


def test_cflue_protocol_reports_accuracy_f1_bleu_and_rouge_as_the_official_code(
    url: str, tmp_path: Path
) -> None:
    model = script(tmp_path, "expert", CFLUE_OUTPUTS)
    _, figures = eval_figures(url, model, "--protocol", "cflue")
    assert figures["run"]["params"]["protocol"] == "cflue"
    assert figures["run"]["shots"] == 0 and figures["progress"]["total"] == 6  # no ordering
    expected = official_figures(CFLUE_OUTPUTS)
    for name, value in expected.items():
        # ROUGE's F without the package's 1e-8 in its denominator: within 1e-8 of its own
        tolerance = 1e-8 if name.startswith("rouge") else 1e-9
        assert figures[name] == pytest.approx(value, abs=tolerance), name
    assert figures["explained"] == 4  # the items with an analysis
    # CFLUE's rule decides; vetbench's lenient reader is reported beside it
    assert figures["extractors"]["cflue"] == {
        "parsed": 5,
        "unparsed": 1,
        "correct": 3,
        "accuracy": 0.5,
    }
    assert figures["extractors"]["lenient"]["parsed"] == 6
    assert figures["extractors"]["lenient"]["correct"] == 4
    stored = stored_predictions(url, figures["run_id"])
    assert stored["cflue:6"].parsed_answer is None and stored["cflue:6"].failure_kind == "unparsed"
    assert stored["cflue:6"].scores["extracted"] == {"cflue": None, "lenient": "B"}


def test_cflue_prompts_are_zero_shot_expert_two_line_answers_in_chinese(
    url: str, tmp_path: Path
) -> None:
    model = script(tmp_path, "expert", CFLUE_OUTPUTS)
    _, figures = eval_figures(url, model, "--protocol", "cflue")
    stored = stored_predictions(url, figures["run_id"])
    single, multi, truefalse = (stored[i].prompt for i in ("cflue:1", "cflue:3", "cflue:5"))
    for prompt in (single, multi, truefalse):
        assert prompt.startswith("请以金融行业专家的身份回答下面的题目。")
        assert "“答案：”" in prompt and "“解析：”" in prompt and "只输出两行" in prompt
        assert "Question:" not in prompt and "题目：" not in prompt  # no shots, no vetbench cue
    assert "单项选择题" in single and "多项选择题" in multi
    assert "单项选择题" in truefalse  # true/false items are asked as single-choice ones
    # the question, then its options as "A. text", after a blank line; no answer cue
    assert single.endswith(
        "第1题：我国A股市场目前实行的交易制度是（　）。\nA. T+0\nB. T+1\nC. T+2\nD. T+3"
    )
    assert "Question 3: which of these" in multi  # English items get the same Chinese prompt


def test_cflue_generation_has_no_stop_and_a_free_length(url: str) -> None:
    from evaluator.backends.scripted import ScriptedBackend
    from evaluator.runner import create_run, execute_run

    database = open_database(url)
    backend = ScriptedBackend(CFLUE_OUTPUTS)
    run_id = create_run(database, backend.info, protocol="cflue", item_filter=APPROVED_ITEMS)
    execute_run(database, run_id, backend)
    for request in backend.requests_seen.values():
        assert request.stop == ()
        assert request.max_new_tokens is None  # the model's own limit, bounded by its context
    database.dispose()


def test_cflue_protocol_refuses_what_it_does_not_ask(url: str, tmp_path: Path) -> None:
    model = script(tmp_path, "expert", CFLUE_OUTPUTS)
    shots = run_cli(url, "eval", "--model", model, "--protocol", "cflue", "--shots", "5")
    assert shots.exit_code == 1 and "fixes its shots (0)" in shots.stderr
    orders = run_cli(url, "eval", "--model", model, "--protocol", "cflue", "--kind", "ordering")
    assert orders.exit_code == 1
    assert "no items to evaluate" in orders.stderr and "cflue protocol asks" in orders.stderr
    score = run_cli(url, "eval", "--model", model, "--protocol", "cflue", "--mode", "score")
    assert score.exit_code == 1 and "--mode score needs --protocol custom" in score.stderr


def test_a_protocol_says_which_chosen_items_it_leaves_out_and_the_run_records_them(
    url: str,
) -> None:
    """`--protocol cflue` on a set with approved orders printed `run 1: 6 items` and
    recorded nothing left out."""
    cflue = ok(run_cli(url, "eval", "--model", "scripted:oracle", "--protocol", "cflue"))
    assert (
        "note: 2 ordering items left out: the cflue protocol reads multiple-choice items only"
        in (cflue.stderr)
    )
    assert "run 1: 6 items" in cflue.stderr
    econ = ok(
        run_cli(
            url, "eval", "--model", "scripted:oracle", "--protocol", "econlogicqa", "--shots", "1"
        )
    )
    for kind in ("single", "multi", "truefalse"):
        assert (
            f"note: 2 {kind} items left out: the econlogicqa protocol reads ordering items only"
            in (econ.stderr)
        )
    first, second = stored_runs(url)
    assert first.params["excluded"] == {
        "econ:1": "the cflue protocol reads multiple-choice items only (ordering)",
        "econ:2": "the cflue protocol reads multiple-choice items only (ordering)",
    }
    assert sorted(second.params["excluded"]) == [f"cflue:{n}" for n in range(1, 7)]
    # kinds chosen that it asks: nothing left out, nothing said
    chosen = ok(
        run_cli(
            url, "eval", "--model", "scripted:oracle", "--protocol", "cflue", "--kind", "single"
        )
    )
    assert "left out" not in chosen.stderr and stored_runs(url)[-1].params["excluded"] == {}
    # A limited run records what it passed over on the way to its items, not every item
    # of another kind in the database (the items come in the order they were stored).
    limited = [
        ok(run_cli(url, "eval", "--model", "scripted:oracle", "--limit", "1", *protocol))
        for protocol in (("--protocol", "econlogicqa", "--shots", "1"), ("--protocol", "cflue"))
    ]
    first_order, first_choice = (run.params["excluded"] for run in stored_runs(url)[-2:])
    assert "left out" not in limited[0].stderr and first_order == {}  # six, before
    assert "note: 2 ordering items left out" in limited[1].stderr
    assert sorted(first_choice) == ["econ:1", "econ:2"]


# ------------------------------------------------------------------ EconLogicQA


def test_econlogicqa_makes_a_1_shot_and_a_5_shot_run_in_the_papers_layout(
    url: str, tmp_path: Path
) -> None:
    model = script(tmp_path, "orderer", ECON_OUTPUTS)
    result, figures = eval_figures(url, model, "--protocol", "econlogicqa", "--allow-fewer-shots")
    assert len(figures["runs"]) == 2
    made = stored_runs(url)
    assert [run.shots for run in made] == [1, 5]
    assert all(run.params["protocol"] == "econlogicqa" for run in made)
    assert made[0].params["repeat"]["series"] == made[1].params["repeat"]["series"]
    assert [spread["shots"] for spread in figures["spread"]] == [1, 5]
    # two settings of one series, not repeats: no "repeat 1/1" in the run's header
    header = ok(run_cli(url, "runs", "show", str(made[0].id))).stdout.splitlines()[0]
    assert header.endswith(
        "(scripted, generate, 1-shot, econlogicqa protocol)  finished  2/2 items"
    )
    notes = made[1].params["shot_notes"]  # --json prints only JSON: the notes are stored
    assert any("only 1 of 5 shots available" in note for note in notes)  # one shot exists
    for run in made:
        stored = stored_predictions(url, run.id or 0)
        assert set(stored) == {"econ:1", "econ:2"}  # ordering items only
        prompt = stored["econ:1"].prompt
        assert "\nChoices:\nA. " in prompt and prompt.endswith("Correct Order:")
        assert prompt.count("Question: ") == 2  # the one shot, then the question
        assert "Correct Order: C, B, D, A" in prompt  # the shot's key after the cue
        # the run stops where the model starts a new question
        assert stored["econ:1"].raw_output == " D, A, C, B"
        assert stored["econ:1"].parsed_answer == "DACB"
        assert stored["econ:2"].parsed_answer == "BADC"  # the order anywhere decides
        assert stored["econ:2"].scores["extracted"] == {
            "econlogicqa": "BADC",
            "econlogicqa-start": None,
            "lenient": "BADC",
        }
    # the run list tells them from a custom run of the same model and shots
    custom = ok(run_cli(url, "eval", "--model", model, "--shots", "1", "--allow-fewer-shots"))
    assert custom.exit_code == 0
    listing = ok(run_cli(url, "runs")).stdout.splitlines()
    rows = [line for line in listing[1:] if line.split()[0].isdigit()]  # not shot notes
    name = made[0].model
    assert rows[0].endswith(f"generate/1 {name}")  # newest first: the custom run
    assert [row.endswith(f" {name} (econlogicqa)") for row in rows] == [
        False,
        True,
        True,
    ]


def test_econlogicqa_start_extractor() -> None:
    from evaluator.extractors import extract_econlogicqa_start as read

    assert read(" C, A, B, D", "ABCD") == "CABD"
    assert read("CABD", "ABCD") == "CABD"
    assert read(" C A B D\nbecause C starts it", "ABCD") == "CABD"
    assert read("Correct Order: C, A, B, D", "ABCD") == "CABD"
    assert read(" C, A, B", "ABCD") is None  # not whole
    assert read(" C, A, B, C", "ABCD") is None
    assert read("The answer is C, A, B, D", "ABCD") is None
    assert read(" c, a, b, d", "ABCD") is None
    assert read(" E, A, D, C, B", "ABCDE") == "EADCB"
    # A further letter refuses the order, whichever it is (I past H was left unread: DACB).
    assert read("Correct Order: D, A, C, B, E", "ABCD") is None
    assert read("Correct Order: D, A, C, B, I", "ABCD") is None
    assert read("D A C B Z", "ABCD") is None
    assert read("DACB because D starts it", "ABCD") == "DACB"
    assert read("D, A, C, B, H, G, F, E", "ABCDEFGH") == "DACBHGFE"


# ------------------------------------------------------- the official CFLUE rule


@pytest.mark.parametrize(
    ("output", "expected"),
    [
        ("答案：B\n解析：选项A正确的说法应当是“不得”。", "B"),
        ("答案：ABD\n解析：……", "ABD"),
        ("答案：BA", "BA"),  # kept as written: the official figures count BA as wrong for AB
        ("答案： A、B、D", "ABD"),  # 、 , ， and spaces are removed first
        ("答案是：C", "C"),
        ("答案:D", "D"),
        ("C。解析：因为……", "C"),  # leading letters
        ("  B  ", "B"),
        ("答案：E", "E"),  # a letter the item lacks: a wrong answer, not unparsed
        ("好的\n答案：B", None),  # two lines: only the first is read
        ("好的\n答案：B\n解析：……", "B"),  # three lines: the whole output is read
        ("**答案**：B", None),
        ("The answer is B", None),
        ("", None),
    ],
)
def test_cflue_official_extraction(output: str, expected: str | None) -> None:
    from evaluator.extractors import extract_cflue_official

    assert extract_cflue_official(output, "ABCD") == expected


def test_cflue_explanation_text_rules() -> None:
    from evaluator.text_metrics import explanation_text

    assert explanation_text("答案：B\n解析：因为T+1。") == "因为T+1。"
    assert explanation_text("\n答案：B\n解析：因为\n") == "因为"  # stripped before splitting
    assert explanation_text("答案：B") == "答案：B"  # one line: the whole output
    three = "答案：B\n解析：一\n二"
    assert explanation_text(three) == three


# ----------------------------------------------------- repeats, permutation, shots


def more_shots(url: str) -> None:
    """Six agreed single-choice items, so that different seeds draw different shots."""
    database = open_database(url)
    store(
        database,
        [(f"pool:{n}", single_zh(100 + n, "ABCD"[n % 4])) for n in range(6)],
        status=ItemStatus.AGREED,
    )
    database.dispose()


def test_repeats_draw_other_shots_and_report_mean_and_sd(url: str, tmp_path: Path) -> None:
    more_shots(url)
    outputs = {"cflue:1": "B", "cflue:2": "A"}  # right, then wrong: accuracy 0.5 each run
    model = script(tmp_path, "steady", outputs)
    _, figures = eval_figures(
        url, model, "--kind", "single", "--shots", "2", "--repeats", "3", "--seed", "7"
    )
    made = stored_runs(url)
    assert figures["runs"] == [run.id for run in made] and len(made) == 3
    assert [run.params["seed"] for run in made] == [7, 8, 9]
    assert [run.params["repeat"]["index"] for run in made] == [0, 1, 2]
    drawn = {json.dumps(run.params["shots_used"], sort_keys=True) for run in made}
    assert len(drawn) > 1  # other shots per repeat
    (spread,) = figures["spread"]
    assert spread["shots"] == 2 and spread["runs"] == figures["runs"]
    assert spread["figures"]["accuracy"] == 0.5 and spread["figures"]["accuracy_sd"] == 0.0
    assert spread["figures"]["accuracy_n"] == 3
    text = ok(run_cli(url, "eval", "--model", model, "--kind", "single", "--repeats", "2"))
    assert "mean ± sd over 2 runs (5-shot):" in text.stdout
    # each figure by the name the run's lines give it, not its JSON key (position_bias)
    assert "\n  position bias " in text.stdout and "position_bias" not in text.stdout
    assert "\n  weighted F1 " in text.stdout


def test_repeats_that_cannot_differ_are_refused_before_any_run(url: str) -> None:
    """A shot file gives each prompt group its first shots whatever the seed, and a 0-shot
    prompt has none to draw: before, `--repeats 3` made three identical runs (the same
    shots_used and prompts, greedy answers) and printed "mean ± sd over 3 runs"."""
    shot_file = str(Path(__file__).resolve().parent.parent / "fixtures" / "shots_single.jsonl")
    oracle = ("--model", "scripted:oracle", "--kind", "single")
    refused = run_cli(url, "eval", *oracle, "--shot-file", shot_file, "--repeats", "3")
    assert refused.exit_code == 1 and refused.stderr.strip() == (
        "error: --repeats 3 would make 3 identical 5-shot runs: a shot file gives each prompt "
        "group its first shots, whatever the seed, and the same prompts get the same (greedy) "
        "answers; add --permute-options (each repeat shows the options in another order), draw "
        "shots from the database (leave out --shot-file), or leave out --repeats"
    )
    zero = run_cli(url, "eval", *oracle, "--shots", "0", "--repeats", "2")
    assert zero.exit_code == 1
    assert "2 identical 0-shot runs: the prompts hold no shots" in zero.stderr
    assert stored_runs(url) == []
    # Options shown in another order each repeat: the runs differ, and are made.
    ok(run_cli(url, "eval", *oracle, "--shot-file", shot_file, "--repeats", "3",
               "--permute-options"))  # fmt: skip
    assert len(stored_runs(url)) == 3


def test_permuted_options_remap_the_key_and_store_answers_in_the_items_labels(
    url: str, tmp_path: Path
) -> None:
    always_a = {item: "答案：A" for item in ("cflue:1", "cflue:2", "cflue:5", "cflue:6")}
    model = script(tmp_path, "first-option", always_a)
    _, figures = eval_figures(url, model, "--kind", "single", "--shots", "0", "--permute-options")
    stored = stored_predictions(url, figures["run_id"])
    for item_id, key in (("cflue:1", "B"), ("cflue:2", "C")):
        prediction = stored[item_id]
        order = prediction.scores["option_order"]  # the item's labels in the shown order
        assert sorted(order) == list("ABCD") and order != "ABCD"
        # "A" was the first option shown: stored as the item's own label for it
        assert prediction.parsed_answer == order[0]
        assert prediction.correct == (order[0] == key)
        shown_key = "ABCD"[order.index(key)]
        assert prediction.scores["key_position"] == shown_key
        assert f"\n{shown_key}. T+1" in prediction.prompt or key != "B"
    positions = figures["key_positions"]
    assert sum(row["n"] for row in positions.values()) == 2
    for label, row in positions.items():  # a model that always says A is right only there
        assert row["accuracy"] == (1.0 if label == "A" else 0.0)


def test_true_false_items_are_never_permuted(url: str, tmp_path: Path) -> None:
    model = script(tmp_path, "tf", {"cflue:5": "A", "cflue:6": "A"})
    _, figures = eval_figures(
        url, model, "--kind", "truefalse", "--shots", "0", "--permute-options"
    )
    for prediction in stored_predictions(url, figures["run_id"]).values():
        assert "option_order" not in prediction.scores


def test_shots_can_differ_by_kind_in_one_run(url: str, tmp_path: Path) -> None:
    model = script(tmp_path, "any", {})
    _, figures = eval_figures(
        url, model, "--shots", "0", "--shots-for", "ordering=1", "--shots-for", "single=1"
    )
    params = figures["run"]["params"]
    assert params["shots_by_kind"] == {"multi": 0, "ordering": 1, "single": 1, "truefalse": 0}
    stored = stored_predictions(url, figures["run_id"])
    assert stored["econ:1"].prompt.count("Question:") == 2
    assert stored["cflue:1"].prompt.count("题目：") == 2
    assert stored["cflue:5"].prompt.count("题目：") == 1
    bad = run_cli(url, "eval", "--model", model, "--shots-for", "essay=2")
    assert bad.exit_code == 1 and "--shots-for 'essay=2': write KIND=N" in bad.stderr


# ------------------------------------------------------------------------ tables


@pytest.fixture
def tabled(url: str, tmp_path: Path) -> str:
    """Two models under CFLUE's protocol and EconLogicQA's (with the five ordering shots
    its 5-shot run asks for)."""
    database = open_database(url)
    more = [(f"shots:o{n}", ordering(20 + n, key)) for n, key in enumerate(("BCDA", "CDAB"))]
    more += [(f"shots:o{n}", ordering(20 + n, key)) for n, key in [(2, "ADBC"), (3, "BDCA")]]
    store(database, more, status=ItemStatus.AGREED)
    database.dispose()
    for name, outputs in (("expert", CFLUE_OUTPUTS | ECON_OUTPUTS), ("guesser", {})):
        model = script(tmp_path, name, outputs)
        ok(run_cli(url, "eval", "--model", model, "--protocol", "cflue"))
        ok(run_cli(url, "eval", "--model", model, "--protocol", "econlogicqa"))
    return url


def table_json(url: str | Database, *args: str) -> list[dict[str, Any]]:
    result: list[dict[str, Any]] = json.loads(
        ok(run_cli(url, "runs", "table", *args, "--json")).stdout
    )
    return result


def test_runs_table_prints_both_shapes_with_an_exact_random_baseline(
    tabled: str, tmp_path: Path
) -> None:
    tables = {table["name"]: table for table in table_json(tabled)}
    assert set(tables) == {"econlogicqa", "cflue"}
    econ, cflue = tables["econlogicqa"], tables["cflue"]
    assert [c["title"] for c in econ["columns"]] == [
        "ordering 1-shot (econlogicqa)",
        "ordering 5-shot (econlogicqa)",
        "single 0-shot (cflue)",
        "multi 0-shot (cflue)",
        "truefalse 0-shot (cflue)",
    ]
    assert [c["title"] for c in cflue["columns"]] == [
        "Acc",
        "Weighted-F1",
        "BLEU-1",
        "BLEU-4",
        "ROUGE-1",
        "ROUGE-2",
        "ROUGE-L",
    ]
    expert, guesser, baseline, simulated = econ["rows"]
    assert expert["label"].endswith("expert.json") and baseline["baseline"] is True
    assert simulated["label"] == "random (1,000 simulated guessers)" and simulated["baseline"]
    cells = baseline["cells"]
    assert cells["ordering/1-shot/econlogicqa"]["mean"] == pytest.approx(1 / 24)  # 1/4!
    assert cells["single/0-shot/cflue"]["mean"] == pytest.approx(1 / 4)  # 1/k
    assert cells["multi/0-shot/cflue"]["mean"] == pytest.approx(1 / 15)  # 1/(2^4 - 1)
    assert cells["truefalse/0-shot/cflue"]["mean"] == pytest.approx(1 / 2)
    # both orders read: "The order is B, A, D, C." is found anywhere in the output
    assert expert["cells"]["ordering/1-shot/econlogicqa"]["mean"] == 1.0
    assert guesser["cells"]["ordering/1-shot/econlogicqa"]["mean"] == 0.0
    *_models, cflue_baseline, _simulated = cflue["rows"]
    mcq_chance = (2 / 4 + 2 / 15 + 2 / 2) / 6
    assert cflue_baseline["cells"]["accuracy"]["mean"] == pytest.approx(mcq_chance)
    assert cflue_baseline["cells"]["bleu_1"] is None  # no exact baseline for text overlap
    assert cflue["rows"][0]["cells"]["accuracy"]["mean"] == 0.5

    text = ok(run_cli(tabled, "runs", "table")).stdout
    assert "Accuracy by item kind and shots (EconLogicQA-style" in text and "CFLUE protocol" in text
    assert "random choice" in text and "4.17" in text and f"{100 * mcq_chance:.2f}" in text


@pytest.mark.parametrize(
    ("table_format", "marks"),
    [
        ("md", ["| model", "|---", "random choice"]),
        ("csv", ["model,Acc,Acc sd,Weighted-F1", "random choice,"]),
        ("latex", ["\\begin{tabular}", "\\toprule", "random choice"]),
        ("text", ["-----", "random choice"]),
    ],
)
def test_runs_table_formats(tabled: str, table_format: str, marks: list[str]) -> None:
    shown = ok(
        run_cli(tabled, "runs", "table", "--shape", "cflue", "--format", table_format)
    ).stdout
    for mark in marks:
        assert mark in shown
    if table_format == "latex":
        assert "expert.json" in shown and "\\bottomrule" in shown


def test_runs_table_csv_titles_each_table_on_stderr(tabled: str) -> None:
    """Several tables as CSV: stdout holds only the tables, a blank line apart, and stderr
    says which is which, in the same order (a reader could not tell them apart)."""
    result = ok(run_cli(tabled, "runs", "table", "--format", "csv"))
    blocks = result.stdout.strip("\n").split("\n\n")
    titles = [line for line in result.stderr.splitlines() if line.startswith("table: ")]
    assert len(blocks) == len(titles) == 2
    assert "EconLogicQA" in titles[0] and "CFLUE" in titles[1]
    assert all(block.startswith("model,") for block in blocks)


def test_runs_table_breakdowns_by_subject_and_length(tabled: str) -> None:
    tables = table_json(tabled, "--protocol", "cflue", "--by", "subject", "--by", "length")
    by_name = {table["name"]: table for table in tables}
    subjects = by_name["subject"]
    (row,) = subjects["rows"]  # only the single-choice items carry 名称
    assert row["label"] == "证券从业资格"
    assert row["cells"]["random"]["mean"] == pytest.approx(1 / 4)
    lengths = by_name["length"]
    assert all(row["label"].endswith("chars") for row in lengths["rows"])
    assert sum(1 for _ in lengths["rows"]) >= 1


def test_a_quick_check_after_the_full_run_is_named_not_passed_off_as_it(
    tabled: str, tmp_path: Path
) -> None:
    """A cell shows the newest series no `--limit` cut short: a quick check after the
    full run does not stand in for it (the demo's "ordering 5-shot 0.00" came from a
    3-item check, not the full run on 18), and the notes name the check; a model with
    only a cut run is shown on it, and where it evaluated other items than the other
    models of its column the notes say so, once.  Permuted options are columns of their own."""
    expert = script(tmp_path, "expert", CFLUE_OUTPUTS | ECON_OUTPUTS)
    guesser = script(tmp_path, "guesser", {})
    novice = script(tmp_path, "novice", {})
    (before,) = [table for table in table_json(tabled) if table["name"] == "econlogicqa"]
    expert_name = expert.removeprefix("scripted:")
    (expert_full,) = [row["runs"] for row in before["rows"] if row["label"] == expert_name]
    ok(run_cli(tabled, "eval", "--model", expert, "--protocol", "econlogicqa", "--limit", "1"))
    ok(run_cli(tabled, "eval", "--model", expert, "--shots", "0"))
    ok(run_cli(tabled, "eval", "--model", guesser, "--shots", "0", "--kind", "single"))
    quick = ["--shots", "0", "--kind", "single", "--limit", "1"]
    ok(run_cli(tabled, "eval", "--model", guesser, *quick))
    ok(run_cli(tabled, "eval", "--model", novice, *quick))
    ok(run_cli(tabled, "eval", "--model", novice, "--protocol", "econlogicqa", "--limit", "1"))
    ok(run_cli(tabled, "eval", "--model", guesser, "--shots", "0", "--permute-options"))
    (econ,) = [table for table in table_json(tabled) if table["name"] == "econlogicqa"]
    notes = econ["notes"]
    guesser_name, novice_name = guesser.removeprefix("scripted:"), novice.removeprefix("scripted:")
    (expert_row,) = [row for row in econ["rows"] if row["label"] == expert_name]
    assert set(expert_full) <= set(expert_row["runs"])  # the full runs, not the check's
    one_shot = [n for n in notes if n.startswith(f"{expert_name}, ordering 1-shot (econlogicqa)")]
    assert len(one_shot) == 1 and "on 2 items; newer run" in one_shot[0]
    assert "(cut by --limit) evaluated other items (1;" in one_shot[0]
    assert any(
        note.startswith(f"{guesser_name}, single 0-shot: shows run") and "on 2 items;" in note
        for note in notes
    )
    # runs of one setting on other items (the novice's check): said once, by their item sets
    assert sum("ordering (econlogicqa, generate): not the same items" in n for n in notes) == 1
    assert not any(n.startswith("ordering 1-shot (econlogicqa): the models") for n in notes)
    # a --limit run beside whole runs: said by the column
    assert (
        f"single 0-shot: the models evaluated other items ({expert_name} 2, {guesser_name} 2, "
        f"{novice_name} 1)"
    ) in notes
    titles = [column["title"] for column in econ["columns"]]
    assert "single 0-shot (permuted options)" in titles and "single 0-shot" in titles
    keys = [column["key"] for column in econ["columns"]]
    assert "single/0-shot/permuted" in keys and "single/0-shot" in keys
    text = ok(run_cli(tabled, "runs", "table", "--shape", "econlogicqa")).stdout
    assert "evaluated other items" in text  # the notes are printed with the table


def test_a_cflue_table_of_runs_on_other_items_says_so(tabled: str, tmp_path: Path) -> None:
    """The CFLUE table's rows are whole runs: a `--limit` run beside a whole one is named,
    with the items each row evaluated, in the notes and under the printed table (the
    guesser's own whole run, from the fixture, stands over its later check)."""
    expert = script(tmp_path, "expert", CFLUE_OUTPUTS)
    guesser = script(tmp_path, "guesser", {})
    novice = script(tmp_path, "novice", {})
    ok(run_cli(tabled, "eval", "--model", expert, "--protocol", "cflue"))
    ok(run_cli(tabled, "eval", "--model", guesser, "--protocol", "cflue", "--limit", "1"))
    ok(run_cli(tabled, "eval", "--model", novice, "--protocol", "cflue", "--limit", "1"))
    (cflue,) = [table for table in table_json(tabled) if table["name"] == "cflue"]
    expert_name, guesser_name = expert.removeprefix("scripted:"), guesser.removeprefix("scripted:")
    novice_name = novice.removeprefix("scripted:")
    assert (
        f"every column: the models evaluated other items ({expert_name} (built-in wording) "
        f"{len(CFLUE_OUTPUTS)}, {guesser_name} (built-in wording) {len(CFLUE_OUTPUTS)}, "
        f"{novice_name} (built-in wording) 1)"
    ) in cflue["notes"]
    text = ok(run_cli(tabled, "runs", "table", "--shape", "cflue")).stdout
    assert "every column: the models evaluated other items" in text


def test_runs_table_with_no_finished_runs(url: str) -> None:
    assert "no finished runs to tabulate" in ok(run_cli(url, "runs", "table")).stdout
    assert table_json(url) == []


# ----------------------------------------------------------------- text metrics


def test_text_metrics_agree_with_sacrebleu_and_rouge_on_real_cflue_analyses(
    cflue_knowledge: Path,
) -> None:
    import jieba
    from rouge import Rouge
    from sacrebleu.metrics import BLEU

    from evaluator.text_metrics import score_explanation, summarize_explanations

    records = json.loads(cflue_knowledge.read_text(encoding="utf-8"))
    analyses = [r["analysis"] for r in records if r.get("analysis")][:40]
    # a model "explains" each item with its neighbour's analysis, one line or two
    outputs = [
        f"答案：A\n解析：{analyses[(n + 1) % 40]}" if n % 2 else analyses[(n + 1) % 40][:60]
        for n in range(40)
    ]
    ours = summarize_explanations(
        [
            score_explanation(output, analysis)
            for output, analysis in zip(outputs, analyses, strict=True)
        ]
    )
    references = [" ".join(jieba.lcut(a)) for a in analyses]
    candidates = [
        " ".join(jieba.lcut(o.strip().split("\n")[1].replace("解析：", "") if "\n" in o else o))
        for o in outputs
    ]
    bleu = BLEU().corpus_score(candidates, [references])
    rouge = Rouge().get_scores(candidates, references, avg=True)
    assert ours is not None and ours.count == 40
    assert ours.bleu_1 == pytest.approx(bleu.precisions[0] / 100, abs=1e-12)
    assert ours.bleu_4 == pytest.approx(bleu.score / 100, abs=1e-12)
    assert ours.rouge_1 == pytest.approx(rouge["rouge-1"]["f"], abs=1e-8)
    assert ours.rouge_2 == pytest.approx(rouge["rouge-2"]["f"], abs=1e-8)
    assert ours.rouge_l == pytest.approx(rouge["rouge-l"]["f"], abs=1e-8)


def test_an_empty_explanation_scores_zero_where_the_package_would_stop() -> None:
    from rouge import Rouge

    from evaluator.text_metrics import score_explanation

    with pytest.raises(ValueError):
        Rouge().get_scores("", "准备金 率")
    empty = score_explanation("答案：B\n解析：", "准备金率下调。")
    assert (empty.rouge_1, empty.rouge_2, empty.rouge_l) == (0.0, 0.0, 0.0)
    assert empty.bleu.hypothesis_length == 0 and empty.bleu.reference_length > 0


def test_a_long_explanation_needs_no_recursion_limit_of_its_own() -> None:
    """About 1,400 words a side: past what Python's default recursion limit (1,000) lets
    the official ``rouge`` package's LCS walk reach, from that default whatever another
    test in this process raised it to; no longer, as the LCS table grows as its square."""
    from evaluator.text_metrics import score_explanation

    long_text = "，".join(f"第{n}点说明市场利率" for n in range(200))
    before = sys.getrecursionlimit()
    sys.setrecursionlimit(1000)
    try:
        score = score_explanation(f"答案：A\n解析：{long_text}", long_text)
    finally:
        sys.setrecursionlimit(max(before, sys.getrecursionlimit()))
    assert score.rouge_l == pytest.approx(1.0, abs=1e-6)


def test_stored_explanation_scores_round_trip() -> None:
    from evaluator.results import Score
    from evaluator.text_metrics import score_explanation

    explanation = score_explanation("答案：B\n解析：A股实行T+1。", "A股实行T+1交易制度。")
    stored = Score(correct=True, explanation=explanation, extracted={"cflue": "B"}).to_json()
    assert Score.from_json(json.loads(json.dumps(stored))) == Score(
        correct=True, explanation=explanation, extracted={"cflue": "B"}
    )


def test_custom_runs_keep_vetbench_layout_and_reader() -> None:
    """Custom runs keep vetbench's layout and the lenient reader deciding."""
    from evaluator.protocols import protocol_spec

    custom = protocol_spec("custom")
    assert custom.layout == "vetbench" and custom.extractor == "lenient"
    assert custom.reported_extractors() == ("lenient", "cflue", "econlogicqa", "econlogicqa-start")


def test_breakdowns_keep_each_shot_setting_apart(tabled: str) -> None:
    (lengths,) = table_json(tabled, "--by", "length", "--shape", "econlogicqa")[1:]
    titles = [column["title"] for column in lengths["columns"]]
    assert any(title.endswith("(econlogicqa, 1-shot)") for title in titles)
    assert any(title.endswith("(econlogicqa, 5-shot)") for title in titles)
    assert any(title.endswith("(cflue, 0-shot)") for title in titles)
    for row in lengths["rows"]:  # one run per setting: no spread over settings
        assert all(cell is None or cell["sd"] is None for cell in row["cells"].values())


def test_a_run_read_or_laid_out_otherwise_is_not_passed_off_as_the_protocols(
    tabled: str, tmp_path: Path
) -> None:
    """A run on the same items, decided by another reader (``--extractor``) or asked in
    another layout (``--layout``), is not the protocol's figure: it gets a column (or CFLUE
    row) of its own, and its label says how it differs.  Before, the latest series filled
    the protocol's cell with no word of it (EconLogicQA 1-shot 100% became 0%)."""
    expert = script(tmp_path, "expert", CFLUE_OUTPUTS | ECON_OUTPUTS)
    start = ["--protocol", "econlogicqa", "--extractor", "econlogicqa-start"]
    ok(run_cli(tabled, "eval", "--model", expert, *start))
    ok(run_cli(tabled, "eval", "--model", expert, "--protocol", "cflue", "--extractor", "lenient"))
    ok(run_cli(tabled, "eval", "--model", expert, "--shots", "0", "--layout", "cflue"))
    tables = {table["name"]: table for table in table_json(tabled)}
    econ, cflue = tables["econlogicqa"], tables["cflue"]
    titles = [column["title"] for column in econ["columns"]]
    assert "ordering 1-shot (econlogicqa)" in titles
    assert "ordering 1-shot (econlogicqa, read by econlogicqa-start)" in titles
    assert "single 0-shot (cflue layout)" in titles
    expert_row = econ["rows"][0]
    assert expert_row["label"].endswith("expert.json")
    # the protocol's reader read both orders; the start-anchored one only the first
    assert expert_row["cells"]["ordering/1-shot/econlogicqa"]["mean"] == 1.0
    start_cell = expert_row["cells"]["ordering/1-shot/econlogicqa/read-by-econlogicqa-start"]
    assert start_cell["mean"] == 0.5
    labels = [row["label"] for row in cflue["rows"]]
    assert any(label.endswith("(built-in wording)") for label in labels)
    assert any(label.endswith("(built-in wording, read by lenient)") for label in labels)
    # and the run's own label says it
    last = max(run.id or 0 for run in stored_runs(tabled))
    shown = ok(run_cli(tabled, "runs", "show", str(last))).stdout
    assert "cflue layout" in shown.splitlines()[0]


def test_a_table_says_when_a_runs_figures_leave_out_failed_items(url: str, tmp_path: Path) -> None:
    """A finished run whose timeouts are left out of its figures (they are retried on
    resume) filled a paper table's cell with accuracy on fewer items, without a word."""
    lines = [
        {"item_id": "econ:1", "error": "timeout"},
        {"item_id": "econ:2", "output": "B, A, D, C"},
    ]
    path = tmp_path / "flaky.jsonl"
    path.write_text("\n".join(json.dumps(line) for line in lines), encoding="utf-8")
    flaky = run_cli(
        url, "eval", "--model", f"scripted:{path}", "--shots", "0", "--kind", "ordering"
    )
    assert flaky.exit_code == 75, flaky.output  # finished, its failure left to resume
    (table,) = table_json(url, "--shape", "econlogicqa")
    assert table["rows"][0]["cells"]["ordering/0-shot"]["mean"] == 1.0  # econ:2 alone
    note = "run 1: figures on 1 of its 2 items; 1 failed (infrastructure) and are left out"
    assert any(n.startswith(note) for n in table["notes"])
    assert note in ok(run_cli(url, "runs", "table")).stdout


def test_explanation_figures_of_the_oracle_are_fractions_no_greater_than_one(
    database: Database,
) -> None:
    """Every explanation matches its analysis word for word: BLEU-4 is 1, not sacrebleu's
    100.00000000000004 / 100 (a fraction over 1), and no BLEU or ROUGE figure, of the run,
    of a kind or of a source, leaves [0, 1]."""
    mixed_set(database)
    _, figures = eval_figures(database, "scripted:oracle", "--protocol", "cflue")
    assert figures["explained"] == 4
    found = dict(text_figures(figures))
    assert found["bleu_4"] == 1.0 and found["bleu_1"] == 1.0
    assert found["rouge_l"] == 1.0  # without the package's 1e-8 in its F
    for path, value in text_figures(figures):
        assert 0.0 <= value <= 1.0, (path, value)


def text_figures(value: Any, path: str = "") -> Iterator[tuple[str, float]]:
    """Every BLEU and ROUGE figure in ``value`` (a run's ``--json``), by its path."""
    if isinstance(value, dict):
        for key, item in value.items():
            name = f"{path}.{key}" if path else str(key)
            if key.startswith(("bleu_", "rouge_")) and isinstance(item, float):
                yield name, item
            else:
                yield from text_figures(item, name)
    elif isinstance(value, list):
        for item in value:
            yield from text_figures(item, path)


def test_one_model_name_on_other_servers_is_other_rows(
    database: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Three ``openai:m1`` runs against three servers are three rows named by host and
    port, not one row holding the latest; ``m2`` twice at one address that served another
    model root the second time is two rows named by root; a model served once (the oracle)
    keeps its plain label."""
    from fake_openai_server import FakeOpenAIServer, completion

    monkeypatch.setenv("VETBENCH_TABLE_TEST_KEY", "sk-table-test")
    mixed_set(database)

    def cflue_run(server: FakeOpenAIServer, model: str) -> None:
        options = server.cli_options(f"openai:{model}", "VETBENCH_TABLE_TEST_KEY")
        ok(run_cli(database, "eval", *options, "--protocol", "cflue", "--max-retries", "0"))

    def roots(root: str) -> list[dict[str, Any]]:
        return [{"id": name, "object": "model", "root": root} for name in ("m1", "m2")]

    servers = [FakeOpenAIServer(default=lambda _r: completion("答案：B")) for _ in range(3)]
    for server in servers:
        server.__enter__()
    try:
        hosts = [server.base_url.split("//")[1].removesuffix("/v1") for server in servers]
        for server in servers:
            cflue_run(server, "m1")
        servers[0].models = roots("org/A")
        cflue_run(servers[0], "m2")
        servers[0].models = roots("org/B")
        cflue_run(servers[0], "m2")
    finally:
        for server in servers:
            server.__exit__(None, None, None)
    ok(run_cli(database, "eval", "--model", "scripted:oracle", "--protocol", "cflue"))

    (cflue,) = table_json(database, "--shape", "cflue")
    labels = [row["label"] for row in cflue["rows"] if not row["baseline"]]
    assert labels == [
        *(f"m1 @ {host} (built-in wording)" for host in hosts),
        "m2 @ root org/A (built-in wording)",
        "m2 @ root org/B (built-in wording)",
        "oracle (built-in wording)",
    ]
    shown = [run for row in cflue["rows"][:6] for run in row["runs"]]
    assert len(shown) == len(set(shown)) == 6  # each row its own run
    (econ,) = table_json(database, "--shape", "econlogicqa")
    assert [row["label"] for row in econ["rows"][:3]] == [f"m1 @ {host}" for host in hosts]

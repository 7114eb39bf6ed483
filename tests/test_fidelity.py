"""Figures that can stand next to the papers': the oracle self-test over every protocol,
shot count, repeat, permutation, mode and reader; the EconLogicQA reader on the output
shapes models write; CFLUE's official wording read from a repository (a stand-in file
of the same shape, written here); the simulated random row; what each reader sees of an output (CFLUE's: as written); shots
with the question's number of events.

Everything runs through the real CLI (``vetbench eval --model scripted:...``) on a
small real SQLite database."""

from __future__ import annotations

import hashlib
import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from eval_helpers import (
    mixed_set_url,
    multi_en,
    ok,
    ordering,
    store,
    stored_predictions,
    stored_runs,
)
from helpers import run_cli

from db.engine import open_database
from db.validation import ItemDraft
from db.vocabulary import ItemStatus

ORACLE = "scripted:oracle"


def eval_json(url: str, *args: str) -> dict[str, Any]:
    """``vetbench eval ARGS --json``; the small set has few shots, which is not the point
    here: fewer are allowed."""
    result = ok(run_cli(url, "eval", *args, "--allow-fewer-shots", "--json"))
    data: dict[str, Any] = json.loads(result.stdout)
    return data


def run_figures(url: str, run_id: int) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(
        ok(run_cli(url, "runs", "show", str(run_id), "--json")).stdout
    )
    return data


def wide(kind: str, labels: str, key: str, prompt: str, language: str) -> ItemDraft:
    """An item with ``labels`` as its options (their texts named after them)."""
    option = "选项{}" if language == "zh" else "Event {}."
    return ItemDraft(
        kind=kind,
        prompt=prompt,
        choices={label: option.format(label) for label in labels},
        key=key,
        explanation=f"{key}: as the question has it.",
        language=language,
    )


# Items with as many options as vetbench accepts (8): CFLUE's reader knows A–F only.
WIDE_ITEMS = [
    ("wide:7", wide("single", "ABCDEFG", "G", "第7题：七个选项中正确的是（　）。", "zh")),
    ("wide:8", wide("multi", "ABCDEFGH", "BDFH", "第8题：八个选项中正确的有（　）。", "zh")),
    ("wide:order", wide("ordering", "ABCDEFGH", "HGFEDCBA", "Scenario 8: a bank run.", "en")),
]


@pytest.fixture
def url(db_path: Path) -> str:
    """The mixed set (two items of each kind, four agreed shots), plus a five-event order
    and a five-event shot, so shots of both sizes exist, and items with seven and eight
    options (:data:`WIDE_ITEMS`)."""
    mixed_set_url(db_path)
    database = open_database(db_path)
    store(database, WIDE_ITEMS)
    five = ItemDraft(
        kind="ordering",
        prompt="Scenario 5: a central bank tightens. Put the events in logical order.",
        choices={label: f"Event {label}." for label in "ABCDE"},
        key="EADCB",
        explanation="Inflation first, then the rate rise.",
    )
    store(database, [("econ:5", five)])
    shot = replace(five, prompt="Scenario 15: a currency falls. Put the events in logical order.")
    store(database, [("shots:5", shot)], status=ItemStatus.AGREED)
    database.dispose()
    return str(db_path)


# ------------------------------------------------------------------ the oracle


def assert_perfect(figures: dict[str, Any], *, explanations: bool) -> None:
    assert figures["accuracy"] == 1.0 and figures["unparsed"] == 0, figures
    for name in ("pairwise_accuracy", "weighted_f1", "set_f1"):
        assert figures[name] in (None, 1.0), (name, figures[name])
    for name, read in figures["extractors"].items():
        assert read["unparsed"] == 0 and read["accuracy"] == 1.0, (name, read)
    assert figures["position_bias"] in (None, 0.0)
    if explanations:
        assert figures["explained"] > 0
        for name in ("bleu_1", "bleu_4", "rouge_1", "rouge_2", "rouge_l"):
            assert figures[name] == pytest.approx(1.0), name


MATRIX = [
    pytest.param(["--shots", "0"], id="custom-0-shot"),
    pytest.param(["--shots", "2", "--shots-for", "single=1"], id="custom-2-shot"),
    pytest.param(["--shots", "1", "--mode", "score"], id="custom-score"),
    pytest.param(["--protocol", "cflue"], id="cflue"),
    pytest.param(["--protocol", "econlogicqa"], id="econlogicqa-1-and-5-shot"),
    # Another reader deciding, on the kinds it reads (the others' answers it leaves unread).
    pytest.param(
        ["--shots", "1", "--extractor", "cflue", *("--kind", "single", "--kind", "multi")],
        id="decided-by-cflue",
    ),
    *(
        pytest.param(["--shots", "1", "--extractor", name, "--kind", "ordering"], id=name)
        for name in ("econlogicqa", "econlogicqa-start")
    ),
]


@pytest.mark.parametrize("permute", [False, True], ids=["as-stored", "permuted"])
@pytest.mark.parametrize("args", MATRIX)
def test_the_oracle_scores_100_percent_under_every_setting(
    url: str, args: list[str], permute: bool
) -> None:
    extra = ["--permute-options"] if permute else []
    eval_json(url, "--model", ORACLE, *args, *extra)
    made = stored_runs(url)
    assert made
    for run in made:
        figures = run_figures(url, run.id or 0)
        assert_perfect(figures, explanations=args[:2] == ["--protocol", "cflue"])
        for kind_figures in figures["by_kind"].values():
            assert_perfect(kind_figures, explanations=False)
        if permute:
            orders = {
                row.scores.get("option_order")
                for row in stored_predictions(url, run.id or 0).values()
            }
            assert orders - {None}, "the options were shown permuted"


CFLUE_LETTERS_ONLY = "the cflue reader reads options A–F only"


@pytest.mark.parametrize(
    ("args", "left_out"),
    [
        (["--protocol", "cflue"], {"wide:7": "single", "wide:8": "multi"}),
        (["--shots", "0", "--extractor", "cflue", "--kind", "multi"], {"wide:8": "multi"}),
        (["--shots", "0"], {}),
        (["--protocol", "econlogicqa"], {}),
    ],
    ids=["cflue-protocol", "decided-by-cflue", "custom", "econlogicqa"],
)
def test_items_with_options_past_f_are_left_out_where_cflues_reader_decides(
    url: str, args: list[str], left_out: dict[str, str]
) -> None:
    """Before, CFLUE's letters A–F read the oracle's ``答案：G`` as nothing and ``答案：BDFH``
    as BDF: 0.000 on such items. CFLUE's data has at most five options, so its rule stays
    as published: where it decides, such items are left out, recorded with the reason and
    said in a note; elsewhere they are asked, and it reports no answer of theirs."""
    result = ok(run_cli(url, "eval", "--model", ORACLE, *args, "--allow-fewer-shots"))
    for run in stored_runs(url):
        assert {
            item_id: reason
            for item_id, reason in run.params["excluded"].items()
            if CFLUE_LETTERS_ONLY in reason
        } == {item_id: f"{CFLUE_LETTERS_ONLY} ({kind})" for item_id, kind in left_out.items()}
        predictions = stored_predictions(url, run.id or 0)
        asked = {item_id for item_id, _ in WIDE_ITEMS} & set(predictions)
        assert not asked & set(left_out)
        for item_id in asked:
            assert predictions[item_id].correct, item_id
            assert "cflue" not in predictions[item_id].scores["extracted"]
    for kind in set(left_out.values()):
        assert f"note: 1 {kind} item left out: {CFLUE_LETTERS_ONLY}" in result.stderr


def test_cflues_reader_keeps_its_letters_a_to_f() -> None:
    from evaluator.extractors import extract_cflue_official, read_answers

    # Byte-faithful on every item CFLUE's code can read: E and F on a four-option item
    # are letters it reads (a wrong answer), G is not.
    assert extract_cflue_official("答案：F", "ABCD") == "F"
    assert extract_cflue_official("答案：G", "ABCD") is None
    assert read_answers(["cflue", "lenient"], "multi", "答案：BDFH", "ABCDEFGH") == {
        "lenient": "BDFH"
    }
    assert read_answers(["cflue"], "single", "答案：F", "ABCDEF") == {"cflue": "F"}


@pytest.mark.parametrize(
    ("reader", "unread"),
    [("cflue", "(4 ordering)"), ("econlogicqa-start", "(3 multi, 3 single, 2 truefalse)")],
)
def test_a_reader_that_cannot_read_some_kinds_is_refused_before_a_run(
    url: str, reader: str, unread: str
) -> None:
    """Before, ``--extractor cflue`` on a set with orders left every order unread: the oracle
    scored 49% (each order counted unparsed). Now such a reader is refused before any run
    is made (or model loaded), with the kinds it reads; narrowed to them, it is perfect."""
    args = ("--model", ORACLE, "--shots", "0", "--extractor", reader, "--allow-fewer-shots")
    refused = run_cli(url, "eval", *args, "--kind", "ordering", "--kind", "single")
    assert refused.exit_code == 1 and f"the {reader} reader reads" in refused.stderr
    everything = run_cli(url, "eval", *args)
    assert everything.exit_code == 1 and unread in everything.stderr
    assert stored_runs(url) == []


def test_the_oracle_is_perfect_in_every_permuted_repeat_with_no_position_bias(url: str) -> None:
    data = eval_json(url, "--model", ORACLE, "--permute-options", "--repeats", "3", "--shots", "1")
    made = stored_runs(url)
    assert len(made) == 3
    keys_shown = set()
    for run in made:
        figures = run_figures(url, run.id or 0)
        assert_perfect(figures, explanations=False)
        assert figures["position_bias"] == 0.0
        keys_shown |= set(figures["key_positions"])
    assert len(keys_shown) > 1  # keys were shown under several labels
    (spread,) = data["spread"]
    assert (spread["figures"]["accuracy"], spread["figures"]["accuracy_sd"]) == (1.0, 0.0)
    assert spread["figures"]["accuracy_n"] == 3 and spread["figures"]["position_bias"] == 0.0


def test_a_permuted_multi_answer_is_mapped_back_in_order_for_every_reader(url: str) -> None:
    """The bug of issue 21: ``ABD`` read in the shown labels came back as ``DCA``."""
    eval_json(url, "--model", ORACLE, "--protocol", "cflue", "--permute-options")
    (run,) = stored_runs(url)
    multi = stored_predictions(url, run.id or 0)["cflue:3"]
    assert multi.scores["option_order"] != "ABCD"
    assert multi.parsed_answer == "ABD" and multi.correct
    assert multi.scores["extracted"] == {"cflue": "ABD", "lenient": "ABD"}


# Analyses that state the answer, as real CFLUE analyses do (故选A, 答案为ACD, 本题选ABDE,
# （A正确）): under --permute-options the oracle writes them in the shown labels, so
# the lenient reader, which reads the last answer an output states, reads the key.
STATED_ANSWERS = [
    ("single", "B", "市场价格随之波动，故选B。"),
    ("single", "C", "（C正确）其余各项均不符合规定。因此正确答案是C。"),
    ("multi", "ACD", "所以，答案为A、C、D。"),
    ("multi", "ABD", "选项C不属于中介机构，本题选ABD。"),
    # Share classes in brackets are no options: （A股） stays （A股） in every shown order.
    ("single", "B", "（A股）与（B股）均在境内上市，（B正确）。故选B。"),
]


def test_permuted_analyses_state_the_answer_in_the_shown_labels(db_path: Path) -> None:
    database = open_database(db_path)
    for n, (kind, key, analysis) in enumerate(STATED_ANSWERS, 1):
        draft = ItemDraft(
            kind=kind,
            prompt=f"第{n}题：下列属于证券中介机构的是（　）。",
            choices={"A": "证券公司", "B": "会计师事务所", "C": "律师事务所", "D": "居民"},
            key=key,
            explanation=analysis,
            language="zh",
        )
        store(database, [(f"stated:{n}", draft)])
    database.dispose()
    for seed in ("1", "2", "3"):
        eval_json(
            str(db_path),
            "--model",
            ORACLE,
            "--protocol",
            "cflue",
            "--permute-options",
            "--seed",
            seed,
        )
    for run in stored_runs(str(db_path)):
        figures = run_figures(str(db_path), run.id or 0)
        assert_perfect(figures, explanations=True)
        for item_id, prediction in stored_predictions(str(db_path), run.id or 0).items():
            assert prediction.scores["option_order"] not in (None, "ABCD")
            if item_id == f"stated:{len(STATED_ANSWERS)}":
                assert "（A股）与（B股）" in prediction.raw_output


def test_the_oracle_answers_in_the_protocols_form(url: str) -> None:
    eval_json(url, "--model", ORACLE, "--protocol", "cflue")
    eval_json(url, "--model", ORACLE, "--protocol", "econlogicqa")
    cflue_run, econ_run, _ = stored_runs(url)
    multi = stored_predictions(url, cflue_run.id or 0)["cflue:5"]
    assert multi.raw_output == "答案：A\n解析：准备金率下调增加可贷资金。"
    assert (
        stored_predictions(url, econ_run.id or 0)["econ:1"].raw_output
        == "Correct Order: D, A, C, B"
    )


# ----------------------------------------------------------- EconLogicQA's reader

SHAPES = {
    "The correct order is D, A, C, B.": "DACB",
    "D -> A -> C -> B": "DACB",
    "1. D\n2. A\n3. C\n4. B": "DACB",
    "**D, A, C, B**": "DACB",
    "D、A、C、B": "DACB",
    "(D) (A) (C) (B)": "DACB",
    "A, B, C, D, E": None,  # five letters on a four-event item
    "D, A, C, B. Or perhaps D, A, B, C.": None,  # two different orders
}


def test_the_econlogicqa_reader_reads_the_shapes_models_write(
    db_path: Path, tmp_path: Path
) -> None:
    database = open_database(db_path)
    ids = [f"shape:{n}" for n in range(1, len(SHAPES) + 1)]
    store(database, [(item_id, ordering(n, "DACB")) for n, item_id in enumerate(ids, 1)])
    store(database, [("shots:1", ordering(99, "CBDA"))], status=ItemStatus.AGREED)
    database.dispose()
    script = tmp_path / "shapes.json"
    script.write_text(json.dumps(dict(zip(ids, SHAPES, strict=True))), encoding="utf-8")
    eval_json(str(db_path), "--model", f"scripted:{script}", "--protocol", "econlogicqa")
    made = stored_runs(str(db_path))
    assert len(made) == 2  # 1-shot and 5-shot
    for run in made:
        predictions = stored_predictions(str(db_path), run.id or 0)
        for item_id, (output, expected) in zip(ids, SHAPES.items(), strict=True):
            prediction = predictions[item_id]
            assert prediction.parsed_answer == expected, output
            extracted = prediction.scores["extracted"]
            assert extracted["econlogicqa"] == expected
            assert "econlogicqa-start" in extracted  # the start-anchored reader, beside it
        start = predictions["shape:1"].scores["extracted"]["econlogicqa-start"]
        assert start is None  # it reads only an order at the very start


def test_econlogicqa_prompts_are_plain_with_no_instruction_line(url: str) -> None:
    eval_json(url, "--model", ORACLE, "--protocol", "econlogicqa")
    one_shot = stored_runs(url)[0]
    prompt = stored_predictions(url, one_shot.id or 0)["econ:1"].prompt
    assert prompt.startswith("Question: Scenario 11")  # the shot comes first, nothing before
    assert one_shot.params["protocol"] == "econlogicqa"
    tables = json.loads(ok(run_cli(url, "runs", "table", "--json")).stdout)
    assert "EconLogicQA-style" in tables[0]["title"]


def test_chinese_orders_under_econlogicqa_are_recorded_as_a_departure(db_path: Path) -> None:
    """EconLogicQA's layout is English: a Chinese order is asked in vetbench's Chinese
    layout, with English shots. Before, the run and its table said nothing of it, and its
    figures filled the protocol's own cells."""
    database = open_database(db_path)
    chinese = replace(
        ordering(2, "BADC"),
        prompt="情境2：央行加息。请将下列事件按逻辑顺序排列。",
        choices={
            "A": "企业投资减少",
            "B": "央行上调利率",
            "C": "经济增速放缓",
            "D": "贷款成本上升",
        },
        language="zh",
    )
    store(database, [("econ:1", ordering(1)), ("econ:zh", chinese)])
    store(database, [("shots:1", ordering(99, "CBDA"))], status=ItemStatus.AGREED)
    database.dispose()
    url = str(db_path)
    eval_json(url, "--model", ORACLE, "--protocol", "econlogicqa")
    eval_json(url, "--model", ORACLE, "--protocol", "econlogicqa", "--limit", "1")  # econ:1
    one_shot, _, english, _ = stored_runs(url)
    prompt = stored_predictions(url, one_shot.id or 0)["econ:zh"].prompt
    assert prompt.startswith("以下每道题") and "Scenario 99" in prompt  # vetbench's, English shot
    shown = ok(run_cli(url, "runs", "show", str(one_shot.id))).stdout.splitlines()[0]
    assert "econlogicqa protocol, zh items in vetbench layout" in shown
    assert "vetbench layout" not in ok(run_cli(url, "runs", "show", str(english.id))).stdout
    (table,) = json.loads(ok(run_cli(url, "runs", "table", "--json")).stdout)
    titles = [column["title"] for column in table["columns"]]
    assert "ordering 1-shot (econlogicqa, zh items in vetbench layout)" in titles
    assert "ordering 1-shot (econlogicqa)" in titles  # the English-only run, apart


# ------------------------------------------------------------------- the shots


def test_shots_of_an_order_have_its_number_of_events(url: str) -> None:
    eval_json(url, "--model", ORACLE, "--shots", "1", "--kind", "ordering")
    (run,) = stored_runs(url)
    assert run.params["shots_used"]["ordering/en/4"] == [{"id": "shots:1", "revision": 1}]
    assert run.params["shots_used"]["ordering/en/5"] == [{"id": "shots:5", "revision": 1}]
    predictions = stored_predictions(url, run.id or 0)
    assert "E. Event E." not in predictions["econ:1"].prompt.split("Scenario 1:")[0]
    assert "E. Event E." in predictions["econ:5"].prompt.split("Scenario 5:")[0]


def test_shots_of_another_size_fill_in_when_the_pool_has_none_of_its_own() -> None:
    from db.items import ItemSnapshot
    from db.vocabulary import ItemKind
    from evaluator.prompts import select_shots

    def snapshot(item_id: str, labels: str) -> ItemSnapshot:
        return ItemSnapshot(
            id=item_id, kind=ItemKind.ORDERING, source="s", source_ref="", language="en",
            status="approved", revision=1, prompt="p", key=labels[::-1], explanation=None,
            choices={label: label for label in labels},
        )  # fmt: skip

    pool = [snapshot("four", "ABCD"), snapshot("five", "ABCDE")]
    assert [s.id for s in select_shots(pool, "ordering", 2, events=4)] == ["four"]
    assert [s.id for s in select_shots(pool, "ordering", 2, events=5)] == ["five"]
    # No six-event order in the pool: orders of any size fill in.
    assert sorted(s.id for s in select_shots(pool, "ordering", 2, events=6)) == ["five", "four"]


# --------------------------------------------------------------- CFLUE's wording

# A stand-in of CFLUE's utils/format_example.py: the same shape, wording of our own. Its two
# functions differ only in their names and instructions.
_STAND_IN_FUNCTION = '''def NAME(line):
    template = """INSTRUCTIONS

{question}
{choices}"""

    example = template.format(
        question=line["question"],
        choices='\\n'.join([f'{choice}. {content}' for choice, content in eval(line["choices"]).items()])
    )
    return example
'''
STAND_IN = "\n\n".join(
    _STAND_IN_FUNCTION.replace("NAME", name).replace("INSTRUCTIONS", instructions)
    for name, instructions in (
        ("format_one_example", "单选说明第一行。\n单选说明第二行：“答案：”，“解析：”。"),
        ("format_multi_example", "多选说明。"),
    )
)


def stand_in_repository(root: Path, text: str = STAND_IN) -> Path:
    (root / "utils").mkdir(parents=True)
    (root / "utils" / "format_example.py").write_text(text, encoding="utf-8")
    return root


def test_cflue_wording_is_read_from_the_repository_and_recorded(url: str, tmp_path: Path) -> None:
    repository = stand_in_repository(tmp_path / "cflue")
    module = repository / "utils" / "format_example.py"
    eval_json(url, "--model", ORACLE, "--protocol", "cflue", "--cflue-repo", str(repository))
    (run,) = stored_runs(url)
    digest = hashlib.sha256(module.read_bytes()).hexdigest()
    assert run.params["wording"] == {"source": "cflue-repo", "path": str(module), "sha256": digest}
    predictions = stored_predictions(url, run.id or 0)
    # The prompt CFLUE's code builds: the template with the question and the options.
    assert predictions["cflue:1"].prompt == (
        "单选说明第一行。\n单选说明第二行：“答案：”，“解析：”。\n\n"
        "第1题：我国A股市场目前实行的交易制度是（　）。\nA. T+0\nB. T+1\nC. T+2\nD. T+3"
    )
    assert predictions["cflue:3"].prompt.startswith("多选说明。\n\nQuestion 3:")
    assert predictions["cflue:5"].prompt.startswith("单选说明第一行。")  # true/false as single
    table = json.loads(ok(run_cli(url, "runs", "table", "--shape", "cflue", "--json")).stdout)
    labels = [row["label"] for row in table[0]["rows"]]
    assert f"oracle (CFLUE repo (sha256 {digest[:8]}) wording)" in labels


def test_the_built_in_wording_is_named_in_the_table(url: str) -> None:
    eval_json(url, "--model", ORACLE, "--protocol", "cflue")
    (run,) = stored_runs(url)
    assert run.params["wording"] == {"source": "built-in"}
    table = json.loads(ok(run_cli(url, "runs", "table", "--shape", "cflue", "--json")).stdout)
    assert table[0]["rows"][0]["label"] == "oracle (built-in wording)"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (None, "no such file"),
        ("def format_one_example(line):\n    return 1\n", ":1: format_one_example assigns no"),
        (STAND_IN.split("\n\n\ndef format_multi")[0], "no function format_multi_example"),
        (STAND_IN.replace("\n\n{question}\n{choices}", "\n{question}\n{choices}", 1), ":2: the"),
        (STAND_IN.replace("{choice}. {content}", "{choice}: {content}", 1), "writes its options"),
        ("def format_one_example(:\n", ":1: not valid Python"),
    ],
)
def test_a_repository_of_another_shape_is_refused_naming_the_place(
    url: str, tmp_path: Path, text: str | None, message: str
) -> None:
    repository = tmp_path / "cflue"
    if text is None:
        repository.mkdir()
    else:
        stand_in_repository(repository, text)
    result = run_cli(
        url, "eval", "--model", ORACLE, "--protocol", "cflue", "--cflue-repo", str(repository)
    )
    assert result.exit_code != 0 and message in result.stderr, result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert stored_runs(url) == []  # nothing written


def test_cflue_repo_is_only_for_the_cflue_protocol(url: str, tmp_path: Path) -> None:
    repository = stand_in_repository(tmp_path / "cflue")
    result = run_cli(url, "eval", "--model", ORACLE, "--cflue-repo", str(repository))
    assert result.exit_code != 0 and "--protocol cflue" in result.stderr


def test_a_changed_wording_file_stops_a_resume(url: str, tmp_path: Path) -> None:
    from evaluator.backends.scripted import ScriptedBackend
    from evaluator.runner import RunSetupError, create_run, execute_run

    repository = stand_in_repository(tmp_path / "cflue")
    database = open_database(url)
    try:
        backend = ScriptedBackend(oracle=True, model="oracle")
        run_id = create_run(database, backend.info, protocol="cflue", cflue_repo=repository)
        module = repository / "utils" / "format_example.py"
        module.write_text(STAND_IN.replace("多选说明", "另一种说明"), encoding="utf-8")
        with pytest.raises(RunSetupError, match="changed since run"):
            execute_run(database, run_id, backend)
    finally:
        database.dispose()


# ------------------------------------------------------------ the random row


def test_the_simulated_guessers_match_scikit_learn_and_the_expectation() -> None:
    from sklearn.metrics import f1_score

    from db.vocabulary import ItemKind
    from evaluator.metrics import ScoredPrediction, chance_accuracy
    from evaluator.random_baseline import _weighted_f1s, simulated_guessers

    np = pytest.importorskip("numpy")
    rng = np.random.default_rng(7)
    keys, guesses = rng.integers(0, 6, 40), rng.integers(0, 9, (6, 40))
    expected = [f1_score(keys, row, average="weighted", zero_division=0) for row in guesses]
    assert _weighted_f1s(keys, guesses, 9).tolist() == pytest.approx(expected)

    def row(n: int, kind: ItemKind, key: str) -> ScoredPrediction:
        return ScoredPrediction(f"{kind}:{n}", kind, "s", key, None, False, labels=4)

    rows = [row(n, ItemKind.SINGLE, "B") for n in range(40)]
    rows += [row(n, ItemKind.MULTI, "ABD") for n in range(10)]
    rows += [row(n, ItemKind.ORDERING, "DACB") for n in range(10)]
    found = simulated_guessers(rows)
    assert found is not None and found.guessers == 1000
    exact = sum(chance_accuracy(r.kind, r.labels) or 0 for r in rows) / len(rows)
    assert found.accuracy_mean == pytest.approx(exact, abs=3 * found.accuracy_sd / 1000**0.5)
    assert 0 < found.accuracy_sd < 0.2 and found.weighted_f1_sd is not None
    assert simulated_guessers(rows) == found  # seeded: the same every time


def test_the_simulated_guessers_of_the_same_items_are_the_same_in_any_order() -> None:
    """Runs store their predictions in their own order (a release's items by id, others as
    stored): the same items give every table the same random row."""
    from db.vocabulary import ItemKind
    from evaluator.metrics import ScoredPrediction
    from evaluator.random_baseline import simulated_guessers

    keys = {
        ItemKind.SINGLE: "ABCD",
        ItemKind.MULTI: ("AB", "ACD", "D"),
        ItemKind.ORDERING: ("DACB", "ABCD"),
    }
    rows = [
        ScoredPrediction(f"{kind}:{n}", kind, "s", key, None, False, labels=4)
        for kind, choices in keys.items()
        for n, key in enumerate(choices * 5)
    ]
    found = simulated_guessers(rows)
    assert found is not None
    assert simulated_guessers(rows[::-1]) == found
    assert simulated_guessers(sorted(rows, key=lambda row: row.key)) == found


def test_tables_have_a_simulated_random_row_beside_the_exact_one(url: str) -> None:
    eval_json(url, "--model", ORACLE, "--protocol", "cflue")
    (table,) = json.loads(ok(run_cli(url, "runs", "table", "--shape", "cflue", "--json")).stdout)
    rows = {row["label"]: row for row in table["rows"]}
    exact = rows["random choice"]["cells"]
    simulated = rows["random (1,000 simulated guessers)"]["cells"]
    assert exact["weighted_f1"] is None and exact["accuracy"]["sd"] is None
    assert simulated["accuracy"]["n"] == 1000 and simulated["accuracy"]["sd"] > 0
    assert simulated["weighted_f1"]["mean"] > 0 and simulated["weighted_f1"]["sd"] > 0
    assert abs(simulated["accuracy"]["mean"] - exact["accuracy"]["mean"]) < 0.02
    text = ok(run_cli(url, "runs", "table", "--shape", "cflue")).stdout
    assert "random (1,000 simulated guessers)" in text and "±" in text


# --------------------------------------------------------------- stripping


@pytest.mark.parametrize(
    ("output", "official"),
    [
        # CFLUE's code counts the lines of the response as written: a trailing line break
        # makes three lines, read whole. Stripped first, these read A, nothing and B.
        ("A项错误\n答案：B\n", "B"),
        ("解析：选A\n答案：B\n", "B"),
        ("\n答案：B", None),  # two lines, the first empty: CFLUE's "X"
        ("好的\n答案：B\n", "B"),
        ("B\n解析：答案：A不对\n", "A"),  # three lines: its first 答案 wins
        ("\n答案：C\n解析：……\n\n", "C"),
        ("答案：C\n解析：……", "C"),  # two lines: the first is read
        ("好的\n答案：C", None),
    ],
)
def test_cflues_reader_counts_the_lines_of_the_output_as_written(
    output: str, official: str | None
) -> None:
    from evaluator.extractors import read_answers

    assert read_answers(["cflue"], "single", output, "ABCD") == {"cflue": official}


def test_the_other_readers_read_the_output_stripped() -> None:
    from evaluator.extractors import read_answers

    assert read_answers(["lenient"], "single", "\n\n答案：B\n", "ABCD") == {"lenient": "B"}
    read = read_answers(["econlogicqa-start", "econlogicqa"], "ordering", "\n D, A, C, B\n", "ABCD")
    assert read == {"econlogicqa-start": "DACB", "econlogicqa": "DACB"}


# ------------------------------------------------------------- lengths in tokens


def test_item_lengths_count_tokens_of_the_runs_own_tokenizer(
    tmp_path_factory: pytest.TempPathFactory, db_path: Path
) -> None:
    from tiny_model import tiny_model_dir

    from evaluator.item_lengths import token_lengths
    from evaluator.run_params import RunParams
    from evaluator.table_breakdowns import length_bucket

    model = tiny_model_dir(tmp_path_factory)
    database = open_database(db_path)
    try:
        store(database, [("econ:1", ordering(1))])
        draft = ordering(1)
        characters = len(draft.prompt) + sum(len(text) for text in draft.choices.values())
        lengths = token_lengths(database, RunParams(backend={"model_path": str(model)}), ["econ:1"])
        assert lengths is not None and 0 < lengths["econ:1"] < characters
        assert length_bucket(lengths["econ:1"], "tokens").endswith(" tokens")
        # A run without a local tokenizer (an API or scripted model) is counted in characters.
        assert token_lengths(database, RunParams(), ["econ:1"]) is None
    finally:
        database.dispose()


def test_a_set_written_out_of_order_stays_wrong_for_cflues_reader_when_permuted(
    url: str, tmp_path: Path
) -> None:
    """CFLUE's rule keeps letters as written: ``答案：DBA`` is wrong for the key ABD. Shown
    permuted, the same answer (the shown key written backwards) was mapped back and put in
    order, and scored right: the permuted figure was not CFLUE's rule."""
    from evaluator.generation.option_shuffle import shuffle_options

    item = multi_en(3, "ABD")
    shown = shuffle_options(item.choices, item.key, item.kind, seed="7:cflue:3")
    for permute, written in ((False, item.key), (True, shown.key)):
        path = tmp_path / f"backwards-{permute}.json"
        path.write_text(json.dumps({"cflue:3": f"答案：{written[::-1]}"}), encoding="utf-8")
        extra = ["--permute-options"] if permute else []
        model = f"scripted:{path}"
        data = eval_json(
            url, "--model", model, "--protocol", "cflue", "--kind", "multi", "--seed", "7", *extra
        )
        prediction = stored_predictions(url, data["run_id"])["cflue:3"]
        assert prediction.scores.get("option_order") == (shown.source_labels if permute else None)
        assert prediction.correct is False, (permute, prediction.parsed_answer)
        assert prediction.scores["extracted"]["lenient"] == "ABD"  # the lenient reader sorts


def test_the_oracles_perfect_explanations_are_perfect(url: str) -> None:
    """The rouge package scores a perfect match 0.999999995 (its 1e-8 in the F-score), and
    the JSON said so (rouge_2 0.99999999500…): its F is now taken from its precision and
    recall without it, 1 exactly; printed, 100.0%, not a rounded-down 99.9%."""
    data = eval_json(url, "--model", ORACLE, "--protocol", "cflue")
    for name in ("bleu_1", "bleu_4", "rouge_1", "rouge_2", "rouge_l"):
        assert data[name] == 1.0, name
    shown = ok(run_cli(url, "runs", "show", str(data["run_id"]))).stdout
    assert "BLEU-1/4      100.0%/100.0%" in shown
    assert "ROUGE-1/2/L   100.0%/100.0%/100.0%" in shown


def test_an_explanation_of_the_same_single_word_scores_rouge_2_one() -> None:
    """Ten real CFLUE analyses read just "略" (omitted): the rouge package finds no bigram
    in a one-word pair and scored the oracle's ROUGE-2 0 on them (99.6% over 300 real
    items); the same words are a perfect match.  Other words still score 0."""
    from evaluator.text_metrics import score_explanation

    same = score_explanation("A\n解析：略", "略")
    assert (same.rouge_1, same.rouge_2, same.rouge_l) == (1.0, 1.0, 1.0)
    other = score_explanation("A\n解析：无", "略")
    assert (other.rouge_1, other.rouge_2, other.rouge_l) == (0.0, 0.0, 0.0)

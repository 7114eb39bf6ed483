"""Reading generated items in both shapes (JSON and plain text), option shuffles with the key
remapped, and the checks generation adds to the import validators."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from db.vocabulary import ItemKind
from evaluator.generation.option_shuffle import remap_letter_references, shuffle_options
from evaluator.generation.parsing import ResponseParseError, parse_generated

ECON_SHAPE = """Here is the question.

**Scenario:** A coffee chain faces rising bean costs after a frost.
A. The chain raises drink prices.
B. Frost damages crops in Brazil.
C. Wholesale arabica prices climb.
D. Margins on lattes shrink.
**Correct Order:** B, C, D, A
**Explanation:** The frost cuts supply, so prices climb;
margins shrink until the chain raises prices.
"""


def test_the_econlogicqa_plain_text_shape() -> None:
    parsed = parse_generated(ECON_SHAPE)
    assert parsed.shape == "text"
    assert parsed.prompt == "A coffee chain faces rising bean costs after a frost."
    assert parsed.choices == {
        "A": "The chain raises drink prices.",
        "B": "Frost damages crops in Brazil.",
        "C": "Wholesale arabica prices climb.",
        "D": "Margins on lattes shrink.",
    }
    assert parsed.key == "B, C, D, A"
    assert parsed.explanation is not None and parsed.explanation.endswith("raises prices.")


@pytest.mark.parametrize(
    ("text", "choices", "key"),
    [
        (
            "Question: Which is true?\nChoices: A. one B. two C. three D. four\nAnswer: C",
            {"A": "one", "B": "two", "C": "three", "D": "four"},
            "C",
        ),
        (
            "Question: Which is true? Choices: A. one B. Plan B. two C. three\nAnswer: A, C",
            {"A": "one", "B": "Plan B. two", "C": "three"},
            "A, C",
        ),
        (
            "Scenario: s\nEvents:\n(A) a\n(B) b\n(C) c\n(D) d\n"
            "Correct Order: The correct order is D -> B -> A -> C.",
            {"A": "a", "B": "b", "C": "c", "D": "d"},
            "D -> B -> A -> C",
        ),
        (
            "情景：某公司……\nA、事件一\nB、事件二\nC、事件三\nD、事件四\n正确顺序：D、C、A、B\n解析：因为……",
            {"A": "事件一", "B": "事件二", "C": "事件三", "D": "事件四"},
            "D、C、A、B",
        ),
    ],
    ids=["choices-line", "inline-choices", "arrows", "chinese"],
)
def test_plain_text_variants(text: str, choices: dict[str, str], key: str) -> None:
    parsed = parse_generated(text)
    assert parsed.choices == choices
    assert parsed.key == key


def test_json_in_a_code_fence_keeps_the_key_as_written() -> None:
    body = {
        "scenario": "S",
        "events": {"A": "a", "B": "b", "C": "c", "D": "d"},
        "correct_order": "D, A, C, A",
        "explanation": "x",
    }
    parsed = parse_generated(f"```json\n{json.dumps(body)}\n```")
    assert parsed.shape == "json"
    assert parsed.prompt == "S" and parsed.key == "D, A, C, A"
    assert parsed.choices == {"A": "a", "B": "b", "C": "c", "D": "d"}


def test_json_lists_of_events_and_answers() -> None:
    parsed = parse_generated(
        '{"question": "Q?", "options": ["A. x", "y", "z"], "answer": ["A", "C"]}'
    )
    assert parsed.choices == {"A": "x", "B": "y", "C": "z"}
    assert parsed.key == "A, C"


def test_a_rewrite_needs_only_a_question() -> None:
    assert parse_generated("Question: 新的问法？", want_choices=False).prompt == "新的问法？"
    assert parse_generated('{"question": "Reworded?"}', want_choices=False).prompt == "Reworded?"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "empty"),
        ("Scenario: x\nA. a\nB. b", "no 'Correct Order:' or 'Answer:' line"),
        ("just words", "no 'Scenario:' or 'Question:'"),
        ("Scenario: x\nCorrect Order: A, B", "no events or choices"),
        ('{"scenario": "s", "events": {"A": "a"}}', "no correct order"),
        ('{"events": {"A": "a"}, "correct_order": "A"}', "no scenario or question"),
    ],
)
def test_unreadable_answers_say_what_is_missing(text: str, message: str) -> None:
    with pytest.raises(ResponseParseError, match=message):
        parse_generated(text)


def test_option_shuffles_are_seeded_and_remap_the_key() -> None:
    choices = {"A": "a", "B": "b", "C": "c", "D": "d"}
    first = shuffle_options(choices, "ABD", ItemKind.MULTI, "seed:1")
    assert first == shuffle_options(choices, "ABD", ItemKind.MULTI, "seed:1")
    assert first.choices != choices and sorted(first.choices.values()) == ["a", "b", "c", "d"]
    assert {first.choices[letter] for letter in first.key} == {"a", "b", "d"}
    assert first.key == "".join(sorted(first.key))
    # An order keeps its sequence: the same events, in the same logical order.
    order = shuffle_options(choices, "ABCD", ItemKind.ORDERING, "seed:2")
    assert [order.choices[letter] for letter in order.key] == ["a", "b", "c", "d"]
    # True/false keeps A = true.
    tf = shuffle_options({"A": "对", "B": "错"}, "B", ItemKind.TRUEFALSE, "seed:3")
    assert tf.choices == {"A": "对", "B": "错"} and tf.key == "B"


def test_explanations_follow_their_options() -> None:
    mapping = {"A": "C", "B": "A", "C": "D", "D": "B"}
    text = (
        "选项D正确；选项AB错误；C项不对；D选项对。Option B is wrong, and so is (C). A firm B. grew."
    )
    assert remap_letter_references(text, mapping, ItemKind.MULTI) == (
        "选项B正确；选项AC错误；D项不对；B选项对。Option A is wrong, and so is (D). A firm B. grew."
    )
    # An analysis stating its answer states it in the new labels: a set in order.
    stated = "故选A。答案为A、C。本题选ABD。因此正确答案是B。（A正确）The answer is D."
    assert remap_letter_references(stated, mapping, ItemKind.MULTI) == (
        "故选C。答案为C、D。本题选ABC。因此正确答案是A。（C正确）The answer is B."
    )
    # An order keeps its sequence, every letter of it mapped.
    order = "The correct order is D, A, C, B. Correct Order: D -> A -> C -> B."
    assert remap_letter_references(order, mapping, ItemKind.ORDERING) == (
        "The correct order is B, C, D, A. Correct Order: B -> C -> D -> A."
    )


# A bracket names options when it closes right after the letters or judges them; （A股）,
# （B股）, （H股） and (A shares) are shares.  Before, every opening bracket followed by a
# letter was an option reference: under --permute-options （A股） came back （C股）.
SHARES_MAPPING = {"A": "C", "B": "A", "C": "D", "D": "B"}


@pytest.mark.parametrize(
    ("analysis", "remapped"),
    [
        (
            "境内上市外资股（B股）以人民币标明面值，以外币认购和买卖；（A股）则以人民币认购。"
            "选项A错误，（B正确）。在香港上市的（H股）不属于本题范围。故选B。",
            "境内上市外资股（B股）以人民币标明面值，以外币认购和买卖；（A股）则以人民币认购。"
            "选项C错误，（A正确）。在香港上市的（H股）不属于本题范围。故选A。",
        ),
        (
            "Mainland firms issue (A shares) to domestic investors and (B shares) to foreign "
            "ones, (A shares) being priced in yuan. (C) is wrong; (D is correct). The answer is D.",
            "Mainland firms issue (A shares) to domestic investors and (B shares) to foreign "
            "ones, (A shares) being priced in yuan. (D) is wrong; (B is correct). The answer is B.",
        ),
    ],
    ids=["chinese", "english"],
)
def test_bracketed_share_classes_are_not_option_references(analysis: str, remapped: str) -> None:
    assert remap_letter_references(analysis, SHARES_MAPPING, ItemKind.SINGLE) == remapped


@pytest.mark.parametrize(
    ("bracketed", "remapped"),
    [
        ("（A）", "（C）"),
        ("(B)", "(A)"),
        ("（A、C）", "（C、D）"),
        ("(A, D )", "(B, C )"),
        ("（A正确）", "（C正确）"),
        ("（B错误）", "（A错误）"),
        ("（C不正确）", "（D不正确）"),
        ("（D对）", "（B对）"),
        ("（A错，", "（C错，"),
        ("（B项错误）", "（A项错误）"),
        ("（A选项正确）", "（C选项正确）"),
        ("（AC两项）", "（CD两项）"),
        ("（A、C均正确）", "（C、D均正确）"),
        ("（D：错）", "（B：错）"),
        ("（B说法错误）", "（A说法错误）"),
        ("(C is wrong)", "(D is wrong)"),
        ("(B is the answer)", "(A is the answer)"),
        # Not references: share classes, and 对 starting a word.
        ("（A股）", "（A股）"),
        ("(B shares)", "(B shares)"),
        ("（A对于B）", "（A对于B）"),
        ("（A对B公司的投资）", "（A对B公司的投资）"),
    ],
)
def test_a_bracketed_letter_is_a_reference_when_closed_or_judged(
    bracketed: str, remapped: str
) -> None:
    assert remap_letter_references(bracketed, SHARES_MAPPING, ItemKind.MULTI) == remapped


def _shown_as(order: str) -> dict[str, str]:
    """Old label -> new label when the options are shown in ``order`` ("ACBD": new B = old C)."""
    return {old: "ABCD"[index] for index, old in enumerate(order)}


# knowledge:181 and knowledge:2524, as stored.
ANSWER_THEN_OTHERS = "20亿元。故选D，ABC选项根据题意，无法判断得出。"
TWO_PAIRS = "选项A 和B 属于一般性保护条款，选项C 和D 属于特殊性保护条款。"


def test_sets_of_letters_split_by_a_comma_or_joined_by_he_are_mapped_each_as_their_own() -> None:
    """Before, "D，ABC" was one set, mapped, sorted and split back into the old slots
    ("故选A，BCD选项": the lenient reader read A), and of "选项A 和B" only A was mapped
    ("选项D 和B …，选项A 和D": D in both groups)."""
    assert remap_letter_references(ANSWER_THEN_OTHERS, _shown_as("ACBD"), ItemKind.SINGLE) == (
        ANSWER_THEN_OTHERS  # D stays D; A, C, B are still the other three, in order
    )
    assert remap_letter_references(TWO_PAIRS, _shown_as("CDBA"), ItemKind.MULTI) == (
        "选项C 和D 属于一般性保护条款，选项A 和B 属于特殊性保护条款。"
    )
    for text, order, remapped in [
        ("B和C项属于协议承诺", "CDBA", "A和C项属于协议承诺"),
        ("选项A、B，C属于纳税人", "DCAB", "选项C、D，B属于纳税人"),
        ("应为AC，B选项不选", "DCAB", "应为BC，D选项不选"),
    ]:
        assert remap_letter_references(text, _shown_as(order), ItemKind.MULTI) == remapped


def test_every_real_cflue_analysis_maps_back_and_states_the_same_answer(
    cflue_knowledge: Path,
) -> None:
    """Every real analysis, permuted and mapped back, is the analysis (its sets in order),
    and the lenient reader reads the same answer from it, permuted or not."""
    import ast

    from evaluator.extraction import extract_choices

    records = json.loads(cflue_knowledge.read_text(encoding="utf-8"))
    kinds = {"单项选择题": ItemKind.SINGLE, "多项选择题": ItemKind.MULTI}
    changed = []
    for number, record in enumerate(records, 1):
        if record["task"] not in kinds or not record["analysis"]:
            continue
        choices = ast.literal_eval(record["choices"])
        kind = kinds[record["task"]]
        shuffled = shuffle_options(choices, record["answer"], kind, f"{number}")
        there = shuffled.new_label()
        back = {new: old for old, new in there.items()}
        analysis = record["analysis"]
        shown = remap_letter_references(analysis, there, kind)
        in_order = remap_letter_references(analysis, {x: x for x in choices}, kind)
        read = extract_choices(f"答案：{record['answer']}\n解析：{analysis}", list(choices))
        read_shown = extract_choices(f"答案：{shuffled.key}\n解析：{shown}", list(choices))
        read_back = None if read_shown is None else shuffled.to_source(read_shown, kind)
        if remap_letter_references(shown, back, kind) != in_order or read_back != read:
            changed.append(f"knowledge:{number}")
    assert changed == []

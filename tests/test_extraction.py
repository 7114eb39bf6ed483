"""Answer extraction over the shapes real models produce, including prose that only looks like one."""

from __future__ import annotations

import pytest

from db.vocabulary import ItemKind
from evaluator.kinds import kind_spec

FOUR = "ABCD"
FIVE = "ABCDE"


def extract_answer(kind: ItemKind | str, output: str, labels: str) -> str | None:
    """The answer the run loop reads: the extraction step of the kind's specification."""
    return kind_spec(kind).extract(output, labels)


ORDERING_SHAPES: list[tuple[str, str]] = [
    # bare replies after a prompt that ends with "Answer:"
    (" D, A, C, B", "DACB"),
    ("DACB", "DACB"),
    ("D,A,C,B", "DACB"),
    ("D A C B", "DACB"),
    (" D, A, C, B\n\nQuestion: A retailer cuts prices.", "DACB"),
    # arrows, chevrons, dashes, brackets
    ("D -> A -> C -> B", "DACB"),
    ("D→A→C→B", "DACB"),
    ("D > A > C > B", "DACB"),
    ("D=>A=>C=>B", "DACB"),
    ("D-A-C-B", "DACB"),
    ("(D) (A) (C) (B)", "DACB"),
    ("(D)(A)(C)(B)", "DACB"),
    ("[D, A, C, B]", "DACB"),
    ("\\boxed{DACB}", "DACB"),
    # sentences and markers
    ("The correct order is D, A, C, B.", "DACB"),
    ("Answer: D, A, C, B", "DACB"),
    ("The answer is DACB.", "DACB"),
    ("The events should be ordered as follows: D, A, C, B", "DACB"),
    ("First D, then A, then C, and finally B.", "DACB"),
    ("D, A, C, and B", "DACB"),
    ("D then A then C then B", "DACB"),
    ("Event D, Event A, Event C, Event B", "DACB"),
    # markdown
    ("**D, A, C, B**", "DACB"),
    ("**Answer:** D → A → C → B", "DACB"),
    ("`DACB`", "DACB"),
    # numbered and line lists
    ("1. D 2. A 3. C 4. B", "DACB"),
    ("The correct order is: 1) D 2) A 3) C 4) B", "DACB"),
    ("1. D\n2. A\n3. C\n4. B", "DACB"),
    ("1. D. The firm cuts prices\n2. A. Rivals follow\n3. C. Margins fall\n4. B. Exit", "DACB"),
    ("1. D\nbecause costs rise first\n2. A\n3. C\n4. B", "DACB"),
    ("Step 1: D\nStep 2: A\nStep 3: C\nStep 4: B", "DACB"),
    ("D. The firm cuts prices\nA. Rivals follow\nC. Margins fall\nB. Exit", "DACB"),
    # reasoning, then a final answer: the last answer wins
    (
        "Let's think. Event D causes A, and A must come before C. So the answer is: D, A, C, B",
        "DACB",
    ),
    ("Answer: A, B, C, D\nWait, actually the correct order is D, A, C, B.", "DACB"),
    ("Answer: D, A, C, B.\nFinal answer: D, A, B, C", "DABC"),
    ("The order is D, A, C, B. A happens after D.", "DACB"),
    ("D, A, C, B\n\nExplanation: D happens first because A needs it.", "DACB"),
    # Chinese and full-width punctuation
    ("答案：D、A、C、B。", "DACB"),
    ("正确的顺序是：Ｄ，Ａ，Ｃ，Ｂ", "DACB"),
    ("D→A→C→B（因为成本先上升）", "DACB"),
    # issue 14: outputs the lenient extractor used to read wrongly
    ("c, a, b, d", "CABD"),
    ("c -> a -> b -> d", "CABD"),
    ("answer: d, a, c, b", "DACB"),
    ("C\nA\nB\nD", "CABD"),
    ("C\nA\nB\nD\n", "CABD"),
    ("Answer: C, A, B, D (C first, then A…)", "CABD"),
    ("Correct Order: C, A, B, D. The listed order A, B, C, D is wrong because…", "CABD"),
    # a later marked answer still wins over an earlier one
    ("Correct Order: A, B, C, D\nOn reflection, the correct order is C, A, B, D.", "CABD"),
]

ORDERING_NON_ANSWERS: list[str] = [
    "",
    "   \n",
    "I don't know.",
    # the article "A" and other capitals in prose are not answers
    "A company raises prices. Demand falls.",
    "A rise in rates makes A firm cut B spending.",
    "Answer: A company raises prices",
    "The U.S. Fed raised rates in Q1.",
    "A) x B) y",
    # only a true permutation counts
    "D, A, C, C",
    "Answer: D, A, C",
    "Answer: D, A, C, E",
    "D, A, C, B, A",
    "Answer: D, A, C, B.\nFinal answer: D, A, A, C",
    # hedges naming two whole orders are no answer
    "The answer is D, A, C, B or D, A, B, C.",
    "It could be D, A, C, B or A, D, C, B.",
    "答案：D、A、C、B或D、A、B、C",
    # two different whole orders and no marker choosing one: a hedge, however worded
    "D, B, C, A, but maybe D, B, A, C",
    "D, A, C, B. Alternatively, D, A, B, C.",
    "Either D, A, C, B, or maybe D, A, B, C",
    "Listed as A, B, C, D the events are out of order: D, A, C, B",
    # lower-case letters count only as a whole order with explicit separators
    "answer: d a c b",
    "a, b, c",
    "Answer: a firm, then b",
]


def test_ordering_with_five_events() -> None:
    assert extract_answer("ordering", "E, A, D, C, B", FIVE) == "EADCB"
    assert extract_answer("ordering", "Answer: E, A, D, C", FIVE) is None
    # four letters are a whole order for a four-event item only
    assert extract_answer("ordering", "The events go D, A, C, B here.", FIVE) is None


def test_an_order_then_its_events_restated_is_two_orders_and_unparsed() -> None:
    # two different whole orders, no marker choosing one (it read ABCD, the restated list)
    output = "D, A, C, B\nA. first event\nB. second\nC. third\nD. fourth"
    assert extract_answer("ordering", output, FOUR) is None
    # a marker chooses: the marked order wins over the restated list
    assert extract_answer("ordering", "Answer: " + output, FOUR) == "DACB"


SINGLE_SHAPES: list[tuple[str, str]] = [
    ("答案：B", "B"),
    ("答案:\nC", "C"),
    ("正确答案是B", "B"),
    ("故选C。", "C"),
    ("The answer is (B)", "B"),
    ("The answer is A.", "A"),
    ("The answer is A, because the price falls.", "A"),
    ("ANSWER: C", "C"),
    ("A", "A"),
    (" B\n\n", "B"),
    ("B. 5%", "B"),
    ("B: 5%", "B"),
    ("A. T+0", "A"),
    ("**B**", "B"),
    ("Explanation first.\n\n(C)", "C"),
    ("A is incorrect. B is correct.", "B"),
    ("选项A错误，选项B正确", "B"),
    ("I think the answer is C because A is too small.", "C"),
    ("Answer: B. C is wrong because it ignores taxes.", "B"),
    ("Answer: A\nExplanation: A company's costs rise.", "A"),
    ("答案：A\n解析：A股实行T+1，B、C错误", "A"),
    # several letters on a single-answer item: returned, so it is scored wrong
    ("答案：AB", "AB"),
    ("答案：B、A", "AB"),
    # issue 14: an explicit answer marker wins over letters in the explanation after it
    ("答案：B\n解析：选项A正确的说法应当是“不得”。", "B"),
    ("答案：D\n解析：选项A、B、C正确，D错误。", "D"),
    # a letter run does not continue across " ("
    ("答案：C (A、B项均错误)", "C"),
    ("答案：C（A、B项均错误）", "C"),
    ("因此本题选C。", "C"),
    ("所以本题应选B。", "B"),
    ("不选A，选D。", "D"),
]

SINGLE_NON_ANSWERS: list[str] = [
    "A company that issues bonds ...",
    "Plan B seems fine.",
    "Type A personality is B-rated",
    "The U.S. Fed raised rates in Q1.",
    "我国A股市场实行T+1",
    "答案：E",  # not one of the four choices
    "answer: c",
    "",
    # letters offered as alternatives are no answer (they were read as the set AB)
    "A or B",
    "The answer is A or B.",
    "答案：A或B",
    "答案是A还是B",
    "答案：A或者B",
    "B or C, probably B",
    "A/B",
    "答案：A/B",
]

MULTI_SHAPES: list[tuple[str, str]] = [
    ("答案：ABD", "ABD"),
    ("A、B、D", "ABD"),
    ("答案：A，B，D", "ABD"),
    ("答案：D、B、A、B", "ABD"),  # deduplicated and sorted
    ("CAD", "ACD"),
    ("(A)(B)(D)", "ABD"),
    ("The answers are A and C.", "AC"),
    ("A, C", "AC"),
    ("Option B and option D are correct.", "BD"),
    ("答案是B和D", "BD"),
    # a hedge after an answer that commits is not the winning span
    ("Answer: C. Either A or B could be argued.", "C"),
    # letters past a comma named as options are a remark on them, not chosen (read ABC,
    # ABCD, ABCD, ABC before); letters written as the answer's options still count
    ("答案：AC\n解析：本题的正确答案应为AC，B选项不选，D也不选。", "AC"),
    ("答案：D\n解析：……故选D，ABC选项根据题意，无法判断得出。", "D"),
    ("答案：AC，B、D选项错误", "AC"),
    ("Answer: AC, B option is wrong", "AC"),
    ("答案：A、B项", "AB"),
    ("答案：BD项", "BD"),
]

MULTI_NON_ANSWERS = ["The answer is A or B.", "答案：A或B", "A, B or D", "A/B", "Answer: A/B/D"]


def test_fifth_choice_is_read_when_the_item_has_it() -> None:
    assert extract_answer("single", "答案：E", FIVE) == "E"
    assert extract_answer("multi", "答案：ACE", FIVE) == "ACE"


TRUEFALSE_SHAPES: list[tuple[str, str]] = [
    ("对", "A"),
    ("错", "B"),
    ("答案：对。解析：……", "A"),
    ("答案：错误", "B"),
    ("答案：正确", "A"),
    ("不正确。", "B"),
    ("该说法正确。", "A"),
    ("True", "A"),
    ("False.", "B"),
    ("Answer: True", "A"),
    ("The statement is false.", "B"),
    ("答案：B", "B"),
    ("答案：A（对）", "A"),
    ("AB", "AB"),  # both: scored wrong, not unparsed
]

TRUEFALSE_NON_ANSWERS = ["对于这个问题，需要具体分析。", "It depends.", "答案：C"]

# What each kind reads from the outputs above, and what it refuses: one test each, over
# every kind, since the rule is the same for all (the kind's extractor, its item's labels).
LABELS = {
    ItemKind.ORDERING: FOUR,
    ItemKind.SINGLE: FOUR,
    ItemKind.MULTI: FOUR,
    ItemKind.TRUEFALSE: "AB",
}
SHAPES = {
    ItemKind.ORDERING: ORDERING_SHAPES,
    ItemKind.SINGLE: SINGLE_SHAPES,
    ItemKind.MULTI: MULTI_SHAPES,
    ItemKind.TRUEFALSE: TRUEFALSE_SHAPES,
}
NON_ANSWERS = {
    ItemKind.ORDERING: ORDERING_NON_ANSWERS,
    ItemKind.SINGLE: SINGLE_NON_ANSWERS,
    ItemKind.MULTI: MULTI_NON_ANSWERS,
    ItemKind.TRUEFALSE: [*TRUEFALSE_NON_ANSWERS, "A or B", "答案：对或错"],
}


@pytest.mark.parametrize(
    ("kind", "output", "expected"),
    [(kind, output, expected) for kind, rows in SHAPES.items() for output, expected in rows],
)
def test_answer_shapes(kind: ItemKind, output: str, expected: str) -> None:
    assert extract_answer(kind, output, LABELS[kind]) == expected


@pytest.mark.parametrize(
    ("kind", "output"), [(kind, output) for kind, rows in NON_ANSWERS.items() for output in rows]
)
def test_non_answers(kind: ItemKind, output: str) -> None:
    assert extract_answer(kind, output, LABELS[kind]) is None


def test_results_are_canonical_for_db_answers() -> None:
    from db.answers import is_canonical

    for kind, output, labels in [
        ("ordering", "d -> x, D > A > C > B", FOUR),
        ("multi", "答案：D、B、A", FOUR),
        ("truefalse", "错", "AB"),
    ]:
        answer = extract_answer(kind, output, labels)
        assert answer is not None
        assert is_canonical(kind, answer, labels)


def test_unknown_kind_is_an_error() -> None:
    with pytest.raises(ValueError):
        extract_answer("essay", "A", FOUR)

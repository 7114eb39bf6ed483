"""Near-duplicate detection as a pure function over texts: correct matches, no false ones,
and the blocking finds what an exhaustive comparison finds without comparing every pair."""

from __future__ import annotations

import itertools
import random
from contextlib import closing
from pathlib import Path

import numpy as np
import pytest
from rapidfuzz import fuzz, process

from bench.bench_import import noisy_copy
from db.canonical_text import item_text, normalize
from db.dedup import DuplicateMatch, candidate_pairs, find_near_duplicates, near_duplicates
from db.differences import ItemText, describe_differences
from db.spill import TextSpill
from db.text_sources import InMemoryTexts, WithoutPositions

# Pseudo-English: words of letters drawn with English letter frequencies, used with
# Zipf-like word frequencies, so that, as in real text, a few words are very common.
_LETTERS = "eeeeeeeeeeeettttttttaaaaaaaooooooiiiiiinnnnnnsssssshhhhhrrrrrddddllllucmwfgypbvkjxqz"
_WORD_RNG = random.Random(2026)
VOCABULARY = sorted(
    {"".join(_WORD_RNG.choices(_LETTERS, k=_WORD_RNG.randint(2, 9))) for _ in range(5000)}
)
_WORD_RNG.shuffle(VOCABULARY)
_CUMULATIVE = list(itertools.accumulate(1 / (rank + 1) for rank in range(len(VOCABULARY))))
HANZI = "货币政策银行利率通胀市场资本证券基金保险期货会计审计税收财政债券股票汇率贷款存款风险收益"


def english(rng: random.Random, words: int = 25) -> str:
    return " ".join(rng.choices(VOCABULARY, cum_weights=_CUMULATIVE, k=words))


def chinese(rng: random.Random, chars: int = 60) -> str:
    return "".join(rng.choice(HANZI) for _ in range(chars))


def exhaustive(texts: list[str], threshold: float, first_new: int = 0) -> dict[int, float]:
    """Best earlier similarity for each later text, by comparing every pair."""
    normalized = [normalize(t) for t in texts]
    scores = process.cdist(normalized, normalized, scorer=fuzz.ratio, dtype=np.float32)
    best: dict[int, float] = {}
    for index in range(max(first_new, 1), len(texts)):
        earlier = scores[index, :index]
        if earlier.max() >= threshold:
            best[index] = float(earlier.max())
    return best


def test_exact_and_near_copies_point_at_the_earlier_text() -> None:
    texts = [
        "Which of the following is a monetary policy tool? A. open market operations",
        "Which of the following is a fiscal policy tool? A. government spending on roads",
        "which of the following is a  monetary policy tool?  A. open market operations",
        "Which of the following is the monetary policy tool ? A. open-market operations",
    ]
    matches = find_near_duplicates(texts, threshold=90)
    assert set(matches) == {2, 3}
    assert (matches[2].of, matches[2].similarity) == (0, 100.0)  # case and spaces only
    # punctuation and spacing do not count; "a" -> "the" does
    assert matches[3].of in (0, 2) and 90 <= matches[3].similarity < 100
    assert matches[3].similarity == pytest.approx(
        fuzz.ratio(normalize(texts[3]), normalize(texts[matches[3].of])), abs=0.01
    )


def test_chinese_text_is_compared_by_characters() -> None:
    texts = [
        "中国人民银行下调法定存款准备金率，通常会导致（　）。A. 商业银行可用于放贷的资金增加",
        "中国人民银行下调法定存款准备金率，一般会导致（　）。A. 商业银行可用于放贷的资金增加",
        "下列各项中，属于企业流动负债的是（　）。A. 应付账款 B. 长期借款",
    ]
    matches = find_near_duplicates(texts, threshold=90)
    assert list(matches) == [1] and matches[1].of == 0


def test_the_threshold_is_respected() -> None:
    base = "A bakery buys a new oven on credit and repays the loan over two years."
    near = base.replace("two years", "three years")
    similarity = fuzz.ratio(normalize(base), normalize(near))
    assert list(find_near_duplicates([base, near], threshold=similarity - 0.5)) == [1]
    assert find_near_duplicates([base, near], threshold=similarity + 0.5) == {}


def test_texts_before_first_new_are_matched_against_but_never_marked() -> None:
    stored = ["Open market operations are a tool of the central bank, said the report."] * 2
    new = [stored[0] + "!", "Something else entirely about harvests and tariffs on grain."]
    matches = find_near_duplicates(stored + new, threshold=90, first_new=2)
    assert set(matches) == {2}  # the stored copy (index 1) is left alone
    assert matches[2].of == 0


def test_the_most_similar_earlier_text_wins() -> None:
    rng = random.Random(3)
    base = english(rng, 30)
    farther = noisy_copy(rng, base, 6, "abcdefgh")
    closer = noisy_copy(rng, base, 1, "abcdefgh")
    later = base + "."
    matches = find_near_duplicates([farther, closer, later], threshold=80)
    assert matches[2].of == 1 or matches[2].similarity == pytest.approx(
        fuzz.ratio(normalize(later), normalize(farther)), abs=0.01
    )
    assert matches[2].similarity == pytest.approx(
        max(fuzz.ratio(normalize(later), normalize(t)) for t in (farther, closer)), abs=0.01
    )


def test_short_empty_and_unrelated_texts_do_not_match() -> None:
    assert find_near_duplicates(["", "a", "ab", "xyz", "uvw"], threshold=90) == {}
    assert find_near_duplicates([], threshold=90) == {}
    assert list(find_near_duplicates(["ab", "ab"], threshold=90)) == [1]


def test_item_text_is_the_prompt_and_the_sorted_choice_texts_without_labels() -> None:
    assert item_text("Q?", {"A": "y", "B": "x"}) == "q\x1fx\x1fy"
    assert item_text("Q?", {"A": "x", "B": "y"}) == item_text("Q?", {"A": "y", "B": "x"})
    assert item_text("3. Q?", {"A": "A. x", "B": "(2) y"}) == "q\x1fx\x1fy"


@pytest.fixture(params=["exact", "chunked"])
def counting(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Both ways of counting n-grams: exact (what fits in memory), and in chunks with
    bucketed counts (what very large imports use), forced here on small data."""
    if request.param == "chunked":
        import db.dedup

        monkeypatch.setattr(db.dedup, "EXACT_CHARS", 0)
        monkeypatch.setattr(db.dedup, "CHUNK_TEXTS", 97)
        monkeypatch.setattr(db.dedup, "PAIR_KEYS_PER_BLOCK", 5000)
    return str(request.param)


@pytest.mark.parametrize("language", ["english", "chinese"])
def test_blocking_finds_what_comparing_every_pair_finds(language: str, counting: str) -> None:
    rng = random.Random(7)
    make, alphabet = (english, "abcdefghij ") if language == "english" else (chinese, HANZI)
    texts: list[str] = []
    for _ in range(120):
        original = make(rng)
        texts.append(original)
        for edits in (1, 3, 6, 12, 25):
            texts.append(noisy_copy(rng, original, edits, alphabet))
    rng.shuffle(texts)
    threshold = 90.0
    expected = exhaustive(texts, threshold)
    found = find_near_duplicates(texts, threshold=threshold)
    assert len(expected) > 150  # the data really has near-duplicates at every distance
    missed = set(expected) - set(found)
    assert len(missed) <= len(expected) // 100  # at least 99% recall
    assert set(found) <= set(expected)  # never a false match
    for index, match in found.items():
        assert match.of < index
        assert match.similarity == pytest.approx(
            fuzz.ratio(normalize(texts[index]), normalize(texts[match.of])), abs=0.01
        )
        assert match.similarity >= threshold


def test_candidate_pairs_are_a_small_share_of_all_pairs(counting: str) -> None:
    rng = random.Random(11)
    texts = [normalize(english(rng)) for _ in range(2000)]
    pairs = candidate_pairs(texts)
    all_pairs = len(texts) * (len(texts) - 1) // 2
    assert len(pairs) < all_pairs // 20
    assert (pairs[:, 0] > pairs[:, 1]).all()
    only_new = candidate_pairs(texts, first_new=1500)
    assert (only_new[:, 0] >= 1500).all()


def near_copies(rng: random.Random, originals: int) -> list[str]:
    """Normalized English texts, each original followed by copies at several distances."""
    texts: list[str] = []
    for _ in range(originals):
        original = english(rng)
        texts += [original] + [
            noisy_copy(rng, original, edits, "abcdefghij ") for edits in (1, 3, 8)
        ]
    rng.shuffle(texts)
    return [normalize(text) for text in texts]


def as_tuples(matches: dict[int, DuplicateMatch]) -> dict[int, tuple[int, float]]:
    return {index: (match.of, match.similarity) for index, match in matches.items()}


def test_texts_on_disk_give_what_texts_in_memory_give(counting: str) -> None:
    """The import reads texts back from spill files; matches are the same as from lists."""
    texts = near_copies(random.Random(13), 100)
    expected = find_near_duplicates(texts, threshold=90, first_new=150, normalized=True)
    assert len(expected) > 100
    with closing(TextSpill()) as stored, closing(TextSpill()) as new:
        stored.extend(texts[:150])
        new.extend(texts[150:])
        found = near_duplicates(stored, new, threshold=90)
    assert found.count == len(expected)
    assert as_tuples({match.index: match for match in found.matches()}) == as_tuples(expected)
    assert [m.index for m in found.matches(10, 40)] == sorted(i for i in expected if 160 <= i < 190)


def test_left_out_texts_are_neither_matched_nor_matched_against() -> None:
    """What a re-import does with the old text of an item it revises."""
    rng = random.Random(17)
    stored = [normalize(english(rng)) for _ in range(5)]
    new = [stored[1] + "x", stored[2] + "x"]
    found = near_duplicates(WithoutPositions(InMemoryTexts(stored), [1, 3]), InMemoryTexts(new))
    [match] = found.matches()
    assert (match.index, match.of) == (4, 1)  # stored[2] is position 1 once 1 is left out
    assert WithoutPositions(InMemoryTexts(stored), [1, 3]).source_positions([0, 1, 2]).tolist() == [
        0,
        2,
        4,
    ]


def test_texts_whose_digests_collide_are_compared_as_texts(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import db.dedup

    texts = near_copies(random.Random(19), 40) + ["ab", "ab", "ba", "ab"]
    expected = as_tuples(find_near_duplicates(texts, threshold=90, normalized=True))
    monkeypatch.setattr(db.dedup, "_digest", lambda text: len(text) % 3)
    assert as_tuples(find_near_duplicates(texts, threshold=90, normalized=True)) == expected
    assert expected[len(texts) - 1] == (len(texts) - 4, 100.0)


def test_unrelated_texts_in_many_blocks_match_nothing(counting: str) -> None:
    rng = random.Random(23)
    texts = [english(rng) for _ in range(400)]
    assert len(candidate_pairs([normalize(t) for t in texts])) > 0  # pairs to score, no match
    assert find_near_duplicates(texts, threshold=90) == {}


# --- order-free duplicates, explained ---------------------------------------------------------

ORIGINAL = ItemText(
    "single",
    "中国人民银行下调法定存款准备金率，通常会导致（　）。",
    {
        "A": "商业银行可用于放贷的资金增加",
        "B": "货币乘数变小",
        "C": "市场利率上升",
        "D": "基础货币减少",
    },
    "A",
)


def copy_of(original: ItemText, **changes: object) -> ItemText:
    values = {"kind": original.kind, "prompt": original.prompt, "choices": original.choices}
    values["key"] = original.key
    values.update(changes)
    return ItemText(**values)  # type: ignore[arg-type]


def test_shuffled_choices_with_the_key_remapped_are_an_exact_copy() -> None:
    shuffled = copy_of(
        ORIGINAL,
        choices={
            "A": "市场利率上升",
            "B": "基础货币减少",
            "C": "商业银行可用于放贷的资金增加",
            "D": "货币乘数变小",
        },
        key="C",
    )
    assert item_text(shuffled.prompt, shuffled.choices) == item_text(
        ORIGINAL.prompt, ORIGINAL.choices
    )
    assert describe_differences(shuffled, ORIGINAL) == (
        "choices reordered",
        "key remapped (A -> C)",
    )
    # the same shuffle with a key that does not follow is a copy with a different key
    contradicting = copy_of(shuffled, key="A")
    assert describe_differences(contradicting, ORIGINAL)[-1] == (
        "a different key: A, where the other item's key A would be C"
    )


def test_relabelled_events_and_a_single_item_copied_as_multi_are_copies() -> None:
    events = {
        "A": "Wholesale prices jump.",
        "B": "Costs rise.",
        "C": "Prices are raised.",
        "D": "Sales dip.",
    }
    ordering = ItemText(
        "ordering", "A coffee chain faces a price shock. Order the events.", events, "ABCD"
    )
    relabelled = copy_of(
        ordering,
        choices={
            "A": "(3) Prices are raised.",
            "B": "(1) Wholesale prices jump.",
            "C": "(4) Sales dip.",
            "D": "(2) Costs rise.",
        },
        key="BDAC",
    )
    assert item_text(relabelled.prompt, relabelled.choices) == item_text(ordering.prompt, events)
    assert describe_differences(relabelled, ordering) == (
        "events reordered",
        "labels written into the events",
        "key remapped (A, B, C, D -> B, D, A, C)",
    )
    as_multi = copy_of(ORIGINAL, kind="multi", key="AB")
    assert describe_differences(as_multi, ORIGINAL)[0] == "a single item copied as multi"


def test_width_forms_punctuation_spacing_and_numbering_do_not_count_but_are_named() -> None:
    full_width = copy_of(ORIGINAL, prompt="中国人民银行下调法定存款准备金率,通常会导致( )。")
    punctuated = copy_of(ORIGINAL, prompt="中国人民银行下调法定存款准备金率。通常会导致——")
    english = ItemText(
        "single",
        "Which tool is used most often?",
        {"A": "Open market operations", "B": "Reserve ratio"},
        "A",
    )
    spaced = copy_of(english, prompt="Which  tool is used most often ?")
    numbered = copy_of(english, prompt="Question 12: Which tool is used most often?")
    for copy, original, said in (
        (full_width, ORIGINAL, "full-width/half-width forms in the question"),
        (punctuated, ORIGINAL, "punctuation in the question"),
        (spaced, english, "spacing in the question"),
        (numbered, english, "a question number before the question"),
    ):
        assert item_text(copy.prompt, copy.choices) == item_text(original.prompt, original.choices)
        assert said in describe_differences(copy, original)
    full_width_letters = normalize("ＧＤＰ增长５％")
    assert full_width_letters == normalize("GDP增长5%") == "gdp增长5%"
    assert normalize("增长1.5%") != normalize("增长15%") and normalize("-450万元") != normalize(
        "450万元"
    )


def test_a_reworded_copy_says_what_changed() -> None:
    reworded = copy_of(ORIGINAL, prompt=ORIGINAL.prompt.replace("通常", "一般"))
    assert describe_differences(reworded, ORIGINAL) == ("the question reworded: “通常” -> “一般”",)
    prefixed = copy_of(ORIGINAL, prompt="（根据现行规定）" + ORIGINAL.prompt)
    assert describe_differences(prefixed, ORIGINAL) == ("text added before the question",)


def test_a_few_new_texts_are_scored_against_every_stored_text() -> None:
    rng = random.Random(5)
    stored = [english(rng) for _ in range(300)]
    near = noisy_copy(rng, stored[123], 2, "abcdefgh")
    matches = find_near_duplicates([*stored, near], threshold=90, first_new=300)
    assert list(matches) == [300] and matches[300].of == 123
    assert matches[300].similarity == pytest.approx(
        fuzz.ratio(normalize(near), normalize(stored[123])), abs=0.01
    )


@pytest.mark.slow
def test_shuffled_option_copies_of_real_cflue_items_are_flagged(
    cflue_knowledge: Path, tmp_path: Path
) -> None:
    """The issue's measurement: a shuffled copy (options permuted, key remapped, as CFLUE's
    rewriting does) of a real question, now and then in full-width forms, other
    punctuation or with a question number, is flagged as a duplicate of its original."""
    import ast
    import json

    from db.engine import open_database
    from db.flags import current_flags
    from db.importer import import_files
    from db.items import iter_items
    from evaluator.generation.option_shuffle import shuffle_options

    records = json.loads(cflue_knowledge.read_text(encoding="utf-8"))
    rng = random.Random(20261202)
    kinds = {"单项选择题": "single", "多项选择题": "multi"}
    sample = rng.sample([i for i, r in enumerate(records) if r["task"] in kinds], 600)
    copies = []
    for index, position in enumerate(sample):
        record = records[position]
        choices = ast.literal_eval(record["choices"])
        shuffled = shuffle_options(
            choices, record["answer"], kinds[record["task"]], f"copy-{index}"
        )
        question = record["question"]
        variant = index % 4
        if variant == 1:  # half-width punctuation
            question = question.translate(str.maketrans("，。（）：", ",.():"))
        elif variant == 2:  # a question number in front
            question = f"{index + 1}. {question}"
        elif variant == 3:  # spacing
            question = question.replace("，", "， ")
        copies.append(
            dict(record, question=question, choices=repr(shuffled.choices), answer=shuffled.key)
        )
    originals = tmp_path / "knowledge.json"
    originals.write_text(cflue_knowledge.read_text(encoding="utf-8"), encoding="utf-8")
    shuffled_file = tmp_path / "shuffled.json"
    shuffled_file.write_text(json.dumps(copies, ensure_ascii=False), encoding="utf-8")
    database = open_database(tmp_path / "cflue.db")
    try:
        import_files(database, [originals])
        report = import_files(database, [shuffled_file])
        assert report.ok and report.tally.added == len(copies)
        with database.session() as session:
            imported = list(iter_items(session, sources=["shuffled"]))
            flags = current_flags(session, [item.id for item in imported])
            texts = {
                item.id: item_text(item.prompt, item.choices)
                for item in iter_items(session, sources=["knowledge"])
            }
    finally:
        database.dispose()
    flagged = [item for item in imported if item.suspected_duplicate_of]
    assert len(flagged) >= 0.95 * len(copies), f"{len(flagged)} of {len(copies)} flagged"
    for item, position in zip(imported, sample, strict=True):
        if item.suspected_duplicate_of is None:
            continue
        # it points at its original (or at an identical earlier question)
        original = f"knowledge:{position + 1}"
        assert texts[item.suspected_duplicate_of] == texts[original]
        [duplicate] = [f for f in flags[item.id] if f.name.value == "duplicate"]
        assert duplicate.evidence["of"] == item.suspected_duplicate_of
        assert "choices reordered" in duplicate.summary
        assert "a different key" not in duplicate.summary  # the key followed its option


def test_questions_on_one_shared_case_text_are_not_copies() -> None:
    case = "甲公司为增值税一般纳税人，2020年4月发生以下业务：（1）销售货物取得收入29万元；（2）购进原材料。"
    first = item_text(
        case + "业务（1）的销项税额为（）。", {"A": "3.77万元", "B": "2.9万元", "C": "3.3万元"}
    )
    second = item_text(
        case + "业务（2）的进项税额为（）。", {"A": "1.3万元", "B": "0.9万元", "C": "2.6万元"}
    )
    reworded = item_text(
        case + "业务（1）的销项税额是（）。", {"A": "2.9万元", "B": "3.77万元", "C": "3.3万元"}
    )
    assert fuzz.ratio(first, second) >= 90  # the shared case makes them look alike
    assert find_near_duplicates([first, second], threshold=90, normalized=True) == {}
    assert list(find_near_duplicates([first, reworded], threshold=90, normalized=True)) == [1]

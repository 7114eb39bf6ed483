"""Near-duplicate detection as a pure function over texts: correct matches, no false ones,
and the blocking finds what an exhaustive comparison finds without comparing every pair."""

from __future__ import annotations

import itertools
import random

import numpy as np
import pytest
from rapidfuzz import fuzz, process

from db.dedup import candidate_pairs, find_near_duplicates, item_text, normalize

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


def edit(rng: random.Random, text: str, edits: int, alphabet: str) -> str:
    chars = list(text)
    for _ in range(edits):
        position = rng.randrange(len(chars))
        operation = rng.random()
        if operation < 0.4:
            chars[position] = rng.choice(alphabet)
        elif operation < 0.7:
            chars.insert(position, rng.choice(alphabet))
        elif len(chars) > 10:
            del chars[position]
    return "".join(chars)


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
    farther = edit(rng, base, 6, "abcdefgh")
    closer = edit(rng, base, 1, "abcdefgh")
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
    assert item_text("Q?", {"A": "y", "B": "x"}) == "q|x|y"
    assert item_text("Q?", {"A": "x", "B": "y"}) == item_text("Q?", {"A": "y", "B": "x"})
    assert item_text("3. Q?", {"A": "A. x", "B": "(2) y"}) == "q|x|y"


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
            texts.append(edit(rng, original, edits, alphabet))
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

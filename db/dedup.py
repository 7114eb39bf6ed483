"""Near-duplicate detection over item texts, fast enough for tens of thousands of items.

What is compared is an item's *canonical text* (:func:`item_text`): its prompt, then
its choice texts sorted, labels dropped, each normalized (:func:`normalize`: width
forms (NFKC), case, Chinese and English punctuation and spacing do not count).  So a
copy whose options were shuffled and whose key was remapped (what CFLUE's rewriting
does), whose events were relabelled, a single-answer item copied as a multi-answer
one, or a copy in full-width forms or other punctuation compares as equal, and
:func:`describe_differences` says afterwards what the copy changed.

Two questions that share a long case text but none of their choices (CFLUE asks
several questions on one case) are not copies of each other, however similar.

Comparing every pair is quadratic, so candidates come from *blocking* first: each
text is cut into character n-grams (this works for Chinese and English alike) and
is represented by a bottom-k sketch, the ``sketch_size`` n-grams with the smallest
hash among those that are neither unique to the text nor common to many texts.
Near-duplicates share most of their n-grams, and so most of their sketch;
unrelated texts rarely share two sketch n-grams.  Texts whose sketches share at
least ``min_shared`` n-grams become candidate pairs, and each candidate pair is
then scored exactly with rapidfuzz's ``fuzz.ratio``.  A handful of new texts
(an edit, a few generated items) are scored against every stored text directly
(:func:`find_duplicates_of`), which is faster than sketching the whole corpus.

All of this runs in numpy and rapidfuzz's C code; Python loops only over texts.
"""

from __future__ import annotations

import re
import sys
import unicodedata
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from rapidfuzz import fuzz, process
from rapidfuzz.distance import Indel, Levenshtein

from db.answers import format_answer
from db.vocabulary import ItemKind

DEFAULT_THRESHOLD = 90.0
NGRAM = 4
SKETCH_SIZE = 16
# Within one sketch n-gram's list of texts, each text is paired with this many
# texts before it.  A big cluster of near-copies still finds a partner (they are
# all alike), while a common n-gram cannot produce a quadratic number of pairs.
WINDOW = 12
# An n-gram found in more than max(MIN_COMMON, texts // COMMON_SHARE) texts is common.
MIN_COMMON = 50
COMMON_SHARE = 200
# Candidate pairs must share this many sketch n-grams: near-duplicates share many,
# unrelated texts that meet on one n-gram by chance are not worth scoring.
MIN_SHARED = 2
# Up to this many characters in all, n-gram frequencies are exact; beyond, texts are
# sketched CHUNK_TEXTS at a time with frequencies in 2**BUCKET_BITS buckets (64 MiB).
EXACT_CHARS = 12_000_000
CHUNK_TEXTS = 5_000
BUCKET_BITS = 24
PAIR_KEYS_PER_BLOCK = 4_000_000  # at most about this many pair keys are held at once
# Up to this many new texts are scored against every stored text directly.
DIRECT_NEW_TEXTS = 64
# Between the parts of a canonical text (prompt, then choices); whitespace, so that a
# canonical text normalized again loses it rather than gaining a character.
CHOICE_SEPARATOR = "\x1f"
# Choices at least this similar are "the same choice" (different_questions).
SAME_CHOICE = 90.0

# Punctuation that changes what a text says is kept: "5%" is not "5", "1/2" is not "12".
_KEPT_PUNCTUATION = frozenset("%‰‱#&*@/\\")
_DECIMAL_POINT = re.compile(r"(?<=\d)\.(?=\d)")  # 1.5 is not 15 (NFKC made "．" a ".")
_MINUS = re.compile(r"(?<![\w.])[-‐‑‒–—](?=\d)")  # -450 is not 450
# A question number in front of a prompt is not part of the question.
_NUMBERING = re.compile(
    r"^\s*(?:(?:question|q)\s*\d{1,4}\s*[:.)：]"
    r"|第\s*\d{1,4}\s*题\s*[:：.、]?"
    r"|[(（]\s*\d{1,3}\s*[)）]"
    r"|\d{1,3}\s*[、.．)）](?!\d))\s*",
    re.IGNORECASE,
)
# A label written into a choice's own text ("A. ...", "(1) ...", "3、...") is not part of it.
_LABEL = re.compile(
    r"^\s*(?:[(（]\s*(?:[A-Ha-h]|\d)\s*[)）]|(?:[A-Ha-h]|\d)\s*[.)．、:：）](?![0-9]))\s*(?=\S)"
)
_WHITESPACE = re.compile(r"\s+")
_TOKEN = re.compile(r"[A-Za-z0-9]+|\s+|.", re.DOTALL)


@lru_cache(maxsize=1)
def _dropped_characters() -> re.Pattern[str]:
    """Whitespace and every punctuation character (Unicode categories P*) but the kept ones."""
    dropped = [
        chr(code)
        for code in range(min(sys.maxunicode, 0xFFFF) + 1)
        if unicodedata.category(chr(code)).startswith("P") and chr(code) not in _KEPT_PUNCTUATION
    ]
    return re.compile("[\\s" + "".join(re.escape(char) for char in dropped) + "]+")


@dataclass(frozen=True)
class DuplicateMatch:
    """Text ``index`` is very similar to the earlier text ``of`` (``similarity`` 0-100)."""

    index: int
    of: int
    similarity: float


@dataclass(frozen=True)
class ItemText:
    """The parts of an item that :func:`describe_differences` compares."""

    kind: str
    prompt: str
    choices: Mapping[str, str]
    key: str


def normalize(text: str) -> str:
    """What does not make a question different: width forms (NFKC: full-width ＡＢ１ and
    half-width AB1 alike), case, spacing, and punctuation, Chinese or English (except
    what changes the meaning: % / # and the like, a decimal point, a minus sign)."""
    text = unicodedata.normalize("NFKC", text).casefold()
    text = _MINUS.sub("\u2212", _DECIMAL_POINT.sub("\u22c5", text))
    return _dropped_characters().sub("", text)


def item_text(prompt: str, choices: Mapping[str, str]) -> str:
    """The canonical text compared for an item, already normalized and order-free: the
    prompt without a leading question number, then each choice's text without its label,
    sorted, so shuffled, relabelled and re-punctuated copies compare as equal."""
    parts = [_NUMBERING.sub("", prompt, count=1)]
    parts += [_LABEL.sub("", str(text), count=1) for text in choices.values()]
    # One normalization for all the parts (NUL survives it): five times fewer calls.
    normalized_prompt, *texts = normalize("\x00".join(parts)).split("\x00")
    return CHOICE_SEPARATOR.join([normalized_prompt, *sorted(texts)])


def different_questions(first: str, second: str) -> bool:
    """Two canonical texts (:func:`item_text`) whose choices have nothing in common: two
    questions on one shared text (CFLUE's case studies ask several), not a copy."""
    first_choices = first.split(CHOICE_SEPARATOR)[1:]
    second_choices = second.split(CHOICE_SEPARATOR)[1:]
    if len(first_choices) < 2 or len(second_choices) < 2:
        return False
    scores = process.cdist(first_choices, second_choices, scorer=fuzz.ratio, dtype=np.float32)
    return bool(scores.max() < SAME_CHOICE)


def describe_differences(copy: ItemText, original: ItemText) -> tuple[str, ...]:
    """What ``copy`` changed against ``original``, in words a reviewer reads.

    E.g. ``("choices reordered", "key remapped (D -> B)")``, ``("punctuation in the
    question",)``, ``("a single item copied as multi", ...)``; empty for an exact copy.
    """
    differences: list[str] = []
    if copy.kind != original.kind:
        differences.append(f"a {original.kind} item copied as {copy.kind}")
    prompt_word = "question" if _is_mcq(copy.kind) else "scenario"
    differences += _text_differences(copy.prompt, original.prompt, prompt_word)
    differences += _choice_differences(copy, original)
    return tuple(differences)


def _is_mcq(kind: str) -> bool:
    return kind in {k.value for k in ItemKind} and ItemKind(kind).is_mcq


def _answer(kind: str, key: str) -> str:
    try:
        return format_answer(ItemKind(kind), key)
    except ValueError:
        return key


def _choice_differences(copy: ItemText, original: ItemText) -> list[str]:
    word = "choices" if _is_mcq(copy.kind) else "events"
    copy_texts = [normalize(_LABEL.sub("", t, count=1)) for t in copy.choices.values()]
    original_texts = [normalize(_LABEL.sub("", t, count=1)) for t in original.choices.values()]
    if Counter(copy_texts) != Counter(original_texts):
        changed = len(set(copy_texts) ^ set(original_texts))
        return [f"{word} differ ({changed} not in both)"]
    if len(set(copy_texts)) < len(copy_texts):  # two choices read the same: labels are ambiguous
        reordered = copy_texts != original_texts
        return [f"{word} reordered"] * reordered + [f"two {word} read the same"]
    copy_by_text = dict(zip(copy_texts, copy.choices, strict=True))
    original_by_text = dict(zip(original_texts, original.choices, strict=True))
    differences: list[str] = []
    label_of = {original_by_text[text]: copy_by_text[text] for text in original_by_text}
    if any(old != new for old, new in label_of.items()):
        differences.append(f"{word} reordered")
    forms: list[str] = []
    for text, old_label in original_by_text.items():
        new_text, old_text = copy.choices[copy_by_text[text]], original.choices[old_label]
        unlabelled = _LABEL.sub("", new_text, count=1), _LABEL.sub("", old_text, count=1)
        if unlabelled != (new_text, old_text) and "labels" not in forms:
            forms.append("labels")
        for form in _form_differences(*unlabelled):
            if form not in forms:
                forms.append(form)
    differences += [
        f"labels written into the {word}" if form == "labels" else f"{form} in the {word}"
        for form in forms
    ]
    in_copy_labels = [label_of.get(letter, letter) for letter in original.key]
    if _is_mcq(copy.kind):
        in_copy_labels.sort()
    expected = "".join(in_copy_labels)
    if copy.key == expected:
        if expected != original.key:
            differences.append(
                f"key remapped ({_answer(original.kind, original.key)} -> "
                f"{_answer(copy.kind, copy.key)})"
            )
    else:
        differences.append(
            f"a different key: {_answer(copy.kind, copy.key)}, where the other item's key "
            f"{_answer(original.kind, original.key)} would be {_answer(copy.kind, expected)}"
        )
    return differences


def _form_differences(copy: str, original: str) -> list[str]:
    """How two texts differ in form only: width forms, case, spacing, punctuation."""
    steps = (
        ("full-width/half-width forms", lambda t: unicodedata.normalize("NFKC", t)),
        ("letter case", str.casefold),
        ("spacing", lambda t: _WHITESPACE.sub("", t)),
        ("punctuation", normalize),
    )
    found: list[str] = []
    a, b = copy, original
    for name, step in steps:
        if a == b:
            break
        next_a, next_b = step(a), step(b)
        if Levenshtein.distance(next_a, next_b) < Levenshtein.distance(a, b):
            found.append(name)
        a, b = next_a, next_b
    return found


def _text_differences(copy: str, original: str, word: str) -> list[str]:
    if copy == original:
        return []
    found: list[str] = []
    unnumbered = _NUMBERING.sub("", copy, count=1), _NUMBERING.sub("", original, count=1)
    if unnumbered != (copy, original):
        found.append(f"a question number before the {word}")
        copy, original = unnumbered
    a, b = normalize(copy), normalize(original)
    if a == b:  # differences of form only (beside a reworded text they would be noise)
        return [*found, *(f"{form} in the {word}" for form in _form_differences(copy, original))]
    if a.endswith(b):
        return [*found, f"text added before the {word}"]
    if a.startswith(b):
        return [*found, f"text added after the {word}"]
    if b.endswith(a) or b.startswith(a):
        return [*found, f"part of the {word} left out"]
    return [*found, f"the {word} reworded: {_changes(original, copy)}"]


def _changes(original: str, copy: str, shown: int = 2, width: int = 24) -> str:
    """The first changes from ``original`` to ``copy``: “sharp” -> “sudden”, …"""
    # Words for English, characters for Chinese: "sharp" -> "sudden", not "harp" -> "udden".
    before = _TOKEN.findall(unicodedata.normalize("NFKC", original))
    after = _TOKEN.findall(unicodedata.normalize("NFKC", copy))
    spans: list[list[int]] = []  # a deletion next to an insertion is one replacement
    previous_end: tuple[int, int] | None = None
    for opcode in Indel.opcodes(before, after):
        if opcode.tag == "equal":
            continue
        i1, i2, j1, j2 = opcode.src_start, opcode.src_end, opcode.dest_start, opcode.dest_end
        if spans and previous_end == (i1, j1):
            spans[-1][1], spans[-1][3] = i2, j2
        else:
            spans.append([i1, i2, j1, j2])
        previous_end = (i2, j2)
    edits = [
        ("".join(before[i1:i2]).strip(), "".join(after[j1:j2]).strip())
        for i1, i2, j1, j2 in spans
        if "".join(before[i1:i2] + after[j1:j2]).strip()
    ]
    words = [
        f"“{old[:width]}” -> “{new[:width]}”"
        if old and new
        else f"“{new[:width]}” added"
        if new
        else f"“{old[:width]}” left out"
        for old, new in edits[:shown]
    ]
    more = f" and {len(edits) - shown} more changes" if len(edits) > shown else ""
    return ", ".join(words) + more


def _ngram_codes(texts: Sequence[str], n: int) -> tuple[np.ndarray, np.ndarray]:
    """Every character n-gram of every text as a 64-bit hash, with the owning text's index."""
    lengths = np.fromiter((len(t) for t in texts), dtype=np.int64, count=len(texts))
    joined = "".join(texts)
    if len(joined) < n:  # texts shorter than n have no n-grams; only exact copies match
        return np.empty(0, np.uint64), np.empty(0, np.int64)
    code_points = np.frombuffer(joined.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
    code_points = code_points.astype(np.uint64)
    owner = np.repeat(np.arange(len(texts), dtype=np.int64), lengths)
    count = len(code_points) - n + 1
    codes = np.zeros(count, dtype=np.uint64)
    with np.errstate(over="ignore"):
        for offset in range(n):  # a polynomial hash; wrapping at 2**64 is intended
            codes = codes * np.uint64(0x100000001B3) + code_points[offset : offset + count]
    owners = owner[:count]
    # Keep only n-grams that lie inside one text.
    inside = owners == owner[n - 1 :]
    return codes[inside], owners[inside]


def _mix(values: np.ndarray) -> np.ndarray:
    """A fixed 64-bit mixing hash (splitmix64), for consistent tie-breaking between n-grams."""
    with np.errstate(over="ignore"):
        z = values + np.uint64(0x9E3779B97F4A7C15)
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return z ^ (z >> np.uint64(31))


def _runs(sorted_values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Start index and length of each run of equal values in a sorted array."""
    starts = np.flatnonzero(np.r_[True, sorted_values[1:] != sorted_values[:-1]])
    return starts, np.diff(np.r_[starts, len(sorted_values)])


def candidate_pairs(
    texts: Sequence[str],
    *,
    first_new: int = 0,
    ngram: int = NGRAM,
    sketch_size: int = SKETCH_SIZE,
    window: int = WINDOW,
    min_shared: int = MIN_SHARED,
) -> np.ndarray:
    """Pairs ``(later, earlier)`` of texts whose sketches share at least ``min_shared``
    n-grams; only pairs with ``later >= first_new``.

    ``texts`` should already be normalized.  Returns an ``(m, 2)`` int64 array.
    Up to ``EXACT_CHARS`` characters in all, n-gram frequencies are counted exactly
    at once; beyond, texts are sketched in chunks with frequencies counted in a
    fixed table of hash buckets, so memory stays bounded however many texts there are.
    (Sorting packed integer keys is used throughout: much faster than ``np.unique``
    on several million values.)
    """
    count = len(texts)
    if count < 2:
        return np.empty((0, 2), np.int64)
    text_bits = max(1, (count - 1).bit_length())
    if sum(len(text) for text in texts) <= EXACT_CHARS:
        entries = _sketch_entries_exact(texts, ngram, sketch_size, text_bits)
    else:
        entries = _sketch_entries_chunked(texts, ngram, sketch_size, text_bits)
    if entries is None or not len(entries):
        return np.empty((0, 2), np.int64)
    text_mask = np.uint64((1 << text_bits) - 1)
    gram_of = entries >> np.uint64(text_bits)
    text_of = (entries & text_mask).astype(np.int64)
    # Sketch entries are grouped by n-gram, texts in order: pair each with its predecessors.
    # All keys of one pair share its later text, so pairs are counted one block of later
    # texts at a time: memory holds a block's keys, not every key at once.
    found: list[np.ndarray] = []
    block = max(1, -(-len(entries) * window // PAIR_KEYS_PER_BLOCK))
    bounds = np.linspace(first_new, count, block + 1).astype(np.int64)
    for low, high in zip(bounds[:-1], bounds[1:], strict=True):
        keys: list[np.ndarray] = []
        for offset in range(1, min(window, len(entries) - 1) + 1):
            later = text_of[offset:]
            same_gram = (gram_of[offset:] == gram_of[:-offset]) & (later >= low) & (later < high)
            keys.append(later[same_gram] * count + text_of[:-offset][same_gram])
        if not keys:
            continue
        pair_keys = np.sort(np.concatenate(keys))
        pair_starts, shared_grams = _runs(pair_keys)
        found.append(pair_keys[pair_starts[shared_grams >= min_shared]])
    if not found:
        return np.empty((0, 2), np.int64)
    pair_keys = np.concatenate(found)
    return np.stack([pair_keys // count, pair_keys % count], axis=1)


def _sketch_entries_exact(
    texts: Sequence[str], ngram: int, sketch_size: int, text_bits: int
) -> np.ndarray | None:
    """Every text's sketch as sorted packed ``(n-gram, text)`` entries, frequencies exact."""
    count = len(texts)
    codes, owners = _ngram_codes(texts, ngram)
    if not len(codes):
        return None
    # Everything below sorts packed 64-bit keys (np.sort on values is several times
    # faster than np.unique or argsort on millions of rows).  An n-gram is known by the
    # top bits of its hash: two n-grams sharing them only adds a candidate or two.
    hash_bits = 63 - text_bits
    text_mask = np.uint64((1 << text_bits) - 1)
    gram_hash = _mix(codes) >> np.uint64(64 - hash_bits)
    # One row per (n-gram, text), sorted by n-gram.
    rows = np.sort((gram_hash << np.uint64(text_bits)) | owners.astype(np.uint64))
    rows = rows[np.r_[True, rows[1:] != rows[:-1]]]
    gram_of = rows >> np.uint64(text_bits)
    _, frequency = _runs(gram_of)
    row_frequency = np.repeat(frequency, frequency)
    # An n-gram only one text has cannot pair it with anything.
    shared = row_frequency >= 2
    gram_of, row_frequency = gram_of[shared], row_frequency[shared]
    text_of = rows[shared] & text_mask
    if not len(gram_of):
        return None
    # Each text's sketch: bottom-k by hash among its n-grams that are not common, and
    # common ones only when it has too few others.  (Ranking purely by rarity would pick,
    # in a cluster of variants, the n-grams most variants lost, which two given variants
    # rarely share.)  Packed key: text, then common-or-not, then the n-gram's hash.
    max_frequency = max(MIN_COMMON, count // COMMON_SHARE)
    common = (row_frequency > max_frequency).astype(np.uint64)
    by_text = np.sort(
        (text_of << np.uint64(hash_bits + 1)) | (common << np.uint64(hash_bits)) | gram_of
    )
    text_of = by_text >> np.uint64(hash_bits + 1)
    gram_of = by_text & np.uint64((1 << hash_bits) - 1)
    text_starts, text_lengths = _runs(text_of)
    rank = np.arange(len(text_of)) - np.repeat(text_starts, text_lengths)
    keep = rank < sketch_size
    return np.sort((gram_of[keep] << np.uint64(text_bits)) | text_of[keep])


def _distinct_grams(texts: Sequence[str], ngram: int) -> tuple[np.ndarray, np.ndarray]:
    """Each text's distinct n-gram hashes (mixed) with the text's index in ``texts``."""
    codes, owners = _ngram_codes(texts, ngram)
    if not len(codes):
        return np.empty(0, np.uint64), np.empty(0, np.int64)
    hashes = _mix(codes)
    order = np.lexsort((hashes, owners))
    hashes, owners = hashes[order], owners[order]
    first = np.r_[True, (hashes[1:] != hashes[:-1]) | (owners[1:] != owners[:-1])]
    return hashes[first], owners[first]


def _sketch_entries_chunked(
    texts: Sequence[str], ngram: int, sketch_size: int, text_bits: int
) -> np.ndarray | None:
    """As ``_sketch_entries_exact``, in chunks of ``CHUNK_TEXTS`` texts, with n-gram
    frequencies counted in ``2**BUCKET_BITS`` hash buckets (a shared bucket can only
    overstate a frequency: a few more n-grams count as shared)."""
    count = len(texts)
    hash_bits = 63 - text_bits
    buckets = np.zeros(1 << BUCKET_BITS, dtype=np.uint32)
    shift = np.uint64(64 - BUCKET_BITS)
    for start in range(0, count, CHUNK_TEXTS):
        hashes, _ = _distinct_grams(texts[start : start + CHUNK_TEXTS], ngram)
        buckets += np.bincount(
            (hashes >> shift).astype(np.int64), minlength=1 << BUCKET_BITS
        ).astype(np.uint32)
    max_frequency = max(MIN_COMMON, count // COMMON_SHARE)
    parts: list[np.ndarray] = []
    for start in range(0, count, CHUNK_TEXTS):
        hashes, owners = _distinct_grams(texts[start : start + CHUNK_TEXTS], ngram)
        frequency = buckets[(hashes >> shift).astype(np.int64)]
        shared = frequency >= 2
        hashes, owners, frequency = hashes[shared], owners[shared] + start, frequency[shared]
        gram_of = hashes >> np.uint64(64 - hash_bits)
        common = (frequency > max_frequency).astype(np.uint64)
        by_text = np.sort(
            (owners.astype(np.uint64) << np.uint64(hash_bits + 1))
            | (common << np.uint64(hash_bits))
            | gram_of
        )
        text_of = by_text >> np.uint64(hash_bits + 1)
        gram_of = by_text & np.uint64((1 << hash_bits) - 1)
        text_starts, text_lengths = _runs(text_of)
        rank = np.arange(len(text_of)) - np.repeat(text_starts, text_lengths)
        keep = rank < sketch_size
        parts.append((gram_of[keep] << np.uint64(text_bits)) | text_of[keep])
    return np.sort(np.concatenate(parts)) if parts else None


def find_near_duplicates(
    texts: Sequence[str],
    *,
    threshold: float = DEFAULT_THRESHOLD,
    first_new: int = 0,
    ngram: int = NGRAM,
    sketch_size: int = SKETCH_SIZE,
    window: int = WINDOW,
    normalized: bool = False,
) -> dict[int, DuplicateMatch]:
    """For each text at or after ``first_new``, its most similar earlier text, if any reaches
    ``threshold`` (rapidfuzz ``fuzz.ratio`` on normalized text, 0-100).

    Texts before ``first_new`` are the ones already stored: they are matched against
    but never marked themselves.  Exact copies (after normalization) always match.
    Up to ``DIRECT_NEW_TEXTS`` new texts are scored against every earlier text (exact);
    more go through the blocking of :func:`candidate_pairs`.  Canonical item texts whose
    choices have nothing in common are two questions on one text, never a match
    (:func:`different_questions`).
    """
    if not normalized:  # the caller may hand over normalized texts: one copy fewer in memory
        texts = [normalize(t) for t in texts]
    matches: dict[int, DuplicateMatch] = {}
    first_seen: dict[str, int] = {}
    for index, text in enumerate(texts):
        earlier = first_seen.setdefault(text, index)
        if earlier != index and index >= first_new:
            matches[index] = DuplicateMatch(index, earlier, 100.0)
    if len(texts) - first_new <= DIRECT_NEW_TEXTS:
        for index in range(max(first_new, 1), len(texts)):
            if index in matches or not texts[index]:
                continue
            for _text, score, earlier in process.extract(
                texts[index], texts[:index], scorer=fuzz.ratio, score_cutoff=threshold, limit=8
            ):
                if not different_questions(texts[index], texts[earlier]):
                    matches[index] = DuplicateMatch(index, int(earlier), round(float(score), 2))
                    break
        return matches
    pairs = candidate_pairs(
        texts, first_new=first_new, ngram=ngram, sketch_size=sketch_size, window=window
    )
    if not len(pairs):
        return matches
    if matches:  # exact copies are settled already
        pairs = pairs[~np.isin(pairs[:, 0], np.fromiter(matches, dtype=np.int64))]
    # A ratio of at least T needs the shorter text to be at least T/(200-T) of the longer.
    lengths = np.fromiter((len(t) for t in texts), dtype=np.float64, count=len(texts))
    short = np.minimum(lengths[pairs[:, 0]], lengths[pairs[:, 1]])
    total = lengths[pairs[:, 0]] + lengths[pairs[:, 1]]
    possible = 200.0 * short >= threshold * total - 1e-9
    pairs = pairs[possible]
    if not len(pairs):
        return matches
    scores = process.cpdist(
        [texts[i] for i in pairs[:, 0]],
        [texts[j] for j in pairs[:, 1]],
        scorer=fuzz.ratio,
        score_cutoff=threshold,
        dtype=np.float32,
    )
    hits = np.flatnonzero(scores >= threshold)
    # Best match per later text; on equal scores the earliest text wins.
    order = np.lexsort((pairs[hits, 1], -scores[hits], pairs[hits, 0]))
    for position in hits[order]:
        later, earlier = int(pairs[position, 0]), int(pairs[position, 1])
        if later not in matches and not different_questions(texts[later], texts[earlier]):
            matches[later] = DuplicateMatch(later, earlier, round(float(scores[position]), 2))
    return matches

"""Near-duplicate detection over item texts, fast enough for tens of thousands of items.

Comparing every pair is quadratic, so candidates come from *blocking* first: each
text is cut into character n-grams (this works for Chinese and English alike) and
is represented by a bottom-k sketch, the ``sketch_size`` n-grams with the smallest
hash among those that are neither unique to the text nor common to many texts.
Near-duplicates share most of their n-grams, and so most of their sketch;
unrelated texts rarely share two sketch n-grams.  Texts whose sketches share at
least ``min_shared`` n-grams become candidate pairs, and each candidate pair is
then scored exactly with rapidfuzz's ``fuzz.ratio``.

All of this runs in numpy and rapidfuzz's C code; Python loops only over texts.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from rapidfuzz import fuzz, process

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
_WHITESPACE = re.compile(r"\s+")


@dataclass(frozen=True)
class DuplicateMatch:
    """Text ``index`` is very similar to the earlier text ``of`` (``similarity`` 0-100)."""

    index: int
    of: int
    similarity: float


def normalize(text: str) -> str:
    """Case and spacing do not make a question different."""
    return _WHITESPACE.sub(" ", text).strip().casefold()


def item_text(prompt: str, choices: dict[str, str]) -> str:
    """The text compared for an item: its prompt and its choices in label order."""
    return "\n".join([prompt, *(f"{label}. {text}" for label, text in choices.items())])


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
    """
    if not normalized:  # the caller may hand over normalized texts: one copy fewer in memory
        texts = [normalize(t) for t in texts]
    matches: dict[int, DuplicateMatch] = {}
    first_seen: dict[str, int] = {}
    for index, text in enumerate(texts):
        earlier = first_seen.setdefault(text, index)
        if earlier != index and index >= first_new:
            matches[index] = DuplicateMatch(index, earlier, 100.0)
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
        if later not in matches:
            matches[later] = DuplicateMatch(later, earlier, round(float(scores[position]), 2))
    return matches

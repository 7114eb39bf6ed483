"""Near-duplicate detection over item texts, fast enough for tens of thousands of items.

Comparing every pair is quadratic, so candidates come from *blocking* first: each
text is cut into character n-grams (this works for Chinese and English alike),
and each text is represented by its ``sketch_size`` rarest n-grams across the
whole collection (ties broken by a fixed hash, so the choice is consistent from
text to text, as in a bottom-k min-hash sketch).  Near-duplicates share most of
their n-grams, and so most of their rarest ones; unrelated texts rarely share a
rare n-gram.  Texts that share a sketch n-gram become candidate pairs, and each
candidate pair is then scored exactly with rapidfuzz's ``fuzz.ratio``.

All of this runs in numpy and rapidfuzz's C code; Python loops only over texts.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from rapidfuzz import fuzz, process

DEFAULT_THRESHOLD = 90.0
NGRAM = 3
SKETCH_SIZE = 16
# Within one sketch n-gram's list of texts, each text is paired with this many
# texts before it.  A big cluster of near-copies still finds a partner (they are
# all alike), while a common n-gram cannot produce a quadratic number of pairs.
WINDOW = 12
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
    """Every character n-gram of every text as one 63-bit code, with the owning text's index."""
    lengths = np.fromiter((len(t) for t in texts), dtype=np.int64, count=len(texts))
    joined = "".join(texts)
    if not joined:
        return np.empty(0, np.uint64), np.empty(0, np.int64)
    code_points = np.frombuffer(joined.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
    code_points = code_points.astype(np.uint64)
    owner = np.repeat(np.arange(len(texts), dtype=np.int64), lengths)
    if len(code_points) < n:  # texts shorter than n have no n-grams; only exact copies match
        return np.empty(0, np.uint64), np.empty(0, np.int64)
    codes = np.zeros(len(code_points) - n + 1, dtype=np.uint64)
    for offset in range(n):  # 21 bits per Unicode code point, n <= 3 fits in 63 bits
        codes = (codes << np.uint64(21)) | code_points[offset : len(code_points) - n + 1 + offset]
    owners = owner[: len(codes)]
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


def candidate_pairs(
    texts: Sequence[str],
    *,
    first_new: int = 0,
    ngram: int = NGRAM,
    sketch_size: int = SKETCH_SIZE,
    window: int = WINDOW,
) -> np.ndarray:
    """Pairs ``(later, earlier)`` of texts that share a rare n-gram; ``later >= first_new``.

    ``texts`` should already be normalized.  Returns an ``(m, 2)`` int64 array.
    """
    if ngram > 3:
        raise ValueError("n-grams longer than 3 characters do not fit the 63-bit codes")
    count = len(texts)
    codes, owners = _ngram_codes(texts, ngram)
    if not len(codes):
        return np.empty((0, 2), np.int64)
    gram_values, gram_ids = np.unique(codes, return_inverse=True)
    gram_ids = gram_ids.astype(np.int64)
    # One row per (text, distinct n-gram).
    pair_keys = np.unique(owners * len(gram_values) + gram_ids)
    text_of = pair_keys // len(gram_values)
    gram_of = pair_keys % len(gram_values)
    frequency = np.bincount(gram_of, minlength=len(gram_values))
    # An n-gram only one text has cannot pair it with anything.
    shared = frequency[gram_of] >= 2
    text_of, gram_of = text_of[shared], gram_of[shared]
    if not len(text_of):
        return np.empty((0, 2), np.int64)
    tie_break = _mix(gram_values[gram_of])
    order = np.lexsort((tie_break, frequency[gram_of], text_of))
    text_of, gram_of = text_of[order], gram_of[order]
    # Rank of each n-gram within its text; keep the sketch_size rarest.
    starts = np.flatnonzero(np.r_[True, text_of[1:] != text_of[:-1]])
    run_lengths = np.diff(np.r_[starts, len(text_of)])
    rank = np.arange(len(text_of)) - np.repeat(starts, run_lengths)
    keep = rank < sketch_size
    text_of, gram_of = text_of[keep], gram_of[keep]
    # Group the sketches by n-gram, texts in order, and pair each with its predecessors.
    order = np.lexsort((text_of, gram_of))
    text_of, gram_of = text_of[order], gram_of[order]
    later_parts: list[np.ndarray] = []
    earlier_parts: list[np.ndarray] = []
    for offset in range(1, window + 1):
        if offset >= len(text_of):
            break
        same_gram = gram_of[offset:] == gram_of[:-offset]
        later = text_of[offset:][same_gram]
        earlier = text_of[:-offset][same_gram]
        wanted = later >= first_new
        later_parts.append(later[wanted])
        earlier_parts.append(earlier[wanted])
    if not later_parts:
        return np.empty((0, 2), np.int64)
    later = np.concatenate(later_parts)
    earlier = np.concatenate(earlier_parts)
    unique = np.unique(later * count + earlier)
    return np.stack([unique // count, unique % count], axis=1)


def find_near_duplicates(
    texts: Sequence[str],
    *,
    threshold: float = DEFAULT_THRESHOLD,
    first_new: int = 0,
    ngram: int = NGRAM,
    sketch_size: int = SKETCH_SIZE,
    window: int = WINDOW,
) -> dict[int, DuplicateMatch]:
    """For each text at or after ``first_new``, its most similar earlier text, if any reaches
    ``threshold`` (rapidfuzz ``fuzz.ratio`` on normalized text, 0-100).

    Texts before ``first_new`` are the ones already stored: they are matched against
    but never marked themselves.  Exact copies (after normalization) always match.
    """
    normalized = [normalize(t) for t in texts]
    matches: dict[int, DuplicateMatch] = {}
    first_seen: dict[str, int] = {}
    for index, text in enumerate(normalized):
        earlier = first_seen.setdefault(text, index)
        if earlier != index and index >= first_new:
            matches[index] = DuplicateMatch(index, earlier, 100.0)
    pairs = candidate_pairs(
        normalized, first_new=first_new, ngram=ngram, sketch_size=sketch_size, window=window
    )
    if not len(pairs):
        return matches
    pairs = pairs[[int(later) not in matches for later in pairs[:, 0]]] if matches else pairs
    # A ratio of at least T needs the shorter text to be at least T/(200-T) of the longer.
    lengths = np.fromiter((len(t) for t in normalized), dtype=np.float64, count=len(normalized))
    short = np.minimum(lengths[pairs[:, 0]], lengths[pairs[:, 1]])
    total = lengths[pairs[:, 0]] + lengths[pairs[:, 1]]
    possible = 200.0 * short >= threshold * total - 1e-9
    pairs = pairs[possible]
    if not len(pairs):
        return matches
    scores = process.cpdist(
        [normalized[i] for i in pairs[:, 0]],
        [normalized[j] for j in pairs[:, 1]],
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

"""Near-duplicate detection over item texts, for a handful or a million of them: the
candidate search.

What is compared is an item's *canonical text* (``db.canonical_text.item_text``):
shuffled, relabelled and re-punctuated copies have the same one, so they match here, and
``db.differences.describe_differences`` says afterwards what the copy changed.  Two
questions that share a case text but none of their choices are never a match
(``db.canonical_text.different_questions``).

Comparing every pair is quadratic, so candidates come from *blocking* first: each
text is cut into character n-grams (this works for Chinese and English alike) and
is represented by a bottom-k sketch, the ``sketch_size`` n-grams with the smallest
hash among those that are neither unique to the text nor common to many texts.
Near-duplicates share most of their n-grams, and so most of their sketch;
unrelated texts rarely share two sketch n-grams.  Texts whose sketches share at
least ``min_shared`` n-grams become candidate pairs, and each candidate pair is
then scored exactly with rapidfuzz's ``fuzz.ratio``.  A handful of new texts
(an edit, a few generated items) are scored against every stored text directly,
which is faster than sketching the whole corpus.

Memory stays bounded for a million texts (:func:`near_duplicates`): the texts are
read by position from a ``db.text_sources.TextSource``, which for imports is a file on disk
(``db.spill.TextSpill``); what is held per text is a few numbers (length, digest,
a sketch of 16 packed integers), candidate pairs are made and scored one block of
texts at a time, and the result is two arrays.  All of this runs in numpy and
rapidfuzz's C code; Python loops only over texts.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import numpy as np
from rapidfuzz import fuzz, process

from db.canonical_text import different_questions, normalize
from db.text_sources import InMemoryTexts, JoinedTexts, TextSource

DEFAULT_THRESHOLD = 90.0
NGRAM = 4
SKETCH_SIZE = 16
# Within one sketch n-gram's list of texts, each text is paired with this many texts on
# either side.  A big cluster of near-copies still finds a partner (they are all alike),
# while a common n-gram cannot produce a quadratic number of pairs.
WINDOW = 12
# A text's signature (the smallest n-gram of its sketch) orders each n-gram's list, so
# that texts whose sketches begin alike are neighbours; this many bits of it are used.
SIGNATURE_BITS = 16
# An n-gram found in more than max(MIN_COMMON, texts // COMMON_SHARE) texts is common.
MIN_COMMON = 50
COMMON_SHARE = 200
# Candidate pairs must share this many sketch n-grams: near-duplicates share many,
# unrelated texts that meet on one n-gram by chance are not worth scoring.
MIN_SHARED = 2
# Up to this many characters in all, n-gram frequencies are exact (every n-gram hashed at
# once: about 80 bytes a character at the peak, so 2M characters ~ 160 MiB); beyond, texts
# are sketched a chunk at a time (at most CHUNK_TEXTS texts, about CHUNK_CHARS characters)
# with frequencies in 2**BUCKET_BITS buckets (64 MiB).
EXACT_CHARS = 2_000_000
CHUNK_TEXTS = 5_000
CHUNK_CHARS = 600_000
BUCKET_BITS = 24
PAIR_KEYS_PER_BLOCK = 2_000_000  # at most about this many pair keys are held at once
SCORE_PAIRS = 10_000  # candidate pairs whose texts are read and scored at once
# Up to this many new texts are scored against every stored text directly, reading the
# stored texts DIRECT_CHUNK at a time and keeping each new text's best DIRECT_HITS_KEPT.
DIRECT_NEW_TEXTS = 64
DIRECT_CHUNK = 20_000
DIRECT_HITS_KEPT = 64


@dataclass(frozen=True)
class DuplicateMatch:
    """Text ``index`` is very similar to the earlier text ``of`` (``similarity`` 0-100)."""

    index: int
    of: int
    similarity: float


@dataclass(frozen=True)
class NearDuplicates:
    """What :func:`near_duplicates` found, as two arrays over the new texts: the new text
    at position ``first_new + i`` nearly repeats the text at position ``of[i]`` (-1: none),
    ``similarity[i]`` percent alike (0-100).  A million texts cost 16 bytes each."""

    first_new: int
    of: np.ndarray  # int64
    similarity: np.ndarray  # float64, rounded to 2 decimals

    @property
    def count(self) -> int:
        return int(np.count_nonzero(self.of >= 0))

    def matches(self, start: int = 0, stop: int | None = None) -> list[DuplicateMatch]:
        """The matches of new texts ``start`` to ``stop - 1`` (0 is the first new text), in order."""
        found = np.flatnonzero(self.of[start:stop] >= 0) + start
        return [
            DuplicateMatch(self.first_new + i, int(self.of[i]), float(self.similarity[i]))
            for i in found.tolist()
        ]

    def _set(self, new_index: int, of: int, similarity: float) -> None:
        self.of[new_index] = of
        self.similarity[new_index] = round(similarity, 2)


def near_duplicates(
    earlier: TextSource,
    new: TextSource,
    *,
    threshold: float = DEFAULT_THRESHOLD,
    ngram: int = NGRAM,
    sketch_size: int = SKETCH_SIZE,
    window: int = WINDOW,
) -> NearDuplicates:
    """For each text of ``new``, its most similar text before it (in ``earlier``, or earlier
    in ``new``), if any reaches ``threshold`` (rapidfuzz ``fuzz.ratio``, 0-100).

    Texts must be normalized already (canonical item texts are).  Texts of ``earlier`` are
    the ones already stored: matched against, never marked themselves.  Exact copies
    always match.  Up to ``DIRECT_NEW_TEXTS`` new texts are scored against every earlier
    text (exact); more go through the blocking of :func:`candidate_pairs`.  Canonical
    item texts whose choices have nothing in common are two questions on one text, never a
    match (:func:`different_questions`).

    Memory holds a few arrays of numbers per text (lengths, digests, sketches) and one
    block of candidate pairs at a time; texts are read from the sources as they are
    needed, so sources on disk (:class:`db.spill.TextSpill`) keep a million texts out of
    memory.
    """
    texts = JoinedTexts(earlier, new)
    result = NearDuplicates(
        len(earlier), np.full(len(new), -1, dtype=np.int64), np.zeros(len(new), dtype=np.float64)
    )
    if not len(new):
        return result
    direct = len(new) <= DIRECT_NEW_TEXTS
    chunked = not direct and texts.chars > EXACT_CHARS
    lengths, digests, buckets = _profile(texts, ngram, count_grams=chunked)
    _match_exact_copies(texts, digests, result)
    del digests
    if direct:
        _match_directly(texts, threshold, result)
        return result
    # The sketches are handed over, not kept: the blocks free them once they are read.
    blocks = _candidate_blocks(
        _sketch_entries(texts, buckets, ngram, sketch_size),
        len(texts),
        result.first_new,
        window=window,
        min_shared=MIN_SHARED,
    )
    del buckets
    for pairs in blocks:
        _match_pairs(texts, pairs, lengths, threshold, result)
    return result


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
    """:func:`near_duplicates` over texts in memory: for each text at or after
    ``first_new``, its most similar earlier text, if any reaches ``threshold``; texts
    before ``first_new`` are matched against but never marked.  ``normalized`` says the
    texts are normalized already (canonical item texts are)."""
    if not normalized:
        texts = [normalize(text) for text in texts]
    found = near_duplicates(
        InMemoryTexts(texts[:first_new]),
        InMemoryTexts(texts[first_new:]),
        threshold=threshold,
        ngram=ngram,
        sketch_size=sketch_size,
        window=window,
    )
    return {match.index: match for match in found.matches()}


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
    n-grams; only pairs with ``later >= first_new``.  ``texts`` should already be
    normalized.  Returns an ``(m, 2)`` int64 array (:func:`near_duplicates` takes them
    one block at a time instead)."""
    source = InMemoryTexts(texts)
    if len(source) < 2:
        return np.empty((0, 2), np.int64)
    _, _, buckets = _profile(source, ngram, count_grams=source.chars > EXACT_CHARS)
    entries = _sketch_entries(source, buckets, ngram, sketch_size)
    blocks = list(
        _candidate_blocks(entries, len(source), first_new, window=window, min_shared=min_shared)
    )
    return np.concatenate(blocks) if blocks else np.empty((0, 2), np.int64)


def _digest(text: str) -> int:
    """A 64-bit digest of a text, for finding exact copies (equal digests are then compared)."""
    return hash(text)


def _profile(
    texts: TextSource, ngram: int, *, count_grams: bool
) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """One pass over the texts: each one's length and digest, and with ``count_grams`` in
    how many texts each n-gram occurs, counted in ``2**BUCKET_BITS`` hash buckets (a
    shared bucket can only overstate a frequency: a few more n-grams count as shared)."""
    count = len(texts)
    lengths = np.empty(count, dtype=np.int64)
    digests = np.empty(count, dtype=np.int64)
    buckets = np.zeros(1 << BUCKET_BITS, dtype=np.uint32) if count_grams else None
    digest = _digest
    size = _chunk_size(texts)
    for start in range(0, count, size):
        chunk = texts.read(start, start + size)
        stop = start + len(chunk)
        lengths[start:stop] = [len(text) for text in chunk]
        digests[start:stop] = [digest(text) for text in chunk]
        if buckets is not None:
            hashes, _ = _distinct_grams(chunk, ngram)
            top, counts = np.unique(hashes >> np.uint64(64 - BUCKET_BITS), return_counts=True)
            buckets[top.astype(np.intp)] += counts.astype(np.uint32)
    return lengths, digests, buckets


def _chunk_size(texts: TextSource) -> int:
    """Texts per chunk: up to ``CHUNK_TEXTS``, about ``CHUNK_CHARS`` characters (the arrays
    made from a chunk hold several times 8 bytes per character)."""
    average = max(1, texts.chars // max(1, len(texts)))
    return max(1, min(CHUNK_TEXTS, CHUNK_CHARS // average))


def _match_exact_copies(texts: TextSource, digests: np.ndarray, result: NearDuplicates) -> None:
    """New texts equal to an earlier text match the earliest such text, 100% alike."""
    first_new = result.first_new
    order = np.argsort(digests, kind="stable")  # equal digests stay in position order
    sorted_digests = digests[order]
    run_starts = np.r_[True, sorted_digests[1:] != sorted_digests[:-1]]
    run_of = np.cumsum(run_starts) - 1
    earliest = order[run_starts][run_of]
    is_copy = (order != earliest) & (order >= first_new)
    copies, originals, runs = order[is_copy], earliest[is_copy], run_of[is_copy]
    del order, sorted_digests, run_of, earliest
    collided: set[int] = set()  # runs whose texts share a digest without being equal
    for start in range(0, len(copies), SCORE_PAIRS):
        part = slice(start, start + SCORE_PAIRS)
        equal = np.array(
            [
                copy == original
                for copy, original in zip(
                    texts.take(copies[part]), texts.take(originals[part]), strict=True
                )
            ],
            dtype=bool,
        )
        result.of[copies[part][equal] - first_new] = originals[part][equal]
        result.similarity[copies[part][equal] - first_new] = 100.0
        collided.update(runs[part][~equal].tolist())
    if collided:
        _match_collided_copies(texts, digests, collided, result)


def _match_collided_copies(
    texts: TextSource, digests: np.ndarray, runs: set[int], result: NearDuplicates
) -> None:
    """Exact copies among texts whose digests collide, by comparing the texts themselves."""
    order = np.argsort(digests, kind="stable")
    sorted_digests = digests[order]
    starts = np.flatnonzero(np.r_[True, sorted_digests[1:] != sorted_digests[:-1]])
    ends = np.r_[starts[1:], len(order)]
    for run in sorted(runs):
        members = order[starts[run] : ends[run]]
        first_seen: dict[str, int] = {}
        for position, text in zip(members.tolist(), texts.take(members), strict=True):
            earliest = first_seen.setdefault(text, position)
            if position >= result.first_new:
                new_index = position - result.first_new
                if earliest != position:
                    result._set(new_index, earliest, 100.0)
                else:  # not the copy the digest suggested
                    result._set(new_index, -1, 0.0)


def _match_directly(texts: TextSource, threshold: float, result: NearDuplicates) -> None:
    """Score a few new texts against every text before each (exact, no blocking)."""
    first_new = result.first_new
    new = texts.read(first_new, len(texts))
    pending = [i for i, text in enumerate(new) if result.of[i] < 0 and text]
    if not pending:
        return
    queries = [new[i] for i in pending]
    limits = [first_new + i for i in pending]  # each new text is compared with those before it
    hits: list[list[tuple[float, int, str]]] = [[] for _ in pending]
    for start in range(0, max(limits), DIRECT_CHUNK):
        chunk = texts.read(start, min(max(limits), start + DIRECT_CHUNK))
        scores = process.cdist(
            queries, chunk, scorer=fuzz.ratio, score_cutoff=threshold, dtype=np.float64
        )
        rows, columns = np.nonzero(scores >= threshold)
        for row, column in zip(rows.tolist(), columns.tolist(), strict=True):
            if start + column < limits[row]:
                hits[row].append((-float(scores[row, column]), start + column, chunk[column]))
        for row_hits in hits:  # the best few are plenty: keep memory bounded
            if len(row_hits) > DIRECT_HITS_KEPT:
                row_hits.sort(key=lambda hit: hit[:2])
                del row_hits[DIRECT_HITS_KEPT:]
    for row, new_index in enumerate(pending):
        for negative_score, position, text in sorted(hits[row], key=lambda hit: hit[:2]):
            if not different_questions(queries[row], text):
                result._set(new_index, position, -negative_score)
                break


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
    codes = code_points[:count].copy()
    with np.errstate(over="ignore"):
        for offset in range(1, n):  # a polynomial hash; wrapping at 2**64 is intended
            codes *= np.uint64(0x100000001B3)
            codes += code_points[offset : offset + count]
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


def _text_bits(count: int) -> int:
    return max(1, (count - 1).bit_length())


def _sketch_entries(
    texts: TextSource, buckets: np.ndarray | None, ngram: int, sketch_size: int
) -> np.ndarray | None:
    """Every text's sketch as sorted packed ``(n-gram, text)`` entries: n-gram frequencies
    exact when the texts are small enough to hash at once, else (``buckets`` counted)
    in chunks.  (Sorting packed integer keys is used throughout: much faster than
    ``np.unique`` on several million values.)"""
    text_bits = _text_bits(len(texts))
    if buckets is None:
        return _sketch_entries_exact(texts.read(0, len(texts)), ngram, sketch_size, text_bits)
    return _sketch_entries_chunked(texts, buckets, ngram, sketch_size, text_bits)


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
    max_frequency = max(MIN_COMMON, count // COMMON_SHARE)
    common = row_frequency > max_frequency
    return np.sort(_bottom_k(text_of, gram_of, common, hash_bits, text_bits, sketch_size))


def _bottom_k(
    text_of: np.ndarray,
    gram_of: np.ndarray,
    common: np.ndarray,
    hash_bits: int,
    text_bits: int,
    sketch_size: int,
) -> np.ndarray:
    """Each text's sketch from its n-grams (``text_of``, ``gram_of`` their top ``hash_bits``
    of hash, both uint64; ``common``: found in too many texts), as packed ``(n-gram, text)``
    entries, unsorted.

    A sketch is bottom-k by hash among the text's n-grams that are not common, and common
    ones only when it has too few others.  (Ranking purely by rarity would pick, in a
    cluster of variants, the n-grams most variants lost, which two given variants rarely
    share.)  Packed key: text, then common-or-not, then the n-gram's hash.
    """
    by_text = np.sort(
        (text_of << np.uint64(hash_bits + 1))
        | (common.astype(np.uint64) << np.uint64(hash_bits))
        | gram_of
    )
    text_of = by_text >> np.uint64(hash_bits + 1)
    gram_of = by_text & np.uint64((1 << hash_bits) - 1)
    text_starts, text_lengths = _runs(text_of)
    rank = np.arange(len(text_of)) - np.repeat(text_starts, text_lengths)
    keep = rank < sketch_size
    return (gram_of[keep] << np.uint64(text_bits)) | text_of[keep]


def _distinct_grams(texts: Sequence[str], ngram: int) -> tuple[np.ndarray, np.ndarray]:
    """Each text's distinct n-gram hashes (mixed) with the text's index in ``texts``.

    The text's index and the top bits of the hash are packed into one key and sorted (ten
    times faster than ``np.lexsort``); the hashes come back with their lowest bits zero,
    as many as the index took (an n-gram is known by the top bits of its hash anyway).
    """
    codes, owners = _ngram_codes(texts, ngram)
    if not len(codes):
        return np.empty(0, np.uint64), np.empty(0, np.int64)
    owner_bits = np.uint64(_text_bits(len(texts)))
    keys = (owners.astype(np.uint64) << (np.uint64(64) - owner_bits)) | (_mix(codes) >> owner_bits)
    keys.sort()
    keys = keys[np.r_[True, keys[1:] != keys[:-1]]]
    return keys << owner_bits, (keys >> (np.uint64(64) - owner_bits)).astype(np.int64)


def _sketch_entries_chunked(
    texts: TextSource, buckets: np.ndarray, ngram: int, sketch_size: int, text_bits: int
) -> np.ndarray | None:
    """As ``_sketch_entries_exact``, a chunk of texts at a time (:func:`_chunk_size`), with
    the n-gram frequencies of ``buckets`` (:func:`_profile`)."""
    count = len(texts)
    hash_bits = 63 - text_bits
    shift = np.uint64(64 - BUCKET_BITS)
    max_frequency = max(MIN_COMMON, count // COMMON_SHARE)
    # At most sketch_size entries a text; pages never written are never in memory.
    entries = np.empty(count * sketch_size, dtype=np.uint64)
    filled = 0
    size = _chunk_size(texts)
    for start in range(0, count, size):
        hashes, owners = _distinct_grams(texts.read(start, start + size), ngram)
        frequency = buckets[(hashes >> shift).astype(np.intp)]
        shared = frequency >= 2
        hashes, owners, frequency = hashes[shared], owners[shared] + start, frequency[shared]
        part = _bottom_k(
            owners.astype(np.uint64),
            hashes >> np.uint64(64 - hash_bits),
            frequency > max_frequency,
            hash_bits,
            text_bits,
            sketch_size,
        )
        entries[filled : filled + len(part)] = part
        filled += len(part)
    if not filled:
        return None
    entries = entries[:filled]
    entries.sort()
    return entries


def _candidate_blocks(
    entries: np.ndarray | None, count: int, first_new: int, *, window: int, min_shared: int
) -> Iterator[np.ndarray]:
    """Candidate pairs ``(later, earlier)``, sorted, one block of later texts at a time:
    texts whose sketches (``entries``, sorted packed ``(n-gram, text)``; consumed) share
    at least ``min_shared`` n-grams.

    Within one n-gram's run of entries each text is paired with up to ``window`` texts on
    either side: a common n-gram cannot make a quadratic number of pairs.  The run is
    ordered by each text's *signature*, the smallest n-gram of its sketch, so texts whose
    sketches begin alike (near-copies, more often than not) sit side by side however far
    apart they are in the file: in a run of thousands, a copy still meets its original.
    All keys of one pair share its later text, so pairs are counted one block of later
    texts at a time: memory holds a block's keys (about ``PAIR_KEYS_PER_BLOCK``), not
    every key at once.
    """
    if entries is None:
        return
    text_bits = _text_bits(count)
    hash_bits = 63 - text_bits
    gram_bits = 64 - SIGNATURE_BITS - text_bits  # what is kept of an n-gram's hash
    text_mask = np.uint64((1 << text_bits) - 1)
    if count > 1 << 32:
        raise ValueError("more than 2**32 texts")  # text positions are held as uint32
    text_of = (entries & text_mask).astype(np.uint32)
    grams = np.right_shift(entries, np.uint64(text_bits), out=entries)
    signature = np.full(count, np.iinfo(np.uint64).max, dtype=np.uint64)
    np.minimum.at(signature, text_of, grams)
    signature >>= np.uint64(hash_bits - SIGNATURE_BITS)
    # Entries again, ordered by n-gram, then signature, then text (rewritten in place, a
    # slice at a time, so no second copy of them is ever held).
    for start in range(0, len(grams), 1 << 20):
        part = slice(start, start + (1 << 20))
        texts = text_of[part]
        entries[part] = (
            ((grams[part] >> np.uint64(hash_bits - gram_bits)) << np.uint64(64 - gram_bits))
            | (signature[texts] << np.uint64(text_bits))
            | texts.astype(np.uint64)
        )
    del signature, grams, text_of
    entries.sort()
    text_of = (entries & text_mask).astype(np.uint32)
    grams = np.right_shift(entries, np.uint64(64 - gram_bits), out=entries)
    # How many entries before and after each one belong to the same n-gram, up to the
    # window (runs are contiguous, so one comparison per distance tells).
    before = np.zeros(len(grams), dtype=np.uint8)
    after = np.zeros(len(grams), dtype=np.uint8)
    for distance in range(1, min(window, len(grams) - 1) + 1):
        same = grams[distance:] == grams[:-distance]
        before[distance:] += same
        after[:-distance] += same
    del grams, entries, same
    # Keys per text (at most; a pair counts where its later text is), a slice at a time:
    # bincount makes 8-byte copies of its input.
    keys_per_text = np.zeros(count, dtype=np.int64)
    for start in range(0, len(text_of), 1 << 20):
        part = slice(start, start + (1 << 20))
        keys_per_text += np.bincount(
            text_of[part], weights=before[part] + after[part], minlength=count
        ).astype(np.int64)
    keys_per_text = np.cumsum(keys_per_text[first_new:])
    if not len(keys_per_text) or keys_per_text[-1] == 0:
        return
    cuts = np.searchsorted(
        keys_per_text, np.arange(PAIR_KEYS_PER_BLOCK, keys_per_text[-1], PAIR_KEYS_PER_BLOCK)
    )
    bounds = np.unique(np.r_[0, cuts, count - first_new]) + first_new
    for low, high in zip(bounds[:-1].tolist(), bounds[1:].tolist(), strict=True):
        positions = np.flatnonzero((text_of >= low) & (text_of < high))
        later = text_of[positions].astype(np.int64)
        keys: list[np.ndarray] = []
        for reach, step in ((before[positions], -1), (after[positions], 1)):
            for distance in range(1, window + 1):
                paired = reach >= distance
                if not paired.any():
                    break
                other = text_of[positions[paired] + step * distance].astype(np.int64)
                this = later[paired]
                earlier = other < this  # each pair once: where its later text is
                keys.append(this[earlier] * count + other[earlier])
        if not keys:
            continue
        pair_keys = np.concatenate(keys)
        del keys
        pair_keys.sort()
        starts, shared_grams = _runs(pair_keys)
        pair_keys = pair_keys[starts[shared_grams >= min_shared]]
        if len(pair_keys):
            yield np.stack([pair_keys // count, pair_keys % count], axis=1)


def _match_pairs(
    texts: TextSource,
    pairs: np.ndarray,
    lengths: np.ndarray,
    threshold: float,
    result: NearDuplicates,
) -> None:
    """Score candidate pairs (one block, every pair of its later texts) and keep each later
    text's best match."""
    first_new = result.first_new
    pairs = pairs[result.of[pairs[:, 0] - first_new] < 0]  # exact copies are settled
    # A ratio of at least T needs the shorter text to be at least T/(200-T) of the longer.
    short = np.minimum(lengths[pairs[:, 0]], lengths[pairs[:, 1]])
    total = lengths[pairs[:, 0]] + lengths[pairs[:, 1]]
    pairs = pairs[200.0 * short >= threshold * total - 1e-9]
    if not len(pairs):
        return
    scores = np.empty(len(pairs), dtype=np.float32)
    for start in range(0, len(pairs), SCORE_PAIRS):  # texts read for a few pairs at a time
        part = pairs[start : start + SCORE_PAIRS]
        later_texts, earlier_texts = texts.take(part[:, 0]), texts.take(part[:, 1])
        part_scores = process.cpdist(
            later_texts, earlier_texts, scorer=fuzz.ratio, score_cutoff=threshold, dtype=np.float32
        )
        for hit in np.flatnonzero(part_scores >= threshold).tolist():
            if different_questions(later_texts[hit], earlier_texts[hit]):
                part_scores[hit] = -1.0  # never a match
        scores[start : start + len(part)] = part_scores
    hits = np.flatnonzero(scores >= threshold)
    if not len(hits):
        return
    # Best match per later text; on equal scores the earliest text wins.
    ordered = hits[np.lexsort((pairs[hits, 1], -scores[hits], pairs[hits, 0]))]
    best = ordered[np.r_[True, pairs[ordered[1:], 0] != pairs[ordered[:-1], 0]]]
    for position in best.tolist():
        later, earlier = pairs[position].tolist()
        result._set(later - first_new, earlier, float(scores[position]))

"""What a near-copy changed against its original, in words a reviewer reads.

Near-duplicate detection (``db.dedup``) finds a copy by its canonical text
(``db.canonical_text``), which leaves out everything a copy may change without asking a
different question: the order and labels of the choices (and so the key), width forms,
case, spacing, punctuation, a question number.  :func:`describe_differences` names
those changes afterwards, and any change of wording it finds besides;
:func:`read_duplicate` says from them what the pair is: a copy, the opposite question,
or a shared stem (the ``duplicate`` flag's words, and triage's).
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from rapidfuzz.distance import Indel, Levenshtein

from db.answers import format_answer
from db.canonical_text import normalize, strip_label, strip_numbering
from db.vocabulary import ItemKind

_WHITESPACE = re.compile(r"\s+")
_TOKEN = re.compile(r"[A-Za-z0-9]+|\s+|.", re.DOTALL)


@dataclass(frozen=True)
class ItemText:
    """The parts of an item that :func:`describe_differences` compares."""

    kind: str
    prompt: str
    choices: Mapping[str, str]
    key: str


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
    copy_texts = [normalize(strip_label(t)) for t in copy.choices.values()]
    original_texts = [normalize(strip_label(t)) for t in original.choices.values()]
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
        unlabelled = strip_label(new_text), strip_label(old_text)
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
    unnumbered = strip_numbering(copy), strip_numbering(original)
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


# The differences a copy may show and still ask the same question (a different key on the
# same text: a copy, and its summary says the keys disagree).
_FORM_ONLY = re.compile(
    r"(choices|events) reordered|key remapped|a different key|labels written into|"
    r"(full-width/half-width forms|letter case|spacing|punctuation) in the|"
    r"a question number before|two (choices|events) read the same|a \w+ item copied as"
)
# Words that turn a question into its opposite (属于 / 不属于, 正确 / 不正确, "not").
_NEGATION = re.compile(r"不|非|错误|除外|\bnot\b|n't|\bexcept\b|\bincorrect\b|\bfalse\b", re.I)


@dataclass(frozen=True)
class DuplicateReading:
    """What a near-duplicate pair is, in words: ``copy`` when the differences are of form
    alone (or the item file says so); else the opposite question or a shared stem, which a
    lead compares rather than rejects."""

    copy: bool
    text: str


def read_duplicate(
    of: str,
    similarity: float | None,
    differences: Sequence[str],
    *,
    prompt: str,
    other_prompt: str,
    stated: bool = False,
) -> DuplicateReading:
    """How the item whose question is ``prompt`` reads beside ``of`` (``other_prompt``),
    from :func:`describe_differences`' words: "copies" said of a reworded question was
    contradicted by triage's "not certainly a copy" about the same flag."""
    similar = f"{similarity:.0f}% similar" if similarity is not None else "similarity not given"
    changed = [difference for difference in differences if not _FORM_ONLY.match(difference)]
    if stated or not changed:
        what = "; ".join(differences) if differences else "an exact copy"
        states = " (as the item file states)" if stated else ""
        return DuplicateReading(True, f"copies {of}{states} ({similar}): {what}")
    words = Counter(word.lower() for word in _NEGATION.findall(prompt))
    other = Counter(word.lower() for word in _NEGATION.findall(other_prompt))
    if words != other:
        negations = "/".join(f"“{w}”" for w in sorted(set(words) ^ set(other) or words | other))
        return DuplicateReading(
            False,
            f"the opposite question of {of}, not a copy ({similar}; {negations} in one question "
            "only): one may give the other away; worth a look at both",
        )
    return DuplicateReading(
        False,
        f"a shared stem with {of}, not certainly a copy ({similar}; {'; '.join(differences)}); "
        "worth a look at both",
    )

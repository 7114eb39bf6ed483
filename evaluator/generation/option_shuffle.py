"""Deterministic option shuffles with the key remapped, as CFLUE did when it rewrote questions.

The shuffle is drawn from a seed string, so the same question, sample and seed
always get the same order.  True/false items keep A = true, B = false.
Letters that an explanation uses to point at options (``选项D``, ``option B``,
``(C)``, ``（A正确）``) or to state the answer (``故选A``, ``答案为A、C``, ``本题选ABDE``: the
answer markers the extractors read, ``evaluator.extraction.ANSWER_MARKER``) are
remapped too, so the explanation still matches the new labels.  A listed set (``A、C``,
``A 和B``) comes back in order; clause punctuation (``，；``) separates statements (``故选D，
ABC选项……``: D, then ABC), and a run of several letters is a set of its own.  A share class in
brackets (``（A股）``, ``(B shares)``) is no option and stays.
"""

from __future__ import annotations

import random
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from db.answers import LETTERS
from db.vocabulary import ItemKind
from evaluator.extraction import ANSWER_MARKER, MARKER_GAP

# Option letters, alone, run together (AB) or listed (A、C / A, C / A 和B / D -> A -> C).
_LETTER_RUN = r"[A-H](?:[ \t]*(?:[、,，/;；>→和与]|->)?[ \t]*[A-H])*"
# Clause punctuation ends one statement of letters and starts another: in ``故选D，ABC选项
# 根据题意……`` D is the answer and ABC the other options, two sets, not one.
_CLAUSE_BREAK = re.compile(r"([，；;])")
# What a bracketed reference says of its letters: （A正确）, （B项错误）, （A、C均正确）,
# （D：错）, （AC两项）, (B is wrong), (C is the answer).  Bare 对/错 only before neither a Han
# character nor a letter: 对 also starts words (对于, 对应, 对B公司的投资).
_JUDGEMENT = (
    r"[ \t]*[，,：:]?[ \t]*(?:[两二三四五六七八]?选?项|(?:说法|表述)?[均都皆亦也]?[是为]?"
    r"(?:不正确|正确|错误|(?:不对|对|错)(?![\u4e00-\u9fffA-Za-z])))"
    r"|[ \t]+(?:is|are)[ \t]+(?:not[ \t]+)?(?:the[ \t]+)?"
    r"(?:correct|incorrect|wrong|right|true|false|best|answer)(?![A-Za-z])"
)
# How explanations point at options (选项D / 选项AB, D项 / D选项, option(s) B, (C) / （C）,
# （A正确）) and state the answer (故选A, 答案为A、C, 本题选ABDE, "the answer is B").
# A bracket opens a reference only when it closes right after the letters or judges them:
# （A股）, （H股） and (A shares) name shares, not options.
_REFERENCE = re.compile(
    rf"(?P<pre>选项|[Oo]ptions?\s+|{ANSWER_MARKER}{MARKER_GAP})"
    rf"(?P<letters>{_LETTER_RUN})(?=[^A-Za-z]|$)"
    rf"|(?P<bracket>[(（])(?P<bracketed>{_LETTER_RUN})(?=[ \t]*[)）]|{_JUDGEMENT})"
    rf"|(?P<letters2>(?<![A-Za-z]){_LETTER_RUN})(?P<post>项|选项)"
)


@dataclass(frozen=True)
class ShuffledOptions:
    choices: dict[str, str]  # new label -> text
    key: str  # the key in the new labels (a choice set sorted, an order in order)
    source_labels: str  # the old label now under each new label: "CADB" = new A was old C

    def new_label(self) -> dict[str, str]:
        """Old label -> new label."""
        return {old: LETTERS[index] for index, old in enumerate(self.source_labels)}

    def to_source(self, answer: str, kind: ItemKind | str) -> str:
        """An answer read in the shown labels, in the item's own and in canonical form:
        every position of an order mapped, a set of letters mapped and put in order
        (``ABD`` shown is ``DCA`` mapped, ``ACD`` stored).  Letters the item lacks stay.

        A set written out of order (``BA``: CFLUE's reader keeps letters as written, and
        the key is in order, so it is wrong) stays out of order: mapped letter by letter,
        reversed when that happens to put it in order.  Before, ``BA`` shown could come
        back ``AB``, right under --permute-options where CFLUE's rule scores it wrong."""
        original = dict(zip(LETTERS, self.source_labels, strict=False))
        mapped = [original.get(letter, letter) for letter in answer]
        if ItemKind(kind) is ItemKind.ORDERING:
            return "".join(mapped)

        def in_order(letters: Sequence[str]) -> list[str]:
            return sorted(letters, key=lambda x: (x not in LETTERS, LETTERS.find(x), x))

        if list(answer) == in_order(answer):
            return "".join(in_order(mapped))
        return "".join(mapped if mapped != in_order(mapped) else mapped[::-1])


def shuffle_options(
    choices: Mapping[str, str], key: str, kind: ItemKind | str, seed: str
) -> ShuffledOptions:
    """A seeded, non-identity permutation of ``choices`` (identity for true/false).

    ``key`` must be canonical for ``kind`` (see ``db.validation``).
    """
    old_labels = list(choices)
    order = list(old_labels)
    if ItemKind(kind) is not ItemKind.TRUEFALSE and len(order) > 1:
        rng = random.Random(seed)
        while order == old_labels:  # a "shuffle" that changes nothing would not be one
            rng.shuffle(order)
    mapping = {old: LETTERS[index] for index, old in enumerate(order)}
    new_choices = {LETTERS[index]: choices[old] for index, old in enumerate(order)}
    remapped = [mapping[letter] for letter in key]
    if ItemKind(kind) is not ItemKind.ORDERING:  # a choice set is stored sorted; an order is not
        remapped.sort(key=LETTERS.index)
    return ShuffledOptions(new_choices, "".join(remapped), "".join(order))


def remap_letter_references(text: str, mapping: Mapping[str, str], kind: ItemKind | str) -> str:
    """Rewrite option letters in ``text`` (``选项D`` -> ``选项A``, ``故选D`` -> ``故选A``)
    through ``mapping`` (old -> new).  A set of letters comes back in order (``选项AB``,
    ``答案为A、C``); an order's letters keep their sequence (``kind`` ordering)."""
    in_order = ItemKind(kind) is not ItemKind.ORDERING

    def swap_set(part: str) -> str:
        groups = re.findall(r"[A-H]+", part)
        if not in_order:
            new = [mapping[letter] for letter in "".join(groups)]
        elif all(len(group) == 1 for group in groups):
            # A listed set (A、C, A 和B, A, C): the list in order, as 答案为A、C is read.
            new = sorted((mapping[letter] for letter in "".join(groups)), key=LETTERS.index)
        else:
            # Runs of several letters (D, ABC) are sets of their own, each put in order.
            new = [
                letter
                for group in groups
                for letter in sorted((mapping[old] for old in group), key=LETTERS.index)
            ]
        mapped = iter(new)
        return "".join(next(mapped) if char in LETTERS else char for char in part)

    def swap(run: str) -> str:
        if not all(letter in mapping for letter in run if letter in LETTERS):
            return run  # not a reference to these options
        return "".join(
            part if _CLAUSE_BREAK.fullmatch(part) else swap_set(part)
            for part in _CLAUSE_BREAK.split(run)
        )

    def replace(match: re.Match[str]) -> str:
        if match.group("letters") is not None:
            return match.group("pre") + swap(match.group("letters"))
        if match.group("bracketed") is not None:
            return match.group("bracket") + swap(match.group("bracketed"))
        return swap(match.group("letters2")) + match.group("post")

    return _REFERENCE.sub(replace, text)

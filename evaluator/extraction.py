"""Read a model's answer out of free-form output, ending in the canonical forms of ``db.answers``.

``extract_order``, ``extract_choices`` and ``extract_truefalse`` each take a model's
``output`` and the item's choice ``labels`` and return the canonical answer
(``"DACB"``, ``"ABD"``, ``"A"``) or ``None`` when the output holds no readable answer
("unparsed", counted apart from wrong answers).  Which one reads an item's answers
is part of its kind's specification (``evaluator.kinds``: ``kind_spec(kind).extract``).

How an answer is found
----------------------
The output is normalised first (NFKC, so full-width ``Ｄ，Ａ：`` become ``D,A:``;
markdown ``**``/``__``/backticks are dropped).  Then every *answer-like span* is
collected, and **the last one wins**, so reasoning followed by a final answer
yields the final answer, except that a span after an explicit answer marker wins
over every span without one: ``答案：B`` followed by ``解析：选项A正确……`` reads B,
``Correct Order: C, A, B, D. The listed order A, B, C, D is wrong`` reads CABD.
An answer-like span is:

- a run of choice letters right after an answer marker (``Answer:``, ``The answer
  is``, ``The correct order is``, ``答案：``, ``故选``, ``\\boxed{``) or at the very
  start of the output (prompts end with ``Answer:``, so a bare reply is an answer);
- for ordering items, anywhere in the text: a run of exactly as many letters as the
  item has events (``D, A, C, B``, ``DACB``, ``D -> A -> C -> B``, ``D > A > C > B``,
  ``(D) (A) (C) (B)``, ``D、A、C、B``), a numbered list ``1. D 2. A ...`` (inline or one
  per line, event text may follow each letter), consecutive lines that start
  with a letter (``D. <event text>``) or hold nothing but one (``D`` / ``A`` / ...),
  or lower-case letters with explicit separators (``c, a, b, d``, ``c -> a -> b -> d``);
- for multiple-choice items: a line holding nothing but an answer (``**B**``,
  ``(B)``), or letters followed by "is correct" / ``正确``.

Letters inside a run may be separated by spaces, commas (also ``，、;``), arrows
(``->``, ``→``, ``>``, ``=>``), dashes, slashes or "and"/"then"/"和"; a sentence end
(``.``) or a line break ends a run, and so does an opening bracket after a
letter that is not bracketed itself (``C (A、B项均错误)`` is the answer C and a remark
about A and B; ``(D) (A) (C) (B)`` stays one run).  After an answer marker, letters
past the run's last comma that are followed by ``选项``/``项``/"option(s)" name options
in a remark and end it (``应为AC，B选项不选`` is AC, ``故选D，ABC选项……`` is D).  Only capital letters count,
except in an ordering item's whole order with explicit separators.  A capital "A"
followed by an ordinary lower-case word ("A company ...") is the English article,
not a choice, unless that word is a connective such as "and", "is" or "then".

What counts
-----------
- Ordering: only a true permutation of the item's letters. A repeated, missing or
  unknown letter in the winning span gives ``None``, never a guess; so does a hedge
  that names two whole orders (``D, A, C, B or D, A, B, C``), and any output naming two
  different whole orders with no answer marker before the winning one (``D, B, C, A,
  but maybe D, B, A, C``; ``D, A, C, B. Alternatively, D, A, B, C.``; an order followed
  by the events restated ``A. … B. … C. … D. …``).  After markers the last marked order
  wins, read as a correction (``Answer: A, B, C, D. Wait, the correct order is D, A, C,
  B.`` reads DACB).
- Multiple choice: letters are deduplicated and sorted (``答案：DBA`` -> ``"ABD"``).
  Several letters on a single-answer or true/false item are returned as they are,
  so the item is scored **wrong** rather than unparsed. A letter that is not one of
  the item's choices gives ``None``, and so does a winning span that offers its letters
  as alternatives (``A or B``, ``A/B``, ``A或B``, ``A还是B``), on every choice kind:
  read as the set AB, the hedge scored as a right answer to a multi-answer item whose
  key is AB.
- True/false is also read from 对/错, 正确/错误 (不对/不正确 mean false) and
  true/false; ``"A"`` is true and ``"B"`` is false, as in ``db.answers``.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from db.answers import FALSE_LABEL, LETTERS, TRUE_LABEL

# Words that may follow a choice letter "A" without making it the English article.
_CONNECTIVES = (
    "and|or|then|is|was|are|were|be|because|since|as|so|which|that|comes|come|happens|"
    "happened|occurs|occurred|precedes|preceded|follows|followed|before|after|leads|led|"
    "causes|caused|triggers|must|should|would|will|can|could|to|with|first|last|next|"
    "seems|appears|only|also|alone"
)
_OPEN = r"[(\[{【「《\"'“‘]?"
_CLOSE = r"[)\]}】」》\"'”’]?"
# Between two letters of one run: punctuation, arrows, dashes, connective words.
_SEPARATOR = (
    r"(?:(?:[ \t]*(?:[,;、/|&+>»→⟶➔➜⇒\-–—=]|(?:and|then|or|finally|lastly|next|followed[ \t]+by)"
    r"(?![A-Za-z])|以及|然后|最后|和|及|与|或者|还是|或)[ \t]*)+|[ \t]+|(?<=[)\]】])(?=[(\[【]))"
)
_ITEM_PREFIX = (
    r"(?:(?:[Ee]vent|[Oo]ption|[Cc]hoice|[Ss]tep)[ \t]*|事件|选项|\d+[ \t]*[.)、:][ \t]*)?"
)
_TRUEFALSE_WORD = (
    r"(?:(?<![A-Za-z])(?P<tf_en>[Tt]rue|TRUE|[Ff]alse|FALSE)(?![A-Za-z])"
    r"|(?P<tf_zh>不正确|不对|错误|正确|对|错)(?![\u4e00-\u9fff]))"
)
# After one of these, whatever letters come next are the model's answer (and an
# explanation's, which an option shuffle remaps: evaluator.generation.option_shuffle).
ANSWER_MARKER = (
    r"(?:(?i:final[ \t]+answer|correct[ \t]+(?:answer|option|choice|order|sequence)s?"
    r"|right[ \t]+answer|answers?|the[ \t]+statement|\\boxed\{)"
    r"|正确答案|答案|该说法|说法|应该选|应选|故选|所以选|因此选|选择|答"
    # "本题选C", "所以本题应选C": a choice, but not 选项 (an option) or 不选/可选
    r"|(?<![不未可多单漏])选(?![项题择]))"
)
MARKER_GAP = (
    r"(?:[\s:=#>\-]|(?i:is|are|was|would[ \t]+be|should[ \t]+be|will[ \t]+be|must[ \t]+be"
    r"|probably|likely|option|options|choice|choices|letter|letters|here|as[ \t]+follows)(?![A-Za-z])"
    r"|应该是|应为|应是|为|是|选项|如下)*"
)
# Letters followed by "is correct" / "正确" name the chosen option(s).
_CORRECT_AFTER = (
    r"(?=[ \t]*(?:(?i:is|are)[ \t]+(?:the[ \t]+)?(?i:correct|right|best|true)(?![A-Za-z])"
    r"|(?:选项)?(?:是|为)?正确(?!与否)))"
)
_NUMBERED_LINE = r"(?m)^[ \t>\-•]*(?:[Ss]tep[ \t]*)?(?P<number>\d+)[ \t]*[.)、:][ \t]*"
_LETTER_LINE = r"(?m)^[ \t>\-•]*(?:[Ee]vent[ \t]*|事件)?"
_OPENING_BRACKET = r"[(\[{【「《]"
_CLOSING_BRACKET = r"[)\]}】」》]"
# Lower-case letters count only as a whole order with explicit separators: "c, a, b, d".
_LOWER_SEPARATOR = r"[ \t]*(?:[,;、/|>»→⟶➔➜⇒]|->|=>|-)[ \t]*"


@dataclass(frozen=True)
class _Patterns:
    token: re.Pattern[str]
    run: re.Pattern[str]
    marked_run: re.Pattern[str]
    marked_truefalse: re.Pattern[str]
    line_answer: re.Pattern[str]
    correct_run: re.Pattern[str]
    numbered_item: re.Pattern[str]
    letter_line: re.Pattern[str]
    lower_run: re.Pattern[str]
    marked_lower_run: re.Pattern[str]


@lru_cache(maxsize=32)
def _patterns(labels: str) -> _Patterns:
    """Regular expressions for one set of choice labels (cached: items share a few sets)."""
    label_class = "[" + re.escape(labels) + "]"
    # A single capital letter, or a word made only of this item's labels ("DACB", "ABD").
    core = (
        rf"(?<![A-Za-z0-9])(?:{label_class}{{2,{max(len(labels), 2)}}}|[A-Z])(?![A-Za-z0-9])"
        rf"(?!(?<=A)[ \t]+(?!(?:{_CONNECTIVES})(?![A-Za-z]))[a-z])"
    )
    token = rf"{_OPEN}{core}{_CLOSE}"
    # A bracketed letter continues a run only after a bracketed one: "(D) (A)", not "C (A".
    next_token = (
        rf"(?:(?<={_CLOSING_BRACKET}){_SEPARATOR}{_ITEM_PREFIX}{token}"
        rf"|{_SEPARATOR}{_ITEM_PREFIX}(?!{_OPENING_BRACKET}){token})"
    )
    run = rf"{token}{next_token}*"
    prefixed_run = rf"{_ITEM_PREFIX}(?P<run>{run})"
    lower_class = "[" + re.escape(labels.lower()) + "]"
    lower_run = rf"(?<![A-Za-z0-9]){lower_class}(?:{_LOWER_SEPARATOR}{lower_class})+(?![A-Za-z0-9])"
    marker = rf"(?:(?P<marker>{ANSWER_MARKER})|\A)"
    return _Patterns(
        token=re.compile(core),
        run=re.compile(run),
        marked_run=re.compile(rf"{marker}{MARKER_GAP}{prefixed_run}"),
        marked_truefalse=re.compile(rf"{marker}{MARKER_GAP}{_TRUEFALSE_WORD}"),
        line_answer=re.compile(
            rf"(?m)^[ \t#>\-•(\[]*(?:(?P<run>{run})|{_TRUEFALSE_WORD})[ \t.。!！)\]]*$"
        ),
        correct_run=re.compile(rf"(?P<run>{run}){_CORRECT_AFTER}"),
        numbered_item=re.compile(rf"{_NUMBERED_LINE}{_OPEN}(?P<letter>{core}){_CLOSE}"),
        letter_line=re.compile(
            rf"{_LETTER_LINE}{_OPEN}(?P<letter>{core}){_CLOSE}(?:[.):：]|[ \t.。]*$)"
        ),
        lower_run=re.compile(lower_run),
        marked_lower_run=re.compile(rf"{marker}{MARKER_GAP}(?P<run>{lower_run})"),
    )


# Between two letters, these offer them as alternatives: "A or B", "A/B" is no choice of both.
_ALTERNATIVES = re.compile(r"(?<![A-Za-z])(?i:or)(?![A-Za-z])|或|还是|/")


@dataclass(frozen=True)
class _Candidate:
    end: int  # where the span ends: the last span wins
    letters: str
    marked: bool = False  # after an explicit answer marker: wins over unmarked spans
    hedged: bool = False  # its letters are offered as alternatives ("A or B")


def _winner(candidates: list[_Candidate]) -> _Candidate | None:
    """The last span after an explicit answer marker, else the last span."""
    marked = [candidate for candidate in candidates if candidate.marked]
    return max(marked or candidates, key=lambda candidate: candidate.end, default=None)


def _normalise(output: str) -> str:
    text = unicodedata.normalize("NFKC", output)
    return text.replace("**", "").replace("__", "").replace("`", "")


def _letters_of(patterns: _Patterns, run_text: str) -> str:
    return "".join(match.group(0) for match in patterns.token.finditer(run_text))


def _run_candidate(patterns: _Patterns, end: int, run: str, *, marked: bool = False) -> _Candidate:
    """The span that ends at ``end``, its letters read from ``run`` (the span's letter run)."""
    hedged = _ALTERNATIVES.search(run) is not None
    return _Candidate(end, _letters_of(patterns, run), marked, hedged)


# Letters after a run's last clause break that are followed by 选项/项/option(s) name
# options in a remark, not choices: "应为AC，B选项不选" is AC, "故选D，ABC选项……" is D.
_NAMED_AS_OPTIONS = re.compile(r"[ \t]*(?:选项|项|(?i:options?)(?![A-Za-z]))")
_CLAUSE_BREAK = re.compile(r"[,;]")  # normalised: also ， and ；


def _marked_runs(patterns: _Patterns, text: str, *, min_letters: int) -> list[_Candidate]:
    candidates = []
    for match in patterns.marked_run.finditer(text):
        run, end = match.group("run"), match.end()
        if _NAMED_AS_OPTIONS.match(text, end):
            breaks = list(_CLAUSE_BREAK.finditer(run))
            if breaks:
                run = run[: breaks[-1].start()]
                end = match.start("run") + len(run)
        candidate = _run_candidate(patterns, end, run, marked=match.group("marker") is not None)
        if len(candidate.letters) >= min_letters:
            candidates.append(candidate)
    return candidates


def _lower_case_orders(patterns: _Patterns, text: str, count: int) -> list[_Candidate]:
    """Whole orders written in lower case with explicit separators (``c, a, b, d``)."""
    candidates = []
    for found in (patterns.marked_lower_run, patterns.lower_run):
        for match in found.finditer(text):
            run = match.group("run") if "run" in found.groupindex else match.group(0)
            letters = re.sub(r"[^a-z]", "", run).upper()
            if len(letters) == count:
                marked = "marker" in found.groupindex and match.group("marker") is not None
                candidates.append(_Candidate(match.end(), letters, marked))
    return candidates


def _full_runs(patterns: _Patterns, text: str, count: int) -> list[_Candidate]:
    """Runs anywhere in the text with exactly ``count`` letters (a whole order)."""
    candidates = []
    for match in patterns.run.finditer(text):
        letters = _letters_of(patterns, match.group(0))
        if len(letters) == count:
            candidates.append(_Candidate(match.end(), letters))
    return candidates


def _numbered_lists(patterns: _Patterns, text: str, count: int) -> list[_Candidate]:
    """``1. D`` / ``2. A`` ... one per line (text may follow each letter, lines may lie between)."""
    candidates = []
    letters: list[str] = []
    for match in patterns.numbered_item.finditer(text):
        number = int(match.group("number"))
        if number == 1:
            letters = []
        elif number != len(letters) + 1:
            letters = []
            continue
        letters.append(match.group("letter"))
        if len(letters) == count:
            candidates.append(_Candidate(match.end(), "".join(letters)))
    return candidates


def _letter_lines(patterns: _Patterns, text: str, count: int) -> list[_Candidate]:
    """``count`` consecutive lines each starting with a letter: ``D. <event>`` / ``A. <event>``."""
    candidates = []
    letters: list[str] = []
    previous_line = -2
    for match in patterns.letter_line.finditer(text):
        line = text.count("\n", 0, match.start())
        letters = (
            [*letters, match.group("letter")]
            if line == previous_line + 1
            else [match.group("letter")]
        )
        previous_line = line
        if len(letters) == count:
            candidates.append(_Candidate(match.end(), "".join(letters)))
            letters = []
            previous_line = -2
    return candidates


def _order_candidates(text: str, labels: Sequence[str]) -> list[_Candidate]:
    patterns = _patterns("".join(labels))
    count = len(labels)
    return [
        *_marked_runs(patterns, text, min_letters=2),
        *_full_runs(patterns, text, count),
        *_numbered_lists(patterns, text, count),
        *_letter_lines(patterns, text, count),
        *_lower_case_orders(patterns, text, count),
    ]


def _is_order(letters: str, labels: Sequence[str]) -> bool:
    return len(letters) == len(labels) and set(letters) == set(labels)


def _extract_order(text: str, labels: Sequence[str]) -> str | None:
    """The winning span's order; None when it is no order, or when no marker chose among
    two different whole orders (``D, A, C, B. Alternatively, D, A, B, C.``): a hedge,
    which read as its last order would score two guesses as one answer."""
    candidates = _order_candidates(text, labels)
    winner = _winner(candidates)
    if winner is None or not _is_order(winner.letters, labels):
        return None
    if not winner.marked:
        orders = {
            candidate.letters for candidate in candidates if _is_order(candidate.letters, labels)
        }
        if len(orders) > 1:
            return None
    return winner.letters


def _extract_single_order(text: str, labels: Sequence[str]) -> str | None:
    """The one whole order the text names anywhere, or None when it names none, two
    different ones, or a run that holds every label but is no order (``A, B, C, D, E``)."""
    orders: set[str] = set()
    for candidate in _order_candidates(text, labels):
        if _is_order(candidate.letters, labels):
            orders.add(candidate.letters)
        elif set(labels) <= set(candidate.letters):
            return None  # every event named, with letters too many or repeated
    return orders.pop() if len(orders) == 1 else None


def _truefalse_label(match: re.Match[str]) -> str | None:
    english, chinese = match.group("tf_en"), match.group("tf_zh")
    if english:
        return TRUE_LABEL if english.lower() == "true" else FALSE_LABEL
    if chinese:
        return TRUE_LABEL if chinese in ("对", "正确") else FALSE_LABEL
    return None


def _extract_choices(text: str, labels: Sequence[str], *, truefalse_words: bool) -> str | None:
    patterns = _patterns("".join(labels))
    candidates = _marked_runs(patterns, text, min_letters=1)
    for match in patterns.correct_run.finditer(text):
        candidates.append(_run_candidate(patterns, match.end(), match.group("run")))
    for match in patterns.line_answer.finditer(text):
        if match.group("run"):
            candidates.append(_run_candidate(patterns, match.end(), match.group("run")))
        elif truefalse_words and (label := _truefalse_label(match)):
            candidates.append(_Candidate(match.end(), label))
    if truefalse_words:
        for match in patterns.marked_truefalse.finditer(text):
            label = _truefalse_label(match)
            if label:
                candidates.append(_Candidate(match.end(), label, match.group("marker") is not None))
    winner = _winner(candidates)
    if winner is None or winner.hedged:
        return None
    chosen = set(winner.letters)
    if not chosen or not chosen <= set(labels):
        return None
    return "".join(sorted(chosen, key=LETTERS.index))


def _readable(output: str, labels: Sequence[str]) -> str | None:
    """The normalised output, or None when there is nothing to read an answer from."""
    text = _normalise(output or "")
    return text if text.strip() and labels else None


def extract_order(output: str, labels: Sequence[str]) -> str | None:
    """The order of ``labels`` in ``output`` (``"DACB"``), or None (see the module docstring)."""
    text = _readable(output, labels)
    return None if text is None else _extract_order(text, list(labels))


def extract_single_order(output: str, labels: Sequence[str]) -> str | None:
    """The one order of ``labels`` named anywhere in ``output`` (any shape
    :func:`extract_order` reads), or None when there is none, or more than one."""
    text = _readable(output, labels)
    return None if text is None else _extract_single_order(text, list(labels))


def extract_choices(output: str, labels: Sequence[str]) -> str | None:
    """The chosen letters in ``output``, sorted (``"ABD"``), or None."""
    text = _readable(output, labels)
    return None if text is None else _extract_choices(text, list(labels), truefalse_words=False)


def extract_truefalse(output: str, labels: Sequence[str]) -> str | None:
    """Like :func:`extract_choices`, also reading 对/错, 正确/错误 and true/false."""
    text = _readable(output, labels)
    return None if text is None else _extract_choices(text, list(labels), truefalse_words=True)

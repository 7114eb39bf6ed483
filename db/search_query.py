"""What a search asks for: its terms, the fields it looks in, whole terms, longer terms
that do not count; and the one rule that decides whether a text holds a term.

A search is typed as text (``items --search``, the app's ``/`` box) in one syntax:
white-space separated terms, each of which must occur, plus three kinds of token:

- ``in:FIELD[,FIELD]`` — look only in these fields: ``question`` (an ordering item's
  scenario, a multiple-choice item's question), ``choices`` (its events or options),
  ``explanation``, or ``all``.  Without it: question and choices.  The explanation is
  left out by default because it names other terms in passing (a CFLUE analysis of a
  土地增值税 question cites 增值税 rules), which is not what the item is about.
- ``whole:TERM`` — TERM only as a whole word: not continued by letters or digits on
  either side (``whole:tax`` does not find "taxes", ``whole:2019`` not "20190").
- ``not:LONGER`` — an occurrence of a term inside LONGER does not count:
  ``增值税 not:土地增值税`` finds items that name 增值税 at least once outside
  土地增值税.  LONGER must hold one of the terms.

Why two rules for "whole": Chinese and Japanese write words without spaces, so no
character next to a match tells where a word ends — 增值税 has a Chinese character on
both sides in 287 of its 287 uses in CFLUE's knowledge file (缴纳增值税, 增值税专用发票),
and a rule that demanded a break would find nothing.  A dictionary does not settle it
either: jieba's has no 土地增值税 and segments it 土地 | 增值税.  So between two wide
(CJK) characters ``whole:`` sees a boundary, and the longer terms that must not count
are named with ``not:``, which says exactly what is left out.  The command line's
``--in``, ``--whole`` (every term whole) and ``--not-in`` build the same query.
"""

from __future__ import annotations

import enum
import unicodedata
from dataclasses import dataclass, field

from db.errors import VetbenchError

__all__ = [
    "DEFAULT_FIELDS",
    "MAX_TERMS",
    "SearchError",
    "SearchField",
    "SearchQuery",
    "SearchTerm",
    "fold_case",
    "holds_term",
    "parse_search",
    "search_terms",
]

MAX_TERMS = 32  # every term is one more condition: SQLite refuses a deep enough tree of them


class SearchError(VetbenchError, ValueError):
    """A search the database cannot run as typed (a NUL character, too many terms)."""


class SearchField(enum.StrEnum):
    QUESTION = "question"
    CHOICES = "choices"
    EXPLANATION = "explanation"


DEFAULT_FIELDS: tuple[SearchField, ...] = (SearchField.QUESTION, SearchField.CHOICES)
ALL_FIELDS: tuple[SearchField, ...] = tuple(SearchField)
FIELD_CHOICES = (*(f.value for f in SearchField), "all")
"""What ``--in`` and ``in:`` accept."""


def fold_case(value: str) -> str:
    """``value`` with each character lowercased on its own, as PostgreSQL's ``ILIKE`` does.

    ``str.lower`` alone differs in two places: it turns ``İ`` into two characters and a
    word-final ``Σ`` into ``ς``; a character's own lowercase is ``i`` and ``σ``."""
    return value.replace("\u0130", "i").replace("\u03a3", "\u03c3").lower()


@dataclass(frozen=True)
class SearchTerm:
    text: str
    whole: bool = False


def search_fields(names: tuple[str, ...] | list[str]) -> tuple[SearchField, ...]:
    """``--in`` values (``all`` included) as fields, in their fixed order; a
    :class:`SearchError` naming a value that is not one."""
    chosen: set[SearchField] = set()
    for name in names:
        if name == "all":
            chosen.update(ALL_FIELDS)
        elif name in {f.value for f in SearchField}:
            chosen.add(SearchField(name))
        else:
            raise SearchError(
                f"in:{name} is not a field to search; fields: {', '.join(FIELD_CHOICES)}"
            )
    return tuple(f for f in ALL_FIELDS if f in chosen)


@dataclass(frozen=True)
class SearchQuery:
    """A parsed search.  ``terms`` must all occur (each in one of ``fields``); an
    occurrence inside one of ``not_in`` does not count."""

    terms: tuple[SearchTerm, ...] = ()
    fields: tuple[SearchField, ...] = DEFAULT_FIELDS
    not_in: tuple[str, ...] = field(default=())

    def __post_init__(self) -> None:
        if len(self.terms) + len(self.not_in) > MAX_TERMS:
            raise SearchError(
                f"a search takes at most {MAX_TERMS} different words; this one has "
                f"{len(self.terms) + len(self.not_in):,}"
            )
        if not self.fields:
            raise SearchError("a search looks in at least one field (in:question, ...)")
        for longer in self.not_in:
            if not any(fold_case(t.text) in fold_case(longer) for t in self.terms):
                raise SearchError(
                    f"not:{longer} holds none of the words searched for; it names a longer "
                    "term to leave out, such as 增值税 not:土地增值税"
                )

    @property
    def needs_text_check(self) -> bool:
        """Whether matching needs :func:`holds_term`, beyond substrings in SQL."""
        return bool(self.not_in) or any(term.whole for term in self.terms)

    def describe(self) -> str:
        """The query in its own syntax, canonical: what the app shows and stores."""
        words = [f"whole:{t.text}" if t.whole else t.text for t in self.terms]
        if self.fields != DEFAULT_FIELDS:
            shown = "all" if self.fields == ALL_FIELDS else ",".join(self.fields)
            words.append(f"in:{shown}")
        words.extend(f"not:{longer}" for longer in self.not_in)
        return " ".join(words)


def search_terms(query: str) -> list[str]:
    """The words a query looks for, each once, in order (tokens apart); a
    :class:`SearchError` for a query the database cannot run."""
    return [term.text for term in parse_search(query).terms]


def parse_search(
    query: str,
    *,
    fields: tuple[str, ...] | list[str] = (),
    whole: bool = False,
    not_in: tuple[str, ...] | list[str] = (),
) -> SearchQuery:
    """``query`` in the syntax above; ``fields``, ``whole`` and ``not_in`` are the command
    line's options (``--in`` replaces ``in:``; the others add to the tokens)."""
    if "\0" in query or any("\0" in value for value in (*fields, *not_in)):
        raise SearchError("the search holds a NUL character (\\0); remove it and search again")
    terms: dict[str, SearchTerm] = {}
    typed_fields: list[str] = []
    excluded: dict[str, None] = dict.fromkeys(value for value in not_in if value)
    for word in query.split():
        prefix, colon, rest = word.partition(":")
        if colon and prefix == "in" and rest:
            typed_fields.extend(rest.split(","))
        elif colon and prefix == "not" and rest:
            excluded[rest] = None
        else:
            is_whole = whole or bool(colon and prefix == "whole" and rest)
            term = rest if colon and prefix == "whole" and rest else word
            if term not in terms or is_whole:
                terms[term] = SearchTerm(term, is_whole)
    chosen = search_fields(list(fields) or typed_fields) if fields or typed_fields else None
    return SearchQuery(
        tuple(terms.values()),
        chosen if chosen is not None else DEFAULT_FIELDS,
        tuple(excluded),
    )


def _wide(character: str) -> bool:
    """A character of a script written without spaces between words (Chinese, Japanese)."""
    return unicodedata.east_asian_width(character) in ("W", "F")


def _word_character(character: str) -> bool:
    return character.isalnum() or character == "_"


def _boundary(outside: str, inside: str) -> bool:
    """Whether a word may end between ``inside`` (the term's edge) and ``outside``."""
    if not outside or not _word_character(outside) or not _word_character(inside):
        return True
    return _wide(outside) or _wide(inside)


def holds_term(text: str, term: SearchTerm, not_in: tuple[str, ...] = ()) -> bool:
    """Whether ``text`` holds ``term`` (case folded as :func:`fold_case`): at least one
    occurrence that is whole where the term asks for it and lies inside none of
    ``not_in``."""
    haystack, needle = fold_case(text), fold_case(term.text)
    longer = [fold_case(value) for value in not_in]
    start = haystack.find(needle)
    while start >= 0 and needle:
        end = start + len(needle)
        counts = not term.whole or (
            _boundary(haystack[start - 1] if start else "", needle[0])
            and _boundary(haystack[end] if end < len(haystack) else "", needle[-1])
        )
        if counts and not any(_inside(haystack, start, needle, other) for other in longer):
            return True
        start = haystack.find(needle, start + 1)
    return False


def _inside(haystack: str, start: int, needle: str, longer: str) -> bool:
    """Whether the occurrence of ``needle`` at ``start`` is part of an occurrence of ``longer``."""
    offset = longer.find(needle)
    while offset >= 0:
        if haystack.startswith(longer, start - offset) and start >= offset:
            return True
        offset = longer.find(needle, offset + 1)
    return False

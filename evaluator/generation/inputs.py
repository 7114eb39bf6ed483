"""What item generation reads: articles (CSV or JSONL) and exam questions to rewrite (CFLUE JSON).

Articles need a ``title`` and a ``text``; an ``id`` is optional (the 1-based
row or line number is used instead).  Questions are read with the same CFLUE
reader and validators as import.  Every problem names the file, the line or
record, and the field.
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from pathlib import Path

from db.errors import VetbenchError
from db.formats import cflue, econlogicqa, read_records
from db.formats.base import ARTICLE_FIELDS, FormatError, csv_reader_limit_for
from db.json_input import json_lines
from db.validation import ItemDraft, validate_draft
from evaluator.json_lines import read_input_text

MAX_PROBLEMS_SHOWN = 10


class InputError(VetbenchError, ValueError):
    """An input file that cannot be used; the message names the file and the place."""


@dataclass(frozen=True)
class Article:
    id: str
    title: str
    text: str
    place: str  # "articles.csv: line 3", for messages


@dataclass(frozen=True)
class SourceQuestion:
    """An existing exam question to rewrite; ``draft`` is validated (canonical key)."""

    id: str  # the 1-based record index in its file
    draft: ItemDraft
    place: str


def read_articles(path: Path) -> list[Article]:
    """Articles from a CSV file (header with title, text and optionally id) or a JSONL file."""
    text = _read(path)
    if path.suffix.lower() in (".jsonl", ".ndjson", ".json"):
        articles = _articles_from_jsonl(path, text)
    else:
        articles = _articles_from_csv(path, text)
    if not articles:
        raise InputError(f"{path}: no articles")
    seen: dict[str, str] = {}
    for article in articles:
        if article.id in seen:
            raise InputError(
                f"{article.place}: id '{article.id}' is used twice (first at {seen[article.id]})"
            )
        seen[article.id] = article.place
    return articles


def _read(path: Path) -> str:
    try:
        return read_input_text(path)
    except FormatError as error:
        raise InputError(str(error)) from None


def _article(
    place: str, ordinal: int, record: dict[str, object], problems: list[str]
) -> Article | None:
    bad = False
    values: dict[str, str] = {}
    for name in ARTICLE_FIELDS:
        value = record.get(name)
        if value is None:
            problems.append(f"{place}: {name}: is missing")
            bad = True
        elif not isinstance(value, str):
            problems.append(f"{place}: {name}: must be text, got {type(value).__name__}")
            bad = True
        elif name == "text" and not value.strip():
            problems.append(f"{place}: text: is empty")
            bad = True
        else:
            values[name] = value.strip()
    raw_id = record.get("id")
    if raw_id is None or (isinstance(raw_id, str) and not raw_id.strip()):
        article_id = str(ordinal)
    elif isinstance(raw_id, str | int) and not isinstance(raw_id, bool):
        article_id = str(raw_id).strip()
    else:
        problems.append(f"{place}: id: must be text or a number, got {type(raw_id).__name__}")
        bad = True
        article_id = ""
    if bad:
        return None
    return Article(id=article_id, title=values["title"], text=values["text"], place=place)


def _articles_from_csv(path: Path, text: str) -> list[Article]:
    csv_reader_limit_for(text)
    try:
        reader = csv.DictReader(io.StringIO(text, newline=""))
        header = [name.strip().lower() for name in reader.fieldnames or []]
    except csv.Error as error:
        raise InputError(f"{path}: line 1: malformed CSV ({error})") from None
    missing = [name for name in ARTICLE_FIELDS if name not in header]
    if missing:
        items = {econlogicqa.QUESTION.lower(), econlogicqa.ANSWER.lower()} <= set(header)
        raise InputError(
            f"{path}: line 1: the header needs columns {', '.join(ARTICLE_FIELDS)} "
            f"(and optionally id); missing {', '.join(missing)}"
            + ("; these are EconLogicQA items, which `vetbench import` reads" if items else "")
        )
    reader.fieldnames = header
    articles: list[Article] = []
    problems: list[str] = []
    try:
        for ordinal, row in enumerate(reader, start=1):
            if not any((value or "").strip() for value in row.values() if isinstance(value, str)):
                continue  # a blank line
            place = f"{path}: line {reader.line_num}"
            article = _article(place, ordinal, dict(row), problems)
            if article is not None:
                articles.append(article)
    except csv.Error as error:
        raise InputError(f"{path}: line {reader.line_num}: malformed CSV ({error})") from None
    _raise_problems(problems)
    return articles


def _articles_from_jsonl(path: Path, text: str) -> list[Article]:
    articles: list[Article] = []
    problems: list[str] = []
    ordinal = 0
    for line in json_lines(text.splitlines()):
        ordinal += 1
        place = f"{path}: line {line.number}"
        record = line.value
        if line.error is not None:
            error = line.error
            column = f", column {error.colno}" if error.colno is not None else ""
            problems.append(f"{place}: malformed JSON ({error.msg}{column})")
            continue
        if not isinstance(record, dict):
            problems.append(f"{place}: must be a JSON object, got {type(record).__name__}")
            continue
        article = _article(place, ordinal, record, problems)
        if article is not None:
            articles.append(article)
    _raise_problems(problems)
    return articles


def read_questions(path: Path) -> list[SourceQuestion]:
    """Exam questions from a CFLUE JSON file, validated like an import."""
    try:
        records = list(read_records(path, cflue.NAME))
    except FormatError as error:
        raise InputError(str(error)) from None
    questions: list[SourceQuestion] = []
    problems: list[str] = []
    for record in records:
        found = list(record.problems)
        if record.draft is not None and not found:
            found = validate_draft(record.draft)
        if found:
            problems += [f"{record.place}: {problem}" for problem in found]
            continue
        assert record.draft is not None
        questions.append(SourceQuestion(str(record.ordinal), record.draft, str(record.place)))
    _raise_problems(problems)
    return questions


def _raise_problems(problems: list[str]) -> None:
    if not problems:
        return
    shown = problems[:MAX_PROBLEMS_SHOWN]
    more = len(problems) - len(shown)
    if more:
        shown.append(f"... and {more} more")
    raise InputError("\n".join(shown))

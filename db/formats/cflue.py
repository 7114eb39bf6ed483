"""CFLUE knowledge JSON: an array of objects with ``名称``, ``task``, ``question``,
``choices``, ``answer`` and ``analysis``.

``choices`` is a *string* holding a Python dict literal (``"{'A': '...', 'B': '...'}"``),
not JSON.  It is parsed as a literal after checking that its syntax tree is a dict
of string constants, each written as one quoted string (Python would join ``'it''s'``
into ``its``); it is never evaluated as code.  The exam name ``名称`` is kept
in the item's meta so that an export writes it back, and so is any field the format does
not know (under ``meta["extra_fields"]``), as EconLogicQA CSV keeps its extra columns:
nothing in a record is dropped.
"""

from __future__ import annotations

import ast
import io
import json
import tokenize
from collections.abc import Iterable, Iterator
from functools import partial
from pathlib import Path
from typing import Any, TextIO

import ijson

from db import json_input
from db.answers import LETTERS
from db.errors import VetbenchError
from db.formats.base import (
    STAMP_FIELDS,
    UTF8_BOM,
    FormatError,
    InputFile,
    ParsedRecord,
    Place,
    RecordTooLong,
    UnwritableItem,
    read_text,
    stamp_fields,
)
from db.json_input import repeated_key
from db.json_types import JsonObject
from db.validation import ItemDraft, Problem, is_utf8_text, language_of
from db.vocabulary import ItemKind

NAME = "cflue"
KINDS = frozenset({ItemKind.SINGLE, ItemKind.MULTI, ItemKind.TRUEFALSE})
EXAM_NAME = "名称"
TASK_KINDS = {
    "单项选择题": ItemKind.SINGLE,
    "多项选择题": ItemKind.MULTI,
    "判断题": ItemKind.TRUEFALSE,
}
KIND_TASKS = {kind: task for task, kind in TASK_KINDS.items()}
REQUIRED_FIELDS = ("task", "question", "choices", "answer")
OWN_FIELDS = frozenset({EXAM_NAME, *REQUIRED_FIELDS, "analysis", *STAMP_FIELDS})
EXTRA_FIELDS_META = "extra_fields"  # meta key for the fields the format does not know
# Problems name CFLUE's own fields: "answer", not the validator's "key".
FIELD_NAMES = {
    "key": "answer",
    "explanation": "analysis",
    **{f"choice {label}": f"choices['{label}']" for label in LETTERS},
}


def extra_fields_problems(meta: JsonObject) -> list[Problem]:
    """Why ``meta``'s extra fields cannot be written as fields of a record that read back as
    they are: an object, no name one of the format's own."""
    extra = meta.get(EXTRA_FIELDS_META, {})
    if not isinstance(extra, dict):
        got = type(extra).__name__
        return [Problem(EXTRA_FIELDS_META, f"must be an object of field names, got {got}")]
    return [
        Problem(f"{EXTRA_FIELDS_META}.{name}", f"{name} is a field of CFLUE JSON itself")
        for name in extra
        if name in OWN_FIELDS
    ]


class ChoicesError(VetbenchError, ValueError):
    """A ``choices`` string that is not a dict literal of strings."""


def exam_name_problems(meta: JsonObject) -> list[Problem]:
    """Why ``meta``'s exam name cannot be written as a ``名称`` this reader takes back: it is
    text (or null, as a CFLUE file may state it)."""
    name = meta.get(EXAM_NAME)
    if name is None or isinstance(name, str):
        return []
    return [Problem(EXAM_NAME, f"must be text, got {type(name).__name__}")]


def _quoted_strings(source: str) -> list[list[str]]:
    """The quoted strings of each label and choice of the dict literal ``source``, in order
    (label, choice, label, choice ...): one each, or several that Python joins into one.

    One pass of the tokenizer over the whole literal: tokenizing each label and choice
    apart (``ast.get_source_segment``, then the tokenizer) was a quarter of the time an
    import of the real CFLUE file took."""
    parts: list[list[str]] = [[]]
    depth = 0
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.STRING:
            parts[-1].append(token.string)
        elif token.type == tokenize.OP and token.string in "([{":
            depth += 1
        elif token.type == tokenize.OP and token.string in ")]}":
            depth -= 1
        elif token.type == tokenize.OP and token.string in ":," and depth == 1:
            parts.append([])
    return [part for part in parts if part]  # a trailing comma leaves an empty part


def parse_choices(text: str) -> dict[str, str]:
    """Parse ``"{'A': '...', 'B': '...'}"`` into a dict, refusing anything but string constants
    and quoted strings side by side, which Python joins into one without a word (``'it''s'``
    reads as ``its``): a quote left unescaped, most likely."""
    source = text.strip()
    try:
        tree = ast.parse(source, mode="eval")
    except (SyntaxError, ValueError) as error:
        raise ChoicesError(f"is not a Python dict literal ({error.args[0]})") from None
    node = tree.body
    if not isinstance(node, ast.Dict):
        raise ChoicesError("is not a dict literal such as {'A': '...', 'B': '...'}")
    strings = _quoted_strings(source)
    labels: list[str] = []
    for index, (key, value) in enumerate(zip(node.keys, node.values, strict=True)):
        if not (isinstance(key, ast.Constant) and isinstance(key.value, str)):
            raise ChoicesError("has a label that is not a quoted string")
        if not (isinstance(value, ast.Constant) and isinstance(value.value, str)):
            raise ChoicesError(f"choice {key.value} is not a quoted string")
        for what, part in (
            ("a label", strings[2 * index]),
            (f"choice {key.value}", strings[2 * index + 1]),
        ):
            if len(part) > 1:
                raise ChoicesError(
                    f"{what} is {len(part)} quoted strings side by side ({' '.join(part)}), "
                    "which Python would join; escape the quote inside one string (\\')"
                )
        if key.value in labels:
            raise ChoicesError(f"names choice {key.value} twice")
        labels.append(key.value)
    # Only string constants are left, so literal_eval cannot run anything.
    parsed = ast.literal_eval(tree)
    return {str(label): str(parsed[label]) for label in labels}


def format_choices(choices: dict[str, str]) -> str:
    """The Python dict literal CFLUE stores in ``choices`` (``repr`` round-trips through ``parse_choices``)."""
    return repr(dict(choices))


def _record(source: InputFile, index: int, raw: object) -> ParsedRecord:
    place = Place(source.shown, record=index)
    if not isinstance(raw, dict):
        problem = Problem("", f"must be a JSON object, got {type(raw).__name__}")
        return ParsedRecord(place, index, problems=[problem])
    problems = [Problem(name, "is missing") for name in REQUIRED_FIELDS if raw.get(name) is None]
    task = raw.get("task")
    kind = TASK_KINDS.get(task) if isinstance(task, str) else None
    if task is not None and kind is None:
        known = ", ".join(TASK_KINDS)
        if isinstance(task, str) and not is_utf8_text(task):
            # A file saved as GBK: say so, not the escaped bytes (the import notes the encoding).
            problems.append(Problem("task", "is not valid UTF-8 text"))
        else:
            problems.append(Problem("task", f"'{task}' is not one of {known}"))
    choices: dict[str, str] = {}
    raw_choices = raw.get("choices")
    if isinstance(raw_choices, dict) and all(isinstance(v, str) for v in raw_choices.values()):
        choices = {str(label): text for label, text in raw_choices.items()}  # already parsed
    elif isinstance(raw_choices, str):
        try:
            choices = parse_choices(raw_choices)
        except ChoicesError as error:
            problems.append(Problem("choices", str(error)))
    elif raw_choices is not None:
        problems.append(Problem("choices", "must be a string holding a dict literal"))
    for name in ("question", "answer", "analysis", EXAM_NAME):
        value = raw.get(name)
        if value is not None and not isinstance(value, str):
            problems.append(Problem(name, f"must be text, got {type(value).__name__}"))
    if problems or kind is None:
        return ParsedRecord(place, index, problems=problems)
    meta: JsonObject = {}
    if EXAM_NAME in raw:
        meta[EXAM_NAME] = raw[EXAM_NAME]
    extra = {name: value for name, value in raw.items() if name not in OWN_FIELDS}
    if extra:
        meta[EXTRA_FIELDS_META] = extra
    draft = ItemDraft(
        kind=kind.value,
        prompt=raw["question"],
        choices=choices,
        key=raw["answer"],
        explanation=raw.get("analysis"),
        language=language_of(raw["question"], *choices.values()),
        source_ref=place.source_ref,
        meta=meta,
        provenance={"file": source.file_name, "record": index, "format": NAME},
        field_names=FIELD_NAMES,
    )
    return ParsedRecord(place, index, draft=draft)


# A regular file up to this size is read again, whole, to say where malformed JSON
# is (the streaming parser does not know lines) or to name the field holding bytes
# that are not UTF-8; a pipe cannot be read twice, nor a larger file in bounded memory.
REREAD_LIMIT_BYTES = 64 * 1024 * 1024


def read(source: InputFile) -> Iterator[ParsedRecord]:
    """Yield one record per element of the JSON array as it is read (indexes start at 1).

    The array is parsed incrementally (``ijson``), so memory holds one record at a
    time however long the file is.
    """
    first = source.head.removeprefix(UTF8_BOM).lstrip()[:1]
    if first == b"{":
        raise FormatError(source.shown, "expected a JSON array of objects, got an object")
    if first != b"[":
        raise FormatError(source.shown, "malformed JSON: expected a JSON array of objects")
    index = 0
    repeats: list[_NotingRepeats] = []
    objects = partial(_NotingRepeats, repeats)
    try:
        for raw in ijson.items(source.binary, "item", use_float=True, map_type=objects):
            index += 1
            source.record_ended()
            key = _repeated_key(raw) if repeats else None
            if key is not None:  # the whole file is refused, as for malformed JSON
                error = ValueError(repeated_key(key))
                yield from _read_again(source, index - 1, error, f"in record {index}")
                return
            yield _record(source, index, raw)
    except RecordTooLong:
        raise source.too_long(f"record {index + 1}") from None
    except (ijson.JSONError, UnicodeDecodeError) as error:
        yield from _read_again(source, index, error)
        return
    if index == 0:
        raise FormatError(source.shown, "the JSON array has no records")


class _NotingRepeats(dict[str, Any]):
    """An object the streaming parser builds, noting a key it is given twice (``ijson``
    keeps the last value without a word) in itself and in ``repeats``, shared by all, so
    that records are searched only once one has a repeat (the parser may build records
    ahead of the one read)."""

    def __init__(self, repeats: list[_NotingRepeats]) -> None:
        super().__init__()
        self.repeats = repeats
        self.repeated: str | None = None

    def __setitem__(self, key: str, value: Any) -> None:
        if key in self and self.repeated is None:
            self.repeated = key
            self.repeats.append(self)
        super().__setitem__(key, value)


def _repeated_key(value: object) -> str | None:
    """The first key given twice in an object inside ``value``, if any."""
    if isinstance(value, _NotingRepeats) and value.repeated is not None:
        return value.repeated
    inside = value.values() if isinstance(value, dict) else value if isinstance(value, list) else ()
    for part in inside:
        key = _repeated_key(part)
        if key is not None:
            return key
    return None


def _read_again(
    source: InputFile, done: int, error: Exception, where: str | None = None
) -> Iterator[ParsedRecord]:
    """After a parse error (``where``: in which record, when known): read a regular file
    whole to place the error, or give up."""
    path = Path(source.shown)
    if source.size is None or source.size > REREAD_LIMIT_BYTES or not path.is_file():
        where = where or (f"after record {done}" if done else "before the first record")
        reason = str(error).splitlines()[0] if str(error) else type(error).__name__
        raise FormatError(source.shown, f"malformed JSON {where}: {reason}") from None
    text = read_text(path)
    try:
        data = json_input.loads(text)
    except json_input.JsonInputError as decode_error:
        raise FormatError(
            source.shown, f"malformed JSON: {decode_error.described}", decode_error.lineno
        ) from None
    if not isinstance(data, list):
        raise FormatError(
            source.shown, f"expected a JSON array of objects, got {type(data).__name__}"
        )
    if not data:
        raise FormatError(source.shown, "the JSON array has no records")
    # Only bytes that are not UTF-8 stopped the streaming parser: carry on from there.
    for index, raw in enumerate(data[done:], start=done + 1):
        yield _record(source, index, raw)


def write(items: Iterable[Any], out: TextIO, *, stamp: dict[str, str] | None = None) -> int:
    """Write MCQ items (``ItemSnapshot``-like) as a CFLUE JSON array; returns the record count.

    ``stamp`` (a release export's name and hash) adds fields naming the release and
    each record's item (``db.formats.base.STAMP_FIELDS``; readers ignore them)."""
    rows = list(items)
    for item in rows:
        problems = exam_name_problems(item.meta) + extra_fields_problems(item.meta)
        if problems:
            raise UnwritableItem(item.id, NAME, problems[0])
    records = [
        {
            # An item imported without an exam name gets none: "" would read back as a change.
            **({EXAM_NAME: item.meta[EXAM_NAME]} if EXAM_NAME in item.meta else {}),
            "task": KIND_TASKS[ItemKind(item.kind)],
            "question": item.prompt,
            "choices": format_choices(item.choices),
            "answer": item.key,
            "analysis": item.explanation,
            **item.meta.get(EXTRA_FIELDS_META, {}),
            **stamp_fields(item.id, stamp),
        }
        for item in rows
    ]
    json.dump(records, out, ensure_ascii=False, indent=1)
    out.write("\n")
    return len(records)

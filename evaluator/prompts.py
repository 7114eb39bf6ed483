"""Prompts: templates users can read and override, few-shot selection, and prompt assembly.

Ordering items follow EconLogicQA (``Question: <scenario>``, ``A. ...`` to ``D. ...``,
``Answer:``); multiple-choice items follow CFLUE (instructions matching the question
type, in Chinese for Chinese items).  The text lives in ``evaluator/templates/``
(see its README.txt); ``load_templates(DIR)`` lets a user replace any of the files.
A *layout* is a named set of replacements shipped in a subfolder of the templates
(``cflue``: CFLUE's expert-role, two-line answer prompt; ``econlogicqa``: the
EconLogicQA paper's ``Question:`` / ``Choices:`` / ``Correct Order:`` item layout);
``load_templates(DIR, layout=NAME)`` reads the built-in files, then the layout's,
then DIR's.

A prompt is split where items diverge (:class:`~evaluator.backends.base.Prompt`):
the prefix (instructions and shots) is identical for every item of one kind and
language in a run, so a backend computes it once and reuses its key-value cache.
"""

from __future__ import annotations

import hashlib
import json
import logging
import random
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from importlib import resources
from pathlib import Path
from string import Template

from db.answers import format_answer, is_chinese
from db.canonical_text import item_text
from db.engine import Database
from db.errors import VetbenchError
from db.formats.base import ARTICLES_NOT_ITEMS, FormatError, is_article
from db.formats.jsonl import HAND_WRITTEN_FIELDS, unknown_field_problems
from db.formats.jsonl import field_names as jsonl_field_names
from db.items import ItemSnapshot, iter_items
from db.json_input import json_lines
from db.validation import ItemDraft, Problem, validate_draft
from db.vocabulary import ItemKind, ItemStatus
from db.words import agreeing, counted
from evaluator.backends.base import Prompt
from evaluator.json_lines import read_input_text
from evaluator.kinds import kind_spec

__all__ = [
    "DEFAULT_LAYOUT",
    "DEFAULT_SHOT_SEED",
    "LAYOUTS",
    "PromptTemplates",
    "ShotFileError",
    "ShotGroup",
    "TemplateError",
    "answer_text",
    "build_prompt",
    "evaluated_shots",
    "load_shot_file",
    "load_shot_files",
    "load_templates",
    "prompt_hash",
    "select_shots",
    "stop_sequences",
    "template_files",
    "template_language",
]

log = logging.getLogger(__name__)

DEFAULT_SHOT_SEED = 1234
DEFAULT_LAYOUT = "vetbench"
LAYOUTS = (DEFAULT_LAYOUT, "cflue", "econlogicqa")
"""Built-in template sets: vetbench's own, and the two papers' (subfolders of templates/)."""
BLOCK_SEPARATOR = "\n\n"  # between instructions, shots and the question
LANGUAGES = ("en", "zh")

# Placeholders each template may use; anything else is a mistake worth naming.
_PLACEHOLDERS = {
    "question": {"question", "options"},
    "option": {"label", "text"},
    "shot": {"question_block", "answer"},
    "instructions": set(),
}

# Shots come from items outside the evaluated set: approved ones first, then, if too
# few are approved, items whose annotators agreed, then items still in review.
# Rejected items never serve as shots (their keys or texts are known to be bad).
_SHOT_TIERS: tuple[tuple[str, ...], ...] = (
    (ItemStatus.APPROVED,),
    (ItemStatus.AGREED,),
    (ItemStatus.IN_REVIEW, ItemStatus.PENDING),
    (ItemStatus.CONFLICT,),  # disputed keys: a last resort
)


class TemplateError(VetbenchError, ValueError):
    """A template file that cannot be used; the message names the file."""


class ShotFileError(VetbenchError, ValueError):
    """A shot file that cannot be used; the message names the file, line and field.

    With several ``problems`` (records that are not solved items) the message is one line,
    their count and the first, as the app shows it; the command line prints ``heading``
    and the problems one a line."""

    def __init__(self, message: str, problems: Sequence[str] = ()) -> None:
        self.heading = message
        self.problems = tuple(problems)
        if self.problems:
            more = f" (and {len(self.problems) - 1:,} more)" if len(self.problems) > 1 else ""
            message = f"{message}: {self.problems[0]}{more}"
        super().__init__(message)


def template_language(language: str) -> str:
    """The template language for an item: ``zh`` for Chinese items, ``en`` for all others."""
    return "zh" if is_chinese(language) else "en"


def _template_names() -> list[str]:
    specs = [kind_spec(kind) for kind in ItemKind]
    names = list(dict.fromkeys(spec.option_template for spec in specs))
    for language in LANGUAGES:
        names += [f"question.{language}.txt", f"shot.{language}.txt"]
        names += [spec.instructions_template(language) for spec in specs]
    return names


TEMPLATE_FILE_NAMES = (
    "option.txt, question.LANG.txt, shot.LANG.txt or instructions.KIND.LANG.txt "
    "(LANG en or zh, KIND ordering, single, multi or truefalse)"
)
"""The files a templates folder may hold, in words (evaluator/templates/README.txt)."""


def _role(name: str) -> str:
    return name.split(".", 1)[0]


@dataclass(frozen=True)
class PromptTemplates:
    """The template texts in use, by file name, and where they came from."""

    texts: dict[str, str]
    override_dir: Path | None = None
    layout: str = DEFAULT_LAYOUT
    read_from_folder: tuple[str, ...] = ()
    """The files of ``override_dir`` in use (the others are the built-in ones)."""

    def text(self, name: str) -> str:
        return self.texts[name]

    def instructions(self, kind: ItemKind | str, language: str) -> str:
        return self.texts[kind_spec(kind).instructions_template(template_language(language))]

    def new_question_cue(self, language: str = "en") -> str:
        """The words a question starts with (``Question:``), or "" when it starts with its text."""
        first_line = self.texts[f"question.{template_language(language)}.txt"].split("\n", 1)[0]
        return first_line.split("$", 1)[0].strip()

    def with_texts(self, texts: Mapping[str, str]) -> PromptTemplates:
        """These templates with some files' texts replaced (CFLUE's official wording)."""
        unknown = sorted(set(texts) - set(self.texts))
        if unknown:
            raise TemplateError(
                f"unknown template {agreeing(len(unknown), 'file', 'files')} {', '.join(unknown)}"
            )
        kept = tuple(name for name in self.read_from_folder if name not in texts)
        return replace(self, texts={**self.texts, **texts}, read_from_folder=kept)

    def render(self, name: str, **values: str) -> str:
        return Template(self.texts[name]).substitute(values)

    @property
    def hash(self) -> str:
        """A short fingerprint of every template text, recorded with each run."""
        payload = json.dumps(self.texts, sort_keys=True, ensure_ascii=False)
        return hashlib.sha256(payload.encode("utf-8")).hexdigest()[:16]

    def stop_sequences(self, language: str = "en") -> tuple[str, ...]:
        """A blank line, or a line that starts a new question (``Question:``), ends an answer."""
        cue = self.new_question_cue(language)
        stops = [BLOCK_SEPARATOR]
        if cue:
            stops.append("\n" + cue)
        return tuple(stops)


def template_files(
    kind: ItemKind | str,
    language: str,
    *,
    with_shots: bool,
    instructions_kind: ItemKind | str | None = None,
) -> tuple[str, ...]:
    """The template files a prompt of ``kind`` in ``language`` is written with (as
    :func:`build_prompt` writes it): instructions, question, option and, with shots, shot."""
    lang = template_language(language)
    names = [
        kind_spec(instructions_kind or kind).instructions_template(lang),
        f"question.{lang}.txt",
        kind_spec(kind).option_template,
    ]
    return tuple(names + ([f"shot.{lang}.txt"] if with_shots else []))


def _read_template(path: Path, name: str) -> str:
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as error:
        raise TemplateError(f"{path}: not UTF-8 text ({error.reason})") from None
    except OSError as error:
        raise TemplateError(f"{path}: cannot read ({error.strerror})") from None
    text = text.rstrip("\r\n")
    allowed = _PLACEHOLDERS[_role(name)]
    matches = list(Template.pattern.finditer(text))
    if any(match.group("invalid") is not None for match in matches):
        raise TemplateError(f"{path}: a lone '$' (write '$$' for a dollar sign)")
    used = {match.group("named") or match.group("braced") for match in matches} - {None}
    unknown = sorted(used - allowed)
    if unknown:
        expected = ", ".join(f"${p}" for p in sorted(allowed)) or "none"
        raise TemplateError(
            f"{path}: unknown placeholder {', '.join('$' + u for u in unknown)} "
            f"(this file may use: {expected})"
        )
    # Every placeholder of a role carries the item (its question, options, a shot's answer):
    # a question template of "Answer:" alone asked nothing and the oracle scored 100%.
    missing = sorted(allowed - used)
    if missing:
        raise TemplateError(
            f"{path}: lacks {', '.join('$' + m for m in missing)} (a {_role(name)} template "
            f"must use {', '.join(f'${p}' for p in sorted(allowed))}): its prompts would "
            "not show the item"
        )
    return text


def load_templates(
    override_dir: Path | None = None, *, layout: str = DEFAULT_LAYOUT
) -> PromptTemplates:
    """The built-in templates, replaced by those of ``layout`` (a built-in template set),
    and any file found in ``override_dir`` replacing its namesake."""
    if layout not in LAYOUTS:
        raise TemplateError(f"unknown layout '{layout}' (choose {', '.join(LAYOUTS)})")
    builtin = resources.files("evaluator").joinpath("templates")
    layout_files = builtin if layout == DEFAULT_LAYOUT else builtin.joinpath(layout)
    texts: dict[str, str] = {}
    read: list[str] = []
    if override_dir is not None:
        override_dir = Path(override_dir).expanduser().resolve()
        if not override_dir.is_dir():
            raise TemplateError(f"{override_dir}: not a folder of templates")
        known = set(_template_names())
        strangers = sorted(
            p.name
            for p in override_dir.glob("*.txt")
            if p.name not in known
            and p.name != "README.txt"
            and not p.name.startswith("generate_")  # vetbench generate's templates
        )
        if strangers:
            raise TemplateError(
                f"{override_dir}: unknown template {agreeing(len(strangers), 'file', 'files')} "
                f"{', '.join(strangers)}; "
                f"expected names like {', '.join(sorted(known)[:3])}, ..."
            )
    for name in _template_names():
        override = override_dir / name if override_dir is not None else None
        if override is not None and override.exists():
            texts[name] = _read_template(override, name)
            read.append(name)
            continue
        shipped = layout_files.joinpath(name)
        if not shipped.is_file():
            shipped = builtin.joinpath(name)
        with resources.as_file(shipped) as path:
            texts[name] = _read_template(Path(path), name)
    if override_dir is not None and not read:  # else a run would look customised
        raise TemplateError(
            f"{override_dir}: no prompt template in this folder; --templates reads "
            f"{TEMPLATE_FILE_NAMES}"
        )
    return PromptTemplates(
        texts=texts, override_dir=override_dir, layout=layout, read_from_folder=tuple(read)
    )


def answer_text(kind: ItemKind | str, answer: str) -> str:
    """How an answer is written after the cue: ``"D, A, C, B"``, ``"B"``, ``"ABD"``."""
    if not answer:
        raise ValueError("an empty answer has no written form")
    return format_answer(kind, answer)


def stop_sequences(
    kind: ItemKind | str, templates: PromptTemplates | None = None, language: str = "en"
) -> tuple[str, ...]:
    """Where generation stops: a blank line or the start of a new question.

    The same for every kind today; the cue comes from the question template.
    """
    ItemKind(kind)  # validates the kind
    return (templates or load_templates()).stop_sequences(language)


def prompt_hash(text: str) -> str:
    """The SHA-256 of a prompt's exact text (64 hex digits)."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _question_block(item: ItemSnapshot, templates: PromptTemplates) -> str:
    language = template_language(item.language)
    option_template = kind_spec(item.kind).option_template
    options = "\n".join(
        templates.render(option_template, label=label, text=text)
        for label, text in item.choices.items()
    )
    return templates.render(f"question.{language}.txt", question=item.prompt, options=options)


def _shot_block(shot: ItemSnapshot, language: str, templates: PromptTemplates) -> str:
    # A shot is written in the evaluated item's language, whatever its own.
    as_item = _question_block(_with_language(shot, language), templates)
    return templates.render(
        f"shot.{template_language(language)}.txt",
        question_block=as_item,
        answer=answer_text(shot.kind, shot.key),
    )


def _with_language(item: ItemSnapshot, language: str) -> ItemSnapshot:
    return item if item.language == language else replace(item, language=language)


def build_prompt(
    item: ItemSnapshot,
    shots: Sequence[ItemSnapshot],
    templates: PromptTemplates,
    *,
    language: str | None = None,
    instructions_kind: ItemKind | None = None,
) -> Prompt:
    """The prompt for ``item``: instructions and solved ``shots`` (the shared prefix), then
    the question ending with the answer cue.

    ``language`` asks in that template language whatever the item's own (CFLUE's
    protocol asks every item in Chinese); ``instructions_kind`` takes the instructions
    of another kind (CFLUE asks true/false items with the single-choice instructions).
    """
    if language is not None:
        item = _with_language(item, language)
    instructions = templates.instructions(instructions_kind or item.kind, item.language)
    blocks = [instructions] if instructions.strip() else []
    blocks += [_shot_block(shot, item.language, templates) for shot in shots]
    prefix = "".join(block + BLOCK_SEPARATOR for block in blocks)
    return Prompt(prefix=prefix, question=_question_block(item, templates))


@dataclass(frozen=True)
class ShotGroup:
    """Items that share a prompt prefix: one kind and template language, and for orders
    one number of events (a 5-event shot before a 4-event question invites a 5-letter
    answer).  A run records each group's shots under its ``name``: ``ordering/en/4``."""

    kind: ItemKind
    language: str  # the template language
    events: int | None = None  # orders only

    @classmethod
    def of(cls, item: ItemSnapshot) -> ShotGroup:
        events = len(item.labels) if item.kind is ItemKind.ORDERING else None
        return cls(item.kind, template_language(item.language), events)

    @property
    def name(self) -> str:
        base = f"{self.kind.value}/{self.language}"
        return base if self.events is None else f"{base}/{self.events}"

    @property
    def legacy_name(self) -> str:
        """The name runs recorded before orders were grouped by their number of events."""
        return f"{self.kind.value}/{self.language}"


def recorded_group_shots(
    recorded: Mapping[str, Sequence[ItemSnapshot]], item: ItemSnapshot
) -> list[ItemSnapshot]:
    """The shots a run recorded for ``item``'s prefix (by the group's name, or the name
    runs used before orders were grouped by size)."""
    group = ShotGroup.of(item)
    found = recorded.get(group.name)
    if found is None:
        found = recorded.get(group.legacy_name, [])
    return list(found)


def shot_pool(database: Database, shot_file: Path | None) -> tuple[list[ItemSnapshot], bool]:
    """The items shots are drawn from: the shot file's, else every stored item; and
    whether they came from a shot file."""
    if shot_file is not None:
        return load_shot_file(shot_file), True
    with database.session() as session:
        return list(iter_items(session)), False


def prefix_shots(
    items: Sequence[ItemSnapshot],
    pool: Sequence[ItemSnapshot],
    shots_for: Mapping[ItemKind, int],
    *,
    seed: int,
    from_shot_file: bool,
    whole_set: Sequence[ItemSnapshot] | None = None,
    any_language: Collection[str] = (),
) -> dict[ShotGroup, list[ItemSnapshot]]:
    """The shots of every prompt prefix (a :class:`ShotGroup`), in the order the ``items``
    first need them: ``shots_for[kind]`` of them, the first of the kind in a shot file
    (the user's own, in file order, of the item's template language; of the
    same number of events where it has such orders), else drawn by ``select_shots`` from
    ``pool`` leaving out the evaluated set: ``whole_set`` (a limited run's items before
    the limit, so that its prompts are the full run's), else the ``items``.  Neither way
    shows an item of that set as a shot (:func:`evaluated_shots`).  The run and the
    lm-eval export agree.  Groups of a template language in ``any_language`` (one a
    protocol's layout lacks: EconLogicQA's Chinese orders) take their own language's
    shots first, then the others'."""
    whole = items if whole_set is None else whole_set
    evaluated = {item.id for item in whole}
    if from_shot_file:
        shown = {shot.id for shot in evaluated_shots(whole, pool)}
        pool = [shot for shot in pool if shot.id not in shown]
    chosen: dict[ShotGroup, list[ItemSnapshot]] = {}
    for item in items:
        group = ShotGroup.of(item)
        if group in chosen:
            continue
        k = shots_for[item.kind]
        if from_shot_file:  # in file order
            # Only the group's language: an English shot before a Chinese question (or the
            # reverse) was used without a word and the run called 5-shot.
            any_ok = group.language in any_language
            own = [
                shot
                for shot in pool
                if shot.kind is item.kind
                and (any_ok or template_language(shot.language) == group.language)
            ]
            own.sort(key=lambda shot: template_language(shot.language) != group.language)
            chosen[group] = _same_size(own, group.events)[:k]
        else:
            chosen[group] = select_shots(
                pool,
                item.kind,
                k,
                seed=seed,
                exclude_ids=evaluated,
                language=item.language,
                events=group.events,
                other_languages=group.language in any_language,
            )
    return chosen


def evaluated_shots(
    items: Sequence[ItemSnapshot], pool: Sequence[ItemSnapshot]
) -> list[ItemSnapshot]:
    """The shots of a shot file's ``pool`` that are evaluated ``items``: the same id, or the
    same question and choices as near-duplicate detection compares them
    (``db.canonical_text.item_text``).  Shown as a shot, one would give its own answer away
    (a pool imported as items too, then approved, is the usual way)."""
    ids = {item.id for item in items}
    texts = {item_text(item.prompt, item.choices) for item in items}
    return [
        shot for shot in pool if shot.id in ids or item_text(shot.prompt, shot.choices) in texts
    ]


def _same_size(pool: Sequence[ItemSnapshot], events: int | None) -> list[ItemSnapshot]:
    """The items of ``pool`` with ``events`` labels, or all of them when none has."""
    if events is None:
        return list(pool)
    same = [item for item in pool if len(item.labels) == events]
    return same or list(pool)


def select_shots(
    pool: Sequence[ItemSnapshot],
    kind: ItemKind | str,
    k: int,
    *,
    seed: int = DEFAULT_SHOT_SEED,
    exclude_ids: Iterable[str] = (),
    language: str | None = None,
    events: int | None = None,
    other_languages: bool = False,
) -> list[ItemSnapshot]:
    """``k`` solved items of ``kind`` to show before every evaluated item.

    A fixed, seeded draw from ``pool`` minus ``exclude_ids`` (the evaluated set), the
    same for every evaluated item so that the prompt prefix is shared.  Approved items
    are drawn first; if fewer than ``k`` are approved, agreed items and then items still
    in review fill the gap (items in conflict last), and a note says so.  Near-duplicates
    of excluded items are never drawn (their keys would leak the answer).  With
    ``language``, only items in that template language are drawn (too few is a shortfall,
    as for any short pool), or with ``other_languages`` those first, then the others.  With ``events`` (orders), only items with that many events
    are drawn, as long as the pool holds any.
    """
    kind = ItemKind(kind)
    if k <= 0:
        return []
    excluded = set(exclude_ids)
    wanted = None if language is None else template_language(language)

    def own(item: ItemSnapshot) -> bool:
        return wanted is None or template_language(item.language) == wanted

    eligible = [
        item
        for item in pool
        if item.kind is kind
        and (other_languages or own(item))
        and item.id not in excluded
        and item.suspected_duplicate_of not in excluded
        and item.status != ItemStatus.REJECTED
    ]
    leaking = {item.suspected_duplicate_of for item in pool if item.id in excluded}
    eligible = _same_size([item for item in eligible if item.id not in leaking], events)
    rng = random.Random(seed)
    chosen: list[ItemSnapshot] = []
    for tier in _SHOT_TIERS:
        in_tier = sorted((i for i in eligible if i.status in tier), key=lambda i: i.id)
        for group in ([i for i in in_tier if own(i)], [i for i in in_tier if not own(i)]):
            needed = k - len(chosen)
            chosen += rng.sample(group, min(max(needed, 0), len(group)))
    unapproved = [shot.id for shot in chosen if shot.status != ItemStatus.APPROVED]
    # Logged at info: the run records these as shot notes, which the CLI prints.
    if unapproved:
        log.info(
            "only %s outside the evaluated set; shots %s %s not approved",
            counted(len(chosen) - len(unapproved), f"approved {kind.value} item"),
            ", ".join(unapproved),
            agreeing(len(unapproved), "is", "are"),
        )
    if len(chosen) < k:
        log.info(
            "only %s available as shots outside the evaluated set (asked for %d)",
            counted(len(chosen), f"{kind.value} item"),
            k,
        )
    return chosen


def load_shot_files(paths: Sequence[Path]) -> list[ItemSnapshot]:
    """The shots of several shot files, in the order given; an id in two is refused."""
    shots: list[ItemSnapshot] = []
    seen: dict[str, ItemSnapshot] = {}
    for path in paths:
        for shot in load_shot_file(path):
            if (other := seen.get(shot.id)) is not None:
                raise ShotFileError(
                    f"{path} ({shot.source_ref}): shot id {shot.id} is also in "
                    f"{other.source} ({other.source_ref})"
                )
            seen[shot.id] = shot
            shots.append(shot)
    return shots


def load_shot_file(path: Path) -> list[ItemSnapshot]:
    """Solved items from a JSONL file (``kind``, ``prompt``, ``choices``, ``key``,
    ``explanation``; optional ``language`` and ``id``), validated like any import."""
    path = Path(path)
    if not path.exists():
        raise ShotFileError(f"{path}: no such shot file")
    try:
        lines = read_input_text(path).splitlines()
    except FormatError as error:  # unreadable, empty, or not UTF-8 (from its first line)
        where = f"{path}:{error.line}" if error.line is not None else str(path)
        raise ShotFileError(f"{where}: {error.reason}") from None
    first = next(json_lines(lines), None)
    if first and first.error and lines[first.number - 1].lstrip().startswith("["):
        # A JSON array over many lines (CFLUE's file): said once, as a file of articles is,
        # not as hundreds of lines that are "not valid JSON".
        from db.importer import source_slug  # the import machinery, for this message only

        raise ShotFileError(
            f"{path}: a JSON array (a CFLUE file?), not JSONL: a shot file holds one solved item "
            'a line ({"kind", "prompt", "choices", "key", ...}); or import the file (`vetbench '
            f"import {path}`) and draw shots from it with --shots-from {source_slug(path)}"
        )
    shots: list[ItemSnapshot] = []
    problems: list[str] = []
    lines_of: dict[str, int] = {}  # each shot id's line
    for line in json_lines(lines):
        number, record = line.number, line.value
        where = f"{path}:{number}"
        if line.error is not None:
            problems.append(f"{where}: not valid JSON ({line.error.msg})")
            continue
        if not isinstance(record, dict):
            problems.append(f"{where}: expected a JSON object, got {type(record).__name__}")
            continue
        if not shots and not problems and is_article(record, "prompt", "choices", "key"):
            raise ShotFileError(f"{where}: {ARTICLES_NOT_ITEMS}")  # as `vetbench import` says
        choices = record.get("choices")
        if not isinstance(choices, dict):
            problems.append(f"{where}: choices: must be an object of label -> text")
            continue
        draft = ItemDraft(
            kind=str(record.get("kind", "")),
            prompt=record.get("prompt"),  # type: ignore[arg-type]
            choices={str(label): text for label, text in choices.items()},
            key=str(record.get("key", "")),
            explanation=record.get("explanation"),
            language=str(record.get("language") or "en"),
            field_names=jsonl_field_names(),  # named as the file names them: prompt, not question
        )
        found = unknown_field_problems(record, HAND_WRITTEN_FIELDS) + validate_draft(draft)
        shot_id = str(record.get("id") or f"{path.name}:{number}")
        if shot_id in lines_of:
            found.append(Problem("id", f"{shot_id} is also on line {lines_of[shot_id]}"))
        lines_of.setdefault(shot_id, number)
        if found:
            problems += [f"{where}: {problem}" for problem in found]
            continue
        shots.append(
            ItemSnapshot(
                id=shot_id,
                kind=ItemKind(draft.kind),
                source=path.name,
                source_ref=f"line {number}",
                language=draft.language,
                status="shot-file",
                revision=1,
                prompt=draft.prompt,
                choices=dict(draft.choices),
                key=draft.key,
                explanation=draft.explanation,
            )
        )
    if problems:
        raise ShotFileError(
            f"{path}: {counted(len(problems), 'problem')} in the shot file", problems
        )
    if not shots:
        raise ShotFileError(f"{path}: holds no shots")
    return shots

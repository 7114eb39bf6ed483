"""The prompt templates and JSON schemas that item generation sends to a model.

The templates are text files in ``evaluator/generation/prompts`` (``generate_*.txt``,
described in its README.txt); ``--templates DIR`` replaces any of them with a file
of the same name in DIR.
Placeholders are written ``$name`` (Python ``string.Template``; ``$$`` is a
dollar sign).  The schemas ask for the same fields as the plain-text shape the
templates describe, so either kind of answer parses.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from enum import StrEnum
from importlib import resources
from pathlib import Path
from string import Template

from db.answers import letters_for
from db.errors import VetbenchError
from db.json_types import JsonObject, JsonValue


class GenerationMode(StrEnum):
    """What a generation run writes."""

    ORDERING = "ordering"  # an ordering item from an article
    MCQ_ARTICLE = "mcq_article"  # a new multiple-choice question from an article
    MCQ_REWRITE = "mcq_rewrite"  # an existing question reworded, options shuffled

    @property
    def template_name(self) -> str:
        return f"generate_{self.value}.txt"


PLACEHOLDERS: dict[GenerationMode, frozenset[str]] = {
    GenerationMode.ORDERING: frozenset({"title", "text", "article_id"}),
    GenerationMode.MCQ_ARTICLE: frozenset({"title", "text", "article_id"}),
    GenerationMode.MCQ_REWRITE: frozenset({"question", "options", "kind"}),
}
EVENTS_PER_ITEM = 4
OPTIONS_PER_ITEM = 4


class GenerationTemplateError(VetbenchError, ValueError):
    """A template file that cannot be used; the message names the file."""


@dataclass(frozen=True)
class GenerationTemplate:
    mode: GenerationMode
    text: str
    path: str  # where it was read from, for provenance and messages

    @property
    def hash(self) -> str:
        return hashlib.sha256(self.text.encode("utf-8")).hexdigest()

    def render(self, **values: str) -> str:
        return Template(self.text).substitute(values)


def load_generation_template(
    mode: GenerationMode, override_dir: Path | None = None
) -> GenerationTemplate:
    """The template for ``mode``: ``override_dir``'s file of that name if present, else the built-in."""
    name = mode.template_name
    if override_dir is not None:
        folder = Path(override_dir).expanduser()
        if not folder.is_dir():
            raise GenerationTemplateError(f"{folder}: not a folder of templates")
        candidate = folder / name
        if candidate.exists():
            return GenerationTemplate(mode, _checked(candidate, mode), str(candidate))
    builtin = resources.files("evaluator.generation").joinpath("prompts", name)
    with resources.as_file(builtin) as path:
        return GenerationTemplate(mode, _checked(Path(path), mode), f"built-in {name}")


def _checked(path: Path, mode: GenerationMode) -> str:
    try:
        text = path.read_text(encoding="utf-8").rstrip("\r\n")
    except UnicodeDecodeError as error:
        raise GenerationTemplateError(f"{path}: not UTF-8 text ({error.reason})") from None
    except OSError as error:
        raise GenerationTemplateError(f"{path}: cannot read ({error.strerror})") from None
    matches = list(Template.pattern.finditer(text))
    if any(match.group("invalid") is not None for match in matches):
        raise GenerationTemplateError(f"{path}: a lone '$' (write '$$' for a dollar sign)")
    used = {match.group("named") or match.group("braced") for match in matches} - {None}
    allowed = PLACEHOLDERS[mode]
    unknown = sorted(used - allowed)
    if unknown:
        raise GenerationTemplateError(
            f"{path}: unknown placeholder {', '.join('$' + name for name in unknown)} "
            f"(this file may use: {', '.join('$' + name for name in sorted(allowed))})"
        )
    if not text.strip():
        raise GenerationTemplateError(f"{path}: the template is empty")
    return text


def _labelled(count: int, description: str) -> JsonObject:
    labels = letters_for(count)
    return {
        "type": "object",
        "properties": {label: {"type": "string", "description": description} for label in labels},
        "required": list[JsonValue](labels),
        "additionalProperties": False,
    }


def _schema(name: str, properties: JsonObject) -> JsonObject:
    return {
        "name": name,
        "strict": True,
        "schema": {
            "type": "object",
            "properties": properties,
            "required": list(properties),
            "additionalProperties": False,
        },
    }


SCHEMAS: dict[GenerationMode, JsonObject] = {
    GenerationMode.ORDERING: _schema(
        "ordering_item",
        {
            "scenario": {"type": "string"},
            "events": _labelled(EVENTS_PER_ITEM, "one event"),
            "correct_order": {
                "type": "string",
                "description": "the event letters in logical order, e.g. 'D, A, C, B'",
            },
            "explanation": {"type": "string"},
        },
    ),
    GenerationMode.MCQ_ARTICLE: _schema(
        "multiple_choice_item",
        {
            "question": {"type": "string"},
            "choices": _labelled(OPTIONS_PER_ITEM, "one option"),
            "answer": {"type": "string", "description": "the letter of the correct option"},
            "explanation": {"type": "string"},
        },
    ),
    GenerationMode.MCQ_REWRITE: _schema("rewritten_question", {"question": {"type": "string"}}),
}

"""A second opinion from a strong model: the questions the benchmarks' reviewers asked.

For each item (its current revision), ``vetbench check`` asks one OpenAI-compatible
model, through the same :class:`~evaluator.openai_client.ChatClient` as
``vetbench generate`` (retries, response cache, keys never stored):

- is exactly one order (one answer) defensible, or several?
- is the key right, and if not, what should it be?
- does the item depend on material it does not contain (a figure, a table, an article)?
- is it sensitive (offensive, discriminatory, harmful)?

The answer is asked for as JSON (a JSON schema, ``SCHEMA``), with a plain-text
fallback when the server refuses structured output (``key_right: no`` lines).
It becomes flags with the model's reasons, never verdicts: ``model-disagrees``
when the model names another key, ``second-opinion`` for several valid answers,
missing material or sensitive content (source ``check``).  Running the same
command again costs nothing (the answers come from the cache) and stores no flag twice.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from db.answers import AnswerError, format_answer, parse_answer
from db.audit import record_audit
from db.engine import Database
from db.errors import VetbenchError
from db.flag_rules import FlagFinding
from db.flags import record_flags
from db.item_scope import EVERY_ITEM, ItemScope
from db.items import ItemSnapshot, iter_items
from db.json_types import JsonObject
from db.vocabulary import FLAG_ACTION, FlagName, FlagSource, ItemKind
from evaluator.chat_calls import ChatOutcome, ChatRequest
from evaluator.openai_client import ChatClient

__all__ = [
    "SCHEMA",
    "CheckAnswer",
    "CheckSummary",
    "CheckUnreadable",
    "check_findings",
    "check_prompt",
    "parse_check_answer",
    "run_checks",
]

MAX_TOKENS = 600
REASON_CHARS = 600  # the model's reasons are kept up to this long

SCHEMA: JsonObject = {
    "name": "item_review",
    "strict": True,
    "schema": {
        "type": "object",
        "properties": {
            "one_defensible_answer": {
                "type": "boolean",
                "description": "exactly one order (one answer) is defensible",
            },
            "other_defensible_answers": {
                "type": "array",
                "items": {"type": "string"},
                "description": "other orders or answers that are also defensible, e.g. 'D, A, C, B'",
            },
            "key_is_right": {"type": "boolean"},
            "proposed_key": {
                "type": "string",
                "description": "the right key when the given one is wrong, else ''",
            },
            "needs_missing_material": {
                "type": "boolean",
                "description": "it refers to a figure, table, article or other material not given",
            },
            "sensitive": {"type": "boolean"},
            "reasons": {"type": "string", "description": "why, in a few sentences"},
        },
        "required": [
            "one_defensible_answer",
            "other_defensible_answers",
            "key_is_right",
            "proposed_key",
            "needs_missing_material",
            "sensitive",
            "reasons",
        ],
        "additionalProperties": False,
    },
}

_INSTRUCTIONS = """You review items for a benchmark before anyone is tested on them, as the
reviewers of EconLogicQA and CFLUE did. Answer four questions about the item below.

1. {unique_question}
2. Is the given key right? If not, what is the right key?
3. Does the item depend on material it does not contain (a figure, a table, an image,
   an article or an attachment it refers to)?
4. Is it sensitive (offensive, discriminatory, politically charged, or harmful)?

{item}

Answer in JSON with the fields one_defensible_answer, other_defensible_answers,
key_is_right, proposed_key, needs_missing_material, sensitive and reasons.
If you cannot answer in JSON, write exactly these lines:
ONE ANSWER: yes or no (other defensible answers after a colon)
KEY RIGHT: yes or no (the right key after a colon)
MISSING MATERIAL: yes or no
SENSITIVE: yes or no
REASONS: a few sentences"""

_UNIQUE_QUESTION = {
    True: "Is exactly one answer defensible, or could another choice (or set) also be right?",
    False: "Is exactly one order of the events defensible, or are several orders defensible "
    "(independent events) or none (no clear order)?",
}


class CheckUnreadable(VetbenchError, ValueError):
    """The model's answer could not be read; the message says what was missing."""


@dataclass(frozen=True)
class CheckAnswer:
    """What the model said about one item."""

    one_defensible_answer: bool
    other_defensible_answers: tuple[str, ...]
    key_is_right: bool
    proposed_key: str
    needs_missing_material: bool
    sensitive: bool
    reasons: str
    structured: bool  # read from JSON (else from the plain-text lines)


@dataclass
class CheckSummary:
    """What a ``vetbench check`` run did."""

    model: str
    planned: int = 0
    answered: int = 0
    cached: int = 0
    unreadable: int = 0
    failed: int = 0
    flagged_items: int = 0  # items that got at least one new flag
    new_flags: Counter[str] = field(default_factory=Counter)
    failures: list[str] = field(default_factory=list)
    interrupted: bool = False

    def to_json(self) -> JsonObject:
        new_flags: JsonObject = dict(self.new_flags)
        failures: list[object] = list(self.failures)
        return {
            "model": self.model,
            "planned": self.planned,
            "answered": self.answered,
            "cached": self.cached,
            "unreadable": self.unreadable,
            "failed": self.failed,
            "flagged_items": self.flagged_items,
            "new_flags": new_flags,
            "failures": failures,  # type: ignore[dict-item]
            "interrupted": self.interrupted,
        }


def check_prompt(item: ItemSnapshot) -> str:
    """The question sent about ``item`` (its text, choices or events, key, explanation)."""
    lines = [f"Item {item.id} ({item.kind.value})"]
    lines.append(("Question: " if item.kind.is_mcq else "Scenario: ") + item.prompt)
    lines.append("Choices:" if item.kind.is_mcq else "Events:")
    lines += [f"{label}. {text}" for label, text in item.choices.items()]
    lines.append(f"Key: {format_answer(item.kind, item.key)}")
    if item.explanation:
        lines.append(f"Explanation: {item.explanation}")
    return _INSTRUCTIONS.format(
        unique_question=_UNIQUE_QUESTION[item.kind.is_mcq], item="\n".join(lines)
    )


_JSON_OBJECT = re.compile(r"\{.*\}", re.DOTALL)
_LINE = re.compile(
    r"^\s*[*#>\-]*\s*(?P<name>one\s+(?:answer|order)|key\s+right|missing\s+material|sensitive|reasons)"
    r"\s*[*]*\s*[:：]\s*(?P<value>.*)$",
    re.IGNORECASE | re.MULTILINE,
)
_YES = re.compile(r"^\s*(?:yes|true|是|对)\b", re.IGNORECASE)
_NO = re.compile(r"^\s*(?:no|false|否|不)\b", re.IGNORECASE)


def _yes_no(value: str, name: str) -> tuple[bool, str]:
    """``yes``/``no`` at the start of ``value``, and what follows (after a colon or dash)."""
    if _YES.match(value):
        answer = True
    elif _NO.match(value):
        answer = False
    else:
        raise CheckUnreadable(f"{name}: expected yes or no, got {value.strip()[:40]!r}")
    rest = re.sub(r"^\s*\w+\s*[,;:：\-–(]*\s*", "", value, count=1).rstrip(") ")
    return answer, rest.strip()


def parse_check_answer(text: str) -> CheckAnswer:
    """The model's answer, from JSON (anywhere in the text) or from the plain-text lines."""
    match = _JSON_OBJECT.search(text)
    if match:
        try:
            data = json.loads(match.group())
        except json.JSONDecodeError:
            data = None
        if isinstance(data, dict) and "key_is_right" in data:
            return _from_json(data)
    fields = {m["name"].lower().split()[0]: m["value"] for m in _LINE.finditer(text)}
    missing = [name for name in ("one", "key", "missing", "sensitive") if name not in fields]
    if missing:
        raise CheckUnreadable(
            "neither JSON nor the expected lines (missing: "
            + ", ".join(
                {
                    "one": "ONE ANSWER",
                    "key": "KEY RIGHT",
                    "missing": "MISSING MATERIAL",
                    "sensitive": "SENSITIVE",
                }[m]
                for m in missing
            )
            + ")"
        )
    unique, others = _yes_no(fields["one"], "ONE ANSWER")
    key_right, proposed = _yes_no(fields["key"], "KEY RIGHT")
    material, _ = _yes_no(fields["missing"], "MISSING MATERIAL")
    sensitive, _ = _yes_no(fields["sensitive"], "SENSITIVE")
    return CheckAnswer(
        one_defensible_answer=unique,
        other_defensible_answers=tuple(a.strip() for a in re.split(r"[;|]", others) if a.strip()),
        key_is_right=key_right,
        proposed_key="" if key_right else proposed,
        needs_missing_material=material,
        sensitive=sensitive,
        reasons=fields.get("reasons", "").strip(),
        structured=False,
    )


def _from_json(data: dict[str, object]) -> CheckAnswer:
    def flag(name: str) -> bool:
        value = data.get(name)
        if not isinstance(value, bool):
            raise CheckUnreadable(f"{name}: expected true or false, got {value!r}"[:80])
        return value

    others = data.get("other_defensible_answers") or []
    if not isinstance(others, list):
        others = [others]
    return CheckAnswer(
        one_defensible_answer=flag("one_defensible_answer"),
        other_defensible_answers=tuple(str(a).strip() for a in others if str(a).strip()),
        key_is_right=flag("key_is_right"),
        proposed_key=str(data.get("proposed_key") or "").strip(),
        needs_missing_material=flag("needs_missing_material"),
        sensitive=flag("sensitive"),
        reasons=str(data.get("reasons") or "").strip(),
        structured=True,
    )


def _canonical(item: ItemSnapshot, answer: str) -> str | None:
    """An answer the model wrote, in the item's canonical form (None if it is not one)."""
    try:
        return parse_answer(item.kind, answer, item.labels)
    except AnswerError:
        return None


def check_findings(item: ItemSnapshot, answer: CheckAnswer, model: str) -> list[FlagFinding]:
    """The flags a second opinion raises on ``item`` (none when the model had no concern)."""
    reasons = answer.reasons[:REASON_CHARS]
    said = f" — {reasons}" if reasons else ""
    findings: list[FlagFinding] = []
    proposed = _canonical(item, answer.proposed_key) if answer.proposed_key else None
    if not answer.key_is_right:
        shown = format_answer(item.kind, proposed) if proposed else "another answer"
        findings.append(
            FlagFinding(
                FlagName.MODEL_DISAGREES,
                f"{model} says the key {format_answer(item.kind, item.key)} is wrong; it should "
                f"be {shown}{said}",
                {"model": model, "proposed_key": proposed, "reasons": reasons},
            )
        )
    concerns: list[str] = []
    words: list[str] = []
    others = [a for a in (_canonical(item, text) for text in answer.other_defensible_answers) if a]
    if not answer.one_defensible_answer:
        if item.kind is ItemKind.ORDERING and not others:
            concerns.append("no-clear-order")
            words.append("no order or several orders defensible")
        else:
            concerns.append(
                "several-orders" if item.kind is ItemKind.ORDERING else "several-answers"
            )
            also = ", ".join(format_answer(item.kind, a) for a in others)
            words.append(
                f"several {'orders' if item.kind is ItemKind.ORDERING else 'answers'} defensible"
                + (f" (also {also})" if also else "")
            )
    if answer.needs_missing_material:
        concerns.append("missing-material")
        words.append("depends on material it does not contain")
    if answer.sensitive:
        concerns.append("sensitive")
        words.append("sensitive")
    if concerns:
        findings.append(
            FlagFinding(
                FlagName.SECOND_OPINION,
                f"{model}: {'; '.join(words)}{said}",
                {"model": model, "concerns": concerns, "other_answers": others, "reasons": reasons},  # type: ignore[dict-item]
            )
        )
    return findings


def plan_checks(
    db: Database,
    *,
    statuses: Sequence[str] | None = None,
    scope: ItemScope = EVERY_ITEM,
    ids: Sequence[str] | None = None,
    limit: int | None = None,
) -> list[ItemSnapshot]:
    """The items to check, at their current revision, in import order."""
    with db.session() as session:
        items = []
        for item in iter_items(
            session,
            statuses=statuses or None,
            kinds=scope.kinds,
            sources=scope.sources,
            ids=ids or None,
        ):
            items.append(item)
            if limit is not None and len(items) >= limit:
                break
    return items


def run_checks(
    db: Database,
    client: ChatClient,
    items: Sequence[ItemSnapshot],
    *,
    actor: str,
    structured: bool = True,
    on_progress: Callable[[CheckSummary], None] | None = None,
) -> CheckSummary:
    """Ask ``client``'s model about each item and store its concerns as flags, one
    transaction per item (each with an audit event), as the answers arrive."""
    summary = CheckSummary(model=client.model, planned=len(items))
    by_id = {item.id: item for item in items}
    requests = (
        ChatRequest.user(
            check_prompt(item),
            max_tokens=MAX_TOKENS,
            temperature=0.0,
            json_schema=SCHEMA if structured else None,
            tag=item.id,
        )
        for item in items
    )
    outcomes = client.complete_all(requests)
    try:
        for outcome in outcomes:
            _store(db, by_id[str(outcome.request.tag)], outcome, actor, client.model, summary)
            if on_progress:
                on_progress(summary)
    except KeyboardInterrupt:
        summary.interrupted = True
    finally:
        outcomes.close()
    return summary


def _store(
    db: Database,
    item: ItemSnapshot,
    outcome: ChatOutcome,
    actor: str,
    model: str,
    summary: CheckSummary,
) -> None:
    if outcome.error is not None or outcome.response is None:
        summary.failed += 1
        if len(summary.failures) < 20:
            summary.failures.append(f"{item.id}: {outcome.error}")
        return
    summary.answered += 1
    summary.cached += int(outcome.response.cached)
    try:
        answer = parse_check_answer(outcome.response.text)
    except CheckUnreadable as error:
        summary.unreadable += 1
        if len(summary.failures) < 20:
            summary.failures.append(f"{item.id}: unreadable answer: {error}")
        return
    findings = check_findings(item, answer, model)
    if not findings:
        return
    with db.transaction() as session:
        stored = record_flags(session, item.id, item.revision, findings, source=FlagSource.CHECK)
        if stored:
            record_audit(
                session,
                actor,
                FLAG_ACTION,
                item.id,
                source=FlagSource.CHECK.value,
                model=model,
                revision=item.revision,
                flags=[finding.stored_evidence() for finding in stored],
            )
    if stored:
        summary.flagged_items += 1
        summary.new_flags.update(finding.name.value for finding in stored)

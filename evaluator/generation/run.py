"""Generate candidate items with an OpenAI-compatible model, the way EconLogicQA and CFLUE did.

- Ordering items from articles: a scenario and four events to put in logical
  (not textual) order, with the key and an explanation (EconLogicQA).
- Multiple-choice items, either written new from an article, or rewritten from
  an existing exam question whose options are shuffled here, deterministically,
  with the key remapped (CFLUE); the model only rewords the question.

Every answer is parsed (JSON or the plain-text shape), checked with the same
validators as import, and stored at once: a valid item as ``pending`` with id
``{source}:{article_id}:{sample}`` and its provenance in revision 1; an invalid
one as a ``GenerationReject`` with the reason.  Re-running skips what is stored
or rejected and gets repeated requests from the response cache, so an
interrupted run continues where it stopped.  Transport failures store nothing
and are tried again on the next run.
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from functools import cached_property

from sqlmodel import col, select

from db.answers import LETTERS
from db.audit import record_event
from db.engine import Database
from db.errors import VetbenchError
from db.interrupts import interrupt_after
from db.items import add_item
from db.json_types import JsonObject, JsonValue
from db.listings import generated_item_id
from db.models import GenerationReject, Item, utcnow
from db.validation import ItemDraft, Problem, language_of, validate_draft
from db.vocabulary import GENERATE_ACTION, ItemKind
from evaluator.chat_calls import ChatRequest, ChatResponse
from evaluator.generation.duplicates import flag_duplicates
from evaluator.generation.inputs import Article, SourceQuestion
from evaluator.generation.option_shuffle import (
    ShuffledOptions,
    remap_letter_references,
    shuffle_options,
)
from evaluator.generation.parsing import ResponseParseError, parse_generated
from evaluator.generation.templates import (
    EVENTS_PER_ITEM,
    SCHEMAS,
    GenerationMode,
    GenerationTemplate,
)
from evaluator.openai_client import ChatClient

DEFAULT_MAX_TOKENS = 1024
DEFAULT_TEMPERATURE = 0.7
FAILURES_KEPT = 20  # transport failure messages kept for the summary
# A generated item must stand on its own: no pointing back at the text it came from.
_ARTICLE_REFERENCE = re.compile(
    r"\b(?:the|this|that|above)\s+(?:article|passage|news\s+(?:story|report|item)|excerpt)\b"
    r"|\baccording to the (?:text|report)\b|文章|本文|原文|上文|材料中",
    re.IGNORECASE,
)
_KIND_WORDS = {
    ItemKind.SINGLE: "single-answer multiple-choice: exactly one option is correct",
    ItemKind.MULTI: "multiple-answer multiple-choice: one or more options are correct",
    ItemKind.TRUEFALSE: "true/false",
}


class GenerationAbortedError(VetbenchError, RuntimeError):
    """Every further request would fail the same way (bad key, unknown model)."""


@dataclass(frozen=True)
class GenerationTask:
    """One item to generate: sample ``sample_index`` of an article (``ordering``,
    ``mcq_article``) or of an exam question to rewrite; its id and prompt follow from them."""

    source: str
    origin: Article | SourceQuestion
    sample_index: int
    mode: GenerationMode
    template: GenerationTemplate
    seed: int = 0  # rewrites: with the item id, seeds the option shuffle

    @property
    def article_id(self) -> str:
        """The article's id, or the question's record number for rewrites."""
        return self.origin.id

    @property
    def item_id(self) -> str:
        return generated_item_id(self.source, self.origin.id, self.sample_index)

    @cached_property
    def shuffled(self) -> ShuffledOptions:
        """A rewrite's options in the seeded order its prompt shows them and its item keeps."""
        assert isinstance(self.origin, SourceQuestion)
        draft = self.origin.draft
        return shuffle_options(draft.choices, draft.key, draft.kind, f"{self.seed}:{self.item_id}")

    @cached_property
    def prompt(self) -> str:
        """What is sent: the template filled with the article, or with the question and
        its options in their shuffled order."""
        if isinstance(self.origin, Article):
            article = self.origin
            return self.template.render(
                title=article.title, text=article.text, article_id=article.id
            )
        draft = self.origin.draft
        options = "\n".join(f"{label}. {text}" for label, text in self.shuffled.choices.items())
        return self.template.render(
            question=draft.prompt.strip(), options=options, kind=_KIND_WORDS[ItemKind(draft.kind)]
        )

    @property
    def prompt_hash(self) -> str:
        return hashlib.sha256(self.prompt.encode("utf-8")).hexdigest()


@dataclass
class GenerationSummary:
    planned: int = 0
    skipped: int = 0  # stored or rejected by an earlier run
    stored: int = 0
    rejected: int = 0
    failed: int = 0  # transport failures: nothing stored, tried again next run
    retried: int = 0  # extra attempts the client made
    cached: int = 0  # answers that came from the response cache
    duplicates: int = 0  # stored items that nearly repeat an earlier item (flagged for review)
    interrupted: bool = False
    stored_ids: list[str] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    reject_reasons: Counter[str] = field(default_factory=Counter)

    def to_json(self, *, source: str, model: str) -> JsonObject:
        """The summary as ``vetbench generate --json`` prints it."""
        reasons: JsonObject = dict(self.reject_reasons)
        failures: list[JsonValue] = list(self.failures)
        return {
            "source": source,
            "model": model,
            "planned": self.planned,
            "skipped": self.skipped,
            "stored": self.stored,
            "rejected": self.rejected,
            "failed": self.failed,
            "retried": self.retried,
            "cached": self.cached,
            "duplicates": self.duplicates,
            "interrupted": self.interrupted,
            "reject_reasons": reasons,
            "failures": failures,
        }


# -- planning ----------------------------------------------------------------------------


def plan_from_articles(
    articles: Sequence[Article],
    *,
    mode: GenerationMode,
    template: GenerationTemplate,
    source: str,
    samples: int = 1,
) -> list[GenerationTask]:
    """``samples`` tasks per article for ``ordering`` or ``mcq_article``."""
    if mode is GenerationMode.MCQ_REWRITE:
        raise ValueError("rewrites are planned from questions, not articles")
    return [
        GenerationTask(source, article, sample, mode, template)
        for article in articles
        for sample in range(samples)
    ]


def plan_rewrites(
    questions: Sequence[SourceQuestion],
    *,
    template: GenerationTemplate,
    source: str,
    samples: int = 1,
    seed: int = 0,
) -> list[GenerationTask]:
    """``samples`` rewrites per question, each with its own seeded option shuffle."""
    return [
        GenerationTask(source, question, sample, GenerationMode.MCQ_REWRITE, template, seed)
        for question in questions
        for sample in range(samples)
    ]


def split_done(db: Database, tasks: Sequence[GenerationTask]) -> tuple[list[GenerationTask], int]:
    """The tasks still to do, and how many an earlier run already stored or rejected."""
    sources = sorted({task.source for task in tasks})
    with db.session() as session:
        stored = set(session.exec(select(Item.id).where(col(Item.source).in_(sources))))
        rejected = set(
            session.exec(
                select(
                    GenerationReject.source,
                    GenerationReject.article_id,
                    GenerationReject.sample_index,
                ).where(col(GenerationReject.source).in_(sources))
            )
        )
    todo = [
        task
        for task in tasks
        if task.item_id not in stored
        and (task.source, task.article_id, task.sample_index) not in rejected
    ]
    return todo, len(tasks) - len(todo)


# -- from an answer to a draft ----------------------------------------------------------


def build_draft(
    task: GenerationTask, response: ChatResponse, provenance: JsonObject
) -> tuple[ItemDraft | None, str | None]:
    """The validated draft for an answer, or None and the reason it was rejected."""
    if response.finish_reason == "length":
        return None, "response: cut off at the token limit (raise --max-tokens)"
    try:
        parsed = parse_generated(
            response.text, want_choices=task.mode is not GenerationMode.MCQ_REWRITE
        )
    except ResponseParseError as error:
        return None, f"response: {error}"
    meta: JsonObject = {}
    if task.mode is GenerationMode.MCQ_REWRITE:
        assert isinstance(task.origin, SourceQuestion)
        original = task.origin.draft
        shuffled = task.shuffled
        explanation = original.explanation
        if explanation:
            explanation = remap_letter_references(explanation, shuffled.new_label(), original.kind)
        draft = ItemDraft(
            kind=original.kind,
            prompt=parsed.prompt,
            choices=shuffled.choices,
            key=shuffled.key,
            explanation=explanation,
            language=language_of(original.prompt),
            source_ref=original.source_ref,
            meta={**original.meta, "rewritten_from": task.origin.place},
        )
        provenance = {
            **provenance,
            "original_question": original.prompt,
            "original_key": original.key,
            "options_from": shuffled.source_labels,
        }
    else:
        article = task.origin
        assert isinstance(article, Article)
        kind = (
            ItemKind.ORDERING if task.mode is GenerationMode.ORDERING else _choice_kind(parsed.key)
        )
        meta = {"article_id": article.id, "article_title": article.title}
        draft = ItemDraft(
            kind=kind.value,
            prompt=parsed.prompt,
            choices=parsed.choices,
            key=parsed.key,
            explanation=parsed.explanation,
            language=language_of(parsed.prompt + " ".join(parsed.choices.values())),
            source_ref=f"article {article.id}",
            meta=meta,
        )
    problems = _generation_problems(task, draft) + validate_draft(draft)
    if problems:
        return None, "; ".join(str(problem) for problem in problems)
    if draft.kind == ItemKind.ORDERING and draft.key == "".join(LETTERS[: len(draft.choices)]):
        # Events listed in their logical order give the answer away: relabel them.
        shuffled = shuffle_options(draft.choices, draft.key, draft.kind, task.item_id)
        draft.choices, draft.key = shuffled.choices, shuffled.key
        provenance = {**provenance, "events_from": shuffled.source_labels}
    draft.provenance = {**provenance, "response_shape": parsed.shape}
    return draft, None


def _choice_kind(key: str) -> ItemKind:
    letters = {letter for letter in key.upper() if letter in LETTERS[:8]}
    return ItemKind.MULTI if len(letters) > 1 else ItemKind.SINGLE


def _generation_problems(task: GenerationTask, draft: ItemDraft) -> list[Problem]:
    """What generation asks for beyond the import validators."""
    problems: list[Problem] = []
    if task.mode is GenerationMode.ORDERING and len(draft.choices) != EVENTS_PER_ITEM:
        problems.append(
            Problem("events", f"asked for {EVENTS_PER_ITEM} events, got {len(draft.choices)}")
        )
    if task.mode is not GenerationMode.MCQ_REWRITE:
        field_name = "scenario" if task.mode is GenerationMode.ORDERING else "question"
        texts = [(field_name, draft.prompt)] + [
            (f"choice {label}", text) for label, text in draft.choices.items()
        ]
        for name, text in texts:
            match = _ARTICLE_REFERENCE.search(text or "")
            if match:
                problems.append(
                    Problem(name, f"refers to '{match.group(0)}'; the item must stand on its own")
                )
                break
    return problems


# -- running -----------------------------------------------------------------------------


def run_generation(
    db: Database,
    client: ChatClient,
    tasks: Iterable[GenerationTask],
    *,
    actor: str,
    temperature: float = DEFAULT_TEMPERATURE,
    max_tokens: int = DEFAULT_MAX_TOKENS,
    structured: bool = True,
    vary_samples: bool = False,
    summary: GenerationSummary | None = None,
    on_progress: Callable[[GenerationSummary], None] | None = None,
    on_stopping: Callable[[], None] | None = None,
) -> GenerationSummary:
    """Send every task, store each answer as it arrives, and return the tallies.

    Ctrl-C stops the run: finished items stay stored, queued requests are dropped,
    and requests already sent finish into the response cache (``on_stopping`` is
    called first, so a caller can say so).  ``vary_samples`` sends the sample index
    as the request seed, so that several samples of one article differ.
    """
    summary = summary or GenerationSummary()
    counters_before = client.counters.snapshot()

    def requests() -> Iterable[ChatRequest]:
        for task in tasks:
            yield ChatRequest.user(
                task.prompt,
                max_tokens=max_tokens,
                temperature=temperature,
                seed=task.sample_index if vary_samples else None,
                json_schema=SCHEMAS[task.mode] if structured else None,
                tag=task,
                draw=task.item_id,  # asked again for this item: its answer, if one came
            )

    outcomes = client.complete_all(requests())
    try:
        for outcome in outcomes:
            task: GenerationTask = outcome.request.tag
            if outcome.error is not None:
                summary.failed += 1
                if len(summary.failures) < FAILURES_KEPT:
                    summary.failures.append(f"{task.item_id}: {outcome.error}")
                if outcome.error.fatal:
                    raise GenerationAbortedError(str(outcome.error))
            else:
                assert outcome.response is not None
                with interrupt_after():  # stored and counted, or neither
                    _store(db, client, task, outcome.response, actor, temperature, summary)
            _update_counts(summary, client, counters_before)
            if on_progress:
                on_progress(summary)
    except KeyboardInterrupt:
        summary.interrupted = True
        if on_stopping:
            on_stopping()
    finally:
        outcomes.close()  # drop queued requests; wait for those on the wire
        _update_counts(summary, client, counters_before)
        summary.duplicates += flag_duplicates(db, summary.stored_ids, actor)
    return summary


def _update_counts(summary: GenerationSummary, client: ChatClient, before: dict[str, int]) -> None:
    now = client.counters.snapshot()
    summary.retried = now["retried"] - before["retried"]
    summary.cached = now["cached"] - before["cached"]


def _store(
    db: Database,
    client: ChatClient,
    task: GenerationTask,
    response: ChatResponse,
    actor: str,
    temperature: float,
    summary: GenerationSummary,
) -> None:
    provenance: JsonObject = {
        "model": client.model,
        "base_url": client.base_url,
        "prompt_hash": task.prompt_hash,
        "template": task.template.path,
        "template_hash": task.template.hash,
        "article_id": task.article_id,
        "sample_index": task.sample_index,
        "temperature": temperature,
        "structured_output": response.structured,
        "raw_response": response.text,
        "generated_at": utcnow().isoformat(),
    }
    draft, reason = build_draft(task, response, provenance)
    with db.transaction() as session:
        if draft is not None:
            if session.get(Item, task.item_id) is not None:
                summary.skipped += 1  # another run stored it meanwhile
                return
            # Near-duplicates are checked once for the whole run (flag_duplicates).
            add_item(
                session,
                task.item_id,
                task.source,
                draft,
                author=client.model[:255],
                check_duplicates=False,
            )
            record_event(
                session,
                actor,
                GENERATE_ACTION,
                task.item_id,
                model=client.model,
                source=task.source,
            )
        else:
            assert reason is not None
            session.add(
                GenerationReject(
                    source=task.source,
                    article_id=task.article_id,
                    sample_index=task.sample_index,
                    kind=task.mode.value,
                    model=client.model[:512],
                    prompt_hash=task.prompt_hash,
                    raw_response=response.text,
                    reason=reason,
                )
            )
    # Counted only once committed (the caller holds Ctrl-C until the count is made).
    if draft is not None:
        summary.stored += 1
        summary.stored_ids.append(task.item_id)
        return
    assert reason is not None
    client.counters.add("invalid")
    summary.rejected += 1
    summary.reject_reasons[reason.split(":", 1)[0]] += 1

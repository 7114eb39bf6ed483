"""Every enumerated word vetbench stores or accepts, in one place.

Kinds, statuses, roles, verdicts, decision reasons, run statuses, failure kinds,
evaluation modes, generation kinds and item flags are defined here once.  The tables (``db.models``), the
answer rules (``db.answers``), the CLI's ``click.Choice`` options, the TUI's
filters and the agreement tables all read them from this module.

It imports only the standard library, so the CLI can build its ``--help`` from it
without loading SQLAlchemy.  Values are plain strings in the database, so the
schema is the same on SQLite and PostgreSQL.
"""

from __future__ import annotations

from collections.abc import Iterable
from enum import StrEnum

__all__ = [
    "ALL",
    "DECISION_STATUSES",
    "FLAG_ACTION",
    "FLAG_DESCRIPTIONS",
    "FLAGS_ACTION",
    "GENERATE_ACTION",
    "GOLD_ADD_ACTION",
    "IMPORT_ACTION",
    "JUDGE_ACTION",
    "KEY_CORRECTION_NOTE",
    "LEAD_AUDIT_ACTIONS",
    "METADATA_ACTION",
    "OPEN_STATUSES",
    "ORACLE_SCRIPT",
    "REGISTER_ACTION",
    "RELEASE_ACTION",
    "RETRACT_ACTION",
    "REVEAL_ACTION",
    "REVISE_ACTION",
    "SCRIPTED_BACKEND",
    "UNDECIDED_STATUSES",
    "UNDO_DECISION_ACTION",
    "DecisionReason",
    "EvalMode",
    "EvalProtocol",
    "FailureKind",
    "FlagName",
    "FlagSource",
    "GenerationKind",
    "ItemKind",
    "ItemStatus",
    "REASON_ALIASES",
    "REASON_ALIASES_TEXT",
    "QueueOrder",
    "Role",
    "RunStatus",
    "Verdict",
    "reason_named",
    "values",
]

ALL = "all"
"""The word a ``--status`` option takes for "any status"."""

SCRIPTED_BACKEND = "scripted"
"""The backend of scripted models (``evaluator.backends.scripted``)."""
ORACLE_SCRIPT = "oracle"
"""The scripted model handed each item's key (``--model scripted:oracle``), recorded as
its ``script`` parameter: a check of the evaluation, never evidence about an item."""

JUDGE_ACTION = "judge"
"""The audit action of a judgment (``reviewer.judging``): its event holds the verdict and
the blind answer, which the audit trail shows leads and the judgment's author only
(``db.audit``; on PostgreSQL raw SQL still reads them, as it reads the judgments)."""
GOLD_ADD_ACTION = "gold-add"
"""The audit action of marking a gold item (``db.gold``): its event holds the known verdict
and answer, so on PostgreSQL only leads read it (``db.table_privileges``)."""
FLAG_ACTION = "flag"
"""The audit action of flags from a second opinion (``vetbench check``): on PostgreSQL a
member's ``check`` flag commits only with one (``db.guards``)."""
METADATA_ACTION = "metadata"
"""The audit action of changing an item's metadata (``db.importer``): on PostgreSQL no
change of ``meta``, ``source_ref`` or ``language`` commits without one (``db.guards``)."""
RETRACT_ACTION = "retract"
"""The audit action of undoing one's judgment (``vetbench undo``): on PostgreSQL a member's
judgment is undone only with one of the same transaction naming it (``db.guards``)."""
REVEAL_ACTION = "reveal"
"""The audit action of seeing an item revision's key before judging it (``db.reveals``): it
names the revision, never the blind answer, which the person's own ``key_reveal`` row holds."""
UNDO_DECISION_ACTION = "undo-decision"
"""The audit action of undoing a decision (``vetbench undo-decision``): on PostgreSQL a
lead's decision is undone only with one of the same transaction naming it (``db.guards``)."""
REVISE_ACTION = "revise"
"""The audit action of a new revision of a stored item (an edit, a key correction, a
re-import that changes its text: ``db.items``, ``db.importer``): on PostgreSQL a member's
revision of a stored item commits only with one of the same transaction naming the item
(``db.guards``)."""
KEY_CORRECTION_NOTE = "key corrected by lead"
"""What the change note of a lead's key correction starts with (``reviewer.adjudication``:
``key corrected by lead: B, A -> A, B``); a re-import that would undo one says so
(``db.import_checks``)."""
IMPORT_ACTION = "import"
"""The audit action of importing a file (``db.importer``), naming the file; with
:data:`GENERATE_ACTION` (``vetbench generate``, naming the item) the event a new item's
revisions come with on PostgreSQL (``db.guards``)."""
GENERATE_ACTION = "generate"
"""The audit action of storing a generated item (``evaluator.generation``)."""
REGISTER_ACTION = "register"
"""The audit action of registering a person (``db.people.ensure_person``): on PostgreSQL a
member who is not a lead records one only of themselves as an annotator, as
``--new-user`` and a first write register them (``db.table_privileges``)."""
RELEASE_ACTION = "release"
"""The audit action of making a release (``db.releases``): on PostgreSQL a member's release
items commit only with one of the same transaction naming the release (``db.privileges``)."""
FLAGS_ACTION = "flags"
"""The audit action of a lead's flag recompute or backfill (``db.flag_recompute``): on
PostgreSQL it may move duplicate links (``db.guards``)."""
LEAD_AUDIT_ACTIONS = (
    "config",
    "decide",
    FLAGS_ACTION,
    GOLD_ADD_ACTION,
    "gold-remove",
    "guidelines",
    "login-role",
    RELEASE_ACTION,
    "requalify",
    "set-role",
    UNDO_DECISION_ACTION,
)
"""The audit actions of writes only leads (and the owner) make: decisions, settings, gold
items, guidelines, releases, roles, recomputed flags (``flags recompute``; a migration's
backfill runs as the owner).  On PostgreSQL an annotator cannot record one
(``db.table_privileges``), so no event of theirs reads as a decision they cannot make."""


def values(members: Iterable[StrEnum]) -> tuple[str, ...]:
    """The public names of an enum or of some of its members, in order (``click.Choice``)."""
    return tuple(member.value for member in members)


class ItemKind(StrEnum):
    """The four kinds of item; the values are the public names used everywhere."""

    ORDERING = "ordering"
    SINGLE = "single"
    MULTI = "multi"
    TRUEFALSE = "truefalse"

    @property
    def is_mcq(self) -> bool:
        return self is not ItemKind.ORDERING


class ItemStatus(StrEnum):
    """Where an item stands in review; leads' decisions set the last two."""

    PENDING = "pending"  # no judgment on the current revision yet
    IN_REVIEW = "in_review"  # fewer judgments than the overlap k
    CONFLICT = "conflict"  # k judgments that do not all keep the item with its key
    AGREED = "agreed"  # k judgments: all keep, all blind answers equal the key
    APPROVED = "approved"  # a lead's decision
    REJECTED = "rejected"  # a lead's decision


OPEN_STATUSES: tuple[ItemStatus, ...] = (ItemStatus.IN_REVIEW, ItemStatus.PENDING)
"""Statuses the review queue serves, in the order it serves them."""

DECISION_STATUSES: tuple[ItemStatus, ...] = (ItemStatus.APPROVED, ItemStatus.REJECTED)
"""Statuses only a lead's decision sets."""

UNDECIDED_STATUSES: tuple[ItemStatus, ...] = tuple(
    status for status in ItemStatus if status not in DECISION_STATUSES
)
"""Statuses of items still waiting for a lead's decision."""


class Role(StrEnum):
    ANNOTATOR = "annotator"
    LEAD = "lead"


class Verdict(StrEnum):
    """An annotator's verdict on one item revision (CLI spelling)."""

    KEEP = "keep"
    AMBIGUOUS = "ambiguous"  # more than one valid order
    NO_ORDER = "no-order"  # no clear order
    WRONG_KEY = "wrong-key"
    FLAWED = "flawed"  # flawed text
    SENSITIVE = "sensitive"
    DUPLICATE = "duplicate"


def verdict_applies(verdict: Verdict, kind: ItemKind) -> bool:
    """Whether items of ``kind`` take ``verdict``: ``no-order`` speaks of events, so only
    ordering items take it (the app's keys, ``judge``'s checks and gold items' alike)."""
    return verdict is not Verdict.NO_ORDER or kind is ItemKind.ORDERING


class DecisionReason(StrEnum):
    """Why a lead rejected an item (approvals may carry ``other`` or none)."""

    SEVERAL_VALID_ORDERS = "several-valid-orders"
    NO_CLEAR_ORDER = "no-clear-order"
    WRONG_KEY = "wrong-key"
    FLAWED = "flawed"
    SENSITIVE = "sensitive"
    DUPLICATE = "duplicate"
    OTHER = "other"


REASON_ALIASES: dict[str, DecisionReason] = {
    Verdict.NO_ORDER.value: DecisionReason.NO_CLEAR_ORDER,
    Verdict.AMBIGUOUS.value: DecisionReason.SEVERAL_VALID_ORDERS,
    "several-valid-answers": DecisionReason.SEVERAL_VALID_ORDERS,
}
"""Other words a decision reason is given by: the annotators' verdicts ``no-order`` and
``ambiguous``, and ``several-valid-answers``, the name multiple-choice items show
:data:`DecisionReason.SEVERAL_VALID_ORDERS` by (:func:`reason_word`).  The other verdicts
(``wrong-key``, ``flawed``, ``sensitive``, ``duplicate``) are reasons by the same name.
Only the reason's own name is stored."""

REASON_ALIASES_TEXT = "; ".join(
    f"{' or '.join(alias for alias, named in REASON_ALIASES.items() if named is reason)} "
    f"for {reason.value}"
    for reason in DecisionReason
    if reason in REASON_ALIASES.values()
)
"""The aliases in words, for help and errors: ``no-order for no-clear-order; ...``."""


def reason_named(text: str) -> DecisionReason:
    """The decision reason ``text`` names: its stored name or one of :data:`REASON_ALIASES`
    (``"no-order"`` -> ``DecisionReason.NO_CLEAR_ORDER``); ValueError for any other word."""
    alias = REASON_ALIASES.get(text)
    return alias if alias is not None else DecisionReason(text)


def reason_word(reason: str, kinds: str | Iterable[str]) -> str:
    """The name a decision reason is shown by for items of ``kinds`` (one kind, or every
    kind the figure counts; none: any kind): the stored name, except ``several-valid-orders``, which on items
    that are not ordering items means more than one answer: ``several-valid-answers``
    (``several-valid-orders/answers`` for both at once).  The stored name never changes."""
    if reason != DecisionReason.SEVERAL_VALID_ORDERS.value:
        return reason
    ordering = ItemKind.ORDERING.value
    present = {kinds} if isinstance(kinds, str) else set(kinds)
    if present == {ordering}:
        return reason
    if ordering in present or not present:  # none given: any kind
        return "several-valid-orders/answers"
    return "several-valid-answers"


class RunStatus(StrEnum):
    RUNNING = "running"
    FINISHED = "finished"
    FAILED = "failed"
    INTERRUPTED = "interrupted"


class FailureKind(StrEnum):
    """Why a prediction has no scored answer. Wrong answers are not failures."""

    UNPARSED = "unparsed"  # the model answered, but no valid answer could be read
    INFRASTRUCTURE = "infrastructure"  # timeout, exhausted retries: retried on resume


class EvalMode(StrEnum):
    """How a run asks a model: write an answer, or rank candidate answers."""

    GENERATE = "generate"
    SCORE = "score"


class EvalProtocol(StrEnum):
    """Whose evaluation protocol a run follows (``vetbench eval --protocol``)."""

    CUSTOM = "custom"  # vetbench's own prompts, shots as asked
    CFLUE = "cflue"  # the CFLUE paper's: zero-shot, answer and explanation
    ECONLOGICQA = "econlogicqa"  # the EconLogicQA paper's: 1 and 5 shots


class GenerationKind(StrEnum):
    """What ``vetbench generate --kind`` writes: ordering items, or multiple-choice ones."""

    ORDERING = "ordering"
    MCQ = "mcq"


class FlagName(StrEnum):
    """Why an item revision looks suspicious: the fixed vocabulary of item flags.

    A flag is a hint for reviewers with the evidence that raised it, never a verdict.
    The first six are computed from the text whenever a revision is made
    (``db.flags``); the last two come from models (``vetbench flags recompute`` reads
    the evaluation runs, ``vetbench check`` asks a strong model).
    """

    DUPLICATE = "duplicate"  # nearly repeats another item, whatever the order of its choices
    NEEDS_MEDIA = "needs-media"  # refers to a figure, table, image or attachment it lacks
    HTML = "html"  # HTML markup or entities in the text
    KEY_MISMATCH = "key-mismatch"  # the explanation names another answer than the key
    ORDER_LEAK = "order-leak"  # the events are already listed in key order
    SAME_CHOICES = "same-choices"  # two choices (or events) read the same
    MODEL_DISAGREES = "model-disagrees"  # models agree on another answer than the key
    SECOND_OPINION = "second-opinion"  # a strong model's concerns (several orders, ...)

    @property
    def description(self) -> str:
        return FLAG_DESCRIPTIONS[self]


FLAG_DESCRIPTIONS: dict[FlagName, str] = {
    FlagName.DUPLICATE: "nearly repeats another item (options in any order, any labels)",
    FlagName.NEEDS_MEDIA: "refers to a figure, table, image or attachment it does not contain",
    FlagName.HTML: "HTML markup or entities in the text",
    FlagName.KEY_MISMATCH: "the explanation names another answer than the key",
    FlagName.ORDER_LEAK: "the events are already listed in key order",
    FlagName.SAME_CHOICES: "two choices (or events) read the same",
    FlagName.MODEL_DISAGREES: "models agree with one another on another answer than the key",
    FlagName.SECOND_OPINION: "a strong model doubts the item (several orders, missing "
    "material, sensitive)",
}


class FlagSource(StrEnum):
    """What raised a flag."""

    AUTO = "auto"  # the text rules, run whenever a revision is made
    MODEL = "model"  # evaluation runs: models agreeing against the key
    CHECK = "check"  # ``vetbench check``: a strong model's second opinion


class QueueOrder(StrEnum):
    """In what order ``vetbench review`` serves items."""

    DEFAULT = "default"  # items already judged by others first, then id order
    SUSPICIOUS = "suspicious"  # the highest triage score first (``reviewer.triage``)


class QualificationStatus(StrEnum):
    """Where a person stands with the qualification gate (``db.qualification``)."""

    NOT_GATED = "not-gated"  # the gate is off, or a lead: their judgments count
    IN_PROGRESS = "in-progress"  # answering gold items; their judgments do not count yet
    PASSED = "passed"  # their judgments count
    FAILED = "failed"  # both attempts failed: nothing counts until a lead resets them

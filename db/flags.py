"""Item flags: raised when a revision is made, stored per revision with their evidence, read back.

The vocabulary is ``db.vocabulary.FlagName``; the text rules are ``db.flag_rules``.

- :func:`flag_revisions` is the one function that flags new revisions.  It is called
  from the one place revisions are created (``db.items.store_revisions``: import,
  re-import, edits, key corrections, generation), and raises every text flag at
  once.  The ``duplicate`` flag compares the revision with every other item, so
  callers that add many items at once (an import, a generation run) check
  duplicates once at the end with :func:`check_duplicates` or
  :func:`record_duplicates`; a single edit is checked at once.
- :func:`refresh_model_flags` turns evaluation runs into ``model-disagrees`` flags
  (source ``model``): at least two models agree on one answer other than the key.
- :func:`record_flags` stores flags from elsewhere (``vetbench check``: source ``check``).
- ``db.flag_recompute.recompute_flags`` brings every current revision's automatic and
  model flags up to date (after the rules changed; the migration that added flags runs
  it); ``db.copy_flags`` writes a copy's ``duplicate`` flag again when its original is
  revised.

Flags are hints with evidence, never verdicts: nothing here changes an item's
status.  Reading: :func:`current_flags`, :func:`revision_flags`, :func:`flag_counts`
and :func:`flagged_condition` for queries that filter items by flag.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from contextlib import closing
from dataclasses import dataclass, replace
from datetime import datetime
from typing import TYPE_CHECKING, Any

from sqlalchemy import bindparam, delete, insert, select, text, update
from sqlmodel import Session, col

from db.answers import format_answer
from db.bulk_reads import id_chunks
from db.canonical_text import item_text
from db.differences import DuplicateReading, ItemText, describe_differences, read_duplicate
from db.flag_rules import FlagFinding, text_findings
from db.json_types import JsonObject
from db.model_answers import model_answers
from db.models import Item, ItemRevision, StoredFlag, is_current_revision, utcnow
from db.settings import get_setting
from db.stored_flags import (
    ItemFlag,
    all_current_flags,
    current_flags,
    flag_counts,
    flag_json,
    flagged_condition,
    revision_flags,
)
from db.vocabulary import FlagName, FlagSource, ItemKind

if TYPE_CHECKING:
    from db.items import NewRevision

__all__ = [
    "DuplicateLink",
    "ItemFlag",
    "all_current_flags",
    "flag_json",
    "check_duplicates",
    "current_flags",
    "current_text_columns",
    "current_texts",
    "delete_flags",
    "duplicate_finding",
    "duplicate_threshold",
    "flag_row",
    "insert_flags",
    "replace_changed",
    "stored_by_revision",
    "text_choices",
    "flag_counts",
    "flag_revisions",
    "lock_flags",
    "flagged_condition",
    "record_duplicates",
    "record_flags",
    "refresh_model_flags",
    "revision_flags",
    "stored_texts",
    "worded_now",
    "duplicate_reading_now",
]

MIN_AGREEING_MODELS = 2
"""Models that must give one and the same answer other than the key for ``model-disagrees``."""
_BATCH = 2000  # rows per INSERT


@dataclass(frozen=True)
class DuplicateLink:
    """Item ``item_id`` (its current revision) nearly repeats item ``of``."""

    item_id: str
    of: str
    similarity: float | None
    stated: bool = False  # the item file said so (a vetbench JSONL record)
    # ``of`` was edited since and its new text no longer nearly repeats the item's
    # (``similarity``: the two now; ``db.copy_flags``): the item copied an earlier text
    apart: bool = False


def flag_row(
    item_id: str, revision: int, finding: FlagFinding, source: FlagSource, now: datetime
) -> dict[str, Any]:
    return {
        "item_id": item_id,
        "revision_number": revision,
        "name": finding.name.value,
        "source": source.value,
        "evidence": finding.stored_evidence(),
        "created_at": now,
    }


_FLAG_LOCK = 0x76657462  # "vetb": the advisory lock every writer of flags takes


def lock_flags(session: Session, *, alone: bool = False) -> None:
    """PostgreSQL: take the flag writers' advisory lock until the transaction ends, shared
    by writers that add flags (imports, edits, generation, checks), ``alone`` by
    ``db.flag_recompute.recompute_flags``, which would otherwise read an import's items before it
    commits and its flags after, and remove them as stale.  SQLite serialises writers."""
    connection = session.connection()
    if connection.dialect.name == "postgresql":
        function = "pg_advisory_xact_lock" if alone else "pg_advisory_xact_lock_shared"
        connection.execute(text(f"SELECT {function}(:key)"), {"key": _FLAG_LOCK})


def insert_flags(session: Session, rows: list[dict[str, Any]]) -> None:
    if rows:
        lock_flags(session)
    for start in range(0, len(rows), _BATCH):
        session.execute(insert(StoredFlag), rows[start : start + _BATCH])


# --- raising flags ---------------------------------------------------------------------------


def flag_revisions(
    session: Session, revisions: Sequence[NewRevision], *, duplicates: bool = True
) -> int:
    """Raise and store every automatic flag of revisions just created; returns how many.

    The text rules run on each revision; with ``duplicates``, each revision that is
    its item's current one is also checked against every other item (for one edit or
    a few items; callers adding many items pass ``duplicates=False`` and check them
    together at the end).
    """
    now = utcnow()
    rows = [
        flag_row(revision.item_id, revision.number, finding, FlagSource.AUTO, now)
        for revision in revisions
        for finding in text_findings(revision.text)
    ]
    insert_flags(session, rows)
    if duplicates:
        session.flush()
        current = [revision.item_id for revision in revisions]
        return len(rows) + check_duplicates(session, current)
    return len(rows)


def stored_texts(session: Session, *, batch_size: int = 5000) -> Iterator[list[tuple[str, str]]]:
    """Every item's id and canonical text (``db.canonical_text.item_text`` of its current revision),
    in creation order, ``batch_size`` at a time (streamed: a million items never sit in
    memory at once)."""
    query = (
        select(col(Item.id), col(ItemRevision.prompt), col(ItemRevision.choices))
        .join(ItemRevision, is_current_revision())
        .order_by(col(Item.created_at), col(Item.id))
        .execution_options(yield_per=batch_size)
    )
    for rows in session.execute(query).partitions():
        yield [
            (item_id, item_text(prompt, text_choices(choices))) for item_id, prompt, choices in rows
        ]


def check_duplicates(
    session: Session, item_ids: Collection[str], *, threshold: float | None = None
) -> int:
    """Check the current text of ``item_ids`` against the items created before them (and
    against each other, in creation order), as ``recompute_flags`` checks every item:
    of two near-copies the later is the copy, whichever was edited.  Link and flag those
    that nearly repeat one; items checked that repeat nothing lose a link they had.
    Returns how many were flagged.  (The copies of an edited item are compared with its
    new text apart: ``db.copy_flags``.)"""
    if not item_ids:
        return 0
    # Here, not at the top: the detector brings numpy, which the review app, the queue
    # and most commands import this module without needing (a tenth of their start).
    from db.dedup import near_duplicates
    from db.spill import TextSpill
    from db.text_sources import InMemoryTexts, JoinedTexts

    wanted = set(item_ids)
    limit = duplicate_threshold(session, threshold)
    new_ids: list[str] = []
    new_texts: list[str] = []
    # The other items' texts go to disk: one edit in a database of a million items
    # reads them once, in order, and holds none of them.
    with closing(TextSpill()) as earlier_ids, closing(TextSpill()) as earlier_texts:
        for batch in stored_texts(session):
            for item_id, text in batch:
                if item_id in wanted:
                    new_ids.append(item_id)
                    new_texts.append(text)
                elif len(new_ids) < len(wanted):  # created before one of them
                    earlier_ids.append(item_id)
                    earlier_texts.append(text)
            if len(new_ids) == len(wanted):
                break  # the rest came later: an original is never its later copy's copy
        found = near_duplicates(earlier_texts, InMemoryTexts(new_texts), threshold=limit)
        matches = found.matches()
        all_ids = JoinedTexts(earlier_ids, InMemoryTexts(new_ids))  # numbered as ``found``
        original_ids = all_ids.take([match.of for match in matches])
    links = [
        DuplicateLink(new_ids[match.index - found.first_new], original_id, match.similarity)
        for match, original_id in zip(matches, original_ids, strict=True)
    ]
    linked = {link.item_id for link in links}
    record_duplicates(session, links, unlinked=[i for i in new_ids if i not in linked])
    return len(links)


def text_choices(choices: object) -> dict[str, str]:
    """A revision's choices as label -> text (as stored: a JSON object of strings)."""
    if not isinstance(choices, dict):
        return {}
    return {str(label): str(text) for label, text in choices.items()}


def duplicate_threshold(session: Session, threshold: float | None) -> float:
    return float(
        threshold if threshold is not None else get_setting(session, "duplicate_threshold")
    )


def current_text_columns() -> tuple[Any, ...]:
    """The columns naming an item and the text of its current revision; queries
    select them joined on ``is_current_revision()``."""
    return (
        col(Item.id),
        col(Item.kind),
        col(Item.current_revision),
        col(ItemRevision.prompt),
        col(ItemRevision.choices),
        col(ItemRevision.key),
    )


def current_texts(session: Session, item_ids: Iterable[str]) -> dict[str, tuple[int, ItemText]]:
    """Each item's current revision number and text, for explaining duplicates."""
    found: dict[str, tuple[int, ItemText]] = {}
    for chunk in id_chunks(sorted(set(item_ids))):
        rows = session.execute(
            select(*current_text_columns())
            .join(ItemRevision, is_current_revision())
            .where(col(Item.id).in_(chunk))
        )
        for item_id, kind, revision, prompt, choices, key in rows:
            found[item_id] = (revision, ItemText(kind, prompt, text_choices(choices), key))
    return found


def duplicate_finding(
    link: DuplicateLink, copy: ItemText, original: ItemText | None, of_revision: int = 0
) -> FlagFinding:
    """The ``duplicate`` flag of ``link``: which item, how similar, what differs (from
    ``of``'s text now, at revision ``of_revision``)."""
    if link.apart:
        return FlagFinding(
            FlagName.DUPLICATE,
            f"copied an earlier text of {link.of}, which was edited (revision {of_revision}) "
            f"and no longer nearly repeats it ({link.similarity or 0:.0f}% similar); a lead's "
            "`vetbench flags recompute` takes this flag back",
            {"of": link.of, "similarity": link.similarity, "differences": [], "apart": True},
        )
    differences = describe_differences(copy, original) if original is not None else ()
    reading = read_duplicate(
        link.of,
        link.similarity,
        differences,
        prompt=copy.prompt,
        other_prompt=original.prompt if original is not None else "",
        stated=link.stated,
    )
    evidence: JsonObject = {
        "of": link.of,
        "similarity": link.similarity,
        "differences": list(differences),
    }
    if link.stated:
        evidence["stated"] = True
    return FlagFinding(FlagName.DUPLICATE, reading.text, evidence)


def worded_now(session: Session, flags: Sequence[ItemFlag]) -> list[ItemFlag]:
    """``flags``, each ``duplicate`` flag of a current revision with its summary as the rules
    word it now, from its stored evidence and the two questions as they stand (as triage
    reads it): a flag stored by an older version said "copies" of a reworded question
    until a lead's ``vetbench flags recompute``.  A copy keeps its stored words (an
    original edited apart says so there), as does a flag of an earlier revision (the
    question now is not the one it was about)."""
    duplicates = [flag for flag in flags if flag.name is FlagName.DUPLICATE]
    if not duplicates:
        return list(flags)
    originals = {str(flag.evidence.get("of", "")) for flag in duplicates}
    texts = current_texts(session, {flag.item_id for flag in duplicates} | originals)
    prompts = {item_id: text.prompt for item_id, (_revision, text) in texts.items()}
    current = {item_id: revision for item_id, (revision, _text) in texts.items()}
    return [
        _worded_now(flag, prompts)
        if flag.name is FlagName.DUPLICATE and current.get(flag.item_id) == flag.revision
        else flag
        for flag in flags
    ]


def _worded_now(flag: ItemFlag, prompts: Mapping[str, str]) -> ItemFlag:
    reading = duplicate_reading_now(flag, prompts)
    if reading.copy:
        return flag
    return replace(flag, evidence={**flag.evidence, "summary": reading.text})


def duplicate_reading_now(flag: ItemFlag, prompts: Mapping[str, str]) -> DuplicateReading:
    """A stored ``duplicate`` flag read again from its evidence and the two questions as
    they stand now (``prompts``: item id → current question), as the rules read it when
    they store it."""
    of = str(flag.evidence.get("of", ""))
    listed = flag.evidence.get("differences")
    similarity = flag.evidence.get("similarity")
    return read_duplicate(
        of,
        similarity if isinstance(similarity, int | float) else None,
        [d for d in listed if isinstance(d, str)] if isinstance(listed, list) else [],
        prompt=prompts.get(flag.item_id, ""),
        other_prompt=prompts.get(of, ""),
        stated=bool(flag.evidence.get("stated")),
    )


def record_duplicates(
    session: Session,
    links: Sequence[DuplicateLink],
    *,
    unlinked: Sequence[str] = (),
    replace: bool = False,
) -> None:
    """Store near-duplicates: each item's link (``suspected_duplicate_of``, similarity) and a
    ``duplicate`` flag on its current revision saying what differs.  ``unlinked`` items
    lose the link they had.  With ``replace``, duplicate flags already on those
    revisions are removed first (recomputing)."""
    lock_flags(session)
    texts = current_texts(session, [link.item_id for link in links] + [link.of for link in links])
    now = utcnow()
    rows: list[dict[str, Any]] = []
    link_rows: list[dict[str, Any]] = []
    for link in links:
        if link.item_id not in texts:
            continue
        revision, copy = texts[link.item_id]
        of_revision, original = texts.get(link.of, (0, None))
        finding = duplicate_finding(link, copy, original, of_revision)
        rows.append(flag_row(link.item_id, revision, finding, FlagSource.AUTO, now))
        link_rows.append({"b_id": link.item_id, "b_of": link.of, "b_similarity": link.similarity})
    link_rows += [{"b_id": item_id, "b_of": None, "b_similarity": None} for item_id in unlinked]
    if replace:
        delete_flags(
            session,
            [(row["item_id"], row["revision_number"]) for row in rows]
            + [
                (item_id, revision)
                for item_id, (revision, _) in current_texts(session, unlinked).items()
            ],
            names=[FlagName.DUPLICATE],
            source=FlagSource.AUTO,
        )
    insert_flags(session, rows)
    statement = (
        update(Item)
        .where(col(Item.id) == bindparam("b_id"))
        .values(
            suspected_duplicate_of=bindparam("b_of"), duplicate_similarity=bindparam("b_similarity")
        )
        .execution_options(synchronize_session=False)
    )
    for start in range(0, len(link_rows), _BATCH):
        session.connection().execute(statement, link_rows[start : start + _BATCH])


def record_flags(
    session: Session,
    item_id: str,
    revision: int,
    findings: Sequence[FlagFinding],
    *,
    source: FlagSource,
) -> list[FlagFinding]:
    """Store flags raised elsewhere (a second opinion) on one revision; returns those that
    were new (a flag with the same name, source and summary is not stored twice)."""
    have = {
        (flag.name, flag.summary)
        for flag in revision_flags(session, item_id, revision)
        if flag.source is source
    }
    new = [finding for finding in findings if (finding.name, finding.summary) not in have]
    now = utcnow()
    insert_flags(session, [flag_row(item_id, revision, finding, source, now) for finding in new])
    return new


def delete_flags(
    session: Session,
    revisions: Sequence[tuple[str, int]],
    *,
    names: Sequence[FlagName] | None,
    source: FlagSource,
) -> None:
    """Remove one source's flags (of ``names``, or all) from these revisions."""
    lock_flags(session)
    by_item: dict[int, list[str]] = defaultdict(list)
    for item_id, revision in revisions:
        by_item[revision].append(item_id)
    for revision, ids in by_item.items():
        for chunk in id_chunks(ids):
            statement = delete(StoredFlag).where(
                col(StoredFlag.item_id).in_(chunk),
                col(StoredFlag.revision_number) == revision,
                col(StoredFlag.source) == source.value,
            )
            if names is not None:
                statement = statement.where(col(StoredFlag.name).in_([n.value for n in names]))
            session.execute(statement)


# --- model flags -----------------------------------------------------------------------------


def model_finding(
    answer: str,
    agreeing: int,
    answered: int,
    item_key: str,
    kind: ItemKind,
    models: Sequence[str],
    runs: Sequence[int],
) -> FlagFinding:
    """The ``model-disagrees`` flag of models agreeing on ``answer`` against ``item_key``."""
    return FlagFinding(
        FlagName.MODEL_DISAGREES,
        f"{agreeing} of {answered} models answer {format_answer(kind, answer)}; the key is "
        f"{format_answer(kind, item_key)} ({', '.join(models)})",
        {
            "answer": answer,
            "key": item_key,
            "agreeing": agreeing,
            "answered": answered,
            "models": list(models),
            "runs": list(runs),
        },
    )


def _model_findings(session: Session) -> dict[tuple[str, int], FlagFinding]:
    findings: dict[tuple[str, int], FlagFinding] = {}
    for item in model_answers(session):
        consensus = item.wrong_consensus
        if consensus is None:
            continue
        answer, agreeing = consensus
        # Models agreeing with one another, and at least as many as all the others together.
        if len(agreeing) < MIN_AGREEING_MODELS or 2 * len(agreeing) < len(item.answers):
            continue
        findings[(item.item_id, item.revision)] = model_finding(
            answer,
            len(agreeing),
            len(item.answers),
            item.key,
            item.kind,
            [a.model for a in agreeing],
            sorted(a.run_id for a in agreeing),
        )
    return findings


def refresh_model_flags(session: Session) -> tuple[int, int]:
    """Bring the ``model-disagrees`` flags of source ``model`` in line with the evaluation
    runs; returns (added, removed)."""
    wanted = _model_findings(session)
    stored = stored_by_revision(session, FlagSource.MODEL)
    by_revision = {key: [finding] for key, finding in wanted.items()}
    return replace_changed(session, by_revision, stored, FlagSource.MODEL)


def stored_by_revision(
    session: Session, source: FlagSource, *, names: Sequence[FlagName] | None = None
) -> dict[tuple[str, int], list[tuple[str, str]]]:
    """Stored flags of one source on current revisions: (name, summary) per revision."""
    query = (
        select(
            col(StoredFlag.item_id),
            col(StoredFlag.revision_number),
            col(StoredFlag.name),
            col(StoredFlag.evidence),
        )
        .join(Item, col(Item.id) == col(StoredFlag.item_id))
        .where(
            col(StoredFlag.revision_number) == col(Item.current_revision),
            col(StoredFlag.source) == source.value,
        )
    )
    if names is not None:
        query = query.where(col(StoredFlag.name).in_([name.value for name in names]))
    stored: dict[tuple[str, int], list[tuple[str, str]]] = defaultdict(list)
    for item_id, revision, name, evidence in session.execute(query):
        stored[(item_id, revision)].append((name, str((evidence or {}).get("summary", ""))))
    return stored


def replace_changed(
    session: Session,
    wanted: dict[tuple[str, int], list[FlagFinding]],
    stored: dict[tuple[str, int], list[tuple[str, str]]],
    source: FlagSource,
    *,
    names: Sequence[FlagName] | None = None,
) -> tuple[int, int]:
    """Replace the stored flags of every revision whose flags differ from ``wanted``."""
    changed = [
        key
        for key in set(wanted) | set(stored)
        if sorted((f.name.value, f.summary) for f in wanted.get(key, []))
        != sorted(stored.get(key, []))
    ]
    removed = sum(len(stored.get(key, [])) for key in changed)
    stale = [key for key in changed if stored.get(key)]
    if stale:
        delete_flags(session, stale, names=names, source=source)
    now = utcnow()
    rows = [
        flag_row(item_id, revision, finding, source, now)
        for item_id, revision in changed
        for finding in wanted.get((item_id, revision), [])
    ]
    insert_flags(session, rows)
    return len(rows), removed

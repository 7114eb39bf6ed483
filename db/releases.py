"""Releases: frozen, named, hashed versions of the benchmark that runs and exports are pinned to.

A release freezes the current revision of every selected item.  Per item it keeps the
revision, the language, source reference, metadata and status it had (a metadata import
changes an item's without a revision), and a **content hash**: SHA-256 of the
canonical JSON of what was reviewed (prompt, choices in their order, key, explanation,
kind, language).  The **release hash** is SHA-256 of the canonical JSON list of
``[item id, content hash]`` pairs in item-id order, so it names exactly what is
evaluated, whatever the edit history behind it; an evaluation run's ad hoc item set is
hashed the same way (:func:`item_set_hash`), so a run on the same items as a release
carries the release's hash.

A release never changes.  Its items are written first and its row last, in one
transaction; once the row exists, triggers refuse items added to it and any UPDATE or
DELETE of either table, on SQLite and on PostgreSQL (where only leads may insert,
``db.privileges``).  Review figures at the time are computed by the review domain
(``reviewer.releases``) and stored with the release as JSON.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from sqlalchemy import Connection, Row, insert
from sqlmodel import Session, col, select

from db.audit import record_audit
from db.bulk_reads import id_chunks
from db.bytewise import bytewise
from db.decisions import in_force
from db.errors import VetbenchError
from db.items import ItemSnapshot, item_conditions, iter_items, snapshot
from db.json_types import JsonObject, JsonValue, attributes_json, fields_json
from db.kappa_paradox import DECIMALS, paradox_note
from db.models import (
    Decision,
    Item,
    ItemRevision,
    Person,
    Release,
    ReleaseItem,
    StoredFlag,
)
from db.people import require_lead
from db.rows import from_row
from db.validation import how_names_differ, same_name_key
from db.vocabulary import RELEASE_ACTION, DecisionReason, FlagName, ItemStatus, reason_word
from db.words import counted

__all__ = [
    "SQLITE_RELEASE_TRIGGERS",
    "ReleaseError",
    "ReleaseContents",
    "ReleaseInfo",
    "ReleaseMember",
    "ReleaseRequest",
    "backfill_item_sets",
    "VERIFICATION_KEYS",
    "Verification",
    "content_hash",
    "figure_rows",
    "get_release",
    "item_set_hash",
    "lift_release_item_guard",
    "list_releases",
    "previous_release",
    "protect_releases_on_sqlite",
    "release_items",
    "release_contents",
    "release_members",
    "snapshot_hash",
    "store_release",
    "tally",
    "verify_release",
]


class ReleaseError(VetbenchError, ValueError):
    """A release that cannot be made, found or used as asked; the message says why."""


def content_hash(
    *,
    kind: str,
    language: str,
    prompt: str,
    choices: Mapping[str, str],
    key: str,
    explanation: str | None,
) -> str:
    """SHA-256 of the canonical JSON of what a reviewer saw and judged."""
    canonical = {
        "kind": str(kind),
        "language": language,
        "prompt": prompt,
        "choices": [[label, text] for label, text in choices.items()],  # order matters
        "key": key,
        "explanation": explanation,
    }
    return _sha256(canonical)


def snapshot_hash(item: ItemSnapshot) -> str:
    """The content hash of an item at the revision it holds."""
    return content_hash(
        kind=item.kind,
        language=item.language,
        prompt=item.prompt,
        choices=item.choices,
        key=item.key,
        explanation=item.explanation,
    )


def item_set_hash(hashes: Iterable[tuple[str, str]]) -> str:
    """The hash of a set of items: ``(item id, content hash)`` pairs, taken in id order."""
    return _sha256([[item_id, digest] for item_id, digest in sorted(hashes)])


def _sha256(value: object) -> str:
    text = json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class ReleaseInfo:
    """A release as plain data (its items are read with :func:`release_members`)."""

    name: str
    hash: str
    note: str
    selection: JsonObject
    item_count: int
    figures: JsonObject
    created_by: str
    created_at: datetime

    def to_json(self) -> JsonObject:
        # The time in ISO form (json_value's is str()).
        data = fields_json(self, renamed={"item_count": "items"})
        return {**data, "created_at": self.created_at.isoformat()}


@dataclass(frozen=True)
class ReleaseMember:
    """One item of a release: the revision frozen, its hash, and what it was then."""

    item_id: str
    kind: str
    source: str
    revision: int
    content_hash: str
    language: str
    status: str


def _info(release: Release, creator: str) -> ReleaseInfo:
    # Copies of the JSON columns: the value never shares the row's dicts.
    selection, figures = dict(release.selection), dict(release.figures)
    return from_row(ReleaseInfo, release, selection=selection, figures=figures, created_by=creator)


def tally(counts: Mapping[str, object]) -> str:
    """Counts as people read them, in the order given: "3 cflue, 2 econlogicqa" ("none")."""
    return ", ".join(f"{n} {name}" for name, n in counts.items()) or "none"


def figure_rows(release: ReleaseInfo) -> list[tuple[str, str]]:
    """A release's stored review figures as (label, value) rows for people: what review
    they describe (every judged item of the release's kinds and sources, whatever its
    status, not only the released ones), its agreement and removals by reason, then the
    flags raised on the released items themselves."""
    figures = release.figures
    rows: list[tuple[str, str]] = []
    agreement = figures.get("agreement")
    if isinstance(agreement, dict):
        judged = (
            f"{counted(_count(agreement, 'judgments'), 'judgment')} of "
            f"{counted(_count(agreement, 'items_judged'), 'item')} by "
            f"{counted(_count(agreement, 'annotators'), 'annotator')}"
        )
        rows.append(("review behind it", f"{_review_scope(release.selection)}: {judged}"))
        alpha = _stored_figure(agreement, "krippendorff_alpha", "verdict")
        raw = _stored_figure(agreement, "percent_agreement", "verdict")
        shown = _figure_text(alpha)
        if isinstance(raw.get("value"), int | float):
            shown += f" (raw agreement {_figure_text(raw)})"
        rows.append(("Krippendorff's alpha, verdicts", shown))
        if (note := _stored_paradox(agreement)) is not None:
            rows.append(("how to read it", note))
    removed = figures.get("removed_by_reason")
    if isinstance(removed, dict):
        # Stored by the reasons' stored names; shown by their names for the kinds counted.
        selected = release.selection.get("kind")
        kinds = [str(kind) for kind in selected] if isinstance(selected, list) else []
        shown_removed = {reason_word(reason, kinds): n for reason, n in removed.items()}
        rows.append(("items the review rejected, by reason", tally(shown_removed)))
    flags = figures.get("flags")
    if isinstance(flags, dict):
        rows.append(("flags on the released items", tally({k: v for k, v in flags.items() if v})))
    return rows


def _stored_figure(agreement: Mapping[str, object], statistic: str, coding: str) -> JsonObject:
    """One stored agreement figure (``value``, ``ci95``, ``n``); empty where none is."""
    by_coding = agreement.get(statistic)
    figure = by_coding.get(coding) if isinstance(by_coding, dict) else None
    return figure if isinstance(figure, dict) else {}


def _figure_text(figure: Mapping[str, object]) -> str:
    """``-0.067 [-0.122, -0.030]`` as the agreement report shows a figure (``undefined``
    without a value)."""
    value, ci95 = figure.get("value"), figure.get("ci95")
    if not isinstance(value, int | float):
        return "undefined"
    if isinstance(ci95, list) and len(ci95) == 2 and all(isinstance(b, int | float) for b in ci95):
        return f"{value:.{DECIMALS}f} [{ci95[0]:.{DECIMALS}f}, {ci95[1]:.{DECIMALS}f}]"
    return f"{value:.{DECIMALS}f}"


def _stored_paradox(agreement: Mapping[str, object]) -> str | None:
    """The agreement report's kappa-paradox note (:mod:`db.kappa_paradox`), from the stored
    figures: their raw agreement beside alpha and Fleiss' kappa, for verdicts and for
    keep/drop (the keep rates that say who kept everything are not stored)."""

    def number(statistic: str, coding: str) -> float | None:
        value = _stored_figure(agreement, statistic, coding).get("value")
        return float(value) if isinstance(value, int | float) else None

    codings = [
        (
            name,
            number("percent_agreement", coding),
            (
                ("alpha", number("krippendorff_alpha", coding)),
                ("Fleiss' kappa", number("fleiss_kappa", coding)),
            ),
        )
        for name, coding in (("verdicts", "verdict"), ("keep/drop", "verdict_keep_drop"))
    ]
    return paradox_note(codings)


def _count(figures: Mapping[str, object], name: str) -> int:
    value = figures.get(name, 0)
    return value if isinstance(value, int) else 0


def _review_scope(selection: Mapping[str, object]) -> str:
    """``ordering items from econ, whatever their status``: the items a release's review
    figures were computed over (its kinds and sources; its statuses do not narrow them)."""
    kinds, sources = selection.get("kind"), selection.get("source")
    what = (
        f"{' and '.join(map(str, kinds))} items"
        if isinstance(kinds, list) and kinds
        else "items of every kind"
    )
    if isinstance(sources, list) and sources:
        what += f" from {', '.join(map(str, sources))}"
    return f"{what}, whatever their status"


def list_releases(session: Session) -> list[ReleaseInfo]:
    """Every release, oldest first."""
    rows = session.exec(
        select(Release, Person.name)
        .join(Person, col(Person.id) == col(Release.created_by_id))
        .order_by(col(Release.created_at), col(Release.name))
    )
    return [_info(release, creator) for release, creator in rows]


def get_release(session: Session, name: str) -> ReleaseInfo:
    """The release called ``name``; a :class:`ReleaseError` naming the known ones otherwise."""
    row = session.exec(
        select(Release, Person.name)
        .join(Person, col(Person.id) == col(Release.created_by_id))
        .where(col(Release.name) == name)
    ).first()
    if row is None:
        known = [release.name for release in list_releases(session)]
        listed = ", ".join(known) if known else "none yet: `vetbench release create NAME`"
        raise ReleaseError(f"no release named '{name}' (releases: {listed})")
    return _info(*row)


def previous_release(session: Session, name: str) -> ReleaseInfo | None:
    """The release made just before ``name`` (the one its changelog is written against)."""
    releases = list_releases(session)
    names = [release.name for release in releases]
    index = names.index(name)
    return releases[index - 1] if index > 0 else None


def release_members(session: Session, name: str) -> list[ReleaseMember]:
    """The release's items in id order (the order of the release hash)."""
    rows = session.execute(
        select(ReleaseItem, Item.kind, Item.source)
        .join(Item, col(Item.id) == col(ReleaseItem.item_id))
        .where(col(ReleaseItem.release_name) == name)
        .order_by(bytewise(col(ReleaseItem.item_id)))
    )
    return [
        from_row(ReleaseMember, member, kind=kind, source=source, revision=member.revision_number)
        for member, kind, source in rows
    ]


@dataclass(frozen=True)
class ReleaseContents:
    """A release with its items: what ``release show`` prints."""

    release: ReleaseInfo
    members: list[ReleaseMember]

    @property
    def by_kind(self) -> dict[str, int]:
        return dict(Counter(member.kind for member in self.members))

    @property
    def by_source(self) -> dict[str, int]:
        return dict(Counter(member.source for member in self.members))

    def to_json(self) -> JsonObject:
        """The release, its items by kind and by source, and each item's revision and hash."""
        names = ("item_id", "revision", "content_hash")
        ids: list[JsonValue] = [
            attributes_json(m, *names, renamed={"item_id": "id"}) for m in self.members
        ]
        return {
            **self.release.to_json(),
            **attributes_json(self, "by_kind", "by_source"),
            "item_ids": ids,
        }


def release_contents(session: Session, name: str) -> ReleaseContents:
    """The release called ``name`` and its items (a :class:`ReleaseError` if there is none)."""
    return ReleaseContents(get_release(session, name), release_members(session, name))


def release_items(
    session: Session,
    name: str,
    *,
    kinds: Sequence[str] = (),
    sources: Sequence[str] = (),
) -> list[ItemSnapshot]:
    """The release's items exactly as frozen (revision, language, source reference,
    metadata, status), in id order, whatever was edited, imported or decided since, and
    without a duplicate link (a release freezes none); ``kinds`` (the kinds they were
    frozen in) and ``sources`` narrow them."""
    get_release(session, name)
    # The kind it was frozen in (its revision's), not the one an edit gave the item since.
    frozen_kind = [col(ItemRevision.kind).in_(list(kinds))] if kinds else []
    query = (
        select(Item, ItemRevision, ReleaseItem)
        .join(ReleaseItem, col(ReleaseItem.item_id) == col(Item.id))
        .join(
            ItemRevision,
            (col(ItemRevision.item_id) == col(Item.id))
            & (col(ItemRevision.number) == col(ReleaseItem.revision_number)),
        )
        .where(col(ReleaseItem.release_name) == name)
        .where(*item_conditions(sources=sources), *frozen_kind)
        .order_by(bytewise(col(ReleaseItem.item_id)))
    )
    return [
        replace(
            snapshot(item, revision),
            language=member.language,
            source_ref=member.source_ref,
            meta=dict(member.meta),
            status=member.status,
            # A review finding about the items' texts now, not part of what was released.
            suspected_duplicate_of=None,
            duplicate_similarity=None,
        )
        for item, revision, member in session.exec(query)
    ]


@dataclass(frozen=True)
class ReleaseRequest:
    """A release asked for: its name and note, and the items it freezes (their statuses,
    kinds and sources; an empty tuple means any)."""

    name: str
    statuses: tuple[str, ...] = (ItemStatus.APPROVED.value,)
    kinds: tuple[str, ...] = ()
    sources: tuple[str, ...] = ()
    note: str = ""


def store_release(
    session: Session, request: ReleaseRequest, *, lead: str, figures: JsonObject | None = None
) -> ReleaseInfo:
    """Freeze the current revision of every item ``request`` selects as a release and audit
    it (the caller commits).  Leads only; refuses a name in use and an empty selection.
    ``figures`` (the agreement) are stored with the flags and removals counted here."""
    creator = require_lead(session, lead, to="create releases")
    statuses, kinds, sources, note = (
        request.statuses,
        request.kinds,
        request.sources,
        request.note,
    )
    name = request.name.strip()
    if not name or len(name) > 255 or any(not ch.isprintable() for ch in name):
        raise ReleaseError("a release name is printable text on one line, 1-255 characters")
    if session.get(Release, name) is not None:
        raise ReleaseError(f"a release named '{name}' exists already; a release never changes")
    _refuse_look_alike(session, name)
    items = list(iter_items(session, statuses=statuses, kinds=kinds, sources=sources))
    if not items:
        raise ReleaseError(
            f"no items to release ({_describe(statuses, kinds, sources)}); "
            "`vetbench stats` shows what the database holds"
        )
    hashes = {item.id: snapshot_hash(item) for item in items}
    digest = item_set_hash(hashes.items())
    # The items first, the release row last: the triggers refuse items added after it.
    session.execute(
        insert(ReleaseItem),
        [
            {
                "release_name": name,
                "item_id": item.id,
                "revision_number": item.revision,
                "content_hash": hashes[item.id],
                "language": item.language,
                "source_ref": item.source_ref,
                "meta": item.meta,
                "status": item.status,
            }
            for item in items
        ],
    )
    selection: JsonObject = {
        "status": list(statuses),
        "kind": list(kinds),
        "source": list(sources),
    }
    release = Release(
        name=name,
        hash=digest,
        note=note,
        selection=selection,
        item_count=len(items),
        figures={
            **(figures or {}),
            "flags": _flag_counts(session, items),
            "removed_by_reason": _removals(session, kinds, sources),
        },
        created_by_id=creator.id or 0,
    )
    session.add(release)
    session.flush()
    by_kind = Counter(item.kind.value for item in items)
    record_audit(
        session,
        creator.name,
        RELEASE_ACTION,
        name,
        hash=digest,
        items=len(items),
        by_kind=dict(sorted(by_kind.items())),
        selection=selection,
        note=note,
    )
    return _info(release, creator.name)


def _refuse_look_alike(session: Session, name: str) -> None:
    """A name that reads as an existing release's (``V1`` beside ``v1``, full-width ``ｖ1``)
    is refused: a paper citing either would name both (``db.validation.same_name_key``)."""
    key = same_name_key(name)
    for existing in session.exec(select(Release.name)):
        if same_name_key(existing) == key:
            raise ReleaseError(
                f"'{name}' differs only in {how_names_differ(name, existing)} from release "
                f"'{existing}', which exists already: a citation of one would read as the "
                "other; choose another name"
            )


def _flag_counts(session: Session, items: Sequence[ItemSnapshot]) -> JsonObject:
    """How many of the items carry each flag at the revision frozen (0 included)."""
    frozen = {(item.id, item.revision) for item in items}
    counts: Counter[str] = Counter()
    for ids in id_chunks([item.id for item in items]):
        rows = session.execute(
            select(StoredFlag.item_id, StoredFlag.revision_number, StoredFlag.name)
            .where(col(StoredFlag.item_id).in_(ids))
            .distinct()
        )
        for item_id, revision, flag in rows:
            if (item_id, revision) in frozen:
                counts[flag] += 1
    return {name.value: counts.get(name.value, 0) for name in FlagName}


def _removals(session: Session, kinds: Sequence[str], sources: Sequence[str]) -> JsonObject:
    """Rejected items of the release's kinds and sources, by the reason of their decision
    (whichever statuses the release takes)."""
    latest: dict[str, str] = {}
    rows = session.execute(
        select(Decision.item_id, Decision.reason)
        .join(Item, col(Item.id) == col(Decision.item_id))
        .where(in_force(), col(Item.status) == ItemStatus.REJECTED)
        .where(*item_conditions(kinds=kinds, sources=sources))
        .order_by(col(Decision.created_at), col(Decision.id))
    )
    for item_id, reason in rows:
        latest[item_id] = reason or DecisionReason.OTHER.value
    return dict(sorted(Counter(latest.values()).items()))


def _describe(statuses: Sequence[str], kinds: Sequence[str], sources: Sequence[str]) -> str:
    parts = [f"status {', '.join(statuses)}" if statuses else "any status"]
    if kinds:
        parts.append(f"kind {', '.join(kinds)}")
    if sources:
        parts.append(f"source {', '.join(sources)}")
    return ", ".join(parts)


VERIFICATION_KEYS: Mapping[str, str] = {"name": "release", "stored_hash": "hash"}
"""The JSON names of a release check's fields (a folder's check too) that differ."""


@dataclass(frozen=True)
class Verification:
    """What :func:`verify_release` found: the stored and recomputed hashes, and every
    item whose stored revision no longer gives its recorded content hash."""

    name: str
    stored_hash: str
    recomputed_hash: str
    items: int
    expected_items: int
    differences: list[str]

    @property
    def ok(self) -> bool:
        return not self.differences and self.stored_hash == self.recomputed_hash

    def to_json(self) -> JsonObject:
        names = ("name", "ok", "stored_hash", "recomputed_hash", "items", "expected_items")
        return attributes_json(self, *names, "differences", renamed=VERIFICATION_KEYS)


def verify_release(session: Session, name: str) -> Verification:
    """Recompute every item's content hash from its stored revision, and the release hash."""
    release = get_release(session, name)
    members = {member.item_id: member for member in release_members(session, name)}
    found = {item.id: item for item in release_items(session, name)}
    differences = []
    recomputed: list[tuple[str, str]] = []
    for item_id, member in members.items():
        item = found.get(item_id)
        if item is None:
            differences.append(f"{item_id}: revision {member.revision} is missing")
            continue
        digest = snapshot_hash(item)
        recomputed.append((item_id, digest))
        if digest != member.content_hash:
            differences.append(
                f"{item_id}: revision {member.revision} hashes to {digest[:12]}, "
                f"recorded {member.content_hash[:12]}"
            )
    if len(members) != release.item_count:
        differences.append(
            f"{counted(len(members), 'item')} stored, the release says {release.item_count}"
        )
    return Verification(
        name=name,
        stored_hash=release.hash,
        recomputed_hash=item_set_hash(recomputed),
        items=len(members),
        expected_items=release.item_count,
        differences=differences,
    )


def _column_json(value: Any) -> Any:
    """A JSON column read with plain SQL: text on SQLite, decoded already on PostgreSQL."""
    return json.loads(value) if isinstance(value, str) else value


def backfill_item_sets(connection: Connection) -> int:
    """Give every run that has none the hash of the items it evaluated (migration 0008):
    each item at the revision its prediction answered, else the one the run recorded,
    else its current one.  Returns how many runs got one."""
    from sqlalchemy import text

    items = {
        row.id: row
        for row in connection.execute(text("SELECT id, kind, language, current_revision FROM item"))
    }
    # Runs mostly evaluate the same items: each revision is read and hashed once.
    digests: dict[tuple[str, int], str | None] = {}

    def revision_hash(item: Row[Any], number: int) -> str | None:
        if (item.id, number) not in digests:
            revision = connection.execute(
                text(
                    "SELECT prompt, choices, key, explanation FROM item_revision "
                    "WHERE item_id = :item AND number = :number"
                ),
                {"item": item.id, "number": number},
            ).first()
            digests[item.id, number] = None
            if revision is not None:
                digests[item.id, number] = content_hash(
                    kind=item.kind,
                    language=item.language,
                    prompt=revision.prompt,
                    choices=_column_json(revision.choices),
                    key=revision.key,
                    explanation=revision.explanation,
                )
        return digests[item.id, number]

    runs = connection.execute(
        text("SELECT id, item_ids, params FROM eval_run WHERE item_set_hash IS NULL")
    ).all()
    for run_id, item_ids, params in runs:
        ids = list(_column_json(item_ids) or [])
        recorded = (_column_json(params) or {}).get("revisions")
        revisions = {
            item_id: number
            for item_id, number in connection.execute(
                text("SELECT item_id, revision_number FROM prediction WHERE run_id = :run"),
                {"run": run_id},
            )
        }
        pairs = []
        for item_id in ids:
            item = items.get(item_id)
            if item is None:
                continue
            number = revisions.get(item_id) or (recorded or {}).get(item_id)
            digest = revision_hash(item, number or item.current_revision)
            if digest is not None:
                pairs.append((item_id, digest))
        connection.execute(
            text("UPDATE eval_run SET item_set_hash = :digest WHERE id = :run"),
            {"digest": item_set_hash(pairs), "run": run_id},
        )
    return len(runs)


_FROZEN = "a release never changes"
SQLITE_RELEASE_TRIGGERS: dict[str, str] = {
    **{
        f"{table}_no_{operation.lower()}": f"CREATE TRIGGER IF NOT EXISTS "
        f"{table}_no_{operation.lower()} BEFORE {operation} ON {table} BEGIN SELECT "
        f"RAISE(ABORT, '{_FROZEN}: {operation} on {table} refused'); END"
        for table in ("release", "release_item")
        for operation in ("UPDATE", "DELETE")
    },
    "release_item_sealed": "CREATE TRIGGER IF NOT EXISTS release_item_sealed BEFORE INSERT "
    "ON release_item WHEN EXISTS (SELECT 1 FROM release WHERE name = NEW.release_name) "
    f"BEGIN SELECT RAISE(ABORT, '{_FROZEN}: no item may be added to a made release'); END",
    "release_complete": "CREATE TRIGGER IF NOT EXISTS release_complete BEFORE INSERT ON "
    "release WHEN NEW.item_count != (SELECT count(*) FROM release_item "
    "WHERE release_name = NEW.name) "
    "BEGIN SELECT RAISE(ABORT, 'a release is stored after all of its items'); END",
}
"""SQLite's guard of releases (PostgreSQL's are in ``db.privileges``): trigger name ->
its CREATE statement.  A migration that rebuilds ``release`` or ``release_item`` in batch
mode must create these again; ``vetbench init`` puts back any that were dropped."""


def lift_release_item_guard(connection: Connection, operation: str) -> None:
    """Drop the trigger that refuses ``operation`` (``UPDATE`` or ``DELETE``) on
    ``release_item``, for a migration that must change rows made before it; the migration
    creates it again right after (:func:`protect_releases_on_sqlite`,
    ``db.privileges.apply_privileges``)."""
    if connection.dialect.name == "sqlite":
        connection.exec_driver_sql(f"DROP TRIGGER IF EXISTS release_item_no_{operation.lower()}")
    else:  # one trigger refuses both on PostgreSQL
        connection.exec_driver_sql("DROP TRIGGER IF EXISTS release_item_frozen ON release_item")


def protect_releases_on_sqlite(connection: Connection) -> None:
    """Create :data:`SQLITE_RELEASE_TRIGGERS` (a no-op on other databases)."""
    if connection.dialect.name == "sqlite":
        for statement in SQLITE_RELEASE_TRIGGERS.values():
            connection.exec_driver_sql(statement)

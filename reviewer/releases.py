"""Releases, as the review domain sees them: made with the review figures of the day, and
compared with each other, each difference with its reason.

Storage, hashes and verification are ``db.releases``; this module adds what needs the
agreement statistics and the review history: :func:`create_release` stores the
agreement figures with the release, :func:`diff_releases` says for every item added,
removed or changed between two releases why (the decision and its reason, the edits as
a text diff, the key change), and :func:`changelog_markdown` writes it for a changelog.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from sqlalchemy.exc import IntegrityError
from sqlmodel import Session, col, select

from db.answers import format_answer
from db.engine import Database
from db.item_scope import ItemScope
from db.items import id_order
from db.json_types import JsonObject, JsonValue, fields_json
from db.models import Decision, Item, ItemRevision, Person
from db.people import require_lead
from db.releases import (
    ReleaseError,
    ReleaseInfo,
    ReleaseRequest,
    get_release,
    previous_release,
    release_members,
    store_release,
)
from db.vocabulary import reason_word
from db.words import counted
from reviewer.revisions import diff_revisions, revision_summary

__all__ = [
    "Change",
    "ReleaseDiff",
    "changelog_against_previous",
    "changelog_markdown",
    "create_release",
    "diff_releases",
]


def create_release(db: Database, request: ReleaseRequest, *, lead: str) -> ReleaseInfo:
    """Freeze the items ``request`` selects as a release (leads only), with the agreement of
    the judgments on items of its kinds and sources stored beside the flags and removals."""
    from reviewer.agreement.summary import compute_agreement, figures_json

    with db.session() as session:  # refused before the figures are computed
        require_lead(session, lead, to="create releases")
    agreement = compute_agreement(db, ItemScope.of(request.kinds, request.sources))
    try:
        with db.transaction() as session:
            return store_release(
                session,
                request,
                lead=lead,
                figures={"agreement": figures_json(agreement.figures)},
            )
    except IntegrityError:  # the same name, made by someone else meanwhile
        raise ReleaseError(
            f"a release named '{request.name.strip()}' was made meanwhile; a release never changes"
        ) from None


@dataclass(frozen=True)
class Change:
    """One item that differs between two releases, and why."""

    item_id: str
    kind: str
    source: str
    change: str  # "added", "removed" or "changed"
    old_revision: int | None
    new_revision: int | None
    reasons: list[str] = field(default_factory=list)  # one sentence each: decisions, edits
    key_change: tuple[str, str] | None = None  # (old key, new key) as people read them
    text_diff: list[str] = field(default_factory=list)  # unified diff lines

    def to_json(self) -> JsonObject:
        keys: JsonValue = None
        if self.key_change is not None:
            keys = {"old": self.key_change[0], "new": self.key_change[1]}
        return {**fields_json(self, renamed={"text_diff": "diff"}), "key_change": keys}


@dataclass(frozen=True)
class ReleaseDiff:
    old: ReleaseInfo
    new: ReleaseInfo
    changes: list[Change]
    unchanged: int

    def of(self, change: str) -> list[Change]:
        return [entry for entry in self.changes if entry.change == change]

    def to_json(self) -> JsonObject:
        changes: list[JsonValue] = [entry.to_json() for entry in self.changes]
        return {
            "old": {"name": self.old.name, "hash": self.old.hash, "items": self.old.item_count},
            "new": {"name": self.new.name, "hash": self.new.hash, "items": self.new.item_count},
            "added": len(self.of("added")),
            "removed": len(self.of("removed")),
            "changed": len(self.of("changed")),
            "unchanged": self.unchanged,
            "changes": changes,
        }


def _decision_sentence(decision: Decision, lead: str, kind: str) -> str:
    verb = "approved" if decision.status == "approved" else "rejected"
    reason = f" ({reason_word(decision.reason, kind)})" if decision.reason else ""
    comment = f": {decision.comment}" if decision.comment else ""
    undone = " (since undone)" if decision.retracted_at is not None else ""
    key = f", key {format_answer(kind, decision.final_key)}" if decision.final_key else ""
    return (
        f"{verb}{reason} by {lead} on {decision.created_at:%Y-%m-%d}, revision "
        f"{decision.revision_number}{key}{comment}{undone}"
    )


def _decisions_between(
    session: Session, item_id: str, kind: str, start: datetime | None, end: datetime
) -> list[str]:
    query = (
        select(Decision, Person.name)
        .join(Person, col(Person.id) == col(Decision.lead_id))
        .where(col(Decision.item_id) == item_id, col(Decision.created_at) <= end)
        .order_by(col(Decision.created_at), col(Decision.id))
    )
    if start is not None:
        query = query.where(col(Decision.created_at) > start)
    rows = list(session.exec(query))
    if start is None and rows:  # an item new in the release: the decision that admitted it
        rows = rows[-1:]
    return [_decision_sentence(decision, lead, kind) for decision, lead in rows]


def _revisions(session: Session, item_id: str) -> dict[int, ItemRevision]:
    rows = session.exec(select(ItemRevision).where(col(ItemRevision.item_id) == item_id))
    return {row.number: row for row in rows}


def _edit_sentences(revisions: dict[int, ItemRevision], after: int, upto: int) -> list[str]:
    return [
        f"revision {number} by {revisions[number].author}: {revisions[number].change_note}"
        for number in range(after + 1, upto + 1)
        if number in revisions
    ]


def diff_releases(session: Session, old_name: str, new_name: str) -> ReleaseDiff:
    """Every item added, removed or changed from release ``old_name`` to ``new_name``."""
    old, new = get_release(session, old_name), get_release(session, new_name)
    before = {member.item_id: member for member in release_members(session, old_name)}
    after = {member.item_id: member for member in release_members(session, new_name)}
    changes: list[Change] = []
    unchanged = 0
    start, end = min(old.created_at, new.created_at), max(old.created_at, new.created_at)
    for item_id in sorted(before.keys() | after.keys(), key=id_order):
        was, now = before.get(item_id), after.get(item_id)
        member = now or was
        assert member is not None
        if was is not None and now is not None and was.content_hash == now.content_hash:
            unchanged += 1
            continue
        revisions = _revisions(session, item_id)
        reasons = _decisions_between(session, item_id, member.kind, start, end)
        if was is None:
            assert now is not None
            item = session.get(Item, item_id)
            created = item.created_at if item is not None else None
            if created is not None and created > start:
                reasons.insert(0, f"new since {old.name}: {revisions[1].change_note}")
            changes.append(
                Change(item_id, member.kind, member.source, "added", None, now.revision, reasons)
            )
            continue
        if now is None:
            current = session.get(Item, item_id)
            newest = max(revisions)
            reasons += _edit_sentences(revisions, was.revision, newest)
            if not reasons and current is not None:
                reasons.append(f"status now {current.status}")
            changes.append(
                Change(item_id, member.kind, member.source, "removed", was.revision, None, reasons)
            )
            continue
        old_revision, new_revision = revisions[was.revision], revisions[now.revision]
        key_change = (
            (
                format_answer(old_revision.kind, old_revision.key),
                format_answer(new_revision.kind, new_revision.key),
            )
            if old_revision.key != new_revision.key
            else None
        )
        diff = [
            line.text
            for line in diff_revisions(
                revision_summary(old_revision), revision_summary(new_revision)
            )
        ]
        reasons = _edit_sentences(revisions, was.revision, now.revision) + reasons
        if was.language != now.language:
            reasons.append(f"language {was.language} -> {now.language}")
        changes.append(
            Change(
                item_id,
                member.kind,
                member.source,
                "changed",
                was.revision,
                now.revision,
                reasons,
                key_change,
                diff,
            )
        )
    return ReleaseDiff(old=old, new=new, changes=changes, unchanged=unchanged)


def changelog_against_previous(db: Database, name: str) -> str | None:
    """Release ``name``'s changelog (Markdown) against the release made before it; None
    for the first release.  An unknown name is a ``ReleaseError``."""
    with db.session() as session:
        get_release(session, name)
        previous = previous_release(session, name)
        if previous is None:
            return None
        return changelog_markdown(diff_releases(session, previous.name, name))


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def changelog_markdown(diff: ReleaseDiff) -> str:
    """The differences as a Markdown changelog section."""
    added, removed, changed = diff.of("added"), diff.of("removed"), diff.of("changed")
    lines = [
        f"## {diff.new.name} (from {diff.old.name})",
        "",
        f"- release hash `{diff.new.hash}` ({counted(diff.new.item_count, 'item')}); "
        f"{diff.old.name}: `{diff.old.hash}` ({counted(diff.old.item_count, 'item')})",
        f"- {len(added)} added, {len(removed)} removed, {len(changed)} changed, "
        f"{diff.unchanged} unchanged",
    ]
    for title, entries in (("Added", added), ("Removed", removed)):
        if entries:
            lines += [
                "",
                f"### {title}",
                "",
                "| item | kind | revision | why |",
                "|---|---|---|---|",
            ]
            lines += [
                f"| `{_cell(entry.item_id)}` | {entry.kind} | "
                f"{entry.new_revision or entry.old_revision} | "
                f"{_cell('; '.join(entry.reasons) or '—')} |"
                for entry in entries
            ]
    if changed:
        lines += ["", "### Changed"]
        for entry in changed:
            lines += [
                "",
                f"#### `{entry.item_id}` ({entry.kind}): revision {entry.old_revision} -> "
                f"{entry.new_revision}",
                "",
            ]
            if entry.key_change is not None:
                lines.append(f"- key: {entry.key_change[0]} -> {entry.key_change[1]}")
            lines += [f"- {reason}" for reason in entry.reasons]
            if entry.text_diff:
                lines += ["", "```diff", *entry.text_diff, "```"]
    return "\n".join(lines) + "\n"

"""Who may do what with each table of a team (PostgreSQL) database: the declaration.

Each table's privileges are declared once, in :data:`TABLES`: the grants to the
``vetbench_annotator`` group (every person) and to ``vetbench_lead``, and the row-level
security policies that admit rows.  ``db.privileges`` turns the declaration into
idempotent SQL and applies it; ``tests/test_privileges.py`` checks that every table has
an entry.  A migration that adds a table adds its entry here.
"""

from __future__ import annotations

from dataclasses import dataclass

from db.vocabulary import GOLD_ADD_ACTION, LEAD_AUDIT_ACTIONS, REGISTER_ACTION, Role

__all__ = [
    "ANNOTATOR_GROUP",
    "GROUP_OF_ROLE",
    "LEAD_GROUP",
    "TABLES",
    "Policy",
    "TablePrivileges",
]

ANNOTATOR_GROUP = "vetbench_annotator"
LEAD_GROUP = "vetbench_lead"
GROUP_OF_ROLE: dict[Role, str] = {Role.ANNOTATOR: ANNOTATOR_GROUP, Role.LEAD: LEAD_GROUP}


@dataclass(frozen=True)
class Policy:
    """One row-level security policy: which rows a command may see (``using``) or write
    (``check``).  ``to`` is a group role; table owners and superusers bypass policies."""

    name: str
    command: str  # SELECT, INSERT, UPDATE, DELETE or ALL
    using: str | None = None
    check: str | None = None
    to: str = ANNOTATOR_GROUP
    # columns a later migration added ("table.column" for another table's; see _applicable)
    requires: tuple[str, ...] = ()
    # columns whose coming made this policy obsolete: it stands only at a revision before
    # them (one a downgrade returns to), and is dropped wherever they are
    unless: tuple[str, ...] = ()


@dataclass(frozen=True)
class TablePrivileges:
    """What members may do with one table.

    ``members`` are granted to ``vetbench_annotator`` (leads inherit them), ``leads``
    to ``vetbench_lead`` only.  Entries are GRANT privileges, column lists allowed:
    ``"UPDATE (status, current_revision)"``.  With ``policies``, row-level security is
    enabled and only rows a policy admits can be read or written by members.
    """

    table: str
    members: tuple[str, ...] = ("SELECT",)
    leads: tuple[str, ...] = ()
    policies: tuple[Policy, ...] = ()


_READ_ALL = Policy("members_read", "SELECT", using="true")


def _update_own(name: str, person_column: str) -> Policy:
    """Updates of rows in one's own name only, which stay in one's own name."""
    own = f"{person_column} = vetbench_session_person_id()"
    return Policy(name, "UPDATE", using=own, check=own)


_OWN_ROLE = "db_role = session_user"
"""A row the logged-in role wrote (the server stamps ``db_role``: db.guards)."""

_OWN_RUN = f"run_id IN (SELECT id FROM eval_run WHERE {_OWN_ROLE})"
_RUN_OWNER = ("eval_run.db_role",)

TABLES: tuple[TablePrivileges, ...] = (
    TablePrivileges("alembic_version"),
    # Anyone may import or generate items and edit them (an edit is a new revision, and
    # the importer updates links and extras; an edit may change the kind, which follows
    # the current revision's: db.guards), never change an item's source;
    # the status column is a cache every judgment refreshes, but only leads move an
    # item into or out of approved/rejected (trigger item_decided_status_guard), and
    # only while a decision says so; revisions are appended in one's own name and
    # current_revision moves only to the newest (db.guards); metadata and the duplicate
    # link change only with the audit event of what changed them (db.guards).
    TablePrivileges(
        "item",
        members=(
            "SELECT",
            "INSERT",
            "UPDATE (status, current_revision, kind, suspected_duplicate_of, "
            "duplicate_similarity, meta, source_ref, language)",
        ),
    ),
    TablePrivileges("item_revision", members=("SELECT", "INSERT")),
    # Flags come with every new revision (imports, edits, generation) and from
    # `vetbench check`, so anyone adds them (well-formed: db.guards); only leads
    # remove stale ones (`vetbench flags recompute`).  Migration 0005_item_flags.
    TablePrivileges("item_flag", members=("SELECT", "INSERT"), leads=("DELETE",)),
    # A person may register only themselves, and as a lead only when their role is one;
    # leads let someone who failed the qualification try again (db.qualification).
    TablePrivileges(
        "person",
        members=("SELECT", "INSERT"),
        leads=("UPDATE (calibration_reset_after)",),
        policies=(
            _READ_ALL,
            Policy(
                "requalify_as_lead",
                "UPDATE",
                using="true",
                check="true",
                to=LEAD_GROUP,
                requires=("calibration_reset_after",),
            ),
            Policy(
                "register_self",
                "INSERT",
                check=f"name = session_user AND (role = '{Role.ANNOTATOR.value}' "
                "OR vetbench_session_is_lead())",
            ),
        ),
    ),
    # Judgments only in one's own name; undo (retracted) only of one's own, and an undo
    # is never taken back (a new judgment is given instead; migration 0015); it is
    # dated by the server and comes with its audit event (db.guards, migration 0017).  Another
    # annotator's calibration judgment (of a gold item) is for leads only: its blind
    # answer beside the public outcome (vetbench_calibration_outcomes) told the known
    # answer (migration 0016).  A judgment holds vetbench's values, one in force per
    # person and revision, with its "judge" event (db.review_guards, migration 0023).
    TablePrivileges(
        "judgment",
        members=("SELECT", "INSERT", "UPDATE (retracted, retracted_at)"),
        policies=(
            Policy(
                "read_judgments_but_others_calibration",
                "SELECT",
                using="gold_id IS NULL OR annotator_id = vetbench_session_person_id() "
                "OR vetbench_session_is_lead()",
                requires=("gold_id",),
            ),
            # Before 0006 there was no calibration judgment to hide: every one was read.
            Policy("members_read", "SELECT", using="true", unless=("gold_id",)),
            Policy("judge_as_self", "INSERT", check="annotator_id = vetbench_session_person_id()"),
            Policy(
                "retract_own",
                "UPDATE",
                using="annotator_id = vetbench_session_person_id()",
                check="annotator_id = vetbench_session_person_id() AND retracted",
            ),
        ),
    ),
    # Decisions by leads only, each in the deciding lead's own name; a lead may undo
    # (retract) only their own decisions, once, dated by the server, with the audit
    # event, and the item's status following (db.guards, migration 0017).
    TablePrivileges(
        "decision",
        leads=("INSERT", "UPDATE (retracted_at, retracted_by_id)"),
        policies=(
            _READ_ALL,
            Policy(
                "decide_as_self",
                "INSERT",
                check="lead_id = vetbench_session_person_id()",
                to=LEAD_GROUP,
            ),
            Policy(
                "undo_own_decision",
                "UPDATE",
                using="lead_id = vetbench_session_person_id()",
                check="lead_id = vetbench_session_person_id() "
                "AND retracted_by_id = vetbench_session_person_id()",
                to=LEAD_GROUP,
                requires=("retracted_by_id",),
            ),
        ),
    ),
    # Guidelines and gold items: leads write them, in their own name; everyone reads
    # the guidelines (the review app shows them and mixes gold items into queues).
    TablePrivileges(
        "guidelines",
        leads=("INSERT",),
        policies=(
            _READ_ALL,
            Policy(
                "write_guidelines_as_self",
                "INSERT",
                check="author_id = vetbench_session_person_id()",
                to=LEAD_GROUP,
            ),
        ),
    ),
    # Annotators see which revisions are gold (the queue serves them), never the known
    # verdict, answer or note: vetbench_gold_known tells them after they judged one.
    TablePrivileges(
        "gold_item",
        members=(
            "SELECT (id, item_id, revision_number, lead_id, created_at, removed_at, removed_by_id)",
        ),
        leads=("SELECT", "INSERT", "UPDATE (removed_at, removed_by_id)"),
        policies=(
            _READ_ALL,
            Policy(
                "mark_gold_as_self",
                "INSERT",
                check="lead_id = vetbench_session_person_id()",
                to=LEAD_GROUP,
            ),
            Policy(
                "remove_gold_as_self",
                "UPDATE",
                using="true",
                check="removed_by_id = vetbench_session_person_id()",
                to=LEAD_GROUP,
            ),
        ),
    ),
    # Releases: leads make them, in their own name; everyone reads them.  Nobody updates
    # or deletes one, the owner included (triggers release_frozen, release_item_frozen);
    # items are added only before their release row (release_item_sealed), by the
    # transaction that writes it (release_item_with_release, migration 0023).
    TablePrivileges(
        "release",
        leads=("INSERT",),
        policies=(
            _READ_ALL,
            Policy(
                "release_as_self",
                "INSERT",
                check="created_by_id = vetbench_session_person_id()",
                to=LEAD_GROUP,
            ),
        ),
    ),
    TablePrivileges("release_item", leads=("INSERT",)),
    # The search index is written by triggers that run as the owner (db.search).
    TablePrivileges("item_search"),
    TablePrivileges(
        "claim",
        members=("SELECT", "INSERT", "UPDATE (claimed_at)", "DELETE"),
        policies=(
            _READ_ALL,
            Policy("claim_as_self", "INSERT", check="person_id = vetbench_session_person_id()"),
            _update_own("renew_own_claim", "person_id"),
            Policy("release_own_claim", "DELETE", using="person_id = vetbench_session_person_id()"),
        ),
    ),
    # The keys each person saw before judging (db.reveals): their own rows only, read and
    # added; nobody changes or removes one, its owner included, so the blind answer given
    # before the key stays the one a later judgment stores (migration 0020).
    TablePrivileges(
        "key_reveal",
        members=("SELECT", "INSERT"),
        policies=(
            Policy("read_own_reveals", "SELECT", using="person_id = vetbench_session_person_id()"),
            Policy(
                "record_own_reveals", "INSERT", check="person_id = vetbench_session_person_id()"
            ),
        ),
    ),
    TablePrivileges("setting", leads=("INSERT", "UPDATE")),
    # Each person's last review filter (db.review_filters): their own row only.
    TablePrivileges(
        "review_filter",
        members=("SELECT", "INSERT", "UPDATE"),
        policies=(
            Policy("read_own_filter", "SELECT", using="person_id = vetbench_session_person_id()"),
            Policy("save_own_filter", "INSERT", check="person_id = vetbench_session_person_id()"),
            _update_own("change_own_filter", "person_id"),
        ),
    ),
    # Evaluation: any member starts runs; each run is stamped with the role that
    # started it (db.guards), and only that role changes it or adds its predictions.
    TablePrivileges(
        "eval_run",
        members=("SELECT", "INSERT", "UPDATE"),
        policies=(
            _READ_ALL,
            Policy("start_runs", "INSERT", check="true"),
            Policy(
                "change_own_runs",
                "UPDATE",
                using=_OWN_ROLE,
                check=_OWN_ROLE,
                requires=("db_role",),
            ),
        ),
    ),
    TablePrivileges(
        "prediction",
        members=("SELECT", "INSERT", "UPDATE"),
        policies=(
            _READ_ALL,
            Policy("predict_in_own_runs", "INSERT", check=_OWN_RUN, requires=_RUN_OWNER),
            Policy(
                "change_own_predictions",
                "UPDATE",
                using=_OWN_RUN,
                check=_OWN_RUN,
                requires=_RUN_OWNER,
            ),
        ),
    ),
    # The response cache: each role's own (stamped by the server, trigger
    # api_response_stamp), so no one plants an answer another's evaluation takes as the
    # model's (migration 0016); vetbench never changes a cached response.
    TablePrivileges(
        "api_response",
        members=("SELECT", "INSERT"),
        policies=(
            Policy("read_own_responses", "SELECT", using=_OWN_ROLE, requires=("db_role",)),
            Policy("cache_own_responses", "INSERT", check=_OWN_ROLE, requires=("db_role",)),
        ),
    ),
    TablePrivileges("generation_reject", members=("SELECT", "INSERT")),
    # Append-only: INSERT, never UPDATE or DELETE, for anyone (the owner is stopped by
    # the audit_event_append_only trigger); the server stamps db_role and created_at.
    # Everyone reads the trail except the events that mark gold items, which hold the
    # known verdict and answer: those are for leads (migration 0015); nor another's
    # calibration judgment's event, which holds its blind answer (migration 0016).  An annotator's
    # event is never a lead's action, such as a decision (migration 0015) or a flags
    # recompute, and registers no one but themselves, as an annotator (migration 0017).
    TablePrivileges(
        "audit_event",
        members=("SELECT", "INSERT"),
        policies=(
            Policy(
                "read_events_but_gold_answers",
                "SELECT",
                using=f"(action <> '{GOLD_ADD_ACTION}' AND (payload ->> 'gold_id' IS NULL "
                "OR db_role = session_user)) OR vetbench_session_is_lead()",
            ),
            Policy(
                "record_events",
                "INSERT",
                check="vetbench_session_is_lead() OR action NOT IN "
                f"({', '.join(repr(action) for action in LEAD_AUDIT_ACTIONS)}) "
                f"AND (action <> '{REGISTER_ACTION}' OR target = session_user "
                f"AND payload ->> 'role' = '{Role.ANNOTATOR.value}')",
            ),
        ),
    ),
)
"""Every table's privileges.  A table missing here is unreadable for members
(``tests/test_privileges.py`` checks that every table has an entry)."""

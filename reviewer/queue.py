"""The annotator's queue: which item to show next, and the session's history.

An item needs ``overlap`` (k) active judgments on its current revision.  The
next item for annotator X is one that is still open (status ``pending`` or
``in_review``; the status column is kept in step with the judgments by
``db.item_status``), whose current revision X has neither judged nor
written (an editor knows the key, so could not answer blind), and that no one
else has claimed in the last ``CLAIM_TTL``.  Items that already have some
judgments come first (to finish items), then each annotator walks the items in
id order from their own starting point, so people working at the same time
start in different places.  An item whose key X saw without judging it yet
(``db.reveals``) comes before all these, revealed: what was begun is finished first.

Gold items (``db.gold``) are never served as ordinary items: the queue mixes
them in at the rate ``gold_rate`` (percent of the items an annotator judges, on a
fixed schedule: with 10, every tenth) and serves them first while the annotator
has judged fewer than ``calibration_items`` items, as long as unjudged gold items
are left.  The filters apply to them too.  Under the qualification gate
(``db.qualification``) someone who has not passed gets only gold items they never
judged, and nothing once they failed.

With ``order=suspicious`` the items triage finds most suspicious
(``reviewer.triage``) come first, highest score first, then the rest as above;
the ranking is read once and again every ``RANKING_TTL``.  A filter on flags
serves only items whose current revision carries one of them.

Choosing an item and claiming it happen in one write transaction, so two
annotators asking at the same moment get different items.  Every lookup is one
indexed query that stops at the first match (see ``ix_item_status_id``).
Everything but the in-memory history lives in the database, so a restarted
session picks up where it stopped.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from datetime import datetime, timedelta

from sqlalchemy import ColumnElement, and_, case, delete, exists, func, not_, or_, select
from sqlmodel import Session, col

from db.engine import Database
from db.flags import ItemFlag, revision_flags, worded_now
from db.gold import serving_gold
from db.guidelines import current_guidelines_author_id, current_guidelines_version
from db.item_status import active_judgments, refresh_item_status
from db.items import ItemSnapshot, get_item, no_item_message
from db.listings import source_names
from db.models import (
    Claim,
    GoldItem,
    Item,
    ItemRevision,
    Judgment,
    Person,
    is_current_revision,
    utcnow,
)
from db.people import ensure_person
from db.qualification import never_judged_by, qualification_of
from db.retry import retry_transient
from db.reveals import StoredReveal, first_revealed_item, reveal_of
from db.routing import WorthOrder, routing_settings, worth_order
from db.search import known_exam_names
from db.settings import get_int_setting
from db.vocabulary import OPEN_STATUSES, ItemStatus, QualificationStatus, QueueOrder
from reviewer.own_judgments import judged_items, own_judgment
from reviewer.queue_filter import QueueError, QueueFilter
from reviewer.queue_values import GuidelinesNews, OwnJudgment, QueueProgress, SessionHistory

CLAIM_TTL = timedelta(minutes=10)
"""How long an item shown to one annotator is kept from the others."""
RANKING_TTL = timedelta(minutes=5)
"""How long the suspicion ranking of ``order=suspicious`` is used before it is read again."""
_RANKED_CHUNK = 200  # ranked ids looked up per query


def annotator_queue(
    db: Database,
    annotator: str,
    *,
    kind: str | None = None,
    source: str | None = None,
    status: str | None = None,
    flag: str | None = None,
    order: str = QueueOrder.DEFAULT.value,
    clock: Callable[[], datetime] | None = None,
    search: str | None = None,
) -> ReviewQueue:
    """The queue the review app and ``vetbench next`` serve from, given their options
    (``clock``: claims' time, replaced in tests; ``search``: ``db.search_query``'s syntax)."""
    filters = QueueFilter(
        kinds=(kind,) if kind else (),
        sources=(source,) if source else (),
        statuses=(status,) if status else (),
        flags=(flag,) if flag else (),
        text=search or "",
    )
    return ReviewQueue(db, annotator, filters, clock=clock or utcnow, order=QueueOrder(order))


class ReviewQueue:
    """One annotator's view of the work: next item, history, progress.

    Not thread-safe: the TUI calls it from one worker at a time.
    """

    def __init__(
        self,
        db: Database,
        annotator: str,
        filters: QueueFilter | None = None,
        *,
        clock: Callable[[], datetime] = utcnow,
        order: QueueOrder = QueueOrder.DEFAULT,
    ) -> None:
        self.db = db
        self.filters = filters or QueueFilter()
        self.clock = clock
        self.order = QueueOrder(order)
        self._ranking: list[str] = []
        self._worth: WorthOrder | None = None  # adaptive routing's order, for one request
        self._ranked_at: datetime | None = None
        self.history = SessionHistory()
        self.session_judgments: list[int] = []
        with db.transaction() as session:
            person = ensure_person(session, annotator)
            assert person.id is not None
            self.person_id: int = person.id
            self.annotator: str = person.name
            self.role: str = person.role
        self._start_id: str | None = None

    # --- choosing items -------------------------------------------------------------

    def _mine(self) -> ColumnElement[bool]:
        """This annotator's active judgments (a condition on ``Judgment``)."""
        return and_(
            col(Judgment.annotator_id) == self.person_id, col(Judgment.retracted).is_(False)
        )

    def _judged_by_me(self) -> ColumnElement[bool]:
        return exists().where(
            col(Judgment.item_id) == col(Item.id),
            col(Judgment.annotator_id) == self.person_id,
            col(Judgment.revision_number) == col(Item.current_revision),
            col(Judgment.retracted).is_(False),
        )

    def _written_by_me(self) -> ColumnElement[bool]:
        """The current revision is this annotator's own edit: they know its key, so not blind."""
        return exists().where(
            is_current_revision(),
            col(ItemRevision.author) == self.annotator,
        )

    def _claimed_by_others(self, now: datetime) -> ColumnElement[bool]:
        return exists().where(
            col(Claim.item_id) == col(Item.id),
            col(Claim.person_id) != self.person_id,
            col(Claim.claimed_at) > now - CLAIM_TTL,
        )

    def _filter_conditions(self, session: Session) -> list[ColumnElement[bool]]:
        return self.filters.conditions(session)

    def _is_gold(self) -> ColumnElement[bool]:
        """The item's current revision is a gold item (served only as gold)."""
        # Selects the id only: annotators may not read every column of gold_item.
        return select(col(GoldItem.id)).where(serving_gold()).exists()

    def _statuses(self) -> list[str]:
        wanted = set(self.filters.statuses) or {s.value for s in OPEN_STATUSES}
        return [status.value for status in OPEN_STATUSES if status.value in wanted]

    def start_id(self, session: Session) -> str:
        """This annotator's starting point in id order: a stable spot derived from their name."""
        if self._start_id is None:
            total = session.scalar(select(func.count()).select_from(Item)) or 0
            digest = hashlib.sha256(self.annotator.encode("utf-8")).digest()
            offset = int.from_bytes(digest[:8], "big") % total if total else 0
            self._start_id = (
                session.scalar(select(col(Item.id)).order_by(col(Item.id)).offset(offset).limit(1))
                or ""
            )
        return self._start_id

    def _first_open_item(
        self, session: Session, exclude: Sequence[str], *, avoid_claimed: bool = True
    ) -> str | None:
        now = self.clock()
        base = [
            not_(self._judged_by_me()),
            not_(self._written_by_me()),
            not_(self._is_gold()),
            *self._filter_conditions(session),
        ]
        if avoid_claimed:
            base.append(not_(self._claimed_by_others(now)))
        if exclude:
            base.append(col(Item.id).not_in(list(exclude)))
        ranking = self._ranking_for(session)
        if ranking.first:
            found = self._first_ranked(session, ranking.first, base)
            if found is not None:
                return found
        if not ranking.rest:  # routed by reliability: fresh items, then the uncertain
            found = None
            if ranking.fresh:
                found = self._walk(session, base, [ItemStatus.PENDING.value])
            if found is None and ranking.after_fresh:
                found = self._first_ranked(session, ranking.after_fresh, base)
            return found  # the rest wait for a more reliable colleague
        return self._walk(session, base, self._statuses())

    def _working_now(self, session: Session) -> list[str]:
        """The others who claimed or judged an item within ``CLAIM_TTL``: at work now."""
        since = self.clock() - CLAIM_TTL
        claimed = select(col(Claim.person_id)).where(col(Claim.claimed_at) > since)
        judged = select(col(Judgment.annotator_id)).where(col(Judgment.created_at) > since)
        return list(
            session.scalars(
                select(col(Person.name)).where(
                    col(Person.id) != self.person_id,
                    or_(col(Person.id).in_(claimed), col(Person.id).in_(judged)),
                )
            )
        )

    def _walk(
        self, session: Session, base: list[ColumnElement[bool]], statuses: list[str]
    ) -> str | None:
        """The first item with ``statuses`` (in that order) and ``base``, in id order from
        this annotator's starting point."""
        start = self.start_id(session)
        for status in statuses:
            if status not in self._statuses():
                continue
            # Walk from this annotator's starting point to the end, then wrap around.
            for window in (col(Item.id) >= start, col(Item.id) < start):
                query = (
                    select(col(Item.id))
                    .where(col(Item.status) == status, window, *base)
                    .order_by(col(Item.id))
                    .limit(1)
                )
                found = session.scalar(query)
                if found is not None:
                    return found
        return None

    def suspicion_ranking(self) -> list[str]:
        """Item ids with a triage score, most suspicious first (read again after RANKING_TTL)."""
        now = self.clock()
        if self._ranked_at is None or now - self._ranked_at > RANKING_TTL:
            from reviewer.triage import rank_items

            self._ranking = [entry.item_id for entry in rank_items(self.db)]
            self._ranked_at = now
        return self._ranking

    def _ranking_for(self, session: Session) -> WorthOrder:
        """The items to offer first, in order: the most suspicious with
        ``order=suspicious``; under adaptive routing the open items another judgment is
        worth most for, routed by this annotator's reliability (``db.routing``); else
        none (the walk in id order)."""
        if self.order is QueueOrder.SUSPICIOUS:
            return WorthOrder(self.suspicion_ranking(), [])
        routing = routing_settings(session)
        if not routing.adaptive:
            return WorthOrder([], [])
        if self._worth is None:  # once per request: the walk may pass over a few items
            open_ids = session.scalars(
                select(col(Item.id)).where(col(Item.status).in_(self._statuses()))
            )
            self._worth = worth_order(
                session, list(open_ids), self.annotator, routing, self._working_now(session)
            )
        return self._worth

    def _first_ranked(
        self, session: Session, ranking: list[str], conditions: list[ColumnElement[bool]]
    ) -> str | None:
        """The first item of ``ranking`` that is open and passes ``conditions``."""
        statuses = self._statuses()
        for start in range(0, len(ranking), _RANKED_CHUNK):
            chunk = ranking[start : start + _RANKED_CHUNK]
            open_ids = set(
                session.scalars(
                    select(col(Item.id)).where(
                        col(Item.id).in_(chunk), col(Item.status).in_(statuses), *conditions
                    )
                )
            )
            for item_id in chunk:
                if item_id in open_ids:
                    return item_id
        return None

    def _needs_more(self, session: Session, item_id: str, *, count_claims: bool = False) -> bool:
        """Guard against a stale status (e.g. k lowered without a refresh): recount one item.

        With ``count_claims``, others' open claims count as judgments on their way.
        """
        item = session.get(Item, item_id)
        if item is None:
            return False
        routing = routing_settings(session)
        overlap = routing.most_judgments
        judged = len(active_judgments(session, item_id, item.current_revision))
        if judged >= overlap:
            refresh_item_status(session, item_id)
            return False
        if routing.adaptive and refresh_item_status(session, item_id) not in self._statuses():
            return False  # the consensus is sure of it now
        if count_claims:
            claimed = session.scalar(
                select(func.count())
                .select_from(Claim)
                .where(
                    col(Claim.item_id) == item_id,
                    col(Claim.person_id) != self.person_id,
                    col(Claim.claimed_at) > self.clock() - CLAIM_TTL,
                )
            )
            return judged + (claimed or 0) < overlap
        return True

    def _claim(self, session: Session, item_id: str) -> None:
        claim = session.get(Claim, (item_id, self.person_id))
        if claim is None:
            session.add(Claim(item_id=item_id, person_id=self.person_id, claimed_at=self.clock()))
        else:
            claim.claimed_at = self.clock()
            session.add(claim)

    def _fetch_new(self, exclude: Sequence[str], release: str | None = None) -> ItemSnapshot | None:
        return retry_transient(lambda: self._fetch_new_once(exclude, release))

    def _gold_due(self, session: Session) -> bool:
        """Whether the next item should be a gold item: during calibration (the first
        ``calibration_items`` judgments), then once every 100 / ``gold_rate`` items."""
        calibration = get_int_setting(session, "calibration_items")
        rate = get_int_setting(session, "gold_rate")
        if not calibration and not rate:
            return False
        judged = session.scalar(select(func.count()).where(self._mine())) or 0
        if judged < calibration:
            return True
        # The (judged + 1)-th item is gold when it crosses a multiple of 100 / rate.
        return (judged + 1) * rate // 100 > judged * rate // 100

    def _first_gold_item(
        self, session: Session, exclude: Sequence[str], *, unseen: bool = False
    ) -> str | None:
        """A gold item this annotator has not judged (``unseen``: never), in their id order."""
        conditions = [
            not_(self._judged_by_me()),
            not_(self._written_by_me()),
            *self._filter_conditions(session),
            *([never_judged_by(self.person_id)] if unseen else []),
        ]
        if exclude:
            conditions.append(col(Item.id).not_in(list(exclude)))
        start = self.start_id(session)
        for window in (col(Item.id) >= start, col(Item.id) < start):
            found = session.scalar(
                select(col(Item.id))
                .join(GoldItem, serving_gold())
                .where(window, *conditions)
                .order_by(col(Item.id))
                .limit(1)
            )
            if found is not None:
                return found
        return None

    def _first_revealed(self, session: Session, exclude: Sequence[str]) -> str | None:
        """An open item whose key I saw and that I have not judged (``db.reveals``): it
        comes first, revealed, so what was begun is finished (gold items come as gold)."""
        conditions = [
            col(Item.status).in_(self._statuses()),
            not_(self._judged_by_me()),
            not_(self._is_gold()),
            *self._filter_conditions(session),
        ]
        if exclude:
            conditions.append(col(Item.id).not_in(list(exclude)))
        found = first_revealed_item(session, self.person_id, conditions)
        return found if found is not None and self._needs_more(session, found) else None

    def _fetch_new_once(
        self, exclude: Sequence[str], release: str | None = None
    ) -> ItemSnapshot | None:
        with self.db.transaction() as session:
            self._worth = None
            if release is not None:
                self._release(session, release)
            standing = qualification_of(session, self.annotator)
            revealed = self._first_revealed(session, exclude) if standing.counts else None
            if revealed is not None:
                self._claim(session, revealed)
                return get_item(session, revealed)
            trying = standing.status is QualificationStatus.IN_PROGRESS
            if trying or (standing.counts and self._gold_due(session)):
                gold = self._first_gold_item(session, exclude, unseen=not standing.counts)
                if gold is not None:
                    self._claim(session, gold)
                    return get_item(session, gold)
            if not standing.counts:
                return None  # the gate: nothing of theirs would count (Qualification.notice)
            # Items others have open come last: with k > 1 they may still need this
            # annotator's judgment (once their open claims are counted in).
            for avoid_claimed in (True, False):
                passed_over = list(exclude)
                for _attempt in range(20):
                    item_id = self._first_open_item(
                        session, passed_over, avoid_claimed=avoid_claimed
                    )
                    if item_id is None:
                        break
                    if self._needs_more(session, item_id, count_claims=not avoid_claimed):
                        self._claim(session, item_id)
                        return get_item(session, item_id)
                    passed_over.append(item_id)
        return None

    @property
    def held_for_colleagues(self) -> int:
        """After a request under adaptive routing: the judged items it left for a more
        reliable colleague at work (``db.routing.worth_order``)."""
        return self._worth.held if self._worth is not None else 0

    def held_note(self) -> str:
        """What an empty queue says of the open items it leaves for others ("" for none):
        those whose current revision this annotator wrote, which they cannot answer blind,
        and (adaptive routing) those kept for a more reliable colleague at work."""
        with self.db.session() as session:
            own_query = select(func.count()).select_from(Item)
            own = session.scalar(own_query.where(*self._open_conditions(session, mine=True)))
        notes = []
        if own:
            items, it = (
                ("1 open item is", "it") if own == 1 else (f"{own:,} open items are", "them")
            )
            notes.append(
                f"{items} yours (you imported, generated or edited {it}), which you cannot "
                f"answer blind: other annotators judge {it} (vetbench users add NAME)"
            )
        if held := self.held_for_colleagues:
            items = "1 judged item waits" if held == 1 else f"{held:,} judged items wait"
            notes.append(
                f"{items} for a more reliable colleague at work, whose one judgment may settle it"
            )
        return "; ".join(notes)

    def fetch_next(self, release: str | None = None) -> ItemSnapshot | None:
        """An item from the queue, claimed for this annotator, and added to the history.

        Items skipped in this session come back only when nothing else is left.
        ``release`` names an item whose claim to drop in the same transaction.
        """
        exclude = sorted(self.history.skipped)
        item = self._fetch_new(exclude, release)
        if item is None and exclude:
            item = self._fetch_new([])
        if item is not None:
            self.history.skipped.discard(item.id)
            self.history.append(item.id)
        return item

    def next_item(self) -> ItemSnapshot | None:
        """Forward in the history if the annotator went back, else on to a new item.

        Moving on from an item not yet judged puts it aside, like ``skip``.
        """
        if self.history.position < len(self.history.item_ids) - 1:
            self.history.position += 1
            return self._reload(self.history.item_ids[self.history.position])
        return self.skip()

    def previous_item(self) -> ItemSnapshot | None:
        """The item shown before the current one in this session (None at the start)."""
        if self.history.position <= 0:
            return None
        self.history.position -= 1
        return self._reload(self.history.item_ids[self.history.position])

    def skip(self) -> ItemSnapshot | None:
        """Put the current item aside for this session, free it for others, show another.

        (A judged item is never served again anyway, so it may join the skipped set too.)
        """
        current = self.history.current
        if current is not None:
            self.history.skipped.add(current)
        return self.fetch_next(release=current)

    def open_item(self, item_id: str) -> ItemSnapshot:
        """Jump to an item by id (judged or not); it joins the history and is claimed."""
        item_id = item_id.strip()
        with self.db.transaction() as session:
            item = get_item(session, item_id)
            if item is None:
                raise QueueError(no_item_message(session, item_id))
            self._claim(session, item_id)
        self.history.append(item_id)
        return item

    def flags_of(self, item: ItemSnapshot) -> tuple[ItemFlag, ...]:
        """The flags of the item revision shown (for the reveal, never before it), worded
        as ``flags show`` and triage word them."""
        with self.db.session() as session:
            return tuple(worded_now(session, revision_flags(session, item.id, item.revision)))

    def _reload(self, item_id: str) -> ItemSnapshot | None:
        with self.db.session() as session:
            return get_item(session, item_id)

    def current_item(self) -> ItemSnapshot | None:
        """The item at the history position, re-read from the database."""
        current = self.history.current
        return None if current is None else self._reload(current)

    def _release(self, session: Session, item_id: str) -> None:
        session.execute(
            delete(Claim).where(
                col(Claim.item_id) == item_id, col(Claim.person_id) == self.person_id
            )
        )

    def release_claim(self, item_id: str | None = None) -> None:
        """Let others have the item (default: the current one) straight away."""
        item_id = item_id or self.history.current
        if item_id is None:
            return
        with self.db.transaction() as session:
            self._release(session, item_id)

    def refresh_claim(self) -> None:
        """Keep the current item claimed while the annotator is still working on it."""
        current = self.history.current
        if current is None or self.own_judgment(current) is not None:
            return
        with self.db.transaction() as session:
            if session.get(Item, current) is not None:
                self._claim(session, current)

    def known_sources(self) -> list[str]:
        """Every source name in the database (for the filter choices)."""
        with self.db.session() as session:
            return source_names(session)

    def known_kinds(self) -> list[str]:
        """The kinds the database holds (the filter offers no others)."""
        with self.db.session() as session:
            return list(session.scalars(select(col(Item.kind)).distinct().order_by(col(Item.kind))))

    def known_exams(self) -> list[str]:
        """Every CFLUE exam name (名称) among the items, for the filter."""
        with self.db.session() as session:
            return known_exam_names(session)

    def wrote_current_revision(self, item: ItemSnapshot) -> bool:
        """This annotator wrote the item's current text, so they know its key: the app
        shows it to them with the key, never blind (the queue never serves it)."""
        with self.db.session() as session:
            author = session.scalar(
                select(col(ItemRevision.author)).where(
                    col(ItemRevision.item_id) == item.id,
                    col(ItemRevision.number) == item.revision,
                )
            )
        return author == self.annotator

    # --- the annotator's own work ---------------------------------------------------

    def own_judgment(
        self, item_id: str, revision_number: int | None = None, *, any_revision: bool = False
    ) -> OwnJudgment | None:
        """My active judgment of the item's current revision (or of ``revision_number``;
        with ``any_revision``, my newest active judgment of any of its revisions)."""
        with self.db.session() as session:
            return own_judgment(
                session,
                self.person_id,
                self.annotator,
                item_id,
                revision_number,
                any_revision=any_revision,
            )

    def judged_items(self, limit: int = 500) -> list[OwnJudgment]:
        """My active judgments, newest first (for browsing what I have done)."""
        with self.db.session() as session:
            return judged_items(session, self.person_id, self.annotator, limit)

    def revealed_key(self, item: ItemSnapshot) -> StoredReveal | None:
        """The key of ``item`` at the revision shown that I saw before judging it: it is
        shown to me revealed, with the blind answer I gave then (``db.reveals``)."""
        with self.db.session() as session:
            return reveal_of(session, self.person_id, item.id, item.revision)

    def record_submitted(self, judgment_id: int) -> None:
        self.session_judgments.append(judgment_id)

    def record_retracted(self, judgment_id: int) -> None:
        if judgment_id in self.session_judgments:
            self.session_judgments.remove(judgment_id)

    def guidelines_news(self) -> GuidelinesNews | None:
        """What this annotator should hear about the guidelines at the start: a new
        annotator reads them first; others hear of a version newer than the one their
        latest judgment was made under.  None: nothing to say (no guidelines, or this
        person set the current version)."""
        with self.db.session() as session:
            current = current_guidelines_version(session)
            if current is None or current_guidelines_author_id(session) == self.person_id:
                return None
            latest = session.execute(
                select(col(Judgment.guidelines_version))
                .where(col(Judgment.annotator_id) == self.person_id)
                .order_by(col(Judgment.created_at).desc(), col(Judgment.id).desc())
                .limit(1)
            ).first()
        if latest is None:
            return GuidelinesNews(current=current, first=True)
        last_seen = latest[0]
        if last_seen is not None and last_seen >= current:
            return None
        return GuidelinesNews(current=current, first=False, last_seen=last_seen)

    def database_is_empty(self) -> bool:
        """True when the database holds no items at all (nothing was imported yet)."""
        with self.db.session() as session:
            return session.scalar(select(col(Item.id)).limit(1)) is None

    def waiting_conditions(self, session: Session) -> list[ColumnElement[bool]]:
        """Conditions on ``Item`` of the open items this annotator could still judge
        (``progress``'s ``items_left``; ``vetbench export --format judging`` lists them)."""
        return self._open_conditions(session, mine=False)

    def _open_conditions(self, session: Session, *, mine: bool) -> list[ColumnElement[bool]]:
        """The open items not judged by me whose current revision I wrote (``mine``) or not."""
        written = self._written_by_me()
        return [
            or_(*(col(Item.status) == status for status in self._statuses())),
            not_(self._judged_by_me()),
            written if mine else not_(written),
            not_(self._is_gold()),
            *self._filter_conditions(session),
        ]

    def progress(self) -> QueueProgress:
        """Session and overall figures; ``items_left`` counts open items I could still judge."""
        import statistics  # only needed here; keeps startup light

        with self.db.session() as session:
            mine = self._mine()
            seconds = list(session.scalars(select(col(Judgment.seconds)).where(mine)))
            left_query = (
                select(func.count()).select_from(Item).where(*self.waiting_conditions(session))
            )
            failed = qualification_of(session, self.annotator).status is QualificationStatus.FAILED
            items_left = 0 if failed else session.scalar(left_query) or 0  # failed: served nothing
            in_scope = self._filter_conditions(session)
            complete_statuses = [s.value for s in ItemStatus if s not in OPEN_STATUSES]
            total, complete = session.execute(
                select(
                    func.count(),
                    func.coalesce(
                        func.sum(case((col(Item.status).in_(complete_statuses), 1), else_=0)), 0
                    ),
                )
                .select_from(Item)
                .where(*in_scope)
            ).one()
        return QueueProgress(
            session_done=len(self.session_judgments),
            session_assigned=len(self.history.item_ids),
            overall_done=len(seconds),
            items_left=items_left,
            median_seconds=statistics.median(seconds) if seconds else None,
            items_complete=int(complete),
            items_total=int(total),
        )

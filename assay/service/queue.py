"""The annotation queue: which items still need labels, who labels what next, and when an item's
label is decided (seeds 000/001: k annotators per item, the k-th only when the first disagree).

A human annotator's answer is a judgment in the label store (the campaign's dataset, the item,
the annotator's login; a skip is status *skipped*), written with the vote's queue row update in
one transaction (SQLite ``BEGIN IMMEDIATE``; PostgreSQL ``SELECT … FOR UPDATE`` of the row), so
concurrent votes never decide an item twice and a re-posted vote is the same judgment, not a
second one. The vote reads the annotator's flag (:mod:`assay.service.flags`) in that
transaction, under the campaign's flag lock (PostgreSQL: an advisory lock, shared,
:func:`assay.service.locks.flag_lock_shared`), so no vote lands after a flag's write; while
the flag is live their votes count in no decision (:mod:`assay.service.resettle`). The
decided label is kept on the queue row; the campaign records it under its own annotator when
its job resumes (:mod:`assay.service.jobs`). The campaign's locks are in
:mod:`assay.service.locks`.

Undo. An annotator takes back their latest answer (:func:`undo`), the deciding one included: a
decision is held back from the jobs for :data:`UNDO_SECONDS` (:func:`settled_before`), and
within that window undoing the vote that decided an item reopens it. Past it the label may be in
use by an estimate and the undo is refused. A job reads only settled decisions, and an undo
only reopens an unsettled one, so no estimate ever rests on a vote that was taken back.
"""
from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any, Iterable

from sqlalchemy import and_, delete, exists, func, insert, select, update
from sqlalchemy.engine import Engine

from assay.labels.schema import Status, judgments_table, now
from assay.labels.store import Judgment, LabelStore
from assay.ondemand.store import CampaignRow
from assay.service import gold
from assay.service.auth import audit
from assay.service.locks import flag_lock as _lock_flag
from assay.service.locks import flag_lock_shared as _lock_shared
from assay.service.locks import queue_lock as _lock
from assay.service.schema import (campaign_settings_table, flags_table, leases_table,
                                  queue_table, users_table)

DEFAULT_K = 3
DEFAULT_DAILY_LIMIT = 5
DEFAULT_MIN_OUTPUT = 20
AGGREGATIONS = ("majority", "dawid-skene")
LEASE_SECONDS = 600                 # how long an item served to an annotator is held for them
UNDO_SECONDS = 60.0                 # a decision is held back from the jobs this long (undo)


@dataclass(frozen=True)
class Settings:
    """A campaign's service settings: annotators per item, a team's submissions a day, how
    votes are aggregated, and the fewest items a submitted output may have (``min_output``: a
    tiny output's scores would reveal its items' labels — leaderboard probing)."""

    k: int = DEFAULT_K
    daily_limit: int = DEFAULT_DAILY_LIMIT
    aggregation: str = "majority"           # or "dawid-skene"
    min_output: int = DEFAULT_MIN_OUTPUT

    def __post_init__(self) -> None:
        if self.aggregation not in AGGREGATIONS:
            raise ValueError(f"aggregation {self.aggregation!r}: expected "
                             f"{' or '.join(AGGREGATIONS)}")
        if self.k < 1 or self.daily_limit < 0 or self.min_output < 1:
            raise ValueError("k and min_output must be at least 1 and the daily limit not "
                             "negative")


def settings(engine: Engine, campaign: str) -> Settings:
    with engine.connect() as conn:
        return settings_in(conn, campaign)


def settings_in(conn: Any, campaign: str) -> Settings:
    """:func:`settings` read on ``conn`` (e.g. inside a write transaction)."""
    row = conn.execute(select(campaign_settings_table).where(
        campaign_settings_table.c.campaign == campaign)).first()
    return Settings() if row is None else Settings(int(row.k), int(row.daily_limit),
                                                   str(row.aggregation), int(row.min_output))


def set_settings(store: LabelStore, campaign: str, s: Settings) -> None:
    t = campaign_settings_table
    with store.engine.begin() as conn:
        conn.execute(delete(t).where(t.c.campaign == campaign))
        conn.execute(insert(t).values(campaign=campaign, k=s.k, daily_limit=s.daily_limit,
                                      aggregation=s.aggregation, min_output=s.min_output))


def decide(ones: int, zeros: int, k: int) -> tuple[int | None, int]:
    """(decided label or None, annotators the item needs now) after ``ones`` + ``zeros`` votes:
    the first min(2, k) votes decide when they agree; on disagreement one more annotator is
    asked, never beyond k; at k or more votes the strict majority decides, and a tie is
    *undecidable* — None with ``needed`` no more than the votes (:func:`undecidable`): the item
    is listed for the admin and its jobs go on without it.

    >>> decide(2, 0, 3), decide(1, 1, 3), decide(2, 1, 3), decide(1, 0, 1), decide(1, 0, 3)
    ((1, 2), (None, 3), (1, 3), (1, 1), (None, 2))
    >>> decide(1, 1, 2), decide(2, 2, 4), decide(2, 1, 4), decide(3, 1, 4)
    ((None, 2), (None, 4), (None, 4), (1, 4))
    """
    n, first = ones + zeros, min(2, k)
    if n < first:
        return None, first
    if ones == 0 or zeros == 0:
        return (1 if ones else 0), n
    if n < k:
        return None, n + 1
    if ones == zeros:
        return None, n
    return (1 if ones > zeros else 0), n


def enqueue(store: LabelStore, campaign: str, items: Iterable[str], k: int) -> int:
    """Add items to the queue (an item already there is left as it is; an item that was a gold
    question of the campaign is one no more: :func:`assay.service.gold.withdraw`); returns how
    many new."""
    rows = [{"campaign": campaign, "item": str(i), "needed": min(2, k), "created_at": now()}
            for i in dict.fromkeys(items)]
    if not rows:
        return 0
    with store.engine.begin() as conn:
        gold.withdraw(conn, campaign, [r["item"] for r in rows])
        before = conn.execute(select(func.count()).select_from(queue_table).where(
            queue_table.c.campaign == campaign)).scalar_one()
        for a in range(0, len(rows), 500):
            conn.execute(store._insert(queue_table), rows[a:a + 500])
        after = conn.execute(select(func.count()).select_from(queue_table).where(
            queue_table.c.campaign == campaign)).scalar_one()
    return int(after - before)


def _flagged(campaign: str) -> Any:
    """The campaign's live-flagged annotators (a subquery): their votes count in no decision
    while the flag is live (:mod:`assay.service.resettle`)."""
    f = flags_table
    return select(f.c.annotator).where((f.c.campaign == campaign) & f.c.cleared_at.is_(None))


def _votes(conn: Any, camp: CampaignRow, item: str) -> tuple[int, int]:
    """(ones, zeros) of the item's human labels, live-flagged annotators' left out."""
    j = judgments_table
    rows = conn.execute(select(j.c.value).where(
        (j.c.dataset == camp.dataset) & (j.c.item == item) & (j.c.annotator != camp.annotator)
        & (j.c.status == Status.JUDGED.value) & j.c.annotator.not_in(_flagged(camp.name))
    )).scalars().all()
    ones = sum(1 for v in rows if int(v) == 1)
    return ones, len(rows) - ones


def _nobody_left(conn: Any, camp: CampaignRow, item: str) -> bool:
    """Whether every active annotator account has answered ``item`` (a label or a skip), the
    live-flagged ones left out: they are served nothing, so their answer is not awaited."""
    j, u = judgments_table, users_table
    answered = select(j.c.annotator).where((j.c.dataset == camp.dataset) & (j.c.item == item))
    left = conn.execute(select(func.count()).select_from(u).where(
        (u.c.role == "annotator") & (u.c.active == 1) & u.c.name.not_in(answered)
        & u.c.name.not_in(_flagged(camp.name)))).scalar_one()
    return int(left) == 0


def next_item(store: LabelStore, camp: CampaignRow, annotator: str) -> str | None:
    """The oldest open item that ``annotator`` has not answered and that needs another vote,
    counting as votes the live leases of other annotators (or, every
    :data:`assay.service.gold.EVERY`-th answer, a gold question while any is left).

    The item served is leased to ``annotator`` for :data:`LEASE_SECONDS` (an item they hold
    already is served again first), in one write transaction (SQLite ``BEGIN IMMEDIATE``,
    PostgreSQL an advisory lock per campaign), so concurrent annotators are served different
    items until an item's votes and live leases meet the annotators it needs. A flagged
    annotator (:func:`assay.service.flags.check`; the flag read again under the lock) is
    served nothing and holds no lease."""
    from assay.service import flags
    if flags.check(store, camp, annotator):
        return None
    q, j, le = queue_table, judgments_table, leases_table
    mine = exists().where((j.c.dataset == camp.dataset) & (j.c.item == q.c.item)
                          & (j.c.annotator == annotator))
    votes = (select(func.count()).select_from(j).where(
        (j.c.dataset == camp.dataset) & (j.c.item == q.c.item)
        & (j.c.annotator != camp.annotator) & (j.c.status == Status.JUDGED.value)
        & j.c.annotator.not_in(_flagged(camp.name))).scalar_subquery())
    t = now()
    held = (select(func.count()).select_from(le).where(
        (le.c.campaign == camp.name) & (le.c.item == q.c.item) & (le.c.annotator != annotator)
        & (le.c.expires_at > t)).scalar_subquery())
    open_ = and_(q.c.campaign == camp.name, q.c.resolved_at.is_(None), ~mine)
    with store.engine.begin() as conn:
        _lock(conn, camp.name)
        if flags.live(conn, camp.name, annotator):      # flagged since the check: no lease
            return None
        conn.execute(delete(le).where((le.c.campaign == camp.name) & (le.c.expires_at <= t)))
        real = conn.execute(select(q.c.item).join(le, (le.c.item == q.c.item)
                                                  & (le.c.campaign == q.c.campaign)).where(
            open_ & (le.c.annotator == annotator)).order_by(q.c.id).limit(1)).scalar()
        if real is None:
            real = conn.execute(select(q.c.item).where(open_ & (votes + held < q.c.needed))
                                .order_by(q.c.id).limit(1)).scalar()
        if real is not None:
            conn.execute(delete(le).where((le.c.campaign == camp.name) & (le.c.item == real)
                                          & (le.c.annotator == annotator)))
            conn.execute(insert(le).values(campaign=camp.name, item=real, annotator=annotator,
                                           expires_at=t + dt.timedelta(seconds=LEASE_SECONDS)))
    return None if real is None else (gold.due(store, camp, annotator) or real)


def open_count(store: LabelStore, campaign: str) -> tuple[int, int]:
    """(open, resolved) queue items of a campaign."""
    q = queue_table
    with store.engine.connect() as conn:
        rows = conn.execute(select(q.c.resolved_at.is_(None), func.count()).where(
            q.c.campaign == campaign).group_by(q.c.resolved_at.is_(None))).all()
    got = {bool(a): int(b) for a, b in rows}
    return got.get(True, 0), got.get(False, 0)


class QueueError(Exception):
    """A vote or undo that cannot be taken (unknown item, nothing to undo, already decided);
    ``status`` is the HTTP status to answer."""

    def __init__(self, message: str, status: int = 409) -> None:
        super().__init__(message)
        self.status = status


def vote(store: LabelStore, camp: CampaignRow, annotator: str, item: str,
         value: int | None) -> Judgment:
    """Record ``annotator``'s answer for a queued item (1, 0, or None for a skip) and decide the
    item if its votes now suffice; returns what the store holds (a re-post changes nothing).
    Refused (403): the campaign's own annotator name, and a flagged annotator
    (:mod:`assay.service.flags`)."""
    k = settings(store.engine, camp.name).k
    with store.engine.begin() as conn:
        return vote_in(conn, store, camp, annotator, item, value, k)


def _may_answer(conn: Any, camp: CampaignRow, annotator: str, what: str = "label") -> None:
    """A :class:`QueueError` (403) for the campaign's own annotator name or a flagged
    annotator: no vote or undo of theirs is taken. The flag is read under the campaign's flag
    lock (:func:`_lock_shared`), so a flag being written is waited for and seen, and a flag is
    written only once the votes already past this read are committed."""
    if annotator == camp.annotator:
        raise QueueError(f"annotator name {annotator!r} is the campaign's own", 403)
    from assay.service import flags
    _lock_shared(conn, camp.name)
    if flags.live(conn, camp.name, annotator):
        raise QueueError(flags.refusal(camp.name, annotator, what), 403)


def vote_in(conn: Any, store: LabelStore, camp: CampaignRow, annotator: str, item: str,
            value: int | None, k: int) -> Judgment:
    """:func:`vote` inside the caller's write transaction ``conn`` (a batch of votes, as a
    Label Studio import, is one transaction: all kept or none), with the same refusals."""
    _may_answer(conn, camp, annotator)
    if value is not None:
        if int(value) not in (0, 1):
            raise QueueError(f"label {value!r}: expected 1, 0 or a skip", 400)
        value = int(value)
    q, j = queue_table, judgments_table
    row = {"dataset": camp.dataset, "item": item, "annotator": annotator, "role": "assessor",
           "value": value, "status": (Status.JUDGED if value is not None
                                      else Status.SKIPPED).value, "created_at": now()}
    qrow = conn.execute(select(q).where((q.c.campaign == camp.name) & (q.c.item == item))
                        .with_for_update()).first()
    if qrow is None:
        if not gold.is_gold(conn, camp, item):
            raise QueueError(f"item not in the queue of campaign {camp.name!r}", 404)
        g = gold.row(camp, item, annotator, value)
        if conn.execute(store._insert(j), [g]).rowcount:
            audit(store.engine, annotator, "gold", camp.name, item, {"value": value},
                  conn=conn)
        got = conn.execute(select(j.c.value, j.c.status).where(
            (j.c.dataset == g["dataset"]) & (j.c.item == item)
            & (j.c.annotator == annotator))).one()
        return Judgment(item, annotator, None if got.value is None else int(got.value),
                        Status(got.status))
    mine = (j.c.dataset == camp.dataset) & (j.c.item == item) & (j.c.annotator == annotator)
    if qrow.resolved_at is not None and conn.execute(select(j.c.id).where(mine)).first() \
            is None:
        raise QueueError(f"item {item!r} is already decided; the vote is not kept", 409)
    new = conn.execute(store._insert(j), [row]).rowcount
    got = conn.execute(select(j.c.value, j.c.status).where(mine)).one()
    conn.execute(delete(leases_table).where(
        (leases_table.c.campaign == camp.name) & (leases_table.c.item == item)
        & (leases_table.c.annotator == annotator)))
    if new:
        audit(store.engine, annotator, "label" if value is not None else "skip", camp.name,
              item, {"value": value}, conn=conn)
    if qrow.resolved_at is None:
        ones, zeros = _votes(conn, camp, item)
        decided, needed = decide(ones, zeros, k)
        stuck = decided is None and (needed <= ones + zeros or (
            value is None and _nobody_left(conn, camp, item)))
        conn.execute(update(q).where(q.c.id == qrow.id).values(
            needed=needed, value=decided,
            resolved_at=None if decided is None and not stuck else now()))
        if stuck:
            audit(store.engine, annotator, "undecidable", camp.name, item,
                  {"ones": ones, "zeros": zeros}, conn=conn)
        if decided is not None or stuck:       # decided again after a flag took it back
            from assay.service.resettle import follow
            follow(conn, camp, item, decided)
    return Judgment(item, annotator, None if got.value is None else int(got.value),
                    Status(got.status))


def settled_before(window: float | None = None) -> dt.datetime:
    """Decisions taken before this time are settled: no undo reopens them, and a job may use
    them: ``window`` seconds ago, the service's ``--undo-seconds`` (:func:`assay.service.app.
    create_app`), or :data:`UNDO_SECONDS` where none is given.

    >>> (settled_before(60.0) - settled_before(0.0)).total_seconds() < -59
    True
    """
    return now() - dt.timedelta(seconds=UNDO_SECONDS if window is None else float(window))


def undo(store: LabelStore, camp: CampaignRow, annotator: str,
         window: float | None = None) -> str:
    """Take back ``annotator``'s latest answer in the campaign, unless its item's decision is
    settled (:func:`settled_before`; the vote that decided it within the window reopens the
    item); returns the item (to show it again). A flagged annotator's undo is refused (403),
    as their votes are: it would reopen an item and lease it to them."""
    q, j = queue_table, judgments_table
    k = settings(store.engine, camp.name).k
    with store.engine.begin() as conn:
        _may_answer(conn, camp, annotator, "undo")
        last = conn.execute(select(j.c.id, j.c.item, j.c.dataset).where(
            j.c.dataset.in_([camp.dataset, gold.gold_dataset(camp.dataset)])
            & (j.c.annotator == annotator)
            & (j.c.status != Status.PENDING.value)).order_by(j.c.id.desc()).limit(1)).first()
        if last is None:
            raise QueueError("nothing to undo")
        if last.dataset != camp.dataset:          # a gold question's answer
            conn.execute(delete(j).where(j.c.id == last.id))
            audit(store.engine, annotator, "undo", camp.name, last.item, conn=conn)
            return str(last.item)
        qrow = conn.execute(select(q).where((q.c.campaign == camp.name)
                                            & (q.c.item == last.item)).with_for_update()).first()
        if qrow is None or qrow.resolved_at is not None and (
                qrow.resolved_at <= settled_before(window) or _used(conn, camp, last.item)):
            raise QueueError("the last label's item is decided and its label in use; it "
                             "cannot be undone")
        conn.execute(delete(j).where(j.c.id == last.id))
        ones, zeros = _votes(conn, camp, last.item)
        _, needed = decide(ones, zeros, k)
        conn.execute(update(q).where(q.c.id == qrow.id).values(
            needed=max(needed, qrow.needed) if qrow.resolved_at is None else needed,
            value=None, resolved_at=None))
        le = leases_table                           # the undone item is the one held now
        conn.execute(delete(le).where((le.c.campaign == camp.name)
                                      & (le.c.annotator == annotator)))
        conn.execute(insert(le).values(campaign=camp.name, item=last.item, annotator=annotator,
                                       expires_at=now() + dt.timedelta(seconds=LEASE_SECONDS)))
        audit(store.engine, annotator, "undo", camp.name, last.item, conn=conn)
    return str(last.item)


def _used(conn: Any, camp: CampaignRow, item: str) -> bool:
    """Whether the campaign has recorded its own label of ``item`` (a job used the decision)."""
    j = judgments_table
    return conn.execute(select(j.c.id).where(
        (j.c.dataset == camp.dataset) & (j.c.item == item)
        & (j.c.annotator == camp.annotator))).first() is not None


def decided(store: LabelStore, campaign: str) -> dict[str, int]:
    """Every decided item of a campaign and its label."""
    q = queue_table
    with store.engine.connect() as conn:
        rows = conn.execute(select(q.c.item, q.c.value).where(
            (q.c.campaign == campaign) & q.c.resolved_at.is_not(None)
            & q.c.value.is_not(None))).all()
    return {r.item: int(r.value) for r in rows}


def undecidable(store: LabelStore, campaign: str) -> list[str]:
    """Items closed without a label: a tie at k votes, or every active annotator answered
    (skipped) and no label was decided. Listed on the admin page; a job goes on without them
    (the campaign records a skip)."""
    q = queue_table
    with store.engine.connect() as conn:
        return [str(i) for i in conn.execute(select(q.c.item).where(
            (q.c.campaign == campaign) & q.c.resolved_at.is_not(None) & q.c.value.is_(None))
            .order_by(q.c.id)).scalars().all()]


__all__ = ["DEFAULT_DAILY_LIMIT", "DEFAULT_K", "DEFAULT_MIN_OUTPUT", "QueueError", "Settings",
           "decide", "decided", "enqueue", "next_item", "open_count", "set_settings",
           "settings", "settled_before", "undecidable", "undo", "vote", "vote_in"]

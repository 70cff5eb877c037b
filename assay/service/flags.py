"""Flagged annotators: the quality rule of :mod:`assay.service.quality` (seeds 000/001: more than
20% *and* more than 10 of an annotator's labels disagree with the item's strict majority, over
items with two or more labels; :func:`assay.service.quality.flag_rule`, its one place) with a
consequence. When the queue serves an annotator (:func:`assay.service.queue.next_item`), on the
exhaustive-annotation pages and after a Label Studio import their labels are checked
(:func:`check`); once the rule holds they are flagged (a row in ``assay_svc_flags``, audited
``flagged``), their leases in the campaign are released, they are served no item and no
document, and their votes (on the page, the API and in a Label Studio import), undos and
exhaustive annotations are refused (403, :func:`refusal`) until an admin clears the flag
(:func:`clear`, audited ``flag-cleared``). After a clear the rule is applied afresh to the
labels they give from then on. The majority the rule compares with leaves out the labels of
the other live-flagged annotators (:func:`disagreements`), as the queue's decisions do. While the
flag is live their votes count in no item's decision, the exhaustive annotations they finished
make no document's truth and their unfinished ones hold no document (:func:`flagged`, read by
:mod:`assay.service.queue` and :mod:`assay.service.exhaustive_store`); what was decided with
their work before the flag is decided afresh without it in the flag's transaction, and a clear
decides afresh what is still open (:mod:`assay.service.resettle`).

A flag is written under the campaign's queue lock (:func:`assay.service.queue._lock`: SQLite's
``BEGIN IMMEDIATE``, PostgreSQL's advisory lock), which every exhaustive write also takes before
it reads the flag (:func:`live`), and the campaign's flag lock (exclusive), which every vote
and undo takes shared before it reads the flag (:func:`assay.service.queue._lock_flag`,
:func:`~assay.service.queue._lock_shared`), so no such write lands after the flag's.

A flag is live until cleared:

>>> t = dt.datetime(2026, 11, 26)
>>> Flag("kb", "ann1", t, 12, 40, None, None).live, Flag("kb", "ann1", t, 12, 40, t, "root").live
(True, False)
"""
from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any

from sqlalchemy import DateTime, bindparam, delete, func, select, update
from sqlalchemy.engine import Engine

from assay.labels.schema import Status, judgments_table, now
from assay.labels.store import LabelStore
from assay.ondemand.store import CampaignRow
from assay.service.auth import audit
from assay.service.quality import FLAG_COUNT, flag_rule
from assay.service.schema import flags_table, leases_table


@dataclass(frozen=True)
class Flag:
    campaign: str
    annotator: str
    flagged_at: dt.datetime
    disagreements: int
    compared: int
    cleared_at: dt.datetime | None
    cleared_by: str | None

    @property
    def live(self) -> bool:
        return self.cleared_at is None


def _count_statement(since: bool) -> Any:
    """(value, ones, n) of each of an annotator's judged labels: ``ones`` and ``n`` the sum
    and number of the item's human labels, those of the other live-flagged annotators left
    out. Bound parameters ``dataset``, ``annotator``, ``own`` (the campaign's annotator),
    ``campaign`` and, with ``since``, ``since``; built once, as building the statement cost
    more than running it."""
    j, f = judgments_table, flags_table
    m, o = j.alias("m"), j.alias("o")
    judged = Status.JUDGED.value
    mine = ((m.c.dataset == bindparam("dataset")) & (m.c.annotator == bindparam("annotator"))
            & (m.c.status == judged))
    if since:
        mine = mine & (m.c.created_at > bindparam("since", type_=DateTime))
    out = select(f.c.annotator).where((f.c.campaign == bindparam("campaign"))
                                      & f.c.cleared_at.is_(None)
                                      & (f.c.annotator != bindparam("annotator")))
    theirs = ((o.c.dataset == m.c.dataset) & (o.c.item == m.c.item)
              & (o.c.annotator != bindparam("own")) & (o.c.status == judged)
              & o.c.annotator.not_in(out))
    return select(m.c.value,                    # correlated: by the item's key, per label
                  select(func.sum(o.c.value)).where(theirs).scalar_subquery(),
                  select(func.count()).select_from(o).where(theirs).scalar_subquery()
                  ).where(mine)


_COUNT = {False: _count_statement(False), True: _count_statement(True)}


def disagreements(conn: Any, camp: CampaignRow, annotator: str,
                  since: dt.datetime | None = None) -> tuple[int, int]:
    """(disagreements, compared) of ``annotator``'s labels given after ``since`` (all when
    None) with the strict majority of the item's human labels but those of the *other*
    live-flagged annotators (their labels count in no decision, so they make no honest
    annotator look bad), over items with two or more such labels —
    :func:`assay.service.quality.report`'s count for one annotator; (0, 0) when
    they gave no more than :data:`~assay.service.quality.FLAG_COUNT` labels after ``since``
    (the rule cannot hold).

    One statement: the annotator's labels (read through the label store's index on dataset
    and annotator) and, for each, the sum and number of its item's human labels (correlated
    subqueries through the unique key's dataset and item, so that no planner starts from a
    scan of the dataset); a call reads the annotator's items and their labels, never the
    whole campaign, and gets one row per label of the annotator."""
    if annotator == camp.annotator:             # the campaign's own labels are not human
        return 0, 0
    params: dict[str, Any] = {"dataset": camp.dataset, "annotator": annotator,
                              "own": camp.annotator, "campaign": camp.name}
    if since is not None:
        params["since"] = since
    rows = conn.execute(_COUNT[since is not None], params).all()
    if len(rows) <= FLAG_COUNT:             # the rule needs more than FLAG_COUNT of them
        return 0, 0
    d = c = 0
    for value, ones, n in rows:
        ones, n = int(ones or 0), int(n)
        if n < 2 or 2 * ones == n:
            continue
        c += 1
        d += int(int(value) != (1 if 2 * ones > n else 0))
    return d, c


def _row(conn: Any, campaign: str, annotator: str) -> Flag | None:
    f = flags_table
    r = conn.execute(select(f).where((f.c.campaign == campaign)
                                     & (f.c.annotator == annotator))).first()
    return None if r is None else Flag(r.campaign, r.annotator, r.flagged_at,
                                       int(r.disagreements), int(r.compared), r.cleared_at,
                                       r.cleared_by)


def live(conn: Any, campaign: str, annotator: str) -> bool:
    """Whether ``annotator`` has a live flag (:attr:`Flag.live`) in ``campaign``, on the
    caller's connection (inside a vote's or an undo's transaction): one primary-key read, the
    rule not applied (:func:`check` applies it)."""
    got = _row(conn, campaign, annotator)
    return got is not None and got.live


def flagged(conn: Any, campaign: str) -> set[str]:
    """The annotators with a live flag in ``campaign``, on the caller's connection (one read;
    the rule not applied)."""
    f = flags_table
    return set(conn.execute(select(f.c.annotator).where(
        (f.c.campaign == campaign) & f.c.cleared_at.is_(None))).scalars().all())


def refusal(campaign: str, annotator: str, what: str = "label") -> str:
    """The message of a flagged annotator's refused ``what`` (HTTP 403).

    >>> refusal("kb", "ann1", "undo")[:60]
    "annotator 'ann1' is flagged in campaign 'kb' (too many disag"
    """
    return (f"annotator {annotator!r} is flagged in campaign {campaign!r} (too many "
            f"disagreements with the majority): no {what} is taken until an admin clears the "
            "flag")


def check(store: LabelStore, camp: CampaignRow, annotator: str) -> bool:
    """Whether ``annotator`` is flagged in ``camp`` now: a live flag, or the rule holds on
    their labels (since their last clear); either way their leases are released."""
    f, le = flags_table, leases_table
    with store.engine.connect() as conn:        # a read first: the common case writes nothing
        got = _row(conn, camp.name, annotator)
        if got is None or not got.live:
            d, c = disagreements(conn, camp, annotator, None if got is None else got.cleared_at)
            if not flag_rule(d, c):
                return False
    from assay.service.queue import _lock_flag
    with store.engine.begin() as conn:
        _lock_flag(conn, camp.name)             # as the writes that read it
        if got is None or not got.live:
            values = dict(flagged_at=now(), disagreements=d, compared=c, cleared_at=None,
                          cleared_by=None)
            if got is None:
                n = conn.execute(store._insert(f).values(campaign=camp.name,
                                                         annotator=annotator, **values)
                                 ).rowcount
            else:
                n = conn.execute(update(f).where((f.c.campaign == camp.name)
                                                 & (f.c.annotator == annotator)
                                                 & f.c.cleared_at.is_not(None))
                                 .values(**values)).rowcount
            if n:
                audit(store.engine, annotator, "flagged", camp.name,
                      detail={"disagreements": d, "compared": c}, conn=conn)
                from assay.service.resettle import flagged as take_back
                take_back(conn, store, camp, annotator)
        conn.execute(delete(le).where((le.c.campaign == camp.name)
                                      & (le.c.annotator == annotator)))
    return True


def clear(engine: Engine, campaign: str, annotator: str, by: str) -> bool:
    """Clear ``annotator``'s live flag in ``campaign`` (audited); False when there is none.
    The flag alone: :func:`assay.service.resettle.clear` also counts their work again, in
    the same transaction."""
    with engine.begin() as conn:
        return clear_in(conn, engine, campaign, annotator, by)


def clear_in(conn: Any, engine: Engine, campaign: str, annotator: str, by: str) -> bool:
    """:func:`clear` in the caller's write transaction ``conn``."""
    f = flags_table
    n = conn.execute(update(f).where((f.c.campaign == campaign) & (f.c.annotator == annotator)
                                     & f.c.cleared_at.is_(None))
                     .values(cleared_at=now(), cleared_by=by)).rowcount
    if n:
        audit(engine, by, "flag-cleared", campaign, detail={"annotator": annotator},
              conn=conn)
    return bool(n)


def flags(engine: Engine, campaign: str) -> dict[str, Flag]:
    """Every annotator ever flagged in ``campaign`` (live or cleared), by name."""
    f = flags_table
    with engine.connect() as conn:
        names = conn.execute(select(f.c.annotator).where(f.c.campaign == campaign)
                             ).scalars().all()
        return {n: got for n in names if (got := _row(conn, campaign, n)) is not None}


__all__ = ["Flag", "check", "clear", "clear_in", "disagreements", "flagged", "flags", "live",
           "refusal"]

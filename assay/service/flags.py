"""Flagged annotators: the quality rule of :mod:`assay.service.quality` (seeds 000/001: more than
20% *and* more than 10 of an annotator's labels disagree with the item's strict majority, over
items with two or more labels) with a consequence. When the queue serves an annotator
(:func:`assay.service.queue.next_item`) their labels are checked; once the rule holds they are
flagged (a row in ``assay_svc_flags``, audited ``flagged``), their leases in the campaign are
released, they are served no item and their votes are refused (403) until an admin clears the
flag (:func:`clear`, audited ``flag-cleared``). After a clear the rule is applied afresh to the
labels they give from then on (the majority still counts every label of the item).

>>> rule(11, 40), rule(11, 60), rule(10, 20)
(True, False, False)
"""
from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any

from sqlalchemy import delete, func, select, update
from sqlalchemy.engine import Engine

from assay.labels.schema import Status, judgments_table, now
from assay.labels.store import LabelStore
from assay.ondemand.store import CampaignRow
from assay.service.auth import audit
from assay.service.quality import FLAG_COUNT, flag_rule
from assay.service.schema import flags_table, leases_table


rule = flag_rule
"""The seeds' flag: :func:`assay.service.quality.flag_rule`, the rule :func:`assay.service.
quality.report` applies."""


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


def disagreements(conn: Any, camp: CampaignRow, annotator: str,
                  since: dt.datetime | None = None) -> tuple[int, int]:
    """(disagreements, compared) of ``annotator``'s labels given after ``since`` (all when
    None) with the strict majority of every human label of the item, over items with two or
    more labels — :func:`assay.service.quality.report`'s count for one annotator."""
    j = judgments_table
    human = ((j.c.dataset == camp.dataset) & (j.c.annotator != camp.annotator)
             & (j.c.status == Status.JUDGED.value))
    mine = conn.execute(select(j.c.item, j.c.value, j.c.created_at).where(
        human & (j.c.annotator == annotator))).all()
    if since is not None:
        mine = [m for m in mine if m.created_at > since]
    if len(mine) <= FLAG_COUNT:             # the rule needs more than FLAG_COUNT of them
        return 0, 0
    mine_items = select(j.c.item).where(human & (j.c.annotator == annotator))
    tally = {r.item: (int(r.ones or 0), int(r.n)) for r in conn.execute(
        select(j.c.item, func.sum(j.c.value).label("ones"), func.count().label("n"))
        .where(human & j.c.item.in_(mine_items)).group_by(j.c.item))}
    d = c = 0
    for m in mine:
        ones, n = tally.get(m.item, (0, 0))
        if n < 2 or 2 * ones == n:
            continue
        c += 1
        d += int(int(m.value) != (1 if 2 * ones > n else 0))
    return d, c


def _row(conn: Any, campaign: str, annotator: str) -> Flag | None:
    f = flags_table
    r = conn.execute(select(f).where((f.c.campaign == campaign)
                                     & (f.c.annotator == annotator))).first()
    return None if r is None else Flag(r.campaign, r.annotator, r.flagged_at,
                                       int(r.disagreements), int(r.compared), r.cleared_at,
                                       r.cleared_by)


def blocked(engine: Engine, campaign: str, annotator: str) -> bool:
    """Whether ``annotator`` has a live flag in ``campaign`` (one primary-key read)."""
    with engine.connect() as conn:
        got = _row(conn, campaign, annotator)
    return got is not None and got.live


def check(store: LabelStore, camp: CampaignRow, annotator: str) -> bool:
    """Whether ``annotator`` is flagged in ``camp`` now: a live flag, or the rule holds on
    their labels (since their last clear); either way their leases are released."""
    f, le = flags_table, leases_table
    with store.engine.connect() as conn:        # a read first: the common case writes nothing
        got = _row(conn, camp.name, annotator)
        if got is None or not got.live:
            d, c = disagreements(conn, camp, annotator, None if got is None else got.cleared_at)
            if not rule(d, c):
                return False
    with store.engine.begin() as conn:
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
        conn.execute(delete(le).where((le.c.campaign == camp.name)
                                      & (le.c.annotator == annotator)))
    return True


def clear(engine: Engine, campaign: str, annotator: str, by: str) -> bool:
    """Clear ``annotator``'s live flag in ``campaign`` (audited); False when there is none."""
    f = flags_table
    with engine.begin() as conn:
        n = conn.execute(update(f).where((f.c.campaign == campaign)
                                         & (f.c.annotator == annotator)
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


__all__ = ["Flag", "blocked", "check", "clear", "disagreements", "flags", "rule"]

"""What the human labels cost, per submission and per campaign: how many items each submission
sent to the queue (and how many of them no earlier submission had sent: the items it added),
how many human answers were given on its items (labels reused by later submissions count for
each), and the campaign's totals (answers, skips, gold answers, decided items); times a price per
label (``price``) when one is given.

>>> Cost("t1/a", 10, 8, 17).price(0.25)
4.25
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy import func, select

from assay.labels.schema import Status, judgments_table
from assay.labels.store import LabelStore
from assay.ondemand.store import CampaignRow
from assay.service.gold import gold_dataset
from assay.service.schema import job_items_table, queue_table, submissions_table


@dataclass(frozen=True)
class Cost:
    """One submission's share: items queued for it, items it added, human answers on them."""

    system: str
    items: int
    new_items: int
    answers: int

    def price(self, per_label: float) -> float:
        return round(self.answers * per_label, 10)


def costs(store: LabelStore, camp: CampaignRow) -> dict[str, Any]:
    """Per submission (in order of arrival) and the campaign's totals."""
    s, ji, j, q = submissions_table, job_items_table, judgments_table, queue_table
    human = ((j.c.dataset == camp.dataset) & (j.c.annotator != camp.annotator)
             & (j.c.status != Status.PENDING.value))
    out, seen = [], set()
    with store.engine.connect() as conn:
        subs = conn.execute(select(s.c.id, s.c.system).where(s.c.campaign == camp.name)
                            .order_by(s.c.id)).all()
        for sub in subs:
            items = set(conn.execute(select(ji.c.item).where(ji.c.submission_id == sub.id))
                        .scalars().all())
            answers = conn.execute(select(func.count()).select_from(j).where(
                human & j.c.item.in_(select(ji.c.item).where(ji.c.submission_id == sub.id)))
            ).scalar_one()
            out.append(Cost(sub.system, len(items), len(items - seen), int(answers)))
            seen |= items
        by_status = dict(conn.execute(select(j.c.status, func.count()).where(human)
                                      .group_by(j.c.status)).all())
        golds = conn.execute(select(func.count()).select_from(j).where(
            j.c.dataset == gold_dataset(camp.dataset))).scalar_one()
        decided = conn.execute(select(func.count()).select_from(q).where(
            (q.c.campaign == camp.name) & q.c.resolved_at.is_not(None))).scalar_one()
    return {"submissions": out,
            "answers": int(sum(by_status.values())),
            "skips": int(by_status.get(Status.SKIPPED.value, 0)),
            "gold_answers": int(golds), "decided_items": int(decided)}


__all__ = ["Cost", "costs"]

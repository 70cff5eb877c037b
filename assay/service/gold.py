"""Gold questions (seeds 000/001): items whose label is known, shown to an annotator among the
queued items — every :data:`EVERY`-th answer, while they have gold questions left and real items
to label — so each annotator's accuracy is measured on items they cannot tell apart.

An answer to a gold question is a judgment in its own dataset (the campaign's dataset +
``#gold``), so it never counts as a vote on a real item nor reaches an estimate.

>>> gold_dataset("kb")
'kb#gold'
"""
from __future__ import annotations

from typing import Any

from sqlalchemy import delete, func, select

from assay.errors import AssayInputError
from assay.labels.schema import Status, judgments_table, now
from assay.labels.store import LabelStore
from assay.ondemand.store import CampaignRow
from assay.service.schema import gold_table, queue_table

EVERY = 10


def gold_dataset(dataset: str) -> str:
    return f"{dataset}#gold"


def add_gold(store: LabelStore, campaign: str, labels: dict[str, int]) -> int:
    """Keep gold questions (item → 0/1) of a campaign (one transaction; a kept one is
    replaced); an item already in the campaign's annotation queue is refused (one
    :class:`AssayInputError`, nothing kept): an annotator would answer it as a vote, never as
    the gold question, and be shown it again and again."""
    rows = [{"campaign": campaign, "item": str(k), "value": int(v)} for k, v in labels.items()]
    with store.engine.begin() as conn:
        for a in range(0, len(rows), 500):          # a gold question is never a queued item
            queued = conn.execute(select(queue_table.c.item).where(
                (queue_table.c.campaign == campaign)
                & queue_table.c.item.in_([r["item"] for r in rows[a:a + 500]])).limit(1)
                ).scalar()
            if queued is not None:
                raise AssayInputError("gold", f"item {queued!r} is in the annotation queue of "
                                      f"campaign {campaign!r}",
                                      expected="gold questions that are not queued items")
        for a in range(0, len(rows), 500):
            chunk = rows[a:a + 500]
            conn.execute(delete(gold_table).where(
                (gold_table.c.campaign == campaign)
                & gold_table.c.item.in_([r["item"] for r in chunk])))
            conn.execute(gold_table.insert(), chunk)
    return len(rows)


def due(store: LabelStore, camp: CampaignRow, annotator: str) -> str | None:
    """The gold question to show ``annotator`` now, if one is due and left (never an item
    they have answered, as a gold question or as a vote)."""
    j, g = judgments_table, gold_table
    with store.engine.connect() as conn:
        answered = conn.execute(select(func.count()).select_from(j).where(
            j.c.dataset.in_([camp.dataset, gold_dataset(camp.dataset)])
            & (j.c.annotator == annotator))).scalar_one()
        if answered % EVERY != EVERY - 1:
            return None
        done = select(j.c.item).where(j.c.dataset.in_([camp.dataset,
                                                      gold_dataset(camp.dataset)])
                                      & (j.c.annotator == annotator))
        return conn.execute(select(g.c.item).where(
            (g.c.campaign == camp.name) & g.c.item.not_in(done)).order_by(g.c.item).limit(1)
        ).scalar()


def withdraw(conn: Any, campaign: str, items: list[str]) -> None:
    """Items a submission sends to the queue stop being gold questions of the campaign (they
    now need votes; an item is never both)."""
    for a in range(0, len(items), 500):
        conn.execute(delete(gold_table).where((gold_table.c.campaign == campaign)
                                              & gold_table.c.item.in_(items[a:a + 500])))


def is_gold(conn: Any, camp: CampaignRow, item: str) -> bool:
    return conn.execute(select(gold_table.c.item).where(
        (gold_table.c.campaign == camp.name) & (gold_table.c.item == item))).first() is not None


def row(camp: CampaignRow, item: str, annotator: str, value: int | None) -> dict[str, Any]:
    """The judgment row of an answer to a gold question."""
    return {"dataset": gold_dataset(camp.dataset), "item": item, "annotator": annotator,
            "role": "assessor", "value": value,
            "status": (Status.JUDGED if value is not None else Status.SKIPPED).value,
            "created_at": now()}


def accuracy(store: LabelStore, camp: CampaignRow) -> dict[str, tuple[int, int]]:
    """Per annotator: (gold questions answered with a label, answered correctly)."""
    j, g = judgments_table, gold_table
    q = select(j.c.annotator, j.c.value, g.c.value.label("truth")).join(
        g, (g.c.item == j.c.item) & (g.c.campaign == camp.name)).where(
        (j.c.dataset == gold_dataset(camp.dataset)) & (j.c.status == Status.JUDGED.value))
    out: dict[str, tuple[int, int]] = {}
    with store.engine.connect() as conn:
        for r in conn.execute(q).all():
            n, ok = out.get(r.annotator, (0, 0))
            out[r.annotator] = (n + 1, ok + int(int(r.value) == int(r.truth)))
    return out


__all__ = ["EVERY", "accuracy", "add_gold", "due", "gold_dataset", "is_gold", "row",
           "withdraw"]

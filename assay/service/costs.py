"""What the human labels cost, per submission and per campaign: how many items each submission
sent to the queue (and how many of them no earlier submission had sent: the items it added),
how many human answers were given on its items (labels reused by later submissions count for
each), and the campaign's totals (:func:`totals`: answers, skips, gold answers, decided items).

Prices per task type (revision 0008), per campaign, set by an admin (:func:`set_prices`);
without one the defaults of seed 001 (:data:`DEFAULT_PRICES`): *verification* of an item,
$0.03 per answer (about 10 seconds an entry); *exhaustive* annotation of a document, $2.60 per
document done by an annotator (its entity mentions, about $2.00, then the relations of its
mention pairs, about $0.60). Every human answer is paid (a label, a skip, a gold question's
answer). :func:`campaign_costs` prices a campaign: per annotator (answers and documents done,
cost = count × price), per submission (the answers on the items it added to the queue — the
first submission to queue an item pays for its labels and later ones reuse them — and the
answers on all its items), and the campaign's total.

A flagged annotator's work is priced like anyone's (:mod:`assay.service.flags`): it was done
and is owed, even though while the flag is live it counts in no decision, no document's truth
and no agreement figure (:mod:`assay.service.quality`,
:func:`assay.service.exhaustive_store.agreement`); the cost page says so. A campaign admin
reads the cost of the flagged work on the annotator's row.

>>> DEFAULT_PRICES["verification"] * 100, parse_price("exhaustive", " 2.6 ")
(3.0, 2.6)
"""
from __future__ import annotations

from dataclasses import dataclass

import math

from sqlalchemy import delete, func, select
from sqlalchemy.engine import Engine

from assay.labels.schema import Status, judgments_table
from assay.labels.store import LabelStore
from assay.ondemand.store import CampaignRow
from assay.service.gold import gold_dataset
from assay.service.schema import (job_items_table, prices_table, queue_table,
                                  submissions_table)

DEFAULT_PRICES = {"verification": 0.03, "exhaustive": 2.60}
TASKS = tuple(DEFAULT_PRICES)


def totals(store: LabelStore, camp: CampaignRow) -> dict[str, int]:
    """The campaign's human answers (labels and skips), skips, gold answers and decided
    items."""
    j, q = judgments_table, queue_table
    human = ((j.c.dataset == camp.dataset) & (j.c.annotator != camp.annotator)
             & (j.c.status != Status.PENDING.value))
    with store.engine.connect() as conn:
        by_status = dict(conn.execute(select(j.c.status, func.count()).where(human)
                                      .group_by(j.c.status)).all())
        golds = conn.execute(select(func.count()).select_from(j).where(
            j.c.dataset == gold_dataset(camp.dataset))).scalar_one()
        decided = conn.execute(select(func.count()).select_from(q).where(
            (q.c.campaign == camp.name) & q.c.resolved_at.is_not(None))).scalar_one()
    return {"answers": int(sum(by_status.values())),
            "skips": int(by_status.get(Status.SKIPPED.value, 0)),
            "gold_answers": int(golds), "decided_items": int(decided)}


def prices(engine: Engine, campaign: str) -> dict[str, float]:
    """The campaign's price per task type (:data:`DEFAULT_PRICES` for a task without one)."""
    p = prices_table
    with engine.connect() as conn:
        got = dict(conn.execute(select(p.c.task, p.c.price).where(p.c.campaign == campaign)
                                ).all())
    return {t: float(got.get(t, d)) for t, d in DEFAULT_PRICES.items()}


def parse_price(task: str, raw: object) -> float:
    """A price from a form field: a finite number, not negative; else ValueError naming it."""
    try:
        v = float(str(raw).strip())
    except ValueError:
        v = float("nan")
    if not math.isfinite(v) or v < 0:
        raise ValueError(f"price of {task}: {str(raw)[:40]!r}: expected a number, 0 or more")
    return v


def set_prices(engine: Engine, campaign: str, given: dict[str, float], by: str) -> None:
    """Set the campaign's prices of the tasks in ``given`` (one transaction, audited)."""
    from assay.labels.schema import now
    from assay.service.auth import audit
    unknown = set(given) - set(TASKS)
    if unknown:
        raise ValueError(f"task {sorted(unknown)[0]!r}: expected one of {', '.join(TASKS)}")
    p = prices_table
    with engine.begin() as conn:
        for task, price in given.items():
            conn.execute(delete(p).where((p.c.campaign == campaign) & (p.c.task == task)))
            conn.execute(p.insert().values(campaign=campaign, task=task, price=float(price),
                                           updated_at=now(), updated_by=by))
        audit(engine, by, "prices", campaign, detail=given, conn=conn)


@dataclass(frozen=True)
class SubmissionCost:
    """A submission's items queued and added, the answers on them, and what it cost (the
    answers on the items it added × the verification price)."""

    id: int
    team: str
    system: str
    state: str
    items: int
    new_items: int
    answers: int            # on every item it queued (reused labels count)
    answers_added: int      # on the items it added: the ones it pays for
    cost: float


@dataclass(frozen=True)
class AnnotatorCost:
    """An annotator's work in a campaign and its cost."""

    name: str
    labels: int
    skips: int
    gold_answers: int
    documents: int          # documents annotated exhaustively (mentions and relations done)
    cost: float

    @property
    def answers(self) -> int:
        return self.labels + self.skips + self.gold_answers


@dataclass(frozen=True)
class CampaignCost:
    campaign: str
    prices: dict[str, float]
    submissions: list[SubmissionCost]
    annotators: list[AnnotatorCost]
    answers: int
    documents: int
    cost: float


def campaign_costs(store: LabelStore, camp: CampaignRow, team: str | None = None,
                   at: dict[str, float] | None = None) -> CampaignCost:
    """The campaign's costs at its stored prices (:func:`prices`; ``at`` replaces those of
    the tasks it names, for this answer only: nothing is stored); with ``team`` only that
    team's submissions (no annotator, and the campaign's totals left at 0: a submitter sees
    their own submissions' cost only)."""
    from assay.service.exhaustive_store import work_table as w
    s, ji, j = submissions_table, job_items_table, judgments_table
    price = {**prices(store.engine, camp.name), **(at or {})}
    human = ((j.c.dataset == camp.dataset) & (j.c.annotator != camp.annotator)
             & (j.c.status != Status.PENDING.value))
    with store.engine.connect() as conn:
        per_item = dict(conn.execute(select(j.c.item, func.count()).where(human)
                                     .group_by(j.c.item)).all())
        subs = conn.execute(select(s.c.id, s.c.team, s.c.system, s.c.state).where(
            s.c.campaign == camp.name).order_by(s.c.id)).all()
        queued: dict[int, list[str]] = {}
        for sid, item in conn.execute(select(ji.c.submission_id, ji.c.item).where(
                ji.c.submission_id.in_([x.id for x in subs]))):
            queued.setdefault(int(sid), []).append(str(item))
        by_worker: dict[str, dict[str, int]] = {}
        if team is None:
            for who, status, n in conn.execute(select(j.c.annotator, j.c.status, func.count())
                                               .where(human).group_by(j.c.annotator,
                                                                      j.c.status)):
                by_worker.setdefault(who, {})[status] = int(n)
            for who, n in conn.execute(select(j.c.annotator, func.count()).where(
                    j.c.dataset == gold_dataset(camp.dataset)).group_by(j.c.annotator)):
                by_worker.setdefault(who, {})["gold"] = int(n)
            for who, n in conn.execute(select(w.c.annotator, func.count()).where(
                    (w.c.campaign == camp.name) & (w.c.state == "done")).group_by(
                    w.c.annotator)):
                by_worker.setdefault(who, {})["documents"] = int(n)
    out, seen = [], set()
    for x in subs:
        items = set(queued.get(int(x.id), []))
        added = items - seen
        seen |= items
        if team is not None and x.team != team:
            continue
        paid = sum(int(per_item.get(i, 0)) for i in added)
        out.append(SubmissionCost(int(x.id), x.team, x.system, x.state, len(items), len(added),
                                  sum(int(per_item.get(i, 0)) for i in items), paid,
                                  _money(paid * price["verification"])))
    people = []
    for who in sorted(by_worker):
        got = by_worker[who]
        labels, skips = got.get(Status.JUDGED.value, 0), got.get(Status.SKIPPED.value, 0)
        gold, docs = got.get("gold", 0), got.get("documents", 0)
        people.append(AnnotatorCost(who, labels, skips, gold, docs, _money(
            (labels + skips + gold) * price["verification"] + docs * price["exhaustive"])))
    answers = sum(a.answers for a in people)
    documents = sum(a.documents for a in people)
    return CampaignCost(camp.name, price, out, people, answers, documents,
                        _money(sum(a.cost for a in people)))


def _money(x: float) -> float:
    return round(x, 6)


__all__ = ["DEFAULT_PRICES", "TASKS", "AnnotatorCost", "CampaignCost", "SubmissionCost",
           "campaign_costs", "parse_price", "prices", "set_prices", "totals"]

"""What a flag takes back (issue 15; seeds 000/001). While an annotator's flag is live
(:mod:`assay.service.flags`) their work counts in no decision: the queue leaves their votes
out when it counts an item's votes (:func:`assay.service.queue._votes`, read at each vote and
each serve) and the exhaustive documents leave out the documents they finished
(:func:`assay.service.exhaustive_store.counted_works`). What was decided *before* the flag with
their work is decided afresh without it, in the flag's own write transaction (:func:`flagged`,
called by :func:`assay.service.flags.check`):

* every queue item they labelled is decided again from the other votes
  (:func:`assay.service.queue.decide`): kept when the decision is the same; else its row takes
  the new decision, or is reopened (served to more annotators) when the other votes no longer
  decide it. When the campaign has recorded its label of the item already (a job used it), that
  label follows (:func:`follow`): the new decision, or a skip while the item is reopened or
  undecidable — the estimates treat the item as unlabelled then, as an undecidable one — and
  the vote that decides it again writes the decision there (:func:`assay.service.queue.vote_in`);
  a job's pending claim of that label is given it too, so a decision the job read just before
  the flag is not recorded after it;
* every document they finished whose truth is recorded is settled again from the other
  annotators done (:func:`assay.service.exhaustive_model.settled` over max(k, their number)): the
  same truth is kept, another replaces it, and none (more annotators needed) takes the truth
  back, so the document is offered again. The campaign's unit tables are written on the flag's
  connection (another would wait for it on SQLite);
* every open item that a skip left waiting only for live-flagged annotators (every other
  active annotator has answered it and no label is decided) is closed *undecidable*
  (:func:`close_unanswerable`): the flagged are served nothing, so their answer is not awaited.

A clear (:func:`clear`: the flag's clear and what follows, one write transaction under the
campaign's locks) decides again the open items they labelled, their votes counted again, and
settles afresh the documents they finished that have no truth; what was decided without them
meanwhile stays. Both are audited (``flag-redecided``) with the items changed.
"""
from __future__ import annotations

import json
from typing import Any

from sqlalchemy import delete, insert, select, update

from assay.labels.schema import Status, judgments_table, now
from assay.labels.store import LabelStore
from assay.ondemand.store import CampaignRow
from assay.service.auth import audit
from assay.service.schema import queue_table, records_table


def follow(conn: Any, camp: CampaignRow, item: str, decided: int | None,
           claims: bool = False) -> None:
    """The campaign's recorded label of ``item``, if it has one, made the queue's decision
    (``decided``; None: a skip, the item unlabelled in the estimates). With ``claims`` (a
    flag's or a clear's transaction), a job's claim of the label is given the decision too:
    a job claims the label (a pending entry) before it reads the queue's decision and records
    it after, and its record does not overwrite an entry that is no longer pending, so a
    decision read just before the flag is not recorded after it
    (:meth:`assay.labels.store.LabelStore.claim`, ``record``). A vote leaves claims alone:
    a job reads a decision only once it is settled (:func:`assay.service.queue.settled_before`)."""
    j = judgments_table
    mine = (j.c.dataset == camp.dataset) & (j.c.item == item) & (j.c.annotator == camp.annotator)
    if not claims:
        mine = mine & (j.c.status != Status.PENDING.value)
    conn.execute(update(j).where(mine).values(
        value=decided, claim=None,
        status=(Status.SKIPPED if decided is None else Status.JUDGED).value))


def redecide(conn: Any, camp: CampaignRow, items: list[str], only_open: bool) -> list[str]:
    """Decide ``items`` again from their votes now (live-flagged annotators' left out), in the
    caller's write transaction; ``only_open``: the open ones only. Returns the items whose
    decision or state changed."""
    from assay.service.queue import _nobody_left, _votes, decide, settings_in
    q, k, changed = queue_table, settings_in(conn, camp.name).k, []
    for item in items:
        row = conn.execute(select(q).where((q.c.campaign == camp.name) & (q.c.item == item))
                           .with_for_update()).first()
        if row is None or (only_open and row.resolved_at is not None):
            continue
        ones, zeros = _votes(conn, camp, item)
        decided, needed = decide(ones, zeros, k)
        closed = decided is not None or needed <= ones + zeros or (   # closed undecidable
            row.resolved_at is not None and row.value is None           # as every annotator
            and _nobody_left(conn, camp, item))                         # answered: stays
        was = (row.resolved_at is not None, None if row.value is None else int(row.value))
        if was == (closed, decided if closed else None) and (closed or row.needed == needed):
            continue
        conn.execute(update(q).where(q.c.id == row.id).values(
            needed=needed, value=decided if closed else None,
            resolved_at=now() if closed else None))
        follow(conn, camp, item, decided if closed else None, claims=True)
        changed.append(item)
    return changed


def close_unanswerable(conn: Any, store: LabelStore, camp: CampaignRow,
                       annotator: str) -> list[str]:
    """The open items that a skip left waiting only for live-flagged annotators, closed
    *undecidable* (as :func:`assay.service.queue.vote_in` closes an item every active annotator
    has answered, one skipping it, with no label decided): a flagged annotator is served
    nothing, so their answer is not awaited (:func:`assay.service.queue._nobody_left`).
    Audited ``undecidable`` (by ``annotator``, the flag's); returns the items closed."""
    from assay.service.queue import _flagged, _nobody_left, _votes, decide, settings_in
    q, j, k = queue_table, judgments_table, settings_in(conn, camp.name).k
    skipped = select(j.c.item).where(
        (j.c.dataset == camp.dataset) & (j.c.status == Status.SKIPPED.value)
        & (j.c.annotator != camp.annotator) & j.c.annotator.not_in(_flagged(camp.name)))
    items = conn.execute(select(q.c.item).where(
        (q.c.campaign == camp.name) & q.c.resolved_at.is_(None) & q.c.item.in_(skipped))
        .order_by(q.c.id)).scalars().all()
    closed = []
    for item in items:
        ones, zeros = _votes(conn, camp, item)
        decided, _ = decide(ones, zeros, k)
        if decided is not None or not _nobody_left(conn, camp, item):
            continue
        conn.execute(update(q).where((q.c.campaign == camp.name) & (q.c.item == item)
                                     & q.c.resolved_at.is_(None))
                     .values(value=None, resolved_at=now()))
        follow(conn, camp, item, None, claims=True)
        audit(store.engine, annotator, "undecidable", camp.name, item,
              {"ones": ones, "zeros": zeros, "flagged": annotator}, conn=conn)
        closed.append(str(item))
    return closed


def _resettle_documents(conn: Any, camp: CampaignRow, annotator: str) -> list[str]:
    """The documents ``annotator`` finished whose truth is recorded, settled again without
    the live-flagged annotators' work (the module's docstring); returns those changed."""
    from assay.ondemand.schema import unit_truth_table as ut
    from assay.ondemand.schema import units_table as u
    from assay.service import exhaustive_store as xs
    from assay.service.exhaustive_model import settled, true_items
    w = xs.work_table
    mine = set(conn.execute(select(w.c.unit).where(
        (w.c.campaign == camp.name) & (w.c.annotator == annotator) & (w.c.state == "done"))
        ).scalars().all()) & xs.recorded(conn, camp.id)
    if not mine:
        return []
    k = xs.documents_k_in(conn, camp.name)
    texts = {r.record: str(json.loads(r.data).get("text") or "") for r in conn.execute(
        select(records_table.c.record, records_table.c.data).where(
            (records_table.c.campaign == camp.name) & records_table.c.record.in_(mine)))}
    changed = []
    for unit in sorted(mine):
        done = xs.counted_works(conn, camp.name, unit)
        truth = settled([true_items(d.mentions, d.relations, texts.get(unit, ""))
                         for d in done.values()], max(k, len(done)))
        key = (ut.c.campaign_id == camp.id) & (ut.c.unit == unit)
        have = set(conn.execute(select(ut.c.item).where(key)).scalars().all())
        if truth is not None and set(truth) == have:
            continue
        conn.execute(delete(ut).where(key))
        conn.execute(delete(u).where((u.c.campaign_id == camp.id) & (u.c.unit == unit)))
        if truth is not None:
            conn.execute(insert(u).values(campaign_id=camp.id, unit=unit, created_at=now()))
            if truth:
                conn.execute(insert(ut), [{"campaign_id": camp.id, "unit": unit, "item": i}
                                          for i in set(truth)])
        changed.append(unit)
    return changed


def _labelled(conn: Any, camp: CampaignRow, annotator: str) -> list[str]:
    j = judgments_table
    return [str(i) for i in conn.execute(select(j.c.item).where(
        (j.c.dataset == camp.dataset) & (j.c.annotator == annotator)
        & (j.c.status == Status.JUDGED.value)).order_by(j.c.id)).scalars().all()]


def flagged(conn: Any, store: LabelStore, camp: CampaignRow, annotator: str) -> None:
    """In the transaction that writes ``annotator``'s flag (under the campaign's lock): what
    was decided with their work decided afresh without it (the module's docstring)."""
    items = redecide(conn, camp, _labelled(conn, camp, annotator), only_open=False)
    items += [i for i in close_unanswerable(conn, store, camp, annotator) if i not in items]
    docs = _resettle_documents(conn, camp, annotator)
    if items or docs:
        audit(store.engine, annotator, "flag-redecided", camp.name,
              detail={"items": items, "documents": docs}, conn=conn)


def _settle_cleared(conn: Any, camp: CampaignRow, annotator: str) -> list[str]:
    """After ``annotator``'s flag is cleared (in the clear's transaction): every document they
    finished that has no truth yet settled afresh, their work counted again
    (:func:`assay.service.exhaustive.settle`); returns the documents whose truth is now
    recorded. One that cannot be recorded (the corpus's number of units reached) is left as
    it is."""
    from assay.errors import AssayError
    from assay.service import exhaustive_store as xs
    from assay.service.exhaustive import settle
    docs = xs.texts_in(conn, camp.name)
    if not docs:
        return []
    have, k = xs.recorded(conn, camp.id), xs.documents_k_in(conn, camp.name)
    states = xs._states(conn, camp.name)
    out = []
    for unit in sorted(docs):
        if unit in have or states.get(unit, {}).get(annotator) != "done":
            continue
        try:
            if settle(conn, camp, unit, docs[unit], xs.counted_works(conn, camp.name, unit),
                      k) is not None:
                out.append(unit)
        except AssayError:          # checked before anything is written: nothing to undo
            continue
    return out


def clear(store: LabelStore, camp: CampaignRow, annotator: str,
          by: str) -> tuple[list[str], list[str]] | None:
    """Clear ``annotator``'s live flag (:func:`assay.service.flags.clear`, audited) and count
    their work again, in one write transaction under the campaign's locks (as a flag's write:
    :func:`assay.service.queue._lock_flag`): the open items they labelled decided again
    (:func:`redecide`) and the documents they finished with no truth settled afresh
    (:func:`_settle_cleared`). Returns (items redecided, documents settled); None, nothing
    written, when they have no live flag."""
    from assay.service.flags import clear_in
    from assay.service.queue import _lock_flag
    with store.engine.begin() as conn:
        _lock_flag(conn, camp.name)
        if not clear_in(conn, store.engine, camp.name, annotator, by):
            return None
        items = redecide(conn, camp, _labelled(conn, camp, annotator), only_open=True)
        if items:
            audit(store.engine, annotator, "flag-redecided", camp.name,
                  detail={"items": items, "documents": []}, conn=conn)
        return items, _settle_cleared(conn, camp, annotator)


def cleared(store: LabelStore, camp: CampaignRow, annotator: str) -> list[str]:
    """After ``annotator``'s flag is cleared: the open items they labelled decided again, their
    votes counted (one write transaction under the campaign's lock); returns those changed."""
    from assay.service.queue import _lock
    with store.engine.begin() as conn:
        _lock(conn, camp.name)
        items = redecide(conn, camp, _labelled(conn, camp, annotator), only_open=True)
        if items:
            audit(store.engine, annotator, "flag-redecided", camp.name,
                  detail={"items": items, "documents": []}, conn=conn)
    return items


__all__ = ["clear", "cleared", "close_unanswerable", "flagged", "follow", "redecide"]

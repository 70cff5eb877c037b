"""Where exhaustive annotation is kept (revision 0007), beside ``assay_svc_mentions``:

* ``exhaustive_work`` — one row per (campaign, document, annotator): ``state`` is ``draft``
  (mentions saved, not submitted: only this annotator sees them), ``mentions`` (submitted: they
  are in ``assay_svc_mentions`` and the per-pair relation task is next) or ``done`` (relations
  chosen); ``mentions`` holds the mention list (JSON), ``relations`` the chosen pairs;
* ``exhaustive_settings`` — a campaign's annotators per document k. Without a row, the
  campaign's queue k (``assay_svc_campaign_settings``; the service's default 3 without one).

A document is offered to an annotator until k annotators are done with it or its truth is
recorded, never again to one who is done with it; its truth is recorded as soon as the ones
done settle it (:func:`assay.service.exhaustive_model.settled`: two who agree of k = 3).

A flagged annotator's work (:func:`assay.service.flags.flagged`: a live flag) is not counted
while the flag is live: the documents they finished are not among a document's k done nor in
its truth (:func:`counted_works`), and their drafts do not hold a document when documents are
handed out (:func:`offered`, :func:`lease`). Their rows are kept: a clear counts them again.
"""
from __future__ import annotations

import datetime as dt
import json
from dataclasses import dataclass
from typing import Any

from sqlalchemy import (Column, DateTime, Integer, String, Table, Text, delete, insert,
                        select)
from sqlalchemy.engine import Engine

from assay.errors import AssayInputError
from assay.labels.schema import now
from assay.service.exhaustive_model import (Agreement, Mention, mention_agreement,
                                            pair_tasks, relation_kappa)
from assay.service.schema import (NAME, leases_table, mentions_table, records_table,
                                  service_metadata)

STATES = ("draft", "mentions", "done")

work_table = Table(
    "assay_svc_exhaustive_work", service_metadata,
    Column("campaign", String(NAME), primary_key=True),
    Column("unit", String(NAME), primary_key=True),
    Column("annotator", String(NAME), primary_key=True),
    Column("state", String(16), nullable=False),        # draft | mentions | done
    Column("mentions", Text, nullable=False),           # JSON list of Mention.as_dict()
    Column("relations", Text, nullable=True),           # JSON [[first, second, value], ...]
    Column("updated_at", DateTime, nullable=False),
)

exhaustive_settings_table = Table(
    "assay_svc_exhaustive_settings", service_metadata,
    Column("campaign", String(NAME), primary_key=True),
    Column("k", Integer, nullable=False),               # annotators per document
)


@dataclass(frozen=True)
class Work:
    """An annotator's work on a document."""

    state: str
    mentions: list[Mention]
    relations: dict[tuple[int, int], str]


def documents_k(engine: Engine, campaign: str) -> int:
    """Annotators per document: the campaign's own setting, else its queue's k
    (:func:`assay.service.queue.settings`: the service's default, 3, when it has none)."""
    with engine.connect() as conn:
        return documents_k_in(conn, campaign)


def documents_k_in(conn: Any, campaign: str) -> int:
    """:func:`documents_k` read on ``conn`` (e.g. inside a write transaction)."""
    from assay.service.queue import settings_in
    k = conn.execute(select(exhaustive_settings_table.c.k).where(
        exhaustive_settings_table.c.campaign == campaign)).scalar()
    return settings_in(conn, campaign).k if k is None else int(k)


def set_documents_k(engine: Engine, campaign: str, k: int) -> None:
    if k < 1:
        raise ValueError("annotators per document must be at least 1")
    t = exhaustive_settings_table
    with engine.begin() as conn:
        conn.execute(delete(t).where(t.c.campaign == campaign))
        conn.execute(t.insert().values(campaign=campaign, k=k))


def _mentions(raw: str) -> list[Mention]:
    return [Mention(int(m["start"]), int(m["end"]), m["text"], m["type"], m["canonical"],
                    m.get("link") or None) for m in json.loads(raw)]


def work(engine: Engine, campaign: str, unit: str, annotator: str) -> Work | None:
    with engine.connect() as conn:
        return work_in(conn, campaign, unit, annotator)


def work_in(conn: Any, campaign: str, unit: str, annotator: str) -> Work | None:
    """:func:`work` on the caller's connection (inside a write transaction)."""
    t = work_table
    r = conn.execute(select(t).where((t.c.campaign == campaign) & (t.c.unit == unit)
                                     & (t.c.annotator == annotator))).first()
    if r is None:
        return None
    rel = {(int(a), int(b)): str(v) for a, b, v in json.loads(r.relations or "[]")}
    return Work(r.state, _mentions(r.mentions), rel)


def texts(engine: Engine, campaign: str) -> dict[str, str]:
    """The campaign's documents: kept records with a ``text`` field."""
    with engine.connect() as conn:
        return texts_in(conn, campaign)


def texts_in(conn: Any, campaign: str) -> dict[str, str]:
    """:func:`texts` read on ``conn`` (e.g. inside a write transaction)."""
    rows = conn.execute(select(records_table.c.record, records_table.c.data).where(
        records_table.c.campaign == campaign).order_by(records_table.c.record)).all()
    out = {}
    for r in rows:
        text = json.loads(r.data).get("text")
        if text:
            out[r.record] = str(text)
    return out


def _states(conn: Any, campaign: str, but: set[str] | None = None
            ) -> dict[str, dict[str, str]]:
    """unit -> annotator -> state of the campaign's work, leaving out the annotators in
    ``but``."""
    t = work_table
    out: dict[str, dict[str, str]] = {}
    for r in conn.execute(select(t.c.unit, t.c.annotator, t.c.state).where(
            t.c.campaign == campaign)):
        if not but or r.annotator not in but:
            out.setdefault(r.unit, {})[r.annotator] = r.state
    return out


def _flagged(conn: Any, campaign: str, annotator: str | None = None) -> set[str]:
    """The campaign's live-flagged annotators but ``annotator`` (whose own work is theirs to
    see: the pages refuse them while flagged)."""
    from assay.service.flags import flagged
    return flagged(conn, campaign) - {annotator}


def offered(engine: Engine, campaign: str, annotator: str, truth: set[str]) -> dict[str, str]:
    """The documents ``annotator`` may work on (unit -> text): no truth recorded, fewer than k
    annotators done, and not done by them; the ones they have started first. A flagged
    annotator's work is not counted (the module's docstring)."""
    k = documents_k(engine, campaign)
    with engine.connect() as conn:
        states = _states(conn, campaign, _flagged(conn, campaign, annotator))
    started, fresh = {}, {}
    for unit, text in texts(engine, campaign).items():
        by = states.get(unit, {})
        done = sum(s == "done" for s in by.values())
        if unit in truth or by.get(annotator) == "done" or done >= k:
            continue
        (started if annotator in by else fresh)[unit] = text
    return {**started, **fresh}


def lease(engine: Engine, campaign: str, annotator: str, units: list[str]) -> str | None:
    """The document to show ``annotator``, leased to them for
    :data:`assay.service.queue.LEASE_SECONDS`; the first of: one they have started, one they
    hold, one others finished that needs another annotator and nobody else is on, one nobody is
    on, one with room for another annotator (of k), any. Concurrent annotators are given
    different documents while there are enough, and a document others finished is completed
    before new ones are begun. A flagged annotator's lease or draft holds no document, and
    the documents they finished are not counted; a flagged ``annotator`` (read under the
    lock) is given none."""
    from assay.service.queue import LEASE_SECONDS, _lock
    le = leases_table
    if not units:
        return None
    k = documents_k(engine, campaign)
    t = now()
    keys = {f"#doc:{u}": u for u in units}
    from assay.service.flags import live
    with engine.begin() as conn:
        _lock(conn, campaign)
        if live(conn, campaign, annotator):     # flagged since the page's check: no lease
            return None
        flagged = _flagged(conn, campaign, annotator)
        states = _states(conn, campaign, flagged)
        held = conn.execute(select(le.c.item, le.c.annotator).where(
            (le.c.campaign == campaign) & le.c.item.in_(list(keys)) & (le.c.expires_at > t))
            ).all()
        on: dict[str, set[str]] = {}         # others working on it (a lease or a draft)
        for h in held:
            if h.annotator != annotator and h.annotator not in flagged:
                on.setdefault(keys[h.item], set()).add(h.annotator)
        for u, by in states.items():
            on.setdefault(u, set()).update(a for a, s in by.items()
                                           if s != "done" and a != annotator)

        def done(u: str) -> int:
            return sum(s == "done" for s in states.get(u, {}).values())
        mine = {keys[h.item] for h in held if h.annotator == annotator}
        order = ([u for u in units if annotator in states.get(u, {})],
                 [u for u in units if u in mine],
                 [u for u in units if done(u) and not on.get(u)],
                 [u for u in units if not on.get(u)],
                 [u for u in units if done(u) + len(on.get(u, ())) < k],
                 units)
        unit = next(c for c in order if c)[0]
        conn.execute(delete(le).where((le.c.campaign == campaign)
                                      & (le.c.item == f"#doc:{unit}")
                                      & (le.c.annotator == annotator)))
        conn.execute(le.insert().values(campaign=campaign, item=f"#doc:{unit}",
                                        annotator=annotator,
                                        expires_at=t + dt.timedelta(seconds=LEASE_SECONDS)))
    return unit


def save(conn: Any, campaign: str, unit: str, annotator: str, state: str,
         mentions: list[Mention], relations: dict[tuple[int, int], str] | None = None) -> None:
    """Write the annotator's work on the document (in the caller's transaction); submitted
    mentions (state ``mentions``) are also written to ``assay_svc_mentions``."""
    assert state in STATES
    t, m = work_table, mentions_table
    conn.execute(delete(t).where((t.c.campaign == campaign) & (t.c.unit == unit)
                                 & (t.c.annotator == annotator)))
    conn.execute(t.insert().values(
        campaign=campaign, unit=unit, annotator=annotator, state=state,
        mentions=json.dumps([x.as_dict() for x in mentions]),
        relations=None if relations is None else json.dumps(
            [[a, b, v] for (a, b), v in sorted(relations.items())]),
        updated_at=now()))
    if state == "mentions":
        conn.execute(delete(m).where((m.c.campaign == campaign) & (m.c.unit == unit)
                                     & (m.c.annotator == annotator)))
        if mentions:
            conn.execute(m.insert(), [
                {"campaign": campaign, "unit": unit, "position": k, "text": x.text,
                 "type": x.type, "canonical": x.canonical, "link": x.link,
                 "annotator": annotator, "created_at": now(), "start_char": x.start,
                 "end_char": x.end} for k, x in enumerate(mentions)])


def recorded(conn: Any, campaign_id: int) -> set[str]:
    """The documents whose truth the campaign has recorded, on the caller's connection (a
    read on another would wait for the caller's write transaction on SQLite)."""
    from assay.ondemand.schema import units_table as u
    return set(conn.execute(select(u.c.unit).where(u.c.campaign_id == campaign_id))
               .scalars().all())


def record_truth(conn: Any, camp: Any, unit: str, truth: list[str]) -> None:
    """Record ``unit``'s truth (its true item keys, possibly none) in the caller's write
    transaction (under the campaign's lock), as :meth:`OnDemandCampaign.annotate_units` does
    on its own: so the corpus-size check and the write are one step, and two finishes of
    different documents cannot both pass it. ``camp``: the campaign's row. An
    :class:`~assay.errors.AssayInputError` (nothing written) when the corpus's number of units
    is unknown or reached, or the unit is recorded with other true items; the same truth
    again writes nothing."""
    from assay.ondemand.schema import campaigns_table as c
    from assay.ondemand.schema import unit_truth_table as ut
    from assay.ondemand.schema import units_table as u
    have = recorded(conn, camp.id)
    if unit in have:
        got = set(conn.execute(select(ut.c.item).where(
            (ut.c.campaign_id == camp.id) & (ut.c.unit == unit))).scalars().all())
        if got != set(truth):
            raise AssayInputError(f"document {unit}", "already annotated with other true "
                                  "items", expected="each unit annotated once")
        return
    corpus = conn.execute(select(c.c.corpus_units).where(c.c.id == camp.id)).scalar()
    if corpus is None or len(have) + 1 > int(corpus):
        raise AssayInputError(f"campaign {camp.name!r}", f"{len(have) + 1} annotated units in "
                              f"a corpus of {corpus}", expected="at most as many as the corpus "
                              "(assay campaign new --corpus-units)")
    conn.execute(insert(u).values(campaign_id=camp.id, unit=unit, created_at=now()))
    if truth:
        conn.execute(insert(ut), [{"campaign_id": camp.id, "unit": unit, "item": i}
                                  for i in sorted(set(truth))])


def release(conn: Any, campaign: str, unit: str, annotator: str) -> None:
    """Release ``annotator``'s lease of the document (in the caller's transaction): done with
    it, they hold it no more."""
    le = leases_table
    conn.execute(delete(le).where((le.c.campaign == campaign) & (le.c.item == f"#doc:{unit}")
                                  & (le.c.annotator == annotator)))


def done_works(conn: Any, campaign: str, unit: str) -> dict[str, Work]:
    t = work_table
    rows = conn.execute(select(t).where((t.c.campaign == campaign) & (t.c.unit == unit)
                                        & (t.c.state == "done"))).all()
    return {r.annotator: Work(r.state, _mentions(r.mentions), {
        (int(a), int(b)): str(v) for a, b, v in json.loads(r.relations or "[]")})
        for r in rows}


def counted_works(conn: Any, campaign: str, unit: str) -> dict[str, Work]:
    """:func:`done_works` of the annotators with no live flag: the ones that make the
    document's truth."""
    flagged = _flagged(conn, campaign)
    return {a: w for a, w in done_works(conn, campaign, unit).items() if a not in flagged}


def agreement(engine: Engine, campaign: str) -> Agreement:
    """Mean pairwise typed-span F1 of the annotators' submitted mentions, over the documents
    two or more annotators submitted (:func:`~assay.service.exhaustive_model.mention_agreement`;
    mentions stored before revision 0007 have no span and are left out). A live-flagged
    annotator's mentions are left out, as their work is from the truth."""
    t, m = work_table, mentions_table
    spans: dict[str, dict[str, set[tuple[int, int, str]]]] = {}
    with engine.connect() as conn:
        out = _flagged(conn, campaign)
        for r in conn.execute(select(t.c.unit, t.c.annotator).where(
                (t.c.campaign == campaign) & t.c.state.in_(("mentions", "done")))):
            if r.annotator not in out:
                spans.setdefault(r.unit, {})[r.annotator] = set()
        for r in conn.execute(select(m.c.unit, m.c.annotator, m.c.start_char, m.c.end_char,
                                     m.c.type).where((m.c.campaign == campaign)
                                                     & m.c.start_char.is_not(None))):
            if r.annotator in spans.get(r.unit, {}):
                spans[r.unit][r.annotator].add((int(r.start_char), int(r.end_char), r.type))
    return mention_agreement(spans)


def relation_agreement(engine: Engine, campaign: str) -> tuple[float, int]:
    """Fleiss' κ of the relation choices over the pair tasks (the same two spans) that two or
    more annotators of a document had (:func:`~assay.service.exhaustive_model.relation_kappa`),
    and how many; a live-flagged annotator's choices left out (:func:`counted_works`)."""
    docs = texts(engine, campaign)
    choices: dict[tuple[Any, ...], dict[str, str]] = {}
    with engine.connect() as conn:
        units = [u for u, by in _states(conn, campaign, _flagged(conn, campaign)).items()
                 if sum(s == "done" for s in by.values()) >= 2 and u in docs]
        works = {u: counted_works(conn, campaign, u) for u in units}
    for u, by in works.items():
        for who, w in by.items():
            for t in pair_tasks(w.mentions, docs[u]):
                a, b = w.mentions[t.first], w.mentions[t.second]
                choices.setdefault((u, a.start, a.end, b.start, b.end), {})[who] = \
                    w.relations.get((t.first, t.second), "")
    return relation_kappa(choices)


@dataclass(frozen=True)
class Summary:
    """A campaign's exhaustive annotation for the admin page."""

    campaign: str
    k: int
    documents: int
    annotations: int        # (document, annotator) done
    agreement: Agreement
    relation_kappa: float   # Fleiss' κ of the relation choices (NaN: undefined)
    relation_tasks: int     # pair tasks two or more annotators had


def summaries(engine: Engine, campaigns: list[str]) -> list[Summary]:
    """One per campaign with documents to annotate exhaustively."""
    out = []
    for c in campaigns:
        n = len(texts(engine, c))
        if not n:
            continue
        with engine.connect() as conn:
            done = sum(s == "done" for by in _states(conn, c).values() for s in by.values())
        out.append(Summary(c, documents_k(engine, c), n, done, agreement(engine, c),
                           *relation_agreement(engine, c)))
    return out


__all__ = ["STATES", "Summary", "Work", "agreement", "counted_works", "documents_k",
           "done_works", "exhaustive_settings_table", "lease", "offered", "record_truth",
           "recorded", "relation_agreement", "release", "save", "set_documents_k", "summaries",
           "texts", "texts_in", "work", "work_in", "work_table"]

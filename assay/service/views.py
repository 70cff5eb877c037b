"""What each role may see: a campaign's scores filtered to the caller's team, the plot of them
(:func:`assay.interfaces.campaign_report.campaign_figure`), and an item as an annotator sees it
(an ER pair's two records side by side, else the item's key and structure; never a system's
name, an output or a score).

>>> split_key("12\\t34")
['12', '34']
"""
from __future__ import annotations

import dataclasses
import json
from typing import Any

from fastapi import HTTPException
from sqlalchemy import select

from assay.formats.pool import KEY_SEPARATOR
from assay.labels.store import LabelStore
from assay.ondemand import OnDemandCampaign
from assay.ondemand.campaign import CampaignReport
from assay.ondemand.store import CampaignRow
from assay.ondemand.structured import LEVELS
from assay.ondemand.schema import campaigns_table, items_table
from assay.service.auth import User
from assay.service.schema import records_table


def campaigns(store: LabelStore) -> list[str]:
    with store.engine.connect() as conn:
        return list(conn.execute(select(campaigns_table.c.name).order_by(
            campaigns_table.c.id)).scalars().all())


def campaign_row(store: LabelStore, name: str) -> CampaignRow | None:
    """A campaign's row by one read (the hot paths: a label, the next item), None if none."""
    with store.engine.connect() as conn:
        r = conn.execute(select(campaigns_table).where(campaigns_table.c.name == name)).first()
    if r is None:
        return None
    return CampaignRow(int(r.id), r.name, r.dataset, r.annotator,
                       None if r.corpus_units is None else int(r.corpus_units),
                       float(r.confidence), float(r.half_width), int(r.submission_cap),
                       None if r.campaign_cap is None else int(r.campaign_cap), int(r.seed))


def visible(user: User, system: str) -> bool:
    """An admin sees every system; a submitter only their team's (``team/system``)."""
    return user.role == "admin" or (user.role == "submitter" and user.team is not None
                                    and "/" in system and system.split("/")[0] == user.team)


def scores_for(store: LabelStore, campaign: str, user: User,
               level: str = "instance") -> CampaignReport:
    """The campaign's joint report at ``level`` (instance, relation or entity:
    :meth:`~assay.ondemand.campaign.OnDemandCampaign.report`) with only the systems ``user`` may
    see (and, for a submitter, no notes: they may name other systems); an unknown level is a
    400."""
    if level not in LEVELS:
        raise HTTPException(400, f"level {level!r}: expected one of {', '.join(LEVELS)}")
    camp = OnDemandCampaign.open(store, campaign)
    rep = camp.report(level=level)
    systems = [s for s in rep.systems if visible(user, s.name)]
    notes = rep.notes if user.role == "admin" else []
    return dataclasses.replace(rep, systems=systems,
                               notes=notes + relabelling_notes(store, camp.row, systems))


def relabelling(store: LabelStore, row: CampaignRow) -> dict[str, int]:
    """Per system, its drawn items whose label a flag took back and that wait for it again:
    the campaign's recorded label a skip while the queue item is open (reopened by a flag,
    :mod:`assay.service.resettle`). The estimates, re-made from the label store at every
    view, leave them out until a vote decides them again; the decision is then written to the
    campaign's label (:func:`assay.service.resettle.follow`) and they count again, so no
    replacement is drawn (it would change the draws the design made). The key ``""``: the
    campaign's distinct such items."""
    from assay.labels.schema import Status, judgments_table as j
    from assay.ondemand.schema import od_draws_table as d, systems_table as s
    from assay.service.schema import queue_table as q
    took = select(j.c.item).where((j.c.dataset == row.dataset)
                                  & (j.c.annotator == row.annotator)
                                  & (j.c.status == Status.SKIPPED.value))
    reopened = select(q.c.item).where((q.c.campaign == row.name) & q.c.resolved_at.is_(None)
                                      & q.c.item.in_(took))
    with store.engine.connect() as conn:
        rows = conn.execute(select(s.c.name, d.c.item).distinct().join(
            s, s.c.id == d.c.system_id).where((d.c.campaign_id == row.id)
                                              & d.c.item.in_(reopened))).all()
    out: dict[str, int] = {}
    for name, _ in rows:
        out[str(name)] = out.get(str(name), 0) + 1
    if rows:
        out[""] = len({i for _, i in rows})
    return out


def relabelling_notes(store: LabelStore, row: CampaignRow, systems: list[Any]) -> list[str]:
    """The notes of :func:`relabelling` for the report of ``systems`` (those the caller may
    see; the campaign's count names no system)."""
    got = relabelling(store, row)
    if not got:
        return []
    n = got[""]
    out = [f"{n} drawn item{'s' if n != 1 else ''} wait{'' if n != 1 else 's'} for a label "
           "again (a flagged annotator's vote took it back): the estimates leave "
           f"{'them' if n != 1 else 'it'} out until decided again, then count "
           f"{'them' if n != 1 else 'it'} again"]
    for sy in systems:
        if got.get(sy.name):
            m = got[sy.name]
            out.append(f"{sy.name}: {m} of its drawn items wait{'' if m != 1 else 's'} for "
                       "a label again")
    return out


def plot_png(rep: CampaignReport) -> bytes | None:
    if not rep.systems:
        return None
    from assay.interfaces.campaign_report import campaign_figure
    return campaign_figure(rep)


def score_rows(rep: CampaignReport) -> list[dict[str, Any]]:
    """One row per system: each measure as ``estimate [low, high]`` (campaign_report's cell),
    an em dash while it has no estimate yet (no label)."""
    from assay.interfaces.campaign_report import cell

    def show(e: Any) -> str:
        return "—" if e is None or e.estimate != e.estimate else cell(e)
    return [{"system": s.name, "size": s.size, "labels": s.labels_used,
             "finished": s.finished, "precision": show(s.estimates.get("precision")),
             "recall": show(s.estimates.get("recall")), "f1": show(s.estimates.get("f1")),
             "pooled_recall": show(s.estimates.get("pooled_recall"))} for s in rep.systems]


def split_key(item: str) -> list[str]:
    return str(item).split(KEY_SEPARATOR)


def display(store: LabelStore, row: CampaignRow, item: str) -> dict[str, Any]:
    """An item as an annotator sees it: ``{"kind": "pair", "left": {...}, "right": {...}}``
    when the key names two records of the campaign, else ``{"kind": "item", ...}`` with the
    key's parts and the item's structure columns (document, subject, relation, object)."""
    parts = split_key(item)
    with store.engine.connect() as conn:
        recs = {r.record: json.loads(r.data) for r in conn.execute(select(records_table).where(
            (records_table.c.campaign == row.name)
            & records_table.c.record.in_(parts))).all()}
        st = conn.execute(select(items_table).where(
            (items_table.c.campaign_id == row.id) & (items_table.c.item == item))).first()
    if len(parts) == 2 and all(p in recs for p in parts):
        left, right = recs[parts[0]], recs[parts[1]]
        fields = list(dict.fromkeys([*left, *right]))
        return {"kind": "pair", "ids": parts, "fields": fields, "left": left, "right": right}
    structure = {} if st is None else {k: getattr(st, k) for k in
                                       ("unit", "subject", "relation", "object")
                                       if getattr(st, k, None)}
    sentence = None
    if structure.get("unit") and structure.get("relation"):
        with store.engine.connect() as conn:
            r = conn.execute(select(records_table.c.data).where(
                (records_table.c.campaign == row.name)
                & (records_table.c.record == structure["unit"]))).scalar()
        text = None if r is None else json.loads(r).get("sentence") or json.loads(r).get("text")
        if text:
            sentence = highlight(str(text), [structure.get("subject", ""),
                                             structure.get("object", "")])
    return {"kind": "item", "parts": parts, "structure": structure, "sentence": sentence}


def highlight(text: str, words: list[str]) -> list[tuple[str, bool]]:
    """``text`` cut into (piece, marked) where each of ``words`` occurs (case-insensitive), for
    a provenance sentence with a relation's subject and object marked.

    >>> highlight("Ann Lee joined Acme in 2010.", ["ann lee", "Acme"])
    [('Ann Lee', True), (' joined ', False), ('Acme', True), (' in 2010.', False)]
    """
    import re
    words = sorted({w for w in words if w and w.strip()}, key=len, reverse=True)
    if not words:
        return [(text, False)]
    pat = re.compile("|".join(re.escape(w) for w in words), re.IGNORECASE)
    out: list[tuple[str, bool]] = []
    at = 0
    for m in pat.finditer(text):
        if m.start() > at:
            out.append((text[at:m.start()], False))
        out.append((m.group(0), True))
        at = m.end()
    if at < len(text):
        out.append((text[at:], False))
    return out


def add_records(store: LabelStore, campaign: str, rows: list[dict[str, Any]],
                id_column: str = "id") -> int:
    """Keep records shown to annotators (one transaction; a record already kept is replaced)."""
    from sqlalchemy import delete
    t = records_table
    out = [{"campaign": campaign, "record": str(r[id_column]),
            "data": json.dumps({k: ("" if v is None else str(v)) for k, v in r.items()
                                if k != id_column})} for r in rows]
    with store.engine.begin() as conn:
        for a in range(0, len(out), 500):
            chunk = out[a:a + 500]
            conn.execute(delete(t).where((t.c.campaign == campaign)
                                         & t.c.record.in_([r["record"] for r in chunk])))
            conn.execute(t.insert(), chunk)
    return len(out)


__all__ = ["add_records", "campaign_row", "campaigns", "display", "highlight", "plot_png",
           "relabelling", "relabelling_notes", "score_rows", "scores_for",
           "split_key", "visible"]

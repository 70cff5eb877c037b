"""Exhaustive annotation of a document (seed 001): the annotator marks every entity mention of a
unit's text with its type (PER / ORG / GPE / DATE / TITLE), canonical mention and optional link,
and the relation between mention pairs; finishing the document records the unit's true items
(``subject canonical <TAB> relation <TAB> object canonical``, the key of ``assay campaign
submit --key subject,relation,object``) with :meth:`OnDemandCampaign.annotate_units`, and the
mentions (``assay_svc_mentions``). Unlinked mentions are then clustered across documents
(``/clusters``: each gets a cluster name, the same name for the same entity). The documents are the campaign's kept records with a ``text`` field
(``POST /api/records``); one already annotated is not offered again.

>>> true_items([{"text": "Ann", "type": "PER", "canonical": "Ann Lee"},
...             {"text": "Acme", "type": "ORG"}], [{"subject": 0, "relation": "employer",
...             "object": 1}], "Ann joined Acme.")
['Ann Lee\\temployer\\tAcme']
"""
from __future__ import annotations

import datetime as dt
import json
from typing import Any
from urllib.parse import quote

from fastapi import APIRouter, HTTPException, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from sqlalchemy import delete, select, update

from assay.errors import AssayError, AssayInputError
from assay.formats.pool import KEY_SEPARATOR
from assay.labels.schema import now
from assay.ondemand import OnDemandCampaign
from assay.service import views
from assay.service.app import need, need_post, render, store_of
from assay.service.auth import audit
from assay.service.schema import mentions_table, records_table

TYPES = ("PER", "ORG", "GPE", "DATE", "TITLE")
router = APIRouter()


def true_items(mentions: list[dict[str, Any]], relations: list[dict[str, Any]],
               text: str) -> list[str]:
    """The unit's true item keys from its mentions and relations; a mention not in the text,
    an unknown type or a relation naming no mention is an :class:`AssayInputError`."""
    for k, m in enumerate(mentions):
        if not str(m.get("text", "")).strip() or str(m["text"]) not in text:
            raise AssayInputError(f"mention {k + 1}", f"{m.get('text')!r} is not in the text")
        if m.get("type") not in TYPES:
            raise AssayInputError(f"mention {k + 1}", f"type {m.get('type')!r}",
                                  expected=" / ".join(TYPES))
    keys = []
    for k, r in enumerate(relations):
        try:
            s, o = mentions[int(r["subject"])], mentions[int(r["object"])]
        except (KeyError, ValueError, IndexError, TypeError):
            raise AssayInputError(f"relation {k + 1}", "names no marked mention") from None
        rel = str(r.get("relation", "")).strip()
        if not rel or KEY_SEPARATOR in rel:
            raise AssayInputError(f"relation {k + 1}", "no relation name")
        canon = [str(m.get("canonical") or m["text"]).strip() for m in (s, o)]
        keys.append(KEY_SEPARATOR.join([canon[0], rel, canon[1]]))
    return list(dict.fromkeys(keys))


def _documents(request: Request, camp: OnDemandCampaign) -> list[tuple[str, str]]:
    done = set(camp.od.units(camp.row.id))
    with store_of(request).engine.connect() as conn:
        rows = conn.execute(select(records_table.c.record, records_table.c.data).where(
            records_table.c.campaign == camp.row.name).order_by(records_table.c.record)).all()
    out = []
    for r in rows:
        text = json.loads(r.data).get("text")
        if text and r.record not in done:
            out.append((r.record, str(text)))
    return out


@router.get("/exhaustive", response_class=HTMLResponse)
def page(request: Request, campaign: str, message: str | None = None) -> Response:
    c = need(request, "annotator", "admin")
    if views.campaign_row(store_of(request), campaign) is None:
        raise HTTPException(404, "no such campaign")
    camp = OnDemandCampaign.open(store_of(request), campaign)
    docs = _documents(request, camp)
    doc = _lease_document(store_of(request).engine, campaign, c.user.name,
                          [u for u, _ in docs])
    return render(request, "exhaustive.html", c, campaign=campaign, types=TYPES,
                  doc=None if doc is None else (doc, dict(docs)[doc]), left=len(docs),
                  message=message)


def _lease_document(engine: Any, campaign: str, annotator: str, units: list[str]
                    ) -> str | None:
    """The document to show ``annotator``: one they hold, else the first one nobody holds,
    leased to them for :data:`assay.service.queue.LEASE_SECONDS` (concurrent annotators get
    different documents; every one held: the first, as before)."""
    from assay.service.queue import LEASE_SECONDS, _lock
    from assay.service.schema import leases_table as le
    if not units:
        return None
    t = now()
    keys = {f"#doc:{u}": u for u in units}
    with engine.begin() as conn:
        _lock(conn, campaign)
        held = conn.execute(select(le.c.item, le.c.annotator).where(
            (le.c.campaign == campaign) & le.c.item.in_(list(keys)) & (le.c.expires_at > t))
            ).all()
        mine = [keys[h.item] for h in held if h.annotator == annotator]
        taken = {keys[h.item] for h in held}
        free = [u for u in units if u not in taken]
        unit = mine[0] if mine else (free[0] if free else units[0])
        conn.execute(delete(le).where((le.c.campaign == campaign)
                                      & (le.c.item == f"#doc:{unit}")
                                      & (le.c.annotator == annotator)))
        conn.execute(le.insert().values(campaign=campaign, item=f"#doc:{unit}",
                                        annotator=annotator,
                                        expires_at=t + dt.timedelta(seconds=LEASE_SECONDS)))
    return unit


@router.post("/exhaustive")
async def finish(request: Request) -> Response:
    c, form = await need_post(request, "annotator", "admin")
    campaign, unit = str(form.get("campaign", "")), str(form.get("unit", ""))
    if views.campaign_row(store_of(request), campaign) is None:
        raise HTTPException(404, "no such campaign")
    camp = OnDemandCampaign.open(store_of(request), campaign)
    docs = dict(_documents(request, camp))
    if unit not in docs:
        raise HTTPException(404, "no such document to annotate")
    try:     # everything checked before the first write
        mentions = json.loads(str(form.get("mentions") or "[]"))
        relations = json.loads(str(form.get("relations") or "[]"))
        keys = true_items(mentions, relations, docs[unit])
        corpus = camp.row.corpus_units
        if corpus is None or len(camp.od.units(camp.row.id)) + 1 > corpus:
            raise AssayInputError(f"campaign {campaign!r}", "its corpus's number of units is "
                                  f"{corpus}", expected="more units than annotated (set with "
                                  "assay campaign new --corpus-units)")
    except (ValueError, AssayError) as exc:
        raise HTTPException(400, " ".join(str(exc).split())) from None
    t, engine = mentions_table, store_of(request).engine
    try:     # the unit's truth first: another annotator's different truth writes nothing
        camp.annotate_units({unit: keys})
    except AssayError as exc:
        raise HTTPException(409, " ".join(str(exc).split())) from None
    with engine.begin() as conn:
        conn.execute(delete(t).where((t.c.campaign == campaign) & (t.c.unit == unit)))
        if mentions:
            conn.execute(t.insert(), [
                {"campaign": campaign, "unit": unit, "position": k, "text": str(m["text"]),
                 "type": m["type"], "canonical": str(m.get("canonical") or m["text"]).strip(),
                 "link": str(m.get("link") or "").strip() or None, "annotator": c.user.name,
                 "created_at": now()} for k, m in enumerate(mentions)])
        audit(engine, c.user.name, "exhaustive", campaign, unit,
              {"mentions": len(mentions), "relations": relations, "true_items": len(keys)},
              conn=conn)
    msg = quote(f"document {unit} done ({len(keys)} true items)")
    return RedirectResponse(f"/exhaustive?campaign={quote(campaign)}&message={msg}",
                            status_code=303)


# -- cross-document clustering of unlinked mentions ------------------------------------------
@router.get("/clusters", response_class=HTMLResponse)
def clusters(request: Request, campaign: str) -> Response:
    """Every mention with no link, across the campaign's documents, with its cluster (default
    suggestion: its canonical mention); the clusters given so far are offered."""
    c = need(request, "annotator", "admin")
    t = mentions_table
    with store_of(request).engine.connect() as conn:
        rows = conn.execute(select(t).where((t.c.campaign == campaign) & t.c.link.is_(None))
                            .order_by(t.c.type, t.c.canonical, t.c.unit, t.c.position)).all()
    names = sorted({r.cluster for r in rows if r.cluster})
    return render(request, "clusters.html", c, campaign=campaign, rows=rows, names=names)


@router.post("/clusters")
async def clusters_post(request: Request) -> Response:
    c, form = await need_post(request, "annotator", "admin")
    campaign = str(form.get("campaign", ""))
    given = {int(k[len("cluster_"):]): str(v).strip() for k, v in form.items()
             if k.startswith("cluster_") and k[len("cluster_"):].isdigit()}
    t, engine = mentions_table, store_of(request).engine
    with engine.begin() as conn:
        for mid, name in given.items():
            conn.execute(update(t).where((t.c.id == mid) & (t.c.campaign == campaign)
                                         & t.c.link.is_(None)).values(cluster=name or None))
        audit(engine, c.user.name, "clusters", campaign, detail={"mentions": len(given)},
              conn=conn)
    return RedirectResponse(f"/clusters?campaign={quote(campaign)}", status_code=303)


__all__ = ["TYPES", "router", "true_items"]

"""Exhaustive annotation of a document (seed 001): the annotator marks every entity mention of a
unit's text with its type (PER / ORG / GPE / DATE / TITLE), canonical mention and optional link,
and the relation between mention pairs; finishing the document records the unit's true items
(``subject canonical <TAB> relation <TAB> object canonical``, the key of ``assay campaign
submit --key subject,relation,object``) with :meth:`OnDemandCampaign.annotate_units`, and the
mentions in the audit log. The documents are the campaign's kept records with a ``text`` field
(``POST /api/records``); one already annotated is not offered again.

>>> true_items([{"text": "Ann", "type": "PER", "canonical": "Ann Lee"},
...             {"text": "Acme", "type": "ORG"}], [{"subject": 0, "relation": "employer",
...             "object": 1}], "Ann joined Acme.")
['Ann Lee\\temployer\\tAcme']
"""
from __future__ import annotations

import json
from typing import Any
from urllib.parse import quote

from fastapi import APIRouter, HTTPException, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from sqlalchemy import select

from assay.errors import AssayError, AssayInputError
from assay.formats.pool import KEY_SEPARATOR
from assay.ondemand import OnDemandCampaign
from assay.service import views
from assay.service.app import need, need_post, render, store_of
from assay.service.auth import audit
from assay.service.schema import records_table

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
    return render(request, "exhaustive.html", c, campaign=campaign, types=TYPES,
                  doc=docs[0] if docs else None, left=len(docs), message=message)


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
    try:
        mentions = json.loads(str(form.get("mentions") or "[]"))
        relations = json.loads(str(form.get("relations") or "[]"))
        keys = true_items(mentions, relations, docs[unit])
        camp.annotate_units({unit: keys})
    except (ValueError, AssayError) as exc:
        raise HTTPException(400, " ".join(str(exc).split())) from None
    audit(store_of(request).engine, c.user.name, "exhaustive", campaign, unit,
          {"mentions": mentions, "relations": relations, "true_items": len(keys)})
    msg = quote(f"document {unit} done ({len(keys)} true items)")
    return RedirectResponse(f"/exhaustive?campaign={quote(campaign)}&message={msg}",
                            status_code=303)


__all__ = ["TYPES", "router", "true_items"]

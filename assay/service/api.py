"""The JSON API (``Authorization: Bearer <token>``, or a session with its CSRF header):

* ``POST /api/submissions`` (multipart: campaign, system, key, file) → 202 ``{"id", "state"}``;
  a bad file is 400 ``{"error": "<file>, line N: …"}`` and nothing is kept;
* ``GET /api/submissions/{id}``; ``GET /api/scores?campaign=`` (the caller's team's systems);
* ``GET /api/queue/next?campaign=`` and ``POST /api/labels`` (annotators; JSON body
  ``{"campaign", "item", "value": 1|0|null}``), ``POST /api/undo``;
* ``GET /api/labels?campaign=`` and ``GET /api/quality?campaign=`` (admins only).
"""
from __future__ import annotations

import dataclasses
import json
from typing import Any

from fastapi import APIRouter, HTTPException, Request
from fastapi.responses import JSONResponse

from assay.errors import AssayError
from assay.ondemand import OnDemandCampaign
from assay.service import jobs, queue, quality, views
from assay.service.app import need, need_post, store_of

router = APIRouter(prefix="/api")


def _camp(request: Request, name: str) -> OnDemandCampaign:
    if name not in views.campaigns(store_of(request)):
        raise HTTPException(404, "no such campaign")
    return OnDemandCampaign.open(store_of(request), name)


@router.post("/submissions")
async def post_submission(request: Request) -> JSONResponse:
    c, form = await need_post(request, "submitter", "admin", api=True)
    upload = form.get("file")
    if upload is None or isinstance(upload, str):
        return JSONResponse({"error": "file: missing (expected an output file)"}, 400)
    try:
        data = await upload.read(jobs.MAX_UPLOAD_BYTES + 1)
        sid = jobs.submit(store_of(request), c.user, str(form.get("campaign", "")),
                          str(form.get("system", "")).strip(), upload.filename or "upload",
                          data, str(form.get("key") or "item"))
    except AssayError as exc:
        return JSONResponse({"error": " ".join(str(exc).split())}, 400)
    return JSONResponse({"id": sid, "state": "pending"}, 202)


@router.get("/submissions/{sid}")
def get_submission(request: Request, sid: int) -> dict[str, Any]:
    c = need(request, "submitter", "admin", api=True)
    row = jobs.submission(store_of(request).engine, sid)
    if row is None or (c.user.role != "admin" and row.team != (c.user.team or c.user.name)):
        raise HTTPException(404, "no such submission")
    return {"id": row.id, "campaign": row.campaign, "system": row.system, "state": row.state,
            "error": row.error, "items": len(json.loads(row.items))}


@router.get("/scores")
def get_scores(request: Request, campaign: str) -> dict[str, Any]:
    c = need(request, "submitter", "admin", api=True)
    camp = _camp(request, campaign)
    rep = views.scores_for(store_of(request), camp.row.name, c.user)
    out = rep.to_dict()
    if c.user.role != "admin":   # the campaign's row names its label annotator and seed
        out["campaign"] = {"name": camp.row.name, "confidence": camp.row.confidence}
    return out


@router.get("/queue/next")
def next_item(request: Request, campaign: str) -> dict[str, Any]:
    c = need(request, "annotator", "admin", api=True)
    camp = _camp(request, campaign)
    item = queue.next_item(store_of(request), camp.row, c.user.name)
    return {"item": item, "shown": None if item is None else
            views.display(store_of(request), camp, item)}


@router.post("/labels")
async def post_label(request: Request) -> JSONResponse:
    c, _ = await need_post(request, "annotator", "admin", api=True)
    try:
        body = await request.json()
        campaign, item, value = str(body["campaign"]), str(body["item"]), body["value"]
        if value not in (0, 1, None):
            raise ValueError(value)
    except (ValueError, KeyError, TypeError):
        return JSONResponse({"error": 'expected JSON {"campaign", "item", "value": 1, 0 or '
                                      'null}'}, 400)
    camp = _camp(request, campaign)
    try:
        j = queue.vote(store_of(request), camp.row, c.user.name, item, value)
    except queue.QueueError as exc:
        return JSONResponse({"error": str(exc)}, exc.status)
    return JSONResponse({"item": j.item, "value": j.value, "status": j.status.value}, 201)


@router.post("/undo")
async def post_undo(request: Request) -> JSONResponse:
    c, _ = await need_post(request, "annotator", "admin", api=True)
    body = await request.json()
    camp = _camp(request, str(body.get("campaign", "")))
    try:
        return JSONResponse({"item": queue.undo(store_of(request), camp.row, c.user.name)})
    except queue.QueueError as exc:
        return JSONResponse({"error": str(exc)}, exc.status)


@router.get("/labels")
def get_labels(request: Request, campaign: str) -> list[dict[str, Any]]:
    need(request, "admin", api=True)
    camp = _camp(request, campaign)
    return [{"item": j.item, "annotator": j.annotator, "value": j.value,
             "status": j.status.value} for j in store_of(request).judgments(camp.row.dataset)]


@router.get("/quality")
def get_quality(request: Request, campaign: str) -> dict[str, Any]:
    need(request, "admin", api=True)
    rep = quality.report(store_of(request), _camp(request, campaign).row)
    out = dataclasses.asdict(rep)
    out["kappa"] = None if rep.kappa != rep.kappa else rep.kappa
    return out


__all__ = ["router"]

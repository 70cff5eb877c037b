"""The JSON API (``Authorization: Bearer <token>``, or a session with its CSRF header):

* ``POST /api/submissions`` (multipart: campaign, system, key, file) → 202 ``{"id", "state"}``;
  a bad file is 400 ``{"error": "<file>, line N: …"}`` and nothing is kept;
* ``GET /api/submissions/{id}``; ``GET /api/scores?campaign=`` (the caller's team's systems);
* ``GET /api/queue/next?campaign=`` and ``POST /api/labels`` (annotators; JSON body
  ``{"campaign", "item", "value": 1|0|null}``), ``POST /api/undo``;
* ``GET /api/labels?campaign=`` and ``GET /api/quality?campaign=`` (admins only);
* ``GET /api/labelstudio/export?campaign=`` (the open items as Label Studio tasks and a
  labelling config) and ``POST /api/labelstudio/import?campaign=`` (a Label Studio JSON export:
  every annotation a vote keyed by item and annotator; checked whole before the first write).
"""
from __future__ import annotations

import dataclasses
import json
from typing import Any

from fastapi import APIRouter, HTTPException, Request
from fastapi.responses import JSONResponse, Response

from assay.errors import AssayError
from assay.ondemand import OnDemandCampaign
from assay.ondemand.store import CampaignRow
from assay.service import jobs, queue, quality, views
from assay.service.app import need, need_post, store_of

router = APIRouter(prefix="/api")


def _camp(request: Request, name: str) -> OnDemandCampaign:
    if name not in views.campaigns(store_of(request)):
        raise HTTPException(404, "no such campaign")
    return OnDemandCampaign.open(store_of(request), name)


async def json_body(request: Request, what: str, kind: type = dict) -> Any:
    """The request's JSON body, which must be a ``kind``: else 415 (not declared JSON: a form
    posted here would have been read as a form already) or 400 (not JSON, or another shape),
    one line naming ``what`` was expected."""
    if "json" not in request.headers.get("content-type", ""):
        raise HTTPException(415, f"expected {what} (Content-Type: application/json)")
    try:
        body = await request.json()
    except ValueError:
        raise HTTPException(400, f"not JSON: expected {what}") from None
    if not isinstance(body, kind):
        raise HTTPException(400, f"expected {what}")
    return body


def _row(request: Request, name: str) -> CampaignRow:
    row = views.campaign_row(store_of(request), name)
    if row is None:
        raise HTTPException(404, "no such campaign")
    return row


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
def get_scores(request: Request, campaign: str, level: str = "instance") -> dict[str, Any]:
    c = need(request, "submitter", "admin", api=True)
    camp = _camp(request, campaign)
    rep = views.scores_for(store_of(request), camp.row.name, c.user, level)
    out = rep.to_dict()
    if c.user.role != "admin":   # the campaign's row names its label annotator and seed
        out["campaign"] = {"name": camp.row.name, "confidence": camp.row.confidence}
    return out


@router.get("/queue/next")
def next_item(request: Request, campaign: str) -> dict[str, Any]:
    c = need(request, "annotator", "admin", api=True)
    row = _row(request, campaign)
    item = queue.next_item(store_of(request), row, c.user.name)
    return {"item": item, "shown": None if item is None else
            views.display(store_of(request), row, item)}


@router.post("/labels")
async def post_label(request: Request) -> JSONResponse:
    c, _ = await need_post(request, "annotator", "admin", api=True)
    body = await json_body(request, 'JSON {"campaign", "item", "value"}')
    try:
        campaign, item, value = str(body["campaign"]), str(body["item"]), body["value"]
        if value not in (0, 1, None):
            raise ValueError(value)
    except (ValueError, KeyError, TypeError):
        return JSONResponse({"error": 'expected JSON {"campaign", "item", "value": 1, 0 or '
                                      'null}'}, 400)
    row = _row(request, campaign)
    try:
        j = queue.vote(store_of(request), row, c.user.name, item, value)
    except queue.QueueError as exc:
        return JSONResponse({"error": str(exc)}, exc.status)
    return JSONResponse({"item": j.item, "value": j.value, "status": j.status.value}, 201)


@router.post("/undo")
async def post_undo(request: Request) -> JSONResponse:
    c, _ = await need_post(request, "annotator", "admin", api=True)
    body = await json_body(request, 'JSON {"campaign"}')
    row = _row(request, str(body.get("campaign", "")))
    try:
        item = queue.undo(store_of(request), row, c.user.name, request.app.state.undo_seconds)
        return JSONResponse({"item": item})
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


@router.get("/costs")
def get_costs(request: Request, campaign: str, price: str | None = None) -> Any:
    """Human answers and what they cost, per submission and per campaign (admins only): the
    figures of the cost page, at the campaign's stored prices per task type
    (:func:`assay.service.costs.prices`, echoed as ``prices``). ``price`` — the per-label
    price of the API before prices were stored (kept for its clients and docs) — replaces the
    verification price in this answer only; nothing is stored (``POST /admin/prices`` sets
    prices)."""
    need(request, "admin", api=True)
    from assay.service.costs import campaign_costs, parse_price, totals
    try:
        at = None if price is None else {"verification": parse_price("verification", price)}
    except ValueError as exc:
        return JSONResponse({"error": str(exc)}, 400)
    store, row = store_of(request), _row(request, campaign)
    got = totals(store, row)
    priced = campaign_costs(store, row, at=at)
    return {**got, "documents": priced.documents, "cost": priced.cost,
            "prices": priced.prices,
            "submissions": [dataclasses.asdict(x) for x in priced.submissions],
            "annotators": [{**dataclasses.asdict(a), "answers": a.answers}
                           for a in priced.annotators]}


@router.get("/audit")
def get_audit(request: Request, campaign: str | None = None, user: str | None = None,
              after: int = 0, limit: int = 10_000) -> Response:
    """The audit log as CSV (admins only): who did what (label, skip, undo, gold, log-in, …),
    when, on which campaign and item; filtered by ``campaign`` and ``user``, rows with an id
    above ``after``, at most ``limit`` (≤ 100,000) in id order — page on with the last id."""
    need(request, "admin", api=True)
    import csv
    import io

    from sqlalchemy import select

    from assay.service.schema import audit_table as a
    if not 1 <= limit <= 100_000:
        raise HTTPException(400, f"limit {limit}: expected 1 to 100,000 rows")
    q = select(a).where(a.c.id > after)
    if campaign is not None:
        q = q.where(a.c.campaign == campaign)
    if user is not None:
        q = q.where(a.c.user == user)
    with store_of(request).engine.connect() as conn:
        rows = conn.execute(q.order_by(a.c.id).limit(limit)).all()
    buf = io.StringIO()
    out = csv.writer(buf, lineterminator="\n")
    out.writerow(["id", "at", "user", "action", "campaign", "item", "detail"])
    for r in rows:
        out.writerow([r.id, r.at.isoformat(), r.user, r.action, r.campaign, r.item, r.detail])
    return Response(buf.getvalue(), media_type="text/csv; charset=utf-8")


@router.post("/records")
async def post_records(request: Request, campaign: str) -> JSONResponse:
    """Records shown to annotators (multipart ``file``: CSV/TSV/Parquet with an ``id`` column:
    an ER pair's records, or a unit's ``sentence``); checked whole before the one write."""
    c, form = await need_post(request, "admin", api=True)
    camp = _row(request, campaign)
    upload = form.get("file")
    if upload is None or isinstance(upload, str):
        return JSONResponse({"error": "file: missing (expected a records file)"}, 400)
    try:
        df = jobs.read_upload(upload.filename or "upload",
                              await upload.read(jobs.MAX_UPLOAD_BYTES + 1))
        if "id" not in df.columns:
            raise AssayError(f"{upload.filename}: no column 'id' (expected an id column)")
    except AssayError as exc:
        return JSONResponse({"error": " ".join(str(exc).split())}, 400)
    n = views.add_records(store_of(request), camp.name, df.to_dict(orient="records"))
    from assay.service.auth import audit
    audit(store_of(request).engine, c.user.name, "records", camp.name, detail={"records": n})
    return JSONResponse({"records": n}, 201)


@router.post("/gold")
async def post_gold(request: Request, campaign: str, key: str = "item") -> JSONResponse:
    """Gold questions (multipart ``file``: key column(s) and ``label`` 0/1), checked whole
    before the one write."""
    c, form = await need_post(request, "admin", api=True)
    camp = _row(request, campaign)
    upload = form.get("file")
    if upload is None or isinstance(upload, str):
        return JSONResponse({"error": "file: missing (expected a gold file)"}, 400)
    from assay.formats.pool import binary_column
    from assay.interfaces.campaign_cli import _keys
    from assay.service.gold import add_gold
    name = upload.filename or "upload"
    try:
        df = jobs.read_upload(name, await upload.read(jobs.MAX_UPLOAD_BYTES + 1))
        kind = "row" if name.lower().endswith(".parquet") else "line"
        if "label" not in df.columns:
            raise AssayError(f"{name}: no column 'label' (expected key column(s) and label)")
        keys = _keys(df, key, name, kind)
        values = binary_column(df, "label", name, kind)
    except AssayError as exc:
        return JSONResponse({"error": " ".join(str(exc).split())}, 400)
    try:
        n = add_gold(store_of(request), camp.name, dict(zip(keys.tolist(), values.tolist())))
    except AssayError as exc:
        return JSONResponse({"error": " ".join(str(exc).split())}, 400)
    from assay.service.auth import audit
    audit(store_of(request).engine, c.user.name, "gold-added", camp.name, detail={"gold": n})
    return JSONResponse({"gold": n}, 201)


@router.get("/labelstudio/export")
def labelstudio_export(request: Request, campaign: str) -> dict[str, Any]:
    need(request, "admin", api=True)
    from sqlalchemy import select

    from assay.service.labelstudio import CONFIG, task
    from assay.service.schema import queue_table as q
    camp = _camp(request, campaign)
    store = store_of(request)
    with store.engine.connect() as conn:
        items = conn.execute(select(q.c.item).where((q.c.campaign == camp.row.name)
                                                    & q.c.resolved_at.is_(None))
                             .order_by(q.c.id)).scalars().all()
    return {"label_config": CONFIG,
            "tasks": [task(camp.row.name, i, views.display(store, camp.row, i)) for i in items]}


@router.post("/labelstudio/import")
async def labelstudio_import(request: Request, campaign: str) -> JSONResponse:
    c, _ = await need_post(request, "admin", api=True)
    from sqlalchemy import select

    from assay.service.labelstudio import located_votes
    from assay.service.schema import queue_table as q
    camp = _camp(request, campaign)
    store = store_of(request)
    body = await json_body(request, "a Label Studio JSON export (a list of tasks)", kind=list)
    try:
        got = located_votes(body)
    except AssayError as exc:
        return JSONResponse({"error": str(exc)}, 400)
    with store.engine.connect() as conn:
        queued = set(conn.execute(select(q.c.item).where(q.c.campaign == camp.row.name))
                     .scalars().all())
    unknown = [(w, i) for w, i, _, _ in got if i not in queued]
    if unknown:
        return JSONResponse({"error": f"Label Studio export, {unknown[0][0]}: item "
                                      f"{unknown[0][1]!r} is not in the queue of campaign "
                                      f"{camp.row.name!r}"}, 400)
    k = queue.settings(store.engine, camp.row.name).k
    try:
        with store.engine.begin() as conn:         # all the import's votes, or none
            for where, item, who, value in got:
                try:
                    queue.vote_in(conn, store, camp.row, who, item, value, k)
                except queue.QueueError as exc:
                    raise queue.QueueError(f"Label Studio export, {where}: {exc}",
                                           exc.status) from None
    except queue.QueueError as exc:
        return JSONResponse({"error": str(exc)}, exc.status)
    from assay.service import flags
    from assay.service.auth import audit
    audit(store.engine, c.user.name, "labelstudio-import", camp.row.name,
          detail={"votes": len(got)})
    # Label Studio's annotators are never served by the queue, where the flag rule is checked
    # (queue.next_item): it is checked here, on each annotator of the import, once it is kept
    flagged = sorted(who for who in {w for _, _, w, _ in got}
                     if flags.check(store, camp.row, who))
    return JSONResponse({"votes": len(got), "flagged": flagged}, 201)


__all__ = ["router"]

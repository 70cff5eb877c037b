"""The server-rendered pages (Jinja2 + htmx): annotation (keyboard first: y / n / s / u), scores,
submission, and the admin's page. Every form carries the session's CSRF token
(:func:`assay.service.app.need_post` checks it)."""
from __future__ import annotations

from typing import Any
from urllib.parse import quote

from fastapi import APIRouter, HTTPException, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from sqlalchemy import select

from assay.errors import AssayError, AssayInputError
from assay.ondemand import OnDemandCampaign
from assay.ondemand.store import CampaignRow
from assay.service import jobs, queue, quality, views
from assay.service.app import Caller, need, need_post, render, store_of
from assay.service.auth import add_user, revoke_sessions
from assay.service.schema import submissions_table, users_table

router = APIRouter()
VALUES = {"y": 1, "n": 0, "s": None}


def _campaign(request: Request, name: str | None) -> OnDemandCampaign:
    store = store_of(request)
    names = views.campaigns(store)
    if not names:
        raise HTTPException(404, "no campaign yet")
    if name is None:
        name = names[0]
    if name not in names:
        raise HTTPException(404, "no such campaign")
    return OnDemandCampaign.open(store, name)


def _row(request: Request, name: str | None) -> CampaignRow:
    row = None if name is None else views.campaign_row(store_of(request), name)
    if row is None:
        raise HTTPException(404, "no such campaign")
    return row


# -- annotation ------------------------------------------------------------------------------
def _item(request: Request, c: Caller, row: CampaignRow, item: str | None = None,
          message: str | None = None, status: int = 200) -> HTMLResponse:
    store = store_of(request)
    if item is None:
        item = queue.next_item(store, row, c.user.name)
    shown = None if item is None else views.display(store, row, item)
    left, done = queue.open_count(store, row.name)
    out = render(request, "_item.html", c, status, campaign=row.name, item=item,
                 shown=shown, message=message, open=left, done=done)
    out.headers["X-Assay-Item"] = "1"    # annotate.js swaps it in even with a 4xx status
    return out


@router.get("/annotate", response_class=HTMLResponse)
def annotate(request: Request, campaign: str | None = None) -> Response:
    c = need(request, "annotator", "admin")
    store = store_of(request)
    names = views.campaigns(store)
    if campaign is None:   # the first campaign with something for this annotator
        campaign = next((n for n in names if queue.next_item(
            store, _row(request, n), c.user.name) is not None), names[0] if names else None)
    if campaign is None:
        return render(request, "annotate.html", c, campaign=None, campaigns=names)
    row = _row(request, campaign)
    return render(request, "annotate.html", c, campaign=row.name, campaigns=names,
                  first=_item(request, c, row).body.decode())


@router.get("/annotate/item", response_class=HTMLResponse)
def annotate_item(request: Request, campaign: str) -> Response:
    c = need(request, "annotator", "admin")
    return _item(request, c, _row(request, campaign))


@router.post("/annotate/label", response_class=HTMLResponse)
async def annotate_label(request: Request) -> Response:
    c, form = await need_post(request, "annotator", "admin")
    row = _row(request, str(form.get("campaign", "")))
    value, item = str(form.get("value", "")), str(form.get("item", ""))
    if value not in VALUES or not item:
        raise HTTPException(400, "expected value y, n or s and an item")
    try:
        queue.vote(store_of(request), row, c.user.name, item, VALUES[value])
    except queue.QueueError as exc:
        return _item(request, c, row, message=str(exc), status=exc.status)
    return _item(request, c, row)


@router.post("/annotate/undo", response_class=HTMLResponse)
async def annotate_undo(request: Request) -> Response:
    c, form = await need_post(request, "annotator", "admin")
    row = _row(request, str(form.get("campaign", "")))
    try:
        item = queue.undo(store_of(request), row, c.user.name, request.app.state.undo_seconds)
    except queue.QueueError as exc:      # the API's status (403 flagged, 409 nothing to undo)
        return _item(request, c, row, message=str(exc), status=exc.status)
    return _item(request, c, row, item=item, message="undone: label this item again")


# -- scores ----------------------------------------------------------------------------------
@router.get("/scores", response_class=HTMLResponse)
def scores(request: Request, campaign: str | None = None, level: str = "instance") -> Response:
    c = need(request, "submitter", "admin")
    camp = _campaign(request, campaign)
    rep = views.scores_for(store_of(request), camp.row.name, c.user, level)
    return render(request, "scores.html", c, campaign=camp.row.name, level=level,
                  levels=views.LEVELS,
                  campaigns=views.campaigns(store_of(request)), rows=views.score_rows(rep),
                  rep=rep, confidence=camp.row.confidence)


@router.get("/scores/plot.png")
def scores_plot(request: Request, campaign: str, level: str = "instance") -> Response:
    c = need(request, "submitter", "admin")
    camp = _campaign(request, campaign)
    png = views.plot_png(views.scores_for(store_of(request), camp.row.name, c.user, level))
    if png is None:
        raise HTTPException(404, "no system of yours in this campaign yet")
    return Response(png, media_type="image/png")


# -- submissions -----------------------------------------------------------------------------
@router.get("/submit", response_class=HTMLResponse)
def submit_page(request: Request) -> Response:
    c = need(request, "submitter", "admin")
    return render(request, "submit.html", c, campaigns=views.campaigns(store_of(request)),
                  subs=_subs(request, c))


@router.post("/submit", response_class=HTMLResponse)
async def submit_post(request: Request) -> Response:
    c, form = await need_post(request, "submitter", "admin")
    upload = form.get("file")
    try:
        if upload is None or isinstance(upload, str):
            raise AssayInputError("file", "missing", expected="an output file")
        data = await upload.read(jobs.MAX_UPLOAD_BYTES + 1)
        sid = jobs.submit(store_of(request), c.user, str(form.get("campaign", "")),
                          str(form.get("system", "")).strip(), upload.filename or "upload",
                          data, str(form.get("key") or "item"))
    except AssayError as exc:
        return render(request, "submit.html", c, 400,
                      campaigns=views.campaigns(store_of(request)), subs=_subs(request, c),
                      error=str(exc))
    return RedirectResponse(f"/submissions/{sid}", status_code=303)


def _subs(request: Request, c: Caller) -> list[Any]:
    s = submissions_table
    q = select(s.c.id, s.c.campaign, s.c.system, s.c.state, s.c.error, s.c.created_at)
    if c.user.role != "admin":
        q = q.where(s.c.team == (c.user.team or c.user.name))
    with store_of(request).engine.connect() as conn:
        return conn.execute(q.order_by(s.c.id.desc()).limit(100)).all()


@router.get("/submissions/{sid}", response_class=HTMLResponse)
def submission_page(request: Request, sid: int) -> Response:
    c = need(request, "submitter", "admin")
    row = jobs.submission(store_of(request).engine, sid)
    if row is None or (c.user.role != "admin" and row.team != (c.user.team or c.user.name)):
        raise HTTPException(404, "no such submission")
    return render(request, "submission.html", c, sub=row)


# -- admin -----------------------------------------------------------------------------------
@router.get("/admin", response_class=HTMLResponse)
def admin(request: Request, message: str | None = None) -> Response:
    c = need(request, "admin")
    store = store_of(request)
    names = views.campaigns(store)
    info = []
    for n in names:
        left, done = queue.open_count(store, n)
        q = quality.report(store, OnDemandCampaign.open(store, n).row)
        info.append({"name": n, "settings": queue.settings(store.engine, n), "open": left,
                     "done": done, "quality": q, "undecidable": queue.undecidable(store, n)})
    with store.engine.connect() as conn:
        users = conn.execute(select(users_table.c.name, users_table.c.role,
                                    users_table.c.team).order_by(users_table.c.id)).all()
    return render(request, "admin.html", c, campaigns=info, users=users,
                  subs=_subs(request, c), message=message)


@router.post("/admin/campaign")
async def admin_campaign(request: Request) -> Response:
    c, form = await need_post(request, "admin")
    store = store_of(request)
    try:     # every setting checked before the campaign is created
        name = str(form.get("name", "")).strip()
        settings = queue.Settings(int(form.get("k") or queue.DEFAULT_K),
                                  int(form.get("daily_limit") or queue.DEFAULT_DAILY_LIMIT),
                                  str(form.get("aggregation") or "majority"),
                                  int(form.get("min_output") or queue.DEFAULT_MIN_OUTPUT))
        half_width, seed = float(form.get("half_width") or 0.05), int(form.get("seed") or 0)
        camp = OnDemandCampaign.create(store, name, annotator="consensus",
                                       half_width=half_width, seed=seed)
        queue.set_settings(store, camp.row.name, settings)
    except (AssayError, ValueError) as exc:
        raise HTTPException(400, " ".join(str(exc).split())) from None
    return RedirectResponse(f"/admin?message=campaign+{quote(name)}+created",
                            status_code=303)


@router.post("/admin/user")
async def admin_user(request: Request) -> Response:
    c, form = await need_post(request, "admin")
    try:
        add_user(store_of(request).engine, str(form.get("name", "")).strip(),
                 str(form.get("role", "")), str(form.get("password", "")),
                 str(form.get("team") or "").strip() or None)
    except AssayError as exc:
        raise HTTPException(400, str(exc)) from None
    return RedirectResponse("/admin?message=user+added", status_code=303)


@router.post("/admin/revoke-sessions")
async def admin_revoke(request: Request) -> Response:
    c, form = await need_post(request, "admin")
    n = revoke_sessions(store_of(request).engine, str(form.get("name", "")))
    return RedirectResponse(f"/admin?message={n}+sessions+revoked", status_code=303)


__all__ = ["router"]

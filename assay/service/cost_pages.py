"""The cost page and the admin's forms of costs and flags (:mod:`assay.service.costs`,
:mod:`assay.service.flags`):

* ``GET /costs?campaign=`` — an admin sees the campaign's prices (and a form to set them), its
  total, each submission's cost and each annotator's work, cost and flag (and a form to clear
  it); a submitter sees only their team's submissions' costs (counts and money, never a label);
* ``POST /admin/prices`` (admins; form ``campaign``, ``verification``, ``exhaustive``: a blank
  field leaves that price as it is) — audited ``prices``;
* ``POST /admin/flags/clear`` (admins; form ``campaign``, ``annotator``) — audited
  ``flag-cleared``; 404 when the annotator has no live flag. The exhaustive documents they
  finished count again, and those they now settle get their truth (the JSON answer names
  them, ``settled``); the open queue items they labelled are decided again with their votes
  (``redecided``): the clear and both in one write transaction
  (:func:`assay.service.resettle.clear`).

A session's POST carries its CSRF token (:func:`assay.service.app.need_post`); with an API token
the POSTs answer JSON instead of a redirect.
"""
from __future__ import annotations

from urllib.parse import quote

from fastapi import APIRouter, HTTPException, Request
from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse, Response

from assay.service import costs, flags, quality, views
from assay.service.app import need, need_post, render, store_of

router = APIRouter()


def _campaign(request: Request, name: str | None) -> str:
    names = views.campaigns(store_of(request))
    if not names:
        raise HTTPException(404, "no campaign yet")
    name = names[0] if name is None else name
    if name not in names:
        raise HTTPException(404, "no such campaign")
    return name


@router.get("/costs", response_class=HTMLResponse)
def costs_page(request: Request, campaign: str | None = None,
               message: str | None = None) -> Response:
    c = need(request, "submitter", "admin")
    store = store_of(request)
    name = _campaign(request, campaign)
    row = views.campaign_row(store, name)
    assert row is not None
    admin = c.user.role == "admin"
    got = costs.campaign_costs(store, row, None if admin else (c.user.team or c.user.name))
    flagged: dict[str, flags.Flag] = {}
    rule: dict[str, tuple[int, int, bool]] = {}
    if admin:
        flagged = flags.flags(store.engine, name)
        rule = {a.name: (a.disagreements, a.compared, a.flagged)
                for a in quality.report(store, row).annotators}
    return render(request, "costs.html", c, campaign=name, admin=admin, got=got,
                  campaigns=views.campaigns(store), flagged=flagged, rule=rule,
                  tasks=costs.TASKS, defaults=costs.DEFAULT_PRICES, message=message)


@router.post("/admin/prices")
async def admin_prices(request: Request) -> Response:
    c, form = await need_post(request, "admin")
    name = _campaign(request, str(form.get("campaign", "")))
    try:
        given = {t: costs.parse_price(t, form[t]) for t in costs.TASKS
                 if str(form.get(t) or "").strip()}
        if not given:
            raise ValueError(f"no price given: expected one of {', '.join(costs.TASKS)}")
        costs.set_prices(store_of(request).engine, name, given, c.user.name)
    except ValueError as exc:
        raise HTTPException(400, str(exc)) from None
    if c.via == "token":
        return JSONResponse({"campaign": name,
                             "prices": costs.prices(store_of(request).engine, name)})
    return RedirectResponse(f"/costs?campaign={quote(name)}&message=prices+set",
                            status_code=303)


@router.post("/admin/flags/clear")
async def admin_flag_clear(request: Request) -> Response:
    c, form = await need_post(request, "admin")
    name = _campaign(request, str(form.get("campaign", "")))
    who = str(form.get("annotator", ""))
    from assay.service.resettle import clear
    row = views.campaign_row(store_of(request), name)
    assert row is not None
    got = clear(store_of(request), row, who, c.user.name)
    if got is None:
        raise HTTPException(404, f"annotator {who[:80]!r} has no live flag in {name!r}")
    redecided, settled = got
    if c.via == "token":
        return JSONResponse({"campaign": name, "cleared": who, "settled": settled,
                             "redecided": redecided})
    return RedirectResponse(f"/costs?campaign={quote(name)}&message=flag+of+{quote(who)}"
                            "+cleared", status_code=303)


__all__ = ["router"]

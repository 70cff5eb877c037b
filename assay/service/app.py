"""The FastAPI application: :func:`create_app` on a label store, who is calling (a session cookie
or a ``Bearer`` API token), role checks, CSRF on every cookie-authenticated POST, log-in and
log-out, API tokens. The pages are in :mod:`assay.service.pages`, the JSON API in
:mod:`assay.service.api`.

Roles: an *admin* sees and does everything; a *submitter* uploads outputs and sees only their
team's systems' scores (never a label, an item's truth or another team's output); an
*annotator* labels queued items, blind to systems and scores.
"""
from __future__ import annotations

import secrets
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, AsyncIterator

from fastapi import FastAPI, HTTPException, Request
from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from fastapi.staticfiles import StaticFiles
from fastapi.templating import Jinja2Templates

from assay.labels.store import LabelStore
from assay.service import auth, migrate
from assay.service.limits import BodyLimit

HERE = Path(__file__).resolve().parent
COOKIE = "assay_session"
LOGIN_COOKIE = "assay_login_csrf"
templates = Jinja2Templates(directory=str(HERE / "templates"))


@dataclass(frozen=True)
class Caller:
    """Who calls: the user, the session's CSRF token (None for an API token) and how."""

    user: auth.User
    csrf: str | None
    via: str            # "session" | "token"


class LoginNeeded(Exception):
    """A page asked without a live session: redirect to the log-in page."""


def store_of(request: Request) -> LabelStore:
    return request.app.state.store


def caller(request: Request) -> Caller | None:
    engine = store_of(request).engine
    bearer = request.headers.get("authorization", "")
    if bearer.lower().startswith("bearer "):
        u = auth.token_user(engine, bearer[7:].strip())
        return None if u is None else Caller(u, None, "token")
    cookie = request.cookies.get(COOKIE)
    if cookie:
        got = auth.session_user(engine, cookie)
        if got is not None:
            return Caller(got[0], got[1], "session")
    return None


def need(request: Request, *roles: str, api: bool = False) -> Caller:
    """The caller if logged in with one of ``roles`` (any role when none given); else 401 (API)
    or a redirect to the log-in page, and 403 for another role."""
    c = caller(request)
    if c is None:
        if api or request.headers.get("authorization"):
            raise HTTPException(401, "not authenticated (a live API token or session needed)")
        raise LoginNeeded()
    if roles and c.user.role not in roles:
        raise HTTPException(403, f"role {c.user.role!r} may not do this")
    return c


async def need_post(request: Request, *roles: str, api: bool = False
                    ) -> tuple[Caller, dict[str, Any]]:
    """:func:`need` for a POST, and its form; a session's POST must carry its CSRF token (form
    field ``csrf`` or header ``X-CSRF-Token``), else 403."""
    c = need(request, *roles, api=api)
    ctype = request.headers.get("content-type", "")
    form: dict[str, Any] = {}
    if "form" in ctype:
        form = dict((await request.form()).multi_items())
    if c.via == "session":
        given = request.headers.get("x-csrf-token") or form.get("csrf")
        if not auth.csrf_ok(str(c.csrf), given if isinstance(given, str) else None):
            raise HTTPException(403, "CSRF token missing or wrong: reload the page")
    return c, form


def render(request: Request, name: str, c: Caller | None, status: int = 200,
           **ctx: Any) -> HTMLResponse:
    return templates.TemplateResponse(request, name, {"me": c.user if c else None,
                                                      "csrf": c.csrf if c else None, **ctx},
                                      status_code=status)


def create_app(store: LabelStore | str, worker: bool = False,
               secure_cookies: bool = False, undo_seconds: float | None = None) -> FastAPI:
    """The application on ``store`` (a :class:`LabelStore`, an SQLite path or a URL); its
    service tables and the campaigns' tables are migrated first (``migrate.upgrade``, the
    one place they are made). With ``worker`` a background thread runs the jobs; with
    ``secure_cookies`` the cookies are sent over HTTPS only (serving behind TLS);
    ``undo_seconds`` is how long a decision stays open to its annotator's undo before the jobs
    use it (default :data:`assay.service.queue.UNDO_SECONDS`), for this app's pages and
    worker alike."""
    labels = store if isinstance(store, LabelStore) else LabelStore(store)
    migrate.upgrade(labels.engine)
    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        if worker:
            from assay.service.jobs import Worker
            app.state.worker = Worker(labels, window=undo_seconds)
            app.state.worker.start()
        yield
        if app.state.worker is not None:
            app.state.worker.stop()

    app = FastAPI(title="assay service", docs_url=None, redoc_url=None, openapi_url=None,
                  lifespan=lifespan)
    app.state.store = labels
    app.state.worker = None
    app.state.undo_seconds = undo_seconds
    app.add_middleware(BodyLimit)           # before any handler reads a body (413 past the cap)
    app.mount("/static", StaticFiles(directory=str(HERE / "static")), name="static")

    @app.exception_handler(LoginNeeded)
    async def _login(request: Request, exc: LoginNeeded) -> Response:
        return RedirectResponse("/login", status_code=303)

    @app.exception_handler(HTTPException)
    async def _http(request: Request, exc: HTTPException) -> Response:
        if request.url.path.startswith("/api/") or request.headers.get("hx-request"):
            return JSONResponse({"error": exc.detail}, status_code=exc.status_code)
        return render(request, "error.html", caller(request), exc.status_code,
                      message=exc.detail)

    @app.get("/login", response_class=HTMLResponse)
    def login_page(request: Request) -> Response:
        token = secrets.token_urlsafe(24)
        resp = render(request, "login.html", None, login_csrf=token)
        resp.set_cookie(LOGIN_COOKIE, token, httponly=True, samesite="strict",
                        secure=secure_cookies)
        return resp

    @app.post("/login")
    async def login(request: Request) -> Response:
        form = await request.form()
        token = request.cookies.get(LOGIN_COOKIE)
        if not token or not auth.csrf_ok(token, str(form.get("csrf") or "")):
            raise HTTPException(403, "CSRF token missing or wrong: reload the log-in page")
        name = str(form.get("name", ""))[:200]
        client = request.client.host if request.client else None
        if auth.too_many_failures(labels.engine, name, client):
            return render(request, "login.html", None, 429, login_csrf=token,
                          error=f"too many failed log-ins: wait "
                                f"{auth.FAILED_WINDOW_MINUTES} minutes")
        u = auth.check_password(labels.engine, name, str(form.get("password", "")))
        if u is None:
            auth.audit(labels.engine, name, "login-failed",
                       detail=auth.failed_login_detail(client))
            return render(request, "login.html", None, 401, login_csrf=token,
                          error="wrong name or password")
        resp = RedirectResponse("/", status_code=303)
        resp.set_cookie(COOKIE, auth.new_session(labels.engine, u), httponly=True,
                        samesite="lax", max_age=auth.SESSION_HOURS * 3600,
                        secure=secure_cookies)
        resp.delete_cookie(LOGIN_COOKIE)
        return resp

    @app.post("/logout")
    async def logout(request: Request) -> Response:
        await need_post(request)
        auth.end_session(labels.engine, request.cookies.get(COOKIE, ""))
        resp = RedirectResponse("/login", status_code=303)
        resp.delete_cookie(COOKIE)
        return resp

    @app.get("/")
    def home(request: Request) -> Response:
        c = need(request)
        where = {"annotator": "/annotate", "submitter": "/scores"}.get(c.user.role, "/admin")
        return RedirectResponse(where, status_code=303)

    @app.get("/tokens", response_class=HTMLResponse)
    def tokens_page(request: Request) -> Response:
        c = need(request)
        return render(request, "tokens.html", c, tokens=_tokens(labels, c.user))

    @app.post("/tokens")
    async def token_new(request: Request) -> Response:
        c, form = await need_post(request)
        if c.via == "token":        # a leaked token must not mint tokens outliving its revocation
            raise HTTPException(403, "API tokens are created from a logged-in session (the "
                                "tokens page), not with another token")
        tid, secret = auth.new_token(labels.engine, c.user, str(form.get("label") or "")[:200])
        return render(request, "tokens.html", c, tokens=_tokens(labels, c.user),
                      new_secret=secret)

    @app.post("/tokens/{tid}/revoke")
    async def token_revoke(request: Request, tid: int) -> Response:
        c, _ = await need_post(request)
        if not auth.revoke_token(labels.engine, c.user, tid):
            raise HTTPException(404, "no such live token")
        if c.via == "token":
            return JSONResponse({"revoked": tid})
        return RedirectResponse("/tokens", status_code=303)

    from assay.service import api, cost_pages, exhaustive, pages
    app.include_router(pages.router)
    app.include_router(cost_pages.router)
    app.include_router(exhaustive.router)
    app.include_router(api.router)
    return app


def _tokens(store: LabelStore, user: auth.User) -> list[Any]:
    from sqlalchemy import select

    from assay.service.schema import tokens_table as t
    with store.engine.connect() as conn:
        return conn.execute(select(t.c.id, t.c.label, t.c.created_at, t.c.revoked_at).where(
            t.c.user_id == user.id).order_by(t.c.id)).all()


__all__ = ["COOKIE", "Caller", "caller", "create_app", "need", "need_post", "render"]

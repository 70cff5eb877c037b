"""The pages in a real Chromium (Debian's ``chromium`` driven by Python Playwright; the test
starts the app itself with uvicorn on a free port): log in, label an ER pair by keyboard
(y / n / s / u), reload keeps the progress, a phone-size screen has no sideways scrolling, a
submitter cannot reach the annotation pages or a label, a form posted without its CSRF token is
refused. Screenshots of each page are kept (``$ASSAY_ARTEFACTS`` or the test's tmp folder).

Chromium missing is a failure (CI installs it, ``.ci/run``) unless ``ASSAY_SKIP_BROWSER=1``.
"""
from __future__ import annotations

import io
import os
import shutil
from pathlib import Path

import pandas as pd
import pytest

from assay.service import jobs, queue, views
from assay.service.auth import user_by_name

from service_helpers import PASSWORD, live_server, make_service

CHROMIUM = os.environ.get("ASSAY_CHROMIUM", "/usr/bin/chromium")
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run"]
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def browser():
    if not (Path(CHROMIUM).exists() or shutil.which(CHROMIUM)):
        if os.environ.get("ASSAY_SKIP_BROWSER") == "1":
            pytest.skip("ASSAY_SKIP_BROWSER=1: browser tests skipped on purpose")
        pytest.fail(f"Chromium not found at {CHROMIUM}: apt-get install -y chromium "
                    "(or ASSAY_SKIP_BROWSER=1 to skip the browser tests on purpose)")
    from playwright.sync_api import sync_playwright
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield b
        b.close()


@pytest.fixture()
def site(tmp_path):
    """An ER campaign with 30 candidate pairs whose records are kept, a submission planned and
    queued, and the app served by uvicorn in a thread."""
    from assay.ondemand import OnDemandCampaign
    svc = make_service(tmp_path, k=1)
    er = OnDemandCampaign.create(svc.store, "er", annotator="consensus", half_width=0.2, seed=1)
    queue.set_settings(svc.store, "er", queue.Settings(k=1, daily_limit=5))
    recs = [{"id": f"{s}{i}", "name": f"Store {i}" if s == "L" else f"Store #{i} Ltd",
             "city": "Springfield" if i % 2 else "Shelbyville"} for i in range(30)
            for s in ("L", "R")]
    views.add_records(svc.store, "er", recs)
    buf = io.StringIO()
    pd.DataFrame({"left_id": [f"L{i}" for i in range(30)],
                  "right_id": [f"R{i}" for i in range(30)]}).to_csv(buf, index=False)
    jobs.submit(svc.store, user_by_name(svc.store.engine, "alice"), "er", "pairs", "er.csv",
                buf.getvalue().encode(), key="left_id,right_id")
    jobs.run_pending(svc.store)
    with live_server(svc.store, tmp_path) as (base, shots):
        yield svc, er, base, shots


def _login(page, base, name):
    page.goto(f"{base}/login")
    page.fill("#name", name)
    page.fill("#password", PASSWORD)
    page.click("#login")
    page.wait_for_load_state("networkidle")


def _item(page) -> str:
    return page.get_attribute("#card", "data-item")


def _press(page, key, before):
    page.keyboard.press(key)
    page.wait_for_function("b => { const c = document.querySelector('#card');"
                           " return c && c.dataset.item !== b && !document.querySelector("
                           "'.htmx-request, .htmx-settling, .htmx-swapping'); }", arg=before)


def test_label_by_keyboard_undo_reload(browser, site, monkeypatch):
    svc, er, base, shots = site
    page = browser.new_page()
    _login(page, base, "ann1")
    page.goto(f"{base}/annotate?campaign=er")
    assert page.is_visible("#left") and page.is_visible("#right")
    assert "Store" in page.inner_text("#left") and "pairs" not in page.content()
    assert "t1/" not in page.content() and "precision" not in page.content()
    page.screenshot(path=str(shots / "annotate.png"), full_page=True)
    first = _item(page)
    page.keyboard.press("u")                # nothing to undo: 409, its message swapped in
    page.wait_for_selector("#message")
    page.wait_for_function("!document.querySelector('.htmx-request, .htmx-settling')")
    assert _item(page) == first and "nothing to undo" in page.inner_text("#message")
    _press(page, "y", first)
    second = _item(page)
    _press(page, "n", second)
    third = _item(page)
    _press(page, "s", third)
    page.keyboard.press("u")
    page.wait_for_selector("#message")
    page.wait_for_function("!document.querySelector('.htmx-request, .htmx-settling')")
    assert _item(page) == third and "undone" in page.inner_text("#message")
    got = {j.item: j.value for j in svc.store.judgments("er", "ann1")}
    assert got == {first.replace("&#9;", "\t"): 1, second: 0} or got == {first: 1, second: 0}
    page.reload()
    assert _item(page) == third                                      # progress kept
    monkeypatch.setattr(queue, "UNDO_SECONDS", 60.0)                 # the service's window
    _press(page, "y", third)                                         # decides it (k = 1) ...
    assert len(svc.store.judgments("er", "ann1")) == 3
    page.keyboard.press("u")                                         # ... a mis-key: undone
    page.wait_for_selector("#message")
    page.wait_for_function("!document.querySelector('.htmx-request, .htmx-settling')")
    assert _item(page) == third and "undone" in page.inner_text("#message")
    assert len(svc.store.judgments("er", "ann1")) == 2
    _press(page, "n", third)
    assert {j.item: j.value for j in svc.store.judgments("er", "ann1")}[third] == 0
    page.close()


def test_phone_screen(browser, site):
    svc, er, base, shots = site
    ctx = browser.new_context(viewport={"width": 375, "height": 667}, is_mobile=True,
                              has_touch=True)
    page = ctx.new_page()
    _login(page, base, "ann1")
    page.goto(f"{base}/annotate?campaign=er")
    page.screenshot(path=str(shots / "annotate-phone.png"), full_page=True)
    assert page.evaluate("document.documentElement.scrollWidth") <= 375
    before = _item(page)
    page.tap("#yes")
    page.wait_for_function("b => document.querySelector('#card').dataset.item !== b",
                           arg=before)
    ctx.close()


def test_submitter_cannot_reach_labels_and_csrf_is_checked(browser, site):
    svc, er, base, shots = site
    page = browser.new_page()
    page.goto(f"{base}/login")
    page.screenshot(path=str(shots / "login.png"), full_page=True)
    _login(page, base, "alice")
    for name, path in (("tokens", "/tokens"), ("submission", "/submissions/1")):
        assert page.goto(f"{base}{path}").status == 200
        page.screenshot(path=str(shots / f"{name}.png"), full_page=True)
    page.goto(f"{base}/scores?campaign=er")
    page.screenshot(path=str(shots / "scores.png"), full_page=True)
    assert "t1/pairs" in page.content()
    for path in ("/annotate?campaign=er", "/api/labels?campaign=er", "/admin",
                 "/api/queue/next?campaign=er"):
        assert page.goto(f"{base}{path}").status == 403, path
    page.goto(f"{base}/submit")
    page.screenshot(path=str(shots / "submit.png"), full_page=True)
    status = page.evaluate("""async () => {
        const f = new FormData(); f.append('campaign', 'er'); f.append('system', 'x');
        f.append('file', new Blob(['item\\nk1\\n']), 'x.csv');
        return (await fetch('/submit', {method: 'POST', body: f})).status; }""")
    assert status == 403                                              # no CSRF token
    page.close()
    admin = browser.new_page()
    _login(admin, base, "root")
    admin.goto(f"{base}/admin")
    admin.screenshot(path=str(shots / "admin.png"), full_page=True)
    assert "er" in admin.inner_text("#campaigns")
    admin.close()


def test_every_page_fits_a_phone(browser, site):
    svc, er, base, shots = site
    ctx = browser.new_context(viewport={"width": 375, "height": 667}, is_mobile=True)
    wide = []
    for who, paths in (("alice", ["/scores?campaign=er", "/submit", "/tokens",
                                  "/submissions/1"]),
                       ("root", ["/admin"]), ("ann1", ["/annotate?campaign=er",
                                                       "/exhaustive?campaign=er",
                                                       "/clusters?campaign=er"])):
        page = ctx.new_page()
        _login(page, base, who)
        for path in paths:
            page.goto(f"{base}{path}")
            name = path.strip("/").split("?")[0].replace("/", "-")
            page.screenshot(path=str(shots / f"phone-{name}.png"), full_page=True)
            if page.evaluate("document.documentElement.scrollWidth") > 375:
                wide.append(path)
        page.close()
        ctx.clear_cookies()
    ctx.close()
    assert not wide, f"pages wider than a phone: {wide}"

"""Exhaustive annotation of a document end to end in a real Chromium (the fixtures and set-up of
``test_service_browser``), at desktop size and at phone size (390 x 844): mark mentions with
the mouse (a selection in the text gives the span) and by keyboard (typed, Enter), save a draft
and reload it, submit the mentions, reload (the relation task is kept), choose each pair's
relation by keyboard (digits), finish, reload (the document is not offered again) and find the
document's truth in the campaign. On the phone, no page is wider than the screen. Screenshots
are kept (``$ASSAY_ARTEFACTS`` or the test's tmp folder)."""
from __future__ import annotations

import pytest

from assay.service import exhaustive_store as xs
from assay.service import views

from service_helpers import live_server, make_service
from test_service_browser import _login, browser  # noqa: F401 (a fixture)

pytestmark = pytest.mark.slow
TEXT = "Ann Lee joined Acme Corp in 2010. Bo Chan lives in Paris."
SIZES = {"desktop": dict(viewport={"width": 1280, "height": 800}),
         "phone": dict(viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True)}


@pytest.fixture()
def docs_site(tmp_path):
    """A campaign of two documents to annotate exhaustively, served by uvicorn in a thread."""
    from assay.ondemand import OnDemandCampaign
    svc = make_service(tmp_path, k=1)
    OnDemandCampaign.create(svc.store, "docs", annotator="consensus", corpus_units=100)
    views.add_records(svc.store, "docs", [{"id": "d1", "text": TEXT},
                                          {"id": "d2", "text": "It rained all day."}])
    xs.set_documents_k(svc.store.engine, "docs", 1)
    with live_server(svc.store, tmp_path) as (base, shots):
        yield svc, base, shots


def _select_with_mouse(page, start: int, end: int) -> None:
    """Drag the mouse over characters start..end of #doc's first text node."""
    box = page.evaluate("""([a, b]) => {
        const n = document.getElementById('doc').firstChild, r = document.createRange();
        r.setStart(n, a); r.setEnd(n, b);
        const rs = r.getClientRects(), f = rs[0], l = rs[rs.length - 1];
        return [f.left + 1, f.top + f.height / 2, l.right - 1, l.top + l.height / 2]; }""",
                        [start, end])
    page.mouse.move(box[0], box[1])
    page.mouse.down()
    page.mouse.move(box[2], box[3], steps=5)
    page.mouse.up()


def _type_mention(page, text: str, typ: str, canonical: str = "", link: str = "") -> None:
    page.focus("#m-text")
    page.keyboard.type(text)
    page.select_option("#m-type", typ)
    if canonical:
        page.focus("#m-canonical")
        page.keyboard.type(canonical)
    if link:
        page.focus("#m-link")
        page.keyboard.type(link)
    page.keyboard.press("Enter")


def _fits(page, width: int, wide: list[str], name: str) -> None:
    if page.evaluate("document.documentElement.scrollWidth") > width:
        wide.append(name)


@pytest.mark.parametrize("size", sorted(SIZES))
def test_exhaustive_annotation_end_to_end(browser, docs_site, size):  # noqa: F811
    svc, base, shots = docs_site
    ctx = browser.new_context(**SIZES[size])
    width, wide = SIZES[size]["viewport"]["width"], []
    page = ctx.new_page()
    _login(page, base, "ann1")
    page.goto(f"{base}/exhaustive?campaign=docs")
    assert page.get_attribute("#doc", "data-unit") == "d1"
    _fits(page, width, wide, "mentions")
    # the mouse: a selection gives the span (Ann Lee, 0..7), then its type and Enter
    _select_with_mouse(page, 0, 7)
    assert page.input_value("#m-text") == "Ann Lee"
    assert "0\u20137" in page.inner_text("#m-span")
    page.select_option("#m-type", "PER")
    page.focus("#m-type")
    page.keyboard.press("Enter")
    # the keyboard: typed mentions take their first unmarked occurrence
    _type_mention(page, "Acme Corp", "ORG", canonical="Acme")
    _type_mention(page, "2010", "DATE")
    _type_mention(page, "Paris", "GPE", link="Q90")
    _type_mention(page, "Lee", "PER")                 # inside Ann Lee: refused, said so
    assert "every occurrence already marked" in page.inner_text("#m-error")
    page.fill("#m-text", "")
    assert page.locator("#mentions li").count() == 4
    page.screenshot(path=str(shots / f"exhaustive-mentions-{size}.png"), full_page=True)
    page.click("#save-draft")                         # a draft: saved, not submitted
    page.wait_for_selector("#message")
    assert "draft of d1 saved (4 mentions)" in page.inner_text("#message")
    page.reload()
    assert page.locator("#mentions li").count() == 4 and page.locator("#doc mark").count() == 4
    _type_mention(page, "Bo Chan", "PER")             # the draft goes on
    assert [m.split(" [")[0] for m in page.locator("#mentions li").all_inner_texts()] == [
        "Ann Lee", "Acme Corp", "2010", "Bo Chan", "Paris"]
    _fits(page, width, wide, "mentions-draft")
    page.click("#submit-mentions")
    page.wait_for_selector("#relations-form")
    page.reload()                                     # submitted mentions kept: the pairs
    pairs = page.locator(".pair-task")
    assert pairs.count() == 4
    assert "Ann Lee" in pairs.nth(0).inner_text() and "Acme Corp" in pairs.nth(0).inner_text()
    _fits(page, width, wide, "relations")
    # by keyboard: 1 = per:employee_of, 0 = none (Ann Lee / 2010),
    # 1 = org:date_founded (Acme / 2010), 1 = per:residence (Bo Chan / Paris)
    for key in "1011":
        page.keyboard.press(key)
    checked = page.evaluate("[...document.querySelectorAll('.pair-task input:checked')]"
                            ".map(i => i.value)")
    assert checked == ["per:employee_of", "", "org:date_founded", "per:residence"]
    page.screenshot(path=str(shots / f"exhaustive-relations-{size}.png"), full_page=True)
    if size == "phone":
        page.tap("#finish")
    else:
        page.click("#finish")
    page.wait_for_selector("#message")
    assert "d1 done (3 true items)" in page.inner_text("#message")
    page.reload()
    assert page.get_attribute("#doc", "data-unit") == "d2"          # d1 not offered again
    page.screenshot(path=str(shots / f"exhaustive-next-{size}.png"), full_page=True)
    from assay.ondemand import OnDemandCampaign
    docs = OnDemandCampaign.open(svc.store, "docs")
    assert docs.od.units(docs.row.id) == {"d1": {"Ann Lee\tper:employee_of\tAcme",
                                                 "Acme\torg:date_founded\t2010",
                                                 "Bo Chan\tper:residence\tParis"}}
    page.goto(f"{base}/clusters?campaign=docs")                      # unlinked: 4 of 5
    assert page.locator("#mentions input").count() == 4
    _fits(page, width, wide, "clusters")
    page.screenshot(path=str(shots / f"exhaustive-clusters-{size}.png"), full_page=True)
    ctx.clear_cookies()
    _login(page, base, "root")
    page.goto(f"{base}/admin")
    assert "docs" in page.inner_text("#exhaustive")
    _fits(page, width, wide, "admin")
    page.screenshot(path=str(shots / f"exhaustive-admin-{size}.png"), full_page=True)
    ctx.close()
    assert not wide, f"pages wider than the screen ({width} px): {wide}"

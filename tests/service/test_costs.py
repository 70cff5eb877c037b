"""Costs per task type and flagged annotators over HTTP: an admin sets a campaign's prices (CSRF,
audited), the cost page prices a small known campaign per submission, per annotator and in all
(answers × the verification price, documents done × the exhaustive price); a submitter sees only
their team's submissions' costs; an annotator flagged by the quality rule is served no item and
has their votes refused (403) until an admin clears the flag (CSRF, audited)."""
from __future__ import annotations

import random

import pytest
from sqlalchemy import select

from assay.labels.schema import judgments_table, now
from assay.service import auth, costs, flags, jobs, quality, queue
from assay.service.auth import new_token, user_by_name
from assay.service.exhaustive_store import save
from assay.service.schema import audit_table, flags_table, job_items_table, leases_table

from service_helpers import PASSWORD, csrf_of, live_server, make_service


def _audit(service, action):
    with service.store.engine.connect() as conn:
        return conn.execute(select(audit_table).where(audit_table.c.action == action)).all()


def _two_submissions(service):
    alice = user_by_name(service.store.engine, "alice")
    bob = user_by_name(service.store.engine, "bob")
    jobs.submit(service.store, alice, "kb", "a", "a.csv", service.output_csv(0))
    jobs.submit(service.store, bob, "kb", "b", "b.csv", service.output_csv(1))
    jobs.run_pending(service.store)
    with service.store.engine.connect() as conn:
        rows = conn.execute(select(job_items_table)).all()
    items: dict[int, set[str]] = {}
    for r in rows:
        items.setdefault(int(r.submission_id), set()).add(str(r.item))
    return items[1], items[2]


def test_prices_set_by_admin_with_csrf(service):
    root = service.client("root")
    assert costs.prices(service.store.engine, "kb") == costs.DEFAULT_PRICES
    r = root.post("/admin/prices", data={"campaign": "kb", "verification": "0.5"})
    assert r.status_code == 403                                     # no CSRF token
    tok = csrf_of(root, "/costs?campaign=kb")
    r = root.post("/admin/prices", data={"campaign": "kb", "verification": "-1", "csrf": tok})
    assert r.status_code == 400 and "0 or more" in r.text
    r = root.post("/admin/prices", data={"campaign": "kb", "exhaustive": "nan", "csrf": tok})
    assert r.status_code == 400
    assert costs.prices(service.store.engine, "kb") == costs.DEFAULT_PRICES  # nothing kept
    r = root.post("/admin/prices", data={"campaign": "kb", "verification": "0.5",
                                         "csrf": tok})
    assert r.status_code == 303
    assert costs.prices(service.store.engine, "kb") == {"verification": 0.5,
                                                        "exhaustive": 2.60}
    engine = service.store.engine
    head = {"Authorization": f"Bearer {new_token(engine, user_by_name(engine, 'root'))[1]}"}
    r = service.client().post("/admin/prices", data={"campaign": "kb", "exhaustive": "3"},
                              headers=head)
    assert r.json() == {"campaign": "kb", "prices": {"verification": 0.5, "exhaustive": 3.0}}
    r = service.client("alice").post("/admin/prices", data={
        "campaign": "kb", "verification": "9", "csrf": csrf_of(service.client("alice"))})
    assert r.status_code == 403
    assert [a.user for a in _audit(service, "prices")] == ["root", "root"]


def test_costs_of_a_small_known_campaign(service):
    items_a, items_b = _two_submissions(service)
    added_b = items_b - items_a
    store, row = service.store, service.camp.row
    skipped = queue.next_item(store, row, "ann2")                   # ann2 skips one item
    queue.vote(store, row, "ann2", skipped, None)
    n = 0
    while (item := queue.next_item(store, row, "ann1")) is not None:
        queue.vote(store, row, "ann1", item, service.truth[item])
        n += 1
    assert n == len(items_a | items_b)                              # k = 1: one label each
    with store.engine.begin() as conn:                              # exhaustive work
        save(conn, "kb", "d1", "ann2", "done", [], {})
        save(conn, "kb", "d2", "ann2", "done", [], {})
        save(conn, "kb", "d3", "ann1", "draft", [])                 # not done: not paid
    root = service.client("root")
    r = root.post("/admin/prices", data={"campaign": "kb", "verification": "0.5",
                                         "exhaustive": "3", "csrf": csrf_of(root)})
    assert r.status_code == 303
    got = costs.campaign_costs(store, row)
    a, b = got.submissions
    assert (a.system, a.items, a.new_items) == ("t1/a", len(items_a), len(items_a))
    assert (b.system, b.items, b.new_items) == ("t2/b", len(items_b), len(added_b))
    extra_a, extra_b = int(skipped in items_a), int(skipped in added_b)
    assert a.answers_added == len(items_a) + extra_a and a.cost == 0.5 * a.answers_added
    assert b.answers_added == len(added_b) + extra_b and b.cost == 0.5 * b.answers_added
    assert b.answers == len(items_b) + int(skipped in items_b)      # reused labels count
    people = {p.name: p for p in got.annotators}
    assert (people["ann1"].labels, people["ann1"].skips, people["ann1"].documents) == (n, 0, 0)
    assert (people["ann2"].labels, people["ann2"].skips, people["ann2"].documents) == (0, 1, 2)
    assert people["ann1"].cost == 0.5 * n and people["ann2"].cost == 0.5 + 2 * 3.0
    assert got.answers == n + 1 and got.documents == 2
    assert got.cost == pytest.approx(0.5 * (n + 1) + 6.0)
    assert got.cost == pytest.approx(a.cost + b.cost + 6.0)         # each answer paid once
    page = root.get("/costs?campaign=kb")
    assert page.status_code == 200
    assert f"Campaign total: {got.cost:.2f}" in page.text
    assert f"<td>ann2</td><td>0</td><td>1</td><td>0</td><td>2</td><td class=\"cost\">6.50</td>" \
        in page.text
    assert 'href="/costs"' in root.get("/admin").text


def test_a_submitter_sees_only_their_own_costs(service):
    _two_submissions(service)
    store, row = service.store, service.camp.row
    while (item := queue.next_item(store, row, "ann1")) is not None:
        queue.vote(store, row, "ann1", item, service.truth[item])
    ours = costs.campaign_costs(store, row, "t1")
    assert [s.system for s in ours.submissions] == ["t1/a"] and ours.annotators == []
    alice = service.client("alice").get("/costs?campaign=kb")
    assert alice.status_code == 200
    assert "t1/a" in alice.text and "t2/b" not in alice.text
    for hidden in ("ann1", "annotator-costs", "Campaign total", "prices-form"):
        assert hidden not in alice.text, hidden
    bob = service.client("bob").get("/costs?campaign=kb").text
    assert "t2/b" in bob and "t1/a" not in bob
    assert service.client("ann1").get("/costs?campaign=kb").status_code == 403
    assert service.client("alice").get("/costs?campaign=nope").status_code == 404


def _disagreeing(service, items, annotator="ann1"):
    """``annotator`` votes 0 first on each item, ann2 and ann3 then 1: a 2-1 majority against."""
    store, row = service.store, service.camp.row
    for i in items:
        queue.vote(store, row, annotator, i, 0)
    for other in ("ann2", "ann3"):
        for i in items:
            queue.vote(store, row, other, i, 1)


def test_a_flagged_annotator_gets_nothing_until_cleared(service):
    store, row = service.store, service.camp.row
    auth.add_user(store.engine, "ann3", "annotator", PASSWORD, None)
    queue.set_settings(store, "kb", queue.Settings(k=3, daily_limit=2))
    bad = [f"i{x:02d}" for x in range(12)]
    queue.enqueue(store, "kb", [*bad, "spare"], k=3)
    for i in bad:
        queue.vote(store, row, "ann1", i, 0)
    assert queue.next_item(store, row, "ann1") == "spare"           # not flagged yet: a lease
    for other in ("ann2", "ann3"):
        for i in bad:
            queue.vote(store, row, other, i, 1)
    rep = {a.name: a for a in quality.report(store, row).annotators}
    assert (rep["ann1"].disagreements, rep["ann1"].compared, rep["ann1"].flagged) == \
        (12, 12, True)                                              # the quality rule
    ann1 = service.client("ann1")
    assert ann1.get("/api/queue/next?campaign=kb").json()["item"] is None
    with store.engine.connect() as conn:
        assert conn.execute(select(leases_table).where(
            leases_table.c.annotator == "ann1")).all() == []         # the lease released
    r = ann1.post("/api/labels", json={"campaign": "kb", "item": "spare", "value": 1},
                  headers={"X-CSRF-Token": csrf_of(ann1)})
    assert r.status_code == 403 and "flagged" in r.json()["error"]
    assert ann1.get("/annotate?campaign=kb").status_code == 200
    assert queue.next_item(store, row, "ann2") == "spare"           # others go on
    [flagged] = _audit(service, "flagged")
    assert (flagged.user, flagged.campaign) == ("ann1", "kb")
    root = service.client("root")
    page = root.get("/costs?campaign=kb").text
    assert "<b>flagged</b>" in page and 'action="/admin/flags/clear"' in page
    clear = {"campaign": "kb", "annotator": "ann1"}
    assert root.post("/admin/flags/clear", data=clear).status_code == 403     # no CSRF
    alice = service.client("alice")
    assert alice.post("/admin/flags/clear", data={**clear, "csrf": csrf_of(alice)}
                      ).status_code == 403
    assert flags.flags(store.engine, "kb")["ann1"].live
    tok = csrf_of(root)
    assert root.post("/admin/flags/clear", data={**clear, "csrf": tok}).status_code == 303
    assert root.post("/admin/flags/clear", data={**clear, "csrf": tok}).status_code == 404
    assert [(a.user, a.detail) for a in _audit(service, "flag-cleared")] == \
        [("root", '{"annotator": "ann1"}')]
    assert ann1.get("/api/queue/next?campaign=kb").json()["item"] == "spare"
    assert "cleared by root" in root.get("/costs?campaign=kb").text
    again = [f"j{x:02d}" for x in range(11)]                        # the rule afresh
    queue.enqueue(store, "kb", again, k=3)
    _disagreeing(service, again)
    assert queue.next_item(store, row, "ann1") is None
    assert flags.flags(store.engine, "kb")["ann1"].disagreements == 11
    assert len(_audit(service, "flagged")) == 2


def test_the_flag_count_matches_the_quality_report(service):
    """flags.disagreements for one annotator is quality.report's count, on random votes."""
    rng = random.Random(7)
    store, row = service.store, service.camp.row
    rows = [{"dataset": row.dataset, "item": f"x{i}", "annotator": w, "role": "assessor",
             "value": rng.random() < (0.8 if w != "ann1" else 0.3), "status": "judged",
             "created_at": now()}
            for i in range(80) for w in ("ann1", "ann2", "ann3", "ann4")
            if rng.random() < 0.75]
    with store.engine.begin() as conn:
        conn.execute(judgments_table.insert(), [{**r, "value": int(r["value"])} for r in rows])
    rep = quality.report(store, row)
    assert {a.flagged for a in rep.annotators} == {True, False}
    with store.engine.connect() as conn:
        for a in rep.annotators:
            d, c = flags.disagreements(conn, row, a.name)
            if a.labels > 10:
                assert (d, c) == (a.disagreements, a.compared), a
            assert quality.flag_rule(d, c) == a.flagged, a


@pytest.mark.slow
def test_cost_page_in_a_browser_on_desktop_and_phone(tmp_path):
    """Screenshots of the cost page (admin, with a flag) at desktop and phone width
    (``$ASSAY_ARTEFACTS`` or the test's tmp folder); no sideways scrolling on the phone."""
    import os
    import shutil
    from pathlib import Path
    chromium = os.environ.get("ASSAY_CHROMIUM", "/usr/bin/chromium")
    if not (Path(chromium).exists() or shutil.which(chromium)):
        if os.environ.get("ASSAY_SKIP_BROWSER") == "1":
            pytest.skip("ASSAY_SKIP_BROWSER=1: browser tests skipped on purpose")
        pytest.fail(f"Chromium not found at {chromium}: apt-get install -y chromium")
    from playwright.sync_api import sync_playwright
    service = make_service(tmp_path)
    _two_submissions(service)
    store, row = service.store, service.camp.row
    while (item := queue.next_item(store, row, "ann1")) is not None:
        queue.vote(store, row, "ann1", item, service.truth[item])
    with store.engine.begin() as conn:
        conn.execute(flags_table.insert().values(
            campaign="kb", annotator="ann1", flagged_at=now(), disagreements=12, compared=40))
    with live_server(store, tmp_path) as (base, shots), sync_playwright() as p:
        b = p.chromium.launch(executable_path=chromium, args=[
            "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run"])
        for name, ctx in (("costs", b.new_context(viewport={"width": 1280, "height": 800})),
                          ("costs-phone", b.new_context(viewport={"width": 375, "height": 667},
                                                        is_mobile=True))):
            page = ctx.new_page()
            page.goto(f"{base}/login")
            page.fill("#name", "root")
            page.fill("#password", PASSWORD)
            page.click("#login")
            page.wait_for_load_state("networkidle")
            page.goto(f"{base}/costs?campaign=kb")
            page.screenshot(path=str(shots / f"{name}.png"), full_page=True)
            assert "t2/b" in page.inner_text("#submission-costs")
            assert "flagged" in page.inner_text("#annotator-costs")
            if name == "costs-phone":
                assert page.evaluate("document.documentElement.scrollWidth") <= 375
            ctx.close()
        b.close()

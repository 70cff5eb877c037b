"""Session 12's gaps of the service: a flagged annotator's votes are refused on the Label Studio
import path and their undo is refused (403, nothing written); admins have the cost page in the
page header; ``GET /api/costs`` prices at the campaign's stored prices per task type (a
``?price=`` only replaces the verification price in that answer, nothing stored)."""
from __future__ import annotations

import re

import pytest
from sqlalchemy import select

from assay.labels.schema import now
from assay.service import costs, flags, jobs, queue
from assay.service.auth import user_by_name
from assay.service.exhaustive_store import save
from assay.service.schema import flags_table, leases_table

from service_helpers import csrf_of


def _flag(service, annotator):
    with service.store.engine.begin() as conn:
        conn.execute(flags_table.insert().values(campaign="kb", annotator=annotator,
                                                 flagged_at=now(), disagreements=12,
                                                 compared=40))


def _ls(item, who, choice):
    return {"data": {"item": item}, "annotations": [{"completed_by": {"email": who}, "result": [
        {"from_name": "label", "type": "choices", "value": {"choices": [choice]}}]}]}


def test_a_flagged_annotators_label_studio_votes_are_refused(service):
    queue.enqueue(service.store, "kb", ["a", "b", "c"], 2)
    _flag(service, "ls:bad@x")
    root = service.client("root")
    head = {"X-CSRF-Token": csrf_of(root)}
    body = [_ls("a", "good@x", "yes"), _ls("b", "bad@x", "no"), _ls("c", "good@x", "no")]
    r = root.post("/api/labelstudio/import?campaign=kb", json=body, headers=head)
    assert r.status_code == 403
    err = r.json()["error"]
    assert "task 2, annotation 1" in err and "'ls:bad@x' is flagged" in err
    assert service.store.judgments("kb") == []                  # the import is all or nothing
    assert flags.clear(service.store.engine, "kb", "ls:bad@x", "root")
    r = root.post("/api/labelstudio/import?campaign=kb", json=body, headers=head)
    assert r.status_code == 201 and r.json()["votes"] == 3
    assert service.store.labels("kb", "ls:bad@x") == {"b": 0}


def test_the_flag_rule_is_checked_on_label_studio_annotators(service):
    """They never pass through the queue, where the rule is checked: the import checks it on
    each of its annotators once their votes are kept (12 of 12 against a 2-1 majority)."""
    items = [f"i{n}" for n in range(12)]
    queue.set_settings(service.store, "kb", queue.Settings(k=3))
    queue.enqueue(service.store, "kb", items, 3)
    root = service.client("root")
    body = [t for i in items for t in (_ls(i, "good1@x", "yes"), _ls(i, "bad@x", "no"),
                                       _ls(i, "good2@x", "yes"))]
    r = root.post("/api/labelstudio/import?campaign=kb", json=body,
                  headers={"X-CSRF-Token": csrf_of(root)})
    assert r.status_code == 201, r.json()
    assert r.json() == {"votes": 36, "flagged": ["ls:bad@x"]}
    got = flags.flags(service.store.engine, "kb")
    assert set(got) == {"ls:bad@x"} and got["ls:bad@x"].live
    assert (got["ls:bad@x"].disagreements, got["ls:bad@x"].compared) == (12, 12)


def test_the_campaigns_own_name_is_refused_on_the_import_path(service):
    """vote_in (the import's path) refuses what vote refuses: the campaign's own annotator."""
    queue.enqueue(service.store, "kb", ["a"], 1)
    with service.store.engine.begin() as conn, pytest.raises(queue.QueueError) as exc:
        queue.vote_in(conn, service.store, service.camp.row, "consensus", "a", 1, 1)
    assert exc.value.status == 403 and "campaign's own" in str(exc.value)


def test_a_flagged_annotators_undo_is_refused(service):
    store, row = service.store, service.camp.row
    queue.set_settings(store, "kb", queue.Settings(k=2))       # one vote decides nothing
    queue.enqueue(store, "kb", ["a", "b"], 2)
    queue.vote(store, row, "ann1", "a", 1)
    _flag(service, "ann1")
    ann1 = service.client("ann1")
    r = ann1.post("/api/undo", json={"campaign": "kb"}, headers={"X-CSRF-Token": csrf_of(ann1)})
    assert r.status_code == 403 and "no undo is taken" in r.json()["error"]
    assert store.labels("kb", "ann1") == {"a": 1}               # the vote stays
    with store.engine.connect() as conn:                        # and no lease was given
        assert conn.execute(select(leases_table).where(
            leases_table.c.annotator == "ann1")).all() == []
    page = ann1.post("/annotate/undo", data={"campaign": "kb", "csrf": csrf_of(ann1)})
    assert page.status_code == 403 and page.headers["X-Assay-Item"] == "1"   # as the API
    assert "no undo is taken" in page.text and store.labels("kb", "ann1") == {"a": 1}
    flags.clear(store.engine, "kb", "ann1", "root")
    r = ann1.post("/api/undo", json={"campaign": "kb"}, headers={"X-CSRF-Token": csrf_of(ann1)})
    assert r.status_code == 200 and r.json() == {"item": "a"}
    assert store.labels("kb", "ann1") == {}


def _nav(html: str) -> str:
    return re.search(r"<nav>(.*?)</nav>", html, re.S).group(1)


def test_the_cost_page_is_in_the_admins_header(service):
    root = service.client("root")
    for path in ("/admin", "/tokens", "/scores"):
        assert 'href="/costs"' in _nav(root.get(path).text), path
    assert root.get("/costs").status_code == 200                # the first campaign's
    assert 'href="/costs"' not in _nav(service.client("alice").get("/tokens").text)
    assert 'href="/costs"' not in _nav(service.client("ann1").get("/tokens").text)


def test_api_costs_at_the_stored_prices(service):
    store, row = service.store, service.camp.row
    alice, bob = (user_by_name(store.engine, n) for n in ("alice", "bob"))
    jobs.submit(store, alice, "kb", "a", "a.csv", service.output_csv(0))
    jobs.submit(store, bob, "kb", "b", "b.csv", service.output_csv(1))
    jobs.run_pending(store)
    while (item := queue.next_item(store, row, "ann1")) is not None:
        queue.vote(store, row, "ann1", item, service.truth[item])
    with store.engine.begin() as conn:
        save(conn, "kb", "d1", "ann2", "done", [], {})
    costs.set_prices(store.engine, "kb", {"verification": 0.5, "exhaustive": 3.0}, "root")
    root = service.client("root")
    got = root.get("/api/costs?campaign=kb").json()
    page = costs.campaign_costs(store, row)
    assert got["prices"] == {"verification": 0.5, "exhaustive": 3.0}
    assert got["cost"] == page.cost == pytest.approx(0.5 * got["answers"] + 3.0)
    assert got["documents"] == 1
    a, b = got["submissions"]
    assert (a["system"], b["system"]) == ("t1/a", "t2/b")
    assert a["cost"] == 0.5 * a["answers_added"] and b["cost"] == 0.5 * b["answers_added"]
    assert b["answers_added"] <= b["answers"]                   # reused labels: unpaid
    assert [(x["name"], x["cost"]) for x in got["annotators"]] == [
        ("ann1", 0.5 * got["answers"]), ("ann2", 3.0)]
    what_if = root.get("/api/costs?campaign=kb&price=0.25").json()
    assert what_if["prices"] == {"verification": 0.25, "exhaustive": 3.0}
    assert what_if["cost"] == pytest.approx(0.25 * got["answers"] + 3.0)
    assert costs.prices(store.engine, "kb") == {"verification": 0.5, "exhaustive": 3.0}
    for bad in ("-1", "nan", "x"):
        r = root.get(f"/api/costs?campaign=kb&price={bad}")
        assert r.status_code == 400 and "price of verification" in r.json()["error"], bad
    assert service.client("alice").get("/api/costs?campaign=kb").status_code == 403



def test_the_pages_undo_answers_the_apis_status(service):
    """A refused undo on the annotation page (the htmx form) answers the API's status with the
    item fragment and its message: 409 nothing to undo, 403 flagged; 200 when it is taken."""
    store, row = service.store, service.camp.row
    queue.set_settings(store, "kb", queue.Settings(k=2))
    queue.enqueue(store, "kb", ["a", "b"], 2)
    ann1 = service.client("ann1")
    tok = csrf_of(ann1)

    def both():
        api = ann1.post("/api/undo", json={"campaign": "kb"}, headers={"X-CSRF-Token": tok})
        page = ann1.post("/annotate/undo", data={"campaign": "kb", "csrf": tok})
        return api, page

    api, page = both()
    assert api.status_code == page.status_code == 409
    assert api.json()["error"] == "nothing to undo" and 'id="message"' in page.text
    assert "nothing to undo" in page.text and 'id="card"' in page.text   # the item still shown
    queue.vote(store, row, "ann1", "a", 1)
    _flag(service, "ann1")
    api, page = both()
    assert api.status_code == page.status_code == 403
    assert "no undo is taken" in page.text and 'id="done"' in page.text  # served nothing
    assert store.labels("kb", "ann1") == {"a": 1}
    flags.clear(store.engine, "kb", "ann1", "root")
    page = ann1.post("/annotate/undo", data={"campaign": "kb", "csrf": tok})
    assert page.status_code == 200 and "undone" in page.text and store.labels("kb", "ann1") == {}

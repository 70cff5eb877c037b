"""The annotation queue under concurrent annotators: leases, votes on decided items, the cap of
k annotators per item and items nobody can decide."""
from __future__ import annotations

import pytest
from sqlalchemy import func, select

from assay.labels.schema import judgments_table as J
from assay.service import auth, queue
from assay.service.queue import QueueError


def _annotators(service, n):
    for i in range(3, n + 1):
        auth.add_user(service.store.engine, f"ann{i}", "annotator", "correct horse battery")
    return [f"ann{i}" for i in range(1, n + 1)]


def test_concurrent_annotators_are_served_items_up_to_needed(service):
    store, row = service.store, service.camp.row
    queue.set_settings(store, "kb", queue.Settings(k=3, daily_limit=2))
    queue.enqueue(store, "kb", ["x1", "x2", "x3"], 3)
    names = _annotators(service, 7)
    served = {a: queue.next_item(store, row, a) for a in names}
    got = list(served.values())
    assert got.count("x1") == got.count("x2") == got.count("x3") == 2    # needed: 2 each
    assert served["ann7"] is None
    assert queue.next_item(store, row, "ann1") == served["ann1"]        # a reload: same item


def test_vote_on_decided_item_is_refused_and_not_stored(service):
    store, row = service.store, service.camp.row
    queue.set_settings(store, "kb", queue.Settings(k=3, daily_limit=2))
    queue.enqueue(store, "kb", ["x1"], 3)
    _annotators(service, 3)
    queue.vote(store, row, "ann1", "x1", 1)
    queue.vote(store, row, "ann2", "x1", 1)
    assert queue.decided(store, "kb") == {"x1": 1}
    with pytest.raises(QueueError) as e:
        queue.vote(store, row, "ann3", "x1", 0)
    assert e.value.status == 409
    assert queue.vote(store, row, "ann1", "x1", 1).value == 1           # a re-post is fine
    with store.engine.connect() as c:
        assert c.execute(select(func.count()).select_from(J).where(
            (J.c.item == "x1") & (J.c.annotator != row.annotator))).scalar() == 2


def test_vote_on_decided_item_over_http_is_409(service):
    store, row = service.store, service.camp.row
    queue.enqueue(store, "kb", ["x1"], 1)
    queue.vote(store, row, "ann1", "x1", 1)
    from service_helpers import csrf_of
    c = service.client("ann2")
    tok = csrf_of(c, "/annotate")
    r = c.post("/api/labels", headers={"X-CSRF-Token": tok},
               json={"campaign": "kb", "item": "x1", "value": 0})
    assert r.status_code == 409, r.text

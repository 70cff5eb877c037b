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


def test_decide_never_asks_beyond_k_and_a_tie_at_k_is_undecidable():
    for ones in range(6):
        for zeros in range(6):
            for k in range(1, 6):
                label, needed = queue.decide(ones, zeros, k)
                assert needed <= max(k, ones + zeros)
                if ones + zeros >= k and ones == zeros and ones:
                    assert label is None and needed <= ones + zeros     # undecidable
    assert queue.decide(1, 1, 2) == (None, 2)


def _job_waiting_on_one_item(tmp_path, k):
    from service_helpers import make_service

    from assay.service import jobs
    svc = make_service(tmp_path, k=k)
    alice = svc.client("alice")
    from service_helpers import csrf_of
    r = alice.post("/api/submissions", headers={"X-CSRF-Token": csrf_of(alice, "/submit")},
                   data={"campaign": "kb", "system": "s"},
                   files={"file": ("o.csv", svc.output_csv(0))})
    assert r.status_code == 202, r.text
    sid = r.json()["id"]
    jobs.run_pending(svc.store)
    assert jobs.submission(svc.store.engine, sid).state == "waiting"
    return svc, sid


def _finish(svc, sid, first_item_votes):
    """The first queued item gets ``first_item_votes``; every other item the truth; the job
    must end (done), not wait forever."""
    from assay.service import jobs
    row = svc.camp.row
    stuck = queue.next_item(svc.store, row, "ann1")
    for who, v in first_item_votes:
        queue.vote(svc.store, row, who, stuck, v)
    for _ in range(10):
        for who in ("ann1", "ann2"):
            while (it := queue.next_item(svc.store, row, who)) is not None:
                queue.vote(svc.store, row, who, it, svc.truth.get(it, 0))
        jobs.run_pending(svc.store)
        if jobs.submission(svc.store.engine, sid).state == "done":
            break
    assert jobs.submission(svc.store.engine, sid).state == "done"
    return stuck


def test_tie_at_k_is_listed_for_the_admin_and_the_job_goes_on(tmp_path):
    svc, sid = _job_waiting_on_one_item(tmp_path, k=2)
    stuck = _finish(svc, sid, [("ann1", 1), ("ann2", 0)])
    assert queue.undecidable(svc.store, "kb") == [stuck]
    assert stuck not in queue.decided(svc.store, "kb")
    page = svc.client("root").get("/admin")
    assert stuck.split("\t")[0] in page.text


def test_item_every_annotator_skipped_does_not_block_its_job(tmp_path):
    svc, sid = _job_waiting_on_one_item(tmp_path, k=3)
    stuck = _finish(svc, sid, [("ann1", None), ("ann2", None)])
    assert queue.undecidable(svc.store, "kb") == [stuck]


def test_undo_of_the_deciding_vote(service, monkeypatch):
    """A mis-keyed deciding answer can be taken back while its decision is held back from the
    jobs (UNDO_SECONDS): the item reopens and a job does not use it meanwhile; once settled or
    used by a job, the undo is refused and the label stays."""
    from assay.service import jobs
    store, row = service.store, service.camp.row
    monkeypatch.setattr(queue, "UNDO_SECONDS", 3600.0)
    alice = auth.user_by_name(store.engine, "alice")
    jobs.submit(store, alice, "kb", "s", "a.csv", service.output_csv(0))
    jobs.run_pending(store)                                  # k = 1: every vote decides
    first = queue.next_item(store, row, "ann1")
    wrong = 1 - service.truth[first]
    queue.vote(store, row, "ann1", first, wrong)
    assert queue.decided(store, "kb")[first] == wrong
    with pytest.raises(jobs.NeedLabels):                     # held back: no job reads it yet
        jobs.QueueSource(store, "kb", row.annotator).label(0, first)
    assert queue.undo(store, row, "ann1") == first           # the deciding vote taken back
    assert first not in queue.decided(store, "kb")
    assert queue.next_item(store, row, "ann1") == first      # served again, to the same one
    queue.vote(store, row, "ann1", first, service.truth[first])
    monkeypatch.setattr(queue, "UNDO_SECONDS", 0.0)          # the window passes
    assert jobs.QueueSource(store, "kb", row.annotator).label(0, first) == service.truth[first]
    with pytest.raises(QueueError, match="cannot be undone"):
        queue.undo(store, row, "ann1")
    from assay.labels.store import Judgment                  # a job records it (uses it) ...
    store.record(row.dataset, [Judgment(first, row.annotator, int(service.truth[first]))])
    monkeypatch.setattr(queue, "UNDO_SECONDS", 3600.0)       # ... so even inside a window
    with pytest.raises(QueueError, match="cannot be undone"):
        queue.undo(store, row, "ann1")
    assert queue.decided(store, "kb")[first] == service.truth[first]


def test_the_undo_window_is_the_apps_not_a_module_global(service):
    """``assay serve --undo-seconds`` reaches the pages and the worker as an argument of the
    app (it was a module global the CLI overwrote, which a worker in another process never
    saw): here the module's window is 0 (conftest) and the app's 3600 s holds a decision back."""
    from assay.service import jobs
    from assay.service.app import create_app
    store, row = service.store, service.camp.row
    assert queue.UNDO_SECONDS == 0.0
    app = create_app(store, undo_seconds=3600.0)
    assert app.state.undo_seconds == 3600.0
    assert jobs.Worker(store, window=3600.0).window == 3600.0
    alice = auth.user_by_name(store.engine, "alice")
    jobs.submit(store, alice, "kb", "s", "a.csv", service.output_csv(0))
    jobs.run_pending(store, window=3600.0)                   # k = 1: every vote decides
    first = queue.next_item(store, row, "ann1")
    queue.vote(store, row, "ann1", first, 1 - service.truth[first])
    with pytest.raises(jobs.NeedLabels):                     # inside the app's window
        jobs.QueueSource(store, "kb", row.annotator, window=3600.0).label(0, first)
    assert jobs.QueueSource(store, "kb", row.annotator).label(0, first) is not None  # module: 0
    assert queue.undo(store, row, "ann1", window=3600.0) == first

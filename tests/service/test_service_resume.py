"""A job killed mid-way (its process ends with ``os._exit`` right after the campaign stored a
round of draws, as a ``kill -9`` would leave it) is resumed by the next worker: the same draws,
each queued once, and the job finishes; the migration runs on a store of the previous release."""
from __future__ import annotations

import subprocess
import sys
import textwrap

from sqlalchemy import func, select

from assay.labels.store import Judgment, LabelStore
from assay.service import jobs, migrate, queue
from assay.service.auth import user_by_name
from assay.service.schema import queue_table


def test_killed_job_resumes(service):
    alice = user_by_name(service.store.engine, "alice")
    sid = jobs.submit(service.store, alice, "kb", "sysA", "a.csv", service.output_csv(0))
    script = textwrap.dedent(f"""
        import os
        from assay.labels.store import LabelStore
        from assay.ondemand.store import OnDemandStore
        from assay.service import jobs
        original = OnDemandStore.add_draws
        def add_then_die(self, *a, **k):
            original(self, *a, **k)
            os._exit(9)
        OnDemandStore.add_draws = add_then_die
        jobs.run_job(LabelStore({str(service.path / 'svc.db')!r}), {sid})
    """)
    res = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert res.returncode == 9, res.stderr
    assert jobs.submission(service.store.engine, sid).state == "running"
    draws_before = service.camp.od.draws(service.camp.row.id)
    assert len(draws_before) > 0
    assert jobs.recover(service.store.engine) == 1
    asked: list[str] = []
    for _ in range(8):
        jobs.run_pending(service.store)
        if jobs.submission(service.store.engine, sid).state == "done":
            break
        while (item := queue.next_item(service.store, service.camp.row, "ann1")) is not None:
            asked.append(item)
            queue.vote(service.store, service.camp.row, "ann1", item, service.truth[item])
    assert jobs.submission(service.store.engine, sid).state == "done"
    after = service.camp.od.draws(service.camp.row.id)
    assert after.iloc[:len(draws_before)].equals(draws_before)      # the same first round
    assert len(asked) == len(set(asked))                             # no item asked twice
    with service.store.engine.connect() as conn:
        queued = conn.execute(select(func.count()).select_from(queue_table)).scalar_one()
    assert queued == len(set(asked)) == len(set(after["item"]))


def test_migrates_a_store_of_the_previous_release(tmp_path):
    old = LabelStore(tmp_path / "old.db")          # a label store with no service tables
    old.record("d", [Judgment("a", "gold", 1)])
    assert migrate.current(old.engine) is None
    assert migrate.upgrade(old.engine) is None
    assert migrate.current(old.engine) == migrate.head()
    assert migrate.upgrade(old.engine) == migrate.head()            # idempotent
    assert LabelStore(tmp_path / "old.db").labels("d", "gold") == {"a": 1}


def test_recover_leaves_a_live_workers_job(service):
    from assay.labels.store import claim_token
    alice = user_by_name(service.store.engine, "alice")
    sid = jobs.submit(service.store, alice, "kb", "sysA", "a.csv", service.output_csv(0))
    assert jobs._state(service.store.engine, sid, "running", when="pending",
                       worker=claim_token())                         # this process: alive
    assert jobs.recover(service.store.engine) == 0
    assert jobs.recover(service.store.engine, stale_after=-1) == 1   # too old: taken over
    assert jobs.submission(service.store.engine, sid).state == "pending"


def test_serves_a_store_written_by_release_0_1_0(tmp_path):
    """The store file release 0.1.0 wrote (tests/data, labels of two datasets, skips as its
    old negative values): the service opens it, migrates the label schema and its own tables,
    serves pages, and every old label is still there."""
    import shutil
    from pathlib import Path

    from fastapi.testclient import TestClient

    from assay.service import auth
    from assay.service.app import create_app
    from service_helpers import PASSWORD, login
    src = Path(__file__).resolve().parents[1] / "data" / "store_v0_1_0_skips.db"
    db = tmp_path / "old.db"
    shutil.copy(src, db)
    c = TestClient(create_app(str(db)), follow_redirects=False)
    store = c.app.state.store
    assert migrate.current(store.engine) == migrate.head()
    auth.add_user(store.engine, "root", "admin", PASSWORD, None)
    login(c, "root")
    assert c.get("/admin").status_code == 200
    for page in ("/annotate", "/scores", "/submit", "/tokens", "/exhaustive", "/clusters"):
        assert c.get(page).status_code < 500, page              # no campaign yet: no crash
    ds1, ds2 = store.labels("ds1", "<lambda>"), store.labels("ds2", "ann")
    assert (len(ds1), sum(ds1.values()), len(ds2), sum(ds2.values())) == (181, 36, 60, 17)

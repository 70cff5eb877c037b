"""``assay serve`` as a user starts it (a subprocess on a free port, its worker running the jobs):
labels posted through the API with a token, the server ``kill -9``-ed and restarted, every
acknowledged label still in the store, and the submission finished by the restarted worker.
And the same flow on PostgreSQL (the store by URL)."""
from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time

import httpx
import pytest

from assay.labels.store import LabelStore
from assay.ondemand import OnDemandCampaign
from assay.service import auth, jobs, migrate, queue
from assay.service.auth import user_by_name

from service_helpers import PASSWORD, USERS

SERVE = [sys.executable, "-c", "from assay.interfaces.cli import main; main()", "serve"]


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _start(db, port, *extra: str):
    p = subprocess.Popen(SERVE + ["--store", str(db), "--port", str(port), *extra],
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 90          # a loaded CI machine starts Python slowly
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"http://127.0.0.1:{port}/login", timeout=1).status_code == 200:
                return p
        except httpx.HTTPError:
            time.sleep(0.1)
    p.kill()
    pytest.fail(f"assay serve did not start: {p.stderr.read().decode()[-500:]}")


@pytest.mark.slow
def test_serve_kill_9_keeps_acknowledged_labels(service):
    engine = service.store.engine
    sid = jobs.submit(service.store, user_by_name(engine, "alice"), "kb", "sysA", "a.csv",
                      service.output_csv(0))
    jobs.run_pending(service.store)
    ann = {"Authorization": f"Bearer {auth.new_token(engine, user_by_name(engine, 'ann1'))[1]}"}
    sub = {"Authorization": f"Bearer {auth.new_token(engine, user_by_name(engine, 'alice'))[1]}"}
    port, db = _port(), service.path / "svc.db"
    base = f"http://127.0.0.1:{port}"
    # decisions held back a second for an undo (the service's 60 s would make the jobs wait
    # two minutes: the window itself is tests/service/test_service_queue.py's)
    proc = _start(db, port, "--undo-seconds", "1")
    acked: dict[str, int] = {}
    try:
        for _ in range(5):
            item = httpx.get(f"{base}/api/queue/next?campaign=kb", headers=ann).json()["item"]
            r = httpx.post(f"{base}/api/labels", headers=ann, json={
                "campaign": "kb", "item": item, "value": int(service.truth[item])})
            assert r.status_code == 201, r.text
            acked[item] = int(r.json()["value"])
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
        assert {k: v for k, v in LabelStore(db).labels("kb", "ann1").items()
                if k in acked} == acked
        proc = _start(db, port, "--undo-seconds", "1")
        deadline = time.monotonic() + 180
        while httpx.get(f"{base}/api/submissions/{sid}", headers=sub).json()["state"] != "done":
            assert time.monotonic() < deadline, "the submission did not finish"
            item = httpx.get(f"{base}/api/queue/next?campaign=kb", headers=ann).json()["item"]
            if item is None:
                time.sleep(0.3)
                continue
            r = httpx.post(f"{base}/api/labels", headers=ann, json={
                "campaign": "kb", "item": item, "value": int(service.truth[item])})
            assert r.status_code == 201, r.text
        scores = httpx.get(f"{base}/api/scores?campaign=kb", headers=sub).json()
        assert scores["systems"][0]["system"] == "t1/sysA"
        assert scores["systems"][0]["precision"]["ci_low"] is not None
    finally:
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGTERM)
            proc.wait(10)


def test_flow_on_postgresql(postgres_url):
    store = LabelStore(postgres_url)
    migrate.upgrade(store.engine)
    assert migrate.current(store.engine) == migrate.head()
    OnDemandCampaign.create(store, "pg", annotator="consensus", half_width=0.2, seed=1)
    queue.set_settings(store, "pg", queue.Settings(k=3))
    for name, role, team in USERS:
        if auth.user_by_name(store.engine, name) is None:
            auth.add_user(store.engine, name, role, PASSWORD, team)
    data = "item\n" + "\n".join(f"p{i}" for i in range(40)) + "\n"
    sid = jobs.submit(store, auth.user_by_name(store.engine, "alice"), "pg", "s", "p.csv",
                      data.encode())
    camp = OnDemandCampaign.open(store, "pg")
    for _ in range(8):
        jobs.run_pending(store)
        if jobs.submission(store.engine, sid).state == "done":
            break
        for who in ("ann1", "ann2"):
            while (item := queue.next_item(store, camp.row, who)) is not None:
                queue.vote(store, camp.row, who, item, int(item[1:]) % 4 != 0)
    assert jobs.submission(store.engine, sid).state == "done"
    est = camp.report().systems[0].estimates["precision"]
    assert est.ci_low <= 0.75 <= est.ci_high


def test_daily_limit_holds_under_concurrent_submits_on_postgresql(postgres_url):
    """8 submits at once of one team with a limit of 2 a day: exactly 2 kept."""
    import threading

    from assay.errors import AssayInputError
    store = LabelStore(postgres_url)
    migrate.upgrade(store.engine)
    OnDemandCampaign.create(store, "lim", annotator="consensus", half_width=0.2, seed=1)
    queue.set_settings(store, "lim", queue.Settings(k=3, daily_limit=2, min_output=1))
    user = auth.add_user(store.engine, "limsub", "submitter", PASSWORD, "tlim")
    got, bar = [], threading.Barrier(8)

    def go(n: int) -> None:
        bar.wait()
        try:
            got.append(jobs.submit(store, user, "lim", f"s{n}", "o.csv", b"item\na\nb\n"))
        except AssayInputError:
            got.append("refused")
    threads = [threading.Thread(target=go, args=(n,)) for n in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sum(1 for g in got if g != "refused") == 2 and len(got) == 8

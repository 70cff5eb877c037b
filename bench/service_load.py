"""Load on the service: N concurrent annotators (threads, one HTTP client and API token each)
post labels to ``assay serve`` (a subprocess) until LABELS are acknowledged, re-posting a share
of them; optionally the server is ``kill -9``-ed every few seconds and restarted (clients retry
on a refused connection). Afterwards the store is checked: every acknowledged (item, annotator)
label is there with its value (zero lost), each once (zero duplicated), and no answer was a 5xx.

    nice -n 10 .venv/bin/python bench/service_load.py --labels 10000 --annotators 50
    nice -n 10 .venv/bin/python bench/service_load.py --store postgresql+psycopg://…
    nice -n 10 .venv/bin/python bench/service_load.py --kill-every 3
"""
from __future__ import annotations

import argparse
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx
import numpy as np

from assay.labels.store import LabelStore
from assay.ondemand import OnDemandCampaign
from assay.service import auth, migrate, queue

SERVE = [sys.executable, "-c", "from assay.interfaces.cli import main; main()", "serve"]


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start(store: str, port: int) -> subprocess.Popen:
    p = subprocess.Popen(SERVE + ["--store", store, "--port", str(port), "--no-worker"],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"http://127.0.0.1:{port}/login", timeout=2).status_code == 200:
                return p
        except httpx.HTTPError:
            time.sleep(0.1)
    raise SystemExit("the server did not start")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--store", default=None, help="SQLite path or URL (default: a temp file)")
    ap.add_argument("--labels", type=int, default=10_000)
    ap.add_argument("--annotators", type=int, default=50)
    ap.add_argument("--repost", type=float, default=0.1, help="share of labels posted twice")
    ap.add_argument("--kill-every", type=float, default=0.0, help="kill -9 every S seconds")
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    store = a.store or str(Path(tempfile.mkdtemp(prefix="assay-load-")) / "load.db")
    labels = LabelStore(store)
    migrate.upgrade(labels.engine)
    name = f"load{os.getpid()}"
    camp = OnDemandCampaign.create(labels, name, annotator="consensus")
    queue.set_settings(labels, name, queue.Settings(k=2))
    rng = np.random.default_rng(a.seed)
    items = [f"it{i:06d}" for i in range(a.labels // 2 + a.annotators)]
    truth = dict(zip(items, rng.integers(0, 2, len(items)).tolist()))
    queue.enqueue(labels, name, items, 2)
    tokens = []
    for k in range(a.annotators):
        u = auth.add_user(labels.engine, f"{name}a{k}", "annotator", "load-test-pw")
        tokens.append(auth.new_token(labels.engine, u)[1])
    port = _port()
    base = f"http://127.0.0.1:{port}"
    proc = [start(store, port)]
    acked: dict[tuple[str, str], int] = {}
    lat: list[float] = []
    errors = {"5xx": 0, "retries": 0, "kills": 0}
    lock, stop = threading.Lock(), threading.Event()

    def call(c: httpx.Client, method: str, url: str, **kw):  # type: ignore[no-untyped-def]
        while not stop.is_set():
            try:
                r = c.request(method, url, **kw)
            except httpx.TransportError:
                with lock:
                    errors["retries"] += 1
                time.sleep(0.2)
                continue
            if r.status_code >= 500:
                with lock:
                    errors["5xx"] += 1
            return r
        return None

    def annotator(k: int) -> None:
        who = f"{name}a{k}"
        r_ = np.random.default_rng([a.seed, k])
        with httpx.Client(base_url=base, timeout=60,
                          headers={"Authorization": f"Bearer {tokens[k]}"}) as c:
            while not stop.is_set():
                r = call(c, "GET", f"/api/queue/next?campaign={name}")
                if r is None or r.status_code != 200 or r.json()["item"] is None:
                    return
                item = r.json()["item"]
                for _ in range(2 if r_.random() < a.repost else 1):
                    t = time.perf_counter()
                    p = call(c, "POST", "/api/labels",
                             json={"campaign": name, "item": item, "value": truth[item]})
                    if p is None or p.status_code != 201:
                        continue
                    with lock:
                        lat.append(time.perf_counter() - t)
                        acked[(item, who)] = int(p.json()["value"])
                        if len(acked) >= a.labels:
                            stop.set()

    def killer() -> None:
        while not stop.wait(a.kill_every):
            proc[0].send_signal(signal.SIGKILL)
            proc[0].wait()
            errors["kills"] += 1
            proc[0] = start(store, port)

    t0 = time.perf_counter()
    threads = [threading.Thread(target=annotator, args=(k,)) for k in range(a.annotators)]
    if a.kill_every > 0:
        threads.append(threading.Thread(target=killer, daemon=True))
    for t in threads:
        t.start()
    for t in threads[:a.annotators]:
        t.join()
    wall = time.perf_counter() - t0
    stop.set()
    proc[0].send_signal(signal.SIGTERM)
    proc[0].wait(30)
    stored = [j for j in LabelStore(store).judgments(camp.row.dataset)
              if j.annotator.startswith(f"{name}a")]
    have = {(j.item, j.annotator): j.value for j in stored}
    lost = sum(1 for k, v in acked.items() if have.get(k) != v)
    dup = len(stored) - len(have)
    ms = np.array(lat) * 1000
    print(f"store {labels.engine.dialect.name}; {a.annotators} annotators; "
          f"{len(acked):,} labels acknowledged ({len(lat):,} posts with re-posts) in {wall:.1f} s "
          f"= {len(lat) / wall:.0f} posts/s; POST latency p50 {np.percentile(ms, 50):.0f} ms, "
          f"p99 {np.percentile(ms, 99):.0f} ms; lost {lost}, duplicated {dup}, "
          f"HTTP 5xx {errors['5xx']}; kill -9 {errors['kills']}, retried {errors['retries']}")


if __name__ == "__main__":
    main()

"""Helpers of the service's tests: a store with a campaign and one user of each role, a
TestClient logged in as any of them, a small simulated world as the truth and its systems."""
from __future__ import annotations

import io
import os
import re
import socket
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("fastapi", reason="the service extra is not installed")

from fastapi.testclient import TestClient  # noqa: E402

from assay.labels.store import LabelStore  # noqa: E402
from assay.ondemand import OnDemandCampaign  # noqa: E402
from assay.ondemand.simulate import world  # noqa: E402
from assay.service import auth, migrate, queue  # noqa: E402

PASSWORD = "correct horse battery"
USERS = (("root", "admin", None), ("alice", "submitter", "t1"), ("bob", "submitter", "t2"),
         ("ann1", "annotator", None), ("ann2", "annotator", None))


@dataclass
class Service:
    path: Path
    store: LabelStore
    camp: OnDemandCampaign
    keys: np.ndarray
    memb: np.ndarray
    truth: dict[str, int]

    def output_csv(self, k: int) -> bytes:
        buf = io.StringIO()
        pd.DataFrame({"item": self.keys[self.memb[:, k]]}).to_csv(buf, index=False)
        return buf.getvalue().encode()

    def client(self, name: str | None = None) -> TestClient:
        from assay.service.app import create_app
        c = TestClient(create_app(self.store), follow_redirects=False)
        if name is not None:
            login(c, name)
        return c


def login(c: TestClient, name: str, password: str = PASSWORD) -> None:
    page = c.get("/login")
    token = re.search(r'name="csrf" value="([^"]+)"', page.text).group(1)
    r = c.post("/login", data={"name": name, "password": password, "csrf": token})
    assert r.status_code == 303, r.text


def csrf_of(c: TestClient, path: str = "/tokens") -> str:
    return re.search(r'name="csrf" value="([^"]+)"', c.get(path).text).group(1)


def submit_output(svc: "Service", who: str = "alice", system: str = "s", n: int = 0) -> int:
    """``who`` submits the n-th generated output as ``system`` of campaign kb by the API
    (202 asserted); returns the submission's id."""
    c = svc.client(who)
    r = c.post("/api/submissions", headers={"X-CSRF-Token": csrf_of(c, "/submit")},
               data={"campaign": "kb", "system": system},
               files={"file": ("o.csv", svc.output_csv(n))})
    assert r.status_code == 202, r.text
    return int(r.json()["id"])


def make_service(path: Path, k: int = 1, half_width: float = 0.15) -> Service:
    store = LabelStore(path / "svc.db")
    migrate.upgrade(store.engine)
    camp = OnDemandCampaign.create(store, "kb", annotator="consensus", half_width=half_width,
                                   seed=3)
    queue.set_settings(store, "kb", queue.Settings(k=k, daily_limit=2))
    for name, role, team in USERS:
        auth.add_user(store.engine, name, role, PASSWORD, team)
    w = world(5, m=2)
    keys = w.keys()
    return Service(path, store, camp, keys, w.memb, dict(zip(keys, w.truth.astype(int))))


def waits_for(engine, hold, act, patience: float = 1.5) -> None:
    """Run ``act`` in a thread while ``hold(conn)`` (e.g. a lock taken and a flag written) sits
    in an open write transaction: assert ``act`` is still waiting after ``patience`` seconds,
    then commit and let it finish (at most 60 s more)."""
    with engine.begin() as conn:
        hold(conn)
        t = threading.Thread(target=act)
        t.start()
        t.join(patience)
        assert t.is_alive(), "it did not wait for the transaction"
    t.join(60)


def free_port() -> int:
    """A TCP port free on 127.0.0.1 now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def live_server(store: LabelStore, tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """The app on ``store`` served by uvicorn in a thread on a free port: yields its base URL
    and the folder for screenshots (``$ASSAY_ARTEFACTS`` or the test's tmp folder)."""
    import uvicorn

    from assay.service.app import create_app
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(create_app(store), host="127.0.0.1", port=port,
                                           log_level="warning"))
    t = threading.Thread(target=server.run, daemon=True)
    t.start()
    deadline = time.monotonic() + 60
    while not server.started:
        assert time.monotonic() < deadline, "the server did not start"
        time.sleep(0.05)
    shots = Path(os.environ.get("ASSAY_ARTEFACTS", tmp_path / "screens"))
    shots.mkdir(parents=True, exist_ok=True)
    try:
        yield f"http://127.0.0.1:{port}", shots
    finally:
        server.should_exit = True
        t.join(10)

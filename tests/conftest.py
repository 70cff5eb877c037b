"""Shared fixtures: paths to the real data beside the repository, and a PostgreSQL server that
the tests start themselves."""
from __future__ import annotations

import shutil
import subprocess
import uuid
from pathlib import Path

import pandas as pd
import pytest

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"
ER = SHARED / "data" / "er"
ER_POOLS = ("amazon_google", "restaurant", "dblp_acm", "abt_buy", "tweets100k")


@pytest.fixture(scope="session")
def er_frames() -> dict[str, pd.DataFrame]:
    if not ER.exists():
        pytest.fail(f"the real ER pools are missing: expected {ER} (../shared beside the repo)")
    return {name: pd.read_parquet(ER / f"{name}.parquet") for name in ER_POOLS}


def _run(cmd: list[str]) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, capture_output=True, text=True, check=False)


@pytest.fixture(scope="session")
def postgres_url() -> str:
    """Start the machine's PostgreSQL cluster and create a fresh database for this session."""
    if shutil.which("pg_ctlcluster") is None:
        pytest.fail("PostgreSQL is not installed (.ci/run installs Debian's postgresql package)")
    clusters = _run(["pg_lsclusters", "-h"]).stdout.split()
    if len(clusters) < 2:
        pytest.fail("no PostgreSQL cluster found (pg_lsclusters)")
    version, name = clusters[0], clusters[1]
    _run(["pg_ctlcluster", version, name, "start"])
    port = _run(["pg_lsclusters", "-h"]).stdout.split()[2]
    db = f"assay_test_{uuid.uuid4().hex[:8]}"
    psql = ["su", "postgres", "-c"]
    _run(psql + ["psql -p %s -qc \"CREATE ROLE assay LOGIN PASSWORD 'assay'\"" % port])
    res = _run(psql + [f"psql -p {port} -qc 'CREATE DATABASE {db} OWNER assay'"])
    if res.returncode != 0:
        pytest.fail(f"cannot create the test database: {res.stderr}")
    yield f"postgresql+psycopg://assay:assay@localhost:{port}/{db}"
    _run(psql + [f"psql -p {port} -qc 'DROP DATABASE IF EXISTS {db} WITH (FORCE)'"])





def pytest_collection_modifyitems(config, items):
    """The slow simulations first, the quick tests after them (a stable sort). With
    ``--maxschedchunk 1`` (the Makefile) pytest-xdist hands a worker the next test as it frees
    up, in this order, so the long simulations start at once and the run ends on quick tests
    (in session 18's full run the on-demand simulations, collected last, left one worker
    running alone for minutes; with ``--dist worksteal`` the slow tests stayed at the front of
    one worker's queue while the other stole its quick ones)."""
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)

"""Concurrent runs on one store (issue 10 point 6): 8 processes evaluate the same pool and
dataset at once, 20 repetitions, on SQLite and PostgreSQL, on an existing store and on a store
they all create at the same moment. Each process logs every question its label source is asked.
Must hold: no process crashes, no duplicate label, no item asked twice (over all processes: an
item is claimed before it is asked), and every process gets the same result."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from sqlalchemy import create_engine, text

PROCS, REPS, BUDGET = 8, 20, 40

WORKER = r"""
import json, sys, time
from pathlib import Path
import pandas as pd
from assay.evaluation import evaluate
from assay.labels.sources import LabelSource
pool_path, urls, folder, me, reps, budget = sys.argv[1:7]
df = pd.read_parquet(pool_path)
truth = dict(zip(df['id'], df['label']))
pool = df.drop(columns='label')
urls = json.loads(urls)
folder = Path(folder)

class Logged(LabelSource):
    annotator = 'gold'
    def __init__(self, log):
        self.log = log
    def label(self, index, key):
        with open(self.log, 'a') as f:
            f.write(key + '\n')
        time.sleep(0.002)
        return int(truth[key])

for r in range(int(reps)):
    while not (folder / f'go-{r}').exists():
        time.sleep(0.005)
    res = evaluate(pool, Logged(folder / f'asked-{r}-{me}.log'), design='stratified',
                   budget=int(budget), seed=7, store=urls[r], dataset='shared', history=False)
    (folder / f'result-{r}-{me}.json').write_text(json.dumps(
        {'estimates': res.to_dict(), 'new': res.new_labels, 'reused': res.reused_labels}))
"""


@pytest.fixture(scope="module")
def pool_file(tmp_path_factory) -> Path:
    rng = np.random.default_rng(3)
    n = 400
    score = rng.normal(size=n)
    label = (rng.random(n) < 1 / (1 + np.exp(-(3 * score - 3)))).astype(int)
    path = tmp_path_factory.mktemp("conc") / "pool.parquet"
    pd.DataFrame({"id": [f"i{i}" for i in range(n)], "score": score,
                  "prediction": (score > 1).astype(int), "label": label}).to_parquet(path)
    return path


def _run_rounds(pool_file: Path, urls: list[str], folder: Path) -> dict[str, float]:
    folder.mkdir(parents=True, exist_ok=True)
    script = folder / "worker.py"
    script.write_text(WORKER)
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    procs = [subprocess.Popen([sys.executable, str(script), str(pool_file), json.dumps(urls),
                               str(folder), str(w), str(len(urls)), str(BUDGET)], env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for w in range(PROCS)]
    t0 = time.perf_counter()
    for r in range(len(urls)):
        (folder / f"go-{r}").touch()     # all processes start repetition r at once
        deadline = time.time() + 120
        while (sum((folder / f"result-{r}-{w}.json").exists() for w in range(PROCS)) < PROCS
               and time.time() < deadline and all(p.poll() in (None, 0) for p in procs)):
            time.sleep(0.01)
    outs = [p.communicate(timeout=120) for p in procs]
    crashes = [(w, o[1][-2000:]) for w, (p, o) in enumerate(zip(procs, outs)) if p.returncode]
    assert not crashes, crashes
    duplicates = asked_twice = 0
    for r, url in enumerate(urls):
        asked = []
        for w in range(PROCS):
            log = folder / f"asked-{r}-{w}.log"
            if log.exists():
                asked += log.read_text().split()
        asked_twice += len(asked) - len(set(asked))
        results = [json.loads((folder / f"result-{r}-{w}.json").read_text())
                   for w in range(PROCS)]
        assert all(x["estimates"] == results[0]["estimates"] for x in results)
        assert sum(x["new"] for x in results) == len(set(asked)) == BUDGET
        eng = create_engine(url)
        with eng.connect() as conn:
            rows = conn.execute(text("SELECT item, annotator, status FROM assay_judgments "
                                     "WHERE dataset = 'shared'")).all()
        eng.dispose()
        duplicates += len(rows) - len({(x.item, x.annotator) for x in rows})
        assert all(x.status == "judged" for x in rows) and len(rows) == BUDGET
    assert duplicates == 0 and asked_twice == 0
    return {"seconds": time.perf_counter() - t0, "crashes": len(crashes),
            "duplicates": duplicates, "asked_twice": asked_twice}


def _sqlite(path: Path) -> str:
    return f"sqlite:///{path}"


@pytest.mark.slow
@pytest.mark.parametrize("fresh", [False, True], ids=["existing-store", "created-at-once"])
def test_eight_processes_on_one_sqlite_store(pool_file, tmp_path, fresh):
    if fresh:   # a new file each repetition: all 8 processes create it at once
        urls = [_sqlite(tmp_path / f"fresh-{r}.db") for r in range(REPS)]
    else:       # one store, a new dataset state each repetition (fresh file, made beforehand)
        from assay.labels.store import LabelStore
        urls = [_sqlite(tmp_path / f"pre-{r}.db") for r in range(REPS)]
        for u in urls:
            LabelStore(u).close()
    stats = _run_rounds(pool_file, urls, tmp_path / "run")
    print("sqlite", "fresh" if fresh else "existing", stats)


@pytest.mark.slow
@pytest.mark.parametrize("fresh", [False, True], ids=["existing-store", "created-at-once"])
def test_eight_processes_on_one_postgresql_store(pool_file, tmp_path, fresh, postgres_url):
    from assay.labels.store import LabelStore
    eng = create_engine(postgres_url)
    urls = []
    tag = tmp_path.name[-6:].replace("-", "_").lower()
    with eng.begin() as conn:
        for r in range(REPS):   # a fresh schema (namespace) per repetition
            schema = f"conc_{'f' if fresh else 'e'}_{tag}_{r}"
            conn.execute(text(f"CREATE SCHEMA {schema}"))
            urls.append(postgres_url + f"?options=-csearch_path%3D{schema}")
    eng.dispose()
    if not fresh:
        for u in urls:
            LabelStore(u).close()
    stats = _run_rounds(pool_file, urls, tmp_path / "run")
    print("postgresql", "fresh" if fresh else "existing", stats)

"""The label store: labels written at once, runs resumed after a crash with no label lost or
asked twice (SQLite and PostgreSQL), labels reused across designs and systems."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from assay.campaign import default_dataset
from assay.errors import AssayInputError
from assay.evaluation import evaluate
from assay.labels.store import LabelStore
from assay.labels.sources import LabelSource
from assay.formats.pool import load_pool


class Crash(Exception):
    pass


class CountingOracle(LabelSource):
    """Gold labels that log every question and can crash after a number of answers."""

    def __init__(self, truth: dict[str, int], crash_after: int | None = None) -> None:
        self.truth, self.crash_after, self.asked = truth, crash_after, []
        self.annotator = "gold"

    def label(self, index: int, key: str) -> int:
        if self.crash_after is not None and len(self.asked) >= self.crash_after:
            raise Crash
        self.asked.append(key)
        return self.truth[key]


@pytest.fixture(scope="module")
def small_pool() -> tuple[pd.DataFrame, dict[str, int]]:
    rng = np.random.default_rng(7)
    n = 3000
    score = rng.normal(size=n)
    label = (rng.random(n) < 1 / (1 + np.exp(-(3 * score - 4)))).astype(int)
    df = pd.DataFrame({"id": [f"i{i}" for i in range(n)], "score": score,
                       "prediction": (score > 1.2).astype(int)})
    return df, dict(zip(df["id"], label))


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
@pytest.mark.parametrize("design", ["stratified", "importance", "passive"])
def test_crash_then_resume(backend, design, small_pool, tmp_path, request):
    df, truth = small_pool
    url = (str(tmp_path / "labels.db") if backend == "sqlite"
           else request.getfixturevalue("postgres_url"))
    dataset = f"resume-{design}-{tmp_path.name}"
    reference = evaluate(df, CountingOracle(truth), design=design, budget=200, seed=3)

    first = CountingOracle(truth, crash_after=77)
    with pytest.raises(Crash):
        evaluate(df, first, design=design, budget=200, seed=3, store=url, dataset=dataset)
    store = LabelStore(url)
    assert len(store.labels(dataset, "gold")) == 77          # every answer was kept

    second = CountingOracle(truth)
    resumed = evaluate(df, second, design=design, budget=200, seed=3, store=url,
                       dataset=dataset)
    asked = first.asked + second.asked
    assert len(asked) == len(set(asked)) == 200              # none asked twice, none lost
    assert resumed.reused_labels >= 77 and resumed.new_labels == 123
    assert resumed.to_dict() == reference.to_dict()          # same as an uninterrupted run
    assert len(store.labels(dataset, "gold")) == 200
    draws = store.draws(resumed.params["run"])
    assert len(draws) == len(resumed.draws)
    assert all(d.probability > 0 for d in draws)
    store.close()


def test_labels_reused_across_designs_and_systems(small_pool, tmp_path):
    df, truth = small_pool
    url = str(tmp_path / "reuse.db")
    a = CountingOracle(truth)
    evaluate(df, a, design="stratified", budget=150, seed=1, store=url)
    other_system = df.assign(prediction=(df["score"] > 0.5).astype(int))
    b = CountingOracle(truth)
    res = evaluate(other_system, b, design="importance", budget=150, seed=2, store=url)
    assert not set(a.asked) & set(b.asked)                   # nothing paid for twice
    assert res.reused_labels > 0
    assert res.new_labels == len(b.asked)


def test_a_store_opened_from_its_url_is_closed(small_pool, tmp_path, monkeypatch):
    """evaluate(store=URL) gives the store's connections back when it returns (eight processes
    on one PostgreSQL store ran out of connection slots while stores they had opened lingered);
    a store passed in as an object stays open: its caller owns it."""
    df, truth = small_pool
    closed = []
    monkeypatch.setattr(LabelStore, "close", lambda self: closed.append(self))
    evaluate(df, truth, design="passive", budget=20, seed=1, store=str(tmp_path / "a.db"))
    assert len(closed) == 1
    mine = LabelStore(str(tmp_path / "b.db"))
    evaluate(df, truth, design="passive", budget=20, seed=1, store=mine)
    assert len(closed) == 1
    with pytest.raises(AssayInputError, match="expected 0 or 1"):
        evaluate(df, lambda key: 2, design="passive", budget=20, seed=1,
                 store=str(tmp_path / "c.db"))
    assert len(closed) == 2                # closed on the way out of an error too


def test_undo_removes_label(small_pool, tmp_path):
    from assay.labels.sources import UNDO
    df, truth = small_pool
    answers = iter([1, UNDO, 0] + [0] * 100)

    class Scripted(LabelSource):
        annotator = "person"

        def label(self, index, key):
            return next(answers)

    url = str(tmp_path / "undo.db")
    res = evaluate(df, Scripted(), design="passive", budget=5, seed=0, store=url)
    assert res.labels_used == 5
    stored = LabelStore(url).labels(default_dataset(load_pool(df)), "person")
    assert len(stored) == 5 and all(v == 0 for v in stored.values())


KILL_SCRIPT = """
import sys, time
import pandas as pd
from assay.campaign import default_dataset
from assay.errors import AssayInputError
from assay.evaluation import evaluate
df = pd.read_parquet(sys.argv[1])
truth = dict(zip(df['id'], df['label']))
def slow(key):
    time.sleep(0.01)
    with open(sys.argv[3], 'a') as f:
        f.write(key + '\\n')
    return int(truth[key])
res = evaluate(df.drop(columns='label'), slow, design='stratified', budget=150, seed=5,
               store=sys.argv[2])
print(res.labels_used)
"""


@pytest.mark.slow
def test_sigkill_mid_run_then_resume(small_pool, tmp_path):
    df, truth = small_pool
    data = tmp_path / "pool.parquet"
    df.assign(label=[truth[i] for i in df["id"]]).to_parquet(data)
    script = tmp_path / "run.py"
    script.write_text(KILL_SCRIPT)
    db, log = tmp_path / "k.db", tmp_path / "asked.log"
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    proc = subprocess.Popen([sys.executable, str(script), str(data), str(db), str(log)], env=env)
    deadline = time.time() + 60
    while time.time() < deadline and (not log.exists() or len(log.read_text().split()) < 40):
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    asked_before = log.read_text().split()
    assert 40 <= len(asked_before) < 150
    stored = LabelStore(str(db)).labels(default_dataset(load_pool(df)), "slow")
    # at most the label being written at the instant of the kill can be missing
    assert len(asked_before) - 1 <= len(stored) <= len(asked_before)
    done = subprocess.run([sys.executable, str(script), str(data), str(db), str(log)], env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "150"
    asked = log.read_text().split()
    repeats = len(asked) - len(set(asked))
    assert repeats <= len(asked_before) - len(stored)        # only an unsaved answer re-asked
    assert len(set(asked)) == 150

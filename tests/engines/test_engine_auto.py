"""``auto`` on an engine (assay.designs.auto_engine): the memory engine and DuckDB give the same
strata, items, ranks, labels, estimates and manifest for the same seed; the strata, rank grid,
first batch and schedule of strata are the in-memory design's on the real ER pools; the engine
fetches each batch in one prefix pass and ranks it in at most one more; and, since in memory
the draws within a stratum come from the Generator and here from the hash, the two agree in
distribution (seeded simulation, slow)."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from assay.designs import build_design
from assay.designs.auto_engine import EngineAutoDesign
from assay.designs.settings import AutoSettings
from assay.engines import DuckDBEngine, MemoryEngine
from assay.engines.base import Engine
from assay.estimation import estimate_draws
from test_engine_designs import ER_DIR, _generated, _pair, _same_runs

POOLS = ["abt_buy", "amazon_google", "dblp_acm", "restaurant", "tweets100k"]


def _er(name: str) -> pd.DataFrame:
    path = ER_DIR / f"{name}.parquet"
    if not path.exists():
        pytest.skip(f"{path} not present")
    df = pd.read_parquet(path)
    return df.drop(columns=[c for c in ("probability",) if c in df.columns])


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["int", "pair"])
def test_generated_pool_same_auto_runs(tmp_path, kind):
    """Integer and two-column text ids, heavy ties: memory and DuckDB draw the same items at
    the same ranks and give the same estimates (to the last digit) and manifests."""
    df = _generated(kind, 6000, seed=len(kind))
    mem, duck, gold = _pair(df, tmp_path, kind)
    _same_runs(mem, duck, df, gold, "auto", 250, seed=11)


@pytest.mark.slow   # 11-19 s per pool; the generated pools above keep the parity in the fast loop
@pytest.mark.parametrize("name", POOLS)
def test_real_pool_same_auto_runs(tmp_path, name):
    df = _er(name)
    mem, duck, gold = _pair(df, tmp_path, name)
    _same_runs(mem, duck, df, gold, "auto", 300, seed=20261126)


@pytest.mark.parametrize("name", POOLS)
def test_strata_grid_and_first_batch_are_todays(name):
    """The geometric strata's sizes and predicted positives, the calibration's rank grid (its
    predicted positives at every cut rank), the first batch and the Generator's schedule of
    strata are those of the in-memory ``auto`` (ties in score are ranked by hash here, by pool
    order in memory: the same counts wherever a tie run shares one prediction, as here)."""
    df = _er(name)
    score, pred = df["score"].to_numpy(), df["prediction"].to_numpy()
    today = build_design(AutoSettings(), n=len(df), predictions=pred, score=score, prior=None,
                         budget=1000, rng=np.random.default_rng(3))
    eng = EngineAutoDesign(MemoryEngine(df.drop(columns=["label"])), 1000,
                           np.random.default_rng(3), seed=3)
    assert np.array_equal(eng.strata.bounds, today.strata.bounds)
    assert np.array_equal(eng.ranked.pp, today.ranked.pp)
    assert np.array_equal(eng.ranked.pos_share, today.ranked.pos_share)
    for f in ("log_ranks", "starts", "count", "count1"):
        assert np.array_equal(getattr(eng.grid, f), getattr(today.grid, f)), f
    assert np.array_equal(eng.target, today.target)
    assert eng._queue == today._queue
    assert eng.params() == {**today.params(), "engine": "memory"}


def test_passes_per_batch_and_ranks(tmp_path):
    """One prefix pass in all (the first fetches min(N_h, budget) of every stratum), at most
    one ranks pass per batch (none for a stratum fetched whole), and every draw's position is
    the item's exact rank."""
    df = _generated("int", 5000, seed=4)
    mem = MemoryEngine(df.drop(columns=["label"]))
    des = EngineAutoDesign(mem, 300, np.random.default_rng(0), seed=0)
    y = dict(zip(df["id"], df["label"]))
    draws = []
    while len(draws) < 300 and not des.exhausted():
        d = des.draw()
        draws.append(d)
        des.update(d, int(y[des.sampler.items["id"].iat[d.index]]))
    assert len(draws) == 300 and des.sampler.passes == 1
    assert des.rank_passes == 1        # the memory engine ranks the whole prefix at once
    rank_of = {int(mem.frame["id"].iat[i]): r for r, i in enumerate(mem.order)}
    ids = des.sampler.items["id"].to_numpy()
    assert [d.position for d in draws] == [rank_of[int(ids[d.index])] for d in draws]
    assert des.manifest().extra["design"] == "auto"
    assert des.manifest().verify(mem) == []


@pytest.mark.slow
@pytest.mark.parametrize("name", ["restaurant", "pair"])
def test_bulk_ranks_agree(tmp_path, name):
    """DuckDB's one-pass ``ranks_of``/``counts_through`` (a join on the fine score bins) and
    the memory engine's binary search give every item's exact rank and the predicted positives
    through it, heavy ties included (restaurant: 5,423 distinct scores over 149,747 items), as
    the generic segment_counts path does."""
    df = (_er(name).drop(columns=["label"]) if name != "pair" else
          _generated("pair", 5000, seed=3).drop(columns=["label"]))
    df.to_parquet(tmp_path / "p.parquet")
    mem, duck = MemoryEngine(df), DuckDBEngine(str(tmp_path / "p.parquet"))
    r = np.random.default_rng(5).choice(len(df), 2000, replace=False)
    keys = mem.keys_at_ranks(r)
    assert np.array_equal(mem.ranks_of(keys), r)
    assert np.array_equal(duck.ranks_of(keys), r)
    assert np.array_equal(Engine.ranks_of(duck, mem.keys_at_ranks(r[:50])), r[:50])
    # items and predicted positives through each key: the same on both, and by the generic
    # segment_counts path (repeated keys and score cuts too)
    cuts = type(keys).score_cuts([float(df["score"].median())])
    some = type(keys)(np.concatenate([keys.score[:40], keys.score[:3], cuts.score]),
                      np.concatenate([keys.tie[:40], keys.tie[:3], cuts.tie]))
    want = Engine.counts_through(mem, some)
    for eng in (mem, duck):
        got = eng.counts_through(some)
        assert np.array_equal(got[0], want[0]) and np.array_equal(got[1], want[1])
    pred = df["prediction"].to_numpy()[mem.order]
    assert np.array_equal(want[1][:40], np.cumsum(pred)[r[:40]])


def _run_memory(df: pd.DataFrame, budget: int, seed: int) -> dict:
    score, pred, y = (df[c].to_numpy() for c in ("score", "prediction", "label"))
    des = build_design(AutoSettings(), n=len(df), predictions=pred, score=score, prior=None,
                       budget=budget, rng=np.random.default_rng(seed))
    draws, labs = [], []
    while len(draws) < budget and not des.exhausted():
        d = des.draw()
        des.update(d, int(y[d.index]))
        draws.append(d)
        labs.append(int(y[d.index]))
    return estimate_draws(des, draws, labs, pred, 0.95, bounds=False)


def _run_engine(mem: MemoryEngine, y: np.ndarray, budget: int, seed: int) -> dict:
    des = EngineAutoDesign(mem, budget, np.random.default_rng(seed), seed=seed)
    draws, labs = [], []
    while len(draws) < budget and not des.exhausted():
        d = des.draw()
        v = int(y[int(des.sampler.items["id"].iat[d.index])])
        des.update(d, v)
        draws.append(d)
        labs.append(v)
    info = mem.describe()
    return estimate_draws(des, draws, labs, des.sampler.items["prediction"].to_numpy(), 0.95,
                          bounds=False, pool_size=info.rows, positives=info.positives)


@pytest.mark.slow
def test_auto_on_engine_agrees_in_distribution_with_memory():
    """120 seeds each on a pool whose matches reach into a lightly sampled tail: the engine's
    ``auto`` (hash-order draws) and the in-memory one (Generator draws) have the same mean
    estimate within 3 standard errors of the difference, and the same coverage of the truth
    within the binomial tolerance."""
    rng = np.random.default_rng(17)
    n = 30_000
    score = rng.normal(size=n)
    y = (rng.random(n) < 1 / (1 + np.exp(-(2.5 * score - 5.5)))).astype(np.int8)
    df = pd.DataFrame({"id": np.arange(n), "score": score,
                       "prediction": (score > 2.0).astype(np.int8), "label": y})
    mem = MemoryEngine(df.drop(columns=["label"]))
    tp, pp, pos = int((y * df["prediction"]).sum()), int(df["prediction"].sum()), int(y.sum())
    truth = {"precision": tp / pp, "recall": tp / pos, "f1": 2 * tp / (pp + pos)}
    reps, budget = 120, 300
    res = {w: {m: [] for m in truth} for w in ("memory", "engine")}
    cover = {w: {m: 0 for m in truth} for w in res}
    for seed in range(reps):
        for w, est in (("memory", _run_memory(df, budget, 1000 + seed)),
                       ("engine", _run_engine(mem, y, budget, 1000 + seed))):
            for m in truth:
                res[w][m].append(est[m].estimate)
                cover[w][m] += est[m].ci_low <= truth[m] <= est[m].ci_high
    for m in truth:
        a, b = np.asarray(res["memory"][m]), np.asarray(res["engine"][m])
        se = np.sqrt(a.var(ddof=1) / reps + b.var(ddof=1) / reps)
        assert abs(a.mean() - b.mean()) < 3 * se + 1e-12, (m, a.mean(), b.mean(), se)
        ca, cb = cover["memory"][m] / reps, cover["engine"][m] / reps
        p = (ca + cb) / 2
        assert abs(ca - cb) <= 3 * np.sqrt(2 * max(p * (1 - p), 0.01) / reps), (m, ca, cb)

"""The DuckDB engine answers exactly as the in-memory reference: fingerprint, histogram,
quantile edges, stratum counts, hash-order prefixes, fetched rows — on generated pools (integer,
text and two-column ids, heavy score ties) and on a real ER pool; the reference ranks as the
core does today when scores do not tie; a hash-order prefix is a simple random sample."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from assay.core.strata import _descending_order, csf_cuts, geometric_strata
from assay.engines import DuckDBEngine, MemoryEngine, OrderKeys, geometric_bounds



def _pool(kind: str, n: int, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    score = np.round(rng.normal(size=n), 3)
    if kind == "ties":                  # 60 % of the pool at exactly 0, the rest spread
        score[rng.random(n) < 0.6] = 0.0
    if kind == "flat":
        score[:] = 1.5
    pred = (score + rng.normal(scale=0.5, size=n) > 0.8).astype(np.int8)
    if kind in ("text",):
        ids = {"id": [f"doc-{i:07d}é" for i in rng.permutation(n)]}
    elif kind == "pair":
        ids = {"left_id": [f"l{i % 997}" for i in range(n)],
               "right_id": [f"r{i // 997}" for i in range(n)]}
    else:
        ids = {"id": (rng.permutation(n).astype(np.int64) - n // 3) * 1_000_003}
    return pd.DataFrame({**ids, "score": score, "prediction": pred,
                         "note": [f"n{i}" for i in range(n)]})


ER_DIR = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "er"
KINDS = ["int", "ties", "flat", "text", "pair"]


@pytest.fixture(scope="module", params=KINDS)
def engines(request, tmp_path_factory):
    df = _pool(request.param, 12_000, seed=KINDS.index(request.param))
    path = tmp_path_factory.mktemp("pool") / f"{request.param}.parquet"
    df.to_parquet(path)
    # a small fetch_limit forces the quantile search through its score and tie-hash splits
    return MemoryEngine(df), DuckDBEngine(str(path), fetch_limit=300)


def _edges(mem: MemoryEngine) -> list[OrderKeys]:
    n = mem.describe().rows
    counts, e = mem.score_histogram(200)
    return [mem.rank_edges(geometric_bounds(n, 50)),
            mem.rank_edges(np.linspace(0, n, 8).round().astype(np.int64)),
            OrderKeys.score_cuts(csf_cuts(counts, e, 6)),
            OrderKeys(np.zeros(0), np.zeros(0, dtype=np.uint64))]


def test_describe_and_fingerprint_agree(engines):
    mem, duck = engines
    a, b = mem.describe(), duck.describe()
    assert (a.rows, a.positives, a.score_min, a.score_max, a.fingerprint, a.id_columns) == \
           (b.rows, b.positives, b.score_min, b.score_max, b.fingerprint, b.id_columns)


@pytest.mark.parametrize("bins", [1, 37, 1000])
def test_histograms_agree(engines, bins):
    (c1, e1), (c2, e2) = engines[0].score_histogram(bins), engines[1].score_histogram(bins)
    assert np.array_equal(c1, c2) and np.array_equal(e1, e2)


def test_quantile_keys_agree(engines):
    mem, duck = engines
    n = mem.describe().rows
    ranks = np.concatenate([[0, n - 1, n // 2], geometric_bounds(n, 50)[1:-1] - 1,
                            np.random.default_rng(5).integers(0, n, 40)])
    a, b = mem.keys_at_ranks(ranks), duck.keys_at_ranks(ranks)
    assert np.array_equal(a.score, b.score) and np.array_equal(a.tie, b.tie)
    assert np.array_equal(duck.ranks_of(a.sorted()), np.sort(np.unique(ranks)))


def test_segment_counts_agree(engines):
    mem, duck = engines
    for edges in _edges(mem):
        a, b = mem.segment_counts(edges), duck.segment_counts(edges)
        assert np.array_equal(a.sizes, b.sizes) and np.array_equal(a.positives, b.positives)
        assert a.sizes.sum() == mem.describe().rows


@pytest.mark.parametrize("seed", [0, 20261123])
def test_prefixes_agree(engines, seed):
    mem, duck = engines
    for edges in _edges(mem)[:3]:
        k = np.resize([0, 3, 40, 10_000], len(edges) + 1)
        a, b = mem.stratum_prefix(edges, k, seed), duck.stratum_prefix(edges, k, seed)
        pd.testing.assert_frame_equal(a, b)
        sizes = mem.segment_counts(edges).sizes
        assert np.array_equal(np.bincount(a["stratum"], minlength=len(k)), np.minimum(k, sizes))


def test_fetch_agrees(engines):
    mem, duck = engines
    ids = mem.frame[list(mem.id_columns)].sample(25, random_state=1)
    pd.testing.assert_frame_equal(mem.fetch(ids), duck.fetch(ids), check_dtype=False)


def test_memory_ranking_is_the_cores_when_scores_do_not_tie():
    rng = np.random.default_rng(3)
    df = pd.DataFrame({"id": np.arange(5000), "score": rng.normal(size=5000),
                       "prediction": rng.integers(0, 2, 5000)})
    mem = MemoryEngine(df)
    core = geometric_strata(_descending_order(df["score"].to_numpy()), 64)
    assert np.array_equal(geometric_bounds(5000, 64), core.bounds)
    codes = mem.codes(mem.rank_edges(core.bounds))
    assert np.array_equal(codes, core.codes)


def test_prefix_is_a_simple_random_sample():
    """Over 400 seeds, each of 60 items of a stratum is among its first 12 in hash order with
    probability 1/5: Pearson's χ² on the inclusion counts (59 df) stays below its 0.999 quantile."""
    df = pd.DataFrame({"id": np.arange(100), "score": np.repeat([2.0, 1.0], [40, 60]),
                       "prediction": 1})
    mem = MemoryEngine(df)
    edges = OrderKeys.score_cuts([2.0])
    counts = np.zeros(100)
    for seed in range(400):
        got = mem.stratum_prefix(edges, np.array([0, 12]), seed)
        counts[got["id"].to_numpy()] += 1
    tail = counts[40:]
    expected = 400 * 12 / 60
    chi2 = float(((tail - expected) ** 2 / (expected * (1 - 12 / 60))).sum())
    assert tail.sum() == 400 * 12 and chi2 < stats.chi2.ppf(0.999, 59)


@pytest.mark.slow
def test_real_er_pool_agrees(er_frames):
    df = er_frames["amazon_google"].drop(columns=["label"])
    mem, duck = MemoryEngine(df), DuckDBEngine(str(ER_DIR / "amazon_google.parquet"))
    assert mem.describe().fingerprint == duck.describe().fingerprint
    n = mem.describe().rows
    edges = mem.rank_edges(geometric_bounds(n, 64))
    b = duck.keys_at_ranks(geometric_bounds(n, 64)[1:-1] - 1)
    assert np.array_equal(edges.score, b.score) and np.array_equal(edges.tie, b.tie)
    a, c = mem.segment_counts(edges), duck.segment_counts(edges)
    assert np.array_equal(a.sizes, c.sizes) and np.array_equal(a.positives, c.positives)
    k = np.full(len(edges) + 1, 30)
    pd.testing.assert_frame_equal(mem.stratum_prefix(edges, k, 7),
                                  duck.stratum_prefix(edges, k, 7, sizes=c.sizes))


def test_many_edges_agree(engines):
    """Above CASE_EDGES edges the DuckDB engine counts by score bins (and by a CASE within a bin
    too large to fetch): the ranks of 150 sampled items and a 24-point rank grid agree."""
    mem, duck = engines
    n = mem.describe().rows
    rng = np.random.default_rng(9)
    ranks = np.sort(rng.choice(n, 150, replace=False))
    keys = mem.keys_at_ranks(ranks)
    assert np.array_equal(duck.ranks_of(keys), ranks)
    grid = mem.rank_edges(np.unique(np.linspace(0, n, 50).round().astype(np.int64)))
    a, b = mem.segment_counts(grid), duck.segment_counts(grid)
    assert np.array_equal(a.sizes, b.sizes) and np.array_equal(a.positives, b.positives)


def test_prefix_retries_a_stratum_its_prefilter_starved(engines, monkeypatch):
    """With a prefilter keeping about half of what is needed, the strata left short are asked
    again without it: the prefix is unchanged."""
    mem, duck = engines
    edges = _edges(mem)[0]
    k = np.full(len(edges) + 1, 40)
    calls = []
    query = duck._prefix_query
    monkeypatch.setattr(duck, "_prefix_query", lambda *a: calls.append(1) or query(*a))
    monkeypatch.setattr(duck, "prefilter_sd", 0.0)
    monkeypatch.setattr(duck, "prefilter_extra", -20.0)
    got = duck.stratum_prefix(edges, k, 3)
    pd.testing.assert_frame_equal(got, mem.stratum_prefix(edges, k, 3))
    assert len(calls) == 2


def test_fetch_after_describe_on_a_fresh_engine(tmp_path):
    """Describing a pool leaves no result open on the connection: DuckDB 2 refuses to register
    the wanted ids while one is (the fetch failed whenever the test order put it first)."""
    path = tmp_path / "p.parquet"
    df = _pool("flat", 500, seed=2)
    df.to_parquet(path)
    duck = DuckDBEngine(str(path))
    assert duck.describe().rows == 500
    got = duck.fetch(df[["id"]].iloc[[3, 1]])
    assert got["id"].tolist() == df["id"].iloc[[3, 1]].tolist()

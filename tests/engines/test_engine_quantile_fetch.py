"""Issue 14: locating the keys at many ranks brings at most ``fetch_limit`` rows into Python
when the score bins holding the ranks have more rows together than that (the rank grid of a
pool of 10^9 rows: ~10^7 rows in one fetch before, memory growing with the pool), and the keys
stay the memory engine's."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from assay.engines import DuckDBEngine, MemoryEngine


def _engines(tmp_path, rounded: bool, fetch_limit: int):
    rng = np.random.default_rng(7)
    n = 60_000
    score = rng.normal(size=n)
    if rounded:                 # few distinct scores a bin: cells whose scores all tie
        score = np.round(score, 2)
    score[:2] = [-400.0, 400.0]     # a wide range: the 65,536 bins near 0 hold ~300 rows each
    df = pd.DataFrame({"id": np.arange(n), "score": score,
                       "prediction": (score > 1).astype(np.int8)})
    path = tmp_path / "pool.parquet"
    df.to_parquet(path)
    duck = DuckDBEngine(str(path), fetch_limit=fetch_limit)
    fetched: list[int] = []
    inner = duck._fetch_keys

    def counted(*args, **kwargs):
        out = inner(*args, **kwargs)
        fetched.append(len(out[0]))
        return out
    duck._fetch_keys = counted
    return MemoryEngine(df), duck, fetched


def _ranks(n: int) -> np.ndarray:
    return np.concatenate([[0, n - 1, n // 2], np.random.default_rng(3).integers(0, n, 80)])


@pytest.mark.parametrize("limit", [400, 1500])
def test_keys_at_many_ranks_fetch_at_most_the_limit(tmp_path, limit):
    mem, duck, fetched = _engines(tmp_path, rounded=False, fetch_limit=limit)
    ranks = _ranks(mem.describe().rows)
    a, b = mem.keys_at_ranks(ranks), duck.keys_at_ranks(ranks)
    assert np.array_equal(a.score, b.score) and np.array_equal(a.tie, b.tie)
    assert fetched and max(fetched) <= limit, fetched
    assert np.array_equal(duck.ranks_of(a.sorted()), np.sort(np.unique(ranks)))


def test_keys_at_many_ranks_with_tied_cells(tmp_path):
    """Cells whose scores all tie cannot be split by score: fetched as before, same keys."""
    mem, duck, _ = _engines(tmp_path, rounded=True, fetch_limit=400)
    ranks = _ranks(mem.describe().rows)
    a, b = mem.keys_at_ranks(ranks), duck.keys_at_ranks(ranks)
    assert np.array_equal(a.score, b.score) and np.array_equal(a.tie, b.tie)

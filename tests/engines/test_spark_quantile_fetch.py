"""Issue 14 on Spark (local mode, the shared session of conftest.py): locating the keys at many
ranks brings at most ``fetch_limit`` rows into Python when the score bins holding the ranks have
more rows together than that (DuckDB's finer grid, test_engine_quantile_fetch.py), and a forced
low ``fetch_limit`` gives the keys, ranks and estimates of the default one and of the memory
engine."""
from __future__ import annotations

import numpy as np
import pytest

from assay.engines import MemoryEngine
from test_engine_designs import _same_runs
from test_engine_quantile_fetch import _ranks

# a JVM and ~40 Spark jobs: in `make test`, with the other Spark tests, not in `make test-fast`
pytestmark = pytest.mark.slow

try:                    # pyspark is a test dependency: without it these tests fail (fixture)
    from assay.engines.spark import SparkEngine
except ImportError:     # pragma: no cover - reported by the `spark` fixture
    SparkEngine = None  # type: ignore[assignment,misc]


def _pool(tmp_path, rounded: bool):
    """test_engine_quantile_fetch's pool: 60,000 normal scores and two at ±400, so the
    65,536 bins near 0 hold ~300 rows each (``rounded``: cells whose scores all tie)."""
    import pandas as pd
    rng = np.random.default_rng(7)
    n = 60_000
    score = rng.normal(size=n)
    if rounded:
        score = np.round(score, 2)
    score[:2] = [-400.0, 400.0]
    df = pd.DataFrame({"id": np.arange(n), "score": score,
                       "prediction": (score > 1).astype(np.int8)})
    path = tmp_path / ("rounded.parquet" if rounded else "pool.parquet")
    df.to_parquet(path)
    return df, str(path)


def _counting(engine) -> list[int]:
    """The number of rows of each of ``engine``'s quantile fetches, as they happen."""
    fetched: list[int] = []
    inner = engine._fetch_keys

    def counted(*args, **kwargs):
        out = inner(*args, **kwargs)
        fetched.append(len(out[0]))
        return out
    engine._fetch_keys = counted
    return fetched


def test_spark_default_fetch_limit_is_duckdbs(spark, tmp_path):
    from assay.engines import DuckDBEngine
    _, path = _pool(tmp_path, rounded=False)
    assert SparkEngine(spark, path).fetch_limit == DuckDBEngine(path).fetch_limit == 4_000_000


@pytest.mark.parametrize("rounded", [False, True])
def test_spark_keys_at_many_ranks_fetch_at_most_the_limit(spark, tmp_path, rounded):
    """limit 400: every fetch within it where the scores differ (the old code fetched 14,790
    rows in one query on DuckDB); with tied cells the keys are still the reference's."""
    df, path = _pool(tmp_path, rounded)
    mem, low, ref = MemoryEngine(df), SparkEngine(spark, path, fetch_limit=400), \
        SparkEngine(spark, path)
    fetched, fetched_ref = _counting(low), _counting(ref)
    ranks = _ranks(len(df))
    a, b, c = mem.keys_at_ranks(ranks), low.keys_at_ranks(ranks), ref.keys_at_ranks(ranks)
    assert np.array_equal(a.score, b.score) and np.array_equal(a.tie, b.tie)
    assert np.array_equal(c.score, b.score) and np.array_equal(c.tie, b.tie)
    assert fetched_ref == [len(df)]          # the default limit: the whole pool, one fetch
    if not rounded:
        assert fetched and max(fetched) <= 400, fetched
        assert np.array_equal(low.ranks_of(a.sorted()), np.sort(np.unique(ranks)))


def test_spark_low_fetch_limit_same_run(spark, tmp_path):
    """An ``auto`` run whose rank grid is located at limit 400 (the finer grid) draws the same
    items and gives the same estimates as with the default limit."""
    df, path = _pool(tmp_path, rounded=False)
    rng = np.random.default_rng(5)
    chance = 1 / (1 + np.exp(-2 * df["score"].clip(-30, 30)))
    df["label"] = (rng.random(len(df)) < chance).astype(np.int8)
    gold = tmp_path / "gold.parquet"
    df[["id", "label"]].to_parquet(gold)
    low, ref = SparkEngine(spark, path, fetch_limit=400), SparkEngine(spark, path)
    fetched = _counting(low)
    _same_runs(low, ref, df, gold, "auto", 120, 11)
    assert fetched and max(fetched) <= 400, fetched

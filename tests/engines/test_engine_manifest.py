"""A run manifest round-trips through JSON and verifies the same pool on another engine; a
changed pool or other strata are reported."""
from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from assay.engines import DuckDBEngine, MemoryEngine, RunManifest, geometric_bounds


@pytest.fixture()
def pool(tmp_path):
    rng = np.random.default_rng(4)
    df = pd.DataFrame({"id": [f"x{i}" for i in range(3000)],
                       "score": np.round(rng.normal(size=3000), 2),
                       "prediction": rng.integers(0, 2, 3000).astype(np.int8)})
    path = tmp_path / "pool.parquet"
    df.to_parquet(path)
    return df, str(path)


def test_round_trip_and_verify_on_duckdb(pool):
    df, path = pool
    mem = MemoryEngine(df)
    edges = mem.rank_edges(geometric_bounds(3000, 40))
    m = RunManifest.build(mem, 11, edges, method="geometric", first=40)
    back = RunManifest.from_dict(json.loads(json.dumps(m.to_dict())))
    assert back == m and np.array_equal(back.edges.tie, edges.tie)
    assert list(back.sizes) == np.diff(geometric_bounds(3000, 40)).tolist()
    assert back.verify(DuckDBEngine(path)) == []


def test_changed_pool_is_reported(pool):
    df, _ = pool
    mem = MemoryEngine(df)
    m = RunManifest.build(mem, 11, mem.rank_edges(geometric_bounds(3000, 40)))
    flipped = df.assign(prediction=df["prediction"].where(df.index != 7, 1 - df["prediction"]))
    assert [p.split()[1] for p in m.verify(MemoryEngine(flipped))] == ["fingerprint"]
    fewer = df.iloc[:-50]
    problems = m.verify(MemoryEngine(fewer))
    assert len(problems) == 2 and "stratum sizes" in problems[1]


def test_foreign_hash_spec_and_bad_sizes_refused(pool):
    df, _ = pool
    m = RunManifest.build(MemoryEngine(df), 1, MemoryEngine(df).rank_edges([0, 10, 3000]))
    d = m.to_dict() | {"hash_spec": "assay-hash-v0"}
    with pytest.raises(ValueError, match="hash spec"):
        RunManifest.from_dict(d)
    with pytest.raises(ValueError, match="one more size than edges"):
        RunManifest(1, m.edges, (1, 2, 3), m.fingerprint)

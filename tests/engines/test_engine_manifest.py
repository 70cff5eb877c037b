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


def _oasis_pool(tmp_path):
    """3,000 items, a few true matches among the high scores: the strata below the top get
    detection floors (φ_k > 0)."""
    rng = np.random.default_rng(8)
    score = rng.normal(size=3000)
    df = pd.DataFrame({"id": np.arange(3000), "score": score,
                       "prediction": (score > 1.0).astype(np.int8),
                       "label": (rng.random(3000) < 1 / (1 + np.exp(-3 * (score - 1))))
                       .astype(np.int8)})
    path = tmp_path / "pool.parquet"
    df.drop(columns="label").to_parquet(path)
    return df, str(path)


@pytest.mark.parametrize("floors", [True, False])
def test_oasis_manifest_records_the_detection_floors(tmp_path, floors):
    """An OASIS run's manifest records ``floors`` and, when on, the budget they are for and
    the shares φ_k (params kept them, the manifest did not): from the JSON alone another
    engine rebuilds the same floors (DuckDB's prior sums add in another order: rtol 1e-12),
    and its own run of the same settings records the same."""
    from assay.designs.oasis_engine import EngineOasisDesign
    from assay.engines.run import evaluate_on_engine
    df, path = _oasis_pool(tmp_path)
    mem = MemoryEngine(df.drop(columns="label"))
    run = evaluate_on_engine(mem, df[["id", "label"]], "oasis", 300, 5,
                             options={"floors": floors})
    m = RunManifest.from_dict(json.loads(json.dumps(run.manifest.to_dict())))
    assert m.extra["floors"] is floors and m.extra["design"] == "oasis"
    if not floors:
        assert "detection_floors" not in m.extra and "floors_budget" not in m.extra
        assert "detection_floors" not in run.params
    else:
        phi = np.array(m.extra["detection_floors"])
        assert m.extra["floors_budget"] == 300 and phi.shape == (len(m.sizes),)
        assert (phi > 0).sum() >= 2 and phi.sum() < 1
        assert [round(x, 6) for x in phi] == run.params["detection_floors"]
    duck = DuckDBEngine(path)
    assert m.verify(duck) == []
    assert m.extra["alpha"] == run.params["alpha"] and m.extra["probability"] is None
    again = EngineOasisDesign(duck, m.extra.get("floors_budget", 300),
                              np.random.default_rng(5), m.seed, alpha=m.extra["alpha"],
                              epsilon=m.extra["epsilon"], defensive=m.extra["defensive"],
                              prior_strength=m.extra["prior_strength"],
                              decaying_prior=m.extra["decaying_prior"],
                              v_star=m.extra["v_star"], floors=m.extra["floors"])
    got = again.manifest()
    assert got.sizes == m.sizes and got.extra.keys() == m.extra.keys()
    if floors:
        np.testing.assert_allclose(again.phi, m.extra["detection_floors"], rtol=1e-12)
        np.testing.assert_allclose(got.extra["detection_floors"], m.extra["detection_floors"],
                                   rtol=1e-12)
    else:
        assert not again.phi.any() and got.extra == m.extra


def test_oasis_manifest_follows_an_extended_budget(tmp_path):
    """extend() sets the floors of the larger budget; the manifest records those."""
    from assay.designs.oasis_engine import EngineOasisDesign
    df, _ = _oasis_pool(tmp_path)
    d = EngineOasisDesign(MemoryEngine(df.drop(columns="label")), 200,
                          np.random.default_rng(1), seed=1)
    before = d.manifest().extra
    d.extend(800)
    after = d.manifest().extra
    assert (before["floors_budget"], after["floors_budget"]) == (200, 800)
    assert after["detection_floors"] == [float(x) for x in d.phi]
    assert after["detection_floors"] != before["detection_floors"]


@pytest.mark.parametrize("floors", [True, False])
def test_stratified_manifest_records_its_floors(tmp_path, floors):
    """A stratified run on an engine records whether its detection floors were on (params and
    manifest), and a design built from the manifest's settings on DuckDB allocates the same
    labels per stratum."""
    from assay.designs.stratified import EngineStratifiedDesign
    df, path = _oasis_pool(tmp_path)
    d = EngineStratifiedDesign(MemoryEngine(df.drop(columns="label")), 300,
                               np.random.default_rng(2), seed=2, floors=floors)
    m = RunManifest.from_dict(json.loads(json.dumps(d.manifest().to_dict())))
    assert m.extra["floors"] is floors and d.params()["floors"] is floors
    again = EngineStratifiedDesign(DuckDBEngine(path), 300, np.random.default_rng(2), m.seed,
                                   allocation=m.extra["allocation"], floors=m.extra["floors"])
    assert m.verify(DuckDBEngine(path)) == []
    assert [int(x) for x in again.n_h] == m.extra["n_h"]

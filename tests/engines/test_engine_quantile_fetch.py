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


def _extreme(tmp_path, kind: str, fetch_limit: int):
    """The pool above with its two outliers at ±10³⁰⁰ (``wide``), its other scores also
    shrunk to ~10⁻²⁰⁰ (``tiny``): every other row lies in one of the 65,536 bins, whose
    splits by score (and the finer grid below them) put the outliers 10³⁰⁰ cells or more away."""
    rng = np.random.default_rng(7)
    n = 60_000
    z = rng.normal(size=n)
    z[:2] = [-30.0, 30.0]
    score = z * (1e-200 if kind == "tiny" else 1.0)
    score[:2] = [-1e300, 1e300]
    chance = 1 / (1 + np.exp(-2 * z))
    df = pd.DataFrame({"id": np.arange(n), "score": score,
                       "prediction": (score > np.quantile(score, 0.85)).astype(np.int8),
                       "label": (rng.random(n) < chance).astype(np.int8)})
    path = tmp_path / f"{kind}.parquet"
    df.drop(columns="label").to_parquet(path)
    gold = tmp_path / f"{kind}_gold.parquet"
    df[["id", "label"]].to_parquet(gold)
    duck = DuckDBEngine(str(path), fetch_limit=fetch_limit)
    levels: list[tuple[int, bool]] = []     # (level, a finer grid) of every region searched
    inner = duck._locate

    def spied(where, params, lo, hi, n, ranks, slots, score, tie, level, shift=None,
              scale=None):
        levels.append((level, scale is not None))
        return inner(where, params, lo, hi, n, ranks, slots, score, tie, level, shift, scale)
    duck._locate = spied
    return df, gold, duck, levels


@pytest.mark.parametrize("kind", ["wide", "tiny"])
@pytest.mark.parametrize("limit", [100, 400])
def test_keys_at_ranks_at_extreme_scores(tmp_path, kind, limit):
    """Scores spanning 1 (or 10⁻²⁰⁰) and 10³⁰⁰: a bin or cell number is clamped before its
    cast (locate.CELL_CLAMP), so the rows outside a region that DuckDB's filter meets first
    no longer fail the search ('Type DOUBLE with value -7.65e+303 can't be cast … INT64'
    before), and the keys are the memory engine's. Limit 100: a finer grid two splits deep."""
    df, _, duck, levels = _extreme(tmp_path, kind, limit)
    mem = MemoryEngine(df.drop(columns="label"))
    ranks = _ranks(len(df))
    a, b = mem.keys_at_ranks(ranks), duck.keys_at_ranks(ranks)
    assert np.array_equal(a.score, b.score) and np.array_equal(a.tie, b.tie)
    assert max(lv for lv, _ in levels) >= 1                 # below the top level's bins
    if limit == 100:
        assert (2, True) in levels, levels                  # a finer grid under a split
    assert np.array_equal(duck.ranks_of(a.sorted()), np.sort(np.unique(ranks)))


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["wide", "tiny"])
def test_auto_run_at_extreme_scores(tmp_path, kind):
    """An ``auto`` run (its rank grid located at fetch limit 100) on a pool spanning 1 (or
    10⁻²⁰⁰) and 10³⁰⁰ draws the memory engine's items with the same estimates (~10 s each;
    it failed at its first quantile pass before the clamp)."""
    from test_engine_designs import _same_runs
    df, gold, duck, levels = _extreme(tmp_path, kind, 100)
    mem = MemoryEngine(df.drop(columns="label"))
    _same_runs(mem, duck, df, gold, "auto", 120, 11)
    assert levels and max(lv for lv, _ in levels) >= 1

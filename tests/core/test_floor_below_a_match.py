"""The labels' floor below a stratum that showed matches (assay.core.predictive.below_a_match):
which cells it holds, at what pseudo-count, and what it does for ``auto`` on non-monotone
worlds it was not tuned on (fresh world seeds, not the bench's 11)."""
from __future__ import annotations

import math

import numpy as np
import pytest

import assay.core.predictive as predictive
from assay.core.predictive import StratumCounts, below_a_match
from assay.simulation import simulate
from assay.worlds import WORLDS


def _counts(lab0: list[float], fn: list[float], sizes: list[int]) -> StratumCounts:
    k = len(sizes)
    return StratumCounts(np.r_[0, np.cumsum(sizes)], np.zeros(k), np.zeros(k),
                         np.array(lab0, dtype=float), np.zeros(k), np.array(fn, dtype=float))


def test_the_cells_and_their_pseudo_counts() -> None:
    c = _counts([100, 50, 50, 400], [5, 0, 1, 0], [100, 400, 800, 4000])
    # stratum 0 is a census (no floor), 1 sits below 5 of 100 (min(½, 0.05 × 51) = ½),
    # 2 showed a match (the labels speak), 3 below 1 of 50: min(½, 0.02 × 401) = ½
    assert below_a_match(c).tolist() == [0.0, 0.5, 0.0, 0.5]
    thin = _counts([2000, 276], [2, 0], [2000, 4096])      # 2 of 2,000 above, 276 labels
    assert below_a_match(thin).tolist() == [0.0, pytest.approx(0.001 * 277)]
    none = _counts([100, 50], [0, 0], [200, 400])           # nothing above: no floor
    assert below_a_match(none).tolist() == [0.0, 0.0]


def _coverage(reps: int, world_seed0: int) -> float:
    hits = []
    for w in range(reps // 10):
        f = WORLDS["non_monotone"](np.random.default_rng(world_seed0 + w)).frame
        res = simulate("auto", f["label"].to_numpy(), f["prediction"].to_numpy(),
                       f["score"].to_numpy(), None, 2000, 10, seed=5000 + 10 * w,
                       measures={"recall": 0.0}, options={"explore": 0.0})["recall"]
        hits += list((res.ci_low <= res.truth) & (res.truth <= res.ci_high))
    return float(np.mean(hits))


@pytest.mark.slow
def test_fresh_non_monotone_worlds_covered_far_more_often(monkeypatch) -> None:
    """10 fresh non-monotone worlds (world seeds 300–309), 10 runs each at 2,000 labels: recall
    covers ≥ 0.88 − 3 binomial SE (measured 0.87), at least 0.1 more than without the floor
    below a match on the same runs (0.75); without the exploration below matches, as measured
    in session 24 (with it: tests/test_auto_exploration.py). Not the issue's 0.93: the runs whose bump's strata were starved of labels
    (BENCHMARKS.md, session 24) stay beyond an estimator's reach."""
    cov = _coverage(100, 300)
    assert cov >= 0.88 - 3 * math.sqrt(0.88 * 0.12 / 100), cov
    monkeypatch.setattr(predictive, "below_a_match", lambda c: np.zeros(c.sizes.shape[0]))
    assert _coverage(100, 300) <= cov - 0.1

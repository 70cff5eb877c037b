"""The model-based estimate's bounded decay and robust prior (issue 11, session 27;
assay.core.predictive.STEEPEST, vague_weight): what each does to the rates and the weights, and
that ``auto`` with the exploration below matches covers the controls at 500 labels on worlds
it was not tuned on (fresh world seeds, not the bench's 11)."""
from __future__ import annotations

import math

import numpy as np
import pytest

from assay.core.calibration import RankCalibration, RankGrid
from assay.core.predictive import STEEPEST, cell_rates, vague_weight
from assay.simulation import simulate
from assay.worlds import WORLDS


def test_the_bound_lifts_only_a_decay_steeper_than_it() -> None:
    grid = RankGrid.build(np.array([0, 100, 200, 400, 800, 1600, 3200]))
    lr = grid.log_ranks
    gentle = 0.3 * np.exp(-1.8 * np.maximum(lr - np.log(100), 0))
    assert np.allclose(grid.monotone(gentle, steepest=STEEPEST), gentle)
    steep = 0.3 * np.exp(-6.0 * np.maximum(lr - np.log(100), 0))
    bounded = grid.monotone(steep, steepest=STEEPEST)
    assert np.all(bounded >= steep) and bounded[0] == pytest.approx(steep[0])
    assert np.all(np.diff(np.log(bounded)) >= STEEPEST * np.diff(lr) - 1e-9)
    assert np.all(np.diff(bounded) <= 1e-15)           # still non-increasing


def test_a_saturated_top_does_not_lift_the_tail() -> None:
    """A rate near 1 over the top ranks, then a cliff (restaurant, dblp_acm: every match above
    the prediction threshold): bounded on the rate, the tail stays small (on the odds, the
    logit 23 of a saturated top lifted the tail to rates near 0.8 at rank 500)."""
    grid = RankGrid.build(np.array([0, 31, 62, 124, 248, 496, 992]))
    p = 1 / (1 + np.exp(-(23.0 - 6.14 * grid.log_ranks)))
    bounded = grid.monotone(p, steepest=STEEPEST)
    rank = np.exp(grid.log_ranks)
    assert np.all(bounded[rank >= 100] < 0.07) and np.all(bounded[rank >= 400] < 0.002)


def test_cell_rates_fall_at_most_as_the_bound_allows() -> None:
    """A hinge fitted steeper than the bound (22-fold per doubling, the control's failure at 500
    labels, BENCHMARKS.md session 26): the strata's predicted rates fall at most ~2^3-fold per
    doubling of the rank."""
    bounds = np.array([0, 256, 512, 1024, 2048, 4096, 8192])
    grid = RankGrid.build(bounds)
    cal = RankCalibration(np.array([-2.0, -4.46]), np.zeros((2, 2)), 500, 50,
                          knee=float(np.log(256.0)))
    m1, m0 = cell_rates(cal.theta, grid, cal)
    ratio = m0[0, 1:] / m0[0, :-1]
    assert np.all(ratio >= 2.0 ** STEEPEST * 0.9) and np.all(ratio <= 1.0)
    assert m0[0, -1] > 20 * (1 / (1 + np.exp(2)) * (8192 / 256) ** -4.46)


def test_the_robust_prior_weights() -> None:
    m, c, n = np.full(5, 1e-4), np.full(5, 100.0), np.full(5, 100.0)
    k = np.array([0.0, 1, 2, 3, 10])
    w = vague_weight(m, c, k, n)
    assert w[0] == 0.0                                   # no match: the calibration's prior
    assert np.all(np.diff(w) > 0) and np.all(w < 1)      # more matches, more weight to them
    assert vague_weight(m, np.zeros(5), k, n).tolist() == [0.0] * 5   # labels speak already
    assert np.all(vague_weight(m, c, k, n, eps=0.01)[1:] < w[1:])   # a smaller ε, less
    # matches where the calibration expects them: the prior keeps nearly all the weight
    assert vague_weight(np.array([0.02]), np.array([100.0]), np.array([2.0]),
                        np.array([100.0]))[0] < 0.02


def _coverage(world: str, seeds: range, budget: int, runs: int = 10) -> float:
    hits = []
    for w in seeds:
        f = WORLDS[world](np.random.default_rng(w)).frame
        res = simulate("auto", f["label"].to_numpy(), f["prediction"].to_numpy(),
                       f["score"].to_numpy(), None, budget, runs, seed=7000 + 10 * w,
                       measures={"recall": 0.0})["recall"]
        hits += list((res.ci_low <= res.truth) & (res.truth <= res.ci_high))
    return float(np.mean(hits))


@pytest.mark.slow
@pytest.mark.parametrize("world", ["realistic", "ties"])
def test_controls_at_500_labels_covered_with_the_exploration(world: str) -> None:
    """10 fresh worlds (world seeds 600–609), 10 runs each at 500 labels: recall covers at
    least 0.93 − 3 binomial SE with the exploration below matches on (the default). Without
    the bounded decay and the robust prior the exploration cost these controls 4–7 points
    (BENCHMARKS.md, sessions 25–27)."""
    cov = _coverage(world, range(600, 610), 500)
    assert cov >= 0.93 - 3 * math.sqrt(0.93 * 0.07 / 100), cov


@pytest.mark.slow
@pytest.mark.parametrize("pool", ["restaurant", "dblp_acm"])
def test_a_cliff_on_a_real_pool_is_not_filled_in(pool: str, er_frames) -> None:
    """Every match above the prediction threshold, none below: at 500 labels the bounded
    prior must not predict matches the labels below the cliff rule out (bounded on the odds
    it did: restaurant recall bias −0.73). 40 runs: |recall bias| < 0.01, coverage ≥ 0.95."""
    f = er_frames[pool]
    res = simulate("auto", f["label"].to_numpy(), f["prediction"].to_numpy(),
                   f["score"].to_numpy(), None, 500, 40, seed=3000,
                   measures={"recall": 0.0})["recall"]
    assert abs(float(np.mean(res.estimate - res.truth))) < 0.01
    assert np.mean((res.ci_low <= res.truth) & (res.truth <= res.ci_high)) >= 0.95


@pytest.mark.slow
def test_restaurant_at_100_labels_is_covered_under_either_prior(er_frames) -> None:
    """At 100 labels few labels lie below restaurant's cliff: the bounded decay alone filled in
    matches there (F1 coverage 0.815, bias −0.043 over 200 runs, seeds 1000+); the union of the
    two priors' intervals covers (0.980). Other seeds here, 60 runs: coverage ≥ 0.95 −
    3·√(.95·.05/60) = 0.866."""
    f = er_frames["restaurant"]
    res = simulate("auto", f["label"].to_numpy(), f["prediction"].to_numpy(),
                   f["score"].to_numpy(), None, 100, 60, seed=4000,
                   measures={"f1": 0.5})["f1"]
    cov = float(np.mean((res.ci_low <= res.truth) & (res.truth <= res.ci_high)))
    assert cov >= 0.95 - 3 * math.sqrt(0.95 * 0.05 / 60), cov

"""Assumption-free intervals (issue 11, must-have 3): the exact hypergeometric bounds hold their
level exactly (checked by enumeration, not simulation), the stratified sum and the measure
bounds keep coverage on worlds built to break every model, and estimates carry them."""
from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from assay.core.bounds import (assumption_free, hypergeometric_lower, hypergeometric_upper,
                               stratified_bounds)


@pytest.mark.parametrize("N,n", [(20, 5), (60, 13), (200, 40), (500, 3)])
def test_hypergeometric_bounds_are_exact(N, n):
    """For every true count K: P(K > K⁺(X)) ≤ a and P(K < K⁻(X)) ≤ a, summing the
    hypergeometric pmf over the x that miss; and the bounds are the tightest such (brute
    force)."""
    a = 0.025
    xs = np.arange(0, n + 1)
    up = hypergeometric_upper(np.full(xs.size, N), np.full(xs.size, n), xs, a)
    lo = hypergeometric_lower(np.full(xs.size, N), np.full(xs.size, n), xs, a)
    for K in range(N + 1):
        pmf = stats.hypergeom.pmf(xs, N, K, n)
        assert pmf[up < K].sum() <= a + 1e-9
        assert pmf[lo > K].sum() <= a + 1e-9
    for x in (0, 1, n // 2, n):
        ks = np.arange(0, N + 1)
        ok_up = ks[stats.hypergeom.cdf(x, N, ks, n) > a]
        ok_lo = ks[stats.hypergeom.sf(x - 1, N, ks, n) > a]
        assert up[x] == ok_up.max() and lo[x] == ok_lo.min()


def test_census_and_unsampled_strata():
    lo, hi, k = stratified_bounds(np.array([10, 30, 40]), np.array([10, 0, 5]),
                                  np.array([[3], [0], [5]]), 0.025)
    assert k == 1
    assert lo[0] >= 3 + 0 + 5 and hi[0] == 3 + 30 + 40     # x = n in the last: up to all 40


def _stratified_world(rng, sizes, rates):
    lab = np.concatenate([rng.random(s) < r for s, r in zip(sizes, rates)]).astype(int)
    stratum = np.repeat(np.arange(len(sizes)), sizes)
    return lab, stratum


@pytest.mark.parametrize("world", [pytest.param("rare_tail", marks=pytest.mark.slow),
                                   "rising_middle"])
def test_assumption_free_interval_covers_where_models_fail(world):
    """Recall and F1 on small stratified worlds whose matches hide where few labels go (a rare
    tail; a rate that rises in the middle): the assumption-free interval covers in ≥ 95% of
    200 samples (misses within the binomial 0.999 quantile), the stratified delta interval
    does not need to."""
    rng = np.random.default_rng(7 if world == "rare_tail" else 8)
    sizes = np.array([50, 200, 2000, 8000])
    rates = {"rare_tail": [0.8, 0.1, 0.002, 0.0015], "rising_middle": [0.8, 0.02, 0.03, 0.0]}
    lab, stratum = _stratified_world(rng, sizes, rates[world])
    pred = (stratum == 0).astype(int) | ((stratum == 1) & (rng.random(stratum.size) < 0.5))
    truth_r = (lab * pred).sum() / lab.sum()
    truth_f = 2 * (lab * pred).sum() / (pred.sum() + lab.sum())
    n_h = np.array([50, 40, 30, 30])
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    reps, miss_r, miss_f = 200, 0, 0
    for _ in range(reps):
        idx = np.concatenate([s + rng.choice(N, n, replace=False)
                              for s, N, n in zip(starts, sizes, n_h)])
        args = (lab[idx], pred[idx][:, None], lab.size, np.array([pred.sum()]))
        lo, hi, kind = assumption_free(*args, 0.0, 0.95, stratum=stratum[idx], sizes=sizes)
        miss_r += not lo[0] <= truth_r <= hi[0]
        lo, hi, _ = assumption_free(*args, 0.5, 0.95, stratum=stratum[idx], sizes=sizes)
        miss_f += not lo[0] <= truth_f <= hi[0]
    assert kind == "exact"
    allowed = stats.binom.ppf(0.999, reps, 0.05)
    assert miss_r <= allowed and miss_f <= allowed


@pytest.mark.slow
def test_estimates_carry_both_intervals():
    """Through the public API: every defined estimate has its assumption-free interval (exact
    for a stratified design, certain for importance draws) and says what its primary assumes."""
    import assay
    import pandas as pd
    rng = np.random.default_rng(3)
    score = rng.normal(size=8000)
    label = (rng.random(8000) < 1 / (1 + np.exp(-(4 * score - 9)))) | (rng.random(8000) < 0.002)
    f = pd.DataFrame({"id": np.arange(8000), "score": score, "prediction": (score > 2.2),
                      "label": label}).astype({"prediction": int, "label": int})
    for design, kind in (("stratified", "exact"), ("importance", "certain"), ("auto", "exact")):
        res = assay.evaluate(f.drop(columns=["label"]), f[["id", "label"]], design=design,
                             budget=300, seed=1)
        for m, e in res.estimates.items():
            assert e.assumption_free is not None and e.extra["assumption_free_kind"] == kind
            lo, hi = e.assumption_free
            assert 0.0 <= lo <= hi <= 1.0
            if e.method == "model":
                assert e.assumes and "rank model" in e.assumes
        assert res.estimates["recall"].assumes     # a lightly sampled tail: named

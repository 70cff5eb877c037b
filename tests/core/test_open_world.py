"""Joint precision (mixture importance sampling) and open-world recall of many systems, by
seeded simulation on worlds of overlapping systems whose pool misses true items (seeds 000/001).

Claims tested (300 repetitions each; binomial tolerance of a 95% coverage at 300 repetitions:
±1.96·√(.95·.05/300) = ±0.025):
* every system's precision, recall (θ̂ν̂) and F1 are unbiased within 3 Monte Carlo SE;
* their 95% intervals cover at ≥ 0.925 on average over systems, and no system below 0.90;
* the estimated variance of precision and recall is within 25% of the Monte Carlo variance;
* the closed-world pooled recall is biased upward (by more than 5 SE for every system);
* the optimal mixture's model variance is never above the kbp-online overlap heuristic's.
"""
from __future__ import annotations

import numpy as np
import pytest

from assay.core.mixture import mixture_mean, optimal_weights, overlap_weights
from assay.core.open_world import joint_estimates, open_world_recall


def _world(seed: int, n_units=2000, per_unit=10, m=8):
    rng = np.random.default_rng(seed)
    n = n_units * per_unit
    unit = np.repeat(np.arange(n_units), per_unit)
    truth = rng.random(n) < 0.15
    easy = rng.random(n)
    memb = np.zeros((n, m), bool)
    for k in range(m):
        score = easy + rng.normal(0, 0.7, n) + rng.uniform(0.5, 1.5) * truth
        memb[np.argsort(-score)[:int(rng.integers(500, 1500))], k] = True
    return rng, unit, truth, memb


def _campaign(rng, unit, truth, memb, pis, n=40, n_ex=60):
    m = memb.shape[1]
    pool = memb.any(axis=1)
    sizes = memb.sum(0)
    dens_all = np.column_stack([memb / sizes, pool / pool.sum()])
    items = np.concatenate([rng.choice(np.flatnonzero(memb[:, k]), n) for k in range(m)])
    src = np.repeat(np.arange(m), n)
    dens, f = dens_all[items], truth[items].astype(float)
    mu, cov = np.zeros((m, 2)), np.zeros((m, 2, 2))
    for i in range(m):     # the system's and the pool's precision under the system's mixture
        mu[i], cov[i] = mixture_mean(src, dens[:, :m], dens[:, [i, m]], f, pis[i])
    n_units = unit.max() + 1
    us = rng.choice(n_units, n_ex, replace=False)
    sel = np.isin(unit, us)

    def per_unit(mask):
        return np.bincount(unit[sel], weights=mask[sel], minlength=n_units)[us]
    found = np.stack([per_unit(truth & memb[:, k]) for k in range(m)], axis=1)
    parts = open_world_recall(mu, cov, sizes, int(pool.sum()), per_unit(truth & pool),
                              per_unit(truth), found, n_units)
    seen = np.unique(items)
    succ = np.array([np.count_nonzero(memb[seen, k] & truth[seen]) for k in range(m)])
    fail = np.array([np.count_nonzero(memb[seen, k] & ~truth[seen]) for k in range(m)])
    return joint_estimates(mu, cov, succ, fail, parts)


@pytest.mark.slow
@pytest.mark.parametrize("seed", [11, 29])
def test_joint_precision_and_open_world_recall_are_unbiased_and_cover(seed):
    rng, unit, truth, memb = _world(seed)
    m = memb.shape[1]
    tp = (memb & truth[:, None]).sum(0)
    truth_of = {"precision": tp / memb.sum(0), "recall": tp / truth.sum()}
    truth_of["f1"] = 2 * tp / (memb.sum(0) + truth.sum())
    pats, mult = np.unique(memb, axis=0, return_counts=True)
    pis = [optimal_weights(pats / memb.sum(0), np.full(m, 40), i, 0.3, mult) for i in range(m)]
    reps = 300
    est = {k: np.zeros((reps, m)) for k in ("precision", "recall", "f1", "pooled_recall")}
    cover = {k: np.zeros((reps, m)) for k in ("precision", "recall", "f1")}
    var = {k: np.zeros((reps, m)) for k in ("precision", "recall")}
    for r in range(reps):
        res = _campaign(rng, unit, truth, memb, pis)
        for k in est:
            est[k][r] = [e.estimate for e in res[k]]
        for k in cover:
            cover[k][r] = [e.covers(truth_of[k][i]) for i, e in enumerate(res[k])]
        for k in var:
            var[k][r] = [e.std_error ** 2 for e in res[k]]
    for k in ("precision", "recall", "f1"):
        sd = est[k].std(axis=0, ddof=1)
        z = (est[k].mean(axis=0) - truth_of[k]) / (sd / np.sqrt(reps))
        assert np.all(np.abs(z) < 3), (k, z.round(2))
        cov_k = cover[k].mean(axis=0)
        assert cov_k.mean() >= 0.925 and cov_k.min() >= 0.90, (k, cov_k.round(3))
        if k in var:
            ratio = var[k].mean(axis=0) / sd ** 2
            assert np.all(np.abs(ratio - 1) < 0.25), (k, ratio.round(2))
    pooled = est["pooled_recall"]
    z = (pooled.mean(axis=0) - truth_of["recall"]) / (pooled.std(axis=0, ddof=1) / np.sqrt(reps))
    assert np.all(z > 5)


def test_optimal_mixture_is_never_worse_than_the_overlap_heuristic():
    rng, unit, truth, memb = _world(3)
    m = memb.shape[1]
    pats, mult = np.unique(memb, axis=0, return_counts=True)
    uni = pats / memb.sum(0)
    n = np.array([40, 10, 80, 40, 20, 60, 40, 5])
    src = np.repeat(np.arange(m), n)
    ov = overlap_weights(src, uni[np.zeros(src.size, int)], (uni * mult[:, None]).T @ uni)

    def model_var(pi, i, mu=0.3):
        q = uni @ pi
        w = np.divide(uni[:, i], q, out=np.zeros_like(q), where=q > 0)
        mass = uni * mult[:, None]
        return float(np.sum(pi ** 2 / n * (mu * (w * w) @ mass - mu ** 2 * (w @ mass) ** 2)))
    for i in range(m):
        opt = optimal_weights(uni, n, i, 0.3, mult)
        assert model_var(opt, i) <= model_var(ov[i], i) * (1 + 1e-9)

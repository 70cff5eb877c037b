"""A first-stage pilot with a weight fixed in advance (issue 12, the price of the blind second
stage): an idealised study of one system evaluated alone, not assay's estimator.

The blind second stage (assay.ondemand.planning.BLIND_SECOND_STAGE) costs a system that comes
first 863 labels on FEBRL against 48 when sized from its own first stage, which biases the pooled
mean (the first stage's weight n0/(n0 + d) moves with what it showed). Here the second stage is
sized from the first stage (sighted) but the estimate is p̂ = w·p̂_pilot + (1 − w)·p̂_rest with w
fixed before any label: E[p̂] = w·p + (1 − w)·E[E[p̂_rest | d]] = p whatever d, and
Var = w²·V_pilot + (1 − w)²·V_rest (uncorrelated: E[p̂_rest | pilot] = p).

One output of N items, K true, uniform draws with replacement, nothing labelled before; a first
stage of n0 = 41 draws (assay's first_stage at 0.03, 95%); second stage by three rules:

blind   : sized on the rate ½ (label-free): n0 + d = ⌈z²/(4ε²)⌉ = 1068 draws; pooled mean
sighted : sized from the first stage's Jeffreys rate (Stein's rule); pooled mean
pilot   : sized from the first stage, w = n0/1068 fixed: the least d with
          z²·(w²·V_pilot + (1 − w)²·max(s₀²/d, floor(d))) ≤ ε², s₀² from the first stage

Interval: Wald with the Jeffreys-posterior floor (as assay.ondemand.regions) and the
finite-population correction; labels = distinct items drawn. Common random numbers: a cell's
three rules share the first stage.

    nice -n 10 .venv/bin/python bench/ondemand_pilot_weight.py 10000 20261126
"""
import math
import os
import platform
import sys
import time

import numpy as np

Z, EPS = 1.959963984540054, 0.03
N0 = 41
BLIND = math.ceil(Z * Z / (4 * EPS * EPS))        # 1068
W = N0 / BLIND


def var(k, n, size, distinct):
    p = k / n
    jeff = (k + 0.5) * (n - k + 0.5) / ((n + 1) ** 2 * (n + 2))
    wald = p * (1 - p) / max(n - 1, 1)
    return max(wald, jeff) * max(1 - distinct / size, 0.0)


def plan_var(k0, n0):
    r = (k0 + 0.5) / (n0 + 1)
    return r * (1 - r)


def least_d(ok, lo=2, hi=100000):
    if ok(lo):
        return lo
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if ok(mid) else (mid, hi)
    return hi


def one(rng, truth, rule):
    size = len(truth)
    a = rng.integers(size, size=N0)
    k0 = int(truth[a].sum())
    if rule == "blind":
        d = BLIND - N0
    elif rule == "sighted":
        s2 = plan_var(k0, N0)
        d = least_d(lambda d: Z * Z * max(s2 / (N0 + d),
                                          0.5 * (N0 + d + .5) / ((N0 + d + 1) ** 2 * (N0 + d + 2)))
                    <= EPS * EPS)
    else:
        s2 = plan_var(k0, N0)
        vp = var(k0, N0, size, len(np.unique(a)))
        d = least_d(lambda d: Z * Z * (W * W * vp + (1 - W) ** 2 * max(
            s2 / d, 0.5 * (d + .5) / ((d + 1) ** 2 * (d + 2)))) <= EPS * EPS)
    b = rng.integers(size, size=d)
    labels = len(np.unique(np.concatenate([a, b])))
    if rule == "pilot":
        kb = int(truth[b].sum())
        est = W * k0 / N0 + (1 - W) * kb / d
        v = (W * W * var(k0, N0, size, len(np.unique(a)))
             + (1 - W) ** 2 * var(kb, d, size, len(np.unique(b))))
    else:
        allx = np.concatenate([a, b])
        k = int(truth[allx].sum())
        est = k / len(allx)
        v = var(k, len(allx), size, labels)
    return est, v, labels


def main(reps, seed):
    print(f"`nice -n 10 .venv/bin/python bench/ondemand_pilot_weight.py {reps} {seed}`, "
          f"{time.strftime('%a %d %b %Y %H:%M UTC', time.gmtime())}, {platform.machine()}, "
          f"{os.cpu_count()} cores\n")
    print(f"first stage {N0}, blind total {BLIND}, fixed pilot weight w = {W:.4f}, eps {EPS}, 95%,"
          f" {reps} reps per cell, seed {seed}")
    print("| size | precision | rule | bias | bias/SE | coverage | mean labels |")
    print("|---:|---:|---|---:|---:|---:|---:|")
    for size, false in ((5000, 0), (4283, 2), (5000, 50), (5000, 300), (5000, 700),
                        (5000, 1750), (5000, 2500), (5000, 3500)):
        truth = np.ones(size, dtype=bool)
        truth[:false] = False
        p = truth.mean()
        for rule in ("blind", "sighted", "pilot"):
            rng = np.random.default_rng([seed, size, false])
            res = np.array([one(rng, truth, rule) for _ in range(reps)])
            est, v, lab = res.T
            se = est.std(ddof=1) / math.sqrt(reps)
            cov = np.mean(np.abs(est - p) <= Z * np.sqrt(v))
            bz = (est.mean() - p) / se if se > 0 else 0.0
            print(f"| {size} | {p:.4f} | {rule} | {est.mean() - p:+.5f} | {bz:+.1f} | {cov:.3f} |"
                  f" {lab.mean():.0f} |")


if __name__ == "__main__":
    t0 = time.time()
    main(int(sys.argv[1]), int(sys.argv[2]))
    print(f"\nWall time {(time.time() - t0) / 60:.1f} min.")

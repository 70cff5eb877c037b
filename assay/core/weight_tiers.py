"""Recall and F_α of draws with replacement when a few heavy draws carry the false negatives.

An importance design draws item i with probability q_i and weighs it w = 1/q_i; the
false negatives' Hansen–Hurwitz total FN̂ = Σ_t w_t c_t / T is then a compound Poisson count:
many light draws where the score puts matches, and, below it, a few draws of weight 10–100×
heavier, each standing for dozens of false negatives. The delta interval (on the logit scale,
:data:`assay.core.measures.WR_SCALE`) reads FN̂ as normal. Its skewness is
Σw³c/(Σw²c)^{3/2} = 1/√k₃, k₃ = (Σw²c)³/(Σw³c)² (the compound Poisson's cumulants
κ_j = Σ w^j λ); where k₃ < 10 (skewness above 0.32, the threshold of ten effective events the
count rules use) a run that drew fewer heavy events than expected has FN̂ below the truth
and a variance that shrinks with it.

On the ``non_monotone`` world (a bump of 56 false negatives at ranks 2,000–6,000 that the
score does not see; world seed 11) the importance design at 2,000 labels draws the bump 328
times at weight ~32,000 (10.8 false negatives per draw): 4.4 of its matches per run on average,
k₃ ≈ 4. Over 1,000 runs recall covered 0.91 and F1 0.92 (bench/out/s23_nonmono_imp_1000reps.md);
the misses lie above the truth in the runs that drew 0–2 of the bump's matches.

The interval here (:func:`tiered_f_interval`) splits the false negatives' draws into tiers of
weight within a factor of two (tier b: ⌊log₂ w⌋ = b). A tier with ten or more effective events
(Kish: k* = (Σwc)²/Σw²c) stays normal, with TP̂ and FP̂ (their Hansen–Hurwitz covariance); a
sparse tier is k*_b events of weight w*_b = Σw²c/Σwc, bounded by Garwood's exact Poisson limits
in gamma form (Gamma(k*_b)·w*_b/T); the lower end of F_α adds one event at the heaviest sparse
tier's weight (as Fay & Feuer 1997 add one event at the largest weight for a weighted sum of
Poisson counts), not one per tier. The normal parts are centred at the estimator's totals
(Raj's ordered ones where the draws' items are known), the gammas at the draws' own counts.
Combined by simulation (:data:`assay.core.intervals.SIMULATED` draws, seed 0).

On bench/adversarial.py's importance cells (BENCHMARKS.md, "Session 23") it applied in 99% of
the non-monotone runs at 2,000 labels (recall 0.909 → 0.956 over 1,000 runs, half-width 0.098
→ 0.107) and in 12–34% of the control worlds' runs, whose half-widths grew 1–6% with no
coverage moved by more than 0.01.
"""
from __future__ import annotations

import math

import numpy as np

from assay.core.intervals import MIN_NORMAL_COUNT, SIMULATED, effective_count

__all__ = ["skew_count", "tiered_f_interval"]


def skew_count(wc: np.ndarray) -> float:
    """k₃ = (Σ(wc)²)³/(Σ(wc)³)² of weighted 0/1 draws wc: the number of equal events whose
    Poisson sum is as skewed as the weighted one (∞ with none).

    >>> skew_count(np.full(9, 2.0)), round(skew_count(np.r_[np.full(100, 1.0), 30.0]), 2)
    (9.0, 1.36)
    """
    wc = np.asarray(wc, dtype=np.float64)
    s3 = float((wc ** 3).sum())
    return math.inf if s3 <= 0 else float((wc * wc).sum()) ** 3 / s3 ** 2


def tiered_f_interval(w: np.ndarray, labels: np.ndarray, predictions: np.ndarray,
                      alpha: float, a: float, totals: tuple[float, float, float] | None = None
                      ) -> tuple[float, float] | None:
    """Two-sided (1 − a) interval for F_α = TP/(TP + α·FP + (1 − α)·FN), 0 ≤ α < 1, from T
    draws with replacement at weights ``w`` = 1/q (one system: 0/1 ``labels`` and
    ``predictions`` per draw), when the false negatives' total is skewed (k₃ < 10, module
    docstring); None otherwise, or when no tier of them is sparse. ``totals``: the
    estimator's (TP, FP, FN) totals if they are not Hansen–Hurwitz's (Raj's ordered
    estimator); the normal parts are moved to them.

    >>> w = np.r_[np.full(80, 10.0), np.full(200, 20.0), np.full(20, 400.0)]
    >>> lab = np.r_[np.ones(80), np.zeros(200), np.r_[1.0, np.zeros(19)]]
    >>> pred = np.r_[np.ones(80), np.zeros(220)]
    >>> [round(x, 3) for x in tiered_f_interval(w, lab, pred, 0.0, 0.05)]
    [0.257, 0.989]
    """
    w = np.asarray(w, dtype=np.float64)
    pos = np.asarray(labels, dtype=np.float64) > 0
    pred = np.asarray(predictions, dtype=np.float64) > 0
    t = w.shape[0]
    fn = w * (pos & ~pred)
    if alpha >= 1.0 or t < 2 or skew_count(fn) >= MIN_NORMAL_COUNT:
        return None
    tp, fp = w * (pos & pred), w * (~pos & pred)
    tier = np.floor(np.log2(w))
    dense, sparse = np.zeros(t), []
    for b in np.unique(tier[fn > 0]):
        part = np.where(tier == b, fn, 0.0)
        k, w_star = effective_count(part)
        if k >= MIN_NORMAL_COUNT:
            dense += part
        else:
            sparse.append((k, w_star))
    if not sparse:
        return None
    parts = np.stack([tp, fp, dense])
    mean = parts.sum(axis=1) / t
    if totals is not None:       # the estimator's totals: the whole difference in the normal part
        mean = mean + (np.asarray(totals, dtype=np.float64) - np.array(
            [tp.sum(), fp.sum(), fn.sum()]) / t)
    cov = np.cov(parts) / t
    jitter = 1e-12 * max(float(np.trace(cov)), 1e-300)
    try:
        factor = np.linalg.cholesky(cov + jitter * np.eye(3))
    except np.linalg.LinAlgError:      # not positive definite by rounding: the variances alone
        factor = np.diag(np.sqrt(np.maximum(np.diag(cov), 0.0)))
    rng = np.random.default_rng(0)
    normal = mean[:, None, None] + np.einsum("ij,jks->iks", factor,
                                             rng.standard_normal((3, 2, SIMULATED)))
    tp_d, fp_d = np.maximum(normal[0], 1e-300), np.maximum(normal[1], 0.0)
    fn_d = np.maximum(normal[2], 0.0)
    for k, w_star in sparse:
        fn_d = fn_d + rng.standard_gamma(k, size=(2, SIMULATED)) * w_star / t
    heaviest = max(w_star for _, w_star in sparse)
    fn_d[0] = fn_d[0] + rng.standard_gamma(1.0, SIMULATED) * heaviest / t
    f = tp_d / (tp_d + alpha * fp_d + (1.0 - alpha) * fn_d)
    return float(np.quantile(f[0], a / 2)), float(np.quantile(f[1], 1 - a / 2))

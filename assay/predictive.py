"""Model-based (predictive) estimation of F_α for a stratified sample of a ranked pool.

The labelled items are known; only the unlabelled ones are uncertain. With the rank calibration
(C1 of :mod:`assay.calibration`) and its parameter uncertainty, the unseen true positives and
false negatives are predicted stratum by stratum:

    TP = TP_seen + Σ_h Bin(U¹_h, π_h(θ)),   FN = FN_seen + Σ_h Bin(U⁰_h, π_h(θ)),   θ ~ N(θ̂, Σ̂)

where U¹_h, U⁰_h count the unlabelled predicted positives/negatives of stratum h and π_h(θ) is
the calibration's mean match rate over the stratum's ranks, made non-increasing down the ranking
(the assumption that a higher score never means a lower match rate). F_α = TP / (α·PP + (1−α)
(TP + FN)) (seed 002, eq. 1) is computed for each of D draws; the interval is their percentile
interval, the estimate the plug-in at θ̂. As the labels approach a census the prediction
vanishes and the estimate becomes exact (finite-population consistency).

Assumption (stated with every such estimate): the match rate falls with the rank as (C1) says;
the design-based estimate and interval are reported beside it.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from assay.calibration import RankCalibration, _expit, _logit, stratum_grid

DRAWS = 2000
CONCENTRATION = 100.0
SEED = 20261122  # fixed: the interval is a function of the data only


@dataclass(frozen=True)
class StratumCounts:
    """Per stratum: size, predicted positives, and labelled counts by cell."""

    bounds: np.ndarray        # K + 1 rank offsets
    pp: np.ndarray            # predicted positives in the stratum (whole pool)
    lab1: np.ndarray          # labelled items with ŷ = 1
    lab0: np.ndarray          # labelled items with ŷ = 0
    tp: np.ndarray            # labelled, ℓ = 1, ŷ = 1
    fn: np.ndarray            # labelled, ℓ = 1, ŷ = 0

    @property
    def sizes(self) -> np.ndarray:
        return np.diff(self.bounds)


def stratum_rates(theta: np.ndarray, bounds: np.ndarray, points: int = 24,
                  knee: float = 0.0) -> np.ndarray:
    """Mean π over each stratum's ranks for each parameter row of ``theta`` (D × p), made
    non-increasing across strata. Returns D × K."""
    th = np.atleast_2d(theta)
    grid = stratum_grid(bounds, points)
    out = np.empty((th.shape[0], len(grid)))
    for h, (log_ranks, w) in enumerate(grid):
        out[:, h] = _expit(_logit(th, log_ranks - knee)) @ w
    return np.minimum.accumulate(out, axis=1)


@dataclass(frozen=True)
class PredictiveResult:
    estimate: float
    ci_low: float
    ci_high: float
    tp: float
    fn: float


def predictive_f_measure(counts: StratumCounts, cal: RankCalibration, alpha: float,
                         confidence: float, draws: int = DRAWS,
                         concentration: float = CONCENTRATION) -> PredictiveResult | None:
    """Estimate and percentile interval of F_α (see the module docstring).

    Each stratum's rate has the calibration as its prior, worth ``concentration`` labels:
    p_h ~ Beta(c·m_h + k_h, c·(1 − m_h) + n_h − k_h) with k_h of n_h labels positive, so a
    well-labelled stratum speaks for itself and the model fills in where labels are few.
    """
    pp_total = float(counts.pp.sum())
    u1 = np.maximum(counts.pp - counts.lab1, 0).astype(np.int64)
    u0 = np.maximum(counts.sizes - counts.pp - counts.lab0, 0).astype(np.int64)
    tp_seen, fn_seen = float(counts.tp.sum()), float(counts.fn.sum())

    def f(tp: np.ndarray, fn: np.ndarray) -> np.ndarray:
        den = alpha * pp_total + (1.0 - alpha) * (tp + fn)
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(den > 0, tp / den, np.nan)

    n_h = counts.lab1 + counts.lab0
    k_h = counts.tp + counts.fn
    c = concentration
    m_hat = stratum_rates(cal.theta, counts.bounds, knee=cal.knee)[0]
    p_hat = (c * m_hat + k_h) / (c + n_h)
    tp_hat = tp_seen + float(u1 @ p_hat)
    fn_hat = fn_seen + float(u0 @ p_hat)
    est = float(f(np.array(tp_hat), np.array(fn_hat)))
    if not np.isfinite(est):
        return None
    rng = np.random.default_rng(SEED)
    th = rng.multivariate_normal(cal.theta, cal.cov, size=draws)
    m = np.clip(stratum_rates(th, counts.bounds, knee=cal.knee), 1e-12, 1 - 1e-12)  # D × K
    p = rng.beta(c * m + k_h[None, :], c * (1 - m) + (n_h - k_h)[None, :])
    tp = tp_seen + rng.binomial(u1[None, :], p).sum(axis=1)
    fn = fn_seen + rng.binomial(u0[None, :], p).sum(axis=1)
    vals = f(tp.astype(float), fn.astype(float))
    vals = vals[np.isfinite(vals)]
    a = (1.0 - confidence) / 2.0
    lo, hi = (np.quantile(vals, [a, 1.0 - a]) if vals.size else (0.0, 1.0))
    return PredictiveResult(est, float(min(lo, est)), float(max(hi, est)), tp_hat, fn_hat)

"""A calibration model of the match probability against the score rank, fitted to the labels seen.

Under class imbalance the match rate of score-ranked items falls off like a power of the rank
(on the real ER pools: P(match at rank r) ≈ c·r^(−1.8) beyond the first few hundred), so

    logit P(ℓ = 1 | rank r) = a + b·log r                                       (C1)

is fitted by maximum likelihood to the labelled items, with a weak N(0, 10²) prior on (a, b)
that keeps the fit finite when the labels separate perfectly. Sampling depends on the rank only,
so the fit needs no design weights. Its parameter uncertainty (the inverse Hessian at the mode)
is propagated by averaging over draws of (a, b): the model states what an unseen, lightly
sampled tail could still hold, which no design-based variance can (see
:func:`assay.estimators.f_measure`).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

PRIOR_SD = 10.0


@dataclass(frozen=True)
class RankCalibration:
    """Fitted (C1): mode ``theta`` = (a, b) and its covariance ``cov``."""

    theta: np.ndarray
    cov: np.ndarray
    n_labels: int
    n_positive: int

    def probability(self, rank: np.ndarray, draws: int = 0,
                    rng: np.random.Generator | None = None) -> np.ndarray:
        """P(ℓ = 1) at ``rank``; with ``draws`` > 0 the mean over parameter draws."""
        lr = np.log(np.asarray(rank, dtype=np.float64))
        if draws <= 0:
            return _expit(self.theta[0] + self.theta[1] * lr)
        gen = rng if rng is not None else np.random.default_rng(0)
        th = gen.multivariate_normal(self.theta, self.cov, size=draws)
        return _expit(th[:, :1] + th[:, 1:] * lr[None, :]).mean(axis=0)

    def stratum_moments(self, bounds: np.ndarray, points: int = 24,
                        draws: int = 200) -> tuple[np.ndarray, np.ndarray]:
        """Per stratum (contiguous ranks bounds[h]+1 … bounds[h+1]): mean of π and of π(1−π)
        over its ranks, averaged over parameter uncertainty (a fixed internal seed keeps the
        result a function of the data only)."""
        gen = np.random.default_rng(12345)
        th = gen.multivariate_normal(self.theta, self.cov, size=draws)
        k = bounds.shape[0] - 1
        mean_p, mean_pq = np.zeros(k), np.zeros(k)
        for h in range(k):
            lo, hi = float(bounds[h] + 1), float(bounds[h + 1])
            ranks = np.unique(np.round(np.linspace(lo, hi, points)))
            # weight each grid rank by the number of ranks it stands for
            edges = np.concatenate(([lo - 0.5], (ranks[1:] + ranks[:-1]) / 2, [hi + 0.5]))
            w = np.diff(edges)
            w = w / w.sum()
            p = _expit(th[:, :1] + th[:, 1:] * np.log(ranks)[None, :])
            mean_p[h] = float((p.mean(axis=0) * w).sum())
            mean_pq[h] = float(((p * (1 - p)).mean(axis=0) * w).sum())
        return mean_p, mean_pq


def _expit(x: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-np.clip(x, -700, 700)))


def fit_rank_calibration(ranks: np.ndarray, labels: np.ndarray,
                         prior_sd: float = PRIOR_SD, iterations: int = 50) -> RankCalibration:
    """Penalised maximum likelihood of (C1) by Newton's method."""
    lr = np.log(np.asarray(ranks, dtype=np.float64))
    y = np.asarray(labels, dtype=np.float64)
    X = np.column_stack([np.ones_like(lr), lr])
    theta = np.zeros(2)
    prec = np.eye(2) / prior_sd**2
    for _ in range(iterations):
        p = _expit(X @ theta)
        grad = X.T @ (y - p) - prec @ theta
        hess = (X * (p * (1 - p))[:, None]).T @ X + prec
        step = np.linalg.solve(hess, grad)
        theta = theta + step
        if np.max(np.abs(step)) < 1e-9:
            break
    p = _expit(X @ theta)
    hess = (X * (p * (1 - p))[:, None]).T @ X + prec
    return RankCalibration(theta=theta, cov=np.linalg.inv(hess), n_labels=int(y.size),
                           n_positive=int(y.sum()))

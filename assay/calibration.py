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
    knee: float = 0.0
    loglik: float = 0.0

    def probability(self, rank: np.ndarray, draws: int = 0,
                    rng: np.random.Generator | None = None) -> np.ndarray:
        """P(ℓ = 1) at ``rank``; with ``draws`` > 0 the mean over parameter draws."""
        lr = np.log(np.asarray(rank, dtype=np.float64))
        if draws <= 0:
            return _expit(_logit(self.theta, lr - self.knee))
        gen = rng if rng is not None else np.random.default_rng(0)
        th = gen.multivariate_normal(self.theta, self.cov, size=draws)
        return _expit(_logit(th, lr - self.knee)).mean(axis=0)

    def stratum_moments(self, bounds: np.ndarray, points: int = 24,
                        draws: int = 200) -> tuple[np.ndarray, np.ndarray]:
        """Per stratum (contiguous ranks bounds[h]+1 … bounds[h+1]): mean of π and of π(1−π)
        over its ranks, averaged over parameter uncertainty (a fixed internal seed keeps the
        result a function of the data only)."""
        gen = np.random.default_rng(12345)
        th = gen.multivariate_normal(self.theta, self.cov, size=draws)
        k = bounds.shape[0] - 1
        mean_p, mean_pq = np.zeros(k), np.zeros(k)
        for h, (log_ranks, w) in enumerate(stratum_grid(bounds, points)):
            p = _expit(_logit(th, log_ranks - self.knee))
            mean_p[h] = float(p.mean(axis=0) @ w)
            mean_pq[h] = float((p * (1 - p)).mean(axis=0) @ w)
        return mean_p, mean_pq


def stratum_grid(bounds: np.ndarray, points: int = 24) -> list[tuple[np.ndarray, np.ndarray]]:
    """Per stratum (contiguous ranks bounds[h]+1 … bounds[h+1]): the log-ranks of a grid of up
    to ``points`` ranks and weights proportional to the ranks each grid point stands for, so a
    stratum's mean of any function of the rank is ``f(log_ranks) @ weights``."""
    out = []
    for h in range(bounds.shape[0] - 1):
        lo, hi = float(bounds[h] + 1), float(bounds[h + 1])
        ranks = np.unique(np.round(np.linspace(lo, hi, points)))
        edges = np.concatenate(([lo - 0.5], (ranks[1:] + ranks[:-1]) / 2, [hi + 0.5]))
        w = np.diff(edges)
        out.append((np.log(ranks), w / w.sum()))
    return out


def _expit(x: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-np.clip(x, -700, 700)))


def design_matrix(lr: np.ndarray, degree: int, knee: float = 0.0) -> np.ndarray:
    """Columns 1, (log r − κ)₊, … : with κ > 0 the rate is flat above the knee rank e^κ and
    falls as a power of the rank beyond it."""
    x = np.maximum(lr - knee, 0.0)
    return np.column_stack([x**d for d in range(degree + 1)])


def fit_hinge_calibration(ranks: np.ndarray, labels: np.ndarray,
                          knees: np.ndarray) -> RankCalibration:
    """(C1) with a knee: logit π = a + b·(log r − κ)₊, κ chosen among ``knees`` (log-ranks) by
    profile likelihood; the covariance is conditional on the chosen κ."""
    best: RankCalibration | None = None
    for kappa in np.concatenate(([0.0], knees)):
        cal = fit_rank_calibration(ranks, labels, knee=float(kappa))
        if best is None or cal.loglik > best.loglik:
            best = cal
    assert best is not None
    return best


def fit_rank_calibration(ranks: np.ndarray, labels: np.ndarray,
                         weights: np.ndarray | None = None, prior_sd: float = PRIOR_SD,
                         iterations: int = 50, degree: int = 1,
                         knee: float = 0.0) -> RankCalibration:
    """Penalised (pseudo-)maximum likelihood of (C1) by Newton's method.

    With ``weights`` (design weights N_h/n_h) the fit targets the population-level curve — the
    one a census of the pool would give — instead of the curve of the labelled sample, which a
    top-heavy design over-represents; weights are rescaled to mean 1 and the covariance is the
    sandwich H⁻¹JH⁻¹ of the weighted score (Binder 1983). ``degree`` 2 adds a log²-rank term.
    """
    lr = np.log(np.asarray(ranks, dtype=np.float64))
    y = np.asarray(labels, dtype=np.float64)
    w = np.ones_like(y) if weights is None else np.asarray(weights, dtype=np.float64)
    w = w / w.mean()
    X = design_matrix(lr, degree, knee)
    theta = np.zeros(degree + 1)
    prec = np.eye(degree + 1) / prior_sd**2
    for _ in range(iterations):
        p = _expit(X @ theta)
        grad = X.T @ (w * (y - p)) - prec @ theta
        hess = (X * (w * p * (1 - p))[:, None]).T @ X + prec
        step = np.linalg.solve(hess, grad)
        theta = theta + step
        if np.max(np.abs(step)) < 1e-9:
            break
    p = _expit(X @ theta)
    hess = (X * (w * p * (1 - p))[:, None]).T @ X + prec
    h_inv = np.linalg.inv(hess)
    if weights is None:
        cov = h_inv
    else:
        u = X * (w * (y - p))[:, None]
        cov = h_inv @ (u.T @ u + prec) @ h_inv
    eps = 1e-300
    loglik = float(np.sum(w * (y * np.log(p + eps) + (1 - y) * np.log(1 - p + eps))))
    return RankCalibration(theta=theta, cov=cov, n_labels=int(y.size),
                           n_positive=int(y.sum()), knee=knee, loglik=loglik)


def _logit(theta: np.ndarray, lr: np.ndarray) -> np.ndarray:
    """a + b·x (+ c·x²), x = (lr)₊, for a parameter vector or a matrix of draws (rows)."""
    th = np.atleast_2d(theta)
    lr = np.maximum(lr, 0.0)
    out = np.zeros((th.shape[0], lr.shape[0]))
    for d in range(th.shape[1]):
        out += th[:, d:d + 1] * lr[None, :] ** d
    return out if np.ndim(theta) > 1 else out[0]

"""A calibration model of the match probability against the score rank, fitted to the labels seen.

Under class imbalance the match rate of score-ranked items falls off like a power of the rank
(on the real ER pools: P(match at rank r) ≈ c·r^(−1.8) beyond the first few hundred), so

    logit P(ℓ = 1 | rank r) = a + b·log r                                       (C1)

is fitted by maximum likelihood to the labelled items, with a weak N(0, 10²) prior on (a, b)
that keeps the fit finite when the labels separate perfectly. Sampling depends on the rank only,
so the fit needs no design weights. Its parameter uncertainty (the inverse Hessian at the mode)
is propagated by averaging over draws of (a, b): the model states what an unseen, lightly
sampled tail could still hold, which no design-based variance can (see
:func:`assay.core.measures.f_measure`).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import stats

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
    tail: float = 0.0       # log-rank of a second knee (0: none): the slope may change there

    def inverse(self, theta: np.ndarray, lr: np.ndarray) -> np.ndarray:
        """π at log-ranks ``lr`` (already shifted by the knee) for a parameter vector or rows
        of draws."""
        return _expit(_logit(theta, lr, self.tail - self.knee if self.tail else None))

    def draw(self, rng: np.random.Generator, size: int) -> np.ndarray:
        """``size`` draws of the parameters from N(θ̂, Σ̂); a curvature term (degree 2) is kept
        ≤ 0, as in the fit (:func:`fit_hinge_calibration`)."""
        th = rng.multivariate_normal(self.theta, self.cov, size=size)
        if th.shape[1] - (1 if self.tail else 0) >= 3:
            th[:, 2] = np.minimum(th[:, 2], 0.0)
        return _steep_tail(th, self.tail)

    def probability(self, rank: np.ndarray) -> np.ndarray:
        """P(ℓ = 1) at ``rank``, at the mode θ̂."""
        return self.inverse(self.theta, np.log(np.asarray(rank, dtype=np.float64)) - self.knee)

    def stratum_moments(self, grid: RankGrid) -> tuple[np.ndarray, np.ndarray]:
        """Per stratum of ``grid``: mean of π and of π(1−π) over its ranks, at the mode θ̂
        (averaging over the parameters' uncertainty instead sent the auto design's labels to the
        empty tail: BENCHMARKS.md)."""
        p = grid.monotone(self.inverse(self.theta, grid.log_ranks - self.knee))
        return grid.means(p)[0][0], grid.means(p * (1 - p))[0][0]


@dataclass(frozen=True)
class FitCheck:
    """Goodness of fit of a calibration to the labels, stratum by stratum."""

    deviance: float
    df: int
    p_value: float
    local_p: float = 1.0        # the most contradicted stratum's excess, Bonferroni-adjusted
    local_stratum: int = -1     # … and which stratum it is (−1: none tested)


def fit_check(cal: RankCalibration, ranks: np.ndarray, labels: np.ndarray,
              stratum: np.ndarray, n_params: int = 3,
              sizes: np.ndarray | None = None) -> FitCheck:
    """Deviance of the calibration against one free rate per stratum (McCullagh & Nelder 1989,
    §4.4): G² = 2 Σ_h [k_h log(k_h/E_h) + (n_h − k_h) log((n_h − k_h)/(n_h − E_h))], with k_h
    positives among the n_h labels of stratum h and E_h = Σ_i π(r_i) their expectation under
    the calibration; p-value from χ² with (strata with labels − ``n_params``) degrees of
    freedom (a, b and the knee).

    A global deviance has little power against a rate that rises in one stratum, the failure
    that makes a model-based recall too high. So each stratum sampled in part (``sizes``: N_h;
    a stratum labelled in full needs no model) is also tested for an excess of positives:
    p_h = P(K ≥ k_h) for K ~ Binomial(n_h, E_h/n_h) (more dispersed than the Poisson-binomial
    sum of the π(r_i), so p_h errs large), Bonferroni-adjusted over the S strata tested:
    ``local_p`` = min(1, S·min_h p_h).

    >>> cal = RankCalibration(np.array([-4.0, 0.0]), np.zeros((2, 2)), 200, 10)
    >>> ranks = np.arange(1.0, 201.0); st = np.repeat([0, 1], 100)
    >>> lab = np.zeros(200); lab[100:110] = 1          # 10 matches where 1.8 are expected
    >>> chk = fit_check(cal, ranks, lab, st, sizes=np.array([1000, 1000]))
    >>> chk.local_stratum, chk.local_p < 0.001
    (1, True)
    """
    pi = cal.probability(ranks)
    k = int(stratum.max()) + 1 if stratum.size else 0
    n_h = np.bincount(stratum, minlength=k).astype(float)
    k_h = np.bincount(stratum, weights=labels, minlength=k)
    e_h = np.clip(np.bincount(stratum, weights=pi, minlength=k), 1e-12, None)
    e_h = np.minimum(e_h, n_h - 1e-12)
    used = n_h > 0
    local_p, local_h = 1.0, -1
    if sizes is not None:
        partial = used & (n_h < np.asarray(sizes, float)[:k])
        if partial.any():
            rate = np.clip(e_h[partial] / n_h[partial], 0.0, 1.0)
            p_h = stats.binom.sf(np.round(k_h[partial]) - 1, n_h[partial].astype(np.int64), rate)
            j = int(np.argmin(p_h))
            local_p = float(min(1.0, partial.sum() * p_h[j]))
            local_h = int(np.flatnonzero(partial)[j])
    n_h, k_h, e_h = n_h[used], k_h[used], e_h[used]
    with np.errstate(divide="ignore", invalid="ignore"):
        t1 = np.where(k_h > 0, k_h * np.log(k_h / e_h), 0.0)
        t0 = np.where(n_h - k_h > 0, (n_h - k_h) * np.log((n_h - k_h) / (n_h - e_h)), 0.0)
    dev = float(2.0 * np.sum(t1 + t0))
    df = int(used.sum()) - n_params
    if df <= 0:
        return FitCheck(dev, df, 1.0, local_p, local_h)
    return FitCheck(dev, df, float(stats.chi2.sf(dev, df)), local_p, local_h)


@dataclass(frozen=True)
class RankGrid:
    """A quadrature over strata of contiguous ranks (stratum h: ranks bounds[h]+1 … bounds[h+1]):
    up to ``points`` grid ranks per stratum, each standing for the ranks nearest to it, so the
    mean of any function of the rank over a stratum — or over its predicted positives or
    negatives alone — is a weighted sum over the grid."""

    log_ranks: np.ndarray     # G grid points, in rank order
    starts: np.ndarray        # K: first grid point of each stratum
    count: np.ndarray         # G: ranks each point stands for
    count1: np.ndarray        # G: of which predicted positive

    @classmethod
    def build(cls, bounds: np.ndarray, points: int = 24,
              cum_pred: np.ndarray | None = None) -> RankGrid:
        """``cum_pred[r]``: predicted positives among ranks 1 … r (length N + 1); without it
        every item counts as predicted negative."""
        log_ranks, starts, count, count1 = [], [], [], []
        for h in range(bounds.shape[0] - 1):
            lo, hi = int(bounds[h]) + 1, int(bounds[h + 1])
            ranks = np.unique(np.round(np.linspace(lo, hi, points))).astype(np.int64)
            cuts = np.concatenate(([lo - 1], (ranks[1:] + ranks[:-1]) // 2, [hi]))
            starts.append(sum(len(x) for x in log_ranks))
            log_ranks.append(np.log(ranks.astype(np.float64)))
            count.append(np.diff(cuts))
            count1.append(np.diff(cum_pred[cuts]) if cum_pred is not None
                          else np.zeros(ranks.size, dtype=np.int64))
        return cls(np.concatenate(log_ranks), np.array(starts, dtype=np.int64),
                   np.concatenate(count).astype(np.float64),
                   np.concatenate(count1).astype(np.float64))

    def monotone(self, p: np.ndarray, steepest: float | None = None) -> np.ndarray:
        """Make rates (D × G) non-increasing down the ranking: a higher score never means a
        lower match rate. With ``steepest`` S < 0, also a decay no faster than the rank^S:
        π(r) ≥ π(r′)·(r/r′)^S for r > r′. The least rates above π that meet it:
        π̃(r) = max over r′ ≤ r of π(r′)·(r/r′)^S, i.e. log π − S·log r made non-decreasing by
        a running maximum (:data:`assay.core.predictive.STEEPEST`). On the rate, not the odds:
        a rate near 1 at the top (the odds unbounded) does not lift the tail.

        >>> g = RankGrid.build(np.array([0, 1, 2, 4]))
        >>> p = np.array([0.5, 0.5, 1e-6, 1e-7])
        >>> g.monotone(p).tolist() == p.tolist()
        True
        >>> g.monotone(p, steepest=-2.0).round(4).tolist()   # 0.5 × (2/3)², 0.5 × (2/4)²
        [0.5, 0.5, 0.2222, 0.125]
        """
        p = np.minimum.accumulate(p, axis=-1)
        if steepest is None:
            return p
        tilt = steepest * self.log_ranks
        q = np.log(np.clip(p, 1e-300, None)) - tilt
        return np.exp(np.maximum.accumulate(q, axis=-1) + tilt)

    def means(self, values: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Per stratum (D × K): mean of ``values`` (D × G) over all its ranks, over its
        predicted positives and over its predicted negatives (NaN where a cell is empty)."""
        v = np.atleast_2d(values)
        c0 = self.count - self.count1

        def mean(w: np.ndarray) -> np.ndarray:
            tot = np.add.reduceat(w, self.starts)
            with np.errstate(invalid="ignore", divide="ignore"):
                return np.add.reduceat(v * w, self.starts, axis=1) / tot
        return mean(self.count), mean(self.count1), mean(c0)


def _expit(x: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-np.clip(x, -700, 700)))


def design_matrix(lr: np.ndarray, degree: int, knee: float = 0.0, tail: float = 0.0
                  ) -> np.ndarray:
    """Columns 1, (log r − κ)₊, … : with κ > 0 the rate is flat above the knee rank e^κ and
    falls as a power of the rank beyond it; with ``tail`` τ > κ also (log r − τ)₊, a slope of
    its own beyond τ."""
    x = np.maximum(lr - knee, 0.0)
    cols = [x**d for d in range(degree + 1)]
    if tail:
        cols.append(np.maximum(lr - tail, 0.0))
    return np.column_stack(cols)


def fit_hinge_calibration(ranks: np.ndarray, labels: np.ndarray,
                          knees: np.ndarray, degree: int = 1, tail: float = 0.0,
                          tail_sd: float = PRIOR_SD,
                          start: dict[tuple[float, ...], np.ndarray] | None = None
                          ) -> RankCalibration:
    """(C1) with a knee: logit π = a + b·x (+ c·x²), x = (log r − κ)₊, κ chosen among ``knees``
    (log-ranks) by profile likelihood; the covariance is conditional on the chosen κ. With
    ``degree`` 2 the decay may steepen down the ranking (c ≤ 0: a fit with c > 0, whose rate
    would level off or rise again in the far tail, is replaced by the straight one).

    The candidate knees are independent penalised fits of the same labels: they are solved
    together, one batched Newton iteration for all (:func:`_newton`), and the first knee of
    largest likelihood wins, as a loop over them in order would choose. ``start`` (a dict the
    caller keeps between refits, e.g. an adaptive design's batches) holds each candidate's last
    mode: Newton's method starts there, and from zero where it does not converge (the mode is
    unique, so only the iterations change, not the fit).

    >>> r = np.arange(1.0, 2001.0)
    >>> y = (np.random.default_rng(1).random(r.size) < 0.4 * np.minimum(1, 40 / r)).astype(float)
    >>> float(np.exp(fit_hinge_calibration(r, y, np.log([10.0, 40.0, 160.0])).knee))
    40.0
    """
    lr = np.log(np.asarray(ranks, dtype=np.float64))
    y = np.asarray(labels, dtype=np.float64)
    kappas = np.concatenate(([0.0], np.asarray(knees, dtype=np.float64)))
    tails = np.where(tail > kappas, tail, 0.0)
    theta: list[np.ndarray] = [np.zeros(0)] * kappas.size
    design: list[np.ndarray] = [np.zeros(0)] * kappas.size     # each knee's accepted X
    deg = np.full(kappas.size, degree)
    for d in sorted({degree, 1}, reverse=True):
        for has_tail in (True, False):
            todo = [j for j in range(kappas.size)
                    if bool(tails[j]) == has_tail and deg[j] == d and theta[j].size == 0]
            if not todo:
                continue
            X = np.stack([design_matrix(lr, d, kappas[j], tails[j]) for j in todo])
            names = [(float(d), float(kappas[j]), float(tails[j]), float(tail_sd)) for j in todo]
            init = None if start is None else np.stack(
                [start.get(nm, np.zeros(X.shape[2])) for nm in names])
            modes = _newton(X, y, _precision(X.shape[2], has_tail, PRIOR_SD, tail_sd),
                            start=init)
            if start is not None:
                start.update(zip(names, modes.copy()))
            fitted = _steep_tail(modes, tail if has_tail else 0.0)
            for i, (j, th) in enumerate(zip(todo, fitted)):
                if d >= 2 and th[2] > 0:        # curvature upwards: the straight decay instead
                    deg[j] = 1
                else:
                    theta[j], design[j] = th, X[i]
    j = int(np.argmax([_loglik(design[k], y, theta[k]) for k in range(kappas.size)]))
    return _calibration(design[j], y, theta[j],
                        _precision(theta[j].size, bool(tails[j]), PRIOR_SD, tail_sd),
                        float(kappas[j]), float(tails[j]))


def fit_rank_calibration(ranks: np.ndarray, labels: np.ndarray, prior_sd: float = PRIOR_SD,
                         iterations: int = 50, degree: int = 1,
                         knee: float = 0.0, tail: float = 0.0,
                         tail_sd: float = PRIOR_SD) -> RankCalibration:
    """Penalised maximum likelihood of (C1) by Newton's method; ``degree`` 2 adds a log²-rank
    term, ``tail`` τ > 0 a change of slope at log-rank τ with prior N(0, ``tail_sd``²). Sampling
    depends on the rank only, so the labels need no design weights.

    >>> r = np.arange(1.0, 4001.0)
    >>> p = 0.5 * np.minimum(1.0, 50.0 / r) ** 1.5          # a power law past rank 50
    >>> y = (np.random.default_rng(3).random(r.size) < p).astype(float)
    >>> cal = fit_rank_calibration(r, y, knee=np.log(50.0), tail=np.log(400.0), tail_sd=1.0)
    >>> cal.theta.shape, bool(cal.theta[1] < 0)
    ((3,), True)
    """
    lr = np.log(np.asarray(ranks, dtype=np.float64))
    y = np.asarray(labels, dtype=np.float64)
    X = design_matrix(lr, degree, knee, tail)
    prec = _precision(X.shape[1], bool(tail), prior_sd, tail_sd)
    theta = _steep_tail(_newton(X[None], y, prec, iterations)[0], tail)
    return _calibration(X, y, theta, prec, knee, tail)


def _precision(p: int, tail: bool, prior_sd: float, tail_sd: float) -> np.ndarray:
    """The prior's precision: N(0, ``prior_sd``²) on each coefficient, N(0, ``tail_sd``²) on
    the tail's slope change (the last one) when there is a tail knee."""
    prec = np.eye(p) / prior_sd**2
    if tail:
        prec[-1, -1] = 1.0 / tail_sd**2
    return prec


def _newton(X: np.ndarray, y: np.ndarray, prec: np.ndarray, iterations: int = 50,
            start: np.ndarray | None = None) -> np.ndarray:
    """The modes θ_k (K × p) of K penalised logistic likelihoods of the same labels ``y``, design
    matrices ``X`` (K × n × p), prior precision ``prec``: Newton's method, θ ← θ + H⁻¹g with
    g = Xᵀ(y − π) − Pθ and H = Xᵀ diag(π(1 − π)) X + P, each fit stopped once its step is below
    10⁻⁹ (the log-likelihood is concave: one mode each). From ``start`` (K × p) if given; a fit
    that does not converge from there (an undamped step can overshoot from afar) starts again
    from zero."""
    if start is not None:
        theta, left = _iterate(X, y, prec, iterations, np.array(start, dtype=np.float64))
        if left.size:
            theta[left] = _iterate(X[left], y, prec, iterations,
                                   np.zeros((left.size, X.shape[2])))[0]
        return theta
    return _iterate(X, y, prec, iterations, np.zeros(X.shape[::2]))[0]


def _iterate(X: np.ndarray, y: np.ndarray, prec: np.ndarray, iterations: int,
             theta: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """:func:`_newton`'s iterations from ``theta``: the modes, and the fits not converged."""
    active = np.arange(X.shape[0])
    for _ in range(iterations):
        Xa, th = X[active], theta[active]
        p = _expit((Xa @ th[:, :, None])[:, :, 0])
        Xt = np.swapaxes(Xa, 1, 2)
        grad = (Xt @ (y - p)[:, :, None])[:, :, 0] - th @ prec.T
        hess = Xt @ (Xa * (p * (1 - p))[:, :, None]) + prec
        step = np.linalg.solve(hess, grad[:, :, None])[:, :, 0]
        theta[active] = th + step
        active = active[np.max(np.abs(step), axis=1) >= 1e-9]
        if active.size == 0:
            break
    return theta, active


def _loglik(X: np.ndarray, y: np.ndarray, theta: np.ndarray) -> float:
    p = _expit(X @ theta)
    eps = 1e-300
    return float(np.sum(y * np.log(p + eps) + (1 - y) * np.log(1 - p + eps)))


def _calibration(X: np.ndarray, y: np.ndarray, theta: np.ndarray, prec: np.ndarray,
                 knee: float, tail: float) -> RankCalibration:
    """The fitted (C1) at ``theta``: covariance the inverse Hessian, and the log-likelihood."""
    p = _expit(X @ theta)
    hess = (X * (p * (1 - p))[:, None]).T @ X + prec
    return RankCalibration(theta=theta, cov=np.linalg.inv(hess), n_labels=int(y.size),
                           n_positive=int(y.sum()), knee=knee, loglik=_loglik(X, y, theta),
                           tail=tail)


TAIL_SLOPE = -1.0   # past a tail knee, logit π falls at least this fast per unit of log-rank


def _steep_tail(theta: np.ndarray, tail: float) -> np.ndarray:
    """With a tail knee and a straight decay (a, b, d): keep the tail's slope b + d ≤
    ``TAIL_SLOPE``, i.e. past the census the match rate falls at least as fast as 1/rank (the
    real pools fall as rank^−1.8): a flatter tail would make the expected matches of a pool
    grow without bound with its size, and is what the tail's few labels cannot rule out alone.
    Applies to a parameter vector or rows of draws.

    >>> _steep_tail(np.array([[1.0, -2.0, 1.5], [1.0, -2.0, 0.5]]), tail=6.0).tolist()
    [[1.0, -2.0, 1.0], [1.0, -2.0, 0.5]]
    """
    th = np.array(theta, dtype=np.float64, copy=True)
    if tail and th.shape[-1] == 3:
        th[..., 2] = np.minimum(th[..., 2], TAIL_SLOPE - th[..., 1])
    return th


def _logit(theta: np.ndarray, lr: np.ndarray, tail: float | None = None) -> np.ndarray:
    """a + b·x (+ c·x²) (+ d·(lr − tail)₊), x = (lr)₊, for a parameter vector or a matrix of
    draws (rows); the last parameter is the tail's slope change when ``tail`` is given."""
    th = np.atleast_2d(theta)
    x = np.maximum(lr, 0.0)
    out = np.zeros((th.shape[0], lr.shape[0]))
    poly = th.shape[1] - (1 if tail is not None else 0)
    for d in range(poly):
        out += th[:, d:d + 1] * x[None, :] ** d
    if tail is not None:
        out += th[:, -1:] * np.maximum(lr - tail, 0.0)[None, :]
    return out if np.ndim(theta) > 1 else out[0]

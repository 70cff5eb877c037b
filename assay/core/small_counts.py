"""Intervals for the two-phase (double-sampling) estimator that stay honest with small counts.

The delta-method variance of :func:`assay.core.two_phase.estimate_arrays` is a plug-in: a cell
whose adjudications found no disagreement (k = 0 or k = n of n) contributes zero variance, and a
rare relevant document in a huge bottom stratum contributes nothing when the sample holds none.
The interval then has zero width (issue 11: a corrected precision 0.381 [0.381, 0.381] against a
truth of 0.5), or misses in the direction the rare event would have moved it.

Here the interval is the equal-tailed posterior interval of a Jeffreys-prior model of both
phases (the beta-binomial "BB-half" recall interval of Webber 2013, "Approximate recall
confidence intervals", ACM TOIS 31(1):2, extended to double sampling; the Jeffreys interval of
Brown, Cai & DasGupta 2001, Statistical Science 16:101–133, for each cell's rate). In stratum l
of M_l documents, with N'_lcg first-phase documents in cell c and run-return pattern g, and of
the n_lc adjudicated documents of cell c, k_lcgy of pattern g and true label y:

    (w_lcg)_cg ~ Dirichlet(N'_lcg / (1 − f_l)),                 f_l = N'_l / M_l        (1)
    (s_lcgy)_gy ~ Dirichlet((k_lcgy + ½(1 − f_lc)) / (1 − f_lc)),  f_lc = n_lc / (M_l w_lc) (2)

(the ½ only on patterns present in the cell), so that the share of stratum l that is relevant
and of pattern g is Σ_c w_lc s_lcg1, and every measure (yield, recall, precision, F1) is the
same function of these shares as the point estimate. Dividing the concentrations by 1 − f
carries the finite-population corrections of the two-phase variance (Cochran 1977, ch. 12):
to first order Var(w_lc s_lcgy) under (1)–(2) equals the two-phase variance of the module
:mod:`assay.core.two_phase`, plus the Jeffreys pseudo-counts; a census (f = 1) is exact.

The pseudo-counts shape the interval's spread and skew, not its location: with θ̂ the
(unchanged, unbiased) two-phase estimate and q_a the posterior a-quantile of the measure,

    [θ̂ − (q_½ − q_{α/2}),  θ̂ + (q_{1−α/2} − q_½)]                                      (3)

(``center="estimate"``, the default; truncated to [0, 1], and to [0, ∞) for the yield).
Unshifted, a Jeffreys prior on a cell of huge weight (the bottom stratum's assessed-not-relevant
documents, with a true rate far below 1/n) drags the whole posterior of recall down and the
interval misses above the truth; (3) keeps the long tail on the side the data cannot rule out.
``center="posterior"`` gives the plain equal-tailed posterior interval.

The construction is checked for frequentist coverage by simulation (tests/core/
test_double_sampling_small_counts.py, bench/double_sampling.py).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from assay.core.two_phase import SampleCounts, estimate_arrays

__all__ = ["PosteriorIntervals", "jeffreys_two_phase_draws", "jeffreys_two_phase_intervals"]

PRIOR = 0.5


def _concentration_scale(f: np.ndarray) -> np.ndarray:
    """1/(1 − f), inf at or beyond a census."""
    f = np.asarray(f, float)
    out = np.full(f.shape, np.inf)
    np.divide(1.0, 1.0 - f, out=out, where=f < 1.0 - 1e-12)
    return out


def _sparse_dirichlet(alpha: np.ndarray, fixed: np.ndarray, scale: np.ndarray, group: np.ndarray,
                      draws: int, rng: np.random.Generator) -> np.ndarray:
    """Dirichlet draws of ``alpha·scale`` within each ``group`` (groups of finite scale), the
    ``fixed`` shares elsewhere; all arguments are flat over the entries (only entries that can
    be non-zero are passed: the memory is draws × entries, not draws × strata × patterns).
    Gamma variates are drawn in entry order, so the stream matches a dense draw."""
    random = np.isfinite(scale)
    a = np.where(random, alpha * np.where(random, scale, 0.0), 0.0)
    out = np.broadcast_to(fixed, (draws, fixed.size)).copy()
    drawn = np.flatnonzero(a > 0)
    if drawn.size:
        gam = rng.standard_gamma(np.broadcast_to(a[drawn], (draws, drawn.size)))
        groups, inv = np.unique(group[drawn], return_inverse=True)
        tot = np.zeros((draws, groups.size))
        for j in range(groups.size):                      # few groups; exact, ordered sums
            tot[:, j] = gam[:, inv == j].sum(axis=1)
        out[:, drawn] = np.divide(gam, tot[:, inv], out=np.zeros_like(gam), where=tot[:, inv] > 0)
    # groups drawn at random whose entries all had alpha 0 stay 0 (as in a dense draw)
    zero = random & (a <= 0)
    out[:, zero] = 0.0
    return out


def jeffreys_two_phase_draws(sc: SampleCounts, draws: int = 4000,
                             rng: np.random.Generator | None = None,
                             prior: float = PRIOR) -> dict[str, np.ndarray]:
    """Posterior draws (eqs. 1–2 of the module docstring) of the totals of one topic (no batch
    axis): ``Ty`` (draws, G) relevant and ``Ta`` (draws, G) assessable documents per pattern.

    >>> from assay.core.double_sampling import build_counts
    >>> sc = build_counts([10, 90], np.array([[True], [False]]), np.array([0, 0, 1, 1]),
    ...                   np.array([0, 0, 1, 1]), np.array([1, 0, 0, 1]), run_ids=("A",))
    >>> d = jeffreys_two_phase_draws(sc, 100, np.random.default_rng(0))
    >>> d["Ty"].shape, bool(np.all(d["Ty"].sum(axis=1) <= 100))
    ((100, 2), True)
    """
    rng = rng if rng is not None else np.random.default_rng(0)
    M = np.asarray(sc.population, float)                      # (L,)
    a = np.asarray(sc.assessable, bool)                        # (C,)
    N1 = np.asarray(sc.first, float)                           # (L, C, G)
    n2 = np.asarray(sc.second, float)
    y2 = np.asarray(sc.relevant, float)
    if N1.ndim != 3:
        raise ValueError("one topic at a time: counts of shape (L, C, G)")
    L, C, G = N1.shape
    N1_l = N1.sum(axis=(1, 2))
    N1_c = N1.sum(axis=2)
    n2_c = n2.sum(axis=2)
    # (1) first phase: composition of each stratum over (cell, pattern); entries with N' > 0
    f1 = np.divide(N1_l, M, out=np.ones_like(M), where=M > 0)
    e1 = np.flatnonzero(N1 > 0)                                # flat (l, c, g), C order
    l1, c1, g1 = np.unravel_index(e1, N1.shape)
    w = _sparse_dirichlet(N1.ravel()[e1], N1.ravel()[e1] / N1_l[l1],
                          _concentration_scale(f1)[l1], l1, draws, rng)      # (D, E1)
    # (2) second phase: within each assessable cell, shares of (pattern, true label)
    k = np.stack([n2 - y2, y2], axis=-1)                       # (L, C, G, 2)
    present = (N1 > 0)[..., None] & a[None, :, None, None]
    pop_c = M[:, None] * np.divide(N1_c, N1_l[:, None], out=np.zeros_like(N1_c),
                                   where=N1_l[:, None] > 0)
    f2 = np.divide(n2_c, pop_c, out=np.ones_like(n2_c), where=pop_c > 0)
    f2 = np.where(a[None, :], np.minimum(f2, 1.0), 1.0)
    alpha = k + prior * (1.0 - f2)[..., None, None] * present
    fixed_s = np.divide(k, n2_c[..., None, None], out=np.zeros_like(k),
                        where=n2_c[..., None, None] > 0)
    scale2 = np.broadcast_to(_concentration_scale(f2)[..., None, None], k.shape)
    e2 = np.flatnonzero((np.where(np.isfinite(scale2), alpha, 0.0) > 0) | (fixed_s > 0))
    l2, c2, g2, y = np.unravel_index(e2, k.shape)
    s = _sparse_dirichlet(alpha.ravel()[e2], fixed_s.ravel()[e2], scale2.ravel()[e2],
                          l2 * C + c2, draws, rng)             # (D, E2)
    # w_lc: the first-phase share of each cell (summed over its patterns)
    w_c = np.zeros((draws, L * C))
    cell1 = l1 * C + c1
    for j in np.unique(cell1):
        w_c[:, j] = w[:, cell1 == j].sum(axis=1)
    rel = y == 1
    contrib = M[l2[rel]] * w_c[:, (l2 * C + c2)[rel]] * s[:, rel]            # (D, E2rel)
    Ty = np.zeros((draws, G))
    Ta = np.zeros((draws, G))
    for g in range(G):
        Ty[:, g] = contrib[:, g2[rel] == g].sum(axis=1)
        m = (g1 == g) & a[c1]
        Ta[:, g] = (M[l1[m]] * w[:, m]).sum(axis=1)
    return {"Ty": Ty, "Ta": Ta}


@dataclass(frozen=True)
class PosteriorIntervals:
    """Interval ends per quantity: ``yield``, ``unassessable`` (scalars) and ``recall``,
    ``precision``, ``f1`` ((K,) arrays, one per run); each a (low, high) pair."""
    bounds: dict[str, tuple[np.ndarray, np.ndarray]]
    draws: int

    def to_dict(self) -> dict:
        return {k: [np.asarray(lo).tolist(), np.asarray(hi).tolist()]
                for k, (lo, hi) in self.bounds.items()}


def jeffreys_two_phase_intervals(sc: SampleCounts, confidence: float = 0.95, draws: int = 4000,
                                 seed: int = 0,
                                 point: dict[str, np.ndarray] | None = None,
                                 center: str = "estimate") -> PosteriorIntervals:
    """Intervals (eq. 3 of the module docstring: the α/2, ½, 1 − α/2 posterior quantiles,
    α = 1 − confidence, placed around the estimate) of the yield, unassessable share, and each
    run's recall R_A = T_A/T, precision T_A/N_A and F1 = 2T_A/(N_A + T) under eqs. (1)–(2),
    always containing the point estimate (``point``: :func:`assay.core.two_phase.
    estimate_arrays` of ``sc``). Seeded: the same counts give the same interval.

    >>> from assay.core.double_sampling import build_counts
    >>> fal = np.array([1] * 8 + [0] * 2)
    >>> true = np.array([1] * 4 + [-2] * 4 + [0, -2])
    >>> sc = build_counts([10], np.array([[True]]), np.zeros(10, int), np.zeros(10, int),
    ...                   fal, true, run_ids=("A",))
    >>> lo, hi = jeffreys_two_phase_intervals(sc).bounds["precision"]
    >>> 0.5 < float(lo[0]) < 0.8 < float(hi[0]) < 1     # the delta method: [0.8, 0.8]
    True
    """
    if not 0 < confidence < 1:
        raise ValueError("confidence must be in (0, 1)")
    if center not in ("estimate", "posterior"):
        raise ValueError("center must be 'estimate' or 'posterior'")
    point = point if point is not None else estimate_arrays(sc)
    d = jeffreys_two_phase_draws(sc, draws, np.random.default_rng(seed))
    R = np.asarray(sc.patterns, float)
    Ty, Ta = d["Ty"], d["Ta"]
    Y = Ty.sum(axis=1)
    YA, NA = Ty @ R, Ta @ R
    div = lambda x, y: np.divide(x, y, out=np.zeros(np.broadcast(x, y).shape),  # noqa: E731
                                 where=np.broadcast_to(y, np.broadcast(x, y).shape) > 0)
    samples = {"yield": Y, "unassessable": 1.0 - Ta.sum(axis=1) / float(np.sum(sc.population)),
               "recall": div(YA, Y[:, None]), "precision": div(YA, NA),
               "f1": div(2 * YA, NA + Y[:, None])}
    tail = (1.0 - confidence) / 2
    out = {}
    for name, x in samples.items():
        lo, mid, hi = np.quantile(x, [tail, 0.5, 1.0 - tail], axis=0)
        est = np.asarray(point[name], float)
        if center == "estimate":
            lo, hi = lo + (est - mid), hi + (est - mid)
            if name != "yield":
                lo, hi = np.clip(lo, 0.0, 1.0), np.clip(hi, 0.0, 1.0)
            else:
                lo = np.maximum(lo, 0.0)
        out[name] = (np.minimum(lo, est), np.maximum(hi, est))
    return PosteriorIntervals(out, draws)

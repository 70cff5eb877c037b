"""Joint estimation over many systems' samples: multiple importance sampling with a mixture.

Seed 000 (on-demand open-world evaluation), "Importance reweighting in estimating precision".
System k's output has a distribution p_k over the universe (uniform over its predicted items for
instance-level scores; structured for relation- or entity-level scores). Sample set j holds n_j
draws made i.i.d. from p_j. For mixture weights π (π_j ≥ 0, Σ π_j = 1) and q(x) = Σ_k π_k p_k(x),
the estimator of μ_i = E_{p_i}[f] (system i's precision when f is the label) is

    μ̂_i = Σ_j (π_j / n_j) Σ_{x ∈ X̂_j} p_i(x) f(x) / q(x),                               (M1)

unbiased for any fixed π whose mixture covers p_i (q > 0 wherever p_i f > 0; seed 000's
derivation). The seed's variance "Σ_j π_j² σ²_ij" is right once σ²_ij is read as the variance of
the *mean* of set j; written out, with g_i = p_i f / q and the sets independent,

    Var(μ̂_i) = Σ_j (π_j² / n_j) Var_{p_j}[g_i],   estimated with the within-set sample
    variances s²_j(g_i) (ddof 1).                                                      (M2)

The seed's "takeaway" π_j ∝ σ_ij^{-2} is the minimiser of Σ_j π_j² σ²_ij on the simplex only
when the σ²_ij are held fixed (Lagrange: 2π_j σ²_ij = λ); they are not — w_i = p_i/q depends on π
through q — so the weights below minimise the full expression numerically (the seed's appendix
on the weights is empty; this is its completion, with the gradient in
:func:`optimal_weights_fast`). Note also that π_j multiplies the *mean* of set j, so π_j enters
squared and n_j divides: writing (M2) with the per-draw variance and no 1/n_j (as the seed's
first form reads) overstates the variance of a set with many draws and understates it for a set
of few. The tests check (M2) against the Monte Carlo variance (tests/core/test_open_world.py).

Several targets share one set of draws, so (M2) generalises to a covariance matrix
Σ_j (π_j²/n_j) Cov_j[g_a, g_b] — what the delta method needs for ratios such as pooled recall.

**Mixture weights.** Three rules, all functions of the systems' distributions and the set sizes:

* ``balance`` — π_j ∝ n_j: q is the distribution of a draw picked at random from all sets
  (Veach & Guibas 1995's balance heuristic), the same π for every target;
* ``overlap`` — the kbp-online heuristic: π_ij ∝ n_j Σ_x p_i(x) p_j(x), per target i;
* ``optimal`` — per target i, the π minimising (M2) with f replaced by a constant rate μ̄
  (``rate``, e.g. a pilot estimate): Σ_j (π_j²/n_j)(μ̄ E_j[w²] − μ̄² E_j[w]²), w = p_i/q, the
  expectations exact sums over the universe. The labels enter only through the one scalar μ̄
  and the draws not at all, so the choice of π does not chase the sampling noise (minimising
  the plug-in (M2), or (M2) with expectations over the draws, does: measured, it biased the
  estimate by up to 10 standard errors and its intervals covered 81%). π_i is kept ≥
  ``floor`` so the mixture always covers the target's own support.

>>> import numpy as np
>>> dens = np.array([[0.5, 0.0], [0.5, 0.5], [0.5, 0.5], [0.0, 0.5]])   # 4 draws × 2 systems
>>> src = np.array([0, 0, 1, 1])
>>> est, cov = mixture_mean(src, dens, dens, np.array([1.0, 0.0, 1.0, 1.0]), np.array([.5, .5]))
>>> est.round(3).tolist()
[0.75, 0.75]
"""
from __future__ import annotations

import numpy as np
from scipy import optimize

from assay.errors import EstimationError

WEIGHT_RULES = ("optimal", "balance", "overlap")
FLOOR = 0.05
SPAN = 40.0        # optimal_weights_fast: log-share range of the sets (e^-40 ≈ 4e-18)


def _check(source: np.ndarray, density: np.ndarray) -> tuple[np.ndarray, int]:
    src = np.asarray(source, dtype=np.int64)
    dens = np.asarray(density, dtype=np.float64)
    if dens.ndim != 2 or dens.shape[0] != src.shape[0]:
        raise EstimationError(f"density must be draws × systems, got {dens.shape} for "
                              f"{src.shape[0]} draws")
    return np.bincount(src, minlength=dens.shape[1]), dens.shape[1]


def mixture_mean(source: np.ndarray, density: np.ndarray, target: np.ndarray,
                 values: np.ndarray, pi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(M1) and (M2) for every target column at once.

    ``source[t]``: the set draw t came from; ``density[t, k]``: p_k(x_t) for every system k
    (what defines q); ``target[t, a]``: the target distribution p_a(x_t) of each estimand a;
    ``values[t]``: f(x_t); ``pi``: mixture weights (m,), or (r, m) one row per target.
    Returns the estimates (r,) and their covariance (r, r) (the diagonal only, zeros elsewhere,
    when ``pi`` has a row per target).

    >>> dens = np.array([[1.0, 0.0], [0.0, 1.0]])
    >>> mixture_mean(np.array([0, 1]), dens, dens, np.array([1.0, 0.0]),
    ...              np.array([0.5, 0.5]))[0].tolist()
    [1.0, 0.0]
    """
    n, m = _check(source, density)
    src = np.asarray(source, dtype=np.int64)
    tgt = np.asarray(target, dtype=np.float64)
    tgt = tgt[:, None] if tgt.ndim == 1 else tgt
    f = np.asarray(values, dtype=np.float64)
    pi = np.asarray(pi, dtype=np.float64)
    if pi.ndim == 2:                      # one mixture per target: estimate column by column
        out = [mixture_mean(src, density, tgt[:, [a]], f, pi[a]) for a in range(tgt.shape[1])]
        return (np.array([e[0] for e, _ in out]),
                np.diag([c[0, 0] for _, c in out]))
    q = np.asarray(density, dtype=np.float64) @ pi
    uncovered = (q <= 0) & (tgt * f[:, None] != 0).any(axis=1)
    if uncovered.any():
        raise EstimationError(f"{int(uncovered.sum())} draws lie outside the mixture's support "
                              "(a system with zero weight is the only one that outputs them)")
    g = np.divide(tgt * f[:, None], q[:, None], out=np.zeros_like(tgt), where=q[:, None] > 0)
    r = g.shape[1]
    est, cov = np.zeros(r), np.zeros((r, r))
    for j in np.flatnonzero((n > 0) & (pi > 0)):
        gj = g[src == j]
        est += pi[j] * gj.mean(axis=0)
        if n[j] > 1:
            cov += pi[j] ** 2 / n[j] * np.atleast_2d(np.cov(gj, rowvar=False, ddof=1))
        else:
            cov += np.inf
    return est, cov


def ratio_mixture_mean(source: np.ndarray, density: np.ndarray, target: np.ndarray,
                       values: np.ndarray, pi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The self-normalised form of (M1): μ̂_a = N̂_a / D̂_a, N̂_a the (M1) estimate of E_{p_a}[f]
    and D̂_a that of E_{p_a}[1] = 1 from the same draws (Hesterberg 1995), with the linearised
    covariance Cov(μ̂) = Cov(N̂ − μ̂D̂)/(D̂_a D̂_b), i.e. (M2) over g_a = p_a (f − μ̂_a)/(q D̂_a).

    Draws of other systems that fall outside system a's output add nothing to its variance
    (they add μ² E[w]²-type terms to (M2)); consistent, bias O(1/n). Arguments as in
    :func:`mixture_mean`.

    >>> dens = np.array([[0.5, 0.0], [0.5, 0.5], [0.5, 0.5], [0.0, 0.5]])
    >>> est, cov = ratio_mixture_mean(np.array([0, 0, 1, 1]), dens, dens,
    ...                               np.array([1.0, 0.0, 1.0, 1.0]), np.array([.5, .5]))
    >>> est.round(3).tolist()
    [0.75, 0.75]
    """
    tgt = np.asarray(target, dtype=np.float64)
    tgt = tgt[:, None] if tgt.ndim == 1 else tgt
    f = np.asarray(values, dtype=np.float64)
    ones = np.ones_like(f)
    num, _ = mixture_mean(source, density, tgt, f, pi)
    den, _ = mixture_mean(source, density, tgt, ones, pi)
    with np.errstate(divide="ignore", invalid="ignore"):
        mu = num / den
        lin = tgt * (f[:, None] - mu[None, :]) / den[None, :]
    _, cov = mixture_mean(source, density, np.nan_to_num(lin), ones, pi)
    return mu, cov


def balance_weights(n: np.ndarray) -> np.ndarray:
    """π_j ∝ n_j (the balance heuristic).

    >>> balance_weights(np.array([10, 30])).tolist()
    [0.25, 0.75]
    """
    n = np.asarray(n, dtype=np.float64)
    return n / n.sum()


def overlap_weights(source: np.ndarray, density: np.ndarray, overlap: np.ndarray
                    ) -> np.ndarray:
    """kbp-online's heuristic π_ij ∝ n_j Σ_x p_i(x) p_j(x); ``overlap[i, j]`` = Σ_x p_i p_j
    (computed by the caller over the universe). Returns an (m, m) matrix, one row per target.

    >>> overlap_weights(np.array([0, 1, 1]), np.eye(2)[[0, 1, 1]], np.eye(2)).tolist()
    [[1.0, 0.0], [0.0, 1.0]]
    """
    n, _ = _check(source, density)
    w = np.asarray(overlap, dtype=np.float64) * n[None, :]
    return w / w.sum(axis=1, keepdims=True)


def _prepare(universe: np.ndarray, n: np.ndarray, multiplicity: np.ndarray | None,
             rate: float, floor_set: int
             ) -> tuple[np.ndarray, np.ndarray, np.ndarray, int, np.ndarray, float]:
    """The arguments of :func:`optimal_weights` and :func:`optimal_weights_fast` as arrays:
    densities, multiplicities, draw counts, the number of sets, the sets with draws and the
    rate clipped into [0.001, 0.999]; the set that keeps the floor must have draws."""
    dens = np.asarray(universe, dtype=np.float64)
    mult = np.ones(dens.shape[0]) if multiplicity is None else np.asarray(multiplicity, float)
    nn = np.asarray(n, dtype=np.float64)
    live = np.flatnonzero(nn > 0)
    if floor_set not in live:
        raise EstimationError(f"set {floor_set} has no draws of its own: the target's support "
                              "is not known to be covered")
    return dens, mult, nn, dens.shape[1], live, float(np.clip(rate, 1e-3, 1 - 1e-3))


def optimal_weights(universe: np.ndarray, n: np.ndarray, target: int, rate: float,
                    multiplicity: np.ndarray | None = None, floor: float = FLOOR) -> np.ndarray:
    """The π minimising (M2) for system ``target`` with f replaced by the constant ``rate``
    (module docstring), over the sets that have draws, π_target ≥ ``floor``.

    ``universe[u, k]`` is p_k at each point u of the universe (or at each distinct row of it,
    with ``multiplicity[u]`` points alike); ``n[j]`` the draws of set j. The expectations
    E_j[w²] = Σ_u p_j(u) w(u)² are exact sums over the universe, not over the draws, so π is a
    function of the systems' outputs, the set sizes and one scalar — never of which items
    happened to be drawn (choosing π from the draws would correlate it with their labels).

    >>> uni = np.array([[0.5, 0.5], [0.5, 0.5]])
    >>> optimal_weights(uni, np.array([10, 10]), 0, 0.5).round(2).tolist()
    [0.5, 0.5]
    """
    dens, mult, n, m, live, mu = _prepare(universe, n, multiplicity, rate, target)
    mass = dens[:, live] * mult[:, None]               # p_j(u) × multiplicity, sets with draws
    own = dens[:, target]

    def weights(z: np.ndarray) -> np.ndarray:
        e = np.exp(z - z.max())
        pi = np.zeros(m)
        pi[live] = e / e.sum()
        k = pi[target]
        if k < floor:                     # mix towards the target's own set
            lam = (floor - k) / (1.0 - k)
            pi = (1 - lam) * pi
            pi[target] += lam
        return pi

    def variance(z: np.ndarray) -> float:
        pi = weights(z)
        q = dens @ pi
        w = np.divide(own, q, out=np.zeros_like(q), where=q > 0)
        e1, e2 = w @ mass, (w * w) @ mass              # E_j[w], E_j[w²] for each live set
        return float(np.sum(pi[live] ** 2 / n[live] * (mu * e2 - mu ** 2 * e1 ** 2)))

    balance = np.log(np.maximum(n[live], 1.0))
    if live.size == 1:
        return weights(balance)
    # the overlap heuristic's π as a second start: the optimum is never worse than either
    overlap = np.log(np.maximum(n[live] * ((own * mult) @ dens[:, live]), 1e-300))
    best = min((balance, overlap), key=variance)
    res = optimize.minimize(variance, best, method="Powell",
                            options={"xtol": 1e-3, "ftol": 1e-10, "maxiter": 20000})
    return weights(res.x if variance(res.x) <= variance(best) else best)


def optimal_weights_fast(universe: np.ndarray, n: np.ndarray, target: int, rate: float,
                         multiplicity: np.ndarray | None = None, floor: float = FLOOR,
                         normalised: bool = False, target_density: np.ndarray | None = None,
                         floor_on: int | None = None) -> np.ndarray:
    """:func:`optimal_weights`' objective (M2 at a constant rate μ̄) minimised with its analytic
    gradient (L-BFGS over π = floor·e_target + (1 − floor)·softmax(z), the same feasible set),
    from the better of the balance and overlap starts — for many systems over a large
    universe, where Powell's derivative-free search costs seconds per system. With w = p_i/q,
    c_j = π_j²/n_j and M = p_j × multiplicity,

        ∂V/∂π_k = 2π_k/n_k (μ̄E_k[w²] − μ̄²E_k[w]²) − 2μ̄ Σ_u (Mc)_u w_u² p_k(u)/q_u
                  + 2μ̄² Σ_u (M(c·E[w]))_u w_u p_k(u)/q_u.

    ``normalised``: the weights for :func:`ratio_mixture_mean`, whose model variance
    μ̄(1 − μ̄) Σ_j c_j E_j[w²] is minimised whatever μ̄ (the E[w] terms drop).
    ``target_density`` as in :func:`model_variance`; the floor then holds on set ``floor_on``
    (default ``target``), which must have draws.

    >>> uni = np.array([[0.5, 0.5], [0.5, 0.5]])
    >>> optimal_weights_fast(uni, np.array([10, 10]), 0, 0.5).round(2).tolist()
    [0.5, 0.5]
    """
    fl = target if floor_on is None else int(floor_on)
    dens, mult, n, m, live, mu = _prepare(universe, n, multiplicity, rate, fl)
    t = int(np.flatnonzero(live == fl)[0])
    d = dens[:, live]
    tdens = dens[:, target] if target_density is None else np.asarray(target_density, float)
    keep = (tdens > 0) | (d.sum(axis=1) > 0)
    d, mlt = d[keep], mult[keep]
    own, mass, nl = tdens[keep], d * mlt[:, None], n[live]

    def split(z: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        e = np.exp(z - z.max())
        sm = e / e.sum()
        pi = (1 - floor) * sm
        pi[t] += floor
        return pi, sm

    seen: dict[bytes, tuple[float, np.ndarray]] = {}

    def fun(z: np.ndarray) -> tuple[float, np.ndarray]:
        """V and its gradient in z; a point asked again (the start, the answer) is looked up,
        not computed again (the same values bit for bit)."""
        key = z.tobytes()
        if key not in seen:
            seen[key] = _fun(z)
        v, g = seen[key]
        return v, g.copy()

    def _fun(z: np.ndarray) -> tuple[float, np.ndarray]:
        pi, sm = split(z)
        q = d @ pi
        w = np.divide(own, q, out=np.zeros_like(q), where=q > 0)
        e1, e2 = w @ mass, (w * w) @ mass
        c = pi ** 2 / nl
        a1, a2 = (0.0, 1.0) if normalised else (mu * mu, mu)
        inner = a2 * e2 - a1 * e1 * e1
        v = float(c @ inner)
        wq = np.divide(w, q, out=np.zeros_like(q), where=q > 0)
        g = (2 * pi / nl * inner - 2 * a2 * ((mass @ c) * w * wq) @ d
             + 2 * a1 * ((mass @ (c * e1)) * wq) @ d)
        gz = (1 - floor) * sm * (g - sm @ g)
        return v, gz

    if live.size == 1:
        out = np.zeros(m)
        out[fl] = 1.0
        return out
    # the softmax is shift-invariant: z in [−SPAN, 0] keeps every set's share within e^−SPAN
    # of the largest. Unbounded, a line-search step of L-BFGS could take z to ±300 (shares
    # 1e-180): rows that only such sets cover got q ≈ 1e-184 and w², w/q overflowed, and the
    # gradient turned NaN (inf·0) — the "invalid value" warnings of the FEBRL tests.
    starts = [np.log(np.maximum(nl, 1.0)),
              np.log(np.maximum(nl * ((own * mlt) @ d), 1e-300))]
    starts = [np.maximum(z - z.max(), -SPAN) for z in starts]
    best = min(starts, key=lambda z: fun(z)[0])
    res = optimize.minimize(fun, best, jac=True, method="L-BFGS-B",
                            bounds=[(-SPAN, 0.0)] * len(best),
                            options={"maxiter": 500, "ftol": 1e-12, "gtol": 1e-12})
    z = res.x if fun(res.x)[0] <= fun(best)[0] else best
    out = np.zeros(m)
    out[live] = split(z)[0]
    return out


__all__ = ["FLOOR", "WEIGHT_RULES", "balance_weights", "mixture_mean", "optimal_weights",
           "optimal_weights_fast", "overlap_weights", "ratio_mixture_mean"]

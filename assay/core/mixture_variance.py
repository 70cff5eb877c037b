"""The model variance of a mixture estimate and the draws it needs (split from
:mod:`assay.core.mixture`, which re-exports both; notation there).

* :func:`model_variance` — (M2) when every label is Bernoulli at a constant rate, at the worst
  rate of an interval, or at a rate per point of the universe (a planning model);
* :func:`draws_needed` — the least number of new draws of one set that brings z·√V to a width
  (seed 000's "bisection on a conservative variance bound, or better":
  :func:`assay.core.search.least_reaching`, bisection's answer in fewer probes).

>>> import numpy as np
>>> draws_needed(np.array([[1.0]]), np.array([0]), 0, 0.05, 1.96, 0.5, 10_000)
385
"""
from __future__ import annotations

import numpy as np

from assay.core.search import least_reaching
from assay.errors import EstimationError


def _arrays(universe: np.ndarray, n: np.ndarray, target: int, pi: np.ndarray,
            multiplicity: np.ndarray | None, target_density: np.ndarray | None
            ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The arguments of :func:`model_variance` checked and as arrays: c_j = π_j²/n_j over the
    live sets (π_j > 0, which must have draws), p_target per row, w = p_target/q (q the
    mixture density, which must cover p_target), the live sets' mass p_j × multiplicity, and
    the multiplicities.

    >>> c, own, w, mass, mult = _arrays(np.array([[0.5, 0.0], [0.5, 1.0]]), np.array([4, 0]),
    ...                                 0, np.array([1.0, 0.0]), None, None)
    >>> c.tolist(), w.tolist(), mass.ravel().tolist()
    ([0.25], [1.0, 1.0], [0.5, 0.5])
    """
    dens = np.asarray(universe, dtype=np.float64)
    mult = np.ones(dens.shape[0]) if multiplicity is None else np.asarray(multiplicity, float)
    n, pi = np.asarray(n, dtype=np.float64), np.asarray(pi, dtype=np.float64)
    live = np.flatnonzero(pi > 0)
    if np.any(n[live] <= 0):
        raise EstimationError("a set with mixture weight > 0 has no draws")
    q = dens @ pi
    own = dens[:, target] if target_density is None else np.asarray(target_density, float)
    if np.any((own > 0) & (q <= 0)):
        raise EstimationError(f"the mixture does not cover system {target}'s output")
    w = np.divide(own, q, out=np.zeros_like(q), where=q > 0)
    return pi[live] ** 2 / n[live], own, w, dens[:, live] * mult[:, None], mult


def _moments(universe: np.ndarray, n: np.ndarray, target: int, pi: np.ndarray,
             multiplicity: np.ndarray | None, target_density: np.ndarray | None = None
             ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """c_j = π_j²/n_j, E_j[w], E_j[w²] (w = p_target/q) over the sets with π_j > 0."""
    c, _, w, mass, _ = _arrays(universe, n, target, pi, multiplicity, target_density)
    return c, w @ mass, (w * w) @ mass


def model_variance(universe: np.ndarray, n: np.ndarray, target: int, pi: np.ndarray,
                   rate: float | tuple[float, float],
                   multiplicity: np.ndarray | None = None, normalised: bool = False,
                   target_density: np.ndarray | None = None,
                   rates: np.ndarray | None = None) -> float:
    """(M2) for system ``target`` when every label is Bernoulli(μ̄) independent of the item:
    V(μ̄) = Σ_j (π_j²/n_j)(μ̄ E_j[w²] − μ̄² E_j[w]²), w = p_target/q, the expectations exact
    sums over the universe (rows of ``universe`` as in :func:`optimal_weights`).

    ``rate`` a number μ̄, or an interval (lo, hi): then the largest V over μ̄ in it (V is a
    concave quadratic A μ̄ − B μ̄², maximal at A/2B), the conservative bound that the
    on-demand planner bisects on. ``normalised``: the variance of :func:`ratio_mixture_mean`,
    V(μ̄) = μ̄(1 − μ̄) Σ_j (π_j²/n_j) E_j[w²] (E_j[w(f − μ̄)] = 0 for such labels).
    ``target_density``: p_target at each row when the target is not one of the sampled sets
    (e.g. sets drawn from parts of outputs); ``target`` is then ignored.

    ``rates`` (one per row): the labels Bernoulli(r(u)) with a rate that varies over the
    universe (a planning model fitted to the labels, e.g. by the number of systems that output
    an item); ``rate`` is then ignored. With μ = Σ_u p_target(u) r(u) and per draw of set j
    the linearised term g = w(f − μ) (normalised) or g = w f (M1), exactly

        V = Σ_j (π_j²/n_j) (E_j[w² ((r − μ)² + r(1 − r))] − E_j[w (r − μ)]²)   (normalised)
        V = Σ_j (π_j²/n_j) (E_j[w² r] − E_j[w r]²)                                     (M1)

    (E[(f − μ)² | u] = (r − μ)² + r(1 − r)); with r ≡ μ̄ these are the two forms above. Items
    whose rate is near 0 or 1 add less than μ̄(1 − μ̄): where the systems' outputs differ, the
    items that few systems output are mostly false, so the constant-rate form overstates the
    variance of a low-precision system (by up to 1.5× on the KBP-like campaign).

    >>> uni = np.array([[0.5, 0.0], [0.5, 1.0]])
    >>> round(model_variance(uni, np.array([100, 100]), 0, np.array([1.0, 0.0]), 0.5), 6)
    0.0025
    >>> round(model_variance(uni, np.array([100, 100]), 0, np.array([1.0, 0.0]), (0, 1)), 6)
    0.0025
    >>> round(model_variance(uni, np.array([100, 100]), 0, np.array([1.0, 0.0]), 0.5,
    ...                      rates=np.array([0.5, 0.5])), 6)
    0.0025
    """
    if rates is not None:
        return _rate_model_variance(universe, n, target, pi, multiplicity, normalised,
                                    target_density, np.asarray(rates, dtype=np.float64))
    c, e1, e2 = _moments(universe, n, target, pi, multiplicity, target_density)
    a, b = float(c @ e2), float(c @ (e1 * e1))
    if normalised:
        lo, hi = (float(rate), float(rate)) if np.ndim(rate) == 0 else map(float, rate)
        mu = float(np.clip(0.5, lo, hi))
        return a * mu * (1 - mu)
    if np.ndim(rate) == 0:
        mu = float(rate)
    else:
        lo, hi = (float(x) for x in rate)
        mu = float(np.clip(a / (2 * b), lo, hi)) if b > 0 else hi
    return max(a * mu - b * mu * mu, 0.0)


def _rate_model_variance(universe: np.ndarray, n: np.ndarray, target: int, pi: np.ndarray,
                         multiplicity: np.ndarray | None, normalised: bool,
                         target_density: np.ndarray | None, rates: np.ndarray) -> float:
    """:func:`model_variance` with a rate per row (its docstring)."""
    c, own, w, mass, mult = _arrays(universe, n, target, pi, multiplicity, target_density)
    r = np.clip(rates, 0.0, 1.0)
    if normalised:
        mu = float((own * mult) @ r / max(float((own * mult).sum()), 1e-300))
        sq, lin = (r - mu) ** 2 + r * (1 - r), r - mu
    else:
        sq, lin = r, r
    e2, e1 = (w * w * sq) @ mass, (w * lin) @ mass
    return max(float(c @ (e2 - e1 * e1)), 0.0)


def draws_needed(universe: np.ndarray, n: np.ndarray, target: int, half_width: float,
                 z: float, rate: float | tuple[float, float], cap: int,
                 multiplicity: np.ndarray | None = None, minimum: int = 1,
                 overlap: np.ndarray | None = None, normalised: bool = False,
                 target_density: np.ndarray | None = None, add_to: int | None = None,
                 rates: np.ndarray | None = None) -> int:
    """The least number d of new draws from system ``target``'s own distribution such that
    z·√V ≤ ``half_width``, V = :func:`model_variance` with n_target + d draws and the overlap
    heuristic's π (π_j ∝ n_j Σ_x p_target p_j; the optimal π's model variance is never above
    it, so the bound stays conservative for the estimate made with optimal weights);
    searched over d in [``minimum``, ``cap``] by :func:`assay.core.search.least_reaching`
    (``cap`` when even ``cap`` draws do not reach the width). ``overlap`` (m,) is
    Σ_x p_target(x) p_j(x), computed once by the caller;
    ``normalised``: the bound of :func:`ratio_mixture_mean`'s variance; ``target_density``
    and ``rates`` as in :func:`model_variance`, with ``add_to`` the set that receives the new
    draws (default ``target``).

    >>> uni = np.array([[1.0]])
    >>> draws_needed(uni, np.array([0]), 0, 0.05, 1.96, 0.5, 10_000)   # 1.96²·¼/0.05²
    385
    """
    dens = np.asarray(universe, dtype=np.float64)
    mult = np.ones(dens.shape[0]) if multiplicity is None else np.asarray(multiplicity, float)
    n = np.asarray(n, dtype=np.float64)
    own = dens[:, target] if target_density is None else np.asarray(target_density, float)
    k = target if add_to is None else int(add_to)
    ov = ((own * mult) @ dens) if overlap is None else np.asarray(overlap, float)

    def width(d: int) -> float:
        nn = n.copy()
        nn[k] += d
        w = nn * ov
        pi = w / w.sum()
        return z * float(np.sqrt(model_variance(dens, nn, target, pi, rate, mult,
                                                normalised, own, rates)))

    lo, hi = max(int(minimum), 0), max(int(cap), int(minimum), 0)
    return least_reaching(width, half_width, lo, hi, check_low=lo > 0 or n[k] > 0)


__all__ = ["draws_needed", "model_variance"]

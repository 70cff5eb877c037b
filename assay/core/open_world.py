"""Open-world recall of many systems: a pool's recall from exhaustively annotated units times each
system's share of the pool's true items (seeds 000 and 001).

Notation (seed 001, "Reducing variance by incorporating pooled and unassessed output"): C* the
true items of the universe, X_i system i's output, P = ∪_k X_k the pool. Recall factors as

    R_i = |X_i ∩ C*| / |C*| = θ · ν_i,   θ = |P ∩ C*| / |C*|,   ν_i = |X_i ∩ C*| / |P ∩ C*|.

* θ, the recall of the pool, comes from a probability sample of units (documents, records) of
  the corpus whose true items are annotated exhaustively: with a_u = |C*_u ∩ P| and
  b_u = |C*_u| for sampled unit u, θ̂ = Σ a_u / Σ b_u, a ratio of totals under simple random
  sampling of units, with the core's linearised variance (:mod:`assay.core.totals`, finite
  population correction included). The same units give the exhaustive-only estimate
  R̂ᵉ_i = Σ c_ui / Σ b_u (c_ui = |C*_u ∩ X_i|) and its covariance with θ̂.
* ν_i = |X_i| μ_i / (|P| μ_P): μ_i is system i's precision and μ_P the pool's, both estimated
  from the same labelled draws by mixture importance sampling (:mod:`assay.core.mixture`), so
  the delta method on log ν̂ uses their covariance: Var(log ν̂) ≈ V_ii/μ_i² + V_PP/μ_P² −
  2 V_iP/(μ_i μ_P). The seed calls ν̂ unbiased; it is a ratio of estimates, so it is only
  consistent (bias O(1/n)), which the simulations measure.
* The product R̂ᵖ_i = θ̂ ν̂_i (θ̂ and ν̂ from independent samples) has variance
  ν²V_θ + θ²V_ν + V_θV_ν (Goodman 1960, exact for independent factors).
* The hybrid combines the two estimates of R_i with the weight that minimises the variance of
  w R̂ᵉ + (1 − w) R̂ᵖ: w = (Vₚ − C)/(Vₑ + Vₚ − 2C), C = Cov(R̂ᵉ, R̂ᵖ) = ν̂ Cov(R̂ᵉ, θ̂)
  (seed 001: "the two estimators can always be combined so that the variance of the
  combination is less than the variance of each").

The pooled (closed-world) recall ν̂_i is returned beside, so its bias is visible.

>>> import numpy as np
>>> a, b = np.array([2, 1, 0, 3]), np.array([2, 2, 1, 3])
>>> est, var = unit_ratio(a, b, n_units=100)
>>> round(est, 3)
0.75
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from assay.core.intervals import normal_interval, ratio_interval
from assay.core.totals import StratifiedSample
from assay.core.types import Estimate
from assay.errors import EstimationError


def unit_ratio(numerator: np.ndarray, denominator: np.ndarray, n_units: int
               ) -> tuple[float, float]:
    """Σ a_u / Σ b_u over a simple random sample of units from ``n_units``, with its
    linearised variance (finite-population correction included).

    Where the ratio is a share of true items (0 ≤ a_u ≤ b_u: θ, the pool's share, or a
    system's exhaustive recall), the variance is floored at the Jeffreys variance of k = Σ a_u
    successes in n = Σ b_u, times the finite-population correction (1 − units sampled /
    ``n_units``): when every sampled true item is in the pool the linearised variance is 0,
    yet the unsampled units may hold true items outside it (the same floor as the on-demand
    precision's, :mod:`assay.ondemand.regions`).

    >>> unit_ratio(np.array([1, 1]), np.array([1, 2]), n_units=2)      # a census of units
    (0.6666666666666666, 0.0)
    >>> r, v = unit_ratio(np.array([3, 2]), np.array([3, 2]), n_units=100)
    >>> r, round(v, 4)                                 # all found, yet not certain
    (1.0, 0.0107)
    """
    a = np.asarray(numerator, dtype=np.float64)
    b = np.asarray(denominator, dtype=np.float64)
    if a.shape[0] != b.shape[0] or a.shape[0] < 1:
        raise EstimationError("one numerator and denominator per sampled unit are needed")
    sample = StratifiedSample(stratum=np.zeros(a.shape[0], dtype=np.int64),
                              sizes=np.array([int(n_units)]))
    b_tot, _ = sample.total(b)
    if not b_tot > 0:
        return math.nan, math.nan
    a_tot, _ = sample.total(a)
    r = a_tot / b_tot
    _, var = sample.total((a - r * b) / b_tot)
    if np.all((a >= 0) & (a <= b)):
        k, n = float(a.sum()), float(b.sum())
        fpc = max(0.0, 1.0 - a.shape[0] / float(n_units))
        var = max(float(var), fpc * (k + 0.5) * (n - k + 0.5) / ((n + 1.0) ** 2 * (n + 2.0)))
    return float(r), float(var)


def unit_ratio_cov(num_a: np.ndarray, num_c: np.ndarray, denominator: np.ndarray,
                   n_units: int) -> float:
    """Cov(Σa/Σb, Σc/Σb) over the same sampled units (linearisation).

    >>> round(unit_ratio_cov(np.array([1, 0]), np.array([1, 0]), np.array([1, 1]), 10), 4)
    0.2
    """
    a, c, b = (np.asarray(x, dtype=np.float64) for x in (num_a, num_c, denominator))
    ra, va = unit_ratio(a, b, n_units)
    rc, vc = unit_ratio(c, b, n_units)
    rs, vs = unit_ratio(a + c, b, n_units)
    return 0.5 * (vs - va - vc)      # Var(x + y) = Var x + Var y + 2 Cov(x, y), linearised


@dataclass(frozen=True)
class RecallParts:
    """Per system: the pooled (closed-world) recall ν̂, the product θ̂ν̂, the exhaustive-only
    estimate and the hybrid, each with its variance; θ̂ with its variance."""

    theta: float
    theta_var: float
    pooled: np.ndarray
    pooled_var: np.ndarray
    product: np.ndarray
    product_var: np.ndarray
    exhaustive: np.ndarray
    exhaustive_var: np.ndarray
    hybrid: np.ndarray
    hybrid_var: np.ndarray
    hybrid_weight: np.ndarray


def open_world_recall(mu: np.ndarray, mu_cov: np.ndarray, sizes: np.ndarray, pool_size: int,
                      in_pool: np.ndarray, true_items: np.ndarray, found: np.ndarray,
                      n_units: int) -> RecallParts:
    """Open-world recall of every system (module docstring).

    ``mu`` (m, 2): for each system, its precision μ_i and the pool's precision μ_P, both
    estimated from the same draws under the system's own mixture, with ``mu_cov`` (m, 2, 2)
    their covariance (:func:`assay.core.mixture.mixture_mean` with targets p_i and the pool's
    distribution; one mixture per system — mixing a pool estimate made under one mixture with
    a covariance made under another gave recall intervals that covered 0.82);
    ``sizes`` (m,): |X_i|; ``pool_size``: |P|; for each exhaustively annotated unit:
    ``in_pool`` a_u, ``true_items`` b_u and ``found`` (units × m) c_ui; ``n_units`` the units
    of the corpus.

    >>> parts = open_world_recall(np.array([[0.5, 0.5]]), np.array([np.diag([1e-4, 1e-4])]),
    ...                           np.array([10]), 10, np.array([1, 1]), np.array([2, 2]),
    ...                           np.array([[1], [1]]), 100)
    >>> float(parts.theta), float(parts.pooled[0]), float(parts.product[0])
    (0.5, 1.0, 0.5)
    """
    mu = np.asarray(mu, dtype=np.float64).reshape(-1, 2)
    cov = np.asarray(mu_cov, dtype=np.float64).reshape(-1, 2, 2)
    m = mu.shape[0]
    sizes = np.asarray(sizes, dtype=np.float64)
    found = np.asarray(found, dtype=np.float64).reshape(-1, m)
    theta, v_theta = unit_ratio(in_pool, true_items, n_units)
    nu, v_nu = pool_share(mu, cov, sizes, pool_size)
    prod = theta * nu
    v_prod = nu**2 * v_theta + theta**2 * v_nu + v_theta * v_nu
    ex, v_ex, c_ex = np.zeros(m), np.zeros(m), np.zeros(m)
    for i in range(m):
        ex[i], v_ex[i] = unit_ratio(found[:, i], true_items, n_units)
        c_ex[i] = nu[i] * unit_ratio_cov(found[:, i], in_pool, true_items, n_units)
    den = v_ex + v_prod - 2 * c_ex
    with np.errstate(divide="ignore", invalid="ignore"):
        w = np.where(den > 0, np.clip((v_prod - c_ex) / den, 0.0, 1.0), 0.5)
    hyb = w * ex + (1 - w) * prod
    v_hyb = w**2 * v_ex + (1 - w) ** 2 * v_prod + 2 * w * (1 - w) * c_ex
    return RecallParts(theta, v_theta, nu, v_nu, prod, v_prod, ex, v_ex, hyb,
                       np.maximum(v_hyb, 0.0), w)


def pool_share(mu: np.ndarray, mu_cov: np.ndarray, sizes: np.ndarray, pool_size: int
               ) -> tuple[np.ndarray, np.ndarray]:
    """ν̂_i = |X_i| μ̂_i / (|P| μ̂_P), each system's share of the pool's true items (the
    closed-world, pooled recall), with the delta-method variance ν̂² (V_ii/μ_i² + V_PP/μ_P² −
    2V_iP/(μ_i μ_P)); arguments as in :func:`open_world_recall`.

    >>> nu, var = pool_share(np.array([[0.5, 0.5]]), np.array([np.diag([1e-4, 0.0])]),
    ...                      np.array([5]), 10)
    >>> float(nu[0]), round(float(var[0]), 6)
    (0.5, 0.0001)
    """
    mu = np.asarray(mu, dtype=np.float64).reshape(-1, 2)
    cov = np.asarray(mu_cov, dtype=np.float64).reshape(-1, 2, 2)
    sizes = np.asarray(sizes, dtype=np.float64)
    mi, mp = mu[:, 0], mu[:, 1]
    with np.errstate(divide="ignore", invalid="ignore"):
        nu = sizes * mi / (pool_size * mp)
        rel = cov[:, 0, 0] / mi**2 + cov[:, 1, 1] / mp**2 - 2 * cov[:, 0, 1] / (mi * mp)
    return nu, nu**2 * np.maximum(rel, 0.0)


def closed_world_parts(mu: np.ndarray, mu_cov: np.ndarray, sizes: np.ndarray,
                       pool_size: int) -> RecallParts:
    """:class:`RecallParts` before any unit is annotated exhaustively: the pooled recall
    (:func:`pool_share`) is known, θ and every open-world recall are undefined (NaN).

    >>> parts = closed_world_parts(np.array([[0.5, 0.5]]), np.zeros((1, 2, 2)), np.array([5]), 10)
    >>> float(parts.pooled[0]), bool(np.isnan(parts.product[0]))
    (0.5, True)
    """
    nu, v_nu = pool_share(mu, mu_cov, sizes, pool_size)
    nan = np.full(nu.shape, np.nan)
    return RecallParts(math.nan, math.nan, nu, v_nu, nan, nan, nan, nan, nan, nan, nan)


def joint_estimates(mu: np.ndarray, mu_cov: np.ndarray, n_success: np.ndarray,
                    n_fail: np.ndarray, parts: RecallParts, confidence: float = 0.95
                    ) -> dict[str, list[Estimate]]:
    """Per system: ``precision`` (mixture importance sampling), ``recall`` (the product θ̂ν̂,
    interval on the log scale: a product of ratios is right-skewed), ``f1`` (delta method over
    (μ_i, μ_P, θ) with their covariance), and beside them ``pooled_recall`` (closed-world ν̂,
    biased: shown so the bias is visible), ``exhaustive_recall`` and ``hybrid_recall``.

    ``n_success[i]``, ``n_fail[i]``: distinct labelled items of system i that are true / false.
    The precision interval is the delta (Wald) interval of the mixture estimate: the core's
    small-count fallback (Clopper–Pearson at min(n_eff, n)) was tried and covered only 0.88–0.89
    for systems of precision 0.8–0.9 with 40 own draws (n_eff is inflated where the importance
    weights of the drawn true items happen to be even), against 0.93–0.97 for the delta
    interval (tests/core/test_open_world.py). With very few labelled false items a delta
    interval can still be too narrow; the counts are kept in ``extra`` so a caller can see it.

    >>> mu, cov = np.array([[0.5, 0.5]]), np.array([np.diag([1e-3, 1e-3])])
    >>> parts = open_world_recall(mu, cov, np.array([10]), 10, np.array([1, 1]),
    ...                           np.array([2, 2]), np.array([[1], [1]]), 100)
    >>> est = joint_estimates(mu, cov, np.array([20]), np.array([20]), parts)
    >>> sorted(est), round(est["f1"][0].estimate, 3)
    (['exhaustive_recall', 'f1', 'hybrid_recall', 'pooled_recall', 'precision', 'recall'], 0.5)
    """
    mu = np.asarray(mu, dtype=np.float64).reshape(-1, 2)
    cov = np.asarray(mu_cov, dtype=np.float64).reshape(-1, 2, 2)
    m = mu.shape[0]
    out: dict[str, list[Estimate]] = {k: [] for k in ("precision", "recall", "f1",
                                                       "pooled_recall", "exhaustive_recall",
                                                       "hybrid_recall")}
    for i in range(m):
        p, vp, mp = float(mu[i, 0]), float(cov[i, 0, 0]), float(mu[i, 1])
        k, n_i = int(n_success[i]), int(n_success[i] + n_fail[i])
        lo, hi, method, n_eff = ratio_interval(min(max(p, 0.0), 1.0), vp, n_i, confidence,
                                               "delta", n_i - k, k)
        out["precision"].append(Estimate("precision", 1.0, p, lo, hi, math.sqrt(vp),
                                         confidence, method, n_eff, "mixture importance "
                                         "sampling over every system's labelled draws",
                                         {"n_success": k, "n_fail": n_i - k}))
        r, vr = float(parts.product[i]), float(parts.product_var[i])
        out["recall"].append(_bounded("recall", 0.0, r, vr, confidence, "log",
                                      "open-world: recall of the pool (exhaustively annotated "
                                      "units) times the system's share of the pool's true items"))
        # F1 = 2PR/(P + R), R = θ s μ_i/(|P| μ_P): gradient over (μ_i, μ_P, θ)
        if p + r > 0 and p > 0 and mp > 0 and parts.theta > 0:
            d_p, d_r = 2 * r * r / (p + r) ** 2, 2 * p * p / (p + r) ** 2
            grad = np.array([d_p + d_r * r / p, -d_r * r / mp, d_r * r / parts.theta])
            sub = np.zeros((3, 3))
            sub[:2, :2] = cov[i]
            sub[2, 2] = parts.theta_var
            f, vf = 2 * p * r / (p + r), float(grad @ sub @ grad)
        else:
            f, vf = 0.0, math.nan
        out["f1"].append(_bounded("f1", 0.5, f, vf, confidence, "wald", "open-world F1"))
        for key, val, var, note in (
                ("pooled_recall", parts.pooled, parts.pooled_var,
                 "closed-world: recall against the pool's true items only (biased upward)"),
                ("exhaustive_recall", parts.exhaustive, parts.exhaustive_var,
                 "from the exhaustively annotated units alone"),
                ("hybrid_recall", parts.hybrid, parts.hybrid_var,
                 "variance-weighted combination of the exhaustive and product estimates; its "
                 "weight is estimated, so its interval is somewhat optimistic")):
            out[key].append(_bounded(key, 0.0, float(val[i]), float(var[i]), confidence,
                                     "wald", note))
    return out


def _bounded(measure: str, alpha: float, est: float, var: float, confidence: float,
             method: str, note: str) -> Estimate:
    if not math.isfinite(est) or not math.isfinite(var):
        return Estimate(measure, alpha, None, None, None, None, confidence, "undefined",
                        note=f"undefined: {note}")
    lo, hi, se = normal_interval(est, var, confidence, (0.0, 1.0), method)
    return Estimate(measure, alpha, est, lo, hi, se, confidence, method, note=note)


__all__ = ["RecallParts", "closed_world_parts", "joint_estimates", "open_world_recall",
           "pool_share", "unit_ratio", "unit_ratio_cov"]

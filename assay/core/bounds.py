"""Assumption-free intervals: what the labels allow, exactly, whatever the scores or a model.

Stratified samples without replacement. In stratum h of N_h items, n_h labelled at random, let
x_h be the labelled items with a property (a true positive, y·ŷ = 1; a false negative,
y(1 − ŷ) = 1) and K_h the stratum's unknown count of them. X_h is hypergeometric(N_h, K_h, n_h),
so the exact one-sided bounds at error a (the finite-population Clopper–Pearson bounds;
Buonaccorsi 1987; Wang 2015, "Exact confidence intervals for the hypergeometric parameter")

    K_h⁺ = max{K : P(X ≤ x_h | N_h, K, n_h) > a},   K_h⁻ = min{K : P(X ≥ x_h | N_h, K, n_h) > a}

hold K_h with probability ≥ 1 − a each. A stratum labelled in full has K_h = x_h; one never
sampled K_h ∈ [0, N_h]. A measure F_α = TP / (α·PP + (1 − α)(TP + FN)) (PP, the system's
predicted positives, is known) increases with TP and decreases with FN, so

    F_α ∈ [F(TP⁻, FN⁺), F(TP⁺, FN⁻)],   TP^± = Σ_h TP_h^±,  FN^± = Σ_h FN_h^±,

and with the error (1 − c)/2 of each side split evenly over its k non-trivial bounds
(Bonferroni: a = (1 − c)/(2k)), each side fails with probability ≤ (1 − c)/2 — coverage ≥ c
with no assumption on the score, the model or the rarity of positives. It errs on the wide
side (Bonferroni, exact bounds, worst-case pairing). Cut to what the labels make certain
(TP ≥ the true positives seen, TP ≤ PP minus the labelled false positives, likewise FN). With
an adaptive allocation (``auto``: n_h depends on earlier labels) the bounds are conditional on
the allocation reached, which the simulations check. Items the annotator skipped stay in N_h
and leave n_h: like every estimate here, the bound takes skips to be unrelated to the label.

Draws with replacement (importance designs) give no such bound from the draws alone: their
assumption-free interval is what the labels make certain (every unlabelled item could be
either), which is wide by nature.

>>> import numpy as np
>>> hi = hypergeometric_upper(np.array([1000]), np.array([100]), np.array([0]), 0.025)
>>> int(hi[0])
34
>>> int(hypergeometric_lower(np.array([1000]), np.array([100]), np.array([5]), 0.025)[0])
18
"""
from __future__ import annotations

import numpy as np
from scipy import stats

_EPS = 1e-12


def _bisect(lo: np.ndarray, hi: np.ndarray, ok) -> np.ndarray:
    """Largest K in [lo, hi] with ok(K) true, given ok(lo) true and ok monotone decreasing."""
    lo, hi = lo.astype(np.int64).copy(), hi.astype(np.int64).copy()
    top = ok(hi)
    lo = np.where(top, hi, lo)
    while True:
        open_ = hi - lo > 1
        if not open_.any():
            return lo
        mid = (lo + hi) // 2
        good = ok(mid)
        lo = np.where(open_ & good, mid, lo)
        hi = np.where(open_ & ~good, mid, hi)


def hypergeometric_upper(size: np.ndarray, n: np.ndarray, x: np.ndarray,
                         a: float) -> np.ndarray:
    """K⁺ = max{K : P(X ≤ x | N, K, n) > a}, X ~ hypergeometric (module docstring); arrays
    broadcast. n = N gives x; n = 0 gives N.

    >>> int(hypergeometric_upper(np.array([50]), np.array([50]), np.array([3]), 0.025)[0])
    3
    """
    N, n, x = np.broadcast_arrays(np.asarray(size, np.int64), np.asarray(n, np.int64),
                                  np.asarray(x, np.int64))
    top = N - n + x

    def ok(k: np.ndarray) -> np.ndarray:
        return stats.hypergeom.cdf(x, N, k, n) > a + _EPS

    return _bisect(x, top, ok)


def hypergeometric_lower(size: np.ndarray, n: np.ndarray, x: np.ndarray,
                         a: float) -> np.ndarray:
    """K⁻ = min{K : P(X ≥ x | N, K, n) > a} (module docstring); 0 when x = 0.

    >>> int(hypergeometric_lower(np.array([50]), np.array([50]), np.array([3]), 0.025)[0])
    3
    """
    N, n, x = np.broadcast_arrays(np.asarray(size, np.int64), np.asarray(n, np.int64),
                                  np.asarray(x, np.int64))
    top = N - n + x
    # smallest K with P(X ≥ x) > a  ==  1 + largest K with P(X ≥ x) ≤ a (decreasing in −K)

    def bad(k: np.ndarray) -> np.ndarray:       # true for small K, monotone decreasing
        return stats.hypergeom.sf(x - 1, N, k, n) <= a + _EPS

    first_bad = bad(x)
    below = _bisect(x, top, bad)
    return np.where(x <= 0, 0, np.where(first_bad, below + 1, x))


def count_bounds_each(size: np.ndarray, n: np.ndarray, x_lo: np.ndarray, x_hi: np.ndarray,
                      a: float) -> tuple[np.ndarray, np.ndarray]:
    """Elementwise exact bounds (K⁻, K⁺) on a count among ``size`` items of which ``n`` were
    sampled at random and ``x_lo``…``x_hi`` hold it: all sampled gives x; none, [0, size];
    in part, the hypergeometric bounds at error ``a`` (module docstring; K⁻ from x_lo, K⁺ from
    x_hi, each monotone in x). Integer arrays of one shape.

    >>> lo, hi = count_bounds_each(np.array([10, 1000, 50]), np.array([10, 100, 0]),
    ...                            np.array([4, 0, 0]), np.array([4, 0, 0]), 0.025)
    >>> lo.tolist(), hi.tolist()
    ([4, 0, 0], [4, 34, 50])
    """
    full = n >= size
    part = (n > 0) & ~full
    lo = np.where(full, x_lo, 0)
    hi = np.where(full, x_hi, size - n + x_hi)
    if part.any():
        lo[part] = hypergeometric_lower(size[part], n[part], x_lo[part], a)
        hi[part] = hypergeometric_upper(size[part], n[part], x_hi[part], a)
    return lo, hi


def measure_bounds(tp: tuple[np.ndarray, np.ndarray], fn: tuple[np.ndarray, np.ndarray],
                   pp: np.ndarray, alpha: float) -> tuple[np.ndarray, np.ndarray]:
    """[F(TP⁻, FN⁺), F(TP⁺, FN⁻)] for F_α = TP/(α·PP + (1 − α)(TP + FN)), per system; 0/0 is
    taken as 0 below and 1 above (nothing is known).

    >>> lo, hi = measure_bounds((np.array([5.]), np.array([8.])), (np.array([1.]),
    ...                         np.array([4.])), np.array([10.]), 0.0)
    >>> round(float(lo[0]), 3), round(float(hi[0]), 3)
    (0.556, 0.889)
    """
    def f(t: np.ndarray, n: np.ndarray, empty: float) -> np.ndarray:
        den = alpha * pp + (1.0 - alpha) * (t + n)
        return np.divide(t, den, out=np.full(np.shape(t), empty, dtype=float), where=den > 0)
    return np.clip(f(tp[0], fn[1], 0.0), 0, 1), np.clip(f(tp[1], fn[0], 1.0), 0, 1)


def stratified_bounds(sizes: np.ndarray, n_h: np.ndarray, x_h: np.ndarray,
                      error: float) -> tuple[np.ndarray, np.ndarray, int]:
    """Per-stratum exact bounds on counts, summed: (Σ K_h⁻, Σ K_h⁺, k) for ``x_h`` of shape
    (H, m) (one column per system), each bound at error ``error``/k, k the strata sampled in
    part (the Bonferroni split of one side's error over its non-trivial bounds).

    >>> lo, hi, k = stratified_bounds(np.array([10, 1000]), np.array([10, 100]),
    ...                               np.array([[4], [0]]), 0.025)
    >>> int(lo[0]), int(hi[0]), k
    (4, 38, 1)
    """
    sizes = np.asarray(sizes, np.int64)
    n_h = np.asarray(n_h, np.int64)
    x = np.asarray(x_h, np.int64)
    k = int(((n_h > 0) & (n_h < sizes)).sum())
    N, n = sizes[:, None] + 0 * x, n_h[:, None] + 0 * x
    lo, hi = count_bounds_each(N, n, x, x, error / max(k, 1))
    return lo.sum(axis=0), hi.sum(axis=0), k


def assumption_free(labels: np.ndarray, predictions: np.ndarray, pool_size: int,
                    predicted: np.ndarray, alpha: float, confidence: float,
                    stratum: np.ndarray | None = None, sizes: np.ndarray | None = None
                    ) -> tuple[np.ndarray, np.ndarray, str]:
    """The assumption-free interval of F_α for every system (module docstring) from the
    *distinct* labelled items: ``labels`` (n,), ``predictions`` (n, m), the pool's size and
    each system's ``predicted`` positives PP (m,). With ``stratum``/``sizes`` (a stratified
    sample without replacement) the exact stratified bounds (kind ``exact``); without, what
    the labels make certain (kind ``certain``). Returns (low, high, kind).

    >>> lab = np.array([1, 1, 0, 0, 1]); pred = np.array([[1], [1], [1], [0], [0]])
    >>> lo, hi, kind = assumption_free(lab, pred, 10, np.array([4]), 1.0, 0.95)
    >>> float(lo[0]), float(hi[0]), kind
    (0.5, 0.75, 'certain')
    """
    return assumption_free_many(labels, predictions, pool_size, predicted, {"f": alpha},
                                confidence, stratum, sizes)["f"]


def certain_counts(labels: np.ndarray, predictions: np.ndarray, pool_size: int,
                   predicted: np.ndarray) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """What the labels make certain, per system: TP ∈ [TP_seen, PP − FP_seen] and
    FN ∈ [FN_seen, N − PP − TN_seen] (the distinct labelled items' ``labels``, their
    (n × m) ``predictions``, the pool's size N and each system's predicted positives PP).

    >>> certain_counts(np.array([1, 0]), np.array([[1], [0]]), 10, np.array([3]))
    ([array([1]), array([3])], [array([0]), array([6])])
    """
    y = np.asarray(labels, dtype=np.int64)[:, None]
    yh = np.asarray(predictions, dtype=np.int64)
    if yh.ndim == 1:
        yh = yh[:, None]
    pp = np.asarray(predicted, dtype=np.int64)
    fp_seen, tn_seen = ((1 - y) * yh).sum(axis=0), ((1 - y) * (1 - yh)).sum(axis=0)
    return ([(y * yh).sum(axis=0), pp - fp_seen],
            [(y * (1 - yh)).sum(axis=0), pool_size - pp - tn_seen])


def certain_bounds(labels: np.ndarray, predictions: np.ndarray, pool_size: int,
                   predicted: np.ndarray, alphas: dict[str, float]
                   ) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """The range of each measure that the labels make certain (:func:`certain_counts` through
    :func:`measure_bounds`): the truth lies in it whatever the design, so an estimate or
    interval may be cut to it; a single point where every item it counts is labelled.

    >>> b = certain_bounds(np.array([1, 0]), np.array([[1], [0]]), 2, np.array([1]),
    ...                    {"recall": 0.0})
    >>> float(b["recall"][0][0]), float(b["recall"][1][0])
    (1.0, 1.0)
    """
    tp, fn = certain_counts(labels, predictions, pool_size, predicted)
    pp = np.asarray(predicted, dtype=float)
    return {name: measure_bounds((tp[0].astype(float), tp[1].astype(float)),
                                 (fn[0].astype(float), fn[1].astype(float)), pp, a)
            for name, a in alphas.items()}


def assumption_free_many(labels: np.ndarray, predictions: np.ndarray, pool_size: int,
                         predicted: np.ndarray, alphas: dict[str, float], confidence: float,
                         stratum: np.ndarray | None = None, sizes: np.ndarray | None = None
                         ) -> dict[str, tuple[np.ndarray, np.ndarray, str]]:
    """:func:`assumption_free` for several measures at once (name → α): the count bounds
    depend on α only through the Bonferroni share (precision, α = 1, bounds TP alone), so
    they are computed once per share.

    >>> lab = np.array([1, 1, 0, 0, 1]); pred = np.array([[1], [1], [1], [0], [0]])
    >>> out = assumption_free_many(lab, pred, 10, np.array([4]), {"p": 1.0, "r": 0.0}, 0.95)
    >>> [(round(float(out[k][0][0]), 3), round(float(out[k][1][0]), 3)) for k in ("p", "r")]
    [(0.5, 0.75), (0.286, 0.75)]
    """
    y = np.asarray(labels, dtype=np.int64)[:, None]
    yh = np.asarray(predictions, dtype=np.int64)
    if yh.ndim == 1:
        yh = yh[:, None]
    pp = np.asarray(predicted, dtype=np.int64)
    tp_i, fn_i = y * yh, y * (1 - yh)
    certain_tp, certain_fn = certain_counts(labels, yh, pool_size, pp)
    strat = stratum is not None and sizes is not None
    kind = "exact" if strat else "certain"
    side = (1.0 - confidence) / 2.0                 # each side's error ...
    counts: dict[float, tuple[list, list]] = {}

    def bounds_at(share: float, with_fn: bool) -> tuple[list, list]:
        if share not in counts:
            tp, fn = list(certain_tp), list(certain_fn)
            if strat:
                k = len(sizes)   # type: ignore[arg-type]
                st = np.asarray(stratum, dtype=np.int64)
                n_h = np.bincount(st, minlength=k)

                def per_stratum(v: np.ndarray) -> np.ndarray:
                    return np.stack([np.bincount(st, weights=v[:, j], minlength=k)
                                     for j in range(v.shape[1])], axis=1).round().astype(
                                         np.int64)
                t_lo, t_hi, _ = stratified_bounds(sizes, n_h, per_stratum(tp_i), share)
                tp = [np.maximum(tp[0], t_lo), np.minimum(tp[1], t_hi)]
                if with_fn:
                    f_lo, f_hi, _ = stratified_bounds(sizes, n_h, per_stratum(fn_i), share)
                    fn = [np.maximum(fn[0], f_lo), np.minimum(fn[1], f_hi)]
            counts[share] = (tp, fn)
        return counts[share]

    out = {}
    for name, alpha in alphas.items():
        # ... over TP and FN (Bonferroni); precision bounds TP alone
        tp, fn = bounds_at(side if alpha >= 1.0 else side / 2.0, alpha < 1.0)
        lo, hi = measure_bounds((tp[0].astype(float), tp[1].astype(float)),
                                (fn[0].astype(float), fn[1].astype(float)), pp.astype(float),
                                alpha)
        out[name] = (lo, hi, kind)
    return out


__all__ = ["assumption_free", "assumption_free_many", "certain_bounds", "certain_counts",
           "count_bounds_each",
           "hypergeometric_lower", "hypergeometric_upper", "measure_bounds", "stratified_bounds"]

"""A check of the draws against a total known exactly: each system's count of predicted
positives (pure numpy/scipy, no I/O).

A system's predictions are known for every item of the pool, so its number of predicted
positives N⁺ is known exactly, while the design-based estimators of precision and F_α (α > 0)
divide by its estimate from the draws, X̂⁺ = Σ_t w_t ŷ_t (:mod:`assay.core.totals`), with a
variance estimate V̂. Where a design's strata (or selection probabilities) follow a score that
the system's predictions do not follow, its predicted positives may sit in strata labelled so
lightly that none or almost none of them is drawn: X̂⁺ then misses them, the ratio forgets
them, and its interval stands on the predicted positives that were drawn (on the ``off_score``
world, 64 of 214 predicted positives, all false positives, scattered over the 5th–20th
percentile of the ranking: stratified precision covered 0.67 at 500 labels, OASIS 0.15–0.80 at
500–2,000, ``bench/out/off_score_s15.md``). Under the design, X̂⁺ − N⁺ has mean 0 and variance
V̂ (Horvitz–Thompson / Hansen–Hurwitz), so

    z = (|X̂⁺ − N⁺| − ½) / √V̂

(½: a count, known to the unit) is large only where the draws misrepresent the predicted
positives — the calibration idea of Deville & Särndal (1992): a design-based estimate should
reproduce the auxiliary totals the population gives. :func:`predicted_positives_check` returns
z for every system; where it exceeds the normal quantile of ``LEVEL`` (two-sided), the caller
(:func:`assay.estimation.estimate_systems`) widens the interval of every F_α (recall's upper
bound too: missing predicted positives that are matches raise it) for the predicted positives
the draws misrepresent, D = N⁺ − X̂⁺ taken at its bound
|D| + z_{1−a/2}·√V̂ (capped at N⁺ missing, or X̂⁺ in excess), each of them a match or not
(:func:`unrepresented_bounds`): what they could hold, bounded exactly, joined to the interval
of the part the draws represent. A model-based interval is left alone (its model predicts the
unlabelled predicted positives).

Why not the assumption-free interval itself: on the weak_balanced world the threshold falls
inside one stratum of 4,535 items; a run that labels 64 of its 65 draws predicted positive
estimates V̂ too small and the check fires on an excess of 292 of 49,604 (z = 4.2, 5 runs in
100). Joining the assumption-free interval (half-width 0.31) there cost stratified precision
+0.012 of mean half-width; widening for 292 ± 135 predicted positives costs nothing visible.
Why the bound and not D: OASIS at 1,000 labels on ``off_score``, the point deficit (X̂⁺ noisy
in the well-sampled top) left precision at 0.883 over 60 runs; the bound, 1.0.
"""
from __future__ import annotations

import math

import numpy as np
from scipy.stats import norm

from assay.core.totals import Sample

LEVEL = 0.01    # two-sided level of the check (as the rank model's fit check, measures.FIT_LEVEL)


def predicted_positives_check(sample: Sample, predictions: np.ndarray, known: np.ndarray
                              ) -> np.ndarray:
    """z = (|X̂⁺ − N⁺| − ½)⁺/√V̂ per system (module docstring): ``predictions`` (T,) or (T, m)
    at the draws, ``known`` N⁺ per system. Infinite where V̂ = 0 and the estimate is off by
    more than ½ (every drawn stratum held its predicted positives in full, or none was drawn,
    yet some are missing). X̂⁺ itself: :func:`predicted_positives_total`.

    >>> from assay.core.totals import StratifiedSample
    >>> s = StratifiedSample(stratum=np.array([0, 0, 1, 1]), sizes=np.array([2, 1000]))
    >>> z = predicted_positives_check(s, np.array([[1, 1], [1, 1], [0, 1], [0, 0]]),
    ...                               np.array([2, 502]))
    >>> float(z[0]), round(float(z[1]), 2)   # 2 of 2 exact; 502 against 502 ± 706
    (0.0, 0.0)
    >>> float(predicted_positives_check(s, np.array([1, 1, 0, 0]), np.array([60]))[0])
    inf
    """
    return deviation_z(*predicted_positives_total(sample, predictions), known)


def deviation_z(x: np.ndarray, var: np.ndarray, known: np.ndarray) -> np.ndarray:
    """z = (|x − known| − ½)⁺/√var of :func:`predicted_positives_check`, from the estimate and
    its variance (infinite where var = 0 and the estimate is off by more than ½; 0 where var
    is infinite).

    >>> deviation_z(np.array([150.0, 214.2, 150.0]), np.array([400.0, 0.0, 0.0]),
    ...             np.array([214.0, 214.0, 214.0])).tolist()
    [3.175, 0.0, inf]
    """
    off = np.maximum(np.abs(np.asarray(x, dtype=np.float64) - np.asarray(known, np.float64))
                     - 0.5, 0.0)
    var = np.asarray(var, dtype=np.float64)
    sd = np.sqrt(np.where(np.isfinite(var), var, math.inf))
    return np.divide(off, sd, out=np.where(off > 0, math.inf, 0.0), where=sd > 0)


def predicted_positives_total(sample: Sample, predictions: np.ndarray
                              ) -> tuple[np.ndarray, np.ndarray]:
    """X̂⁺ and V̂ per system: the draws' estimate of the predicted positives' count.

    >>> from assay.core.totals import WithReplacementSample
    >>> x, v = predicted_positives_total(WithReplacementSample(np.full(4, 0.01)),
    ...                                  np.array([1, 0, 0, 0]))
    >>> float(x[0]), float(v[0])      # ŷ/q = (100, 0, 0, 0): mean 25, s²/T = 2,500/4
    (25.0, 625.0)
    """
    yhat = np.asarray(predictions, dtype=np.float64)
    x, var = sample.total(yhat[:, None] if yhat.ndim == 1 else yhat)
    return np.atleast_1d(np.asarray(x, np.float64)), np.atleast_1d(np.asarray(var, np.float64))


def unrepresented_bounds(lo: float, hi: float, x_hat: float, deficit: float, alpha: float
                         ) -> tuple[float, float]:
    """The interval [lo, hi] of F_α = Y/X (X = α·N⁺ + (1 − α)·P) widened for predicted
    positives the draws misrepresent: ``deficit`` D = N⁺ − X̂⁺ of them missing from the draws
    (D > 0) or in excess (D < 0), each a match or not, anything in between. With X̂ = ``x_hat``
    the ratio's estimated denominator, t of the D missing ones matches (0 ≤ t ≤ D) give
    F = (R·X̂ + t)/(X̂ + α·D + (1 − α)·t), lowest at t = 0 and highest at t = D; s of the
    E = −D excess ones matches (0 ≤ s ≤ E) give F = (R·X̂ − s)/(X̂ − α·E − (1 − α)·s),
    lowest at s = E and highest at s = 0. Bounds at R = lo and R = hi, clipped to [0, 1].

    >>> [round(x, 3) for x in unrepresented_bounds(0.78, 0.92, 150.0, 64.0, 1.0)]
    [0.547, 0.944]
    >>> unrepresented_bounds(0.5, 0.6, 100.0, 0.0, 0.5)
    (0.5, 0.6)
    """
    x, d = float(x_hat), float(deficit)
    if x <= 0.0 or d == 0.0:
        return lo, hi
    if d > 0.0:
        low, high = lo * x / (x + alpha * d), (hi * x + d) / (x + d)
    else:
        e = -d
        low = (lo * x - e) / (x - e) if x > e else 0.0
        high = hi * x / (x - alpha * e) if x > alpha * e else 1.0
    return max(0.0, min(lo, low)), min(1.0, max(hi, high))


def contradicted(z: np.ndarray, level: float = LEVEL) -> np.ndarray:
    """Where the check's z exceeds the two-sided normal quantile of ``level``.

    >>> contradicted(np.array([0.0, 2.0, 3.0, np.inf])).tolist()
    [False, False, True, True]
    """
    return np.asarray(z) > float(norm.ppf(1.0 - level / 2.0))


__all__ = ["LEVEL", "contradicted", "deviation_z", "predicted_positives_check",
           "predicted_positives_total", "unrepresented_bounds"]

"""Recall and F_α of a stratified sample when the false negatives it saw are few.

The design-based interval of a stratified ratio (:func:`assay.core.intervals.ratio_interval`)
reads the false negatives' total FN̂ = Σ_h N_h k_h / n_h as a normal quantity, or, below ten
moving failures, through a Clopper–Pearson interval at Kish's effective size. Both are
symmetric about the share of the events seen. When the false negatives of the partially
labelled strata are a handful of events at weights N_h/n_h of 3–30, FN̂ is a weighted Poisson
count, skewed to the right: a run that saw 4 of the 8 events its labels could expect has
FN̂ far below the truth and an interval that does not reach it. Where a stratum's draws saw
none, FN̂ takes none from it, however many its neighbours along the score show.

On the ``non_monotone`` world (a bump of 56 matches at rate 0.015 over ranks 2,000–6,000 of a
score that believes a monotone rate; world seed 11) at 2,000 labels the stratified design's 30
strata put 235, 147, 166 and 196 labels on the four strata below the census of the top and 47
on the fifth (1,478 items, 17 of the bump's matches: 0.54 expected in its draws). Recall's
interval covered 0.897 over 1,000 repetitions; its misses are the runs with 2–5 of the ~8
events in strata 1–4 and none in stratum 5.

Two parts, both for the false negatives only (recall's lower end, the failures a stratum's
draws miss):

* **the seen.** FN = FN₀ + X, FN₀ the false negatives of fully labelled strata (known exactly)
  and X = Σ_t w_t c_t over the draws t of partially labelled strata, w_t = N_h/n_h. With the
  finite-population correction its variance is Σ_t w_t²(1 − f_h) c_t (Cochran 1977, §3.2), so
  X is taken as k* events of weight w* (Kish's effective count, with the correction:
  k* = (Σwc)²/Σw²(1 − f)c, w* = Σw²(1 − f)c/Σwc; Fay & Feuer 1997 match the same two moments
  with a gamma law) and bounded by Garwood's exact Poisson limits in gamma form, Gamma(k*)
  and Gamma(k* + 1)·w*.
* **the unseen next to the seen** (:func:`neighbour_allowance`). A partially labelled stratum
  whose n_c labelled predicted negatives hold no match, whose nearest strata on either side
  (in the score order of the strata) show a rate ρ of matches among theirs, is allowed
  M ~ Poisson(U·π) hidden false negatives, U = N̂_c − n_c its unlabelled predicted
  negatives and π = min(ρ, ½/(n_c + 1)) (the Jeffreys posterior mean of the stratum's own
  0 of n_c caps what its neighbours suggest: many draws that say no overrule them), left out
  where n_c·π < 0.1 (:data:`assay.core.unseen_cells.REACH`: beyond what the draws could
  check; the assumption-free interval covers that). This is a model: the match rate is taken
  to change little from one stratum to the next, the weaker cousin of the score's monotone
  rate that the prior of :mod:`assay.core.unseen_cells` assumes, and the one a bump breaks.

**False positives none of which was seen** (:func:`unseen_false_positives`, session 24).
Where predicted positives were labelled in partially labelled strata and none was false, FP̂
= 0 has no variance, and F_α (and precision) went back to Clopper–Pearson at n*. They are
now one unseen event at the least sampled stratum's weight 1/(−ln(1 − f_h)), what takes it
beyond FP̂ coming out of TP̂. The finite-population reading of the false negatives
(weight w(1 − f)) was tried for them first and undercovers at large f: restaurant's
precision at 500 labels (4 false of 44 predicted positives, f ≈ ½) covered 0.93 over 200
runs, 1.00 before and after with this weight. Where false positives were seen but few, the
interval stays Clopper–Pearson's. Measured (200 runs, stratified, real pools at 500–2,000
labels): dblp_acm at 1,000 precision half-width 0.160 → 0.150, F1 0.185 → 0.182; no
coverage below 0.98 anywhere it applies (bench/out/s24_fp_{before,after}.md).

**Many effective events, few moving, after a model the labels contradict** (session 28).
Where the labels of the partially labelled strata hold few false negatives but at large f
(k* = events/(1 − f) ≥ 10 while fewer than ten move the estimate, so the caller picks
Clopper–Pearson at n*), Clopper–Pearson leaves the neighbours' allowance out: on
``non_monotone`` at 1,000 labels `auto`'s design-based fallback (its rank model contradicted
by the labels) in runs that labelled one match of the bump covered recall in 1 of 9. There the
interval is the union of Clopper–Pearson's and this one (``many=True``; Gamma(k*) is near the
normal law at k* ≥ 10): the union keeps Clopper–Pearson's coverage and reaches what the
allowance allows. Only after a contradicted model: for every stratified sample it widened
amazon_google's recall at 1,000 labels from 2.5 to 3.7 times its RMSE at the same coverage
(0.975); replacing Clopper–Pearson by this interval instead undercovered (``ties`` at 2,000
labels, stratified: recall 1.000 → 0.925, half-width 0.064 → 0.029).

:func:`sparse_false_negative_interval` combines the two with TP̂ and FP̂ (normal, with their
stratified covariance) by simulation (:func:`assay.core.intervals.simulated_f_interval`);
:func:`assay.core.measures.f_measures` takes it (method ``counts``) in place of the
Clopper–Pearson interval at Kish's effective size wherever that one would apply (few moving
failures) and this one does (few false negatives, ten or more effective true and false
positives or none moving). Clopper–Pearson reads the ratio as a binomial proportion of n*
trials, which a handful of weighted events is not: on the ``realistic`` world at 2,000 labels
its recall half-width was 6.1 times the RMSE (0.068 against 0.011). Measured on the bench's
path (``bench/adversarial.py``, 200 repetitions per cell, seeds 1000–1199, 12 pools × 500,
1,000 and 2,000 labels; BENCHMARKS.md, session 22): the ``non_monotone`` world at 2,000 labels
recall coverage 0.915 → 0.975 (1,000 repetitions: 0.897 → 0.961, half-width 0.090 → 0.094),
and where it applies elsewhere coverage stays ≥ 0.965 while the half-widths shrink
(``realistic`` at 2,000 labels 0.068 → 0.035, ``ties`` at 1,000 0.071 → 0.051, restaurant at
1,000 0.126 → 0.101).
"""
from __future__ import annotations

import math

import numpy as np

from assay.core.intervals import MIN_NORMAL_COUNT, simulated_f_interval
from assay.core.totals import StratifiedSample
from assay.core.unseen_cells import REACH, cell_counts

__all__ = ["neighbour_allowance", "sparse_false_negative_interval",
           "sparse_false_positive_interval", "unseen_false_positives"]


def neighbour_allowance(sample: StratifiedSample, labels: np.ndarray,
                        predictions: np.ndarray) -> float:
    """λ = Σ_h U_h·π_h, the false negatives a model of a rate that changes little from stratum
    to stratum allows in partially labelled strata whose draws saw none (module docstring):
    ``labels`` and one system's 0/1 ``predictions`` per draw.

    >>> from assay.core.totals import StratifiedSample
    >>> s = StratifiedSample(stratum=np.repeat([0, 1, 2], [100, 100, 40]),
    ...                      sizes=np.array([100, 1000, 1500]))
    >>> lab = np.r_[np.ones(40), np.zeros(60), np.ones(3), np.zeros(137)]
    >>> pred = np.r_[np.ones(30), np.zeros(210)]
    >>> round(neighbour_allowance(s, lab, pred), 1)   # stratum 2: 0 of 40, next to 3 of 100
    17.8
    """
    n_c, k_c, unseen = cell_counts(sample, (np.asarray(labels) > 0).astype(np.float64),
                                   np.asarray(predictions) <= 0)
    have = np.flatnonzero(n_c > 0)
    rate = np.divide(k_c, n_c, out=np.zeros_like(n_c), where=n_c > 0)
    lam = 0.0
    for h in np.flatnonzero(sample.partial() & (n_c > 0) & (k_c == 0)):
        at = int(np.searchsorted(have, h))          # have[at] == h
        near = [have[i] for i in (at - 1, at + 1) if 0 <= i < have.size]
        rho = max((rate[g] for g in near), default=0.0)
        pi = min(rho, 0.5 / (n_c[h] + 1.0))
        if n_c[h] * pi >= REACH:
            lam += unseen[h] * pi
    return float(lam)


def _draw_parts(sample: StratifiedSample) -> tuple[np.ndarray, np.ndarray, np.ndarray,
                                                   np.ndarray]:
    """Per draw: its weight N_h/n_h, its stratum's unlabelled share 1 − f_h, and whether its
    stratum is labelled in part or in full (a census; not OASIS's repeats)."""
    stratum = np.asarray(sample.stratum)
    return (sample.draw_weights(), sample.unlabelled_share()[stratum],
            sample.partial()[stratum], sample.complete()[stratum])


def sparse_false_positive_interval(sample: StratifiedSample, labels: np.ndarray,
                                   predictions: np.ndarray, confidence: float
                                   ) -> tuple[float, float] | None:
    """Precision's interval where the predicted positives labelled in partially labelled
    strata hold ten or more effective true positives (TP̂ normal) and few false positives
    (:func:`few_false_positives`: none seen, one event's bound at the least sampled stratum's
    weight; fewer than ten effective, their gamma bounds), by the simulation of
    :func:`sparse_false_negative_interval` at α = 1; None elsewhere (no predicted positive
    labelled in part, few true positives, many false positives). Session 29 (a few seen, where
    before only none): the stratified design on restaurant at 1,000 labels, precision
    half-width 0.095 → 0.065 at coverage 0.99 → 0.98, F1 0.110 → 0.089 at 1.00 → 0.98 (200
    runs, RMSE 0.024; BENCHMARKS.md).

    >>> s = StratifiedSample(stratum=np.repeat([0, 1], [10, 50]), sizes=np.array([18, 5000]))
    >>> lab = np.r_[np.ones(10), np.zeros(50)]; pred = np.r_[np.ones(10), np.zeros(50)]
    >>> [round(x, 3) for x in sparse_false_positive_interval(s, lab, pred, 0.95)]
    [0.755, 1.0]
    """
    ell = np.asarray(labels, dtype=np.float64)
    yhat = (np.asarray(predictions) > 0).astype(np.float64)
    w, free, partial, census = _draw_parts(sample)
    tp, fp = ell * yhat, (1.0 - ell) * yhat
    if not np.any(yhat[partial] > 0) or tp.sum() < MIN_NORMAL_COUNT:
        return None
    if not _normal(*_moments(w, free, tp, partial)):
        return None
    few_fp = few_false_positives(w, free, fp, yhat, partial, census)
    if few_fp is None:
        return None                   # many false positives: Clopper–Pearson or the delta rule
    (t_tp, t_fp), (v_tp, _) = sample.total(np.stack([tp, fp], axis=1))
    lo, hi = simulated_f_interval((float(t_tp), float(t_fp)), (float(v_tp), 0.0, 0.0),
                                  (0.0, 0.0, 0.0, 1.0), 1.0, 1.0 - confidence, fp=few_fp)
    return (lo, hi) if math.isfinite(lo) and math.isfinite(hi) else None


def few_false_positives(w: np.ndarray, free: np.ndarray, fp: np.ndarray, yhat: np.ndarray,
                        partial: np.ndarray, census: np.ndarray
                        ) -> tuple[float, float, float] | None:
    """The false positives of the predicted positives labelled in partially labelled strata as
    few events, (FP₀, k*, w*) for :func:`assay.core.intervals.simulated_f_interval`: FP₀ those
    of fully labelled strata; none seen, one unseen event's weight
    (:func:`unseen_false_positives`, k* = 0); fewer than ten effective (k* = s₁²/s₂ < 10,
    w* = s₂/s₁, :func:`_moments`), Garwood's gamma bounds on them as on the false negatives;
    None where they are ten or more (the normal reading holds).

    >>> free = np.array([0.5, 0.5, 0.5, 0.0]); part = free > 0
    >>> few_false_positives(np.array([2.0, 2, 2, 1]), free, np.array([1.0, 0, 0, 1]),
    ...                     np.ones(4), part, ~part)   # one seen at weight 2, half its stratum
    (1.0, 2.0, 1.0)
    """
    s1, s2 = _moments(w, free, fp, partial)
    fixed = float(fp[census].sum())
    if s1 <= 0.0:
        return fixed, 0.0, unseen_false_positives(free, yhat, partial)
    if _normal(s1, s2):
        return None
    return fixed, s1 * s1 / s2, s2 / s1


def unseen_false_positives(free: np.ndarray, yhat: np.ndarray, partial: np.ndarray
                           ) -> float:
    """Where the predicted positives labelled in partially labelled strata hold no false
    positive: the weight w₀ of one unseen event, Garwood's zero-event bound −ln(a/2)·w₀
    (3.69·w₀ at 95%) bounding the false positives among their unlabelled predicted positives.
    A stratum sampled at f_h without replacement misses each of its D false positives with
    probability at most 1 − f_h, all of them with at most (1 − f_h)^D, so D ≤ −ln(a/2)/
    (−ln(1 − f_h)); over several such strata the least sampled bounds the total:
    w₀ = max_h 1/(−ln(1 − f_h)) (≈ 1/f_h − ½ for small f_h; no finite-population "w(1 − f)":
    at f = ½ that gives 3.69 where the truth may hold 5, measured on restaurant: precision
    covered 0.93). Beyond those strata, predicted positives no draw reached are the design's
    assumption, as elsewhere.

    >>> free = np.array([1 - 10 / 18] * 3 + [0.0])          # 10 of 18 labelled
    >>> round(unseen_false_positives(free, np.ones(4), free > 0), 3)
    1.233
    """
    heavy = partial & (yhat > 0)
    return float(np.max(1.0 / -np.log(free[heavy])))


def _moments(w: np.ndarray, free: np.ndarray, c: np.ndarray, partial: np.ndarray
             ) -> tuple[float, float]:
    """Σw·c and Σw²(1 − f)·c over the draws of partially labelled strata: a count's total and
    its variance with the finite-population correction, whence Kish's effective number of
    events k* = s₁²/s₂ and their weight w* = s₂/s₁ (module docstring)."""
    return float((w * c)[partial].sum()), float((w * w * free * c)[partial].sum())


def _normal(s1: float, s2: float) -> bool:
    """Ten effective events or more (k* ≥ :data:`MIN_NORMAL_COUNT`): the normal reading holds."""
    return s1 > 0 and s1 * s1 >= MIN_NORMAL_COUNT * s2


def sparse_false_negative_interval(sample: StratifiedSample, labels: np.ndarray,
                                   predictions: np.ndarray, alpha: float, confidence: float,
                                   many: bool = False) -> tuple[float, float] | None:
    """F_α's (α < 1) interval from the false negatives' few events and the allowance for
    what their strata's neighbours show (module docstring), or None where it does not apply:
    α = 1, no false negative drawn in a partially labelled stratum, ten effective ones or
    more (the normal approximation holds; with ``many`` they are taken too, for the union
    with Clopper–Pearson's of the module docstring), fewer than ten true positives labelled,
    or, where predicted positives were labelled in partially labelled strata, fewer than ten
    effective true positives there (or false positives, α > 0): the simulation takes those
    as normal (else as known exactly).

    >>> from assay.core.totals import StratifiedSample
    >>> s = StratifiedSample(stratum=np.repeat([0, 1, 2], [100, 100, 40]),
    ...                      sizes=np.array([100, 1000, 1500]))
    >>> lab = np.r_[np.ones(40), np.zeros(60), np.ones(3), np.zeros(137)]
    >>> pred = np.r_[np.ones(30), np.zeros(210)]
    >>> [round(x, 3) for x in sparse_false_negative_interval(s, lab, pred, 0.0, 0.95)]
    [0.21, 0.639]
    """
    if alpha >= 1.0:
        return None
    ell = np.asarray(labels, dtype=np.float64)
    yhat = (np.asarray(predictions) > 0).astype(np.float64)
    w, free, partial, census = _draw_parts(sample)
    fn = ell * (1.0 - yhat)
    s1, s2 = _moments(w, free, fn, partial)
    if s1 <= 0.0 or s2 <= 0.0:
        return None
    k_star, w_star = s1 * s1 / s2, s2 / s1
    if k_star >= MIN_NORMAL_COUNT and not many:
        return None
    tp, fp = ell * yhat, (1.0 - ell) * yhat
    if tp.sum() < MIN_NORMAL_COUNT:   # a numerator of few true positives: not this interval
        return None
    few_fp = None
    if np.any(yhat[partial] > 0):     # predicted positives labelled in part: TP̂ normal, …
        if not _normal(*_moments(w, free, tp, partial)):
            return None
        if alpha > 0.0:               # … FP̂ normal, or few (few_false_positives)
            few_fp = few_false_positives(w, free, fp, yhat, partial, census)
    (t_tp, t_fp, _), (v_tp, v_fp, v_sum) = sample.total(np.stack([tp, fp, tp + fp], axis=1))
    cov = ((float(v_tp), 0.5 * float(v_sum - v_tp - v_fp), float(v_fp)) if few_fp is None
           else (float(v_tp), 0.0, 0.0))
    fixed = float(fn[census].sum())
    lam = neighbour_allowance(sample, ell, yhat)
    a = 1.0 - confidence
    lo, hi = simulated_f_interval((float(t_tp), float(t_fp)), cov,
                                  (fixed, k_star, w_star, 1.0), alpha, a, hidden=lam,
                                  fp=few_fp)
    return (lo, hi) if math.isfinite(lo) and math.isfinite(hi) else None

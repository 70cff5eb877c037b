"""Precision, recall and F_α of one or many systems from one set of weighted draws.

Pure numpy/scipy, no I/O. For item i let ŷ_i be a system's prediction and ℓ_i the true label;
the population measure is (seed 002, eq. 1)

    F_α = Σ ℓ_i ŷ_i / Σ [α ŷ_i + (1 − α) ℓ_i] = Y / X,

so α = 1 is precision, α = 0 recall and α = ½ the balanced F1. The ratio R̂ = Ŷ / X̂ (seed 002,
eq. 3) of totals estimated from the draws (:mod:`assay.core.totals`) gets its variance by
linearisation (the delta method, Särndal, Swensson & Wretman 1992, §5.6): the design variance of
the estimated total of z_i = (y_i − R̂ x_i) / X̂. Its interval follows
:func:`assay.core.intervals.ratio_interval`; when X̂ = 0 (e.g. recall before any positive has
been labelled) no estimate and no interval is given rather than a false one.

Predictions may be an (n draws × m systems) matrix: :func:`f_measures` estimates every system
from the same draws in one call, as m single-system calls would (the totals are per column).

>>> sorted(MEASURES.items(), key=lambda kv: kv[1])
[('recall', 0.0), ('f1', 0.5), ('precision', 1.0)]
"""
from __future__ import annotations

import math
from dataclasses import replace
from typing import Any, Protocol

import numpy as np

from assay.core.intervals import component_ratio_interval, counts_overstated, ratio_interval
from assay.core.totals import Sample, StratifiedSample, unseen_positive_bound
from assay.core.types import Estimate
from assay.errors import EstimationError

MEASURES: dict[str, float] = {"precision": 1.0, "recall": 0.0, "f1": 0.5}
WR_SCALE = "logit"  # the delta interval of draws with replacement: see f_measures
FIT_LEVEL = 0.01     # below this p-value the model-based estimate gives way to the design-based
LOCAL_LEVEL = 0.05   # … and below this one for an excess of matches in one stratum (the labels win)
MODEL_ASSUMES = ("the rank model: where labels are few, unlabelled items follow the match rate "
                 "fitted to the labels along the score ranking (flat top, decay below; past "
                 "the fully labelled top, a decay at least as fast as 1/rank); matches the "
                 "score cannot see, or a rate that rises again where few items are labelled, "
                 "are outside it")
WEIGHTED_ASSUMES = ("the normal approximation of the importance-weighted estimator: items drawn "
                    "rarely or never hold few matches for their selection probability")
PREDICTIVE_NOTE = ("model-based: unlabelled items predicted by a calibration of the match rate "
                   "on the score rank fitted to the labels (assumes the rate does not rise "
                   "down the ranking); the design-based estimate and interval are given beside it")


class PredictiveModel(Protocol):
    """A model-based estimator of F_α for the same draws (e.g. :mod:`assay.core.rank_model`)."""

    def predictive(self, alpha: float, confidence: float) -> Any:
        """A result with ``estimate``, ``ci_low``, ``ci_high`` and a ``fit`` check, or None."""


def measure_name(alpha: float) -> str:
    """``precision``, ``recall``, ``f1``, or ``f_alpha=…``.

    >>> measure_name(0.25)
    'f_alpha=0.25'
    """
    for k, v in MEASURES.items():
        if v == alpha:
            return k
    return f"f_alpha={alpha:g}"


def _check(alpha: float, confidence: float) -> None:
    if not 0.0 <= alpha <= 1.0:
        raise EstimationError(f"alpha must be in [0, 1], got {alpha}")
    if not 0.0 < confidence < 1.0:
        raise EstimationError(f"confidence must be in (0, 1), got {confidence}")


def f_measures(sample: Sample, labels: np.ndarray, predictions: np.ndarray, alpha: float,
               confidence: float = 0.95, measure: str | None = None, interval: str = "auto",
               n_domain: np.ndarray | None = None, n_success: np.ndarray | None = None,
               why_design: str = "", domain_size: np.ndarray | None = None) -> list[Estimate]:
    """Design-based F_α (module docstring) of every system: ``predictions`` is (n,) or (n, m),
    aligned with ``labels`` and the sample's draws. ``n_domain[j]``: distinct labelled items
    with x_i > 0 for system j, ``n_success[j]`` of those with y_i = 1 (default: counts over
    draws); ``why_design``: a note saying why a model-based estimate gave way to this one;
    ``domain_size[j]``: system j's predicted positives in the pool, known exactly: precision's
    interval is then cut to what the labels make certain, [TP_seen, TP_seen + unlabelled
    PP] / PP (a set that always holds the truth, so the cut keeps the coverage), and labelling
    every predicted positive is a census. A census (every stratum labelled in full) is exact
    for every measure. Draws with replacement at unequal probabilities (importance, OASIS)
    take their delta interval on the logit scale (:data:`WR_SCALE`; Korn & Graubard 1999,
    §5.2): their Hansen–Hurwitz ratio is skewed by the rarely drawn, heavily weighted items
    (a run that draws fewer of them than expected overestimates recall and underestimates
    its variance). On the importance design's 30 cells of bench/adversarial.py (10 worlds ×
    500/1,000/2,000 labels, 200 repetitions) coverage below 0.92 fell from 8 measure-cells to
    3 (realistic at 1,000 labels F1 0.915 → 0.945, ties at 500 0.895 → 0.925) at the same
    mean half-width (±0.003). Where the delta rule does not hold on draws with replacement
    without strata (importance, passive with replacement) and the Clopper–Pearson interval at
    Kish's effective size reads more successes or failures than were drawn
    (:func:`assay.core.intervals.counts_overstated`: a rare kind made of a few heavy draws),
    the fallback is :func:`assay.core.intervals.component_ratio_interval` (method
    ``components``: exact Poisson bounds on the draws of each count; same 30 cells:
    amazon_google at 500 labels recall 0.88 → 0.99, miscalibrated at 2,000 F1 0.91 → 0.945).
    OASIS keeps the Clopper–Pearson fallback: its count rule discounts the
    failures of fully labelled strata (:func:`_moving_counts`), which raw draw counts would
    not. Returns one :class:`Estimate` per system.

    >>> import numpy as np
    >>> from assay.core.totals import StratifiedSample
    >>> s = StratifiedSample(stratum=np.zeros(4, dtype=np.int64), sizes=np.array([8]))
    >>> [e.estimate for e in f_measures(s, np.array([1, 1, 0, 0]),
    ...                                 np.array([[1, 1], [0, 1], [1, 1], [0, 0]]), alpha=0.0)]
    [0.5, 1.0]
    """
    _check(alpha, confidence)
    name = measure or measure_name(alpha)
    ell = np.asarray(labels, dtype=np.float64)
    yhat = np.asarray(predictions, dtype=np.float64)
    if yhat.ndim == 1:
        yhat = yhat[:, None]
    if yhat.shape[0] != ell.shape[0]:
        raise EstimationError(f"{yhat.shape[0]} predictions for {ell.shape[0]} labels")
    m = yhat.shape[1]
    y = ell[:, None] * yhat
    x = alpha * yhat + (1.0 - alpha) * ell[:, None]
    y_tot, _ = sample.total(y)
    x_tot, _ = sample.total(x)
    dom = np.count_nonzero(x > 0, axis=0) if n_domain is None else np.broadcast_to(n_domain, m)
    suc = np.count_nonzero(y > 0, axis=0) if n_success is None else np.broadcast_to(n_success, m)
    ok = x_tot > 0.0
    r = np.where(ok, np.clip(np.divide(y_tot, x_tot, out=np.zeros(m), where=ok), 0.0, 1.0), 0.0)
    z_lin = np.divide(y - r * x, x_tot, out=np.zeros_like(y), where=ok)
    _, var = sample.total(z_lin)
    unseen: dict[str, float] = {}
    fraction = np.zeros(m)
    first = getattr(sample, "census_draws", lambda: None)()
    if first is not None:     # draws with replacement that labelled every item of every stratum
        ys, xs = y[first].sum(axis=0), x[first].sum(axis=0)
        r = np.where(ok, np.divide(ys, xs, out=np.zeros(m), where=xs > 0), 0.0)
        var[:] = 0.0
        fraction[:] = 1.0
    elif isinstance(sample, StratifiedSample):
        if np.array_equal(sample.counts(), sample.sizes):
            fraction[:] = 1.0                        # a census: every item labelled
        elif domain_size is not None and alpha == 1.0:
            size = np.broadcast_to(np.asarray(domain_size, dtype=np.float64), (m,))
            fraction = np.divide(dom, size, out=np.zeros(m), where=size > 0)
    known = (None if domain_size is None or alpha != 1.0 or n_domain is None or n_success is None
             else np.broadcast_to(np.asarray(domain_size, dtype=np.float64), (m,)))
    if isinstance(sample, StratifiedSample) and alpha < 1.0:
        unseen = unseen_positive_bound(sample, ell, confidence)
    cap = _failure_region_size(sample, yhat, x, alpha)
    # F_α, 0 < α < 1: the normal approximation needs false negatives too, not only failures
    # of either kind (false positives are drawn often, false negatives may never be)
    n_fn = None if cap is None else np.count_nonzero((ell[:, None] > 0) & (yhat == 0), axis=0)
    moving = _moving_counts(sample, ell, yhat, alpha)
    assumes = _assumes(sample, unseen)
    out = []
    for j in range(m):
        if not ok[j]:
            out.append(_undefined(name, alpha, confidence))
            continue
        rule = "auto" if interval == "design" else interval
        k = int(suc[j])
        if known is not None and known[j] > 0 and int(dom[j]) >= known[j]:
            r[j] = k / known[j]     # every predicted positive labelled: precision is exact
            var[j] = 0.0            # (the weighted ratio would differ from k/PP by weights
            fraction[j] = 1.0       # or rounding)
        n_exact, n_fail = float(dom[j]), int(dom[j]) - k
        if cap is not None:    # draws with replacement: see _failure_region_size
            none_seen = (int(n_fn[j]) if alpha < 1.0 else n_fail) == 0
            n_exact = min(n_exact, float(cap[j])) if none_seen else n_exact
            n_fail = min(n_fail, int(n_fn[j])) if 0.0 < alpha < 1.0 else n_fail
        k_rule = k
        if moving is not None:  # strata: only failures where the sample is partial move r̂
            n_fail, k_rule = min(n_fail, moving[0][j]), min(k, moving[1][j])
        lo, hi, method, n_eff = ratio_interval(float(r[j]), float(var[j]), n_exact,
                                               confidence, rule, n_fail, k_rule,
                                               float(fraction[j]), WR_SCALE if cap is not None
                                               else "wald")
        if (method == "exact" and cap is not None and moving is None
                and counts_overstated(1.0 / np.asarray(sample.q, dtype=np.float64), ell,
                                      yhat[:, j], alpha, n_eff)):
            # importance draws: exact Poisson bounds on the few draws of each count
            lo, hi = component_ratio_interval(1.0 / np.asarray(sample.q, dtype=np.float64),
                                              ell, yhat[:, j], alpha, confidence)
            lo, hi, method = min(lo, float(r[j])), max(hi, float(r[j])), "components"
        if known is not None and known[j] > 0:
            # precision: the truth lies in [TP_seen, TP_seen + unlabelled PP] / PP for certain,
            # so cutting the interval to it keeps its coverage and drops what cannot be
            lo = min(max(lo, k / known[j]), float(r[j]))
            hi = max(min(hi, (k + known[j] - int(dom[j])) / known[j]), float(r[j]))
        se = math.sqrt(var[j]) if math.isfinite(var[j]) else None
        exact_note = ("census: every item the measure counts is labelled, so the estimate is "
                      "exact" if method == "census"
                      else f"exact interval (Clopper-Pearson at effective size {n_eff:.0f}): too "
                      f"few successes or failures for the normal approximation ({k} of "
                      f"{int(dom[j])} labelled items in the numerator), so it errs on the wide "
                      "side" if method == "exact"
                      else f"exact Poisson bounds on the draws of each count (true positives, "
                      f"false positives, false negatives): a kind drawn too few times, at "
                      f"heavy weights, for the normal approximation ({k} of {int(dom[j])} "
                      "labelled items in the numerator), so it errs on the wide side"
                      if method == "components" else "")
        out.append(Estimate(name, alpha, float(r[j]), lo, hi, se, confidence, method, n_eff,
                            _join(exact_note, why_design, _unseen_note(unseen)), dict(unseen),
                            assumes=None if method == "census" else assumes))
    return out


def _moving_counts(sample: Sample, ell: np.ndarray, yhat: np.ndarray, alpha: float
                   ) -> tuple[np.ndarray, np.ndarray] | None:
    """For stratified draws, and for draws with replacement made uniformly within strata
    (OASIS: each distinct labelled item once, :meth:`assay.core.totals.WithReplacementSample.
    labelled_share`): the failures and successes of each system that move R̂ from sample to
    sample, the counts the normal approximation of R̂ rests on; or None.

    The delta rule asks for ten failures and ten successes among the labelled items
    (:func:`assay.core.intervals.ratio_interval`). What varies from sample to sample in
    stratum h is the count of a kind among its n_h labelled items, a hypergeometric count of
    variance n_h p_h (1 − p_h)(1 − f_h), f_h = n_h/N_h (Cochran 1977, §3.2): its normal
    approximation needs that variance, not the count, to be large, so each labelled failure
    or success counts 1 − f_h. A fully labelled stratum (f_h = 1) is known exactly and counts
    nothing (on the ties world the census of the top 394 items held 54 false negatives, so
    the delta rule applied while the 19 false negatives below it were seen 0–2 times: recall
    coverage 0.855 at 1,000 labels). One labelled almost in full counts almost nothing: on
    abt_buy at 1,000 labels (its probability column the prior, Neyman under bounds with
    detection floors, 300 repetitions) the top stratum's 376 of 393 items held 23 false
    negatives, the delta interval (half-width 0.045) stood on them while the true s.d. of
    R̂ was 0.048, driven by the three false negatives among 53,000 items below, and recall
    covered 0.85; counted at 1 − f_h they are one, Korn & Graubard's exact fallback applies,
    and it covers 0.997 (half-width 0.155). A kind that cannot occur in the sampled strata (a
    success, or a false positive, where none of their labelled items is a predicted positive)
    is left out of the rule (its part of R̂ is fixed): returned as a large count. Failures
    are false negatives for recall, false positives for precision and both for 0 < α < 1
    (the fewer of the two kinds that can occur).

    >>> from assay.core.totals import StratifiedSample
    >>> s = StratifiedSample(stratum=np.array([0, 0, 1, 1]), sizes=np.array([2, 50]))
    >>> fail, succ = _moving_counts(s, np.array([1, 1, 1, 0]), np.array([[1], [0], [0], [0]]), 0.0)
    >>> float(fail[0]), int(succ[0] > 10**6)      # one FN in a stratum 2/50 labelled: 0.96
    (0.96, 1)
    """
    if isinstance(sample, StratifiedSample):
        counts = sample.counts()
        size = np.asarray(sample.sizes, dtype=np.float64)
        free = np.where(counts < size, 1.0 - counts / np.where(size > 0, size, 1.0), 0.0)
        wt = free[sample.stratum][:, None]                                    # (T, 1)
    else:
        share = getattr(sample, "labelled_share", lambda: None)()
        if share is None:
            return None
        wt = share[:, None]
    pos, pred = ell[:, None] > 0, yhat > 0
    big = float(np.iinfo(np.int64).max // 4)
    can_pp = np.any((wt > 0) & pred, axis=0)                                  # (m,)
    fn = ((pos & ~pred) * wt).sum(axis=0)
    fp = np.where(can_pp, ((~pos & pred) * wt).sum(axis=0), big)
    tp = np.where(can_pp, ((pos & pred) * wt).sum(axis=0), big)
    fail = fn if alpha == 0.0 else fp if alpha == 1.0 else np.minimum(fn, fp)
    return fail, tp


def _failure_region_size(sample: Sample, yhat: np.ndarray, x: np.ndarray, alpha: float
                         ) -> np.ndarray | None:
    """For draws with replacement: the effective sample size of the exact interval's
    fallback, n* ≤ n_fail-region Kish size × X̂/N̂_region (per system), or None.

    Korn & Graubard's n* = min(n_eff, n) takes n from the count of labelled items in the
    ratio's domain. Under unequal selection probabilities that count says nothing about the
    region where an unseen failure would hide: a recall of 1 from 100 labelled matches, with
    every false negative in the predicted negatives drawn at a small probability, gave a
    Clopper–Pearson lower bound of 0.96 (importance design on the real restaurant pool: recall
    coverage 0.11, on amazon_google 0.23). A failure of the measure (a false negative for
    recall and F_α, α < 1; a false positive for precision) lives among the predicted
    negatives (resp. positives); d of the draws fall there, with Kish effective size
    n_d = (Σw)²/Σw² (w = 1/q) and estimated size N̂_d = Σw/T. No failure among them bounds
    the failures' rate there by about −ln(a/2)/n_d, i.e. their count relative to the domain's
    estimated total X̂ by −ln(a/2)·N̂_d/(n_d·X̂): the Clopper–Pearson interval at
    n* = n_d·X̂/N̂_d says the same (Kish 1965 §11.7 for the weighting design effect). For
    F_α with 0 < α < 1 the delta rule's ten failures must include ten false negatives (ten
    false positives among well-sampled predicted positives say nothing about the rest). The
    cap applies when no failure of that kind was labelled (the case derived here); with a few
    seen, the count-based n* stands (capping it too over-covered a 9.6%-positive pool: recall
    0.99 at 500 labels where 0.95 ± 0.029 is asked).

    >>> from assay.core.totals import WithReplacementSample
    >>> s = WithReplacementSample(q=np.array([0.1, 0.1, 0.001, 0.001]))
    >>> yh = np.array([[1], [1], [0], [0]])
    >>> cap = _failure_region_size(s, yh, np.array([[1.0], [1.0], [0.0], [0.0]]), 0.0)
    >>> round(float(cap[0]), 3)     # 2 draws among the predicted negatives, X̂/N̂_0 = 10/1000
    0.02
    """
    q = getattr(sample, "q", None)
    if q is None or np.asarray(q).size == 0:
        return None
    w = 1.0 / np.asarray(q, dtype=np.float64)
    region = (yhat == 0) if alpha < 1.0 else (yhat > 0)            # (T, m)
    wr = w[:, None] * region
    s1, s2 = wr.sum(axis=0), (wr * wr).sum(axis=0)
    kish = np.divide(s1 * s1, s2, out=np.zeros_like(s1), where=s2 > 0)
    x_tot = (w[:, None] * x).sum(axis=0)
    return np.divide(kish * x_tot, s1, out=np.full_like(s1, np.inf), where=s1 > 0)


def f_measure(sample: Sample, labels: np.ndarray, predictions: np.ndarray, alpha: float,
              confidence: float = 0.95, measure: str | None = None,
              interval: str = "auto", n_domain: int | None = None,
              n_success: int | None = None, model: PredictiveModel | None = None,
              domain_size: int | None = None) -> Estimate:
    """F_α of one system (seed 002, eqs. 1 and 3): the design-based estimate of
    :func:`f_measures`, or, given a ``model`` whose fit check passes (p ≥ ``FIT_LEVEL``), the
    model's estimate and interval with the design-based one beside it in ``extra``.

    >>> import numpy as np
    >>> from assay.core.totals import StratifiedSample
    >>> s = StratifiedSample(stratum=np.zeros(4, dtype=np.int64), sizes=np.array([8]))
    >>> e = f_measure(s, np.array([1, 1, 0, 0]), np.array([1, 0, 1, 0]), alpha=1.0)
    >>> e.measure, e.estimate, e.method
    ('precision', 0.5, 'exact')
    """
    counts = (None if n_domain is None else np.array([n_domain]),
              None if n_success is None else np.array([n_success]))
    size = None if domain_size is None else np.array([domain_size])
    design = f_measures(sample, labels, predictions, alpha, confidence, measure, interval,
                        *counts, domain_size=size)[0]
    if model is None or interval == "design" or not design.defined or design.method == "census":
        return design                   # (a census is exact: no model needed)
    res = model.predictive(alpha, confidence)
    if res is None:
        return design
    misfit = ""
    if res.fit is not None and res.fit.p_value < FIT_LEVEL:
        misfit = (f"the rank calibration does not fit the labels (deviance "
                  f"{res.fit.deviance:.1f} on {res.fit.df} df, p = {res.fit.p_value:.2g}): "
                  "design-based estimate and interval")
    elif res.fit is not None and res.fit.local_p < LOCAL_LEVEL:
        misfit = (f"the labels of stratum {res.fit.local_stratum} hold more matches than the "
                  f"rank calibration allows (p = {res.fit.local_p:.2g}, Bonferroni over "
                  "strata): the labels win, design-based estimate and interval")
    if misfit:
        fell = f_measures(sample, labels, predictions, alpha, confidence, measure, interval,
                          *counts, why_design=misfit, domain_size=size)[0]
        return replace(fell, extra={**fell.extra, "model_estimate": res.estimate,
                                    "model_interval": (res.ci_low, res.ci_high)})
    return Estimate(design.measure, alpha, res.estimate, res.ci_low, res.ci_high,
                    res.std_error, confidence, "model", None, PREDICTIVE_NOTE,
                    {"design_estimate": design.estimate,
                     "design_interval": (design.ci_low, design.ci_high),
                     "design_method": design.method, "design_assumes": design.assumes},
                    assumes=MODEL_ASSUMES)


def _undefined(name: str, alpha: float, confidence: float) -> Estimate:
    what = {"precision": "no predicted positive", "recall": "no true positive"}.get(
        name, "no predicted or true positive")
    return Estimate(name, alpha, None, None, None, None, confidence, "undefined", 0.0,
                    note=f"undefined: {what} among the labels yet")


def _assumes(sample: Sample, unseen: dict[str, float]) -> str | None:
    """What a design-based interval rests on beyond the design: that strata where no positive
    was labelled hold (almost) none; for unequal selection probabilities with replacement, the
    normal approximation of the weighted estimator."""
    if unseen.get("unseen_strata"):
        return (f"the {unseen['unseen_items']:,.0f} unlabelled items of the "
                f"{unseen['unseen_strata']} strata where no match was labelled hold (almost) "
                "none")
    q = getattr(sample, "q", None)
    if q is not None and len(q) and float(np.max(q)) > 1.01 * float(np.min(q)):
        return WEIGHTED_ASSUMES
    return None


def _unseen_note(unseen: dict[str, float]) -> str:
    if not unseen.get("unseen_strata"):
        return ""
    return (f"design-based: {unseen['unseen_strata']} strata ({unseen['unseen_items']:,.0f} "
            "unlabelled items) where no positive was labelled are taken to hold none; their "
            f"labels allow up to {unseen['unseen_positive_bound']:,.0f}")


def _join(*notes: str) -> str:
    return "; ".join(n for n in notes if n)


def true_f_measure(labels: np.ndarray, predictions: np.ndarray, alpha: float) -> float:
    """F_α on a fully labelled population (seed 002, eq. 1); NaN when 0/0.

    >>> true_f_measure(np.array([1, 1, 0]), np.array([1, 0, 1]), 0.5)
    0.5
    """
    ell = np.asarray(labels, dtype=np.float64)
    yhat = np.asarray(predictions, dtype=np.float64)
    den = alpha * yhat.sum() + (1.0 - alpha) * ell.sum()
    return float((ell * yhat).sum() / den) if den > 0 else math.nan


__all__ = ["FIT_LEVEL", "LOCAL_LEVEL", "MEASURES", "MODEL_ASSUMES", "WEIGHTED_ASSUMES", "PREDICTIVE_NOTE", "PredictiveModel", "f_measure",
           "f_measures", "measure_name", "true_f_measure"]

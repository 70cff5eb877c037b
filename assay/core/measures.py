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
from assay.core.method_notes import join_notes, method_note, unseen_note
from assay.core.rule_counts import (discount_note, effective_rule_counts, failure_region_size,
                                    moving_counts)
from assay.core.stratified_counts import (sparse_false_negative_interval,
                                          sparse_false_positive_interval)
from assay.core.totals import (Sample, StratifiedSample, WithReplacementSample,
                               unseen_positive_bound)
from assay.core.unseen_cells import unseen_cell_variance
from assay.core.weight_tiers import tiered_f_interval
from assay.core.types import Estimate
from assay.errors import EstimationError

MEASURES: dict[str, float] = {"precision": 1.0, "recall": 0.0, "f1": 0.5}
WR_SCALE = "logit"  # the delta interval of draws with replacement: see f_measures
FIT_LEVEL = 0.01     # below this p-value the model-based estimate gives way to the design-based
LOCAL_LEVEL = 0.05   # … and below this one for an excess of matches in one stratum (the labels win)
MODEL_ASSUMES = ("the rank model: where labels are few, unlabelled items follow the match rate "
                 "fitted to the labels along the score ranking (flat top, decay below; past "
                 "the fully labelled top, a decay at least as fast as 1/rank, the interval "
                 "spanning that fit and a decay no steeper than rank^-3); matches the "
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
               why_design: str = "", domain_size: np.ndarray | None = None,
               prior: np.ndarray | None = None, contradicted: bool = False) -> list[Estimate]:
    """Design-based F_α (module docstring) of every system: ``predictions`` is (n,) or (n, m),
    aligned with ``labels`` and the sample's draws. ``n_domain[j]``: distinct labelled items
    with x_i > 0 for system j, ``n_success[j]`` of those with y_i = 1 (default: counts over
    draws); ``why_design``: a note saying why a model-based estimate gave way to this one;
    ``domain_size[j]``: system j's predicted positives in the pool, known exactly: precision's
    interval is then cut to what the labels make certain, [TP_seen, TP_seen + unlabelled
    PP] / PP (a set that always holds the truth, so the cut keeps the coverage), and labelling
    every predicted positive is a census. A census (every stratum labelled in full) is exact
    for every measure. ``prior`` (the prior's P(ℓ = 1) per draw), with strata: a cell of a
    stratum whose draws saw none of an outcome adds the variance of what its unlabelled items
    hold under the prior (:func:`assay.core.unseen_cells.unseen_cell_variance`; for draws
    with replacement made uniformly within strata, OASIS, over their distinct items). Draws with
    replacement at unequal probabilities (importance, OASIS) take their delta interval on the
    logit scale (:data:`WR_SCALE`; Korn & Graubard 1999, §5.2): their Hansen–Hurwitz ratio is skewed by the rarely drawn, heavily weighted items
    (a run that draws fewer of them than expected overestimates recall and underestimates
    its variance). On the importance design's 30 cells of bench/adversarial.py (10 worlds ×
    500/1,000/2,000 labels, 200 repetitions) coverage below 0.92 fell from 8 measure-cells to
    3 (realistic at 1,000 labels F1 0.915 → 0.945, ties at 500 0.895 → 0.925) at the same
    mean half-width (±0.003). Where the delta rule does not hold on draws with replacement
    without strata (importance, passive with replacement) and the Clopper–Pearson interval at
    Kish's effective size reads more successes or failures than were drawn
    (:func:`assay.core.intervals.counts_overstated`: a rare kind made of a few heavy draws),
    the fallback joins it with :func:`assay.core.intervals.component_ratio_interval` (method
    ``components``: exact Poisson bounds on the draws of each count; their union, since
    neither holds everywhere the other fails; same 30 cells: amazon_google at 500 labels
    recall 0.88 → 0.99, miscalibrated at 2,000 F1 0.91 → 0.945). OASIS keeps the
    Clopper–Pearson fallback: its count rule discounts the failures of fully labelled strata
    (:func:`assay.core.rule_counts.moving_counts`), which raw draw counts would not. Where a
    stratified sample's recall or F_α (α < 1) takes that fallback and its partially labelled
    strata drew few false negatives, the interval is
    :func:`assay.core.stratified_counts.sparse_false_negative_interval` instead (method
    ``counts``: gamma bounds on the few seen, and an allowance for those a stratum's
    neighbours suggest it hides; the ``non_monotone`` world at 2,000 labels, recall 0.915 →
    0.975 over 200 runs, narrower where the failures are few elsewhere); the partial strata's
    false positives, where few (none included; a few seen since session 29), are counted the
    same way rather than sending F_α back to Clopper–Pearson, and precision with ten or more
    effective true positives there takes that interval too (:func:`assay.core.stratified_counts.
    sparse_false_positive_interval`; session 24: dblp_acm at 1,000 labels); ``contradicted``
    (a model the labels contradict gave way to this estimate): few false negatives sampled
    at large fractions take Clopper–Pearson's interval joined with the counts' one (session
    28, :mod:`assay.core.stratified_counts`). Where importance
    draws' delta interval holds by the counts but their false negatives' total is skewed (a few
    draws of heavy weight carry it: k₃ < 10), the interval is
    :func:`assay.core.weight_tiers.tiered_f_interval` (method ``tiers``: gamma bounds on the
    sparse weight tiers; ``non_monotone`` at 2,000 labels, recall 0.91 → 0.96). Returns one
    :class:`Estimate` per system.

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
        if prior is not None:     # cells whose draws saw none of an outcome: the prior's say
            var = var + unseen_cell_variance(sample, ell, yhat, prior, r, x_tot, alpha)
        if np.array_equal(sample.counts(), sample.sizes):
            fraction[:] = 1.0                        # a census: every item labelled
        elif domain_size is not None and alpha == 1.0:
            size = np.broadcast_to(np.asarray(domain_size, dtype=np.float64), (m,))
            fraction = np.divide(dom, size, out=np.zeros(m), where=size > 0)
    elif prior is not None and isinstance(sample, WithReplacementSample):
        dist = sample.distinct_strata()          # OASIS: the distinct items of each stratum
        if dist is not None:
            sub, first = dist
            var = var + unseen_cell_variance(sub, ell[first], yhat[first],
                                             np.asarray(prior)[first], r, x_tot, alpha)
    known = (None if domain_size is None or alpha != 1.0 or n_domain is None or n_success is None
             else np.broadcast_to(np.asarray(domain_size, dtype=np.float64), (m,)))
    if isinstance(sample, StratifiedSample) and alpha < 1.0:
        unseen = unseen_positive_bound(sample, ell, confidence)
    cap = failure_region_size(sample, yhat, x, alpha)
    # F_α, 0 < α < 1: the normal approximation needs false negatives too, not only failures
    # of either kind (false positives are drawn often, false negatives may never be)
    n_fn = None if cap is None else np.count_nonzero((ell[:, None] > 0) & (yhat == 0), axis=0)
    n_fp = None if cap is None else np.count_nonzero((ell[:, None] == 0) & (yhat > 0), axis=0)
    moving = moving_counts(sample, ell, yhat, alpha)
    # draws with replacement without strata: their weights, for the interval from the counts
    w_draw = None if cap is None or moving is not None else 1.0 / np.asarray(sample.q,
                                                                              dtype=np.float64)
    # … whose rule counts each kind at Kish's effective size (a few heavy draws are few)
    # (equal weights, passive with replacement: the raw counts and F_α's rule of before)
    kish = (None if w_draw is None or float(np.ptp(w_draw)) <= 1e-12 * float(np.max(w_draw))
            else effective_rule_counts(w_draw, ell, yhat, alpha))
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
        if cap is not None:    # draws with replacement: see failure_region_size
            none_seen = (int(n_fn[j]) if alpha < 1.0 else n_fail) == 0
            n_exact = min(n_exact, float(cap[j])) if none_seen else n_exact
            n_fail = min(n_fail, int(n_fn[j])) if 0.0 < alpha < 1.0 else n_fail
        k_rule, raw = k, (n_fail, k)
        if moving is not None:  # strata: only failures where the sample is partial move r̂
            n_fail, k_rule = min(n_fail, moving[0][j]), min(k, moving[1][j])
        elif kish is not None:  # (F_α: the fewer of the two kinds, as for strata)
            raw = (min(n_fail, int(n_fp[j])) if 0.0 < alpha < 1.0 else n_fail, k)
            n_fail, k_rule = min(raw[0], kish[0][j]), min(k, kish[1][j])
        lo, hi, method, n_eff = ratio_interval(float(r[j]), float(var[j]), n_exact,
                                               confidence, rule, n_fail, k_rule,
                                               float(fraction[j]), WR_SCALE if cap is not None
                                               else "wald")
        if (method == "exact" and w_draw is not None
                and counts_overstated(w_draw, ell, yhat[:, j], alpha, n_eff)):
            # importance draws: the union with the interval from the counts (neither holds
            # everywhere the other fails: assay.core.intervals.component_ratio_interval)
            c_lo, c_hi = component_ratio_interval(w_draw, ell, yhat[:, j], alpha, confidence)
            lo, hi, method = min(lo, c_lo, float(r[j])), max(hi, c_hi, float(r[j])), "components"
        if method == "delta" and w_draw is not None and alpha < 1.0:
            # importance draws whose false negatives are a few heavy events: their tiers'
            # gamma bounds, not the normal (logit) reading (assay.core.weight_tiers)
            skewed = tiered_f_interval(w_draw, ell, yhat[:, j], alpha, 1.0 - confidence,
                                       _kind_totals(sample, ell, yhat[:, j]))
            if skewed is not None:
                lo, hi = min(skewed[0], float(r[j])), max(skewed[1], float(r[j]))
                method = "tiers"
        if method == "exact" and isinstance(sample, StratifiedSample):
            # few false negatives (or, for precision, false positives) in partial strata:
            # their gamma bounds, not Clopper–Pearson's binomial at n*
            # (assay.core.stratified_counts)
            seen_few = (sparse_false_negative_interval(sample, ell, yhat[:, j], alpha,
                                                       confidence) if alpha < 1.0 else
                        sparse_false_positive_interval(sample, ell, yhat[:, j], confidence))
            if seen_few is not None:
                lo, hi = min(seen_few[0], float(r[j])), max(seen_few[1], float(r[j]))
                method = "counts"
            elif alpha < 1.0 and contradicted:   # k* ≥ 10, few moving: the union
                many = sparse_false_negative_interval(sample, ell, yhat[:, j], alpha,
                                                      confidence, many=True)
                if many is not None and many[0] < lo:
                    lo, hi, method = min(lo, many[0]), max(hi, many[1]), "counts"
        if known is not None and known[j] > 0:
            # precision: the truth lies in [TP_seen, TP_seen + unlabelled PP] / PP for certain,
            # so cutting the interval to it keeps its coverage and drops what cannot be
            lo = min(max(lo, k / known[j]), float(r[j]))
            hi = max(min(hi, (k + known[j] - int(dom[j])) / known[j]), float(r[j]))
        se = math.sqrt(var[j]) if math.isfinite(var[j]) else None
        exact_note = method_note(method, alpha, k, int(dom[j]), n_eff,
                                 discount_note(raw, (n_fail, k_rule), kish is not None))
        out.append(Estimate(name, alpha, float(r[j]), lo, hi, se, confidence, method, n_eff,
                            join_notes(exact_note, why_design, unseen_note(unseen)), dict(unseen),
                            assumes=None if method == "census" else assumes))
    return out


def f_measure(sample: Sample, labels: np.ndarray, predictions: np.ndarray, alpha: float,
              confidence: float = 0.95, measure: str | None = None,
              interval: str = "auto", n_domain: int | None = None,
              n_success: int | None = None, model: PredictiveModel | None = None,
              domain_size: int | None = None, prior: np.ndarray | None = None) -> Estimate:
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
                        *counts, domain_size=size, prior=prior)[0]
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
                          *counts, why_design=misfit, domain_size=size, prior=prior,
                          contradicted=True)[0]
        return replace(fell, extra={**fell.extra, "model_estimate": res.estimate,
                                    "model_interval": (res.ci_low, res.ci_high)})
    return Estimate(design.measure, alpha, res.estimate, res.ci_low, res.ci_high,
                    res.std_error, confidence, "model", None, PREDICTIVE_NOTE,
                    {"design_estimate": design.estimate,
                     "design_interval": (design.ci_low, design.ci_high),
                     "design_method": design.method, "design_assumes": design.assumes},
                    assumes=MODEL_ASSUMES)


def _kind_totals(sample: Sample, ell: np.ndarray, yhat: np.ndarray) -> tuple[float, ...]:
    """The estimator's totals of TP, FP and FN (one system's 0/1 predictions per draw)."""
    pos, pred = ell > 0, yhat > 0
    kinds = np.stack([pos & pred, ~pos & pred, pos & ~pred], axis=1).astype(np.float64)
    return tuple(float(v) for v in sample.total(kinds)[0])


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

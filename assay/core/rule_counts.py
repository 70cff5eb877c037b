"""The counts the design-based interval's rule rests on (:func:`assay.core.measures.f_measures`,
:func:`assay.core.intervals.ratio_interval`): which failures and successes move the estimate
in a stratified sample or one drawn uniformly within strata (:func:`moving_counts`), the
effective size of the region where an unseen failure would hide in draws with replacement
(:func:`failure_region_size`), the counts of draws with replacement at unequal weights taken
at Kish's effective size (:func:`effective_rule_counts`), and the note that says so
(:func:`discount_note`). Pure numpy.
"""
from __future__ import annotations

import numpy as np

from assay.core.intervals import effective_count
from assay.core.totals import Sample, StratifiedSample


def discount_note(raw: tuple[float, float], moving: tuple[float, float], kish: bool = False
                  ) -> str:
    """The exact fallback's note when the delta rule's counts were discounted at 1 − f_h
    (:func:`moving_counts`), or taken at Kish's effective size (``kish``,
    :func:`effective_rule_counts`): how many failures and successes move the estimate (a kind
    none of which was labelled is not named).

    >>> discount_note((23, 300), (0.9, 280.0))
    '; of its 23 failures and 300 successes, 0.9 and 280.0 move the estimate (each counted at 1 − f_h, the share of its stratum left unlabelled)'
    >>> discount_note((0, 13), (0.0, 9.4))
    '; of its 13 successes, 9.4 move the estimate (each counted at 1 − f_h, the share of its stratum left unlabelled)'
    >>> discount_note((3, 30), (3, 30))
    ''
    >>> discount_note((42, 20), (2.9, 20.0), kish=True)[-74:]
    'move the estimate (each kind at its Kish effective count: unequal weights)'
    """
    if tuple(float(x) for x in raw) == tuple(float(x) for x in moving):
        return ""
    big = np.iinfo(np.int64).max // 8
    kinds = [(int(n), "failure" if i == 0 else "success", m)
             for i, (n, m) in enumerate(zip(raw, moving)) if int(n) > 0]
    if not kinds:
        return ""
    have = " and ".join(f"{n} {w if n == 1 else ('failures' if w == 'failure' else 'successes')}"
                        for n, w, _ in kinds)
    move = " and ".join(f"{m:.1f}" if m < big else "all" for _, _, m in kinds)
    why = ("each kind at its Kish effective count: unequal weights" if kish else
           "each counted at 1 − f_h, the share of its stratum left unlabelled")
    return f"; of its {have}, {move} move the estimate ({why})"


def moving_counts(sample: Sample, ell: np.ndarray, yhat: np.ndarray, alpha: float
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
    >>> fail, succ = moving_counts(s, np.array([1, 1, 1, 0]), np.array([[1], [0], [0], [0]]), 0.0)
    >>> float(fail[0]), int(succ[0] > 10**6)      # one FN in a stratum 2/50 labelled: 0.96
    (0.96, 1)
    """
    if isinstance(sample, StratifiedSample):
        wt = sample.unlabelled_share()[sample.stratum][:, None]               # (T, 1)
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
    return _failures(fn, fp, alpha), tp


def effective_rule_counts(w: np.ndarray, ell: np.ndarray, yhat: np.ndarray, alpha: float
                          ) -> tuple[np.ndarray, np.ndarray]:
    """For draws with replacement at unequal weights w = 1/q without strata (importance;
    :func:`assay.core.measures.f_measures` keeps the raw counts, and F_α's rule of before, for
    equal weights): each system's failures and successes for the delta rule, each
    kind at Kish's effective count k* = (Σ_kind w)²/Σ_kind w²
    (:func:`assay.core.intervals.effective_count`), never above the raw count.

    The normal approximation of R̂ needs each count that enters F_α to be a sum of many draws of
    comparable weight; forty draws of a kind at weight 1 and two at weight 100 are about three
    draws (k* = 240²/20,040 = 2.9), and the two heavy ones decide where the estimate falls.
    Raw draw counts let the delta interval stand on such a kind. On a world built for it (the
    design's score blind to a band of 2,000 items, drawn at a tenth of the top's rate, holding
    100 of a system's 140 predicted positives, all false positives; 400 repetitions, seeds
    5/100, ``tests/test_component_interval.py``) F1 took the delta interval in every run and
    covered 0.882 at 500 draws; counted at k*, the rule falls back (the union with the
    interval from the counts) and F1 covers 0.950, at 1,000 draws 0.925 → 0.968. On the 30
    cells of ``bench/adversarial.py`` for importance (captured samples,
    ``bench/offline/wr_cells.py``) only F1 at 500 labels moves: it falls back in 12–19% of the
    runs on the duplicate_scores, realistic and ties worlds, half-width +0.003–0.005, coverage
    0.935 → 0.95 (duplicate_scores) and 0.925 → 0.93 (ties); the rest is unchanged.
    Failures are false negatives for recall, false positives for precision and the fewer of
    the two for 0 < α < 1 (as in :func:`moving_counts`); successes are true positives.

    >>> eq = effective_rule_counts(np.full(10, 1488.0), np.ones(10), np.zeros((10, 1)), 0.0)
    >>> float(eq[0][0])           # ten equal weights: 10, not 9.999999999999998
    10.0
    >>> w = np.array([1.0] * 40 + [100.0, 100.0] + [1.0] * 20)
    >>> ell = np.array([0] * 42 + [1] * 20)
    >>> fail, succ = effective_rule_counts(w, ell, np.ones((62, 1)), 1.0)
    >>> round(float(fail[0]), 1), float(succ[0])      # 42 false positives count 2.9
    (2.9, 20.0)
    """
    wt = np.asarray(w, dtype=np.float64)
    pos, pred = np.asarray(ell)[:, None] > 0, np.asarray(yhat) > 0

    def kish(kind: np.ndarray) -> np.ndarray:
        k = np.array([effective_count(wt * kind[:, j])[0] for j in range(kind.shape[1])])
        raw = kind.sum(axis=0).astype(np.float64)   # equal weights: the raw count, exactly
        return np.where(np.isclose(k, raw, rtol=1e-9, atol=0.0), raw, np.minimum(k, raw))

    fn, fp, tp = kish(pos & ~pred), kish(~pos & pred), kish(pos & pred)
    return _failures(fn, fp, alpha), tp


def _failures(fn: np.ndarray, fp: np.ndarray, alpha: float) -> np.ndarray:
    """The delta rule's failures: false negatives for recall, false positives for precision,
    the fewer of the two for 0 < α < 1."""
    return fn if alpha == 0.0 else fp if alpha == 1.0 else np.minimum(fn, fp)


def failure_region_size(sample: Sample, yhat: np.ndarray, x: np.ndarray, alpha: float
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
    >>> cap = failure_region_size(s, yh, np.array([[1.0], [1.0], [0.0], [0.0]]), 0.0)
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


__all__ = ["discount_note", "effective_rule_counts", "failure_region_size", "moving_counts"]

"""Stratified (and two-phase) estimators of yield, recall, precision and F1 with delta-method CIs.

Notation (seed 004 §2; Oard et al. 2008, TREC Legal Track overview, Appendix): stratum l has
M_l documents (population) of which n_l are sampled by SRS without replacement and assessed.
The yield of stratum l is estimated by R̂_l = M_l·r_l/n_l (seed eq. 3), the collection yield by
R̂ = Σ_l R̂_l (eq. 1). For run A, with L_A the strata it returns, recall = R_A / R,
precision = R_A / N_A (N_A the assessable documents A returns, eq. 2) and F1 = 2 R_A / (N_A + R).

One formulation covers the naive estimator and double sampling. Each sampled document carries a
*cell* c (its fallible label −1/0/1, optionally crossed with "appealed"), and the true label y is
known for a second-phase subsample of n_lc of the N'_lc first-phase documents of each cell (for
the naive estimator every document is "second phase" with y = fallible label). The estimator is
double sampling for stratification (Cochran 1977, ch. 12, double sampling for stratification), applied within each stratum:

    ȳ_l = Σ_c w_lc ȳ_lc,           w_lc = N'_lc / N'_l,

with variance (Cochran 1977, ch. 12, with finite-population correction for the first phase)

    V(ȳ_l) = S²_l (1/N'_l − 1/M_l) + Σ_c w_lc S²_lc (1/ν_lc − 1) / N'_l,   ν_lc = n_lc / N'_lc.

With cells = fallible labels 0/1 this *is* Tenenbein's (1970) maximum-likelihood estimator
p̂ = π̂·n11/n·1 + (1−π̂)·n10/n·0 and the variance reduces to his p(1−p)[(1−K)/n + K/N] (K being
the squared correlation between true and fallible labels) minus p(1−p)/M; see
:mod:`assay.core.double_sampling`. Recall, precision and F1 are ratios of estimated totals;
their variances come from the delta method: the variance of the estimated total of the
linearised variable u_i = Σ_k (∂g/∂T_k) z_ik, computed with the formula above (Särndal et al.
1992, ch. 5). Unassessable documents (label −1) form their own fully-observed cell: they are
counted, their share is estimated, and they are excluded from N_A, never silently dropped.
"""
from __future__ import annotations

import math

from dataclasses import dataclass, field, replace
from typing import Sequence

import numpy as np
from scipy.stats import norm

from assay.core.intervals import normal_interval
from assay.core.totals import two_phase_total
from assay.core.types import Code, Estimate

__all__ = ["CUT_TO_RANGE", "SampleCounts", "TopicEstimate", "estimate_arrays", "estimate", "estimate_dict",
           "interval", "mean_over_topics", "INTERVAL_METHODS", "CELL_UNASSESSABLE",
           "CELL_NOT_RELEVANT", "CELL_RELEVANT"]

CELL_UNASSESSABLE, CELL_NOT_RELEVANT, CELL_RELEVANT = 0, 1, 2


@dataclass(frozen=True)
class SampleCounts:
    """Sufficient statistics of a stratified, possibly two-phase, sample for one topic.

    Arrays ``first``, ``second`` and ``relevant`` have shape (..., L, C, G): strata × cells ×
    run-return patterns (a leading batch axis is allowed, for vectorised simulation).

    * ``population[l]`` — M_l, documents in stratum l.
    * ``patterns[g, k]`` — run k returns documents of pattern g.
    * ``assessable[c]`` — documents of cell c are assessable (the −1 cell is not).
    * ``fallible[c]`` — the fallible label of cell c (−1, 0 or 1).
    * ``first`` — N'_lcg first-phase (assessed) documents; ``second`` — n_lcg of them whose
      true label is known; ``relevant`` — how many of those are truly relevant.
    * ``filled`` — (..., L, C) cells with no adjudication whose ``second`` and ``relevant``
      were filled from the assessments (taken as true, as the notes say); the estimator uses
      them so, the assumption-free bounds of :mod:`assay.core.two_phase_bounds` do not. None:
      no such cell (and in :meth:`naive`, where every cell is the assessments by design).
    """
    population: np.ndarray
    patterns: np.ndarray
    assessable: np.ndarray
    fallible: np.ndarray
    first: np.ndarray
    second: np.ndarray
    relevant: np.ndarray
    run_ids: tuple[str, ...] = ()
    strata: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    filled: np.ndarray | None = None

    def naive(self) -> "SampleCounts":
        """The same first-phase sample read as if the fallible labels were the truth."""
        first = self.first
        rel = first * (self.fallible == 1)[:, None]
        return SampleCounts(self.population, self.patterns, self.assessable, self.fallible,
                            first, first.copy(), rel, self.run_ids, self.strata, ())

    def one(self, b: int) -> "SampleCounts":
        """Repetition b of a batch (the leading axis of the simulation's counts).

        >>> import numpy as np
        >>> sc = SampleCounts(np.array([9]), np.array([[True]]), np.array([False, True, True]),
        ...                   np.array([-1, 0, 1]), *(np.ones((2, 1, 3, 1), int),) * 3)
        >>> sc.one(1).first.shape
        (1, 3, 1)
        """
        pick = None if self.filled is None else self.filled[b]
        return replace(self, first=self.first[b], second=self.second[b],
                       relevant=self.relevant[b], filled=pick)


RUN_MEASURES = {"recall": 0.0, "precision": 1.0, "f1": 0.5}
# the words of the note on a measure cut to [0, 1] (:func:`estimate`), which the terminal
# summary and the benches look for
CUT_TO_RANGE = "lies beyond [0, 1] and is cut to it"


@dataclass(frozen=True)
class TopicEstimate:
    """Yield, unassessable share, and per-run recall, precision and F1 (each an
    :class:`~assay.core.types.Estimate`) for one topic."""
    yield_: Estimate
    unassessable_share: Estimate
    runs: dict[str, dict[str, Estimate]]
    strata: list[dict] = field(default_factory=list)
    notes: tuple[str, ...] = ()

    def to_dict(self) -> dict:
        return {"yield": estimate_dict(self.yield_),
                "unassessable_share": estimate_dict(self.unassessable_share),
                "runs": {k: {m: estimate_dict(e) for m, e in v.items()}
                         for k, v in self.runs.items()},
                "strata": list(self.strata), "notes": list(self.notes)}


def _safe_div(a, b):
    a, b = np.broadcast_arrays(np.asarray(a, float), np.asarray(b, float))
    out = np.zeros(a.shape)
    np.divide(a, b, out=out, where=b != 0)
    return out


def estimate_arrays(sc: SampleCounts) -> dict[str, np.ndarray]:
    """Point estimates and delta-method variances (module docstring), vectorised over batches.

    Returns arrays: ``yield``/``yield_var`` (...,), ``unassessable``/``unassessable_var``
    (share of the collection), and ``recall``, ``precision``, ``f1`` with ``*_var`` (..., K).

    >>> from assay.core.double_sampling import build_counts
    >>> sc = build_counts([10, 90], np.array([[True], [False]]), np.array([0, 0, 1, 1]),
    ...                   np.array([0, 0, 1, 1]), np.array([1, 0, 0, 1]), run_ids=("A",))
    >>> r = estimate_arrays(sc)
    >>> float(r["yield"]), [round(float(x), 4) for x in r["recall"]]
    (50.0, [0.1])
    """
    M = np.asarray(sc.population, float)                    # (L,)
    R = np.asarray(sc.patterns, float)                      # (G, K)
    a = np.asarray(sc.assessable, float)                    # (C,)
    N1 = np.asarray(sc.first, float)                        # (..., L, C, G)
    n2 = np.asarray(sc.second, float)
    y2 = np.asarray(sc.relevant, float)
    N1_l = N1.sum(axis=(-1, -2))                            # (..., L)
    if np.any((N1_l == 0) & (M > 0)):
        raise ValueError("every non-empty stratum needs at least one assessed document")
    N1_c = N1.sum(axis=-1)                                  # (..., L, C)
    n2_c = n2.sum(axis=-1)
    W = _safe_div(N1_c, N1_l[..., None])                    # w_lc
    ratio1 = _safe_div(y2, n2_c[..., None])                 # share of cell c that is (g, y=1)
    ratio0 = _safe_div(n2 - y2, n2_c[..., None])
    mu_y = (W[..., None] * ratio1).sum(axis=-2)             # (..., L, G) mean of y·[g]
    mu_a = (N1 * a[:, None]).sum(axis=-2) / np.where(N1_l > 0, N1_l, 1)[..., None]
    Ty = (M[:, None] * mu_y).sum(axis=-2)                   # (..., G) totals
    Ta = (M[:, None] * mu_a).sum(axis=-2)
    Y = Ty.sum(axis=-1)
    A = Ta.sum(axis=-1)
    Mtot = M.sum()
    YA = Ty @ R                                             # (..., K)
    NA = Ta @ R
    # each lies in [0, 1] up to rounding, except where a cell mixes run-patterns and its
    # adjudicated documents' pattern mix departs from its assessed ones' (eq. above pools the
    # patterns within a cell): there the ratio may pass 1, and is cut to it (``*_beyond``)
    raw = {"recall": _safe_div(YA, Y[..., None]), "precision": _safe_div(YA, NA),
           "f1": _safe_div(2 * YA, NA + Y[..., None])}
    recall, precision, f1 = (np.clip(raw[m], 0.0, 1.0) for m in ("recall", "precision", "f1"))
    unass = 1.0 - A / Mtot

    # linearised variables u = α_y(g)·y + α_a(g)·a for Q quantities: (..., Q, G)
    ones = np.ones(Y.shape + (1, R.shape[0]))
    zeros = np.zeros_like(ones)
    Yk, NAk = Y[..., None, None], NA[..., None]
    rec_y = _safe_div(R.T - recall[..., None], Yk)                          # (..., K, G)
    pre_y = _safe_div(np.broadcast_to(R.T, recall.shape + R.T.shape[-1:]), NAk)
    pre_a = -_safe_div(precision[..., None] * R.T, NAk)
    den = (NA + Y[..., None])[..., None]
    f1_y = _safe_div(2 * R.T - f1[..., None], den)
    f1_a = -_safe_div(f1[..., None] * R.T, den)
    kz = np.zeros_like(rec_y)
    alpha_y = np.concatenate([ones, zeros, rec_y, pre_y, f1_y], axis=-2)
    alpha_a = np.concatenate([zeros, -ones / Mtot, kz, pre_a, f1_a], axis=-2)

    # per-cell second-phase moments of u (a_c ∈ {0, 1}, so a_c² = a_c); einsum keeps memory at
    # (..., Q, L, C) even with many runs. The stratified two-phase formula is the core's one.
    r1, rall = ratio1, (ratio1 + ratio0) * a[:, None]
    ein = lambda spec, *ops: np.einsum(spec, *ops)  # noqa: E731
    mean = (ein("...lcg,...qg->...qlc", r1, alpha_y) + ein("...lcg,...qg->...qlc", rall, alpha_a))
    meansq = (ein("...lcg,...qg->...qlc", r1, alpha_y ** 2)
              + 2 * ein("...lcg,...qg->...qlc", r1 * a[:, None], alpha_y * alpha_a)
              + ein("...lcg,...qg->...qlc", rall, alpha_a ** 2))
    # within-cell variance of the second-phase part α_y(g)·y
    n2q = n2_c[..., None, :, :]                             # (..., 1, L, C)
    s1 = ein("...lcg,...qg->...qlc", y2, alpha_y)
    s2 = ein("...lcg,...qg->...qlc", y2, alpha_y ** 2)
    m = _safe_div(s1, n2q)
    within = np.maximum(_safe_div(s2 - n2q * m ** 2, n2q - 1), 0.0)
    _, var = two_phase_total(M, N1_l[..., None, :], W[..., None, :, :], mean, meansq, within,
                             N1_c[..., None, :, :], n2q)
    K = R.shape[1]
    return {"yield": Y, "yield_var": var[..., 0], "unassessable": unass,
            "unassessable_var": var[..., 1],
            "recall": recall, "recall_var": var[..., 2:2 + K],
            "precision": precision, "precision_var": var[..., 2 + K:2 + 2 * K],
            "f1": f1, "f1_var": var[..., 2 + 2 * K:2 + 3 * K],
            **{f"{m}_beyond": raw[m] - v for m, v in (("recall", recall),
                                                       ("precision", precision), ("f1", f1))},
            "stratum_yield": (M[:, None] * mu_y).sum(axis=-1),
            "stratum_assessable": (M[:, None] * mu_a).sum(axis=-1)}


def interval(est: float, var: float, confidence: float = 0.95,
             bounds: tuple[float, float] = (0.0, 1.0), method: str = "wald",
             measure: str = "", alpha: float = math.nan) -> Estimate:
    """An :class:`~assay.core.types.Estimate` from a delta-method variance, its interval by
    :func:`assay.core.intervals.normal_interval` (``wald``, ``logit`` or ``log``).

    >>> e = interval(0.2, 0.0004, method="logit", measure="recall", alpha=0.0)
    >>> e.method, round(e.ci_low, 4), round(e.std_error, 4)
    ('logit', 0.1637, 0.02)
    """
    lo, hi, se = normal_interval(est, var, confidence, bounds, method)
    return Estimate(measure, alpha, float(est), lo, hi, se, confidence, method)


def estimate_dict(e: Estimate) -> dict:
    """The JSON form of a stratified estimate: estimate, se, ci_low, ci_high.

    >>> estimate_dict(interval(0.5, 0.01))["se"]
    0.1
    """
    return {"estimate": float(e.estimate), "se": float(e.std_error),
            "ci_low": float(e.ci_low), "ci_high": float(e.ci_high)}


INTERVAL_METHODS = ("jeffreys", "logit", "wald")


def estimate(sc: SampleCounts, confidence: float = 0.95,
             method: str = "jeffreys") -> TopicEstimate:
    """Estimates and CIs for one topic (no batch axis). ``method`` ``jeffreys`` (the default):
    the small-count posterior-shape interval of :mod:`assay.core.small_counts` (Jeffreys
    pseudo-counts per cell in the spread only, centred on the unbiased estimate), whose width is
    zero only for a census of both phases; its ``se`` is the larger of the delta-method standard
    error and the half-width / z. ``logit`` or ``wald``: the delta-method interval of
    :func:`interval` (zero width where no disagreement was seen). The yield gets the matching
    ``log`` or ``wald`` interval.

    >>> from assay.core.double_sampling import build_counts
    >>> sc = build_counts([10, 90], np.array([[True], [False]]), np.array([0, 0, 1, 1]),
    ...                   np.array([0, 0, 1, 1]), np.array([1, 0, 0, 1]), run_ids=("A",))
    >>> round(estimate(sc).runs["A"]["precision"].estimate, 2)
    0.5
    """
    if method not in INTERVAL_METHODS:
        raise ValueError(f"unknown interval method {method!r} ({', '.join(INTERVAL_METHODS)})")
    r = estimate_arrays(sc)
    inf = float("inf")
    small = None
    if method == "jeffreys":
        from assay.core.small_counts import jeffreys_two_phase_intervals
        small = jeffreys_two_phase_intervals(sc, confidence, point=r).bounds
    delta = "logit" if method == "jeffreys" else method

    def make(name: str, k: int | None, bounds, imethod: str, measure: str, alpha: float):
        est = r[name] if k is None else r[name][k]
        var = r[f"{name}_var"] if k is None else r[f"{name}_var"][k]
        e = interval(est, var, confidence, bounds, imethod, measure, alpha)
        if small is None:
            return e
        lo, hi = (float(b) if k is None else float(b[k]) for b in small[name])
        z = float(norm.ppf(0.5 + confidence / 2))
        se = max(e.std_error, (hi - lo) / (2 * z))
        return Estimate(measure, alpha, float(est), lo, hi, se, confidence, "jeffreys")

    runs, cut = {}, []
    for k, run in enumerate(sc.run_ids):
        runs[run] = {m: make(m, k, (0.0, 1.0), delta, m, a) for m, a in RUN_MEASURES.items()}
        cut += [f"run {run}'s {m} estimate {float(r[m][k] + r[f'{m}_beyond'][k]):.4f} "
                f"{CUT_TO_RANGE}: a stratum's assessed label holds documents of "
                "several run-patterns and its adjudicated ones, which stand for all of them, "
                "over-represent this run's (the assumption-free interval does not rest on them)"
                for m in RUN_MEASURES if abs(float(r[f"{m}_beyond"][k])) > 1e-9]
    strata = []
    for l, name in enumerate(sc.strata or [str(i) for i in range(len(sc.population))]):
        first = np.asarray(sc.first)[l].sum(axis=-1)
        second = np.asarray(sc.second)[l].sum(axis=-1)
        rel = np.asarray(sc.relevant)[l].sum(axis=-1)
        strata.append({"stratum": name, "size": int(sc.population[l]),
                       "assessed": int(first.sum()),
                       "unassessable": int(first[np.asarray(sc.fallible)
                                                 == Code.UNASSESSABLE].sum()),
                       "known_true_label": int(second[np.asarray(sc.assessable, bool)].sum()),
                       "known_relevant": int(rel.sum()),
                       "yield": float(r["stratum_yield"][l]),
                       "assessable": float(r["stratum_assessable"][l])})
    ymethod = "log" if delta == "logit" else "wald"
    return TopicEstimate(make("yield", None, (0.0, inf), ymethod, "yield", math.nan),
                         make("unassessable", None, (0.0, 1.0), delta, "unassessable_share",
                              math.nan),
                         runs, strata, tuple(sc.notes) + tuple(cut))


def mean_over_topics(topics: Sequence[TopicEstimate], confidence: float = 0.95,
                     method: str = "logit") -> TopicEstimate:
    """Mean over independent topics; Var(mean) = Σ_t Var_t / T² with the topics' ``se``
    (``jeffreys`` topics carry the se their interval implies), interval ``logit`` (``jeffreys``
    is taken as ``logit`` here) or ``wald``.

    >>> from assay.core.double_sampling import build_counts
    >>> sc = build_counts([10, 90], np.array([[True], [False]]), np.array([0, 0, 1, 1]),
    ...                   np.array([0, 0, 1, 1]), np.array([1, 0, 0, 1]), run_ids=("A",))
    >>> t = estimate(sc)
    >>> mean_over_topics([t, t]).runs["A"]["precision"].estimate == t.runs["A"]["precision"].estimate
    True
    """
    T = len(topics)
    if T == 0:
        raise ValueError("no topics")
    method = "logit" if method == "jeffreys" else method

    def avg(items: list[Estimate], bounds=(0.0, 1.0)) -> Estimate:
        est = sum(i.estimate for i in items) / T
        var = sum(i.std_error ** 2 for i in items) / T ** 2
        m = method if bounds == (0.0, 1.0) else ("log" if method == "logit" else "wald")
        return interval(est, var, confidence, bounds, m, items[0].measure, items[0].alpha)

    run_ids = sorted(set().union(*[t.runs for t in topics]))
    runs = {}
    for run in run_ids:
        have = [t.runs[run] for t in topics if run in t.runs]
        if len(have) != T:
            continue
        runs[run] = {m: avg([h[m] for h in have]) for m in RUN_MEASURES}
    return TopicEstimate(avg([t.yield_ for t in topics], (0.0, float("inf"))),
                         avg([t.unassessable_share for t in topics]), runs)

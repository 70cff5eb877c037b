"""Double sampling (Tenenbein 1970): fallible assessment of a sample, authoritative re-assessment
of a random subsample; maximum-likelihood estimates, asymptotic variances, adjudication allocation.

Notation of seed 004 §4: in one stratum N documents are assessed by the fallible assessor; a
random subsample of n of them is also judged by the authority. n_tf counts subsampled documents
with true label t and fallible label f; n·f = n_0f + n_1f; among the N − n other documents X are
assessed relevant and Y not relevant. The MLEs (Tenenbein 1970; seed eqs. 11–13):

    π̂ = (n·1 + X) / N,
    p̂ = π̂·n11/n·1 + (1 − π̂)·n10/n·0,
    θ̂ = π̂·(n01/n·1) / (1 − p̂)          (false-positive rate, P(fallible 1 | true 0)),
    φ̂ = (1 − π̂)·(n10/n·0) / p̂          (false-negative rate, P(fallible 0 | true 1)).

Asymptotic variance (Tenenbein 1970; seed eq. 14), with K = pq(1−θ−φ)²/(π(1−π)) the
squared correlation of the true and fallible labels:

    Var(p̂) ≈ pq[(1 − K)/n + K/N]   (− pq/M with a finite stratum of M documents).

Derivation of the rest: write λ1 = P(t=1 | f=1), λ0 = P(t=1 | f=0), so p = πλ1 + (1−π)λ0,
θ = π(1−λ1)/q, φ = (1−π)λ0/p. The estimates π̂ (from N), λ̂1 (from n·1) and λ̂0 (from n·0) are
asymptotically independent with variances π(1−π)/N, λ1(1−λ1)/(nπ), λ0(1−λ0)/(n(1−π)); the
delta method on p gives exactly Tenenbein's Var(p̂) (since πλ1(1−λ1) + (1−π)λ0(1−λ0) = pq(1−K)
and (λ1−λ0)²π(1−π) = pqK), and on θ and φ gives the variances returned here.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from assay.core.allocation import bounded_allocation
from assay.core.types import Code
from assay.core.two_phase import (CELL_NOT_RELEVANT, CELL_RELEVANT, CELL_UNASSESSABLE, SampleCounts,
                         estimate_arrays)

__all__ = ["TenenbeinEstimate", "tenenbein", "tenenbein_variance", "build_counts",
           "StratumErrorRates", "error_rates",
           "allocate_adjudication", "draw_adjudication", "NOT_ADJUDICATED"]

NOT_ADJUDICATED = Code.NOT_ADJUDICATED


@dataclass(frozen=True)
class TenenbeinEstimate:
    """MLEs of the true proportion p, false-positive rate θ, false-negative rate φ, with
    asymptotic variances (module docstring)."""
    p: float | np.ndarray
    fpr: float | np.ndarray
    fnr: float | np.ndarray
    pi: float | np.ndarray
    var_p: float | np.ndarray
    var_fpr: float | np.ndarray
    var_fnr: float | np.ndarray
    K: float | np.ndarray

    def to_dict(self) -> dict:
        f = lambda v: np.asarray(v).tolist()  # noqa: E731
        return {"p": f(self.p), "fpr": f(self.fpr), "fnr": f(self.fnr), "pi": f(self.pi),
                "var_p": f(self.var_p), "var_fpr": f(self.var_fpr), "var_fnr": f(self.var_fnr),
                "K": f(self.K)}


def _div(a, b):
    a, b = np.broadcast_arrays(np.asarray(a, float), np.asarray(b, float))
    out = np.zeros(a.shape)
    np.divide(a, b, out=out, where=b != 0)
    return out[()] if out.ndim == 0 else out


def tenenbein_variance(p, fpr, fnr, n, N, population=None):
    """Var(p̂) ≈ pq[(1−K)/n + K/N − 1/M] (Tenenbein 1970, seed eq. 14; FPC term −pq/M when M given).

    >>> round(float(tenenbein_variance(0.5, 0.1, 0.1, 100, 1000)), 5)
    0.00106
    """
    p, fpr, fnr = (np.asarray(v, float) for v in (p, fpr, fnr))
    q = 1 - p
    pi = p * (1 - fnr) + q * fpr
    K = _div(p * q * (1 - fpr - fnr) ** 2, pi * (1 - pi))
    v = p * q * ((1 - K) / n + K / N)
    if population is not None:
        v = v - p * q / np.asarray(population, float)
    return v


def tenenbein(n11, n10, n01, n00, x, y, population=None,
              conditional: bool = False) -> TenenbeinEstimate:
    """Tenenbein's MLEs (seed eqs. 11–13) and asymptotic variances; arguments broadcast.

    ``x``/``y``: first-phase-only documents assessed relevant / not relevant. ``population``
    (M, optional) adds the finite-population correction −pq/M to Var(p̂) (Cochran 1977, ch. 12).
    ``conditional=False`` plugs in nπ̂ and n(1−π̂) for the subsample sizes n·1, n·0 (Tenenbein's
    unconditional form, seed eq. 14); ``True`` uses the achieved n·1, n·0, which stays valid when
    the subsample is drawn at different rates from the fallible-label cells.

    >>> t = tenenbein(40, 10, 5, 45, 30, 70)
    >>> round(float(t.p), 4), round(float(t.fpr), 4), round(float(t.fnr), 4)
    (0.447, 0.0753, 0.2542)
    """
    n11, n10, n01, n00, x, y = (np.asarray(v, float) for v in (n11, n10, n01, n00, x, y))
    n = n11 + n10 + n01 + n00
    N = n + x + y
    n_1 = n11 + n01
    n_0 = n10 + n00
    pi = _div(n_1 + x, N)
    lam1 = _div(n11, n_1)
    lam0 = _div(n10, n_0)
    p = pi * lam1 + (1 - pi) * lam0
    q = 1 - p
    fpr = _div(pi * (1 - lam1), q)
    fnr = _div((1 - pi) * lam0, p)
    K = _div(p * q * (1 - fpr - fnr) ** 2, pi * (1 - pi))
    fpc = 0.0 if population is None else 1.0 / np.asarray(population, float)
    var_pi = pi * (1 - pi) * (_div(1.0, N) - fpc)
    var_l1 = _div(lam1 * (1 - lam1), n_1 if conditional else n * pi)
    var_l0 = _div(lam0 * (1 - lam0), n_0 if conditional else n * (1 - pi))
    var_p = (lam1 - lam0) ** 2 * var_pi + pi ** 2 * var_l1 + (1 - pi) ** 2 * var_l0
    # θ = π(1−λ1)/q: gradient w.r.t. (π, λ1, λ0)
    q2 = q ** 2
    d_pi = _div((1 - lam1) * q + pi * (1 - lam1) * (lam1 - lam0), q2)
    d_l1 = -_div(pi * (1 - pi) * (1 - lam0), q2)
    d_l0 = _div(pi * (1 - lam1) * (1 - pi), q2)
    var_fpr = d_pi ** 2 * var_pi + d_l1 ** 2 * var_l1 + d_l0 ** 2 * var_l0
    # φ = (1−π)λ0/p
    p2 = p ** 2
    e_pi = -_div(lam0 * p + (1 - pi) * lam0 * (lam1 - lam0), p2)
    e_l1 = -_div((1 - pi) * lam0 * pi, p2)
    e_l0 = _div((1 - pi) * pi * lam1, p2)
    var_fnr = e_pi ** 2 * var_pi + e_l1 ** 2 * var_l1 + e_l0 ** 2 * var_l0
    sq = lambda v: v[()] if np.ndim(v) == 0 else v  # noqa: E731
    return TenenbeinEstimate(sq(p), sq(fpr), sq(fnr), sq(pi), sq(var_p), sq(var_fpr),
                             sq(var_fnr), sq(K))


def build_counts(population: Sequence[int], patterns: np.ndarray, doc_stratum: np.ndarray,
                 doc_pattern: np.ndarray, fallible: np.ndarray, true: np.ndarray | None = None,
                 appealed: np.ndarray | None = None, run_ids: Sequence[str] = (),
                 strata: Sequence[str] = ()) -> SampleCounts:
    """Sufficient statistics from per-document labels of the first-phase sample.

    ``fallible[i]`` ∈ {−1, 0, 1}; ``true[i]`` ∈ {−1, 0, 1} for adjudicated documents and
    ``NOT_ADJUDICATED`` (−2) otherwise (None: no adjudication, the naive estimator). With
    ``appealed`` the assessable cells are split into appealed / unappealed sub-strata (seed 004
    §5), each with its own adjudication rate. Departures are recorded in ``notes``: documents
    the authority found unassessable (left out of their cell's subsample, i.e. treated as missing
    at random), and cells without adjudications (the fallible labels are then taken as true
    there — the naive estimate for that cell).

    >>> sc = build_counts([10, 90], np.array([[True], [False]]), np.array([0, 0, 1, 1]),
    ...                   np.array([0, 0, 1, 1]), np.array([1, 0, 0, 1]), run_ids=("A",))
    >>> sc.first.shape
    (2, 3, 2)
    """
    population = np.asarray(population, np.int64)
    patterns = np.asarray(patterns, bool)
    L, G = len(population), patterns.shape[0]
    fallible = np.asarray(fallible, np.int64)
    s = np.asarray(doc_stratum, np.int64)
    g = np.asarray(doc_pattern, np.int64)
    if np.any(~np.isin(fallible, (Code.UNASSESSABLE, 0, 1))):
        raise ValueError("fallible labels must be -1, 0 or 1")
    cell = np.where(fallible == Code.UNASSESSABLE, CELL_UNASSESSABLE,
                    np.where(fallible == 1, CELL_RELEVANT, CELL_NOT_RELEVANT))
    C = 3
    if appealed is not None:
        C = 5
        ap = np.asarray(appealed, bool)
        cell = np.where(ap & (fallible >= 0), cell + 2, cell)
    assessable = np.array([False] + [True] * (C - 1))
    cell_fallible = np.array([-1, 0, 1, 0, 1][:C])
    first = np.zeros((L, C, G), np.int64)
    np.add.at(first, (s, cell, g), 1)
    notes: list[str] = []
    names = list(strata) or [str(i) for i in range(L)]
    n_l = first.sum(axis=(1, 2))
    for l in np.flatnonzero((n_l == 1) & (population > 1)):
        notes.append(f"stratum {names[l]}: one assessed document; its sampling variance cannot "
                     "be estimated and is taken as 0")
    if true is None:
        sc = SampleCounts(population, patterns, assessable, cell_fallible, first, first, first,
                          tuple(run_ids), tuple(names))
        nv = sc.naive()
        return SampleCounts(nv.population, nv.patterns, nv.assessable, nv.fallible, nv.first,
                            nv.second, nv.relevant, nv.run_ids, nv.strata, tuple(notes))
    true = np.asarray(true, np.int64)
    second = np.zeros_like(first)
    relevant = np.zeros_like(first)
    second[:, CELL_UNASSESSABLE, :] = first[:, CELL_UNASSESSABLE, :]
    adj = (true != NOT_ADJUDICATED) & (fallible >= 0)
    lost = adj & (true == Code.UNASSESSABLE)
    if lost.any():
        notes.append(f"{int(lost.sum())} adjudicated document(s) judged unassessable by the "
                     "authority were left out of their cell's subsample (missing at random)")
    use = adj & (true >= 0)
    np.add.at(second, (s[use], cell[use], g[use]), 1)
    np.add.at(relevant, (s[use], cell[use], g[use]), (true[use] == 1).astype(np.int64))
    cell_names = ["unassessable", "assessed not relevant", "assessed relevant",
                  "assessed not relevant, appealed", "assessed relevant, appealed"]
    filled = np.zeros((L, C), bool)
    for l in range(L):
        for c in range(1, C):
            if first[l, c].sum() > 0 and second[l, c].sum() == 0:
                filled[l, c] = True
                second[l, c] = first[l, c]
                relevant[l, c] = first[l, c] if cell_fallible[c] == 1 else 0
                notes.append(f"stratum {names[l]}: no adjudication among the "
                             f"{int(first[l, c].sum())} document(s) {cell_names[c]}; "
                             "their fallible labels are taken as true")
            elif second[l, c].sum() == 1 and first[l, c].sum() > 1:
                notes.append(f"stratum {names[l]}: a single adjudication among the documents "
                             f"{cell_names[c]}; its within-cell variance cannot be estimated (0)")
    return SampleCounts(population, patterns, assessable, cell_fallible, first, second, relevant,
                        tuple(run_ids), tuple(names), tuple(notes),
                        filled if filled.any() else None)


def allocate_adjudication(sc: SampleCounts, budget: int, *, run: int | None = None,
                          metric: str = "recall", fpr: float | Sequence[float] = 0.05,
                          fnr: float | Sequence[float] = 0.05, minimum: int = 2) -> np.ndarray:
    """Adjudications n_lc per stratum l and assessable cell c minimising the variance of one
    run's recall or F1 (or of the yield when ``run`` is None).

    By the two-phase variance (:mod:`.estimators`) the adjudication-dependent part of the variance is Σ_lc A_lc / n_lc with
    A_lc = M_l² (N'_lc/N'_l)² S²_lc, S²_lc the within-cell variance of the linearised variable
    α_y·y (see :mod:`.estimators`); the minimum under Σ n_lc = budget is n_lc ∝ sqrt(A_lc)
    (Neyman), bounded by min(minimum, N'_lc) ≤ n_lc ≤ N'_lc. S²_lc uses λ_lc = P(true 1 | cell)
    implied by the naive proportion and prior error rates θ (``fpr``) and φ (``fnr``) per
    stratum: p = (π − θ)/(1 − θ − φ), λ1 = p(1−φ)/π, λ0 = pφ/(1−π). Returns an (L, C) array.

    >>> sc = build_counts([100, 900], np.array([[True], [False]]), np.repeat([0, 1], 10),
    ...                   np.repeat([0, 1], 10), np.tile([0, 1], 10), run_ids=("A",))
    >>> int(allocate_adjudication(sc, 8, run=0).sum())
    8
    """
    naive = sc.naive()
    r = estimate_arrays(naive)
    L, C, G = naive.first.shape
    R = np.asarray(sc.patterns, float)
    if run is None:
        alpha = np.ones(G)
    elif metric == "recall":
        alpha = (R[:, run] - r["recall"][run]) / max(r["yield"], 1e-12)
    elif metric == "f1":
        alpha = (2 * R[:, run] - r["f1"][run]) / max(_n_a(naive, run) + r["yield"], 1e-12)
    else:
        raise ValueError("metric must be 'recall' or 'f1'")
    fpr = np.broadcast_to(np.asarray(fpr, float), (L,))
    fnr = np.broadcast_to(np.asarray(fnr, float), (L,))
    first = np.asarray(sc.first, float)
    N1_l = first.sum(axis=(1, 2))
    N1_c = first.sum(axis=2)
    ass = np.asarray(sc.assessable, bool)
    fal = np.asarray(sc.fallible)
    n_ass = N1_c[:, ass].sum(axis=1)
    pi = np.clip(np.divide(N1_c[:, fal == 1].sum(axis=1), np.maximum(n_ass, 1)), 1e-4, 1 - 1e-4)
    # a prior θ at or above the assessed proportion is inconsistent with the data (it would put
    # every assessed-relevant document down as a false positive); cap it at π/2
    fpr = np.minimum(fpr, pi / 2)
    p = np.clip((pi - fpr) / np.maximum(1 - fpr - fnr, 1e-6), 1e-4, 1 - 1e-4)
    lam = np.where(fal[None, :] == 1, (p * (1 - fnr) / pi)[:, None], (p * fnr / (1 - pi))[:, None])
    lam = np.clip(lam, 1e-3, 1 - 1e-3)
    share_g = np.divide(first, np.maximum(N1_c[:, :, None], 1))            # mix of patterns
    Ea = (share_g * alpha).sum(axis=2)
    Ea2 = (share_g * alpha ** 2).sum(axis=2)
    S2 = lam * Ea2 - (lam * Ea) ** 2
    M = np.asarray(sc.population, float)
    A = (M[:, None] * N1_c / np.maximum(N1_l[:, None], 1)) ** 2 * np.maximum(S2, 0)
    A[:, ~ass] = 0
    high = N1_c.astype(np.int64)
    high[:, ~ass] = 0
    low = np.minimum(high, minimum)
    if low.sum() > budget:
        raise ValueError(f"adjudication budget {budget} is below the minimum of {minimum} per "
                         f"stratum and assessed label ({int(low.sum())} needed); raise the "
                         "budget or lower the minimum (--min-per-cell)")
    target = np.sqrt(A).ravel()
    target = budget * target / target.sum() if target.sum() > 0 else target
    return bounded_allocation(target, budget, low.ravel(), high.ravel()).reshape(L, C)


def _n_a(sc: SampleCounts, run: int) -> float:
    """Estimated N_A (assessable documents returned by run ``run``)."""
    first = np.asarray(sc.first, float)
    M = np.asarray(sc.population, float)
    a = np.asarray(sc.assessable, float)
    mu_a = (first * a[:, None]).sum(axis=1) / first.sum(axis=(1, 2))[:, None]
    return float((M[:, None] * mu_a).sum(axis=0) @ np.asarray(sc.patterns, float)[:, run])


def draw_adjudication(doc_stratum: np.ndarray, doc_cell: np.ndarray, allocation: np.ndarray,
                      rng: np.random.Generator) -> np.ndarray:
    """Indices of first-phase documents to adjudicate: SRS without replacement of n_lc from
    each stratum × cell (conditional inclusion probability n_lc / N'_lc).

    >>> pick = draw_adjudication(np.array([0, 0, 1, 1]), np.array([1, 2, 1, 2]),
    ...                          np.array([[0, 1, 1], [0, 0, 1]]), np.random.default_rng(0))
    >>> sorted(pick.tolist())
    [0, 1, 3]
    """
    if not isinstance(rng, np.random.Generator):
        raise TypeError("rng must be a numpy.random.Generator (seeded by the user)")
    s = np.asarray(doc_stratum)
    c = np.asarray(doc_cell)
    chosen = []
    for (l, k), n in np.ndenumerate(np.asarray(allocation)):
        if n <= 0:
            continue
        members = np.flatnonzero((s == l) & (c == k))
        if n > members.size:
            raise ValueError("allocation exceeds the documents available in a cell")
        chosen.append(members[rng.choice(members.size, size=int(n), replace=False)])
    return np.sort(np.concatenate(chosen)) if chosen else np.zeros(0, np.int64)


@dataclass(frozen=True)
class StratumErrorRates:
    """Per-stratum estimates from the adjudicated subsample: true proportion relevant p̂,
    assessed proportion π̂, false-positive rate θ̂, false-negative rate φ̂ (with delta-method
    standard errors) and the naive estimate's bias π̂ − p̂ (seed eq. 7)."""
    stratum: str
    p: float
    pi: float
    fpr: float
    fnr: float
    se_p: float
    se_fpr: float
    se_fnr: float
    naive_bias: float
    adjudicated: int

    def to_dict(self) -> dict:
        return dict(self.__dict__)


def error_rates(sc: SampleCounts) -> list[StratumErrorRates]:
    """θ̂ and φ̂ per stratum for any cell layout (fallible label × appeal sub-strata).

    Among assessable documents, w_c is the first-phase share of cell c and λ_c the share of its
    adjudicated documents that are truly relevant. Then p = Σ_c w_c λ_c,
    θ = Σ_{c: f=1} w_c(1 − λ_c)/(1 − p), φ = Σ_{c: f=0} w_c λ_c / p — Tenenbein's MLEs when the
    cells are the fallible labels. Variances by the delta method with multinomial
    Cov(ŵ) = (diag w − wwᵀ)/N' and independent Var(λ̂_c) = λ_c(1 − λ_c)/n_c (no FPC), except
    in a cell whose k_c of n_c adjudications are all or none relevant: there the plug-in
    variance is 0, and Var(λ̂_c) = λ̃_c(1 − λ̃_c)/n_c with the Jeffreys-adjusted
    λ̃_c = (k_c + ½)/(n_c + 1) (Brown, Cai & DasGupta 2001) — the estimates themselves are
    unchanged. Standard errors are capped at ½, the largest standard deviation a quantity in
    [0, 1] can have (Popoviciu's inequality): beyond it the delta method (a rate over a class
    with next to no members, e.g. φ̂ where p̂ ≈ 0) only says the rate is undetermined. Cells
    without adjudication (fallback) count as λ_c = fallible label, as if every one of their
    documents had been adjudicated.

    >>> sc = build_counts([10, 90], np.array([[True], [False]]), np.array([0, 0, 1, 1]),
    ...                   np.array([0, 0, 1, 1]), np.array([1, 0, 0, 1]),
    ...                   true=np.array([1, 0, 0, 0]), run_ids=("A",))
    >>> [round(r.fpr, 2) for r in error_rates(sc)]
    [0.0, 0.5]
    """
    ass = np.asarray(sc.assessable, bool)
    fal = np.asarray(sc.fallible)[ass]
    first = np.asarray(sc.first, float).sum(axis=-1)[:, ass]          # (L, C')
    second = np.asarray(sc.second, float).sum(axis=-1)[:, ass]
    rel = np.asarray(sc.relevant, float).sum(axis=-1)[:, ass]
    out = []
    names = list(sc.strata) or [str(i) for i in range(first.shape[0])]
    for l, name in enumerate(names):
        Np = first[l].sum()
        if Np == 0:
            continue
        w = first[l] / Np
        lam = np.divide(rel[l], second[l], out=np.zeros_like(w), where=second[l] > 0)
        p = float(w @ lam)
        pi = float(w[fal == 1].sum())
        f1 = (fal == 1).astype(float)
        f0 = (fal == 0).astype(float)
        A1 = float((w * f1 * (1 - lam)).sum())
        B0 = float((w * f0 * lam).sum())
        q = 1 - p
        cov_w = (np.diag(w) - np.outer(w, w)) / Np
        # no disagreement seen (k = 0 or k = n): the plug-in λ(1 − λ)/n is 0, which the data
        # cannot back; the variance uses the Jeffreys-adjusted λ̃ = (k + ½)/(n + 1) there
        edge = (second[l] > 0) & ((rel[l] == 0) | (rel[l] == second[l]))
        lam_v = np.where(edge, np.divide(rel[l] + 0.5, second[l] + 1.0), lam)
        var_lam = np.divide(lam_v * (1 - lam_v), second[l], out=np.zeros_like(w),
                            where=second[l] > 0)
        def var(gw, gl):
            return max(float(gw @ cov_w @ gw + (gl ** 2 * var_lam).sum()), 0.0)
        fpr = A1 / q if q > 0 else 0.0
        fnr = B0 / p if p > 0 else 0.0
        g_fpr_w = (f1 * (1 - lam) * q + A1 * lam) / q ** 2 if q > 0 else 0 * w
        g_fpr_l = (-f1 * w * q + A1 * w) / q ** 2 if q > 0 else 0 * w
        g_fnr_w = (f0 * lam * p - B0 * lam) / p ** 2 if p > 0 else 0 * w
        g_fnr_l = (f0 * w * p - B0 * w) / p ** 2 if p > 0 else 0 * w
        n_adj = int(second[l].sum())
        # a rate in [0, 1] has a standard deviation of at most ½ (Popoviciu's inequality): the
        # delta method past that (a rate over a near-empty class) says only "undetermined"
        se = lambda gw, gl: min(np.sqrt(var(gw, gl)), 0.5)  # noqa: E731
        out.append(StratumErrorRates(name, p, pi, fpr, fnr, se(lam, w), se(g_fpr_w, g_fpr_l),
                                     se(g_fnr_w, g_fnr_l), pi - p, n_adj))
    return out

"""The parts of OASIS (seed 002, Marchant & Rubinstein 2017) that are pure functions of
per-stratum arrays: Algorithm 2's initialisation, the optimal instrumental distribution v*
(after eq. 11), eq. 12's ε-greedy mixture, the defensive mixture, the posterior means
(eqs. 10–11, Remark 4), the cross-fitting halves and the detection floors. The design that
draws with them, and why each is there, is :mod:`assay.designs.oasis`.

>>> round(initial_f(0.5, np.array([2.0, 2.0]), np.array([0.8, 0.1]), np.array([1.0, 0.0])), 4)
0.8421
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.special import expit

from assay.core.allocation import DETECT_MISS, DETECT_SHARE, detection_floor, floored_allocation
from assay.core.strata import Strata, by_prediction, csf_strata, equal_size_strata

DEFAULT_PRIOR_STRENGTH = 2.0     # η per stratum (= the package's default 2K over K strata)
DEFAULT_DEFENSIVE = 0.5          # share of v drawn from the prior's static v* (issue 11)
V_STAR_FORMS = ("paper", "rms")
STRATA_METHODS = ("csf", "equal")


def logistic(x: np.ndarray) -> np.ndarray:
    """1/(1 + e^−x) without overflow (seed 002, Algorithm 2 line 6)."""
    return expit(np.asarray(x, dtype=np.float64))


def rescaled_logistic(score: np.ndarray, eps: float = 0.01) -> np.ndarray:
    """oasis 0.1.3's ``scores_to_probs``: logistic(c·s) with c = log((1−ε)/ε)/max|s|, so the most
    extreme score maps to ε or 1 − ε. Not in the paper (Algorithm 2 uses the plain logistic);
    offered so a caller can reproduce the package's prior."""
    s = np.asarray(score, dtype=np.float64)
    extreme = float(np.max(np.abs(s))) if s.size else 0.0
    scale = math.log((1.0 - eps) / eps) / extreme if extreme > 0 else 1.0
    return logistic(scale * s)


def initial_f(alpha: float, sizes: np.ndarray, pi0: np.ndarray, lam: np.ndarray) -> float:
    """F̂_α^(0) from stratum means (seed 002, Algorithm 2 line 10); 0.5 when 0/0 (as the
    package)."""
    num = float(np.sum(sizes * pi0 * lam))
    den = alpha * float(np.sum(sizes * lam)) + (1.0 - alpha) * float(np.sum(sizes * pi0))
    return num / den if den > 0 else 0.5


def optimal_stratum_weights(alpha: float, f: float, pi: np.ndarray, lam: np.ndarray,
                            omega: np.ndarray, form: str = "paper") -> np.ndarray:
    """Normalised stratified asymptotically optimal distribution v* (seed 002, after eq. 11).

    ``form="paper"``: v*_k ∝ ω_k[(1−α)(1−λ_k)F√π_k + λ_k√((αF)²(1−π_k) + (1−F)²π_k)].
    ``form="rms"`` (oasis 0.1.3): v*_k ∝ ω_k√(λ_k[(αF)²(1−π_k) + (1−F)²π_k] +
    (1−λ_k)(1−α)²F²π_k). Falls back to ω when every weight is zero (e.g. F̂ = 0 and π̂ = 0 on
    the predicted positives), so that v stays a distribution.
    """
    p1 = np.clip(pi, 0.0, 1.0)
    pos = (alpha * f) ** 2 * (1.0 - p1) + (1.0 - f) ** 2 * p1
    neg = ((1.0 - alpha) * f) ** 2 * p1
    if form == "paper":
        raw = omega * ((1.0 - lam) * np.sqrt(neg) + lam * np.sqrt(pos))
    elif form == "rms":
        raw = omega * np.sqrt(lam * pos + (1.0 - lam) * neg)
    else:
        raise ValueError(f"unknown v_star form {form!r} (expected one of {V_STAR_FORMS})")
    total = float(raw.sum())
    return raw / total if total > 0 and math.isfinite(total) else omega / omega.sum()


def epsilon_greedy(v_star: np.ndarray, omega: np.ndarray, epsilon: float) -> np.ndarray:
    """v = ε ω + (1 − ε) v* (seed 002, eq. 12)."""
    return epsilon * omega + (1.0 - epsilon) * v_star


def defensive_mixture(v_star: np.ndarray, v_prior: np.ndarray, share: float) -> np.ndarray:
    """(1 − d) v* + d v*_0: the adaptive v* mixed with the static v*_0 of the prior (v* at
    π̂^(0), F̂^(0)), so no stratum's probability falls below d times what the prior alone
    gives it and every weight ω_k/v_k stays within 1/d of the prior design's (Hesterberg
    1995; Owen & Zhou 2000).

    >>> defensive_mixture(np.array([1.0, 0.0]), np.array([0.5, 0.5]), 0.5).tolist()
    [0.75, 0.25]
    """
    return (1.0 - share) * v_star + share * v_prior


def posterior_mean(ones: np.ndarray, zeros: np.ndarray, gamma1: np.ndarray, gamma0: np.ndarray,
                   decaying: bool) -> np.ndarray:
    """π̂_k = Γ_1k/(Γ_1k + Γ_0k) (seed 002, eq. 11) with Γ = prior + counts (eq. 10).

    ``gamma1``/``gamma0`` are the prior pseudo-counts of labels 1 and 0. With ``decaying`` the
    prior column is multiplied by 1/n_k, n_k the number of labels drawn from stratum k so far
    (Remark 4; 1 before the first).
    """
    scale = 1.0 / np.maximum(ones + zeros, 1.0) if decaying else 1.0
    a = ones + scale * gamma1
    b = zeros + scale * gamma0
    return a / (a + b)


class VStar:
    """The per-draw instrumental distribution (either ``v_star`` form, ``"paper"`` or
    ``"rms"``): :func:`posterior_mean`, :func:`optimal_stratum_weights`,
    :func:`defensive_mixture`, :func:`epsilon_greedy` and the detection floors composed, with
    the same floating-point operations in the same order (so the same draws, bit for bit) and
    fewer temporaries. OASIS draws an item again and again (16 draws per label at 2,000 labels
    on dblp_acm), so this is its hot path.

    Called with one run's counts (shape (K,)) and its F̂ (a float), or with R runs' counts
    (shape (R, K)) and their F̂s (R floats) for :mod:`assay.designs.oasis_lockstep`: each row
    is then what the one-run call gives for that run (numpy sums and cumulates a row of a
    C-ordered array as it does a vector).

    >>> omega, lam, g1, g0 = (np.array(x) for x in ([0.5, 0.5], [1.0, 0.0], [1.0, 0.2], [1.0, 1.8]))
    >>> ones, zeros = np.array([3.0, 0.0]), np.array([1.0, 5.0])
    >>> v, cum = VStar(0.5, omega, lam, g1, g0, True, 0.0, omega, 0.1)(ones, zeros, 0.4)
    >>> pi = posterior_mean(ones, zeros, g1, g0, True)
    >>> ref = epsilon_greedy(optimal_stratum_weights(0.5, 0.4, pi, lam, omega), omega, 0.1)
    >>> bool((v == ref).all()), v.round(3).tolist(), float(cum[-1])
    (True, [0.921, 0.079], 1.0)
    """

    def __init__(self, alpha: float, omega: np.ndarray, lam: np.ndarray, gamma1: np.ndarray,
                 gamma0: np.ndarray, decaying: bool, defensive: float, v_prior: np.ndarray,
                 epsilon: float, form: str = "paper") -> None:
        if form not in V_STAR_FORMS:
            raise ValueError(f"unknown v_star form {form!r} (expected one of {V_STAR_FORMS})")
        self.rms = form == "rms"
        self.alpha, self.decaying = float(alpha), bool(decaying)
        self.omega, self.lam, self.gamma1, self.gamma0 = omega, lam, gamma1, gamma0
        self.not_lam = 1.0 - lam
        self.defensive, self.keep = float(defensive), 1.0 - float(defensive)
        self.prior_part = float(defensive) * v_prior
        self.greedy, self.eps_omega = 1.0 - float(epsilon), float(epsilon) * omega

    def _coefficients(self, f: float | np.ndarray) -> tuple[Any, Any, Any]:
        """(αF)², (1 − F)², ((1 − α)F)² as Python floats (column arrays of them for R runs),
        so that each is the one-run value bit for bit."""
        a = self.alpha
        if isinstance(f, np.ndarray):
            fs = f.tolist()
            return tuple(np.array(c)[:, None] for c in zip(*[((a * x) ** 2, (1.0 - x) ** 2,
                                                             ((1.0 - a) * x) ** 2) for x in fs]))
        return (a * f) ** 2, (1.0 - f) ** 2, ((1.0 - a) * f) ** 2

    def __call__(self, ones: np.ndarray, zeros: np.ndarray, f: float | np.ndarray,
                 live: np.ndarray | None = None, rows: np.ndarray | None = None
                 ) -> tuple[np.ndarray, np.ndarray]:
        """v (a new array) and its cumulative sum divided by its last element; ``live`` the
        detection floors still unmet (on the rows ``rows`` only, when given)."""
        c_pos1, c_pos2, c_neg = self._coefficients(f)
        # rows in C order: a row of a Fortran-ordered array is summed in another order
        ones, zeros = np.ascontiguousarray(ones), np.ascontiguousarray(zeros)
        if self.decaying:                                   # posterior_mean
            s = np.add(ones, zeros)
            np.maximum(s, 1.0, out=s)
            np.divide(1.0, s, out=s)
            a, b = np.multiply(s, self.gamma1), np.multiply(s, self.gamma0)
        else:
            a, b = np.multiply(1.0, self.gamma1), np.multiply(1.0, self.gamma0)
        a = np.add(ones, a)
        b = np.add(zeros, b)
        np.divide(a, a + b, out=a)                          # π̂
        np.maximum(a, 0.0, out=a)                           # optimal_stratum_weights' clip
        np.minimum(a, 1.0, out=a)
        pos = np.subtract(1.0, a)
        np.multiply(c_pos1, pos, out=pos)
        pos += np.multiply(c_pos2, a)
        np.multiply(c_neg, a, out=a)                        # neg
        if self.rms:                                        # ω√(λ pos + (1 − λ) neg)
            np.multiply(self.not_lam, a, out=a)
            np.multiply(self.lam, pos, out=pos)
            np.add(pos, a, out=a)
            np.sqrt(a, out=a)
        else:                                               # ω((1 − λ)√neg + λ√pos)
            np.sqrt(a, out=a)
            np.multiply(self.not_lam, a, out=a)
            np.sqrt(pos, out=pos)
            np.multiply(self.lam, pos, out=pos)
            np.add(a, pos, out=a)
        np.multiply(self.omega, a, out=a)                   # raw
        if a.ndim == 1:
            total = float(a.sum())
            if total > 0 and math.isfinite(total):
                np.divide(a, total, out=a)
            else:                                           # every weight 0: ω
                np.divide(self.omega, self.omega.sum(), out=a)
        else:
            tot = a.sum(axis=-1, keepdims=True)
            good = (tot > 0) & np.isfinite(tot)
            np.divide(a, np.where(good, tot, 1.0), out=a)
            if not good.all():
                np.copyto(a, self.omega / self.omega.sum(), where=~good)
        if self.defensive > 0.0:                            # defensive_mixture
            np.multiply(self.keep, a, out=a)
            np.add(a, self.prior_part, out=a)
        np.multiply(self.greedy, a, out=a)                  # epsilon_greedy
        v = np.add(self.eps_omega, a, out=a)
        if live is not None:
            if rows is None:
                np.maximum(v, live, out=v)
                np.divide(v, v.sum(axis=-1, keepdims=True), out=v)
            elif rows.any():
                w = np.maximum(v[rows], live[rows])
                v[rows] = w / w.sum(axis=-1, keepdims=True)
        cum = np.cumsum(v, axis=-1)
        np.divide(cum, cum[..., -1:], out=cum)
        return v, cum


def oasis_strata(basis: np.ndarray, predictions: np.ndarray, method: str, n_strata: int,
                 n_bins: int | None, precomputed: Strata | None, split: bool) -> Strata:
    """OASIS's strata: CSF or equal-size strata of ``basis`` (the score, else the prior), or
    ``precomputed`` ones of the same scores, split by the prediction where it does not follow
    the score when ``split`` (:func:`assay.core.strata.by_prediction`).

    >>> oasis_strata(np.array([0.9, 0.8, 0.1]), np.array([0, 1, 1]), "equal", 1, None, None,
    ...              True).sizes.tolist()
    [2, 1]
    """
    n = int(predictions.shape[0])
    if precomputed is not None and int(precomputed.bounds[-1]) != n:
        raise ValueError(f"precomputed strata cover {int(precomputed.bounds[-1])} items, the "
                         f"pool has {n}")
    st = precomputed if precomputed is not None else (
        csf_strata(basis, n_strata, n_bins) if method == "csf"
        else equal_size_strata(basis, n_strata))
    return by_prediction(st, predictions)[0] if split else st


def split_halves(strata: Strata) -> tuple[Strata, np.ndarray]:
    """Each stratum of two or more items cut into two interleaved halves (its items at even and
    at odd places of its score order), and each half's sibling (the other half; a one-item
    stratum is its own). Deterministic: no random number is used.

    >>> st = Strata(np.array([4, 3, 2, 1, 0]), np.array([0, 4, 5]))
    >>> halves, sib = split_halves(st)
    >>> [halves.members(h).tolist() for h in range(halves.count)], sib.tolist()
    ([[4, 2], [3, 1], [0]], [1, 0, 2])
    """
    parts: list[np.ndarray] = []
    sibling: list[int] = []
    for h in range(strata.count):
        seg = strata.members(h)
        if seg.shape[0] < 2:
            sibling.append(len(parts))
            parts.append(seg)
            continue
        sibling += [len(parts) + 1, len(parts)]
        parts += [seg[0::2], seg[1::2]]
    order = np.concatenate(parts).astype(strata.order.dtype, copy=False)
    bounds = np.concatenate([[0], np.cumsum([p.shape[0] for p in parts])]).astype(np.int64)
    return Strata(order, bounds, strata.method), np.array(sibling, dtype=np.int64)


def detection_shares(budget: int, sizes: np.ndarray, positives: np.ndarray, s1: np.ndarray,
                     s0: np.ndarray, alpha: float) -> np.ndarray:
    """φ_k: the share of draws that OASIS's detection floors give stratum k whatever its
    labels say (issue 11), from per-stratum sums only (N_k, predicted positives, Σ prior over
    predicted positives ``s1`` and negatives ``s0``, as
    :func:`assay.core.allocation.neyman_weights`).

    The floors are the stratified design's (:func:`assay.core.allocation.floored_allocation`
    for a budget of ``budget`` labels): from the top of the ranking down, while the
    anticipated variance of the Neyman allocation grows by at most a quarter, each stratum
    gets the labels that see at least one of a tenth of the predicted positives with
    probability 0.9 if it held them (:func:`assay.core.allocation.detection_floor`). Where
    the stratified design meets a floor with its Neyman share, OASIS's adaptive v need not
    (it starves a stratum whose first labels showed no match: Remark 4), so every stratum
    from the top down to the last one granted gets φ_k = floor_k/budget.

    >>> detection_shares(500, np.array([400, 460, 1000, 30000]), np.array([150, 0, 0, 0]),
    ...                  np.array([120.0, 0, 0, 0]), np.array([30.0, 10.0, 5.0, 5.0]),
    ...                  0.0).round(3).tolist()
    [0.122, 0.14, 0.0, 0.0]
    """
    from assay.core.allocation import neyman_weights
    sizes = np.asarray(sizes, dtype=np.int64)
    pp = np.asarray(positives, dtype=np.float64)
    budget = int(min(budget, int(sizes.sum())))
    phi = np.zeros(sizes.shape[0])
    matches = DETECT_SHARE * float(pp.sum())
    if budget <= 0 or matches <= 0:
        return phi
    w = neyman_weights(sizes, pp, np.asarray(s1, float), np.asarray(s0, float), alpha)
    n = floored_allocation(budget, sizes, w, matches)
    for h in range(sizes.shape[0]):
        f = detection_floor(int(sizes[h]), matches, DETECT_MISS)
        if n[h] < f:
            break
        phi[h] = f / budget
    return phi


@dataclass(frozen=True)
class OasisInit:
    """The outcome of seed 002's Algorithm 2 on a set of strata."""

    pi0: np.ndarray      # π̂^(0): mean prior probability per stratum
    lam: np.ndarray      # λ_k: mean prediction per stratum
    f0: float            # F̂_α^(0)


def initialise(strata: Strata, prior: np.ndarray, predictions: np.ndarray,
               alpha: float) -> OasisInit:
    """Seed 002, Algorithm 2: stratum means of the prior probabilities and predictions, and the
    initial F-measure guess."""
    sizes = strata.sizes.astype(np.float64)
    label = strata.codes   # one scatter, then two sequential weighted counts
    pi0 = np.clip(np.bincount(label, weights=prior, minlength=strata.count) / sizes, 0.0, 1.0)
    lam = np.bincount(label, weights=predictions, minlength=strata.count) / sizes
    return OasisInit(pi0, lam, initial_f(alpha, sizes, pi0, lam))


def _check_args(alpha: float, epsilon: float, n_strata: int, strata: str,
                prior_strength: float | None, v_star: str) -> None:
    if not 0.0 <= alpha <= 1.0:
        raise ValueError(f"alpha must be in [0, 1], got {alpha}")
    if not 0.0 < epsilon <= 1.0:
        raise ValueError(f"epsilon must be in (0, 1], got {epsilon}")
    if int(n_strata) < 1:
        raise ValueError(f"n_strata must be at least 1, got {n_strata}")
    if strata not in STRATA_METHODS:
        raise ValueError(f"unknown stratification {strata!r} (expected 'csf' or 'equal')")
    if prior_strength is not None and not prior_strength > 0:
        raise ValueError(f"prior_strength must be positive, got {prior_strength}")
    if v_star not in V_STAR_FORMS:
        raise ValueError(f"unknown v_star form {v_star!r} (expected 'paper' or 'rms')")


__all__ = ["DEFAULT_DEFENSIVE", "DEFAULT_PRIOR_STRENGTH", "OasisInit", "STRATA_METHODS",
           "V_STAR_FORMS", "VStar", "defensive_mixture", "detection_shares", "epsilon_greedy",
           "initial_f", "initialise", "logistic", "oasis_strata", "optimal_stratum_weights",
           "posterior_mean", "rescaled_logistic", "split_halves"]

"""Where an on-demand campaign's arrays meet the core: joint (mixture) estimates of every system,
the realised precision interval of one system, and the plan of a new submission's sample.

Arrays, no I/O (the campaign and the simulations both call these):

* ``memb`` (U × m, bool): which of the universe's U pooled items each system output, systems in
  order of arrival; system k's distribution p_k is uniform over its output X_k (instance-level
  scores), the pool's uniform over the union;
* the sampled sets (*proposals*), 2m of them: ``own`` k (index k) is uniform over X_k; ``novel``
  k (index m + k) is uniform over N_k = X_k minus every earlier system's output (empty for the
  first system). N_k depends only on the submissions, never on the draws or the labels, so it is
  a fixed proposal like any other;
* draws: ``src[t]`` the proposal draw t came from, ``item[t]`` its row of the universe, ``f[t]``
  its label (NaN while unlabelled or skipped: such draws are left out, which assumes the missing
  labels are missing at random);
* the exhaustively annotated units (:class:`Units`).

Precision: the self-normalised mixture estimate over every proposal's draws
(:func:`assay.core.mixture.ratio_mixture_mean`; ``normalised=False``: the seed's (M1),
:func:`assay.core.mixture.mixture_mean`) with one optimal mixture per system
(:func:`assay.core.mixture.optimal_weights_fast`); recall θ̂ν̂
(:func:`assay.core.open_world.open_world_recall`); before any unit is annotated only the pooled
(closed-world) recall is defined.

A new submission is sampled from its own set or from its novel set, whichever the conservative
bound says needs fewer draws (:func:`plan`): the part of its output that earlier systems share is
already sampled by their draws, so new labels go where nothing was sampled yet.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import stats

from assay.core.mixture import (draws_needed, mixture_mean, model_variance,
                                 optimal_weights_fast, ratio_mixture_mean)
from assay.core.open_world import (RecallParts, closed_world_parts, joint_estimates,
                                   open_world_recall)
from assay.core.types import Estimate

RULES = ("optimal", "overlap", "own")
OWN, NOVEL = "own", "novel"
DEFENSIVE = 0.05


@dataclass(frozen=True)
class Units:
    """Exhaustively annotated units: a_u, b_u, c_ui (units × m) and the corpus's units."""

    in_pool: np.ndarray
    true_items: np.ndarray
    found: np.ndarray
    n_units: int


@dataclass(frozen=True)
class Universe:
    """The pooled items' membership (systems in order of arrival)."""

    memb: np.ndarray

    @property
    def m(self) -> int:
        return int(self.memb.shape[1])

    @property
    def sizes(self) -> np.ndarray:
        return self.memb.sum(axis=0)

    def novel(self, memb: np.ndarray | None = None) -> np.ndarray:
        """N_k: items of X_k that no earlier system output (none for the first system)."""
        mb = self.memb if memb is None else memb
        before = np.zeros(mb.shape, dtype=bool)
        if mb.shape[1] > 1:
            before[:, 1:] = np.cumsum(mb, axis=1)[:, :-1] > 0
        out = mb & ~before
        out[:, 0] = False
        return out

    def density(self) -> np.ndarray:
        """Target densities: p_k(x) for every system k and, last column, the pool's."""
        memb = self.memb.astype(np.float64)
        return np.column_stack([memb / np.maximum(self.sizes, 1), np.ones(len(memb))
                                / max(len(memb), 1)])

    def proposals(self, memb: np.ndarray | None = None) -> np.ndarray:
        """Proposal densities (rows × 2m): own sets, then novel sets."""
        mb = self.memb if memb is None else memb
        nov = self.novel(mb)
        return np.column_stack([mb / np.maximum(self.sizes, 1),
                                nov / np.maximum(self.novel().sum(axis=0), 1)])

    def patterns(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Distinct rows: target densities (p × m), proposal densities (p × 2m), counts."""
        pats, mult = np.unique(self.memb, axis=0, return_counts=True)
        return pats / np.maximum(self.sizes, 1), self.proposals(pats), mult


def _floor_on(n: np.ndarray, i: int, m: int) -> int:
    return i if n[i] > 0 else m + i


def mixtures(uni: Universe, n: np.ndarray, rate: float, rule: str = "optimal",
             only: list[int] | None = None, normalised: bool = True) -> dict[int, np.ndarray]:
    """One mixture π over the 2m proposals per system (``only`` those): ``optimal`` (least
    model variance, :func:`assay.core.mixture.optimal_weights_fast`), ``overlap`` (kbp-online's
    heuristic π_k ∝ n_k Σ_x p_i(x) Q_k(x)) or ``own`` (the system's own draws alone: simple,
    per-system sampling)."""
    m = uni.m
    targets = range(m) if only is None else only
    if rule == "own":
        return {i: np.eye(2 * m)[i] for i in targets}
    tp, qp, mult = uni.patterns()
    if rule == "overlap":
        out = {}
        for i in targets:
            w = np.asarray(n, float) * ((tp[:, i] * mult) @ qp)
            out[i] = defend(w / w.sum(), n)
        return out
    return {i: defend(optimal_weights_fast(qp, n, i, rate, mult, normalised=normalised,
                                           target_density=tp[:, i],
                                           floor_on=_floor_on(n, i, m)), n)
            for i in targets}


def defend(pi: np.ndarray, n: np.ndarray, share: float = DEFENSIVE) -> np.ndarray:
    """(1 − share)·π + share·(balance weights): every set with draws keeps a weight of at least
    share·n_j/Σn, so q is bounded below wherever any set samples and no importance weight
    explodes — in particular for the pool, whose precision each system's mixture also
    estimates (defensive importance sampling, Hesterberg 1995).

    >>> defend(np.array([1.0, 0.0]), np.array([10, 10])).tolist()
    [0.975, 0.025]
    """
    n = np.asarray(n, dtype=np.float64)
    return (1 - share) * np.asarray(pi, dtype=np.float64) + share * n / n.sum()


def _moments(uni: Universe, src: np.ndarray, item: np.ndarray, f: np.ndarray,
             pis: dict[int, np.ndarray], normalised: bool = True
             ) -> tuple[np.ndarray, np.ndarray]:
    mean = ratio_mixture_mean if normalised else mixture_mean
    ok = ~np.isnan(f)
    m = uni.m
    q_all, t_all = uni.proposals(), uni.density()
    dens, tgt = q_all[item[ok]], t_all[item[ok]]
    n = np.bincount(src[ok], minlength=2 * m)
    mu, cov = np.full((m, 2), np.nan), np.full((m, 2, 2), np.nan)
    for i, pi in pis.items():
        if n[i] + n[m + i] < 2:
            continue
        if np.all(q_all @ pi > 0):              # the mixture covers the pool: both columns
            mu[i], cov[i] = mean(src[ok], dens, tgt[:, [i, m]], f[ok], pi)
        else:                                   # e.g. the system's own draws alone
            e, c = mean(src[ok], dens, tgt[:, [i]], f[ok], pi)
            mu[i, 0], cov[i, 0, 0] = e[0], c[0, 0]
    return mu, cov


def estimate(uni: Universe, src: np.ndarray, item: np.ndarray, f: np.ndarray,
             units: Units | None, confidence: float = 0.90, rule: str = "optimal",
             normalised: bool = True) -> tuple[dict[str, list[Estimate]], RecallParts]:
    """Every system's precision, recall (θ̂ν̂), F1, and the pooled recall beside (module
    docstring); the mixture rule as in :func:`mixtures`."""
    m = uni.m
    ok = ~np.isnan(f)
    n = np.bincount(src[ok], minlength=2 * m)
    rate = float(np.mean(f[ok])) if ok.any() else 0.5
    pis = mixtures(uni, n, rate, rule, [i for i in range(m) if n[i] + n[m + i] > 0],
                   normalised)
    mu, cov = _moments(uni, src, item, f, pis, normalised)
    sizes, pool = uni.sizes, len(uni.memb)
    if units is not None and len(units.true_items) > 0:
        parts = open_world_recall(mu, cov, sizes, pool, units.in_pool, units.true_items,
                                  units.found, units.n_units)
    else:
        parts = closed_world_parts(mu, cov, sizes, pool)
    seen, first = np.unique(item[ok], return_index=True)
    true_seen = f[ok][first] == 1
    succ = uni.memb[seen][true_seen].sum(axis=0)
    fail = uni.memb[seen][~true_seen].sum(axis=0)
    return joint_estimates(mu, cov, succ, fail, parts, confidence), parts


def precision_half_width(uni: Universe, src: np.ndarray, item: np.ndarray, f: np.ndarray,
                         target: int, confidence: float = 0.90, normalised: bool = True
                         ) -> tuple[float, float]:
    """System ``target``'s precision estimate and the half-width of its (Wald) interval from
    every labelled draw, under its optimal mixture; (NaN, inf) before it has two draws."""
    m = uni.m
    ok = ~np.isnan(f)
    n = np.bincount(src[ok], minlength=2 * m)
    if n[target] + n[m + target] < 2:
        return math.nan, math.inf
    pis = mixtures(uni, n, float(np.mean(f[ok])), "optimal", [target], normalised)
    mu, cov = _moments(uni, src, item, f, pis, normalised)
    z = float(stats.norm.ppf(0.5 + confidence / 2))
    return float(mu[target, 0]), z * math.sqrt(max(float(cov[target, 0, 0]), 0.0))


def plan(uni: Universe, src: np.ndarray, item: np.ndarray, f: np.ndarray, target: int,
         half_width: float, confidence: float, cap: int, minimum: int = 10,
         normalised: bool = True) -> tuple[int, str]:
    """How many new draws, and from which of system ``target``'s sets (own or novel), bring the
    conservative bound on its precision half-width to ``half_width``
    (:func:`assay.core.mixture.draws_needed`), given every draw so far: the set whose draws
    are expected to need fewer new labels (a draw on an item already labelled is free).
    The rate interval the bound maximises over: the system's current interval when it has
    draws; before, a 95% Wilson interval from the labelled items of its output (a planning
    value only); (0, 1) when none is labelled."""
    m = uni.m
    ok = ~np.isnan(f)
    n = np.bincount(src[ok], minlength=2 * m).astype(np.float64)
    est, hw = precision_half_width(uni, src, item, f, target, confidence, normalised)
    if math.isfinite(hw):
        rate: tuple[float, float] = (max(est - hw, 0.0), min(est + hw, 1.0))
    else:
        mine = uni.memb[item[ok], target]
        k, t = float(f[ok][mine].sum()), float(mine.sum())
        rate = (0.0, 1.0) if t == 0 else _wilson(k, t)
    tp, qp, mult = uni.patterns()
    rates = pattern_rates(uni, item[ok], f[ok], target) if RATE_MODEL else None
    z = float(stats.norm.ppf(0.5 + confidence / 2))
    fresh = n[target] + n[m + target] == 0
    if rates is not None and not fresh:
        half_width = _calibrated(uni, n, target, qp, tp, mult, rates, hw, half_width, z,
                                 normalised)
    labelled = np.zeros(len(uni.memb), dtype=bool)
    labelled[item[ok]] = True
    best = (True, math.inf, cap + 1, OWN)     # (misses the width, new labels, draws, set)
    for kind, k in ((OWN, target), (NOVEL, m + target)):
        if kind == NOVEL and (target == 0 or not uni.novel()[:, target].any()):
            continue
        if kind == NOVEL and fresh and n[:target].sum() == 0:
            continue
        # a set not drawn from yet gets at least ``minimum`` draws (two draws of a new set
        # give its variance a noisy estimate); a top-up of a set already drawn from, one
        least = min(minimum, cap) if n[k] == 0 else 1
        try:
            d = draws_needed(qp, n, target, half_width, z, rate, cap, mult,
                             minimum=least, normalised=normalised,
                             target_density=tp[:, target], add_to=k, rates=rates)
            if OPTIMAL_PLAN and d > 1:
                d = _refine(qp, tp[:, target], mult, n, target, k, d, half_width, z, rate,
                            normalised, least, rates)
        except ValueError:                    # the set does not cover the output: skip it
            continue
        members = uni.memb[:, target] if kind == OWN else uni.novel()[:, target]
        cost = d * float(np.mean(~labelled[members]))   # draws on labelled items are free
        # a set that cannot reach the width within the cap (a small novel part: the variance
        # sits in the shared part) loses to one that can; among those, fewer new labels win
        reach = d < cap
        best = min(best, (not reach, cost, d, kind))
    return min(best[2], cap), best[3]


OPTIMAL_PLAN = True
RATE_MODEL = True
CALIBRATION = (0.25, 4.0)


def _calibrated(uni: Universe, n: np.ndarray, target: int, qp: np.ndarray, tp: np.ndarray,
                mult: np.ndarray, rates: np.ndarray, hw: float, half_width: float, z: float,
                normalised: bool) -> float:
    """The half-width the planning model must reach so that the realised one reaches
    ``half_width``: the model's variance at the current draws and the estimate's differ by a
    factor κ = V̂/V_model (the rates are a model, the draws a sample), taken to hold for the
    next few draws too; κ kept within :data:`CALIBRATION`."""
    m = uni.m
    pi = defend(optimal_weights_fast(qp, n, target, 0.5, mult, normalised=normalised,
                                     target_density=tp[:, target],
                                     floor_on=_floor_on(n, target, m)), n)
    v = model_variance(qp, n, target, pi, 0.5, mult, normalised, tp[:, target], rates)
    if not (v > 0 and math.isfinite(hw) and hw > 0):
        return half_width
    kappa = float(np.clip((hw / z) ** 2 / v, *CALIBRATION))
    return half_width / math.sqrt(kappa)


def pattern_rates(uni: Universe, item: np.ndarray, f: np.ndarray, target: int,
                  prior: float = 2.0) -> np.ndarray:
    """A planning rate for each distinct membership pattern (the rows of
    :meth:`Universe.patterns`): the labelled share of true items among system ``target``'s
    items output by as many systems (the vote count v), shrunk towards that share over every
    system's items with v votes (weight ``prior``), itself shrunk towards the overall labelled
    rate (weight 1). Within a pattern every item has the same proposal densities, so the
    labelled items of a pattern are a uniform sample of it; the vote count pools patterns
    whose rates are alike (items that many systems output are more often true). A planning
    value only: the estimates and their intervals never use it.

    >>> uni = Universe(np.array([[1, 0], [1, 1], [0, 1]], dtype=bool))
    >>> pattern_rates(uni, np.array([0, 1]), np.array([0.0, 1.0]), 0).round(2).tolist()
    [0.25, 0.17, 0.83]
    """
    pats, inv = np.unique(uni.memb, axis=0, return_inverse=True)
    inv = np.asarray(inv).reshape(-1)
    votes = pats.sum(axis=1)
    m = uni.m
    seen, first = np.unique(np.asarray(item, dtype=np.int64), return_index=True)
    lab = np.asarray(f, dtype=np.float64)[first]
    overall = float(lab.mean()) if lab.size else 0.5
    v_seen, mine = votes[inv[seen]], pats[inv[seen], target]
    k_all = np.bincount(v_seen, weights=lab, minlength=m + 1)
    n_all = np.bincount(v_seen, minlength=m + 1)
    k_own = np.bincount(v_seen[mine], weights=lab[mine], minlength=m + 1)
    n_own = np.bincount(v_seen[mine], minlength=m + 1)
    r_all = (k_all + overall) / (n_all + 1.0)
    r_own = (k_own + prior * r_all) / (n_own + prior)
    return np.where(pats[:, target], r_own[votes], r_all[votes])


def _refine(qp: np.ndarray, tdens: np.ndarray, mult: np.ndarray, n: np.ndarray, target: int,
            k: int, d_max: int, half_width: float, z: float, rate: tuple[float, float],
            normalised: bool, minimum: int, rates: np.ndarray | None = None) -> int:
    """The least d ≤ ``d_max`` (the overlap-weights bound's answer) whose bound under the
    optimal mixture for n + d meets the width; bisection."""
    m = len(n) // 2

    def ok(d: int) -> bool:
        nn = n.copy()
        nn[k] += d
        pi = defend(optimal_weights_fast(qp, nn, target, 0.5, mult, normalised=normalised,
                                         target_density=tdens,
                                         floor_on=_floor_on(nn, target, m)), nn)
        v = model_variance(qp, nn, target, pi, rate, mult, normalised, tdens, rates)
        return z * math.sqrt(v) <= half_width
    lo, hi = minimum, d_max
    if ok(lo):
        return lo
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if ok(mid) else (mid, hi)
    return hi


def next_draws(uni: Universe, src: np.ndarray, item: np.ndarray, f: np.ndarray, target: int,
               rounds: int, room: int, half_width: float, confidence: float,
               max_rounds: int = 4, minimum: int = 10, normalised: bool = True
               ) -> tuple[int, str]:
    """The on-demand rule for a submission (the campaign and the simulations share it): 0 —
    stop — when system ``target``'s realised precision half-width is at most ``half_width``,
    when ``room`` (what the caps leave) is used up or ``max_rounds`` rounds were made; else
    :func:`plan`'s number of draws (within ``room``) and set."""
    _, hw = precision_half_width(uni, src, item, f, target, confidence, normalised)
    if hw <= half_width or room <= 0 or rounds >= max_rounds:
        return 0, OWN
    d, kind = plan(uni, src, item, f, target, half_width, confidence, room, minimum,
                   normalised)
    return max(2, min(d, room)) if room >= 2 else room, kind


def proposal_index(system: np.ndarray, kind: np.ndarray, m: int) -> np.ndarray:
    """The proposal index of each draw: its system's position, plus m for a novel set."""
    return np.asarray(system, dtype=np.int64) + m * (np.asarray(kind) == NOVEL)


def _wilson(k: float, n: float, z: float = 1.96) -> tuple[float, float]:
    p = k / n
    mid = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(mid - half, 0.0), min(mid + half, 1.0)


__all__ = ["DEFENSIVE", "NOVEL", "OWN", "RULES", "Units", "Universe", "defend", "estimate",
           "mixtures", "next_draws",
           "plan", "precision_half_width", "proposal_index"]

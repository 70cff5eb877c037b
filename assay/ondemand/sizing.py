"""How many new draws a stage of a submission needs, and from which of its sets (on-demand rule,
issue 12 must-have 5; seed 000's "bisection on a conservative variance bound, or better"); when a
submission draws, and on which labels a stage is sized, is :mod:`assay.ondemand.planning`.

The planning variance is :func:`assay.core.mixture_variance.model_variance` under the optimal mixture,
with the labels Bernoulli at a rate per membership pattern (:func:`pattern_rates`) instead of
the worst constant rate of an interval: where systems' outputs differ, the items few systems
output are mostly false, and the constant-rate bound overstated a low-precision system's
variance by up to 1.5×, so its first round overshot the width. In rounds that may read the
submission's own labels (not the two-stage rule's second stage,
:func:`assay.ondemand.planning.next_draws`) the model is calibrated to the realised variance
(:func:`_calibrated`). Three sets compete for the new draws of system t — its output (``own``),
the part no earlier system output (``novel``), and a *fill* proposal that raises the
least-sampled items of its output to one level (:func:`assay.ondemand.joint.fill_density`) — and
the one expected to need the fewest new labels (a draw on an item already labelled is free) among
those that reach the width within the cap wins. Only the number and place of draws depend on the
model; the estimates never do.
"""
from __future__ import annotations

import math

import numpy as np
from scipy import stats

from assay.core.mixture import optimal_weights_fast
from assay.core.mixture_variance import draws_needed, model_variance
from assay.core.search import least_reaching
from assay.ondemand.joint import (FILL, NOVEL, OWN, Universe, _floor_on, defend, drawn,
                                  fill_density, precision_half_width, water_fill)
from assay.ondemand.regions import post_stratified_variance, regions

OPTIMAL_PLAN = True
RATE_MODEL = True
FILL_PLAN = True
CALIBRATION = (0.25, 4.0)
KINDS = (OWN, NOVEL, FILL)


def plan(uni: Universe, src: np.ndarray, item: np.ndarray, f: np.ndarray, target: int,
         half_width: float, confidence: float, cap: int, minimum: int = 10,
         normalised: bool = True, kinds: tuple[str, ...] = KINDS, least_drawn: int = 1,
         calibrate: bool = True) -> tuple[int, str]:
    """:func:`_plan`'s draws, raised to what the variance floor of the estimate needs
    (:func:`region_draws`: the post-stratified variance over the output's regions,
    :mod:`assay.ondemand.regions`), within ``cap``; ``kinds``: the sets allowed;
    ``least_drawn`` and ``calibrate`` as in :func:`_plan`."""
    d, kind = _plan(uni, src, item, f, target, half_width, confidence, cap, minimum,
                    normalised, kinds, least_drawn, calibrate)
    z = float(stats.norm.ppf(0.5 + confidence / 2))
    low = min(d, cap)
    need = region_draws(uni, item, f, target, kind, half_width, z, low, cap)
    if need >= cap and kind == NOVEL and OWN in kinds:   # the novel part alone cannot lower the floor of
        own = region_draws(uni, item, f, target, OWN, half_width, z, low, cap)   # the rest
        if own < cap:
            return own, OWN
    return need, kind


def region_draws(uni: Universe, item: np.ndarray, f: np.ndarray, target: int, kind: str,
                 half_width: float, z: float, low: int, cap: int) -> int:
    """The least d in [low, cap] (cap if none) of new draws from system ``target``'s
    ``kind`` set (own: its output; novel: its novel part, both uniform over the set; fill: the
    fill proposal's density once it exists, else taken as uniform over the output) whose expected new labels per region bring z·√V (the post-stratified floor) to
    ``half_width``, each region's new labels true at its Jeffreys posterior mean rate.

    >>> uni = Universe(np.array([[1, 0], [1, 1], [1, 1], [1, 0]], dtype=bool))
    >>> region_draws(uni, np.array([1, 2]), np.array([1.0, 1.0]), 0, OWN, 0.2, 1.96, 1, 50)
    3
    """
    where, size, n, k = regions(uni.memb, item, f, target, uni.strata())
    members = uni.memb[:, target] if kind != NOVEL else uni.novel()[:, target]
    into = np.bincount(where[members], minlength=len(size)) / max(int(members.sum()), 1)
    if kind == FILL and uni.fill is not None and uni.fill[:, target].any():
        dens = np.asarray(uni.fill[:, target], dtype=np.float64)    # its own shape
        on = where >= 0
        into = np.bincount(where[on], weights=dens[on], minlength=len(size)) / dens.sum()
    rate = (k + 0.5) / (n + 1)

    def width(d: int) -> float:
        nn = np.minimum(n + d * into, size)
        kk = k + rate * (nn - n)
        return z * math.sqrt(post_stratified_variance(size, nn, kk))
    return least_reaching(width, half_width, low, cap)


def _plan(uni: Universe, src: np.ndarray, item: np.ndarray, f: np.ndarray, target: int,
          half_width: float, confidence: float, cap: int, minimum: int = 10,
          normalised: bool = True, kinds: tuple[str, ...] = KINDS, least_drawn: int = 1,
          calibrate: bool = True) -> tuple[int, str]:
    """How many new draws, and from which of system ``target``'s sets (own, novel or fill),
    bring its planning variance (module docstring) to ``half_width``, given every draw so
    far. A set not drawn from yet gets at least ``minimum`` draws (a set of two draws has a
    noisy variance); a top-up adds to a set already drawn from unless that set cannot reach
    the width. The rate interval (used when :data:`RATE_MODEL` is off): the system's current
    interval when it has draws; before, a 95% Wilson interval from the labelled items of its
    output; (0, 1) when none is labelled. ``least_drawn``: the fewest new draws asked of a set
    already drawn from (0: the plan may answer that none is needed); ``calibrate``: scale
    the model to the realised variance (:func:`_calibrated`; off when ``f`` holds planning
    values instead of labels,
    :func:`assay.ondemand.planning.planning_labels`)."""
    m = uni.m
    ok = ~np.isnan(f)
    n = np.bincount(src[ok], minlength=3 * m).astype(np.float64)
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
    fresh = drawn(n, target, m) == 0
    if rates is not None and not fresh and calibrate:
        half_width = _calibrated(n, target, qp, tp, mult, rates, hw, half_width, z,
                                 normalised)
    unlabelled = np.ones(len(uni.memb))
    unlabelled[item[ok]] = 0.0
    best: tuple = (True, math.inf, cap + 1, kinds[0])   # (misses the width, new labels, draws, set)
    for kind, k in ((OWN, target), (NOVEL, m + target), (FILL, 2 * m + target)):
        if kind not in kinds:
            continue
        if kind == NOVEL and (target == 0 or not uni.novel()[:, target].any()):
            continue
        if kind == NOVEL and fresh and n[:target].sum() == 0:
            continue
        if kind == FILL and (n[k] == 0 and (not FILL_PLAN or n.sum() == 0)) and \
                kinds != (FILL,):
            continue
        if not fresh and n[k] == 0 and kind != FILL:
            continue
        least = min(minimum, cap) if n[k] == 0 else least_drawn
        try:
            if kind == FILL and n[k] == 0 and not (uni.fill is not None
                                                    and uni.fill[:, target].any()):
                d = _fill_needed(uni, n, target, half_width, z, cap, least, normalised, rates)
                dens = fill_density(uni, n, target, d)
            else:
                d = draws_needed(qp, n, target, half_width, z, rate, cap, mult,
                                 minimum=least, normalised=normalised,
                                 target_density=tp[:, target], add_to=k, rates=rates)
                if OPTIMAL_PLAN and d > 1:
                    d = _refine(qp, tp[:, target], mult, n, target, k, d, half_width, z,
                                rate, normalised, least, rates)
                dens = uni.proposals()[:, k]
        except ValueError:                    # the set does not cover the output: skip it
            continue
        cost = d * float(dens @ unlabelled)   # expected new labels: labelled items are free
        # a set that cannot reach the width within the cap (a small novel part: the variance
        # sits in the shared part) loses to one that can; among those, fewer new labels win
        best = min(best, (d >= cap, cost, d, kind))
    return min(best[2], cap), best[3]


def _fill_needed(uni: Universe, n: np.ndarray, target: int, half_width: float, z: float,
                 cap: int, least: int, normalised: bool, rates: np.ndarray | None) -> int:
    """The least d in [``least``, ``cap``] whose fill proposal (recomputed for each d) brings
    the planning variance under the optimal mixture to the width (:func:`least_reaching`)."""
    m = uni.m
    t, q, first, _, mult = uni.groups()
    tp, qp = t[first][:, target], q[first].copy()
    have = qp @ n
    k = 2 * m + target

    def width(d: int) -> float:
        nn = n.copy()
        nn[k] = d
        qp[:, k] = water_fill(tp, have, mult, d)
        return z * math.sqrt(_optimal_variance(qp, nn, target, tp, mult, 0.5, normalised, rates))
    return least_reaching(width, half_width, max(least, 1), max(cap, least, 1))


def _optimal_variance(qp: np.ndarray, n: np.ndarray, target: int, tdens: np.ndarray,
                      mult: np.ndarray, rate: float | tuple[float, float], normalised: bool,
                      rates: np.ndarray | None) -> float:
    """The planning variance (:func:`model_variance` at ``rate``, or at ``rates``) of system
    ``target`` under the defended optimal mixture for the draws ``n`` (3m sets)."""
    pi = defend(optimal_weights_fast(qp, n, target, 0.5, mult, normalised=normalised,
                                     target_density=tdens,
                                     floor_on=_floor_on(n, target, len(n) // 3)), n)
    return model_variance(qp, n, target, pi, rate, mult, normalised, tdens, rates)


def _calibrated(n: np.ndarray, target: int, qp: np.ndarray, tp: np.ndarray, mult: np.ndarray,
                rates: np.ndarray, hw: float, half_width: float, z: float,
                normalised: bool) -> float:
    """The half-width the planning model must reach so that the realised one reaches
    ``half_width``: the model's variance at the current draws and the estimate's differ by a
    factor κ = V̂/V_model (the rates are a model, the draws a sample), taken to hold for the
    next few draws too; κ kept within :data:`CALIBRATION`."""
    v = _optimal_variance(qp, n, target, tp[:, target], mult, 0.5, normalised, rates)
    if not (v > 0 and math.isfinite(hw) and hw > 0):
        return half_width
    kappa = float(np.clip((hw / z) ** 2 / v, *CALIBRATION))
    return half_width / math.sqrt(kappa)


def pattern_rates(uni: Universe, item: np.ndarray, f: np.ndarray, target: int,
                  prior: float = 2.0) -> np.ndarray:
    """A planning rate for each distinct row (the patterns of :meth:`Universe.patterns`): the
    labelled share of true items among system ``target``'s items output by as many systems
    (the vote count v), shrunk towards that share over every system's items with v votes
    (weight ``prior``), itself shrunk towards the overall labelled rate (weight 1). Within a
    pattern every item has the same proposal densities, so the labelled items of a pattern are
    a uniform sample of it; the vote count pools patterns whose rates are alike (items that
    many systems output are more often true). A planning value only: the estimates and their
    intervals never use it.

    >>> uni = Universe(np.array([[1, 0], [1, 1], [0, 1]], dtype=bool))
    >>> pattern_rates(uni, np.array([0, 1]), np.array([0.0, 1.0]), 0).round(2).tolist()
    [0.25, 0.17, 0.83]
    """
    _, _, first, inv, _ = uni.groups()
    pats = uni.memb[first]
    votes = pats.sum(axis=1)
    m = uni.m
    seen, where = np.unique(np.asarray(item, dtype=np.int64), return_index=True)
    lab = np.asarray(f, dtype=np.float64)[where]
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
    """The least d ≤ ``d_max`` (the overlap-weights bound's answer) whose planning variance
    under the optimal mixture for n + d meets the width (:func:`least_reaching`)."""
    def width(d: int) -> float:
        nn = n.copy()
        nn[k] += d
        return z * math.sqrt(_optimal_variance(qp, nn, target, tdens, mult, rate, normalised,
                                               rates))
    return least_reaching(width, half_width, minimum, d_max, check_high=False)


def new_fill(uni: Universe, src: np.ndarray, f: np.ndarray, target: int, d: int) -> np.ndarray:
    """The fill density (per row of the universe) that :func:`plan` planned d draws of: the
    draw counts are those of the labelled draws, as in the plan."""
    ok = ~np.isnan(f)
    n = np.bincount(src[ok], minlength=3 * uni.m).astype(np.float64)
    return fill_density(uni, n, target, d)


def _wilson(k: float, n: float, z: float = 1.96) -> tuple[float, float]:
    p = k / n
    mid = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(mid - half, 0.0), min(mid + half, 1.0)


__all__ = ["CALIBRATION", "FILL_PLAN", "KINDS", "OPTIMAL_PLAN", "RATE_MODEL", "new_fill",
           "pattern_rates", "plan", "region_draws"]

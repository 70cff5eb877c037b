"""Where an on-demand campaign's arrays meet the core: joint (mixture) estimates of every system,
the realised precision interval of one system, and the plan of a new submission's sample size.

Arrays, no I/O (the campaign and the simulations both call these):

* ``memb`` (U × m, bool): which of the universe's U pooled items each system output; system k's
  distribution p_k is uniform over its output (instance-level scores), the pool's uniform over
  the union;
* draws: ``src[t]`` the system whose distribution draw t came from, ``item[t]`` its row of the
  universe, ``f[t]`` its label (NaN while unlabelled or skipped: such draws are left out, which
  assumes the missing labels are missing at random);
* the exhaustively annotated units (:class:`Units`): per unit the true items in the pool (a_u),
  all its true items (b_u) and each system's (c_ui), and the corpus's number of units.

Precision: :func:`assay.core.mixture.mixture_mean` with one optimal mixture per system
(:func:`assay.core.mixture.optimal_weights`, the pooled label rate as μ̄); recall: θ̂ν̂
(:func:`assay.core.open_world.open_world_recall`); before any unit is annotated only the pooled
(closed-world) recall is defined.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import stats

from assay.core.mixture import (draws_needed, mixture_mean, optimal_weights_fast,
                                 overlap_weights)
from assay.core.open_world import (RecallParts, closed_world_parts, joint_estimates,
                                   open_world_recall)
from assay.core.types import Estimate

RULES = ("optimal", "overlap", "own")


@dataclass(frozen=True)
class Units:
    """Exhaustively annotated units: a_u, b_u, c_ui (units × m) and the corpus's units."""

    in_pool: np.ndarray
    true_items: np.ndarray
    found: np.ndarray
    n_units: int


@dataclass(frozen=True)
class Universe:
    """The pooled items' membership, compressed to its distinct rows for the weight rules."""

    memb: np.ndarray

    @property
    def sizes(self) -> np.ndarray:
        return self.memb.sum(axis=0)

    def density(self) -> np.ndarray:
        """p_k(x) for every system k and, last column, the pool's (U × (m + 1))."""
        memb = self.memb.astype(np.float64)
        return np.column_stack([memb / np.maximum(self.sizes, 1), np.ones(len(memb))
                                / max(len(memb), 1)])

    def patterns(self) -> tuple[np.ndarray, np.ndarray]:
        """Distinct rows of p (patterns × m) and how many items share each."""
        pats, mult = np.unique(self.memb, axis=0, return_counts=True)
        return pats / np.maximum(self.sizes, 1), mult


def mixtures(uni: Universe, n: np.ndarray, rate: float, rule: str = "optimal",
             only: list[int] | None = None) -> dict[int, np.ndarray]:
    """One mixture π per system (``only`` those): ``optimal`` (model variance at μ̄ = ``rate``,
    :func:`assay.core.mixture.optimal_weights_fast`),
    ``overlap`` (kbp-online's heuristic) or ``own`` (the system's own draws alone: simple,
    per-system sampling)."""
    m = uni.memb.shape[1]
    targets = range(m) if only is None else only
    if rule == "own":
        return {i: np.eye(m)[i] for i in targets}
    pats, mult = uni.patterns()
    if rule == "overlap":
        ov = (pats * mult[:, None]).T @ pats
        src = np.repeat(np.arange(m), np.asarray(n, dtype=np.int64))
        w = overlap_weights(src, np.eye(m)[src], ov)
        return {i: w[i] for i in targets}
    return {i: optimal_weights_fast(pats, n, i, rate, mult) for i in targets}


def _moments(uni: Universe, src: np.ndarray, item: np.ndarray, f: np.ndarray,
             pis: dict[int, np.ndarray]) -> tuple[np.ndarray, np.ndarray, list[int]]:
    ok = ~np.isnan(f)
    dens = uni.density()[item[ok]]
    m = uni.memb.shape[1]
    mu, cov = np.full((m, 2), np.nan), np.full((m, 2, 2), np.nan)
    done = []
    for i, pi in pis.items():
        if np.bincount(src[ok], minlength=m)[i] < 2:
            continue
        if np.all(dens[:, :m] @ pi > 0):        # the mixture covers the pool: both columns
            mu[i], cov[i] = mixture_mean(src[ok], dens[:, :m], dens[:, [i, m]], f[ok], pi)
        else:                                   # e.g. the system's own draws alone
            e, c = mixture_mean(src[ok], dens[:, :m], dens[:, [i]], f[ok], pi)
            mu[i, 0], cov[i, 0, 0] = e[0], c[0, 0]
        done.append(i)
    return mu, cov, done


def estimate(uni: Universe, src: np.ndarray, item: np.ndarray, f: np.ndarray,
             units: Units | None, confidence: float = 0.90, rule: str = "optimal"
             ) -> tuple[dict[str, list[Estimate]], RecallParts]:
    """Every system's precision, recall (θ̂ν̂), F1, and the pooled recall beside (module
    docstring); the mixture rule as in :func:`mixtures`."""
    m = uni.memb.shape[1]
    ok = ~np.isnan(f)
    n = np.bincount(src[ok], minlength=m)
    rate = float(np.mean(f[ok])) if ok.any() else 0.5
    pis = mixtures(uni, n, rate, rule, only=[i for i in range(m) if n[i] > 0])
    mu, cov, _ = _moments(uni, src, item, f, pis)
    sizes, pool = uni.sizes, len(uni.memb)
    if units is not None and len(units.true_items) > 0:
        parts = open_world_recall(mu, cov, sizes, pool, units.in_pool, units.true_items,
                                  units.found, units.n_units)
    else:
        parts = closed_world_parts(mu, cov, sizes, pool)
    seen = np.unique(item[ok])
    true_seen = f[ok][np.unique(item[ok], return_index=True)[1]] == 1
    succ = uni.memb[seen][true_seen].sum(axis=0)
    fail = uni.memb[seen][~true_seen].sum(axis=0)
    return joint_estimates(mu, cov, succ, fail, parts, confidence), parts


def precision_half_width(uni: Universe, src: np.ndarray, item: np.ndarray, f: np.ndarray,
                         target: int, confidence: float = 0.90) -> tuple[float, float]:
    """System ``target``'s precision estimate and the half-width of its (Wald) interval from
    every labelled draw, under its optimal mixture; (NaN, inf) before it has two draws."""
    m = uni.memb.shape[1]
    ok = ~np.isnan(f)
    n = np.bincount(src[ok], minlength=m)
    if n[target] < 2:
        return math.nan, math.inf
    pis = mixtures(uni, n, float(np.mean(f[ok])), "optimal", only=[target])
    mu, cov, _ = _moments(uni, src, item, f, pis)
    z = float(stats.norm.ppf(0.5 + confidence / 2))
    return float(mu[target, 0]), z * math.sqrt(max(float(cov[target, 0, 0]), 0.0))


def plan(uni: Universe, src: np.ndarray, item: np.ndarray, f: np.ndarray, target: int,
         half_width: float, confidence: float, cap: int, minimum: int = 10) -> int:
    """How many new draws from system ``target`` bring the conservative bound on its precision
    half-width to ``half_width`` (:func:`assay.core.mixture.draws_needed`), given every draw
    so far. The rate interval the bound maximises over: the system's current interval when it
    has draws of its own; before, a 95% Wilson interval from the labelled items of its output
    (a planning value only); (0, 1) when none is labelled."""
    m = uni.memb.shape[1]
    ok = ~np.isnan(f)
    n = np.bincount(src[ok], minlength=m).astype(np.float64)
    est, hw = precision_half_width(uni, src, item, f, target, confidence)
    if math.isfinite(hw):
        rate: tuple[float, float] = (max(est - hw, 0.0), min(est + hw, 1.0))
    else:
        mine = uni.memb[item[ok], target]
        k, t = float(f[ok][mine].sum()), float(mine.sum())
        rate = (0.0, 1.0) if t == 0 else _wilson(k, t)
    pats, mult = uni.patterns()
    z = float(stats.norm.ppf(0.5 + confidence / 2))
    return draws_needed(pats, n, target, half_width, z, rate, cap, mult,
                        minimum=min(minimum, cap) if n[target] == 0 else 1)


def next_draws(uni: Universe, src: np.ndarray, item: np.ndarray, f: np.ndarray, target: int,
               rounds: int, room: int, half_width: float, confidence: float,
               max_rounds: int = 4, minimum: int = 10) -> int:
    """The on-demand rule for a submission (the campaign and the simulations share it): 0 —
    stop — when system ``target``'s realised precision half-width is at most ``half_width``,
    when ``room`` (what the caps leave) is used up or ``max_rounds`` rounds were made; else
    :func:`plan`'s number of draws, within ``room``."""
    _, hw = precision_half_width(uni, src, item, f, target, confidence)
    if hw <= half_width or room <= 0 or rounds >= max_rounds:
        return 0
    d = plan(uni, src, item, f, target, half_width, confidence, room, minimum)
    return max(1, min(d, room))


def _wilson(k: float, n: float, z: float = 1.96) -> tuple[float, float]:
    p = k / n
    mid = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(mid - half, 0.0), min(mid + half, 1.0)


__all__ = ["RULES", "Units", "Universe", "estimate", "mixtures", "next_draws", "plan",
           "precision_half_width"]

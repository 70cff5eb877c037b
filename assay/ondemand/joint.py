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
from contextlib import nullcontext
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy import stats

from assay.core.mixture import mixture_mean, optimal_weights_fast, ratio_mixture_mean
from assay.core.open_world import (RecallParts, closed_world_parts, joint_estimates,
                                   open_world_recall)
from assay.core.rows import unique_rows
from assay.core.types import Estimate
from assay.ondemand.regions import region_variance

try:            # many tiny L-BFGS problems: a threaded BLAS only spins (20x slower measured on a
    from threadpoolctl import ThreadpoolController   # busy 2-core machine)
except ImportError:                                   # pragma: no cover
    ThreadpoolController = None
_CONTROLLER: list = []          # one controller, made at the first call (see single_thread)

RULES = ("optimal", "overlap", "own")
OWN, NOVEL, FILL = "own", "novel", "fill"
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
    """The pooled items' membership (systems in order of arrival); optionally each system's
    *fill* proposal density over the rows (``fill``, rows × m, a zero column for a system
    without one; see :func:`fill_density`) and the systems' target distributions p_k
    (``target``, rows × m; default uniform over each output — instance-level scores; see
    :mod:`assay.ondemand.structured` for relation- and entity-level ones); the density of each
    system's own set (``own``, rows × m; default uniform over its output; structured sampling
    draws from a level's distribution instead)."""

    memb: np.ndarray
    fill: np.ndarray | None = None
    target: np.ndarray | None = None
    own: np.ndarray | None = None
    _cache: dict = field(default_factory=dict, compare=False, repr=False)

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

    def targets(self) -> np.ndarray:
        """p_k(x) for every row and system k."""
        if self.target is not None:
            return np.asarray(self.target, dtype=np.float64)
        return self.memb.astype(np.float64) / np.maximum(self.sizes, 1)

    def density(self) -> np.ndarray:
        """Target densities: p_k(x) for every system k and, last column, the pool's."""
        return np.column_stack([self.targets(), np.ones(len(self.memb))
                                / max(len(self.memb), 1)])

    def proposals(self) -> np.ndarray:
        """Proposal densities (rows × 3m): own sets, novel sets, fill proposals."""
        nov = self.novel()
        fill = (np.zeros(self.memb.shape) if self.fill is None
                else np.asarray(self.fill, dtype=np.float64))
        own = (self.memb / np.maximum(self.sizes, 1) if self.own is None
               else np.asarray(self.own, dtype=np.float64))
        return np.column_stack([own, nov / np.maximum(nov.sum(axis=0), 1), fill])

    def patterns(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Distinct rows: target densities (p × m), proposal densities (p × 3m), counts."""
        t, q, first, _, mult = self.groups()
        return t[first], q[first], mult

    def groups(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Every row's target and proposal densities; per distinct row (pattern) its first
        row; per row its pattern; per pattern its number of rows."""
        if "groups" in self._cache:
            return self._cache["groups"]
        t, q = self.targets(), self.proposals()
        # a fill density is a function of the membership row (it is made from the draw counts
        # and the densities of earlier sets, all functions of it): only p_k and the own
        # densities may differ between items of one membership pattern
        key = _row_keys(self.memb)
        extra = [np.ascontiguousarray(a, dtype=np.float64).view(np.uint8)
                 for a in (self.target, self.own) if a is not None]
        if extra:
            key = _row_keys(np.column_stack([key.view(np.uint8).reshape(len(key), -1)]
                                            + extra))
        _, first, inv, mult = np.unique(key, return_index=True, return_inverse=True,
                                        return_counts=True)
        inv = np.asarray(inv).reshape(-1)
        if self.fill is not None and not np.array_equal(q, q[first][inv]):
            # a fill that is no function of the membership (structured sampling: a level's
            # distribution, :mod:`assay.ondemand.structured`) splits the patterns further
            fill = np.ascontiguousarray(self.fill, dtype=np.float64).view(np.uint8)
            key = _row_keys(np.column_stack([key.view(np.uint8).reshape(len(key), -1), fill]))
            _, first, inv, mult = np.unique(key, return_index=True, return_inverse=True,
                                            return_counts=True)
            inv = np.asarray(inv).reshape(-1)
        out = (t, q, first, inv, mult)
        self._cache["groups"] = out
        return out

    def strata(self) -> np.ndarray | None:
        """Per row, a code of its proposal densities where they differ between items of one
        membership pattern (an ``own`` density or a structured fill, drawn by a level's
        distribution); None where the membership decides them (every set uniform on a
        membership region). Within a stratum every proposal is uniform."""
        if "strata" not in self._cache:
            out = None
            if self.own is not None or self.fill is not None:
                q = np.ascontiguousarray(self.proposals())
                _, inv = unique_rows(q, return_inverse=True)
                _, by_memb = unique_rows(self.memb, return_inverse=True)
                inv, by_memb = np.asarray(inv).reshape(-1), np.asarray(by_memb).reshape(-1)
                if len(unique_rows(np.column_stack([by_memb, inv]))) > by_memb.max() + 1:
                    out = inv
            self._cache["strata"] = out
        return self._cache["strata"]


def _row_keys(a: np.ndarray) -> np.ndarray:
    """One sortable scalar per row, equal exactly for equal rows (bool rows packed into
    integers when they fit, else the rows' bytes)."""
    a = np.ascontiguousarray(a)
    if a.dtype == bool:
        packed = np.packbits(a, axis=1)
        if packed.shape[1] <= 8:
            out = np.zeros((len(a), 8), dtype=np.uint8)
            out[:, :packed.shape[1]] = packed
            return out.view(np.uint64).reshape(-1)
        a = packed
    a = np.ascontiguousarray(a.view(np.uint8).reshape(len(a), -1))
    return a.view(np.dtype((np.void, a.shape[1]))).reshape(-1)


def drawn(n: np.ndarray, i: int, m: int) -> float:
    """Draws of system i's sets (own, novel, fill) in the counts n (3m,)."""
    return float(n[i] + n[m + i] + n[2 * m + i])


def _floor_on(n: np.ndarray, i: int, m: int) -> int:
    """The set of system i that keeps the mixture's floor: own, else novel, else fill."""
    return next((k for k in (i, m + i, 2 * m + i) if n[k] > 0), i)


def mixtures(uni: Universe, n: np.ndarray, rate: float, rule: str = "optimal",
             only: list[int] | None = None, normalised: bool = True) -> dict[int, np.ndarray]:
    """One mixture π over the 3m proposals per system (``only`` those): ``optimal`` (least
    model variance, :func:`assay.core.mixture.optimal_weights_fast`), ``overlap`` (kbp-online's
    heuristic π_k ∝ n_k Σ_x p_i(x) Q_k(x)) or ``own`` (the system's own draws alone: simple,
    per-system sampling)."""
    m = uni.m
    targets = range(m) if only is None else only
    if rule == "own":
        return {i: np.eye(3 * m)[i] for i in targets}
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


def single_thread() -> Any:
    """A context in which BLAS runs on one thread (threadpoolctl, when installed). One
    controller serves every call: ``threadpool_limits`` would scan the loaded libraries on each
    (1.5 ms a call); the BLAS libraries are loaded by the time this is first called (numpy's and
    scipy's, imported with this module)."""
    if ThreadpoolController is None:
        return nullcontext()
    if not _CONTROLLER:
        _CONTROLLER.append(ThreadpoolController())
    return _CONTROLLER[0].limit(limits=1)


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
    n = np.bincount(src[ok], minlength=3 * m)
    mu, cov = np.full((m, 2), np.nan), np.full((m, 2, 2), np.nan)
    for i, pi in pis.items():
        if drawn(n, i, m) < 2:
            continue
        if np.all(q_all @ pi > 0):              # the mixture covers the pool: both columns
            mu[i], cov[i] = mean(src[ok], dens, tgt[:, [i, m]], f[ok], pi)
        else:                                   # e.g. the system's own draws alone
            e, c = mean(src[ok], dens, tgt[:, [i]], f[ok], pi)
            mu[i, 0], cov[i, 0, 0] = e[0], c[0, 0]
    # floors: the post-stratified variance over membership regions (assay.ondemand.regions;
    # the delta variance vanishes when every labelled draw of an output is true)
    strata = uni.strata()
    pool = (region_variance(uni.memb, item, f, None, strata) if np.isfinite(mu[:, 1]).any()
            else 0.0)
    for i in pis:
        if np.isfinite(mu[i, 0]):
            cov[i, 0, 0] = max(cov[i, 0, 0], region_variance(uni.memb, item, f, i, strata))
        if np.isfinite(mu[i, 1]):
            cov[i, 1, 1] = max(cov[i, 1, 1], pool)
    return mu, cov


def estimate(uni: Universe, src: np.ndarray, item: np.ndarray, f: np.ndarray,
             units: Units | None, confidence: float = 0.90, rule: str = "optimal",
             normalised: bool = True) -> tuple[dict[str, list[Estimate]], RecallParts]:
    """Every system's precision, recall (θ̂ν̂), F1, and the pooled recall beside (module
    docstring); the mixture rule as in :func:`mixtures`."""
    m = uni.m
    ok = ~np.isnan(f)
    n = np.bincount(src[ok], minlength=3 * m)
    rate = float(np.mean(f[ok])) if ok.any() else 0.5
    with single_thread():
        pis = mixtures(uni, n, rate, rule, [i for i in range(m) if drawn(n, i, m) > 0],
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
    n = np.bincount(src[ok], minlength=3 * m)
    if drawn(n, target, m) < 2:
        return math.nan, math.inf
    pis = mixtures(uni, n, float(np.mean(f[ok])), "optimal", [target], normalised)
    mu, cov = _moments(uni, src, item, f, pis, normalised)
    z = float(stats.norm.ppf(0.5 + confidence / 2))
    return float(mu[target, 0]), z * math.sqrt(max(float(cov[target, 0, 0]), 0.0))




def proposal_index(system: np.ndarray, kind: np.ndarray, m: int) -> np.ndarray:
    """The proposal index of each draw: its system's position, plus m for a novel set, plus 2m
    for a fill proposal."""
    k = np.asarray(kind)
    return (np.asarray(system, dtype=np.int64) + m * (k == NOVEL).astype(np.int64)
            + 2 * m * (k == FILL).astype(np.int64))


def fill_density(uni: Universe, n: np.ndarray, target: int, d: int) -> np.ndarray:
    """System ``target``'s *fill* proposal for d new draws: with ñ(x) = Σ_j n_j Q_j(x) the
    draws the sets so far are expected to put on x, r(x) = (L p_target(x) − ñ(x))₊ / d, the
    level L such that Σ_x r(x) = 1 (water filling). Under the balance heuristic the
    self-normalised variance is μ(1 − μ) Σ_x p(x)²/ñ(x) (ñ the expected draws at x over all
    sets, :func:`assay.core.mixture_variance.model_variance` with π_j ∝ n_j); for d more draws,
    minimising Σ_x p²/(ñ + d r) over r on the simplex gives (Lagrange) ñ + d r ∝ p where
    r > 0: the new draws raise the least-sampled items of the output to one level and leave
    the well-sampled ones alone. The novel set (ñ = 0) and the own set (ñ ignored) are the two
    ends. A function of the submissions and the draw counts, not of the labels.

    >>> uni = Universe(np.array([[1, 0], [1, 1], [0, 1]], dtype=bool))
    >>> fill_density(uni, np.array([4, 0, 0, 0, 0, 0]), 1, 2).round(2).tolist()
    [0.0, 0.0, 1.0]
    >>> fill_density(uni, np.array([4, 0, 0, 0, 0, 0]), 1, 6).round(2).tolist()
    [0.0, 0.33, 0.67]
    """
    t, q, first, inv, mult = uni.groups()
    return water_fill(t[first][:, target], q[first] @ np.asarray(n, dtype=np.float64), mult,
                      d)[inv]


def water_fill(tp: np.ndarray, have: np.ndarray, mult: np.ndarray, d: int) -> np.ndarray:
    """:func:`fill_density` per pattern: p_target ``tp``, expected draws ``have`` and
    multiplicity ``mult`` of each pattern; the density of one item of each pattern.

    >>> water_fill(np.array([0.5, 0.5]), np.array([2.0, 0.0]), np.array([1, 1]), 6).round(2).tolist()
    [0.33, 0.67]
    """
    r = np.zeros(len(tp))
    on = np.flatnonzero(tp > 0)
    if on.size == 0 or d <= 0:
        return r
    b = have[on] / tp[on]
    order = np.argsort(b, kind="stable")
    a_cum = np.cumsum(mult[on][order] * tp[on][order])
    b_cum = np.cumsum(mult[on][order] * have[on][order])
    levels = (d + b_cum) / a_cum
    k = int(np.flatnonzero(levels > b[order])[-1])
    r[on] = np.maximum(levels[k] * tp[on] - have[on], 0.0) / d
    return r


from assay.ondemand.planning import next_draws, pattern_rates, plan  # noqa: E402  (re-exported)

__all__ = ["DEFENSIVE", "FILL", "NOVEL", "OWN", "RULES", "Units", "Universe", "defend",
           "drawn", "estimate", "fill_density", "single_thread", "water_fill", "mixtures", "next_draws", "pattern_rates",
           "plan", "precision_half_width", "proposal_index"]

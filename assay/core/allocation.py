"""The one allocation module: how a budget of labels is split over strata (or cells).

Two policies, because they are two different allocations (not two spellings of one):

* :func:`allocate` — **minimum first, then by weight**: every stratum gets min(minimum, N_h),
  the rest of the budget goes ∝ weight_h; strata whose share exceeds their size are taken whole
  (take-all) and the rest re-allocated (Cochran 1977, §5.5); largest-remainder rounding. Used
  by the score-stratified and ``auto`` designs (weights N_h·S_h: Neyman).
* :func:`bounded_allocation` — **targets projected on bounds**: continuous targets are moved
  onto low ≤ n ≤ high by water-filling (the standard Neyman allocation with bounds) and rounded
  by largest remainder. :func:`allocate_by_rule` builds the targets for the rules of seed 004
  (proportional, Neyman from prior proportions, the TREC Legal N_l^½ with a capped bottom
  stratum); the adjudication allocation of double sampling uses the same routine.

:class:`StratumModel` gives the per-stratum residual variances from which Neyman weights are
formed under a model of the match rates.

>>> import numpy as np
>>> StratumModel(np.array([0.5]), np.array([0.25]), np.array([1.0])).residual_variance(
...     0.5, 1.0, 0.5).tolist()
[0.140625]
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

MIN_PER_STRATUM = 2


@dataclass(frozen=True)
class StratumModel:
    """Model moments per stratum: mean π, mean π(1−π) and the share of predicted positives
    (used by the auto design's Neyman allocation)."""

    mean_p: np.ndarray
    mean_pq: np.ndarray
    pos_share: np.ndarray

    def residual_variance(self, r: float, x_tot: float, alpha: float) -> np.ndarray:
        """Model within-stratum variance of z = (y − R x)/X: for ŷ = 1 items
        π(1−π)(1 − R(1−α))², for ŷ = 0 items π(1−π)(1−α)²R², over X²."""
        a = self.pos_share * (1.0 - r * (1.0 - alpha)) ** 2
        b = (1.0 - self.pos_share) * ((1.0 - alpha) * r) ** 2
        return self.mean_pq * (a + b) / x_tot**2


def allocate(budget: int, sizes: np.ndarray, weights: np.ndarray,
             minimum: int = MIN_PER_STRATUM) -> np.ndarray:
    """Integer allocation n_h ∝ weights_h with min(minimum, N_h) ≤ n_h ≤ N_h and Σ n_h = budget.

    Strata whose share exceeds their size are taken whole (take-all) and the rest re-allocated
    (Cochran 1977, §5.5); rounding by largest remainder.

    >>> import numpy as np
    >>> allocate(10, np.array([100, 100, 2]), np.array([1.0, 3.0, 0.0])).tolist()
    [3, 5, 2]
    """
    sizes = sizes.astype(np.int64)
    total = int(sizes.sum())
    budget = int(min(budget, total))
    floor = np.minimum(sizes, minimum)
    if floor.sum() >= budget:  # budget too small for the minimum: spread by weight
        floor = np.zeros_like(sizes)
    n = floor.copy()
    w = np.where(sizes > n, np.maximum(weights.astype(np.float64), 0.0), 0.0)
    if w.sum() <= 0:
        w = (sizes - n).astype(np.float64)
    free = np.ones(sizes.shape[0], dtype=bool)
    while True:
        remaining = budget - int(n[~free].sum()) - int(floor[free].sum())
        share = np.zeros(sizes.shape[0])
        wf = np.where(free, w, 0.0)
        if wf.sum() > 0 and remaining > 0:
            share = remaining * wf / wf.sum()
        cand = floor + share
        over = free & (cand >= sizes)
        if not over.any():
            break
        n[over] = sizes[over]
        free &= ~over
        if not free.any():
            break
    if free.any():
        cand = np.where(free, floor + share, n)
        base = np.floor(cand).astype(np.int64)
        left = budget - int(base.sum())
        frac = np.where(free & (base < sizes), cand - base, -1.0)
        for i in np.argsort(-frac, kind="stable")[:max(left, 0)]:
            base[i] += 1
        n = np.minimum(base, sizes)
    # top up any shortfall from rounding/clipping, largest free capacity first
    short = budget - int(n.sum())
    if short > 0:
        for i in np.argsort(-(sizes - n), kind="stable"):
            add = int(min(short, sizes[i] - n[i]))
            n[i] += add
            short -= add
            if short == 0:
                break
    return n


def bounded_allocation(target: np.ndarray, budget: int, low: np.ndarray,
                     high: np.ndarray) -> np.ndarray:
    """Integer allocation near ``target`` with sum ``budget`` and low <= n <= high.

    Continuous targets are first projected onto the box by iterative capping/flooring (the
    standard water-filling for Neyman allocation with bounds), then rounded by largest remainder.

    >>> import numpy as np
    >>> bounded_allocation(np.array([2.5, 7.5]), 10, np.array([0, 0]), np.array([5, 9])).tolist()
    [3, 7]
    """
    target = np.asarray(target, float)
    budget = int(min(budget, high.sum()))
    x = np.clip(target, low, high).astype(float)
    for _ in range(4 * len(x) + 4):
        gap = budget - x.sum()
        if abs(gap) < 1e-9:
            break
        adjustable = (x < high) if gap > 0 else (x > low)
        if not adjustable.any():
            break
        w = np.where(adjustable, np.maximum(target, 1e-12), 0.0)
        x = np.clip(x + gap * w / w.sum(), low, high)
    base = np.floor(x + 1e-9).astype(np.int64)
    base = np.clip(base, low, high)
    rem = budget - base.sum()
    frac = x - base
    order = np.argsort(-frac, kind="stable")
    for i in order:
        if rem <= 0:
            break
        if base[i] < high[i]:
            base[i] += 1
            rem -= 1
    i = 0
    while rem > 0 and i < 10 * len(x):          # any remainder left: fill where room remains
        j = i % len(x)
        if base[j] < high[j]:
            base[j] += 1
            rem -= 1
        i += 1
    return base


def allocate_by_rule(sizes: Sequence[int], budget: int, method: str = "proportional", *,
             prior: Sequence[float] | None = None, minimum: int = 2,
             bottom: int | None = None, bottom_share: float = 0.25,
             exponent: float = 0.5) -> np.ndarray:
    """Allocate ``budget`` assessments to strata of sizes N_l; returns integer n_l.

    * ``proportional``: n_l ∝ N_l.
    * ``neyman``: n_l ∝ N_l·sqrt(p_l(1-p_l)) with prior guesses p_l (Cochran 1977, ch. 5,
      optimum allocation).
    * ``legal`` (seed 004 §2's practice): n_l ∝ N_l^exponent, so that small strata get a higher
      sampling rate, with the bottom stratum capped at ``bottom_share`` of the budget (the
      cap yields when the other strata are exhausted, so the whole budget is spent).
    Every stratum gets at least min(minimum, N_l) (two are needed for a variance) and at most N_l.

    >>> allocate_by_rule([100, 300], 40).tolist()
    [10, 30]
    >>> allocate_by_rule([100, 300], 40, "neyman", prior=[0.5, 0.01]).tolist()
    [25, 15]
    """
    sizes = np.asarray(sizes, dtype=np.int64)
    if budget < 0:
        raise ValueError("budget must be non-negative")
    if method == "proportional":
        target = sizes.astype(float)
    elif method == "neyman":
        if prior is None or len(prior) != len(sizes):
            raise ValueError("neyman allocation needs one prior proportion per stratum")
        p = np.clip(np.asarray(prior, float), 1e-4, 1 - 1e-4)
        target = sizes * np.sqrt(p * (1 - p))
    elif method == "legal":
        target = sizes.astype(float) ** exponent
    else:
        raise ValueError(f"unknown allocation method {method!r} (proportional, neyman, legal)")
    high = sizes.copy()
    if method == "legal" and bottom is not None:
        others = int(high.sum() - high[bottom])
        cap = max(int(np.floor(bottom_share * budget)), minimum, budget - others)
        high[bottom] = min(high[bottom], cap)        # the cap yields when the rest is exhausted
    low = np.minimum(sizes, minimum)
    if low.sum() > budget:
        raise ValueError(f"budget {budget} is below the minimum of {minimum} per stratum "
                         f"({int(low.sum())} needed); raise the budget or lower the minimum "
                         "(--min-per-stratum)")
    total = target.sum()
    target = budget * target / total if total > 0 else np.zeros_like(target)
    return bounded_allocation(target, budget, low, high)


__all__ = ["MIN_PER_STRATUM", "StratumModel", "allocate", "allocate_by_rule", "bounded_allocation"]

"""Stratified sampling by score: CSF or equal-size strata, proportional or Neyman allocation,
simple random sampling without replacement within strata (finite-population correction in
:class:`assay.core.totals.StratifiedSample`)."""
from __future__ import annotations

from typing import Any

import numpy as np

from assay.core.allocation import MIN_PER_STRATUM, allocate
from assay.designs.base import Design, Draw, SparseShuffle
from assay.core.strata import Strata, make_strata
from assay.core.types import Kind



def residual_sd(prior: np.ndarray, predictions: np.ndarray, alpha: float,
                f_guess: float) -> np.ndarray:
    """Per-item √E[e²] of the linearised residual e = y − F x under P(ℓ=1) = prior.

    For ŷ = 1, e = 1 − F with probability π and −αF otherwise, so E[e²] = π(1−F)² + (1−π)α²F²;
    for ŷ = 0, e = −(1−α)F ℓ, so E[e²] = (1−α)²F²π. The square root is the bracket of seed 002,
    eq. 5 (Sawade et al. 2010).
    """
    p = np.clip(prior, 0.0, 1.0)
    pos = np.sqrt(alpha**2 * f_guess**2 * (1.0 - p) + (1.0 - f_guess) ** 2 * p)
    neg = (1.0 - alpha) * f_guess * np.sqrt(p)
    return np.where(predictions == 1, pos, neg)


def initial_f_guess(prior: np.ndarray, predictions: np.ndarray, alpha: float) -> float:
    """F̂_α(0) of seed 002, Algorithm 2 line 10, at item level."""
    tp = float(np.sum(prior * predictions))
    den = alpha * float(np.sum(predictions)) + (1.0 - alpha) * float(np.sum(prior))
    return tp / den if den > 0 else 0.5


class StratifiedDesign(Design):
    """Score strata with a fixed allocation, sampled without replacement within strata.

    Draws interleave the strata: every stratum's first ``min(n_h, 2)`` draws come first (round
    robin), then the rest in a random order, so an estimate is available early and every
    stratum has a variance term.
    """

    name = "stratified"

    def __init__(self, strata: Strata, budget: int, rng: np.random.Generator,
                 allocation: str = "neyman", prior: np.ndarray | None = None,
                 predictions: np.ndarray | None = None, alpha: float = 0.5) -> None:
        self.strata, self.rng, self.allocation_rule = strata, rng, allocation
        self.alpha = alpha
        sizes = strata.sizes
        if allocation == "proportional" or prior is None or predictions is None:
            weights = sizes.astype(np.float64)
            if allocation == "neyman":
                self.allocation_rule = "proportional"  # no prior: Neyman reduces to it
        elif allocation == "neyman":
            f0 = initial_f_guess(prior, predictions, alpha)
            sd = self._stratum_sd(prior, predictions, alpha, f0)
            weights = sizes * sd
        else:
            raise ValueError(f"unknown allocation {allocation!r} (expected 'proportional' or "
                             "'neyman')")
        self._weights = weights
        self.n_h = allocate(budget, sizes, weights)
        self.budget = int(self.n_h.sum())
        self._shuffles = [SparseShuffle(int(s)) for s in sizes]
        first = np.repeat(np.arange(strata.count), np.minimum(self.n_h, MIN_PER_STRATUM))
        rest = np.repeat(np.arange(strata.count), self.n_h - np.minimum(self.n_h,
                                                                        MIN_PER_STRATUM))
        self._schedule = np.concatenate([first, rng.permutation(rest)]).astype(np.int64)
        self._pos = 0
        self._replace: list[int] = []

    def _stratum_sd(self, prior: np.ndarray, predictions: np.ndarray, alpha: float,
                    f0: float) -> np.ndarray:
        """S_h: within-stratum SD of e = y − F x, from the prior (mean E[e²] − (mean E[e])²).

        Computed in chunks of the ranking, so the set-up never holds more than a few per-item
        temporaries of one chunk."""
        k = self.strata.count
        s1, s2 = np.zeros(k), np.zeros(k)
        order = self.strata.order
        chunk = 1 << 20
        for start in range(0, order.shape[0], chunk):
            idx = order[start:start + chunk]
            p = np.clip(prior[idx], 0.0, 1.0)
            yhat = predictions[idx]
            # E[e] per item: ŷ=1: π(1−F) − (1−π)αF ; ŷ=0: −(1−α)Fπ
            mean_e = np.where(yhat == 1, p * (1 - f0) - (1 - p) * alpha * f0,
                              -(1 - alpha) * f0 * p)
            sq = residual_sd(p, yhat, alpha, f0) ** 2
            h = self.strata.stratum_of(np.arange(start, start + idx.shape[0]))
            s1 += np.bincount(h, weights=mean_e, minlength=k)
            s2 += np.bincount(h, weights=sq, minlength=k)
        sizes = self.strata.sizes
        m1, m2 = s1 / sizes, s2 / sizes
        return np.sqrt(np.maximum(m2 - m1**2, 0.0))

    def params(self) -> dict[str, Any]:
        return {"design": "stratified", "strata": self.strata.method,
                "n_strata": self.strata.count, "allocation": self.allocation_rule,
                "budget": self.budget, "alpha": self.alpha}

    def extend(self, budget: int) -> None:
        """Re-allocate a larger budget with the earlier n_h as floors: the extra labels go to
        the strata furthest below the allocation of the new budget. Sampling stays without
        replacement within strata, so the union is a stratified SRS of the new n_h."""
        sizes = self.strata.sizes
        extra = int(min(budget, int(sizes.sum()))) - int(self.n_h.sum())
        if extra <= 0:
            return
        want = allocate(int(self.n_h.sum()) + extra, sizes, self._weights)
        room = np.maximum(want - self.n_h, 0)
        if room.sum() <= 0:
            room = sizes - self.n_h
        add = allocate(extra, np.minimum(room, sizes - self.n_h) if room.sum() >= extra
                       else sizes - self.n_h, room.astype(float) + 1e-9, minimum=0)
        self.n_h = self.n_h + add
        self.budget = int(self.n_h.sum())
        more = self.rng.permutation(np.repeat(np.arange(self.strata.count), add))
        self._schedule = np.concatenate([self._schedule, more.astype(np.int64)])

    def exhausted(self) -> bool:
        return self._pos >= self._schedule.shape[0] and not self._replace

    def draw(self) -> Draw:
        if self._replace:
            h = self._replace.pop()
        else:
            h = int(self._schedule[self._pos])
            self._pos += 1
        j = self._shuffles[h].next(self.rng)
        pos = int(self.strata.bounds[h] + j)
        item = int(self.strata.order[pos])
        return Draw(item, float(self.n_h[h]) / float(self.strata.sizes[h]), h, Kind.INCLUSION, pos)

    def skip(self, draw: Draw) -> None:
        if self._shuffles[draw.stratum].taken < self.strata.sizes[draw.stratum]:
            self._replace.append(draw.stratum)

    def stratum_sizes(self) -> np.ndarray:
        return self.strata.sizes

    def strata_table(self) -> list[dict[str, Any]]:
        sizes = self.strata.sizes
        return [{"stratum": h, "size": int(sizes[h]), "allocated": int(self.n_h[h]),
                 "inclusion_probability": float(self.n_h[h] / sizes[h])}
                for h in range(self.strata.count)]


def stratified_design(score: np.ndarray | None, prior: np.ndarray | None,
                      predictions: np.ndarray, budget: int, rng: np.random.Generator,
                      method: str = "csf", n_strata: int = 30, allocation: str = "neyman",
                      alpha: float = 0.5, strata: Strata | None = None) -> StratifiedDesign:
    """A stratified design; pass precomputed ``strata`` to skip sorting the pool again."""
    if strata is None:
        strata = make_strata(score, predictions.shape[0], method, n_strata)
    return StratifiedDesign(strata, budget, rng, allocation, prior, predictions, alpha)

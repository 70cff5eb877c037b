"""Score strata: cumulative-√F (CSF, seed 002 Algorithm 1, after Dalenius & Hodges 1959) and
equal-size strata. Strata are contiguous runs of items in decreasing score order, so stratum 0
holds the highest scores; ties never straddle a CSF boundary.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Strata:
    """A partition of the pool: ``order[bounds[h]:bounds[h+1]]`` are the items of stratum h."""

    order: np.ndarray    # item indices, highest score first (int32 when N < 2**31)
    bounds: np.ndarray   # int64, K + 1 offsets into ``order``
    method: str = "csf"

    @property
    def count(self) -> int:
        return int(self.bounds.shape[0] - 1)

    @property
    def sizes(self) -> np.ndarray:
        return np.diff(self.bounds)

    def members(self, h: int) -> np.ndarray:
        return self.order[self.bounds[h]:self.bounds[h + 1]]

    def labels(self) -> np.ndarray:
        """Stratum index of every item (int32, length N)."""
        out = np.empty(self.order.shape[0], dtype=np.int32)
        out[self.order] = np.repeat(np.arange(self.count, dtype=np.int32), self.sizes)
        return out

    def stratum_of(self, positions: np.ndarray) -> np.ndarray:
        """Stratum of items given their positions in ``order``."""
        return np.searchsorted(self.bounds, positions, side="right") - 1

    def means(self, values: np.ndarray) -> np.ndarray:
        """Per-stratum mean of a per-item array."""
        sums = np.add.reduceat(values[self.order].astype(np.float64), self.bounds[:-1])
        return sums / self.sizes


def _index_dtype(n: int) -> type:
    return np.int32 if n < 2**31 - 1 else np.int64


def single_stratum(n: int) -> Strata:
    return Strata(order=np.arange(n, dtype=_index_dtype(n)), bounds=np.array([0, n]),
                  method="none")


def _descending_order(scores: np.ndarray) -> np.ndarray:
    # stable argsort of -score: equal scores keep pool order (reproducible)
    return np.argsort(-scores, kind="stable").astype(_index_dtype(scores.shape[0]), copy=False)


def equal_size_strata(scores: np.ndarray, n_strata: int) -> Strata:
    """K strata of (nearly) equal size in decreasing score order (Druck & McCallum 2011)."""
    n = scores.shape[0]
    k = max(1, min(int(n_strata), n))
    order = _descending_order(scores)
    bounds = np.unique(np.linspace(0, n, k + 1).round().astype(np.int64))
    return Strata(order=order, bounds=bounds, method="equal")


def csf_cuts(counts: np.ndarray, edges: np.ndarray, n_strata: int) -> np.ndarray:
    """Stratum lower edges of seed 002, Algorithm 1 (lines 7–20), ascending, without the
    minimum: walking up the histogram, a bin whose cumulative √count reaches the next multiple
    of w = csf[M]/K̃ opens a stratum at its lower edge — at most one per bin, so a heavy bin
    does not swallow strata — until K̃ strata are open."""
    csf = np.cumsum(np.sqrt(counts))
    width = csf[-1] / n_strata
    cuts, k = [], 0
    for j in range(csf.shape[0] - 1):
        if k == n_strata:
            break
        if csf[j] >= k * width:
            if j > 0:
                cuts.append(edges[j])
            k += 1
    return np.asarray(cuts, dtype=np.float64)


def csf_strata(scores: np.ndarray, n_strata: int, n_bins: int | None = None) -> Strata:
    """Cumulative-√F strata (seed 002, Algorithm 1, after Dalenius & Hodges 1959).

    The score distribution is estimated with a histogram of ``n_bins`` bins (default
    ``min(N, 10_000)``); strata open where the cumulative √count passes equal widths
    (:func:`csf_cuts`). Empty strata are removed, so fewer than ``n_strata`` may result.
    """
    n = scores.shape[0]
    k = max(1, int(n_strata))
    m = int(n_bins) if n_bins else int(min(n, 10_000))
    order = _descending_order(scores)
    lo, hi = float(scores.min()), float(scores.max())
    if k == 1 or hi <= lo:
        return Strata(order=order, bounds=np.array([0, n]), method="csf")
    counts, edges = np.histogram(scores, bins=m, range=(lo, hi))
    cuts = csf_cuts(counts, edges, k)
    # items with score ≥ a cut lie in its stratum or above: each boundary is a count found by
    # binary search in the ranking (no per-item temporaries)
    neg_sorted = -scores[order]                        # ascending
    pos = np.searchsorted(neg_sorted, -cuts, side="right")
    bounds = np.unique(np.concatenate(([0], pos, [n]))).astype(np.int64)
    return Strata(order=order, bounds=bounds, method="csf")


def make_strata(scores: np.ndarray | None, n: int, method: str, n_strata: int) -> Strata:
    if scores is None or method == "none" or n_strata <= 1:
        return single_stratum(n)
    if method == "csf":
        return csf_strata(scores, n_strata)
    if method == "equal":
        return equal_size_strata(scores, n_strata)
    raise ValueError(f"unknown stratification method {method!r} (expected 'csf' or 'equal')")

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


def csf_strata(scores: np.ndarray, n_strata: int, n_bins: int | None = None) -> Strata:
    """Cumulative-√F strata (seed 002, Algorithm 1).

    The score distribution is estimated with a histogram of ``n_bins`` bins (default
    ``min(N, 10_000)``); the cumulative sum of √count is cut into ``n_strata`` equal widths and the
    cuts are mapped back to score-bin edges. Empty strata are removed, so fewer than ``n_strata``
    may result.
    """
    n = scores.shape[0]
    k = max(1, int(n_strata))
    m = int(n_bins) if n_bins else int(min(n, 10_000))
    order = _descending_order(scores)
    lo, hi = float(scores.min()), float(scores.max())
    if k == 1 or hi <= lo:
        return Strata(order=order, bounds=np.array([0, n]), method="csf")
    counts, edges = np.histogram(scores, bins=m, range=(lo, hi))
    csf = np.cumsum(np.sqrt(counts))
    width = csf[-1] / k
    # bin j belongs to stratum ceil(csf_j / w) - 1 (ascending score); ties share a bin
    bin_stratum = np.clip(np.ceil(csf / width - 1e-9).astype(np.int64) - 1, 0, k - 1)
    # a stratum starts at the lower edge of its first bin: items with score ≥ that edge lie
    # in it or above, so each boundary is a count found by binary search (no per-item bins)
    first_bins = np.flatnonzero(np.diff(bin_stratum)) + 1
    neg_sorted = -scores[order]                        # ascending
    cuts = np.searchsorted(neg_sorted, -edges[first_bins], side="right")
    bounds = np.unique(np.concatenate(([0], cuts, [n]))).astype(np.int64)
    return Strata(order=order, bounds=bounds, method="csf")


def make_strata(scores: np.ndarray | None, n: int, method: str, n_strata: int) -> Strata:
    if scores is None or method == "none" or n_strata <= 1:
        return single_stratum(n)
    if method == "csf":
        return csf_strata(scores, n_strata)
    if method == "equal":
        return equal_size_strata(scores, n_strata)
    raise ValueError(f"unknown stratification method {method!r} (expected 'csf' or 'equal')")

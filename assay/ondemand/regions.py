"""A variance floor for on-demand precision: the post-stratified variance over an output's
membership regions.

The self-normalised mixture estimate's delta variance (:mod:`assay.core.mixture`) is exactly 0
when every labelled draw of a system's output is true — even with part of the output never
drawn. On the FEBRL test bed a later system's false links sit in the part of its output no
earlier system produced; when its first draws there happen to be true it reported precision
1 ± 0 and stopped (bench/out/febrl_in_turn.md: coverage 0.005 for some systems).

Split an output X into regions R_r, the sets of items output by the same set of systems (split
further where structured sampling's proposals are not uniform on them). Every proposal of the
campaign is then uniform within a region (a system's output, its novel part), so the
distinct labelled items of a region are a simple random sample of it, and precision
P = Σ_r s_r μ_r with known shares s_r = |R_r|/|X|. Its post-stratified variance (Cochran 1977,
§5A.9), with the Jeffreys posterior variance of each region's rate (k_r true of n_r labelled;
⅛ for a region with no label),

    V = Σ_r s_r² (1 − n_r/N_r) · (k_r + ½)(n_r − k_r + ½) / ((n_r + 1)²(n_r + 2)),

cannot vanish while a region is unsampled or shows few labels. It floors the mixture variance
of each system's precision and of the pool's (which enters every recall through ν̂).
Measured with this floor (helper run of bench/febrl_in_turn.py --proposed-fix, 200 reps):
coverage precision 0.950–1.000, recall 0.935–0.955, F1 0.940–0.965.

>>> memb = np.array([[1, 0], [1, 1], [1, 1], [1, 0]], dtype=bool)
>>> round(region_variance(memb, np.array([1, 2]), np.array([1.0, 1.0]), 0), 4)
0.0312
"""
from __future__ import annotations

import numpy as np

from assay.core.rows import unique_rows


def regions(memb: np.ndarray, item: np.ndarray, f: np.ndarray, target: int | None,
            strata: np.ndarray | None = None
            ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """System ``target``'s output (None: the pool) split into membership regions: each
    universe row's region (−1 outside), and per region its size, distinct labelled items and
    the true ones among them (``item``/``f``: the draws' universe rows and labels, NaN unlabelled).
    ``strata`` (per row, :meth:`assay.ondemand.joint.Universe.strata`): split the regions
    further where a proposal is not uniform on them (structured sampling draws by a level's
    distribution), so that draws stay uniform within each region.

    >>> memb = np.array([[1, 0], [1, 1], [0, 1]], dtype=bool)
    >>> [a.tolist() for a in regions(memb, np.array([0, 1, 1]), np.array([1.0, 0.0, 0.0]), 0)]
    [[0, 1, -1], [1.0, 1.0], [1.0, 1.0], [1.0, 0.0]]
    """
    rows = memb[:, target] if target is not None else np.ones(len(memb), dtype=bool)
    mine = np.flatnonzero(rows)
    rows_of = memb[mine] if strata is None else np.column_stack([memb[mine], strata[mine]])
    _, region = unique_rows(rows_of, return_inverse=True)
    where = np.full(len(memb), -1)
    where[mine] = region.ravel()
    size = np.bincount(where[mine]).astype(np.float64)
    ok = ~np.isnan(f)
    seen, first = np.unique(item[ok], return_index=True)
    r = where[seen]
    lab = f[ok][first][r >= 0]
    r = r[r >= 0]
    return (where, size, np.bincount(r, minlength=len(size)).astype(np.float64),
            np.bincount(r, weights=lab, minlength=len(size)))


def post_stratified_variance(size: np.ndarray, n: np.ndarray, k: np.ndarray) -> float:
    """V of the module docstring for regions of ``size`` with ``n`` labelled, ``k`` true.

    >>> round(post_stratified_variance(np.array([10.0]), np.array([0.0]), np.array([0.0])), 3)
    0.125
    """
    v = (k + 0.5) * (n - k + 0.5) / ((n + 1) ** 2 * (n + 2))
    share = size / size.sum()
    return float(np.sum(share ** 2 * np.maximum(1 - n / size, 0.0) * v))


def region_variance(memb: np.ndarray, item: np.ndarray, f: np.ndarray, target: int | None,
                    strata: np.ndarray | None = None) -> float:
    """The floor V for system ``target``'s precision (None: the pool's); see the module."""
    _, size, n, k = regions(memb, item, f, target, strata)
    return post_stratified_variance(size, n, k)


__all__ = ["post_stratified_variance", "region_variance", "regions"]

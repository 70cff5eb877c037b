"""Assessor consistency across parallel assessment bins (seed 004 §3, Tables/Figs 4–5).

Documents of each stratum are spread at random over bins assessed by different assessors, so
every bin has the same expected true proportion relevant; unequal assessed proportions reveal
assessor error. The test is Pearson's χ² test of homogeneity of the proportions on the
B × 2 table (bin × assessed relevant / not relevant): X² = Σ_b Σ_j (O_bj − E_bj)²/E_bj with
B − 1 degrees of freedom. Unassessable documents (label −1) are excluded from the test and
reported per bin.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

import numpy as np
from scipy.stats import chi2

__all__ = ["BinTest", "ConsistencyReport", "chi2_equal_proportions", "bin_consistency"]


@dataclass(frozen=True)
class BinTest:
    """χ² test of equal proportions across bins, with the per-bin proportions."""
    bins: tuple[str, ...]
    assessed: tuple[int, ...]
    relevant: tuple[int, ...]
    unassessable: tuple[int, ...]
    proportions: tuple[float, ...]
    statistic: float
    df: int
    p_value: float

    def to_dict(self) -> dict:
        return {"bins": list(self.bins), "assessed": list(self.assessed),
                "relevant": list(self.relevant), "unassessable": list(self.unassessable),
                "proportions": list(self.proportions), "statistic": self.statistic,
                "df": self.df, "p_value": self.p_value}


@dataclass(frozen=True)
class ConsistencyReport:
    """The test overall and within each stratum."""
    overall: BinTest
    per_stratum: dict[str, BinTest] = field(default_factory=dict)

    def to_dict(self) -> dict:
        return {"overall": self.overall.to_dict(),
                "per_stratum": {k: v.to_dict() for k, v in self.per_stratum.items()}}


def chi2_equal_proportions(relevant, assessed) -> tuple[float, int, float]:
    """Pearson's X² for a B × 2 table given per-bin relevant and assessed counts (vectorised over
    leading axes). Bins with no assessed documents are ignored; returns (X², df, p-value).

    >>> [round(x, 4) for x in chi2_equal_proportions([5, 10], [50, 50])]
    [1.9608, 1, 0.1614]
    """
    r = np.asarray(relevant, float)
    n = np.asarray(assessed, float)
    keep = n > 0
    tot_n = np.where(keep, n, 0).sum(axis=-1, keepdims=True)
    tot_r = np.where(keep, r, 0).sum(axis=-1, keepdims=True)
    pbar = np.divide(tot_r, tot_n, out=np.zeros_like(tot_r), where=tot_n > 0)
    e1 = n * pbar
    e0 = n * (1 - pbar)
    with np.errstate(divide="ignore", invalid="ignore"):
        t1 = np.where(keep & (e1 > 0), (r - e1) ** 2 / e1, 0.0)
        t0 = np.where(keep & (e0 > 0), ((n - r) - e0) ** 2 / e0, 0.0)
    stat = (t1 + t0).sum(axis=-1)
    df = keep.sum(axis=-1) - 1
    p = chi2.sf(stat, np.maximum(df, 1))
    p = np.where((df < 1) | (pbar[..., 0] <= 0) | (pbar[..., 0] >= 1), 1.0, p)
    if np.ndim(stat) == 0:
        return float(stat), int(df), float(p)
    return stat, df, p


def _test(labels: np.ndarray, bins: np.ndarray, names: Sequence[str]) -> BinTest:
    assessed, relevant, unass = [], [], []
    for b in names:
        m = bins == b
        lab = labels[m]
        assessed.append(int((lab >= 0).sum()))
        relevant.append(int((lab == 1).sum()))
        unass.append(int((lab == -1).sum()))
    stat, df, p = chi2_equal_proportions(relevant, assessed)
    props = tuple(float(r / a) if a else float("nan") for r, a in zip(relevant, assessed))
    return BinTest(tuple(names), tuple(assessed), tuple(relevant), tuple(unass), props,
                   float(stat), int(df), float(p))


def bin_consistency(labels: Sequence[int], bins: Sequence[str],
                    strata: Sequence[str] | None = None) -> ConsistencyReport:
    """χ² test of equal assessed-relevant proportions across bins, overall and per stratum.

    ``labels[i]`` ∈ {−1, 0, 1} is the fallible label of document i, ``bins[i]`` its bin and
    ``strata[i]`` its stratum.

    >>> rep = bin_consistency([1, 0, 1, 1, 0, 0], ["a", "a", "a", "b", "b", "b"])
    >>> round(rep.overall.p_value, 3)
    0.414
    """
    labels = np.asarray(labels, np.int64)
    if np.any(~np.isin(labels, (-1, 0, 1))):
        raise ValueError("labels must be -1, 0 or 1")
    bins = np.asarray(bins, dtype=object).astype(str)
    names = sorted(set(bins.tolist()))
    overall = _test(labels, bins, names)
    per = {}
    if strata is not None:
        st = np.asarray(strata, dtype=object).astype(str)
        for s in sorted(set(st.tolist())):
            m = st == s
            per[s] = _test(labels[m], bins[m], names)
    return ConsistencyReport(overall, per)

"""The keys at given ranks of a pool on an engine, by score bins: the plan both engines follow
(:meth:`assay.engines.duck.DuckDBEngine._locate`, :meth:`assay.engines.spark_quantiles.
SparkQuantiles._locate`); each writes its own SQL, the choice of what to fetch is made here.

A region's rows are counted per bin (BINS bins of score, or 16 bits of the tie hash when its
scores are all equal). A bin holding a rank and more than ``fetch_limit`` rows is split again
on its own; the bins that fit one by one but together hold more than ``fetch_limit`` rows (the
grid's ranks in a pool of 10⁹ rows: ~10⁷) get one finer grid over all of them, ~BINS cells in
all (one more pass, at most :data:`MAX_SPLITS` levels), so that only the cells holding the
ranks are fetched; the rest are fetched in one query and the keys read off in (score
descending, tie hash ascending) order.

A bin's or cell's number is computed in SQL as floor((score − lo) · scale) cast to a 64-bit
integer, clamped to ±:data:`CELL_CLAMP` before the cast (DuckDB: every split by score; Spark:
the finer grid's cells): a row outside the region (a conjunct the engine evaluates before the
region's, e.g. by DuckDB's adaptive filter order) at an extreme score (a pool spanning 1 and
10³⁰⁰) neither overflows the cast nor lands in a cell of the region (all within ±2⁵³).

>>> 2.0 ** 53 < CELL_CLAMP < 2.0 ** 63
True
>>> plan = plan_bins([(0, 5, 0.9, 1.0), (1, 5, 0.5, 0.8)], np.array([1, 7]), 10, 0, None, 1.0)
>>> plan.small, plan.big, plan.finer is None
([0, 1], [], True)
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

BINS = 1 << 16
MAX_SPLITS = 4      # finer grids over the bins holding quantiles, at most
CELL_CLAMP = 1.0e17  # |a bin's or cell's number| before its bigint cast (module docstring)


@dataclass(frozen=True)
class Finer:
    """One finer grid over the bins ``bins`` (their values), [lo, hi] with ``rows`` rows:
    ``ranks`` within it of the ranks it holds (``held``, a mask over the caller's ranks),
    ``scale`` cells per unit of score."""

    bins: list[int]
    lo: float
    hi: float
    rows: int
    ranks: np.ndarray
    held: np.ndarray
    scale: float


@dataclass(frozen=True)
class BinPlan:
    """What to do with a region's bins (module docstring): ``big`` bins (indices) to split
    on their own, one ``finer`` grid, and the ``small`` bins to fetch at once."""

    bins: np.ndarray
    counts: np.ndarray
    first: np.ndarray
    which: np.ndarray
    big: list[int]
    small: list[int]
    finer: Finer | None

    def local(self, j: int, ranks: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The mask of the ranks bin j holds and their ranks within it."""
        sel = self.which == j
        return sel, ranks[sel] - self.first[j]


def plan_bins(rows: Sequence[Any], ranks: np.ndarray, fetch_limit: int, level: int,
              shift: int | None, scale: float) -> BinPlan:
    """The plan for a region from its bins' rows (bin, count, min score, max score) in the
    order of the ranking, the sorted ``ranks`` within it, this level's ``shift`` (None: a
    split by score) and ``scale`` (its cells per unit of score; 0 for a tie-hash split)."""
    bins = np.array([x[0] for x in rows], dtype=np.int64)
    counts = np.array([x[1] for x in rows], dtype=np.int64)
    first = np.concatenate([[0], np.cumsum(counts)])
    which = np.searchsorted(first, ranks, side="right") - 1
    big: list[int] = []
    small: list[int] = []
    for j in np.unique(which):
        (big if counts[j] > fetch_limit else small).append(int(j))
    split = [j for j in small if rows[j][2] < rows[j][3]]
    lo = min((float(rows[j][2]) for j in split), default=0.0)
    hi = max((float(rows[j][3]) for j in split), default=0.0)
    fine = float(scale) * max(2, BINS // max(1, len(split)))
    finer = None
    if shift is None and level < MAX_SPLITS and (hi - lo) * fine < 2.0 ** 53 and \
            int(counts[split].sum()) > fetch_limit:
        before = np.concatenate([[0], np.cumsum(counts[split])])
        held = np.isin(which, split)
        at = np.searchsorted(split, which[held])
        finer = Finer([int(bins[j]) for j in split], lo, hi, int(before[-1]),
                      before[at] + ranks[held] - first[which[held]], held, fine)
        gone = set(split)
        small = [j for j in small if j not in gone]
    return BinPlan(bins, counts, first, which, big, small, finer)


def place_keys(plan: BinPlan, ranks: np.ndarray, slots: np.ndarray, s: np.ndarray,
               t: np.ndarray, b: np.ndarray, score: np.ndarray, tie: np.ndarray) -> None:
    """Fill ``score``/``tie`` at the slots of the small bins' ranks from their rows fetched
    in one query (score ``s``, tie hash ``t``, bin ``b``)."""
    for j in plan.small:
        sel, local = plan.local(j, ranks)
        mine = b == plan.bins[j]
        s_j, t_j = s[mine], t[mine]
        order = np.lexsort((t_j, -s_j))
        score[slots[sel]], tie[slots[sel]] = s_j[order[local]], t_j[order[local]]


__all__ = ["BINS", "CELL_CLAMP", "BinPlan", "Finer", "MAX_SPLITS", "place_keys", "plan_bins"]

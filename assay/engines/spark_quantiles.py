"""The keys at given ranks of the pool's order on Spark (exact quantiles; ``auto``'s rank grid):
a mixin of :class:`assay.engines.spark.SparkEngine`, the same search as
:meth:`assay.engines.duck.DuckDBEngine.keys_at_ranks`.

A 65,536-bin score histogram, then the rows of the bins that hold the ranks, sorted here by
(−score, tie hash); a bin holding more than ``fetch_limit`` rows is split again, by score or,
when its scores are all equal, by 16 bits of the tie hash at a time; bins that fit one by one
but together hold more than ``fetch_limit`` rows (the grid's ranks of a pool of 10⁹ rows:
~10⁷) get one finer grid over those whose scores differ, ~65,536 cells in all, in one more
pass, and only the cells holding the ranks are fetched (at most :data:`MAX_SPLITS` such grids
deep), so memory stays bounded by ``fetch_limit``, not by the pool.

>>> MAX_SPLITS, BINS
(4, 65536)
"""
from __future__ import annotations

from typing import Any

import numpy as np

from assay.engines.base import OrderKeys
from assay.engines.locate import BINS, CELL_CLAMP, MAX_SPLITS, place_keys, plan_bins
from assay.engines.spark_sql import dbl, words



class SparkQuantiles:
    """``keys_at_ranks`` (module docstring). Needs the engine's ``fetch_limit``, ``describe``,
    ``_base``, ``_with_tie`` and ``_collect``."""

    def keys_at_ranks(self, ranks: np.ndarray) -> OrderKeys:
        r = np.asarray(ranks, dtype=np.int64)
        info = self.describe()
        n = info.rows
        if r.size and (r.min() < 0 or r.max() >= n):
            raise ValueError(f"ranks must lie in [0, {n})")
        uniq, inverse = np.unique(r, return_inverse=True)
        score, tie = np.empty(uniq.size), np.empty(uniq.size, dtype=np.uint64)
        self._locate("TRUE", info.score_min, info.score_max, n, uniq, np.arange(uniq.size),
                     score, tie, level=0)
        return OrderKeys(score[inverse], tie[inverse])

    def _locate(self, where: str, lo: float, hi: float, n: int, ranks: np.ndarray,
                slots: np.ndarray, score: np.ndarray, tie: np.ndarray, level: int,
                shift: int | None = None, scale: float | None = None) -> None:
        """Fill ``score``/``tie`` at ``slots`` with the keys at ``ranks`` (ranks within the
        region ``where``, which holds ``n`` rows whose scores lie in [lo, hi]). ``scale``: cells
        per unit of score of the region's grid (default: :data:`BINS` cells over [lo, hi])."""
        if lo == hi:    # every score equal: split by the tie hash, 16 bits at a time
            shift = 48 if shift is None else shift - 16
        if n <= self.fetch_limit or (shift is not None and shift < 0):
            s, t, _ = self._fetch_keys(where)
            order = np.lexsort((t, -s))
            score[slots], tie[slots] = s[order[ranks]], t[order[ranks]]
            return
        sc = 0.0    # cells per unit of score of this level's grid (split by score)
        if shift is None and scale is not None:     # a finer grid over several bins: −cell
            sc = float(scale)
            # clamped before the cast: a row outside the region (a conjunct Spark may evaluate
            # before the region's) neither overflows a bigint under ANSI mode nor lands in a
            # cell of the region, whose cells all lie within ±2⁵³
            b = (f"(-CAST(floor(greatest(least((__s - {dbl(lo)}) * {dbl(sc)}, "
                 f"{dbl(CELL_CLAMP)}), {dbl(-CELL_CLAMP)})) AS BIGINT))")
        elif shift is None:     # split by score: bin 0 holds the highest scores
            sc = float(BINS / (hi - lo))
            b = (f"({BINS - 1}L - least(CAST(floor((__s - {dbl(lo)}) * {dbl(sc)})"
                 f" AS BIGINT), {BINS - 1}L))")
        else:
            b = f"(shiftrightunsigned(__t, {shift}) & 65535L)"
        from pyspark.sql import functions as F
        src = self._keyed(where).withColumn("__b", F.expr(b))
        rows = sorted(self._collect(src.groupBy("__b").agg(
            F.count(F.lit(1)), F.min("__s"), F.max("__s")), "quantiles"))
        plan = plan_bins(rows, ranks, self.fetch_limit, level, shift, sc)
        for j in plan.big:
            sel, local = plan.local(j, ranks)
            self._locate(f"({where}) AND {b} = {int(plan.bins[j])}", float(rows[j][2]),
                         float(rows[j][3]), int(plan.counts[j]), local, slots[sel], score, tie,
                         level + 1, shift)
        f = plan.finer     # bins that fit one by one but not together: DuckDB's rule
        if f is not None:
            self._locate(f"({where}) AND {b} IN ({', '.join(map(str, f.bins))})", f.lo, f.hi,
                         f.rows, f.ranks, slots[f.held], score, tie, level + 1, None, f.scale)
        if plan.small:   # the bins that fit: one query for all of them
            in_list = ", ".join(str(int(plan.bins[j])) for j in plan.small)
            s, t, bb = self._fetch_keys(f"({where}) AND {b} IN ({in_list})", extra=b)
            place_keys(plan, ranks, slots, s, t, bb, score, tie)

    def _keyed(self, where: str) -> Any:
        """Rows of the region ``where``: ``__s``, ``__k``, ``__t``."""
        from pyspark.sql import functions as F
        df = self._with_tie(self._base.select("__s", "__k"))
        return df.where(F.expr(where)) if where != "TRUE" else df

    def _fetch_keys(self, where: str, extra: str | None = None) -> tuple:
        from pyspark.sql import functions as F
        df = self._keyed(where)
        cols = [F.col("__s"), F.col("__t")] + ([F.expr(extra)] if extra else [])
        rows = self._collect(df.select(*cols), "quantile rows")
        s = np.array([x[0] for x in rows], dtype=np.float64)
        t = words(x[1] for x in rows)
        b = np.array([x[2] for x in rows], dtype=np.int64) if extra else None
        return s, t, b


__all__ = ["BINS", "MAX_SPLITS", "SparkQuantiles"]

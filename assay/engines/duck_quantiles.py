"""The keys at given ranks of the pool's order on DuckDB (exact quantiles; ``auto``'s rank
grid): a mixin of :class:`assay.engines.duck.DuckDBEngine`, the plan of
:mod:`assay.engines.locate` in DuckDB's SQL (Spark's: :mod:`assay.engines.spark_quantiles`).

A 65,536-bin score histogram (the engine's kept fine bins at the top level), then the rows of
the bins that hold the ranks, sorted here by (−score, tie hash); a bin holding more than
``fetch_limit`` rows is split again, by score or, when its scores are all equal, by 16 bits of
the tie hash at a time; bins that fit one by one but together hold more than ``fetch_limit``
rows get one finer grid over those whose scores differ, in one more pass (at most
:data:`~assay.engines.locate.MAX_SPLITS` deep), so memory stays bounded by ``fetch_limit``,
not by the pool.

>>> import duckdb, pandas as pd
>>> from assay.engines import DuckDBEngine, MemoryEngine
>>> df = pd.DataFrame({"id": range(300), "score": [(i * 37 % 101) / 7 for i in range(300)],
...                    "prediction": [i % 2 for i in range(300)]})
>>> con = duckdb.connect()
>>> _ = con.register("pool", df)
>>> ranks = np.array([0, 150, 299])
>>> a = DuckDBEngine("pool", connection=con, fetch_limit=40).keys_at_ranks(ranks)
>>> b = MemoryEngine(df).keys_at_ranks(ranks)
>>> bool((a.score == b.score).all() and (a.tie == b.tie).all())
True
"""
from __future__ import annotations

from typing import Any

import numpy as np

from assay.engines.base import OrderKeys
from assay.engines.locate import BINS, CELL_CLAMP, place_keys, plan_bins


def _clamped(x: str) -> str:
    """floor(x) as a BIGINT, x clamped to ±:data:`~assay.engines.locate.CELL_CLAMP` first
    (a row outside the region at an extreme score: no overflow, no cell of the region).

    >>> _clamped("__s")
    'CAST(floor(greatest(least(__s, 1e+17), -1e+17)) AS BIGINT)'
    """
    return f"CAST(floor(greatest(least({x}, {CELL_CLAMP!r}), {-CELL_CLAMP!r})) AS BIGINT)"


class DuckQuantiles:
    """``keys_at_ranks`` (module docstring). Needs the engine's ``fetch_limit``, ``describe``,
    ``_sql``, ``_base``, ``_tie`` and ``_fine_bins``."""

    def keys_at_ranks(self, ranks: np.ndarray) -> OrderKeys:
        r = np.asarray(ranks, dtype=np.int64)
        n = self.describe().rows
        if r.size and (r.min() < 0 or r.max() >= n):
            raise ValueError(f"ranks must lie in [0, {n})")
        uniq, inverse = np.unique(r, return_inverse=True)
        score, tie = np.empty(uniq.size), np.empty(uniq.size, dtype=np.uint64)
        info = self.describe()
        self._locate("TRUE", {}, info.score_min, info.score_max, n, uniq,
                     np.arange(uniq.size), score, tie, level=0)
        return OrderKeys(score[inverse], tie[inverse])

    def _locate(self, where: str, params: dict, lo: float, hi: float, n: int,
                ranks: np.ndarray, slots: np.ndarray, score: np.ndarray, tie: np.ndarray,
                level: int, shift: int | None = None, scale: float | None = None) -> None:
        """Fill ``score``/``tie`` at ``slots`` with the keys at ``ranks`` (ranks within the
        region ``where``, which holds ``n`` rows whose scores lie in [lo, hi]). ``scale``: cells
        per unit of score of the region's grid (default: :data:`BINS` cells over [lo, hi])."""
        if lo == hi:    # every score equal: split by the tie hash, 16 bits at a time
            shift = 48 if shift is None else shift - 16
        if n <= self.fetch_limit or (shift is not None and shift < 0):
            s, t = self._fetch_keys(where, params)
            order = np.lexsort((t, -s))
            score[slots], tie[slots] = s[order[ranks]], t[order[ranks]]
            return
        p = dict(params)
        if shift is None and scale is not None:     # a finer grid over several bins: −cell
            p[f"lo{level}"], p[f"sc{level}"] = float(lo), float(scale)
            b = f"(-{_clamped(f'(__s - $lo{level}) * $sc{level}')})"
            src = self._base
        elif shift is None:     # split by score: bin 0 holds the highest scores
            p[f"lo{level}"], p[f"sc{level}"] = float(lo), float(BINS / (hi - lo))
            b = f"({BINS - 1} - least({_clamped(f'(__s - $lo{level}) * $sc{level}')}, {BINS - 1}))"
            src = self._base
        else:
            b = f"CAST((__t >> {shift}) & 65535 AS BIGINT)"
            src = f"(SELECT *, {self._tie} AS __t FROM {self._base})"
        if level == 0 and shift is None and where == "TRUE":   # the kept fine bins, mirrored
            rows = sorted((BINS - 1 - int(x[0]), x[1], x[3], x[4]) for x in self._fine_bins()[0])
        else:
            rows = self._sql(f"SELECT {b} AS b, count(*), min(__s), max(__s) FROM {src} "
                             f"WHERE {where} GROUP BY b ORDER BY b", p).fetchall()
        plan = plan_bins(rows, ranks, self.fetch_limit, level, shift,
                         float(p.get(f"sc{level}", 0.0)))
        for j in plan.big:
            sel, local = plan.local(j, ranks)
            self._locate(f"({where}) AND {b} = {int(plan.bins[j])}", p, float(rows[j][2]),
                         float(rows[j][3]), int(plan.counts[j]), local, slots[sel], score, tie,
                         level + 1, shift)
        f = plan.finer     # bins that fit one by one but not together (memory bounded in N)
        if f is not None:
            self._locate(f"({where}) AND {b} IN ({', '.join(map(str, f.bins))})", p, f.lo,
                         f.hi, f.rows, f.ranks, slots[f.held], score, tie, level + 1, None,
                         f.scale)
        if plan.small:   # the bins that fit: one query for all of them
            in_list = ", ".join(str(int(plan.bins[j])) for j in plan.small)
            s, t, bb = self._fetch_keys(f"({where}) AND {b} IN ({in_list})", p, extra=b)
            place_keys(plan, ranks, slots, s, t, bb, score, tie)

    def _fetch_keys(self, where: str, params: dict, extra: str | None = None) -> Any:
        cols = "__s, __t" + (f", {extra}" if extra else "")
        df = self._sql(f"SELECT {cols} FROM (SELECT *, {self._tie} AS __t FROM {self._base}) "
                       f"WHERE {where}", params).fetchnumpy()
        vals = list(df.values())
        s = np.asarray(vals[0], dtype=np.float64)
        t = np.asarray(vals[1], dtype=np.uint64)
        return (s, t) if extra is None else (s, t, np.asarray(vals[2], dtype=np.int64))


__all__ = ["DuckQuantiles"]

"""Per-stratum and per-bin sums of the prior on DuckDB: what the Neyman allocation and the
importance design ask of the pool (a mixin of :class:`assay.engines.duck.DuckDBEngine`)."""
from __future__ import annotations

import numpy as np

from assay.engines.base import OrderKeys
from assay.engines.hashing import quote
from assay.errors import AssayInputError


class PriorSums:
    """``segment_prior_sums`` and ``bin_residual_stats`` in SQL (needs the engine's ``_sql``,
    ``_stratum_sql``, ``_types``, ``_key``, ``_from``, ``describe``)."""

    def segment_prior_sums(self, edges: OrderKeys, probability: str | None = None
                           ) -> tuple[np.ndarray, np.ndarray]:
        """See :meth:`Engine.segment_prior_sums` (one pass, one CASE over the edges)."""
        self.describe()
        if probability is not None and probability not in self._types:
            raise AssayInputError(self.source, f"missing column '{probability}'",
                                  expected=f"columns among {list(self._types)}")
        p = ("1.0 / (1.0 + exp(-__s))" if probability is None else
             f"greatest(0.0, least(1.0, CAST({quote(probability)} AS DOUBLE)))")
        expr, params = self._stratum_sql(edges)
        base = (f"(SELECT CAST({quote(self.score_col)} AS DOUBLE) AS __s, "
                f"CAST({quote(self.prediction_col)} AS TINYINT) AS __p, {self._key} AS __k, "
                f"{p.replace('__s', f'CAST({quote(self.score_col)} AS DOUBLE)')} AS __q "
                f"FROM {self._from})")
        rows = self._sql(f"SELECT {expr} AS h, sum(__q) FILTER (WHERE __p = 1), "
                         f"sum(__q) FILTER (WHERE __p = 0) FROM {base} GROUP BY h", params,
                         what="prior sums").fetchall()
        k = len(edges) + 1
        s1, s0 = np.zeros(k), np.zeros(k)
        for h, a, b in rows:
            s1[int(h)], s0[int(h)] = float(a or 0.0), float(b or 0.0)
        return s1, s0

    def bin_residual_stats(self, bins: int, alpha: float, f: float,
                           probability: str | None = None
                           ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """See :meth:`Engine.bin_residual_stats` (one pass; the bins of
        :meth:`score_histogram`)."""
        info = self.describe()
        edges = info.histogram_edges(bins)
        lo, hi, m = float(edges[0]), float(edges[-1]), len(edges) - 1
        if probability is not None and probability not in self._types:
            raise AssayInputError(self.source, f"missing column '{probability}'",
                                  expected=f"columns among {list(self._types)}")
        q = ("1.0 / (1.0 + exp(-__s))" if probability is None else
             f"greatest(0.0, least(1.0, CAST({quote(probability)} AS DOUBLE)))")
        sd = (f"CASE WHEN __p = 1 THEN sqrt({alpha**2 * f**2!r} * (1.0 - __q) + "
              f"{(1.0 - f) ** 2!r} * __q) ELSE {(1.0 - alpha) * f!r} * sqrt(__q) END")
        first = "least(CAST(floor(((__s - $lo) / $den) * $m) AS BIGINT), $m - 1)"
        src = (f"(SELECT CAST({quote(self.score_col)} AS DOUBLE) AS __s, "
               f"CAST({quote(self.prediction_col)} AS TINYINT) AS __p"
               + (f", CAST({quote(probability)} AS DOUBLE) AS __r" if probability else "")
               + f" FROM {self._from})")
        q = q.replace(f"CAST({quote(probability)} AS DOUBLE)", "__r") if probability else q
        sql = (f"SELECT i, count(*), sum({sd}), max({sd}) FROM (SELECT __p, {q} AS __q, "
               f"CASE WHEN __s < $e[i0 + 1] THEN i0 - 1 WHEN __s >= $e[i0 + 2] AND "
               f"i0 != $m - 1 THEN i0 + 1 ELSE i0 END AS i FROM (SELECT *, {first} AS i0 "
               f"FROM {src})) GROUP BY i")
        rows = self._sql(sql, {"lo": float(lo), "den": float(hi - lo), "m": m,
                               "e": [float(x) for x in edges]}, what="residual sums").fetchall()
        counts, total, top = np.zeros(m, dtype=np.int64), np.zeros(m), np.zeros(m)
        for i, c, t, mx in rows:
            counts[int(i)], total[int(i)], top[int(i)] = int(c), float(t), float(mx)
        return counts, total, top, edges



__all__ = ["PriorSums"]

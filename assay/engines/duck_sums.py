"""Per-stratum and per-bin sums of the prior on DuckDB: what the Neyman allocation and the
importance design ask of the pool; and the ranks of many items in one pass, by a join on the
fine score bins (what ``auto`` asks for its rank calibration). Mixins of
:class:`assay.engines.duck.DuckDBEngine`."""
from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from assay.engines.base import OrderKeys
from assay.engines.binned import BinnedCounts
from assay.engines.hashing import ORDER_SEED, hash_sql, quote
from assay.errors import AssayInputError


class BinRanks(BinnedCounts):
    """``counts_through`` and ``ranks_of`` in one pass whatever the number of keys (needs the
    engine's ``_sql``, ``_fine_bins``, ``_base``, ``con``, ``describe``).

    The items at or before a key are those of the fine score bins above its own (from the
    kept bin counts and positives) plus those of its own bin with a higher score, or the same
    score and a tie hash not larger — counted by joining the pool with the keys on the bin, so
    each row meets only the keys of its own bin. An item's rank is that count − 1."""

    def _bin_counts(self, keys: OrderKeys, info: Any) -> tuple[list, list]:
        n = len(keys)
        rows, params, b = self._fine_bins()
        want = pd.DataFrame({"__w": np.arange(n, dtype=np.int64),
                             "__ks": np.asarray(keys.score, dtype=np.float64),
                             "__kt": np.asarray(keys.tie, dtype=np.uint64)})
        name = f"__assay_keys_{id(want)}"
        self.con.register(name, want)
        try:
            kb = b.replace("__s", "__ks")
            # the tie hash only where the scores are equal (CASE evaluates it for those rows)
            through = (f"CASE WHEN p.__s > k.__ks THEN 1 WHEN p.__s < k.__ks THEN 0 ELSE "
                       f"CAST({hash_sql(ORDER_SEED, 'p.__k')} <= k.__kt AS INTEGER) END")
            got = self._sql(
                f"SELECT __w, __kb, sum(__f), sum(__f * __p) FROM (SELECT k.__w, k.__kb, "
                f"p.__p, {through} AS __f FROM (SELECT __s, __p, __k, {b} AS __b FROM "
                f"{self._base}) p JOIN (SELECT *, {kb} AS __kb FROM {name}) k "
                f"ON p.__b = k.__kb) GROUP BY __w, __kb", params, what="ranks").fetchall()
        finally:
            self.con.unregister(name)
        return rows, got


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

"""Per-stratum and per-bin sums of the prior on Spark: what the Neyman allocation and the
importance design ask of the pool; and the counts through many keys in one pass (``auto``'s
ranks). Mixins of :class:`assay.engines.spark.SparkEngine`; the same SQL as
:mod:`assay.engines.duck_sums` in Spark's dialect."""
from __future__ import annotations

from typing import Any

import numpy as np

from assay.engines.base import OrderKeys
from assay.engines.binned import BinnedCounts
from assay.engines.hashing import ORDER_SEED
from assay.engines.spark_sql import dbl, ordered, quote, signed, with_hash
from assay.errors import AssayInputError


BINS = 1 << 16


class SparkBinRanks(BinnedCounts):
    """``counts_through`` and ``ranks_of`` in one pass whatever the number of keys, as
    :class:`assay.engines.duck_sums.BinRanks`: the pool joined with the keys (broadcast) on
    65,536 equal score bins, the bins above a key's from their kept counts (needs the engine's
    ``spark``, ``_base``, ``_collect``, ``describe``)."""

    _fine: list | None = None

    def _bin_counts(self, keys: OrderKeys, info: Any) -> tuple[list, list]:
        from pyspark.sql import functions as F
        lo, sc = float(info.score_min), float(BINS / (info.score_max - info.score_min))
        b = f"least(CAST(floor((__s - {dbl(lo)}) * {dbl(sc)}) AS BIGINT), {BINS - 1}L)"
        if self._fine is None:      # the same for any keys: one pass per engine (kept)
            self._fine = self._collect(self._base.withColumn("__b", F.expr(b)).groupBy("__b")
                                       .agg(F.count(F.lit(1)), F.sum("__p")), "fine bins")
        want = self.spark.createDataFrame(
            [(i, float(s_), signed(int(t))) for i, (s_, t) in enumerate(zip(keys.score,
                                                                            keys.tie))],
            "__w long, __ks double, __kt long").withColumn("__kb", F.expr(b.replace("__s",
                                                                                  "__ks")))
        pool = self._base.select("__s", "__p", "__k").withColumn("__b", F.expr(b))
        joined = with_hash(pool.join(F.broadcast(want), F.col("__b") == F.col("__kb")),
                           ORDER_SEED, "__k", "__t")
        flag = (f"CASE WHEN __s > __ks THEN 1 WHEN __s < __ks THEN 0 WHEN {ordered('__t')} <= "
                f"{ordered('__kt')} THEN 1 ELSE 0 END")
        got = self._collect(joined.withColumn("__f", F.expr(flag)).groupBy("__w", "__kb").agg(
            F.sum("__f"), F.sum(F.col("__f") * F.col("__p"))), "ranks")
        return list(self._fine), got


class SparkPriorSums:
    """``segment_prior_sums`` and ``bin_residual_stats`` (needs the engine's ``_df``,
    ``_base``, ``_with_stratum``, ``_binned``, ``_collect``, ``_types``, ``describe``)."""

    def _prior(self, probability: str | None) -> Any:
        """``_base`` with ``__q``: the prior P(label = 1), the ``probability`` column clipped
        to [0, 1], else logistic(score)."""
        from pyspark.sql import functions as F
        if probability is None:
            return self._base.withColumn("__q", F.expr("1.0D / (1.0D + exp(-__s))"))
        if probability not in self._types:
            raise AssayInputError(self.source, f"missing column '{probability}'",
                                  expected=f"columns among {list(self._types)}")
        ids = [F.col(quote(c)) for c in self.id_columns]
        return self._df.select(
            *ids, F.expr(f"CAST({quote(self.score_col)} AS DOUBLE)").alias("__s"),
            F.expr(f"CAST({quote(self.prediction_col)} AS INT)").alias("__p"),
            F.expr(self._key).alias("__k"),
            F.expr(f"greatest(0.0D, least(1.0D, CAST({quote(probability)} AS DOUBLE)))")
            .alias("__q"))

    def segment_prior_sums(self, edges: OrderKeys, probability: str | None = None
                           ) -> tuple[np.ndarray, np.ndarray]:
        """See :meth:`Engine.segment_prior_sums` (one pass)."""
        from pyspark.sql import functions as F
        self.describe()
        df = self._with_stratum(self._prior(probability), edges)
        rows = self._collect(df.groupBy("__h").agg(
            F.expr("sum(CASE WHEN __p = 1 THEN __q END)"),
            F.expr("sum(CASE WHEN __p = 0 THEN __q END)")), "prior sums")
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
        from pyspark.sql import functions as F
        self.describe()
        m = int(bins)
        sd = (f"CASE WHEN __p = 1 THEN sqrt({alpha**2 * f**2!r}D * (1.0D - __q) + "
              f"{(1.0 - f) ** 2!r}D * __q) ELSE {(1.0 - alpha) * f!r}D * sqrt(__q) END")
        df, edges = self._binned(self._prior(probability), m)
        df = df.withColumn("__sd", F.expr(sd))
        rows = self._collect(df.groupBy("__b").agg(F.count(F.lit(1)), F.sum("__sd"),
                                                    F.max("__sd")), "residual sums")
        counts, total, top = np.zeros(m, dtype=np.int64), np.zeros(m), np.zeros(m)
        for i, c, t, mx in rows:
            counts[int(i)], total[int(i)], top[int(i)] = int(c), float(t), float(mx)
        return counts, total, top, edges


__all__ = ["SparkBinRanks", "SparkPriorSums"]

"""Per-stratum and per-bin sums of the prior on Spark: what the Neyman allocation and the
importance design ask of the pool (a mixin of :class:`assay.engines.spark.SparkEngine`; the
same SQL as :mod:`assay.engines.duck_sums` in Spark's dialect)."""
from __future__ import annotations

from typing import Any

import numpy as np

from assay.engines.base import OrderKeys
from assay.engines.spark_sql import quote
from assay.errors import AssayInputError


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


__all__ = ["SparkPriorSums"]

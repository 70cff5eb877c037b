"""The Spark engine: a pool in a Spark DataFrame, a table of the session's catalog, or Parquet
files (a path or a glob), read where it lies through the user's own ``SparkSession``, whose
configuration is never changed (``pip install assay[spark]``; Java 17+).

All of assay's Spark SQL is here, in :mod:`assay.engines.spark_sql` (the hash, the strata),
:mod:`assay.engines.spark_quantiles` (the keys at ranks) and :mod:`assay.engines.spark_sums`
(the prior sums). Every answer is the in-memory reference's
(docs/engines.md); the hash is assay-hash-v1 in 64-bit ``bigint`` words with products from
16-bit limbs, so it runs with ``spark.sql.ansi.enabled`` on (Spark 4's default) or off.

Passes (each one scan; nothing cached): ``describe`` (validation, score range, fingerprint),
``score_histogram``, ``keys_at_ranks`` (:mod:`assay.engines.spark_quantiles`: a 65,536-bin
histogram, then the rows of the bins that hold the ranks, split again or gridded finer where
they exceed ``fetch_limit``, as on DuckDB), ``segment_counts`` (a binary search over the edges
as a nested CASE, ⌈log₂ K⌉ comparisons a row), ``stratum_prefix`` (a hash filter
h < q_h·2⁶⁴ per stratum, q_h a little above k_h/N_h, the survivors ranked in numpy; q_h raised
16-fold for a stratum left short), ``fetch`` (a broadcast join with the ids asked).

>>> SparkEngine.name
'spark'
"""
from __future__ import annotations

import glob as globmod
from functools import cached_property
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np
import pandas as pd

from assay.engines.base import (PREFIX_COLUMNS, Engine, OrderKeys, PoolInfo, SegmentCounts,
                                prefix_by_thresholds)
from assay.engines.hashing import FINGERPRINT_SEEDS, MASK, ORDER_SEED, check_seed, hash64
from assay.engines.spark_quantiles import SparkQuantiles
from assay.engines.spark_sql import (SIGN, codes_of, dbl, first_filter, key_expr, lit, ordered,
                                     quote, stratum_expr, with_hash, words)
from assay.engines.spark_sums import SparkBinRanks, SparkPriorSums
from assay.engines.validate import fingerprint_of, pick_id_columns
from assay.errors import AssayInputError

try:
    from pyspark.sql import functions as F
    from pyspark.sql import types as T
except ImportError as exc:  # pragma: no cover - pyspark is an extra
    raise ImportError("the Spark engine needs pyspark: pip install 'assay[spark]' "
                      "(pyspark>=3.5 and Java 17)") from exc

_INT = {"tinyint": np.int8, "smallint": np.int16, "int": np.int32, "bigint": np.int64}
_NUMPY = {**_INT, "double": np.float64, "float": np.float32, "boolean": np.bool_}
BINS = 1 << 16
PREFIX_FETCH = 250_000      # most rows a prefix brings into Python before its exact filter
_LIMBS = (21, 21, 22)       # a word summed as three limbs: no bigint sum overflows below 2⁴¹ rows


def _numeric(t: str) -> bool:
    return t in _INT or t in ("float", "double") or t.startswith("decimal")


class SparkEngine(SparkQuantiles, SparkBinRanks, SparkPriorSums, Engine):
    """A pool on Spark. ``spark``: the user's ``SparkSession`` (used as it is). ``source``: a
    Spark DataFrame, a Parquet path or glob (``*.parquet``; ``s3a://…`` and other URLs are
    passed to Spark unchecked), or a table or view name of the session's catalog.
    ``fetch_limit``: most rows one query brings into Python while locating quantiles (4·10⁶
    by default, DuckDB's: bench/out/engine_memory_s12.md)."""

    name = "spark"
    prefilter_sd, prefilter_extra = 6.0, 16.0   # q_h = (k + 6√k + 16) / N_h, as on DuckDB

    def __init__(self, spark: Any, source: Any, id_columns: Sequence[str] | None = None,
                 score: str = "score", prediction: str = "prediction",
                 fetch_limit: int = 4_000_000) -> None:
        self.spark, self.fetch_limit = spark, int(fetch_limit)
        self.source, self._df = self._resolve(source)
        self._types = {f.name: f.dataType.simpleString() for f in self._df.schema.fields}
        cols = list(self._types)
        self.id_columns = pick_id_columns(self.source, cols, id_columns)
        for col in (score, prediction):
            if col not in self._types:
                raise AssayInputError(self.source, f"missing column '{col}'",
                                      expected=f"columns among {cols}")
        if not _numeric(self._types[score]):
            raise AssayInputError(self.source, f"column '{score}' has type {self._types[score]}",
                                  expected="a numeric score column")
        if self._types[prediction] not in set(_INT) | {"boolean"}:
            raise AssayInputError(self.source, f"column '{prediction}' has type "
                                               f"{self._types[prediction]}",
                                  expected="a 0/1 integer or boolean prediction column")
        for c in self.id_columns:
            if self._types[c] not in set(_INT) | {"string"}:
                raise AssayInputError(self.source, f"id column '{c}' has type {self._types[c]}",
                                      expected="integer or text ids")
        self.score_col, self.prediction_col = score, prediction
        integer = len(self.id_columns) == 1 and self._types[self.id_columns[0]] in _INT
        self._key = key_expr(self.id_columns, integer)
        # progress(what, fraction or None when done): called at the start (0.0) and the end
        # (None) of each pass; Spark's own progress within a pass is not reported yet
        self.progress: Callable[[str, float | None], None] | None = None

    def _resolve(self, source: Any) -> tuple[str, Any]:
        """(name for messages, DataFrame) of a DataFrame, a Parquet path/glob or a table."""
        if hasattr(source, "schema") and hasattr(source, "sparkSession"):
            return "<Spark DataFrame>", source
        src = str(source)
        is_glob = any(ch in src for ch in "*?[")
        looks_file = (is_glob or src.lower().endswith((".parquet", ".pq")) or "/" in src
                      or isinstance(source, Path))
        if looks_file and "://" not in src:
            if is_glob and not globmod.glob(src):
                raise AssayInputError(src, "no file matches the pattern")
            if not is_glob and not Path(src).exists():
                raise AssayInputError(src, "file not found")
        try:
            df = self.spark.read.parquet(src) if looks_file else self.spark.table(src)
        except Exception as exc:  # noqa: BLE001 - Spark raises many kinds; one message
            detail = " ".join(str(exc).split())[:300]
            raise AssayInputError(src, f"cannot be read: {detail}") from None
        return src, df

    # -- the frames every pass starts from ------------------------------------------------------
    @property
    def _base(self) -> Any:
        """ids, ``__s`` (score, double), ``__p`` (prediction, int), ``__k`` (key bits)."""
        return self._df.select(*[F.col(quote(c)) for c in self.id_columns],
                               F.expr(f"CAST({quote(self.score_col)} AS DOUBLE)").alias("__s"),
                               F.expr(f"CAST({quote(self.prediction_col)} AS INT)").alias("__p"),
                               F.expr(self._key).alias("__k"))

    def _with_tie(self, df: Any) -> Any:
        """``df`` with ``__t`` (the ranking's tie hash) and ``__to`` (its :func:`ordered`)."""
        df = with_hash(df, ORDER_SEED, "__k", "__t")
        return df.withColumn("__to", F.expr(ordered("__t")))

    def _with_stratum(self, df: Any, edges: OrderKeys) -> Any:
        expr, uses_tie = stratum_expr(edges)
        if uses_tie and "__to" not in df.columns:
            df = self._with_tie(df)
        return df.withColumn("__h", F.expr(expr))

    # -- describe ---------------------------------------------------------------------------
    @cached_property
    def _info(self) -> PoolInfo:
        df = self._df.select(
            F.expr(f"CAST({quote(self.score_col)} AS DOUBLE)").alias("__s"),
            F.expr(f"CAST({quote(self.prediction_col)} AS DOUBLE)").alias("__r"),
            F.expr(" OR ".join(f"{quote(c)} IS NULL" for c in self.id_columns)).alias("__n"),
            F.expr(self._key).alias("__k"))
        for j, s in enumerate(FINGERPRINT_SEEDS):
            df = with_hash(df, s, "__k", f"__f{j}")
        aggs = ["count(*)", "count(__s)",
                "count_if(isnan(__s) OR __s IN (double('inf'), double('-inf')))",
                "min(__s)", "max(__s)", "count_if(__r IS NULL OR __r NOT IN (0.0, 1.0))",
                "count_if(__r = 1.0)", "count_if(__n)"]
        for j, where in ((0, "TRUE"), (1, "__r = 1.0")):
            shift = 0
            for bits in _LIMBS:
                aggs.append(f"sum(CASE WHEN {where} THEN shiftrightunsigned(__f{j}, {shift}) & "
                            f"{(1 << bits) - 1}L ELSE 0L END)")
                shift += bits
        row = self._collect(df.selectExpr(*aggs), "validate and fingerprint")[0]
        n, n_score, n_bad, lo, hi, bad_pred, pos, null_ids = row[:8]
        sums = []
        for j in range(2):
            parts, total, shift = row[8 + 3 * j: 11 + 3 * j], 0, 0
            for bits, v in zip(_LIMBS, parts):
                total += int(v or 0) << shift
                shift += bits
            sums.append(total & MASK)
        col = self.score_col
        if n == 0:
            raise AssayInputError(self.source, "the pool is empty", expected="at least one item")
        if n_score < n:
            raise AssayInputError(self.source, f"column '{col}' has {n - n_score} missing "
                                               "value(s)", expected="a finite real number")
        if n_bad:
            raise AssayInputError(self.source, f"column '{col}' has {n_bad} NaN or infinite "
                                               "value(s)", expected="a finite real number")
        if bad_pred:
            raise AssayInputError(self.source, f"column '{self.prediction_col}' has {bad_pred} "
                                               "value(s) other than 0 and 1", expected="0 or 1")
        if null_ids:
            raise AssayInputError(self.source, f"{null_ids} item(s) without an id in column(s) "
                                               f"{self.id_columns}",
                                  expected="every item to have an id")
        return PoolInfo(self.source, int(n), tuple(self._types.items()), tuple(self.id_columns),
                        self.score_col, self.prediction_col, int(pos), float(lo), float(hi),
                        fingerprint_of(int(n), *sums))

    def describe(self) -> PoolInfo:
        return self._info

    def _collect(self, df: Any, what: str = "scan") -> list:
        if self.progress is not None:
            self.progress(what, 0.0)
        try:
            return df.collect()
        finally:
            if self.progress is not None:
                self.progress(what, None)

    # -- histogram (the quantiles: :mod:`assay.engines.spark_quantiles`) ----------------------
    def _binned(self, df: Any, bins: int) -> tuple[Any, np.ndarray]:
        """``df`` with ``__b``, numpy.histogram's bin of ``__s`` (its uniform-bin rule:
        ((s − lo)/(hi − lo))·m truncated, then moved one bin down or up where s lies outside
        that bin's edges), and the edges."""
        info = self.describe()
        edges = info.histogram_edges(bins)
        lo, hi, m = float(edges[0]), float(edges[-1]), len(edges) - 1
        # one constant (folded once): ~8 times faster to plan than an array of m + 1 literals
        arr = ("CAST(split('" + ",".join(repr(float(x)) for x in edges)
               + "', ',') AS ARRAY<DOUBLE>)")
        i0 = (f"least(CAST(floor(((__s - {dbl(lo)}) / {dbl(hi - lo)}) * {m}.0D) AS BIGINT), "
              f"{m - 1}L)")
        b = (f"(CASE WHEN __s < element_at(__e, CAST(__i0 + 1 AS INT)) THEN __i0 - 1 "
             f"WHEN __s >= element_at(__e, CAST(__i0 + 2 AS INT)) AND __i0 != {m - 1} "
             f"THEN __i0 + 1 ELSE __i0 END)")
        df = df.withColumn("__i0", F.expr(i0)).withColumn("__e", F.expr(arr))
        return df.withColumn("__b", F.expr(b)).drop("__i0", "__e"), edges

    def score_histogram(self, bins: int) -> tuple[np.ndarray, np.ndarray]:
        df, edges = self._binned(self._base.select("__s"), bins)
        rows = self._collect(df.groupBy("__b").count(), "score histogram")
        counts = np.zeros(int(bins), dtype=np.int64)
        for b, c in rows:
            counts[int(b)] = int(c)
        return counts, edges

    # -- strata -------------------------------------------------------------------------------
    def segment_counts(self, edges: OrderKeys) -> SegmentCounts:
        """One pass whatever the number of edges (a binary search a row)."""
        edges.check_sorted()
        self.describe()                 # validates the pool once, before any other pass
        k = len(edges) + 1
        df = self._with_stratum(self._base.select("__s", "__p", "__k"), edges)
        rows = self._collect(df.groupBy("__h").agg(F.count(F.lit(1)), F.sum("__p")),
                             "stratum counts")
        sizes, pos = np.zeros(k, dtype=np.int64), np.zeros(k, dtype=np.int64)
        for h, c, pp in rows:
            sizes[int(h)], pos[int(h)] = int(c), int(pp or 0)
        return SegmentCounts(sizes, pos)

    def stratum_prefix(self, edges: OrderKeys, k: np.ndarray, seed: int,
                       sizes: np.ndarray | None = None) -> pd.DataFrame:
        """See :meth:`Engine.stratum_prefix`; ``sizes`` (the strata's N_h) saves a pass."""
        seed = check_seed(seed)
        self.describe()
        want = np.asarray(k, dtype=np.int64)
        if sizes is None:
            sizes = self.segment_counts(edges).sizes
        sizes = np.asarray(sizes, dtype=np.int64)
        return prefix_by_thresholds(
            lambda thr: self._prefix_query(edges, want, thr, seed, sizes), want, sizes,
            self.prefilter_sd, self.prefilter_extra)

    def _prefix_query(self, edges: OrderKeys, want: np.ndarray, thr: list[int],
                      seed: int, sizes: np.ndarray) -> pd.DataFrame:
        """Rows with h(seed, key) under their stratum's threshold, ranked here by hash."""
        df = with_hash(self._base, seed, "__k", "__x").withColumn("__xo", F.expr(ordered("__x")))
        first, passing = first_filter(edges, sizes, thr)
        df = df.where(F.expr(first))
        ids = list(self.id_columns)
        n = len(ids)
        if passing <= min(self.fetch_limit, PREFIX_FETCH):
            # few rows pass the cheap filter: their strata and the exact filter in numpy (a
            # stratum CASE with tie hashes in the same Spark stage as the seed's hash ran
            # ~10x slower than either alone at 10^7 rows)
            got = self._collect(df.select(*[F.col(quote(c)) for c in ids], "__s", "__p",
                                          "__x", "__k"), "hash-order sample")
            sc = np.array([r[n] for r in got], dtype=np.float64)
            keys = words(r[n + 3] for r in got)
            code = codes_of(edges, sc, hash64(ORDER_SEED, keys))
            xs = words(r[n + 2] for r in got)
            ok = xs <= np.array(thr, dtype=np.uint64)[code]
            rows = [tuple(got[i][:n]) + (int(code[i]),) + tuple(got[i][n:])
                    for i in np.flatnonzero(ok)]
        else:
            df = self._with_stratum(df, edges)
            arr = "array(" + ", ".join(lit(t ^ SIGN) for t in thr) + ")"
            df = df.where(F.expr(f"__xo <= element_at({arr}, CAST(__h + 1 AS INT))"))
            rows = self._collect(df.select(*[F.col(quote(c)) for c in ids], "__h", "__s",
                                           "__p", "__x", "__k"), "hash-order sample")
        h = np.array([r[len(ids)] for r in rows], dtype=np.int64)
        x = words(r[len(ids) + 3] for r in rows)
        order = np.lexsort((x, h))
        h, x = h[order], x[order]
        starts = np.searchsorted(h, np.arange(len(want)))
        rank = np.arange(h.shape[0]) - starts[h] if h.size else np.zeros(0, dtype=np.int64)
        keep = rank < want[h] if h.size else np.zeros(0, dtype=bool)
        sel = order[keep]
        out = pd.DataFrame({c: self._column(c, [rows[i][j] for i in sel])
                            for j, c in enumerate(ids)})
        out["stratum"] = h[keep]
        out["rank_in_stratum"] = rank[keep].astype(np.int64)
        out["score"] = np.array([rows[i][len(ids) + 1] for i in sel], dtype=np.float64)
        out["prediction"] = np.array([rows[i][len(ids) + 2] for i in sel], dtype=np.int8)
        out["tie"] = hash64(ORDER_SEED, words(rows[i][len(ids) + 4] for i in sel))
        out["hash"] = x[keep]
        return out[ids + list(PREFIX_COLUMNS)]

    def _column(self, name: str, values: list) -> pd.Series:
        """A collected column as pandas holds it in memory (the pool's numpy dtype where it
        has no missing values)."""
        dt = _NUMPY.get(self._types[name])
        if dt is not None and all(v is not None for v in values):
            return pd.Series(np.array(values, dtype=dt), dtype=dt)
        return pd.Series(values, dtype=None if values else object)

    def fetch(self, ids: pd.DataFrame) -> pd.DataFrame:
        cols = list(self.id_columns)
        fields = {f.name: f for f in self._df.schema.fields}
        schema = T.StructType([T.StructField(c, fields[c].dataType) for c in cols]
                              + [T.StructField("__w", T.LongType())])
        conv = [int if self._types[c] in _INT else str for c in cols]
        data = [tuple(f(v) for f, v in zip(conv, row)) + (i,)
                for i, row in enumerate(ids[cols].itertuples(index=False, name=None))]
        want = self.spark.createDataFrame(data, schema)
        joined = self._df.join(F.broadcast(want), on=cols, how="inner")
        names = list(self._df.columns)
        rows = sorted(self._collect(joined.select(*[F.col(quote(c)) for c in names], "__w"),
                                    "fetch items"), key=lambda r: r[-1])
        if len(rows) != len(data):
            found = {r[-1] for r in rows}
            r = next(i for i in range(len(data)) if i not in found)
            raise AssayInputError(self.source, f"no item with id {list(data[r][:-1])}",
                                  expected="ids of items in the pool")
        return pd.DataFrame({c: self._column(c, [r[j] for r in rows])
                             for j, c in enumerate(names)})


__all__ = ["SparkEngine"]

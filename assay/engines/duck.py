"""The DuckDB engine: a pool in Parquet files (a path or a glob), a DuckDB table, or a table of a
connection the user passes in — read where it lies, never loaded whole. All of assay's SQL for
DuckDB is in this module and its mixins (:mod:`assay.engines.duck_quantiles`: the keys at
ranks; :mod:`assay.engines.duck_sums`: prior sums, ranks of many items; :mod:`assay.engines.
duck_io`: opening a pool, gold labels), the hash's expressions in :mod:`assay.engines.hashing`.

Passes (each one scan): ``describe`` (validation, score range, fingerprint), ``score_histogram``,
``keys_at_ranks`` (a 65,536-bin histogram, then the rows of the bins holding the ranks; a bin
too large to fetch is split again, by score or, when its scores are all equal, by the tie
hash, and bins holding more rows together than ``fetch_limit`` get one finer grid in one more
pass, so memory stays flat in the pool's size), ``segment_counts`` (one CASE over the edges),
``stratum_prefix`` (a hash prefilter h < q_h·2⁶⁴ per stratum, q_h a little above k_h/N_h, then
a window over the survivors; q_h raised 16-fold for a stratum left short).
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
from assay.engines.duck_io import _Watch, gold_lookup, open_pool
from assay.engines.duck_quantiles import DuckQuantiles
from assay.engines.duck_sums import BinRanks, PriorSums
# MAX_SPLITS, place_keys, plan_bins: still importable from here, as before duck_quantiles
from assay.engines.locate import BINS, MAX_SPLITS, place_keys, plan_bins  # noqa: F401
from assay.engines.hashing import (FINGERPRINT_SEEDS, MASK, ORDER_SEED, check_seed, hash64,
                                   hash_sql, key_sql, quote)
from assay.engines.validate import fingerprint_of, pick_id_columns
from assay.errors import AssayInputError

try:
    import duckdb
except ImportError as exc:  # pragma: no cover - duckdb is a dependency
    raise ImportError("the DuckDB engine needs the duckdb package: pip install duckdb") from exc

_INT = {"TINYINT", "SMALLINT", "INTEGER", "BIGINT", "UTINYINT", "USMALLINT", "UINTEGER"}
_NUMERIC = _INT | {"HUGEINT", "UBIGINT", "UHUGEINT", "FLOAT", "DOUBLE"}
CASE_EDGES = 32     # more edges than this: segment counts by bins, not by one CASE


def _numeric(t: str) -> bool:
    return t in _NUMERIC or t.startswith("DECIMAL")


class DuckDBEngine(DuckQuantiles, BinRanks, PriorSums, Engine):
    """A pool on DuckDB. ``source``: a Parquet path or glob (``*.parquet``), or the name of a
    table or view of ``connection`` (default: a new in-memory connection; a connection passed in
    is used as it is, its settings untouched). ``fetch_limit``: most rows one query brings into
    Python while locating quantiles (4·10⁶, about 0.15 GiB: the grid's ranks of a pool of
    10⁸ rows, 1.2·10⁶ rows, come in one fetch, without the finer grid's extra pass that 10⁹
    rows need; bench/out/engine_memory_s12.md)."""

    name = "duckdb"
    prefilter_sd, prefilter_extra = 6.0, 16.0   # q_h = (k + 6√k + 16) / N_h (module docstring)

    def __init__(self, source: str | Path, connection: Any = None,
                 id_columns: Sequence[str] | None = None, score: str = "score",
                 prediction: str = "prediction", fetch_limit: int = 4_000_000) -> None:
        self.con = connection if connection is not None else duckdb.connect()
        self.fetch_limit = int(fetch_limit)
        self._bin_rows: list | None = None     # the fine score bins' counts (segment_counts)
        self.source, self._from = self._resolve(str(source), connection is not None)
        try:
            described = self.con.execute(f"DESCRIBE SELECT * FROM {self._from}").fetchall()
        except duckdb.Error as exc:
            detail = " ".join(str(exc).split())
            raise AssayInputError(self.source, f"cannot be read: {detail}") from None
        self._types = {str(r[0]): str(r[1]) for r in described}
        cols = list(self._types)
        self.id_columns = pick_id_columns(self.source, cols, id_columns)
        for col in (score, prediction):
            if col not in self._types:
                raise AssayInputError(self.source, f"missing column '{col}'",
                                      expected=f"columns among {cols}")
        if not _numeric(self._types[score]):
            raise AssayInputError(self.source, f"column '{score}' has type {self._types[score]}",
                                  expected="a numeric score column")
        if not (self._types[prediction] in _INT | {"BOOLEAN"}):
            raise AssayInputError(self.source, f"column '{prediction}' has type "
                                               f"{self._types[prediction]}",
                                  expected="a 0/1 integer or boolean prediction column")
        for c in self.id_columns:
            if self._types[c] not in _INT | {"VARCHAR"}:
                raise AssayInputError(self.source, f"id column '{c}' has type {self._types[c]}",
                                      expected="integer or text ids")
        self.score_col, self.prediction_col = score, prediction
        integer = len(self.id_columns) == 1 and self._types[self.id_columns[0]] in _INT
        self._key = key_sql(self.id_columns, integer)
        ids = ", ".join(quote(c) for c in self.id_columns)
        self._base = (f"(SELECT {ids}, CAST({quote(score)} AS DOUBLE) AS __s, "
                      f"CAST({quote(prediction)} AS TINYINT) AS __p, "
                      f"{self._key} AS __k FROM {self._from})")
        self._tie = hash_sql(ORDER_SEED, "__k")
        # progress(what, fraction or None when done): called from a watcher thread during
        # each query (DuckDB's query_progress), e.g. to drive a progress bar
        self.progress: Callable[[str, float | None], None] | None = None

    def _resolve(self, src: str, has_connection: bool) -> tuple[str, str]:
        """(name for messages, FROM clause) of a Parquet path/glob or a table name."""
        is_glob = any(ch in src for ch in "*?[")
        looks_file = is_glob or src.lower().endswith((".parquet", ".pq")) or "/" in src
        if looks_file or not has_connection:
            if "://" not in src:
                if is_glob and not globmod.glob(src):
                    raise AssayInputError(src, "no file matches the pattern")
                if not is_glob and not Path(src).exists():
                    raise AssayInputError(src, "file not found")
                if not is_glob and Path(src).is_dir():
                    raise AssayInputError(src, "is a folder",
                                          expected="a Parquet file or a glob such as dir/*.parquet")
            return src, "read_parquet(" + "'" + src.replace("'", "''") + "')"
        parts = src.split(".")
        return src, ".".join(quote(p) for p in parts)

    def _sql(self, sql: str, params: dict | None = None, what: str = "scan") -> Any:
        try:
            if self.progress is None:
                return self.con.execute(sql, params or {})
            with _Watch(self.con, self.progress, what):
                return self.con.execute(sql, params or {})
        except duckdb.ConversionException as exc:
            detail = " ".join(str(exc).split())
            raise AssayInputError(self.source, f"a value cannot be read: {detail}") from None

    # -- describe ---------------------------------------------------------------------------
    @cached_property
    def _info(self) -> PoolInfo:
        h1, h2 = (hash_sql(s, "__k") for s in FINGERPRINT_SEEDS)
        raw = f"CAST({quote(self.prediction_col)} AS DOUBLE)"
        row = self._sql(
            f"SELECT count(*), count(__s), count(*) FILTER (WHERE isnan(__s) OR isinf(__s)), "
            f"min(__s), max(__s), count(*) FILTER (WHERE __r IS NULL OR __r NOT IN (0, 1)), "
            f"count(*) FILTER (WHERE __r = 1), count(*) - count(__k), "
            f"sum({h1}), sum({h2}) FILTER (WHERE __r = 1) "
            f"FROM (SELECT *, {raw} AS __r FROM (SELECT *, CAST({quote(self.score_col)} AS DOUBLE)"
            f" AS __s, {self._key} AS __k FROM {self._from}))", what="validate and fingerprint"
        ).fetchall()[0]      # fetchone() leaves the result open: DuckDB 2 then refuses register()
        n, n_score, n_bad, lo, hi, bad_pred, pos, null_ids, s1, s2 = row
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
                                               "value(s) other than 0 and 1",
                                  expected="0 or 1")
        if null_ids:
            raise AssayInputError(self.source, f"{null_ids} item(s) without an id in column(s) "
                                               f"{self.id_columns}",
                                  expected="every item to have an id")
        return PoolInfo(self.source, int(n), tuple(self._types.items()), tuple(self.id_columns),
                        self.score_col, self.prediction_col, int(pos), float(lo), float(hi),
                        fingerprint_of(int(n), int(s1 or 0), int(s2 or 0)))

    def describe(self) -> PoolInfo:
        return self._info

    # -- histogram (the keys at ranks: duck_quantiles.DuckQuantiles) -----------------------
    def score_histogram(self, bins: int) -> tuple[np.ndarray, np.ndarray]:
        info = self.describe()
        edges = info.histogram_edges(bins)
        lo, hi, m = float(edges[0]), float(edges[-1]), len(edges) - 1
        # numpy.histogram's uniform-bin rule: f = ((s − lo) / (hi − lo)) · m, truncated, then
        # moved one bin down or up where the value lies outside its bin's edges
        first = "least(CAST(floor(((__s - $lo) / $den) * $m) AS BIGINT), $m - 1)"
        sql = (f"SELECT i, count(*) FROM (SELECT CASE WHEN __s < $e[i0 + 1] THEN i0 - 1 "
               f"WHEN __s >= $e[i0 + 2] AND i0 != $m - 1 THEN i0 + 1 ELSE i0 END AS i "
               f"FROM (SELECT __s, {first} AS i0 FROM {self._base})) GROUP BY i")
        rows = self._sql(sql, {"lo": float(lo), "den": float(hi - lo), "m": m,
                               "e": [float(x) for x in edges]}, what="score histogram").fetchall()
        counts = np.zeros(m, dtype=np.int64)
        for i, c in rows:
            counts[int(i)] = int(c)
        return counts, edges

    # -- strata -------------------------------------------------------------------------------
    def _stratum_sql(self, edges: OrderKeys) -> tuple[str, dict]:
        edges.check_sorted()
        if len(edges) == 0:
            return "0", {}
        params, whens = {}, []
        for j in range(len(edges)):
            params[f"es{j}"] = float(edges.score[j])
            t = int(edges.tie[j])
            cond = (f"__s >= $es{j}" if t == MASK else
                    f"(__s > $es{j} OR (__s = $es{j} AND {self._tie} <= {t}::UBIGINT))")
            whens.append(f"WHEN {cond} THEN {j}")
        full = f"(CASE {' '.join(whens)} ELSE {len(edges)} END)"
        if (edges.tie == np.uint64(MASK)).all():
            return full, params
        # the tie hash only for rows whose score is an edge's: the rest by score alone
        by_score = " ".join(f"WHEN __s > $es{j} THEN {j}" for j in range(len(edges)))
        scores = ", ".join(f"$es{j}" for j in range(len(edges)))
        return (f"(CASE WHEN __s IN ({scores}) THEN {full} ELSE (CASE {by_score} ELSE "
                f"{len(edges)} END) END)"), params

    def segment_counts(self, edges: OrderKeys) -> SegmentCounts:
        """One CASE over the edges when they are few (≤ :data:`CASE_EDGES`); else two passes
        whatever their number (a rank grid, the ranks of a batch of sampled items): counts per
        fine score bin (kept: the same for any edges, so later calls make one pass), then the
        rows of the bins an edge falls in."""
        edges.check_sorted()
        self.describe()                 # validates the pool once, before any other pass
        if len(edges) > CASE_EDGES:
            return self._binned_counts(edges)
        return self._case_counts(edges)

    def _case_counts(self, edges: OrderKeys, where: str = "TRUE", params: dict | None = None,
                     offset: int = 0, k: int | None = None) -> SegmentCounts:
        k = len(edges) + 1 if k is None else k
        expr, p = self._stratum_sql(edges)
        rows = self._sql(f"SELECT {offset} + {expr} AS h, count(*), sum(__p) FROM {self._base} "
                         f"WHERE {where} GROUP BY h", {**(params or {}), **p},
                         what="stratum counts").fetchall()
        sizes, pos = np.zeros(k, dtype=np.int64), np.zeros(k, dtype=np.int64)
        for h, c, pp in rows:
            sizes[int(h)], pos[int(h)] = int(c), int(pp or 0)
        return SegmentCounts(sizes, pos)

    def _fine_bins(self) -> tuple[list, dict, str]:
        """(rows, params, SQL of an item's bin): per non-empty bin of :data:`BINS` equal score
        bins (ascending score), its number, items, predicted positives and min and max score.
        The same for any edges, so one pass per engine (kept)."""
        info = self.describe()
        lo, hi = info.score_min, info.score_max
        params = {"blo": float(lo), "bsc": float(BINS / (hi - lo))}
        b = f"least(CAST(floor((__s - $blo) * $bsc) AS BIGINT), {BINS - 1})"
        if self._bin_rows is None:
            self._bin_rows = self._sql(f"SELECT {b} AS b, count(*), sum(__p), min(__s), "
                                       f"max(__s) FROM {self._base} GROUP BY b",
                                       params).fetchall()
        return self._bin_rows, params, b

    def _binned_counts(self, edges: OrderKeys) -> SegmentCounts:
        info = self.describe()
        k = len(edges) + 1
        sizes, pos = np.zeros(k, dtype=np.int64), np.zeros(k, dtype=np.int64)
        lo, hi = info.score_min, info.score_max
        if lo == hi:        # one score: the CASE is as good as anything
            return self._case_counts(edges)
        rows, params, b = self._fine_bins()
        neg = -edges.score                                  # ascending
        inside: dict[int, tuple[int, int]] = {}
        for bb, c, pp, mn, mx in rows:
            j0 = int(np.searchsorted(neg, -mx, side="left"))    # edges with score > max
            j1 = int(np.searchsorted(neg, -mn, side="right"))   # … with score ≥ min
            if j1 == j0:                                        # no edge inside: one stratum
                sizes[j0] += int(c)
                pos[j0] += int(pp or 0)
            else:
                inside[int(bb)] = (j0, j1, int(c))
        small = [bb for bb, (_, _, c) in inside.items() if c <= self.fetch_limit]
        for bb, (j0, j1, c) in inside.items():
            if c > self.fetch_limit:    # a huge bin (heavy ties): a CASE over its own edges
                sub = OrderKeys(edges.score[j0:j1], edges.tie[j0:j1])
                got = self._case_counts(sub, f"{b} = {bb}", params, offset=j0, k=k)
                sizes += got.sizes
                pos += got.positives
        if small:
            df = self._sql(f"SELECT __s, __t, __p FROM (SELECT *, {self._tie} AS __t FROM "
                           f"{self._base}) WHERE {b} IN ({', '.join(map(str, small))})",
                           params).fetchnumpy()
            s = np.asarray(df["__s"], dtype=np.float64)
            t = np.asarray(df["__t"], dtype=np.uint64)
            codes = np.searchsorted(neg, -s, side="left")       # edges with a higher score
            hi_eq = np.searchsorted(neg, -s, side="right")
            for i in np.flatnonzero(hi_eq > codes):             # edges of the row's own score
                codes[i] += int(np.searchsorted(edges.tie[codes[i]:hi_eq[i]], t[i], side="left"))
            sizes += np.bincount(codes, minlength=k)
            pos += np.bincount(codes, weights=np.asarray(df["__p"], dtype=np.float64),
                               minlength=k).astype(np.int64)
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
        expr, params = self._stratum_sql(edges)
        h = hash_sql(seed, "__k")
        # a cheap first filter: strata 0 … m−1 (top of the ranking) whole by score, the rest by
        # the largest threshold among them; m minimises the rows that pass on to the exact one
        first = self._first_filter(edges, sizes, thr, h, params)
        thr_case = "CASE __h " + " ".join(f"WHEN {j} THEN {t}::UBIGINT"
                                          for j, t in enumerate(thr)) + " END"
        k_case = "CASE __h " + " ".join(f"WHEN {j} THEN {int(w)}"
                                        for j, w in enumerate(want)) + " END"
        ids = ", ".join(quote(c) for c in self.id_columns)
        sql = (f"SELECT {ids}, __h, __rk, __s, __p, __k, __x FROM ("
               f"SELECT *, row_number() OVER (PARTITION BY __h ORDER BY __x) - 1 AS __rk FROM ("
               f"SELECT *, {h} AS __x FROM (SELECT *, {expr} AS __h FROM {self._base} "
               f"WHERE {first}) WHERE {h} <= {thr_case})) WHERE __rk < {k_case} "
               f"ORDER BY __h, __x")
        df = self._sql(sql, params, what="hash-order sample").df()
        keys = df["__k"].to_numpy(dtype=np.uint64)
        out = df[list(self.id_columns)].copy()
        out["stratum"] = df["__h"].to_numpy(dtype=np.int64)
        out["rank_in_stratum"] = df["__rk"].to_numpy(dtype=np.int64)
        out["score"] = df["__s"].to_numpy(dtype=np.float64)
        out["prediction"] = df["__p"].to_numpy(dtype=np.int8)
        out["tie"] = hash64(ORDER_SEED, keys)
        out["hash"] = df["__x"].to_numpy(dtype=np.uint64)
        return out[list(self.id_columns) + list(PREFIX_COLUMNS)]

    def _first_filter(self, edges: OrderKeys, sizes: np.ndarray, thr: list[int], h: str,
                      params: dict) -> str:
        """A cheap filter ahead of the exact one: a set W of strata kept whole by their score
        ranges, the rest by the largest hash threshold among them. The cheapest W (rows
        passing: Σ_W N_h + max_{h∉W} q_h · Σ_{h∉W} N_h) is a set of the strata of highest
        q_h, so only those K + 1 sets are tried."""
        q = np.array([t / 2.0**64 for t in thr])
        k = len(thr)
        order = np.argsort(-q, kind="stable")
        sz = sizes[order].astype(np.float64)
        head = np.concatenate([[0.0], np.cumsum(sz)])
        tail_q = np.array([q[order[m:]].max() if m < k else 0.0 for m in range(k + 1)])
        cost = head + tail_q * (head[-1] - head)
        m = int(np.argmin(cost))
        whole = np.zeros(k, dtype=bool)
        whole[order[:m]] = True
        parts = []
        a = 0
        while a < k:                            # runs of consecutive whole strata
            if not whole[a]:
                a += 1
                continue
            b = a
            while b + 1 < k and whole[b + 1]:
                b += 1
            conds = []
            if b < k - 1:                       # scores ≥ the run's last edge …
                params[f"wlo{a}"] = float(edges.score[b])
                conds.append(f"__s >= $wlo{a}")
            if a > 0:                           # … and ≤ the edge above it (ties: a superset)
                params[f"whi{a}"] = float(edges.score[a - 1])
                conds.append(f"__s <= $whi{a}")
            parts.append("(" + " AND ".join(conds) + ")" if conds else "TRUE")
            a = b + 1
        if m < k:
            parts.append(f"{h} <= {max(thr[j] for j in order[m:])}::UBIGINT")
        return " OR ".join(parts) if parts else "TRUE"

    def fetch(self, ids: pd.DataFrame) -> pd.DataFrame:
        cols = self.id_columns
        want = ids[cols].reset_index(drop=True).copy()
        want["__w"] = np.arange(len(want), dtype=np.int64)
        name = f"__assay_ids_{id(want)}"
        self.con.register(name, want)
        try:
            on = " AND ".join(f"p.{quote(c)} = w.{quote(c)}" for c in cols)
            df = self._sql(f"SELECT p.*, w.__w FROM {self._from} p JOIN {name} w ON {on} "
                           f"ORDER BY w.__w", what="fetch items").df()
        finally:
            self.con.unregister(name)
        if len(df) != len(want):
            found = set(df["__w"].tolist())
            r = next(i for i in range(len(want)) if i not in found)
            raise AssayInputError(self.source, f"no item with id {want[cols].iloc[r].tolist()}",
                                  expected="ids of items in the pool")
        return df.drop(columns="__w")


__all__ = ["DuckDBEngine", "gold_lookup", "open_pool"]

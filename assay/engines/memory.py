"""The in-memory engine: a pool in a pandas frame, every answer computed with numpy from a
full sort. Today's path for small pools, and the reference the other engines must match.

>>> import pandas as pd
>>> eng = MemoryEngine(pd.DataFrame({"id": [1, 2, 3, 4], "score": [0.9, 0.1, 0.5, 0.5],
...                                  "prediction": [1, 0, 1, 0]}))
>>> eng.describe().rows, eng.segment_counts(eng.rank_edges([0, 2, 4])).sizes.tolist()
(4, [2, 2])
"""
from __future__ import annotations

from functools import cached_property
from typing import Sequence

import numpy as np
import pandas as pd

from assay.engines.base import PREFIX_COLUMNS, Engine, OrderKeys, PoolInfo, SegmentCounts
from assay.engines.hashing import (FINGERPRINT_SEEDS, ORDER_SEED, check_seed, hash64,
                                   key_from_int, key_from_text)
from assay.engines.validate import fingerprint_of, pick_id_columns
from assay.errors import AssayInputError


class MemoryEngine(Engine):
    """A pool held as a pandas frame (``frame``: id column(s), ``score``, ``prediction`` and
    any other columns)."""

    name = "memory"

    def __init__(self, frame: pd.DataFrame, id_columns: Sequence[str] | None = None,
                 score: str = "score", prediction: str = "prediction",
                 source: str = "<pool DataFrame>") -> None:
        self.frame = frame.reset_index(drop=True)
        self.source, self.score_col, self.prediction_col = source, score, prediction
        types = {c: str(t) for c, t in self.frame.dtypes.items()}
        self.id_columns = pick_id_columns(source, list(types), id_columns)
        for col in (score, prediction):
            if col not in types:
                raise AssayInputError(source, f"missing column '{col}'",
                                      expected=f"columns among {list(types)}")
        if not pd.api.types.is_numeric_dtype(self.frame[score].dtype) or \
                pd.api.types.is_bool_dtype(self.frame[score].dtype):
            raise AssayInputError(source, f"column '{score}' has type {types[score]}",
                                  expected="a numeric score column")
        sc = self.frame[score].to_numpy(dtype=np.float64, na_value=np.nan)
        if not np.isfinite(sc).all():
            r = int(np.flatnonzero(~np.isfinite(sc))[0])
            raise AssayInputError(source, f"column '{score}' has value {sc[r]!r}",
                                  where=f"row {r + 1}", expected="a finite real number")
        pr = pd.to_numeric(self.frame[prediction], errors="coerce").to_numpy(
            dtype=np.float64, na_value=np.nan)
        bad = ~np.isin(pr, (0.0, 1.0))
        if bad.any():
            r = int(np.flatnonzero(bad)[0])
            raise AssayInputError(source, f"column '{prediction}' has value "
                                          f"{self.frame[prediction].iloc[r]!r}",
                                  where=f"row {r + 1}", expected="0 or 1")
        self.score, self.prediction = sc, pr.astype(np.int8)
        self._types = types

    @cached_property
    def keys(self) -> np.ndarray:
        """Item keys (uint64) of every item (:mod:`assay.engines.hashing`, step 1)."""
        cols = self.id_columns
        if len(cols) == 1 and pd.api.types.is_integer_dtype(self.frame[cols[0]].dtype):
            return key_from_int(self.frame[cols[0]].to_numpy())
        for c in cols:
            dt = self.frame[c].dtype
            if not (pd.api.types.is_integer_dtype(dt) or pd.api.types.is_string_dtype(dt)
                    or dt == object):
                raise AssayInputError(self.source, f"id column '{c}' has type {dt}",
                                      expected="integer or text ids")
        parts = [self.frame[c].astype(str).tolist() for c in cols]
        return key_from_text(["\t".join(t) for t in zip(*parts)])

    @cached_property
    def tie(self) -> np.ndarray:
        return hash64(ORDER_SEED, self.keys)

    @cached_property
    def order(self) -> np.ndarray:
        """Item indices in ranking order (decreasing score, then increasing tie hash)."""
        return np.lexsort((self.tie, -self.score))

    @cached_property
    def _info(self) -> PoolInfo:
        pos = self.prediction == 1
        sums = [int(hash64(FINGERPRINT_SEEDS[0], self.keys).sum(dtype=np.uint64)),
                int(hash64(FINGERPRINT_SEEDS[1], self.keys[pos]).sum(dtype=np.uint64))]
        return PoolInfo(self.source, int(self.score.shape[0]), tuple(self._types.items()),
                        tuple(self.id_columns), self.score_col, self.prediction_col,
                        int(pos.sum()), float(self.score.min()), float(self.score.max()),
                        fingerprint_of(int(self.score.shape[0]), *sums))

    def describe(self) -> PoolInfo:
        return self._info

    def score_histogram(self, bins: int) -> tuple[np.ndarray, np.ndarray]:
        counts, edges = np.histogram(self.score, bins=int(bins),
                                     range=(float(self.score.min()), float(self.score.max())))
        return counts.astype(np.int64), edges

    def keys_at_ranks(self, ranks: np.ndarray) -> OrderKeys:
        idx = self.order[np.asarray(ranks, dtype=np.int64)]
        return OrderKeys(self.score[idx].copy(), self.tie[idx].copy())

    bulk_ranks = True

    def counts_through(self, keys: OrderKeys) -> tuple[np.ndarray, np.ndarray]:
        """By binary search in the ranking (any number of keys)."""
        s, t = self.score[self.order], self.tie[self.order]
        neg = -np.asarray(keys.score, dtype=np.float64)
        lo, hi = np.searchsorted(-s, neg, side="left"), np.searchsorted(-s, neg, side="right")
        out = lo.astype(np.int64)
        for i in np.flatnonzero(hi > lo):           # the key's own score: by tie hash
            out[i] += int(np.searchsorted(t[lo[i]:hi[i]], np.uint64(keys.tie[i]), side="right"))
        cum = np.concatenate(([0], np.cumsum(self.prediction[self.order], dtype=np.int64)))
        return out, cum[out]

    def ranks_of(self, keys: OrderKeys) -> np.ndarray:
        """By binary search in the ranking (any number of keys)."""
        return self.counts_through(keys)[0] - 1

    def codes(self, edges: OrderKeys) -> np.ndarray:
        """Stratum of every item: #{edges before its key}."""
        edges.check_sorted()
        k = len(edges)
        codes = np.zeros(self.score.shape[0], dtype=np.int64)
        for j in range(k):      # K is small; one comparison per edge keeps it exact
            s, t = edges.score[j], edges.tie[j]
            codes += (self.score < s) | ((self.score == s) & (self.tie > t))
        return codes

    def segment_counts(self, edges: OrderKeys) -> SegmentCounts:
        c = self.codes(edges)
        k = len(edges) + 1
        return SegmentCounts(np.bincount(c, minlength=k).astype(np.int64),
                             np.bincount(c, weights=self.prediction, minlength=k).astype(np.int64))

    def segment_prior_sums(self, edges: OrderKeys, probability: str | None = None
                           ) -> tuple[np.ndarray, np.ndarray]:
        if probability is None:
            p = 1.0 / (1.0 + np.exp(-self.score))
        else:
            if probability not in self.frame.columns:
                raise AssayInputError(self.source, f"missing column '{probability}'",
                                      expected=f"columns among {list(self.frame.columns)}")
            p = np.clip(self.frame[probability].to_numpy(dtype=np.float64), 0.0, 1.0)
        c, k = self.codes(edges), len(edges) + 1
        pos = self.prediction == 1
        return (np.bincount(c[pos], weights=p[pos], minlength=k),
                np.bincount(c[~pos], weights=p[~pos], minlength=k))

    def bin_residual_stats(self, bins: int, alpha: float, f: float,
                           probability: str | None = None
                           ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        from assay.core.allocation import residual_sd
        counts, edges = self.score_histogram(bins)
        m = int(bins)
        b = np.clip(np.searchsorted(edges, self.score, side="right") - 1, 0, m - 1)
        if probability is None:
            p = 1.0 / (1.0 + np.exp(-self.score))
        else:
            p = np.clip(self.frame[probability].to_numpy(dtype=np.float64), 0.0, 1.0)
        sd = residual_sd(p, self.prediction, alpha, f)
        top = np.zeros(m)
        np.maximum.at(top, b, sd)
        return counts, np.bincount(b, weights=sd, minlength=m), top, edges

    def stratum_prefix(self, edges: OrderKeys, k: np.ndarray, seed: int,
                       sizes: np.ndarray | None = None) -> pd.DataFrame:
        h = hash64(check_seed(seed), self.keys)
        c = self.codes(edges)
        order = np.lexsort((h, c))
        c_sorted = c[order]
        starts = np.searchsorted(c_sorted, np.arange(len(edges) + 1))
        want = np.asarray(k, dtype=np.int64)
        pos = np.arange(order.shape[0]) - starts[c_sorted]
        keep = order[pos < want[c_sorted]]
        out = self.frame.loc[keep, self.id_columns].reset_index(drop=True)
        out["stratum"] = c[keep]
        out["rank_in_stratum"] = pos[pos < want[c_sorted]]
        out["score"] = self.score[keep]
        out["prediction"] = self.prediction[keep]
        out["tie"] = self.tie[keep]
        out["hash"] = h[keep]
        return out[list(self.id_columns) + list(PREFIX_COLUMNS)]

    def fetch(self, ids: pd.DataFrame) -> pd.DataFrame:
        cols = self.id_columns
        key = self.frame[cols].reset_index().merge(ids[cols].reset_index(drop=True).reset_index(names="_want"),
                                                   on=cols, how="right")
        if key["index"].isna().any():
            r = int(np.flatnonzero(key["index"].isna().to_numpy())[0])
            raise AssayInputError(self.source, f"no item with id {ids[cols].iloc[r].tolist()}",
                                  expected="ids of items in the pool")
        return self.frame.loc[key.sort_values("_want")["index"].astype(np.int64)].reset_index(
            drop=True)


__all__ = ["MemoryEngine"]

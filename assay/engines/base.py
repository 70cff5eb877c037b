"""What the statistical core asks of a pool, whatever holds it (docs/engines.md).

The **ranking** of a pool is a total order: decreasing score, ties broken by increasing
h(ORDER_SEED, key) (:mod:`assay.engines.hashing`), a bijection of the item key, so two items tie
only if their keys do. Rank 0 is the top item. An :class:`OrderKeys` pair (score, tie) places
an item in the ranking; (s, t) comes before (s', t') when s > s' or s = s' and t < t'.

**Strata** are contiguous runs of the ranking, given by their K − 1 **edges**: edge h is the key
of the last item of stratum h (rank strata: :meth:`Engine.keys_at_ranks` of bounds − 1; a score
cut c, "score ≥ c above": the key (c, 2⁶⁴ − 1)). An item belongs to the first stratum whose edge
it does not pass: stratum = #{edges e : e < key}.

Within a stratum, the **sampling order** of a run with seed σ is increasing h(σ, key); the first
k items in that order are a simple random sample without replacement of size k, the same on
every engine.

>>> e = OrderKeys.score_cuts([0.5])
>>> e.score.tolist(), int(e.tie[0]) == 2**64 - 1
([0.5], True)
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Callable

import numpy as np
import pandas as pd

from assay.core.strata import geometric_bounds
from assay.errors import AssayInputError
from assay.engines.hashing import MASK

# the columns of a stratum prefix beside the pool's id columns
PREFIX_COLUMNS = ("stratum", "rank_in_stratum", "score", "prediction", "tie", "hash")


@dataclass(frozen=True)
class PoolInfo:
    """A pool as an engine sees it: where it is, its size and columns, and its fingerprint
    (ids and predictions: the same on every engine, see :meth:`Engine.describe`)."""

    source: str
    rows: int
    columns: tuple[tuple[str, str], ...]   # (name, engine type)
    id_columns: tuple[str, ...]
    score: str
    prediction: str
    positives: int                          # predicted positives
    score_min: float
    score_max: float
    fingerprint: str

    def __post_init__(self) -> None:
        """Scores whose range overflows a double (max − min = ±inf) cannot be binned on any
        engine (equal-width bins, the finer grid's cells): refused with one line, not a cast
        error from deep inside the engine's SQL.

        >>> PoolInfo("p.parquet", 2, (), (), "score", "y", 0, -1.7e308, 1.7e308, "")
        Traceback (most recent call last):
        ...
        assay.errors.AssayInputError: p.parquet: column 'score' spans -1.7e+308 to 1.7e+308, a range wider than a double holds (expected scores whose max − min is finite: rescale them, e.g. divide by 1e10; any increasing transform keeps the ranking)
        """
        lo, hi = float(self.score_min), float(self.score_max)
        if self.rows and np.isfinite(lo) and np.isfinite(hi) and not np.isfinite(hi - lo):
            raise AssayInputError(self.source, f"column {self.score!r} spans {lo:.4g} to "
                                  f"{hi:.4g}, a range wider than a double holds",
                                  expected="scores whose max − min is finite: rescale them, "
                                  "e.g. divide by 1e10; any increasing transform keeps the "
                                  "ranking")

    def histogram_edges(self, bins: int) -> np.ndarray:
        """The m + 1 edges of the m uniform score bins every engine's histogram uses
        (numpy.histogram's, with a zero-width range widened by ½ each side).

        >>> PoolInfo("p", 2, (), (), "s", "y", 0, 1.0, 1.0, "").histogram_edges(2).tolist()
        [0.5, 1.0, 1.5]
        """
        lo, hi = self.score_min, self.score_max
        if lo == hi:
            lo, hi = lo - 0.5, hi + 0.5
        return np.linspace(lo, hi, int(bins) + 1, endpoint=True)

    def to_dict(self) -> dict:
        return {"source": self.source, "rows": self.rows, "columns": [list(c) for c in self.columns],
                "id_columns": list(self.id_columns), "score": self.score,
                "prediction": self.prediction, "positives": self.positives,
                "score_min": self.score_min, "score_max": self.score_max,
                "fingerprint": self.fingerprint}


@dataclass(frozen=True)
class OrderKeys:
    """Places in the ranking: ``score`` (float64) and ``tie`` (uint64) per place, ascending."""

    score: np.ndarray
    tie: np.ndarray

    @classmethod
    def score_cuts(cls, cuts: np.ndarray | list[float]) -> "OrderKeys":
        """Edges "score ≥ c above" for the cuts c (in any order; returned in ranking order)."""
        c = np.sort(np.asarray(cuts, dtype=np.float64))[::-1].copy()
        return cls(c, np.full(c.shape[0], MASK, dtype=np.uint64))

    def __len__(self) -> int:
        return int(self.score.shape[0])

    def sorted(self) -> "OrderKeys":
        idx = np.lexsort((self.tie, -self.score))
        return OrderKeys(self.score[idx], self.tie[idx])

    def check_sorted(self) -> None:
        s, t = self.score, self.tie
        bad = (s[1:] > s[:-1]) | ((s[1:] == s[:-1]) & (t[1:] <= t[:-1]))
        if bad.any():
            raise ValueError("edges must be distinct and in ranking order")

    def to_dict(self) -> dict:
        return {"score": [float(x) for x in self.score], "tie": [str(int(x)) for x in self.tie]}

    @classmethod
    def from_dict(cls, d: dict) -> "OrderKeys":
        return cls(np.asarray(d["score"], dtype=np.float64),
                   np.array([int(x) for x in d["tie"]], dtype=np.uint64))


@dataclass(frozen=True)
class SegmentCounts:
    """Per stratum: items and predicted positives (int64, length K)."""

    sizes: np.ndarray
    positives: np.ndarray


class Engine(ABC):
    """A pool on an engine. Every method returns small numpy arrays or pandas frames; no
    method returns or holds per-item arrays of the whole pool (except :class:`MemoryEngine`,
    whose pool is in memory anyway)."""

    name: str = "engine"
    # ranks_of many keys (thousands) in one pass: a design may rank everything it fetched
    bulk_ranks: bool = False

    @abstractmethod
    def describe(self) -> PoolInfo:
        """Size, columns, score range, predicted positives and fingerprint (validates the
        pool: raises :class:`assay.errors.AssayInputError` naming the source and column)."""

    @abstractmethod
    def score_histogram(self, bins: int) -> tuple[np.ndarray, np.ndarray]:
        """(counts, edges) of ``bins`` equal-width bins over [min, max] score, exactly as
        ``numpy.histogram(score, bins, range=(min, max))``."""

    @abstractmethod
    def keys_at_ranks(self, ranks: np.ndarray) -> OrderKeys:
        """The keys of the items at 0-based ``ranks`` of the ranking (exact quantiles; in the
        order of ``ranks``)."""

    @abstractmethod
    def segment_counts(self, edges: OrderKeys) -> SegmentCounts:
        """Items and predicted positives of the len(edges) + 1 strata cut by ``edges``."""

    @abstractmethod
    def stratum_prefix(self, edges: OrderKeys, k: np.ndarray, seed: int,
                       sizes: np.ndarray | None = None) -> pd.DataFrame:
        """The first ``k[h]`` items of each stratum h in sampling order h(seed, key): id
        columns and :data:`PREFIX_COLUMNS`, sorted by stratum then hash (``rank_in_stratum``
        0, 1, …). ``sizes``: the strata's N_h when known (saves a pass)."""

    @abstractmethod
    def segment_prior_sums(self, edges: OrderKeys, probability: str | None = None
                           ) -> tuple[np.ndarray, np.ndarray]:
        """Per stratum, Σ p over predicted positives and Σ p over predicted negatives, p the
        prior P(label = 1): the column ``probability`` clipped to [0, 1], else the logistic of
        the score (what a Neyman allocation needs, :func:`assay.core.allocation.
        neyman_weights`)."""

    @abstractmethod
    def bin_residual_stats(self, bins: int, alpha: float, f: float,
                           probability: str | None = None
                           ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Per bin of :meth:`score_histogram` (``bins`` bins, ascending score): items, Σ and
        max of the residual SD √E[e²] of :func:`assay.core.allocation.residual_sd` at
        F_α guess ``f`` (the importance design's q*, seed 002 eq. 5), and the bin edges."""

    @abstractmethod
    def fetch(self, ids: pd.DataFrame) -> pd.DataFrame:
        """Every column of the items whose id columns are the rows of ``ids`` (in that order;
        an id not in the pool raises :class:`assay.errors.AssayInputError`)."""

    # -- derived, the same for every engine ---------------------------------------------------
    def rank_edges(self, bounds: np.ndarray) -> OrderKeys:
        """Edges of rank strata with offsets ``bounds`` (0, …, N): the keys at bounds[1:-1] − 1."""
        b = np.asarray(bounds, dtype=np.int64)
        return self.keys_at_ranks(b[1:-1] - 1)

    def counts_through(self, keys: OrderKeys) -> tuple[np.ndarray, np.ndarray]:
        """Per key (a place in the ranking, e.g. an item's key): the items ranked at or before
        it and the predicted positives among them (the key's own item included) — an item's
        rank + 1, and ``cum_pred`` of a rank grid. Here by :meth:`segment_counts` over the
        distinct keys; an engine with ``bulk_ranks`` does it in one pass for any number."""
        order = np.lexsort((keys.tie, -keys.score))
        s, t = keys.score[order], keys.tie[order]
        new = np.ones(len(keys), dtype=bool)
        new[1:] = (s[1:] != s[:-1]) | (t[1:] != t[:-1])
        got = self.segment_counts(OrderKeys(s[new], t[new]))
        k = int(new.sum())
        which = np.cumsum(new) - 1
        items, pos = np.empty(len(keys), np.int64), np.empty(len(keys), np.int64)
        items[order] = np.cumsum(got.sizes)[:k][which]
        pos[order] = np.cumsum(got.positives)[:k][which]
        return items, pos

    def ranks_of(self, keys: OrderKeys) -> np.ndarray:
        """0-based rank of each item key (e.g. of sampled items, for the rank calibration):
        the number of items before it."""
        order = np.lexsort((keys.tie, -keys.score))
        edges = OrderKeys(keys.score[order], keys.tie[order])
        # the item at edge j is the last of segment j: its rank is #items in segments 0 … j, − 1
        last = np.cumsum(self.segment_counts(edges).sizes)[:len(keys)] - 1
        out = np.empty(len(keys), dtype=np.int64)
        out[order] = last
        return out


def prefix_by_thresholds(query: Callable[[list[int]], pd.DataFrame], want: np.ndarray,
                         sizes: np.ndarray, sd: float = 6.0, extra: float = 16.0
                         ) -> pd.DataFrame:
    """The random-order prefix of the SQL engines: ``query(thr)`` returns the rows of each
    stratum h with h(σ, key) < thr_h, ranked by hash and cut at k_h. The thresholds keep
    q_h = (k_h + sd·√k_h + extra)/N_h of each stratum, so fewer than k_h survivors has
    probability < 1e-9; a stratum still short of survivors (its hashes not spread as expected,
    e.g. a pool generated from h(σ, ·)) gets its threshold raised 16-fold, not straight to the
    whole stratum, so the window stays as small as the data allow.

    >>> import pandas as pd
    >>> calls = []
    >>> def query(thr):
    ...     calls.append(thr)
    ...     return pd.DataFrame({"stratum": [0] * (3 if len(calls) > 1 else 1)})
    >>> len(prefix_by_thresholds(query, np.array([3]), np.array([10**6]))), len(calls)
    (3, 2)
    """
    q = np.minimum(1.0, (want + sd * np.sqrt(want) + extra) / np.maximum(sizes, 1))
    thr = [MASK if qq >= 1.0 else int(qq * 2.0**64) for qq in q]
    while True:
        out = query(thr)
        got = np.bincount(out["stratum"].to_numpy(), minlength=len(want))
        short = (got < np.minimum(want, sizes)) & (np.asarray(thr, dtype=object) != MASK)
        if not short.any():
            return out
        q = np.where(short, np.minimum(1.0, 16.0 * q), q)
        thr = [t if not s else (MASK if qq >= 1.0 else int(qq * 2.0**64))
               for s, t, qq in zip(short, thr, q)]


__all__ = ["Engine", "OrderKeys", "PREFIX_COLUMNS", "PoolInfo", "SegmentCounts", "prefix_by_thresholds",
           "geometric_bounds"]

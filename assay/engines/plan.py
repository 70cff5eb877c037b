"""A design's strata on an engine, and the items it draws from them (docs/engines.md).

:func:`engine_strata` finds the strata a design asks for from the engine's exact counts — the
same strata as :mod:`assay.core.strata` builds in memory: CSF cuts from the same histogram
(seed 002, Algorithm 1) as edges "score ≥ c above", equal-size strata as rank edges — and
removes empty strata as the core does. :class:`PrefixSampler` hands out the items of each
stratum in the run's hash order h(seed, key) (a simple random sample without replacement,
the same items on every engine), fetching a longer prefix from the engine only when a stratum
runs out. Items are numbered in the order they were fetched: a draw's ``index`` is a row of
:attr:`PrefixSampler.items`, never a row of the pool.

>>> import pandas as pd
>>> from assay.engines import MemoryEngine
>>> eng = MemoryEngine(pd.DataFrame({"id": range(8), "score": [8, 7, 6, 5, 4, 3, 2, 1],
...                                  "prediction": [1, 1, 1, 0, 0, 0, 0, 0]}))
>>> st = engine_strata(eng, "equal", 2)
>>> st.sizes.tolist(), st.positives.tolist()
([4, 4], [3, 0])
>>> s = PrefixSampler(eng, st, seed=3)
>>> rows = [s.item(0, j) for j in range(4)]
>>> sorted(s.items["id"][rows].tolist()), s.passes
([0, 1, 2, 3], 1)
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from assay.core.strata import csf_cuts
from assay.engines.base import Engine, OrderKeys
from assay.engines.manifest import RunManifest
from assay.formats.pool import id_keys

NO_EDGES = OrderKeys(np.zeros(0), np.zeros(0, dtype=np.uint64))


@dataclass(frozen=True)
class EngineStrata:
    """Strata of a pool on an engine: K − 1 ``edges`` (ranking order), N_h ``sizes`` and
    predicted ``positives`` per stratum (all non-empty)."""

    edges: OrderKeys
    sizes: np.ndarray
    positives: np.ndarray
    method: str

    @property
    def count(self) -> int:
        return int(self.sizes.shape[0])

    def size(self, h: int) -> int:
        """N_h of one stratum (as :meth:`assay.core.strata.Strata.size`)."""
        return int(self.sizes[h])

    def manifest(self, engine: Engine, seed: int, **extra: object) -> RunManifest:
        """The run manifest of a run with seed ``seed`` over these strata (no pass)."""
        return RunManifest(int(seed), self.edges, tuple(int(s) for s in self.sizes),
                           engine.describe().fingerprint, engine.name,
                           extra={"strata": self.method, **extra})


def _non_empty(edges: OrderKeys, sizes: np.ndarray, positives: np.ndarray,
               method: str) -> EngineStrata:
    """Drop the edges of empty strata (the core's ``np.unique`` of its bounds)."""
    after = np.cumsum(sizes[::-1])[::-1]                 # items in strata h, h+1, …
    keep = [j for j in range(len(edges)) if sizes[j] > 0 and after[j + 1] > 0]
    nz = sizes > 0
    return EngineStrata(OrderKeys(edges.score[keep], edges.tie[keep]),
                        sizes[nz].astype(np.int64), positives[nz].astype(np.int64), method)


def engine_strata(engine: Engine, method: str, n_strata: int,
                  n_bins: int | None = None) -> EngineStrata:
    """Strata by name (``csf``, ``equal``, ``none``) from the engine's exact counts; the same
    partition as :func:`assay.core.strata.make_strata` (``equal`` up to ties in score, which
    the engines rank by hash and the core by pool order)."""
    info = engine.describe()
    n, k = info.rows, max(1, int(n_strata))
    edges = NO_EDGES
    if method not in ("csf", "equal", "none"):
        raise ValueError(f"unknown stratification method {method!r} (expected 'csf' or "
                         "'equal')")
    if method == "csf" and k > 1 and info.score_max > info.score_min:
        m = int(n_bins) if n_bins else int(min(n, 10_000))
        counts, e = engine.score_histogram(m)
        edges = OrderKeys.score_cuts(csf_cuts(counts, e, k))
    elif method == "equal" and k > 1:
        bounds = np.unique(np.linspace(0, n, min(k, n) + 1).round().astype(np.int64))
        edges = engine.rank_edges(bounds)
    counts = engine.segment_counts(edges)
    return _non_empty(edges, counts.sizes, counts.positives, method)


class PrefixSampler:
    """The items of each stratum in hash order h(seed, key), fetched from the engine as needed.

    ``item(h, j)`` is the row of :attr:`items` holding the j-th item of stratum h; the first
    call fetches ``first[h]`` items of every stratum in one pass, a stratum that runs out later
    is extended (doubling) in a pass of its own.
    """

    def __init__(self, engine: Engine, strata: EngineStrata, seed: int,
                 first: np.ndarray | None = None) -> None:
        self.engine, self.strata, self.seed = engine, strata, int(seed)
        self.first = (np.zeros(strata.count, dtype=np.int64) if first is None
                      else np.minimum(np.asarray(first, dtype=np.int64), strata.sizes))
        self._rows: list[list[int]] = [[] for _ in range(strata.count)]
        self._frames: list[pd.DataFrame] = []
        self._items: pd.DataFrame | None = None
        self._keys: list[str] = []                      # store key of each fetched row
        self._n = 0
        self.passes = 0
        self._started = False

    def _fetch(self, k: np.ndarray) -> None:
        have = np.array([len(r) for r in self._rows], dtype=np.int64)
        k = np.minimum(np.maximum(k, have), self.strata.sizes)
        if not (k > have).any():
            return
        got = self.engine.stratum_prefix(self.strata.edges, k, self.seed,
                                         sizes=self.strata.sizes)
        self.passes += 1
        h = got["stratum"].to_numpy()
        new = got[got["rank_in_stratum"].to_numpy() >= have[h]].reset_index(drop=True)
        idx = np.arange(self._n, self._n + len(new))
        for hh, i in zip(new["stratum"].to_numpy(), idx):
            self._rows[int(hh)].append(int(i))
        self._n += len(new)
        self._frames.append(new)
        self._keys.extend(id_keys(new[list(self.engine.describe().id_columns)]))
        self._items = None

    def extend(self, k: np.ndarray) -> None:
        """Hold at least the first ``k[h]`` items of every stratum h (one pass when any is
        missing): an adaptive design fetches each batch's items at once, not stratum by
        stratum."""
        self._started = True
        self._fetch(np.asarray(k, dtype=np.int64))

    def item(self, h: int, j: int) -> int:
        """Row of :attr:`items` of the j-th item (0-based) of stratum h in hash order."""
        if not self._started:
            self._started = True
            self._fetch(self.first)
        if j >= len(self._rows[h]):
            if j >= int(self.strata.sizes[h]):
                raise IndexError(f"stratum {h} has only {int(self.strata.sizes[h])} items")
            k = np.array([len(r) for r in self._rows], dtype=np.int64)
            k[h] = max(2 * k[h], j + 1, 16)
            self._fetch(k)
        return self._rows[h][j]

    def taken(self, h: int) -> int:
        return len(self._rows[h])

    @property
    def items(self) -> pd.DataFrame:
        """Every item fetched so far: id columns, ``stratum``, ``rank_in_stratum``, ``score``,
        ``prediction``, ``tie``, ``hash``; row i is draw index i."""
        if self._items is None:
            self._items = (pd.concat(self._frames, ignore_index=True) if self._frames else
                           pd.DataFrame(columns=list(self.engine.describe().id_columns)))
        return self._items

    def key(self, i: int) -> str:
        """The label store's key of item i: its id values as text, tab-separated (as
        :meth:`assay.formats.pool.Pool.key`)."""
        return self._keys[int(i)]


__all__ = ["EngineStrata", "NO_EDGES", "PrefixSampler", "engine_strata"]

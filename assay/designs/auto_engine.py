"""``auto`` on a pool that stays on an engine (docs/engines.md, issue 14).

The design is :class:`assay.designs.auto.AutoDesign` — the same geometric rank strata, census
of the top, batches re-allocated by Neyman's rule from the rank calibration, and the same
model-based estimate — with three facts asked of the engine instead of computed from per-item
arrays:

* **The strata and the rank grid.** Stratum h covers ranks [b_h, b_{h+1}) of
  :func:`assay.core.strata.geometric_bounds`. The calibration's quadrature
  (:class:`assay.core.calibration.RankGrid`) needs the predicted positives among the top r
  items only at its cut ranks r (≤ 24 per stratum, the strata's bounds among them,
  :func:`grid_ranks`): the engine gives the keys at ranks r − 1
  (:meth:`~assay.engines.base.Engine.keys_at_ranks`; the strata's edges are among them) and
  the predicted positives at or before each
  (:meth:`~assay.engines.base.Engine.counts_through`): the grid's ``cum_pred`` at those
  ranks — the same grid as in memory, without a per-item array.
* **The draws.** Draw j of stratum h is the stratum's j-th item in the run's hash order
  h(seed, key) (a simple random sample without replacement, the same items on every engine).
  The first prefix pass fetches min(N_h, budget) items of every stratum (what any allocation
  of the budget could take; up to :data:`PREFETCH_ROWS` rows, else each batch's own items in
  a pass of its own), so later batches need no pass to find their items. The Generator still
  orders the strata within a batch (the same calls as in memory). Only the items planned
  (:meth:`EngineAutoDesign.pending_rows`) are ranked and labelled.
* **The ranks.** The calibration is fitted to (rank, label): the rank of each planned item is
  computed locally where its whole stratum has been fetched (the census, small strata), else
  by :meth:`~assay.engines.base.Engine.counts_through` — of every item of the first prefix at
  once, in the same pass as the grid's counts, on an engine that counts through many keys in
  one pass (``bulk_ranks``: memory, DuckDB, Spark), so later batches make no pass at all;
  else once per batch.

In memory, ``auto`` draws within a stratum with the Generator (:class:`SparseShuffle`) and
ranks tied scores in pool order; here the draws follow the hash and ties are ranked by the
tie hash. So the strata's sizes, predicted positives, grid, first allocation and schedule of
strata are the in-memory design's (tested on the ER pools), the items are another simple random
sample of the same strata, and the estimates agree in distribution, not draw for draw.

>>> import pandas as pd
>>> from assay.engines import MemoryEngine
>>> eng = MemoryEngine(pd.DataFrame({"id": range(400), "score": [-i for i in range(400)],
...                                  "prediction": [int(i < 30) for i in range(400)]}))
>>> d = EngineAutoDesign(eng, 100, np.random.default_rng(1), seed=1)
>>> d.strata.sizes.tolist(), d.ranked.pp.tolist()
([8, 8, 16, 32, 64, 128, 144], [8, 8, 14, 0, 0, 0, 0])
>>> xs = [d.draw() for _ in range(int(d.target.sum()))]     # the first batch
>>> sorted(x.position for x in xs if x.stratum == 0), d.sampler.passes, d.rank_passes
([0, 1, 2, 3, 4, 5, 6, 7], 1, 1)
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from assay.core.calibration import RankGrid
from assay.core.rank_model import RankedStrata
from assay.core.strata import Strata, geometric_bounds
from assay.core.types import Draw, Kind
from assay.designs.auto import EXPLORE, AutoDesign

NO_ORDER = np.zeros(0, dtype=np.int64)   # the strata's item order stays on the engine
PREFETCH_ROWS = 250_000   # the first prefix pass takes min(N_h, budget) per stratum up to this


class _CutRecorder:
    """Stands for ``cum_pred`` while :meth:`RankGrid.build` names the ranks it reads."""

    def __init__(self) -> None:
        self.ranks: list[np.ndarray] = []

    def __getitem__(self, idx: np.ndarray) -> np.ndarray:
        idx = np.asarray(idx, dtype=np.int64)
        self.ranks.append(idx)
        return np.zeros(idx.shape, dtype=np.int64)


@dataclass(frozen=True)
class CumulativeAt:
    """``cum_pred`` known at some ranks only: ``cum[j]`` predicted positives among the top
    ``ranks[j]`` items (ranks ascending); reading any other rank is an error.

    >>> c = CumulativeAt(np.array([0, 4, 9]), np.array([0, 3, 5]))
    >>> c[np.array([9, 4])].tolist()
    [5, 3]
    """

    ranks: np.ndarray
    cum: np.ndarray

    def __getitem__(self, idx: np.ndarray) -> np.ndarray:
        idx = np.asarray(idx, dtype=np.int64)
        j = np.minimum(np.searchsorted(self.ranks, idx), self.ranks.shape[0] - 1)
        if not np.array_equal(self.ranks[j], idx):
            raise KeyError("a rank the engine was not asked about")
        return self.cum[j]


def grid_ranks(bounds: np.ndarray) -> np.ndarray:
    """The ranks r (0 < r < N) at which the calibration's :class:`RankGrid` over strata
    ``bounds`` reads ``cum_pred`` (the strata's bounds among them).

    >>> grid_ranks(np.array([0, 4, 8, 19])).tolist()[:6]
    [1, 2, 3, 4, 5, 6]
    """
    n = int(bounds[-1])
    rec = _CutRecorder()
    RankGrid.build(bounds, cum_pred=rec)
    asked = np.unique(np.concatenate(rec.ranks + [np.asarray(bounds, dtype=np.int64)]))
    return asked[(asked > 0) & (asked < n)]


def rank_grid(bounds: np.ndarray, ranks: np.ndarray, through: np.ndarray,
              positives: np.ndarray, total: int) -> tuple[RankGrid, np.ndarray]:
    """The :class:`RankGrid` and the strata's predicted positives from the engine's
    :meth:`~assay.engines.base.Engine.counts_through` of the keys at ``ranks`` − 1: ``through``
    items (must be ``ranks``) and ``positives`` at or before each; ``total`` the pool's
    predicted positives."""
    if not np.array_equal(through, ranks):
        raise RuntimeError(f"the engine counts {through[:8].tolist()}… items through the keys "
                           f"at ranks {ranks[:8].tolist()}…")
    at = CumulativeAt(np.concatenate(([0], ranks, [int(bounds[-1])])),
                      np.concatenate(([0], positives, [int(total)])).astype(np.int64))
    return RankGrid.build(bounds, cum_pred=at), np.diff(at[np.asarray(bounds)])


@dataclass(frozen=True)
class EngineRankedStrata(RankedStrata):
    """:class:`RankedStrata` whose predictions are known at the fetched items' ranks only
    (``pred_at``: rank → prediction, filled as items are fetched)."""

    pred_at: dict[int, int] = field(default_factory=dict)

    def predictions_at(self, positions: np.ndarray) -> np.ndarray:
        return np.fromiter((self.pred_at[int(p)] for p in positions), np.int64, len(positions))


class EngineAutoDesign(AutoDesign):
    """:class:`AutoDesign` over a pool on ``engine`` (module docstring). A draw's ``index`` is
    a row of ``sampler.items`` (the items fetched), its ``position`` the item's 0-based rank."""

    def __init__(self, engine: Any, budget: int, rng: np.random.Generator, seed: int,
                 alpha: float = 0.5, first: int | None = None, batches: int = 5,
                 pilot_per_stratum: int = 4, degree: int = 0,
                 census_share: float | None = None, tail_sd: float = 2.0,
                 audit_share: float = 0.0, explore: float = EXPLORE) -> None:
        from assay.engines.base import OrderKeys
        from assay.engines.plan import EngineStrata, PrefixSampler
        info = engine.describe()
        self.engine, self.seed, self._total = engine, int(seed), int(info.positives)
        self._configure(info.rows, info.positives, budget, rng, alpha, first, batches, degree,
                        census_share, tail_sd, explore)
        bounds = geometric_bounds(info.rows, self.first)
        self._grid_ranks = grid_ranks(bounds)
        self._grid_keys = engine.keys_at_ranks(self._grid_ranks - 1)
        j = np.searchsorted(self._grid_ranks, bounds[1:-1])
        edges = OrderKeys(self._grid_keys.score[j].copy(), self._grid_keys.tie[j].copy())
        sizes = np.diff(bounds)
        self.strata = Strata(order=NO_ORDER, bounds=bounds, method="geometric")
        self.engine_strata = EngineStrata(edges, sizes, np.zeros_like(sizes), "geometric")
        self.sampler = PrefixSampler(engine, self.engine_strata, self.seed)
        self._taken = np.zeros(self.strata.count, dtype=np.int64)
        self._rank: dict[int, int] = {}                 # row of sampler.items -> rank
        self._pred_at: dict[int, int] = {}              # rank -> prediction (items fetched)
        self._prefetched = False
        self.rank_passes = 0
        if not engine.bulk_ranks:       # the grid's counts now; else with the prefix's ranks
            self._set_grid(*engine.counts_through(self._grid_keys))
            self.rank_passes += 1
        self._begin(pilot_per_stratum, audit_share)

    def _set_grid(self, through: np.ndarray, positives: np.ndarray) -> None:
        """The rank grid and the strata's predicted positives from the counts through the grid's
        keys: the rank model can be built."""
        grid, pp = rank_grid(self.strata.bounds, self._grid_ranks, through, positives,
                             self._total)
        self.engine_strata = replace(self.engine_strata, positives=pp.astype(np.int64))
        self.sampler.strata = self.engine_strata
        sizes = self.strata.sizes
        self._set_ranked(EngineRankedStrata(self.strata, NO_ORDER, pp, pp / sizes, grid,
                                            self.degree, self.tail_sd, pred_at=self._pred_at))

    # -- the engine's part ------------------------------------------------------------------
    def _enqueue(self, add: np.ndarray) -> None:
        super()._enqueue(add)
        want = self.target
        if not self._prefetched:    # the first pass fetches what any allocation could take
            self._prefetched = True
            deep = np.minimum(self.strata.sizes, self.budget)
            if int(deep.sum()) <= PREFETCH_ROWS:
                want = np.maximum(deep, want)
        self.sampler.extend(want)                       # no pass once the prefix holds it
        if self.engine.bulk_ranks and not hasattr(self, "ranked"):
            self._first_counts()
        self._assign_ranks(self.pending_rows())

    def _first_counts(self) -> None:
        """One pass (an engine with ``bulk_ranks``): the counts through the grid's keys and
        the ranks of every item of the first prefix."""
        from assay.engines.base import OrderKeys
        items = self.sampler.items
        g = self._grid_keys
        keys = OrderKeys(np.concatenate([g.score, items["score"].to_numpy(np.float64)]),
                         np.concatenate([g.tie, items["tie"].to_numpy(np.uint64)]))
        through, positives = self.engine.counts_through(keys)
        self.rank_passes += 1
        m = len(g)
        self._set_grid(through[:m], positives[:m])
        pred = items["prediction"].to_numpy()
        for i, r in enumerate((through[m:] - 1).tolist()):
            self._rank[i] = int(r)
            self._pred_at[int(r)] = int(pred[i])

    def pending_rows(self) -> list[int]:
        """Rows of :attr:`sampler.items <assay.engines.plan.PrefixSampler.items>` of every item
        planned so far (drawn or still in the batch): the items to rank and to label."""
        s = self.sampler
        return [s.item(h, j) for h in range(self.strata.count)
                for j in range(min(max(int(self.target[h]), int(self._taken[h])), s.taken(h)))]

    def _assign_ranks(self, rows: list[int]) -> None:
        """The rank of each row not ranked yet: local where its whole stratum is fetched,
        else one ``ranks_of`` for all the others."""
        from assay.engines.base import OrderKeys
        todo = np.array(sorted(set(rows) - self._rank.keys()), dtype=np.int64)
        if todo.size == 0:
            return
        items = self.sampler.items
        h_all = items["stratum"].to_numpy()
        score = items["score"].to_numpy(dtype=np.float64)
        tie = items["tie"].to_numpy(dtype=np.uint64)
        pred = items["prediction"].to_numpy()
        sizes, got = self.strata.sizes, {}
        whole = {int(h) for h in np.unique(h_all[todo]) if self.sampler.taken(int(h)) >= sizes[h]}
        for h in whole:
            member = np.flatnonzero(h_all == h)         # the whole stratum, fetched
            order = member[np.lexsort((tie[member], -score[member]))]
            first = int(self.strata.bounds[h])
            got.update(zip(order.tolist(), range(first, first + order.size)))
        ask = np.array([i for i in todo if int(h_all[i]) not in whole], dtype=np.int64)
        if ask.size:
            got.update(zip(ask.tolist(), self.engine.ranks_of(
                OrderKeys(score[ask], tie[ask])).tolist()))
            self.rank_passes += 1
        for i, r in got.items():
            self._rank[int(i)] = int(r)
            self._pred_at[int(r)] = int(pred[i])

    # -- Design interface -----------------------------------------------------------------
    def draw(self) -> Draw:
        if not self._queue:
            self._plan_next_batch()
        h = int(self._queue.pop())
        i = self.sampler.item(h, int(self._taken[h]))
        self._taken[h] += 1
        if i not in self._rank:                         # a replacement past the batch
            self._assign_ranks([i])
        self.n_h[h] += 1
        incl = float(self.target[h]) / float(self.strata.sizes[h])
        return Draw(i, incl, h, Kind.INCLUSION, self._rank[i])

    def skip(self, draw: Draw) -> None:
        if self._taken[draw.stratum] < self.strata.sizes[draw.stratum]:
            self._queue.append(draw.stratum)
            self.n_h[draw.stratum] -= 1

    def params(self) -> dict[str, Any]:
        return {**super().params(), "engine": self.engine.name}

    def manifest(self) -> Any:
        """The run manifest: hash spec, seed, edges, stratum sizes, pool fingerprint."""
        return self.engine_strata.manifest(self.engine, self.seed, design="auto",
                                           first=self.first, n_h=[int(x) for x in self.n_h])


__all__ = ["CumulativeAt", "EngineAutoDesign", "EngineRankedStrata", "grid_ranks", "rank_grid"]

"""Stratified sampling by score: CSF or equal-size strata, proportional or Neyman allocation,
simple random sampling without replacement within strata (finite-population correction in
:class:`assay.core.totals.StratifiedSample`). With ``floors`` (the default of
:class:`assay.designs.settings.StratifiedSettings` since session 11), the Neyman allocation is
the one under bounds with detection floors for the strata just below the top
(:func:`assay.core.allocation.floored_allocation`, issue 11): a count of matches that matters
(a tenth of the predicted positives) hidden in one of them is seen with probability ≥ 0.9,
where the budget can afford it.

The floors come with the delta rule's counts taken at 1 − f_h
(:func:`assay.core.rule_counts.moving_counts`): without them abt_buy's recall covered 0.868 at
1,000 labels, with them 0.997. Recall coverage, 200 repetitions (plain → floors): ties at 500
0.90 → 0.965, miscalibrated at 1,000 0.90 → 0.95, amazon_google at 1,000 0.86 → 0.965
(``bench/out/design_stratified_floors_fpc.md``; ties world seed 7 at 500, 0.895, covers 0.9275
with the variance of :mod:`assay.core.unseen_cells`). A run saved without the ``floors`` setting
was drawn without them and replays so.

``by_prediction`` (session 16, in memory): strata split by the prediction where it does not
follow the score (:func:`assay.core.strata.by_prediction`, :func:`within_parts`)."""
from __future__ import annotations

import copy
from typing import Any

import numpy as np

from assay.core.allocation import (DETECT_SHARE, MIN_PER_STRATUM, allocate, bounded_allocation,
                                   floored_allocation, neyman_weights)
from assay.designs.base import Design, Draw, SparseShuffle
from assay.core.strata import Strata, make_strata
from assay.core.strata import by_prediction as cross_by_prediction
from assay.core.types import Kind


def schedule(n_h: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """The strata of the draws in order: every stratum's first min(n_h, 2) draws round robin,
    then the rest in a random order (one ``rng.permutation``).

    >>> schedule(np.array([3, 1]), np.random.default_rng(0)).tolist()
    [0, 0, 1, 0]
    """
    k = n_h.shape[0]
    first = np.repeat(np.arange(k), np.minimum(n_h, MIN_PER_STRATUM))
    rest = np.repeat(np.arange(k), n_h - np.minimum(n_h, MIN_PER_STRATUM))
    return np.concatenate([first, rng.permutation(rest)]).astype(np.int64)


def extra_allocation(n_h: np.ndarray, sizes: np.ndarray, want: np.ndarray) -> np.ndarray | None:
    """The extra draws per stratum that raise an allocation ``n_h`` to the new budget
    Σ ``want`` with the earlier n_h as floors (None when there is nothing to add): they go to
    the strata furthest below ``want``, the allocation of the new budget.

    >>> extra_allocation(np.array([2, 2]), np.array([10, 10]), np.array([3, 5])).tolist()
    [1, 3]
    >>> extra_allocation(np.array([2, 2]), np.array([10, 10]), np.array([2, 6])).tolist()
    [0, 4]
    >>> extra_allocation(np.array([2, 2]), np.array([10, 10]), np.array([2, 2])) is None
    True
    """
    extra = int(np.sum(want)) - int(n_h.sum())
    if extra <= 0:
        return None
    room = np.maximum(want - n_h, 0)
    if room.sum() <= 0:
        room = sizes - n_h
    return allocate(extra, np.minimum(room, sizes - n_h) if room.sum() >= extra
                    else sizes - n_h, room.astype(float) + 1e-9, minimum=0)


def within_parts(n_score: np.ndarray, parent: np.ndarray, sizes: np.ndarray,
                 weights: np.ndarray) -> np.ndarray:
    """Each score stratum's labels n_h shared among its parts (the strata split by the
    prediction, :func:`assay.core.strata.by_prediction`; ``parent`` the score stratum of each
    part, ``sizes`` and Neyman ``weights`` N_p·S_p theirs) in proportion to their weights
    (by size where a stratum's parts all weigh 0), every part at least min(2, N_p), at most
    N_p: Neyman allocation within each score stratum (Cochran 1977, §5.5), while the score
    strata keep the labels their own allocation (with its detection floors) gave them. The
    predicted positives of every stratum are then counted exactly, and the part that holds
    them gets the labels its variance asks for. Σ n is Σ n_h, budget permitting the minimums
    (:func:`assay.core.allocation.bounded_allocation`): their excess comes from the parts with
    the most to spare, a part labelled in full (exact) last.

    >>> within_parts(np.array([10, 4]), np.array([0, 0, 1]), np.array([20, 180, 50]),
    ...              np.array([9.0, 1.0, 0.0])).tolist()
    [8, 2, 4]
    """
    w = np.maximum(np.asarray(weights, dtype=np.float64), 0.0)
    by_size = (np.bincount(parent, weights=w) <= 0)[parent]
    w = np.where(by_size, sizes.astype(np.float64), w)
    low = np.minimum(sizes, MIN_PER_STRATUM)
    if low.sum() > int(n_score.sum()):
        low = np.zeros_like(low)
    n = np.zeros(sizes.shape[0], dtype=np.int64)
    for h in range(n_score.shape[0]):           # within each score stratum
        p = np.flatnonzero(parent == h)
        m = max(int(n_score[h]), int(low[p].sum()))
        n[p] = bounded_allocation(m * w[p] / w[p].sum(), m, low[p], sizes[p])
    excess = int(n.sum() - n_score.sum())        # minimums beyond a stratum's n_h: taken
    spare = np.lexsort((low - n, n >= sizes))    # from the parts with the most to spare,
    for i in spare:                              # a part labelled in full (a census) last
        take = min(excess, int(n[i] - low[i]))
        n[i] -= take
        excess -= take
    return n


def _allocation(budget: int, sizes: np.ndarray, weights: np.ndarray,
                matches: float | None) -> np.ndarray:
    """The n_h of a stratified design: Neyman under bounds with detection floors
    (:func:`assay.core.allocation.floored_allocation`), or, for ``matches`` None (proportional
    allocation), :func:`assay.core.allocation.allocate`.

    >>> _allocation(10, np.array([100, 100, 2]), np.array([1.0, 3.0, 0.0]), None).tolist()
    [3, 5, 2]
    """
    if matches is None:
        return allocate(budget, sizes, weights)
    return floored_allocation(budget, sizes, weights, matches)


class _ScheduledStrata(Design):
    """What the stratified designs share, in memory or on an engine: the allocation n_h, the
    schedule of strata (:func:`schedule`), its extension to a larger budget, putting a skipped
    draw's stratum back, and the strata table. A subclass sets ``strata`` (with ``sizes`` and
    ``count``), ``rng``, ``_weights`` and, for a Neyman allocation, ``_matches`` (the count a
    detection floor is for: :func:`assay.core.allocation.floored_allocation`; None, the
    proportional allocation, :func:`assay.core.allocation.allocate`) before :meth:`_allocate`.
    """

    _matches: float | None = None
    by_prediction = False      # strata split by the system's prediction (in memory) …
    _parent: np.ndarray | None = None    # … then each part's score stratum
    _parts: Any = ()                     # … and "positive"/"negative"/"mixed" per part
    _part_weights: Any = None            # … and their Neyman weights

    def _target(self, budget: int) -> np.ndarray:
        """The n_h of ``budget`` labels (:func:`_allocation`); with strata split by the
        prediction, the score strata's (``_weights`` are theirs) shared among their parts
        (:func:`within_parts`)."""
        if self._parent is None:
            return _allocation(budget, self.strata.sizes, self._weights, self._matches)
        sizes = self.strata.sizes
        score_sizes = np.bincount(self._parent, weights=sizes).astype(np.int64)
        n = _allocation(budget, score_sizes, self._weights, self._matches)
        return within_parts(n, self._parent, sizes, self._part_weights)

    def _allocate(self, budget: int) -> None:
        self._first_n_h = self._target(budget)
        self._start(self._first_n_h)

    def _start(self, n_h: np.ndarray) -> None:
        """Begin drawing the allocation ``n_h``: its schedule (the generator's first use)."""
        self.n_h = n_h
        self.budget = int(self.n_h.sum())
        self._schedule = schedule(self.n_h, self.rng)
        self._pos = 0
        self._replace: list[int] = []

    def extend(self, budget: int) -> None:
        """Re-allocate a larger budget with the earlier n_h as floors: the extra labels go to
        the strata furthest below the allocation of the new budget. Sampling stays without
        replacement within strata, so the union is a stratified SRS of the new n_h."""
        add = extra_allocation(self.n_h, self.strata.sizes,
                               self._target(min(int(budget), int(self.strata.sizes.sum()))))
        if add is None:
            return
        self.n_h = self.n_h + add
        self.budget = int(self.n_h.sum())
        more = self.rng.permutation(np.repeat(np.arange(self.strata.count), add))
        self._schedule = np.concatenate([self._schedule, more.astype(np.int64)])

    def exhausted(self) -> bool:
        return self._pos >= self._schedule.shape[0] and not self._replace

    def _next_stratum(self) -> int:
        """The stratum of the next draw: a skipped draw's stratum first, else the schedule's."""
        if self._replace:
            return self._replace.pop()
        h = int(self._schedule[self._pos])
        self._pos += 1
        return h

    def _put_back(self, h: int, taken: int) -> None:
        """After a skip: draw again from stratum ``h`` while it has items left."""
        if taken < self.strata.size(h):
            self._replace.append(h)

    def stratum_sizes(self) -> np.ndarray:
        return self.strata.sizes

    def strata_table(self) -> list[dict[str, Any]]:
        sizes = self.strata.sizes
        rows = [{"stratum": h, "size": int(sizes[h]), "allocated": int(self.n_h[h]),
                 "inclusion_probability": float(self.n_h[h] / sizes[h])}
                for h in range(self.strata.count)]
        for row, part in zip(rows, self._parts):
            row["predicted"] = str(part)       # strata split by the prediction
        return rows


class StratifiedDesign(_ScheduledStrata):
    """Score strata with a fixed allocation, sampled without replacement within strata.

    Draws interleave the strata: every stratum's first ``min(n_h, 2)`` draws come first (round
    robin), then the rest in a random order, so an estimate is available early and every
    stratum has a variance term.
    """

    name = "stratified"

    def __init__(self, strata: Strata, budget: int, rng: np.random.Generator,
                 allocation: str = "neyman", prior: np.ndarray | None = None,
                 predictions: np.ndarray | None = None, alpha: float = 0.5,
                 floors: bool = True, by_prediction: bool = False) -> None:
        self.strata, self.rng, self.allocation_rule = strata, rng, allocation
        self.alpha = alpha
        if allocation not in ("neyman", "proportional"):
            raise ValueError(f"unknown allocation {allocation!r} (expected 'proportional' or "
                             "'neyman')")
        if allocation == "neyman" and (prior is None or predictions is None):
            self.allocation_rule = "proportional"      # no prior: Neyman reduces to it
        self.by_prediction = bool(by_prediction) and predictions is not None
        parent = None
        if self.by_prediction:          # the parts' weights, then their score strata's
            self.strata, parent = cross_by_prediction(strata, predictions)  # type: ignore
            pp = np.add.reduceat(np.asarray(predictions, dtype=np.int64)[self.strata.order],
                                 self.strata.bounds[:-1])
            self._parts = np.where(pp == 0, "negative", np.where(pp == self.strata.sizes,
                                                                 "positive", "mixed"))
        sums = self._prior_sums(prior, predictions)
        self._weights = self._neyman_weights(self.strata.sizes, sums)
        if self.strata is not strata:   # a stratum was split (else the score strata)
            self._parent, self._part_weights = parent, self._weights
            if sums is not None:        # the sums add up: the score strata's from their parts'
                sums = tuple(np.bincount(parent, weights=t, minlength=strata.count)  # type: ignore
                             for t in sums)
            self._weights = self._neyman_weights(strata.sizes, sums)
        if self.allocation_rule == "neyman" and predictions is not None and floors:
            self._matches = DETECT_SHARE * float(np.sum(predictions))  # a count that matters
        self._allocate(budget)
        self._shuffles = [SparseShuffle(int(s)) for s in self.strata.sizes]

    def _prior_sums(self, prior: np.ndarray | None, predictions: np.ndarray | None
                    ) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
        """Per stratum of :attr:`strata`: predicted positives P_h and the prior's sums over
        them (s1) and over the predicted negatives (s0), what :func:`neyman_weights` takes
        (and an engine gives); None for the proportional allocation. In chunks of the ranking,
        so the set-up holds no more than a few per-item temporaries of one chunk."""
        if self.allocation_rule == "proportional":
            return None
        k = self.strata.count
        pp, s1, s0 = np.zeros(k), np.zeros(k), np.zeros(k)
        order, chunk = self.strata.order, 1 << 20
        for start in range(0, order.shape[0], chunk):
            idx = order[start:start + chunk]
            p = np.clip(prior[idx], 0.0, 1.0)             # type: ignore[index]
            yhat = predictions[idx] == 1                  # type: ignore[index]
            h = self.strata.stratum_of(np.arange(start, start + idx.shape[0]))
            pp += np.bincount(h, weights=yhat, minlength=k)
            s1 += np.bincount(h, weights=np.where(yhat, p, 0.0), minlength=k)
            s0 += np.bincount(h, weights=np.where(yhat, 0.0, p), minlength=k)
        return pp, s1, s0

    def _neyman_weights(self, sizes: np.ndarray, sums: tuple | None) -> np.ndarray:
        """N_h·S_h from :meth:`_prior_sums` (:func:`neyman_weights`), N_h for the proportional
        allocation."""
        if sums is None:
            return sizes.astype(np.float64)
        return neyman_weights(sizes, *sums, self.alpha)

    def params(self) -> dict[str, Any]:
        out = {"design": "stratified", "strata": self.strata.method,
               "n_strata": self.strata.count, "allocation": self.allocation_rule,
               "budget": self.budget, "alpha": self.alpha}
        if self.by_prediction:
            out["by_prediction"] = True
        return out

    def draw(self) -> Draw:
        h = self._next_stratum()
        j = self._shuffles[h].next(self.rng)
        pos = int(self.strata.bounds[h] + j)
        item = int(self.strata.order[pos])
        return Draw(item, float(self.n_h[h]) / float(self.strata.size(h)), h, Kind.INCLUSION, pos)

    def skip(self, draw: Draw) -> None:
        self._put_back(draw.stratum, self._shuffles[draw.stratum].taken)

    def replicate(self, rng: np.random.Generator) -> "StratifiedDesign":
        """The same strata, weights and allocation; the schedule and the draws from ``rng``
        (the set-up uses no generator before the schedule: see :meth:`Design.replicate`)."""
        new = copy.copy(self)
        new.rng = rng
        new._start(self._first_n_h)
        new._shuffles = [SparseShuffle(int(s)) for s in self.strata.sizes]
        return new


def stratified_design(score: np.ndarray | None, prior: np.ndarray | None,
                      predictions: np.ndarray, budget: int, rng: np.random.Generator,
                      method: str = "csf", n_strata: int = 30, allocation: str = "neyman",
                      alpha: float = 0.5, strata: Strata | None = None,
                      floors: bool = True, by_prediction: bool = True) -> StratifiedDesign:
    """A stratified design; pass precomputed score ``strata`` to skip sorting the pool again.
    ``by_prediction``: each stratum split into the predicted positives and the rest
    (:func:`assay.core.strata.by_prediction`)."""
    if strata is None:
        strata = make_strata(score, predictions.shape[0], method, n_strata)
    return StratifiedDesign(strata, budget, rng, allocation, prior, predictions, alpha, floors,
                            by_prediction)


class EngineStratifiedDesign(_ScheduledStrata):
    """:class:`StratifiedDesign` on a pool that stays on an engine (docs/engines.md): the same
    strata (:func:`assay.engines.plan.engine_strata`) and allocation (Neyman weights from
    per-stratum sums, :func:`neyman_weights`) and the same schedule of strata, but the j-th
    draw of stratum h is its j-th item in hash order h(seed, key) — the same items on every
    engine. A draw's ``index`` is a row of ``sampler.items`` (the items fetched), not of the
    pool; the run's manifest (:meth:`manifest`) lets another engine verify or resume it."""

    name = "stratified"

    def __init__(self, engine: Any, budget: int, rng: np.random.Generator, seed: int,
                 method: str = "csf", n_strata: int = 30, allocation: str = "neyman",
                 alpha: float = 0.5, probability: str | None = None,
                 strata: Any = None, floors: bool = True) -> None:
        from assay.engines.plan import PrefixSampler, engine_strata
        if allocation not in ("neyman", "proportional"):
            raise ValueError(f"unknown allocation {allocation!r} (expected 'proportional' or "
                             "'neyman')")
        self.engine, self.rng, self.seed, self.alpha = engine, rng, int(seed), alpha
        self.allocation_rule, self.method = allocation, method
        self.floors = bool(floors) and allocation == "neyman"   # floors bound Neyman's weights
        self.strata = strata if strata is not None else engine_strata(engine, method, n_strata)
        sizes = self.strata.sizes
        if allocation == "neyman":
            s1, s0 = engine.segment_prior_sums(self.strata.edges, probability)
            self._weights = neyman_weights(sizes, self.strata.positives, s1, s0, alpha)
            if self.floors:
                self._matches = DETECT_SHARE * float(np.sum(self.strata.positives))
        else:
            self._weights = sizes.astype(np.float64)
        self._allocate(budget)
        self.sampler = PrefixSampler(engine, self.strata, self.seed, first=self.n_h)
        self._taken = np.zeros(self.strata.count, dtype=np.int64)

    @property
    def n(self) -> int:
        return int(self.strata.sizes.sum())

    def params(self) -> dict[str, Any]:
        return {"design": "stratified", "strata": self.method, "n_strata": self.strata.count,
                "allocation": self.allocation_rule, "budget": self.budget, "alpha": self.alpha,
                "floors": self.floors, "engine": self.engine.name}

    def manifest(self) -> Any:
        """The run manifest: hash spec, seed, edges, stratum sizes, pool fingerprint; the
        allocation, whether its detection floors were on, and the labels per stratum."""
        return self.strata.manifest(self.engine, self.seed, allocation=self.allocation_rule,
                                    floors=self.floors, n_h=[int(x) for x in self.n_h])

    def draw(self) -> Draw:
        h = self._next_stratum()
        i = self.sampler.item(h, int(self._taken[h]))
        self._taken[h] += 1
        return Draw(i, float(self.n_h[h]) / float(self.strata.size(h)), h, Kind.INCLUSION)

    def skip(self, draw: Draw) -> None:
        self._put_back(draw.stratum, int(self._taken[draw.stratum]))

"""``auto``: a finite-population, batch-adaptive stratified design for F_α under imbalance, with
a model-based estimate checked against the labels. The default design whenever scores are given.

1. **Geometric rank strata.** Items are ranked by score; stratum h covers ranks
   [s·2^(h−1), s·2^h) (the first two strata have size s), so the dense top is cut finely and the
   huge, sparse tail coarsely — ~log₂(N/s) strata, none of one item, none starved.
2. **Census of the top, an optional score-blind audit, then batches with Neyman
   re-allocation.** With ``audit_share`` > 0 that share of the budget is drawn in the first
   batch uniformly over the ranks the census leaves out (proportional allocation over their
   strata): labels wherever the score says little is left, so that the tail's assumption
   meets data and its contribution is bounded by the assumption-free interval. Under imbalance (every
   predicted positive fits in half the budget) a first batch labels the top strata in full while
   they fit in half the budget (``census_share``; a tenth otherwise) and every other stratum
   lightly. After each of ``batches`` batches the rank calibration (:mod:`assay.core.calibration`)
   is refitted to all labels so far and the budget re-allocated by Neyman's rule
   n_h ∝ N_h·S_h, S_h² the variance of the F_α residual under the per-stratum rates (Beta
   posteriors centred on the calibration at its mode;
   :meth:`assay.core.allocation.StratumModel.residual_variance`). Strata whose share reaches their
   size are labelled in full (take-all). Sampling is without replacement within strata.
   **Exploration below matches** (issue 11: allocation that never starves a stratum below
   what it takes to see a rising rate). Neyman's rule sends labels where the calibration puts
   variance, so a stratum whose first labels show no match, just below strata whose labels
   showed some, is predicted near empty, gets few labels, and a rate rising there (matches the
   score does not believe) stays unseen: on 40 fresh non-monotone worlds at 2,000 labels, 7%
   of runs saw none of the ~50 matches of the bump and those covered recall 0.07. Each
   re-allocation plans such a stratum at a rate of at least ``explore`` (0.1) × the rate the
   labels' floor keeps open there (:func:`exploration_rates`: the floor of
   :func:`assay.core.predictive.below_a_match`, carried over the ``REACH`` = 2 strata below the
   last that showed matches). On by default since session 27, with the estimator's robust
   prior and bounded decay (:func:`assay.core.predictive.vague_weight`,
   :func:`assay.core.predictive.cell_rates`), which keep the controls it used to cost.
   Measured (recall coverage, 95%; BENCHMARKS.md, sessions 25–27): non-monotone worlds at
   2,000 labels 0.880 → 0.953 (world seeds 200–239) and 0.858 → 0.948 (300–339), 400 runs
   each; the controls at 500 labels 0.965–0.985 (exploration alone: 0.900–0.925); the price
   is wider intervals where the exploration moves labels (amazon_google at 5,000 labels F1
   half-width 0.0125 → 0.0146).
3. **Estimation.** A model-based estimate (:mod:`assay.core.predictive`): unlabelled items are
   predicted cell by cell (stratum × prediction) from the calibration — flat top, decay beyond a
   fitted knee, averaged over a straight and a steepening decay — used as a prior worth 100
   labels in cells whose own labels are few, so the interval accounts for positives a lightly
   sampled tail may still hold. A deviance test of the calibration against one rate per stratum
   (:func:`assay.core.calibration.fit_check`) guards it: below p = 0.01 the design-based stratified
   estimate (expansion with finite-population correction) is reported instead; otherwise it is
   given beside the model's.

The budget counts distinct labels. Coverage and RMSE on the real pools: BENCHMARKS.md.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from assay.core.calibration import RankCalibration
from assay.core.predictive import StratumCounts, below_a_match
from assay.core.rank_model import RankedStrata, leading
from assay.designs.base import Design, Draw, SparseShuffle
from assay.core.strata import _descending_order, geometric_strata
from assay.core.allocation import allocate
from assay.core.allocation import StratumModel
from assay.core.types import Kind


PRIOR_LABELS = 2.0
EXPLORE = 0.1      # the exploration share (module docstring, 4.); 0 in runs stored before it
REACH = 2          # … over the strata this far below the last one whose labels showed matches


def exploration_rates(seen: StratumCounts) -> np.ndarray:
    """Per stratum, the rate the labels' floor keeps open below matches
    (:func:`assay.core.predictive.below_a_match` over ``REACH`` strata): the floored
    posterior's mean match rate of the stratum's predicted negatives, j/(n⁰ + 1).

    >>> c = StratumCounts(np.array([0, 10, 30, 70]), np.zeros(3), np.zeros(3),
    ...                   np.array([10.0, 5, 5]), np.zeros(3), np.array([2.0, 0, 0]))
    >>> exploration_rates(c).round(3).tolist()     # 2 of 10 above: ½/6 in each of the next two
    [0.0, 0.083, 0.083]
    """
    return below_a_match(seen, reach=REACH) / (seen.lab0 + 1.0)


class AutoDesign(Design):
    """See the module docstring. ``first``: size of the top stratum (default from the budget)."""

    name = "auto"

    def __init__(self, score: np.ndarray, predictions: np.ndarray, budget: int,
                 rng: np.random.Generator, alpha: float = 0.5, first: int | None = None,
                 batches: int = 5, pilot_per_stratum: int = 4,
                 order: np.ndarray | None = None, degree: int = 0,
                 census_share: float | None = None, tail_sd: float = 2.0,
                 audit_share: float = 0.0, explore: float = EXPLORE) -> None:
        self._configure(predictions.shape[0], int(predictions.sum()), budget, rng, alpha,
                        first, batches, degree, census_share, tail_sd, explore)
        order = _descending_order(score) if order is None else order
        self.strata = geometric_strata(order, self.first)
        self._set_ranked(RankedStrata.build(self.strata, predictions, degree, self.tail_sd))
        self._shuffles = [SparseShuffle(int(s)) for s in self.strata.sizes]
        self._begin(pilot_per_stratum, audit_share)

    def _configure(self, n: int, positives: int, budget: int, rng: np.random.Generator,
                   alpha: float, first: int | None, batches: int, degree: int,
                   census_share: float | None, tail_sd: float, explore: float) -> None:
        """The pool-independent settings: budget, census share, top stratum size, batches,
        the exploration share."""
        self.rng, self.alpha, self.n = rng, alpha, n
        self.budget = int(min(budget, n))
        if census_share is None:   # imbalanced: every predicted positive fits in half the budget
            census_share = 0.5 if 2 * int(positives) <= self.budget else 0.1
        self.degree, self.census_share = degree, float(census_share)
        self.first = int(first) if first else int(max(8, min(256, self.budget // 16)))
        self.batches = max(1, int(batches))
        self.tail_sd = float(tail_sd)
        self.explore = float(explore)

    def _set_ranked(self, ranked: RankedStrata) -> None:
        self.ranked = ranked
        self._pos_share, self._pp, self.grid = ranked.pos_share, ranked.pp, ranked.grid

    def _begin(self, pilot_per_stratum: int, audit_share: float) -> None:
        """The first batch: the pilot, the census of the top and the optional audit."""
        sizes = self.strata.sizes
        k = self.strata.count
        self.n_h = np.zeros(k, dtype=np.int64)          # labels taken per stratum
        self.target = np.zeros(k, dtype=np.int64)       # current allocation
        self._labels: dict[int, int] = {}               # position -> label
        self._newton_start: dict[tuple[float, ...], np.ndarray] = {}   # warm starts of the refits
        self._queue: list[int] = []
        self._planned = 0
        # pilot: the top stratum in full, a few labels in every other stratum
        pilot = np.minimum(sizes, pilot_per_stratum)
        pilot[0] = sizes[0]
        # census: whole strata from the top while they fit in ``census_share`` of the budget
        room = int(self.census_share * self.budget) - int(pilot.sum())
        for h in range(1, self.strata.count):
            extra = int(sizes[h] - pilot[h])
            if extra > room:
                break
            pilot[h] = sizes[h]
            room -= extra
        # score-blind audit: a share of the budget uniform over the ranks the census leaves out
        self.audit_share = float(audit_share)
        self.audit = np.zeros(k, dtype=np.int64)
        rest = np.where(pilot < sizes, sizes - pilot, 0)
        if self.audit_share > 0 and rest.sum() > 0:
            self.audit = allocate(int(round(self.audit_share * self.budget)), rest,
                                  rest.astype(float), minimum=0)
            pilot = pilot + self.audit
        if pilot.sum() > self.budget:
            pilot = allocate(self.budget, sizes, np.sqrt(sizes.astype(float)), minimum=1)
        self._enqueue(pilot)

    # -- planning -----------------------------------------------------------------------
    def _enqueue(self, add: np.ndarray) -> None:
        add = np.minimum(add, self.strata.sizes - self.target)
        self.target = self.target + add
        batch = np.repeat(np.arange(self.strata.count), add)
        self._queue = list(self.rng.permutation(batch)[::-1])
        self._planned += int(add.sum())

    def _model(self) -> StratumModel | None:
        """The rank calibration fitted to all labels so far, as per-stratum moments."""
        fits = self.ranked.calibrations(self._labels, start=self._newton_start)
        if not fits:
            return None
        moments = [(cal.stratum_moments(self.grid), w) for cal, w in fits]
        mean_p = sum(w * m[0] for m, w in moments)
        mean_pq = sum(w * m[1] for m, w in moments)
        return StratumModel(mean_p=mean_p, mean_pq=mean_pq, pos_share=self._pos_share)

    def _plan_next_batch(self) -> None:
        remaining = self.budget - self._planned
        if remaining <= 0:
            return
        model = self._model()
        sizes = self.strata.sizes
        if model is None:
            weights = sizes.astype(float)
        else:
            # per-stratum rate: Beta posterior with the calibration as prior mean (2 pseudo-labels)
            seen = self.counts(self._labels)
            k_h, n_h = seen.tp + seen.fn, seen.lab1 + seen.lab0
            rate = (k_h + PRIOR_LABELS * model.mean_p) / (n_h + PRIOR_LABELS)
            if self.explore > 0:   # exploration below matches (module docstring)
                rate = np.maximum(rate, self.explore * exploration_rates(seen))
            tp = float((rate * self._pos_share * sizes).sum())
            npos = float((rate * sizes).sum())
            den = self.alpha * float(self._pp.sum()) + (1 - self.alpha) * npos
            r = tp / den if den > 0 else 0.5
            shrunk = StratumModel(mean_p=rate, mean_pq=rate * (1 - rate),
                                  pos_share=self._pos_share)
            s2 = shrunk.residual_variance(r, 1.0, self.alpha)
            weights = sizes * np.sqrt(np.maximum(s2, 1e-12))
        want = allocate(self.budget, sizes, weights, minimum=0)
        deficit = np.maximum(want - self.target, 0)
        step = int(np.ceil(self.budget / self.batches))
        size = int(min(remaining, max(step, 1)))
        if deficit.sum() <= 0:
            deficit = sizes - self.target
        add = allocate(size, np.maximum(deficit, 0), deficit.astype(float), minimum=0)
        self._enqueue(add)

    # -- Design interface ---------------------------------------------------------------
    def params(self) -> dict[str, Any]:
        return {"design": "auto", "alpha": self.alpha, "first": self.first, "degree": self.degree,
                "census_share": self.census_share,
                "batches": self.batches, "budget": self.budget, "n_strata": self.strata.count,
                "tail_sd": self.tail_sd, "explore": self.explore,
                **({"audit_share": self.audit_share} if self.audit_share else {})}

    def extend(self, budget: int) -> None:
        """More batches: the strata, the census and the batches drawn so far stay; further
        batches re-allocate the larger budget by Neyman's rule with what each stratum already
        has as its floor."""
        self.budget = max(self.budget, int(min(budget, self.n)))

    def exhausted(self) -> bool:
        if self._queue:
            return False
        if self._planned >= self.budget:
            return True
        self._plan_next_batch()
        return not self._queue

    def draw(self) -> Draw:
        if not self._queue:
            self._plan_next_batch()
        h = int(self._queue.pop())
        j = self._shuffles[h].next(self.rng)
        pos = int(self.strata.bounds[h] + j)
        self.n_h[h] += 1
        incl = float(self.target[h]) / float(self.strata.size(h))
        return Draw(int(self.strata.order[pos]), incl, h, Kind.INCLUSION, pos)

    def update(self, draw: Draw, label: int) -> None:
        self._labels[draw.position] = int(label)

    def skip(self, draw: Draw) -> None:
        if self._shuffles[draw.stratum].taken < self.strata.size(draw.stratum):
            self._queue.append(draw.stratum)
            self.n_h[draw.stratum] -= 1

    def stratum_sizes(self) -> np.ndarray:
        return self.strata.sizes

    def calibrations(self, seen: dict[int, int]) -> list[tuple[RankCalibration, float]]:
        """The rank calibration(s) fitted to ``seen`` (see :class:`RankedStrata`)."""
        return self.ranked.calibrations(seen)

    def calibration(self, seen: dict[int, int]) -> RankCalibration | None:
        """The calibration of largest weight (see :meth:`calibrations`)."""
        return leading(self.calibrations(seen))

    def counts(self, seen: dict[int, int]) -> StratumCounts:
        return self.ranked.counts(seen)

    def strata_table(self) -> list[dict[str, Any]]:
        """Per stratum: ranks, size, labels, whether taken in full, the labels of the
        score-blind audit among them (with ``audit_share``), and the rank model's mean
        match rate (``model_rate``, fitted to all labels so far; the report plots it against
        the labels)."""
        sizes = self.strata.sizes
        model = self._model()
        return [{"stratum": h, "ranks": f"{self.strata.bounds[h] + 1}-{self.strata.bounds[h + 1]}",
                 "size": int(sizes[h]), "labelled": int(self.n_h[h]),
                 "take_all": bool(self.n_h[h] >= sizes[h]),
                 **({"audit": int(self.audit[h])} if self.audit_share else {}),
                 **({} if model is None else {"model_rate": float(model.mean_p[h])})}
                for h in range(self.strata.count)]

"""Seeded simulation against known truth: bias, RMSE and interval coverage.

* :func:`simulate` runs any design through the campaign's loop (:func:`collect_known`)
  on a pool with known labels — the tests, the benchmarks, and users planning a budget on a
  labelled pilot pool.
* :func:`simulate_two_phase` is its sufficient-statistic form for stratified two-phase
  evaluation (seed 004), vectorised over repetitions: a finite population is fixed once (in
  stratum l, M_l documents, some unassessable, the others with a true label t and a fallible
  label f drawn with false-positive rate θ_l and false-negative rate φ_l); each repetition
  draws a stratified SRS without replacement (multivariate hypergeometric counts), allocates
  adjudications and draws them within each stratum × fallible-label cell (hypergeometric), and
  returns :class:`~assay.core.two_phase.SampleCounts` with a leading repetition axis, so the
  estimators run on all repetitions at once.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Iterable, Iterator, Sequence

import numpy as np

from assay.designs import build_design
from assay.core.measures import MEASURES, true_f_measure
from assay.core.two_phase import SampleCounts
from assay.estimation import estimate_all
from assay.runs import Collected


@dataclass(frozen=True)
class Replicates:
    """Per-repetition estimates and interval ends of one measure (NaN where undefined)."""

    measure: str
    truth: float
    estimate: np.ndarray
    ci_low: np.ndarray
    ci_high: np.ndarray

    @property
    def defined(self) -> np.ndarray:
        return ~np.isnan(self.estimate)

    @property
    def n_defined(self) -> int:
        return int(self.defined.sum())

    def bias(self) -> tuple[float, float]:
        """Mean error over defined repetitions and its standard error."""
        e = self.estimate[self.defined] - self.truth
        if e.size < 2:
            return float("nan"), float("nan")
        return float(e.mean()), float(e.std(ddof=1) / np.sqrt(e.size))

    def rmse(self) -> float:
        e = self.estimate[self.defined] - self.truth
        return float(np.sqrt(np.mean(e**2))) if e.size else float("nan")

    def coverage(self) -> float:
        d = self.defined
        if not d.any():
            return float("nan")
        hit = (self.ci_low[d] <= self.truth) & (self.truth <= self.ci_high[d])
        return float(hit.mean())

    def half_width(self) -> float:
        d = self.defined
        return float(np.mean((self.ci_high[d] - self.ci_low[d]) / 2)) if d.any() else float("nan")


LOCKSTEP_RUNS = 50      # OASIS runs drawn side by side (assay.designs.oasis_lockstep)


def collect_known(design: Any, truth: np.ndarray, budget: int) -> Collected:
    """:func:`assay.evaluation.collect` for labels known in full (``truth``, 0/1 per pool
    item): such a source never skips nor undoes and there is no store, so the campaign's
    steps reduce to stop-or-draw, look up or label, update the design. Stops as the campaign
    does: at ``budget`` distinct labels (at most the pool's size), when the design is
    exhausted, or after ``MAX_DRAWS_PER_LABEL`` draws per label. The same draws and labels as
    :func:`~assay.evaluation.collect` (tests/test_simulation_collect.py), without a campaign's
    per-label bookkeeping (a request, a judgment, a panel's count).

    >>> from assay.designs import UniformWithoutReplacement
    >>> c = collect_known(UniformWithoutReplacement(4, 4, np.random.default_rng(0)),
    ...                   np.array([1, 0, 1, 0]), 3)
    >>> len(c.draws), c.distinct
    (3, 3)
    """
    from assay.campaign import MAX_DRAWS_PER_LABEL
    target = min(max(int(budget), 1), design.pool_size())
    cap = MAX_DRAWS_PER_LABEL * target
    out = Collected()
    labelled, draws, labels = out.labelled, out.draws, out.labels
    while len(labelled) < target and len(draws) < cap and not design.exhausted():
        d = design.draw()
        label = labelled.get(d.index)
        if label is None:
            label = labelled[d.index] = int(truth[d.index])
        draws.append(d)
        labels.append(label)
        design.update(d, label)
    return out


def simulate(design: str, truth: np.ndarray, predictions: np.ndarray,
             score: np.ndarray | None, prior: np.ndarray | None, budget: int, reps: int,
             seed: int = 0, confidence: float = 0.95, options: dict[str, Any] | None = None,
             alpha: float = 0.5, measures: dict[str, float] | None = None,
             interval: str = "auto",
             on_rep: Callable[[int], None] | None = None) -> dict[str, Replicates]:
    """Run ``reps`` independent evaluations (seeds ``seed``, ``seed+1``, …) against ``truth``."""
    measures = measures or MEASURES
    est = {m: np.full(reps, np.nan) for m in measures}
    lo = {m: np.full(reps, np.nan) for m in measures}
    hi = {m: np.full(reps, np.nan) for m in measures}
    n = predictions.shape[0]
    options = dict(options or {})
    if design in ("stratified", "oasis") and "precomputed_strata" not in options:
        from assay.designs import make_strata  # strata do not depend on the seed: sort once
        options["precomputed_strata"] = make_strata(score, n, options.get("strata", "csf"),
                                                    int(options.get("n_strata", 30)))
    if design == "auto" and "precomputed_order" not in options and score is not None:
        from assay.core.strata import _descending_order
        options["precomputed_order"] = _descending_order(score)

    def build(rng: np.random.Generator) -> Any:
        return build_design(design, n=n, predictions=predictions, score=score, prior=prior,
                            budget=budget, rng=rng, alpha=alpha, options=options)
    template = [build(np.random.default_rng(seed))]      # never drawn from: its set-up is

    def make(r: int) -> Any:                              # shared where the design can
        rng = np.random.default_rng(seed + r)
        copy = template[0].replicate(rng) if template else None
        if copy is None:
            template.clear()
            return build(rng)
        return copy
    batch: dict[int, tuple[Any, Any]] = {}
    for r in range(reps):
        if design == "oasis" and r not in batch:   # runs side by side: the same draws, faster
            from assay.designs.oasis_lockstep import collect_many
            designs = [make(q) for q in range(r, min(r + LOCKSTEP_RUNS, reps))]
            batch = dict(enumerate(zip(designs, collect_many(designs, truth, budget)), r))
        if batch:
            des, col = batch.pop(r)
        else:
            des = make(r)
            col = collect_known(des, truth, budget)
        res = estimate_all(des, col, predictions, confidence, measures, interval, bounds=False,
                           prior=prior)
        for m, e in res.items():
            if e.defined:
                est[m][r], lo[m][r], hi[m][r] = e.estimate, e.ci_low, e.ci_high
        if on_rep is not None:
            on_rep(r)
    return {m: Replicates(m, true_f_measure(truth, predictions, a), est[m], lo[m], hi[m])
            for m, a in measures.items()}


def auto_runs(truth: np.ndarray, predictions: np.ndarray, score: np.ndarray, budget: int,
              seeds: Iterable[int], options: dict[str, Any] | None = None,
              bounds: bool = False) -> Iterator[tuple[Any, Collected, dict[str, Any]]]:
    """One ``auto`` evaluation per seed (rng ``default_rng(seed)``, the ranking sorted once):
    (design, its collected labels, measure → Estimate), as the benches that dissect single
    runs need them (:func:`simulate` keeps only the intervals).

    >>> y = np.r_[np.ones(20), np.zeros(180)].astype(int)
    >>> s = np.linspace(1, 0, 200)
    >>> [len(col.draws) for _, col, _ in auto_runs(y, y, s, 60, [1, 2])]
    [60, 60]
    """
    from assay.core.strata import _descending_order
    opts = {"precomputed_order": _descending_order(score), **(options or {})}
    for seed in seeds:
        des = build_design("auto", n=len(truth), predictions=predictions, score=score,
                           prior=None, budget=budget, rng=np.random.default_rng(seed),
                           alpha=0.5, options=opts)
        col = collect_known(des, truth, budget)
        yield des, col, estimate_all(des, col, predictions, 0.95, MEASURES, "auto",
                                     bounds=bounds, prior=None)


@dataclass(frozen=True)
class Population:
    """Counts per stratum: ``counts[l]`` = (unassessable, t0f0, t0f1, t1f0, t1f1)."""
    counts: np.ndarray
    patterns: np.ndarray
    run_ids: tuple[str, ...]
    strata: tuple[str, ...]

    @property
    def sizes(self) -> np.ndarray:
        return self.counts.sum(axis=1)

    def truth(self) -> dict[str, np.ndarray]:
        """True yield, unassessable share, and each run's recall, precision and F1."""
        c = self.counts.astype(float)
        rel = c[:, 3] + c[:, 4]
        ass = c[:, 1:].sum(axis=1)
        R = self.patterns.astype(float)                       # strata are the patterns
        Y = rel.sum()
        YA = rel @ R
        NA = ass @ R
        return {"yield": Y, "recall": YA / Y, "precision": YA / NA, "f1": 2 * YA / (NA + Y),
                "unassessable": c[:, 0].sum() / c.sum()}

    def to_dict(self) -> dict:
        return {"counts": self.counts.tolist(), "strata": list(self.strata),
                "run_ids": list(self.run_ids)}


def make_population(sizes: Sequence[int], p: Sequence[float], fpr: Sequence[float],
                    fnr: Sequence[float], patterns: np.ndarray, rng: np.random.Generator,
                    unassessable: float | Sequence[float] = 0.0,
                    run_ids: Sequence[str] = (), strata: Sequence[str] = ()) -> Population:
    """Fix a population: true relevance ~ Bin(·, p_l), fallible labels by (θ_l, φ_l)."""
    L = len(sizes)
    sizes = np.asarray(sizes, np.int64)
    un = rng.binomial(sizes, np.broadcast_to(np.asarray(unassessable, float), (L,)))
    rel = rng.binomial(sizes - un, np.asarray(p, float))
    non = sizes - un - rel
    t0f1 = rng.binomial(non, np.asarray(fpr, float))
    t1f0 = rng.binomial(rel, np.asarray(fnr, float))
    counts = np.stack([un, non - t0f1, t0f1, t1f0, rel - t1f0], axis=1)
    names = tuple(strata) or tuple(str(i) for i in range(L))
    return Population(counts, np.asarray(patterns, bool), tuple(run_ids), names)


def simulate_two_phase(pop: Population, allocation: Sequence[int], adjudications: int | None,
             reps: int, rng: np.random.Generator,
             allocate: Callable[[SampleCounts], np.ndarray] | None = None) -> SampleCounts:
    """``reps`` repetitions of phase 1 (n_l per stratum) and phase 2.

    Phase 2 uses ``allocate(first_phase_counts) -> (L, C)`` per repetition when given (e.g.
    :func:`assay.stratified.allocate_adjudication`), else adjudicates ``adjudications``
    documents spread in proportion to the first-phase sample of assessable documents.
    With ``adjudications`` None the result is the naive (fallible-as-truth) counts.
    """
    L = pop.counts.shape[0]
    n = np.asarray(allocation, np.int64)
    draws = np.stack([rng.multivariate_hypergeometric(pop.counts[l], n[l], size=reps)
                      for l in range(L)], axis=1)                      # (B, L, 5)
    un, t0f0, t0f1, t1f0, t1f1 = (draws[..., i] for i in range(5))
    C = 3
    first = np.zeros((reps, L, C, L), np.int64)
    second = np.zeros_like(first)
    relevant = np.zeros_like(first)
    idx = np.arange(L)
    first[:, idx, 0, idx] = un
    first[:, idx, 1, idx] = t0f0 + t1f0
    first[:, idx, 2, idx] = t0f1 + t1f1
    base = SampleCounts(pop.sizes, pop.patterns, np.array([False, True, True]),
                        np.array([-1, 0, 1]), first, first, first, pop.run_ids, pop.strata)
    if adjudications is None:
        return base.naive()
    if allocate is not None:
        alloc = np.stack([allocate(SampleCounts(base.population, base.patterns, base.assessable,
                                                base.fallible, first[b], first[b], first[b],
                                                base.run_ids, base.strata))
                          for b in range(reps)])                       # (B, L, C)
    else:
        # advanced indices split by a slice put their axis first: (L, B, 2) → (B, L, 2)
        ass = np.moveaxis(first[:, idx, 1:, idx], 0, 1).astype(float)
        share = ass / ass.sum(axis=(1, 2), keepdims=True)
        alloc = np.zeros((reps, L, C), np.int64)
        alloc[:, :, 1:] = np.minimum(np.floor(share * adjudications + 0.5).astype(np.int64),
                                     ass.astype(np.int64))
    n0 = alloc[:, :, 1]
    n1 = alloc[:, :, 2]
    # hypergeometric: relevant among n0 drawn from the f=0 cell (t1f0 relevant of t0f0+t1f0)
    r0 = _hyper(rng, t1f0, t0f0, n0)
    r1 = _hyper(rng, t1f1, t0f1, n1)
    second[:, idx, 0, idx] = un
    second[:, idx, 1, idx] = n0
    second[:, idx, 2, idx] = n1
    relevant[:, idx, 1, idx] = r0
    relevant[:, idx, 2, idx] = r1
    # cells with no adjudication: fallible labels taken as true (as build_counts does)
    filled = np.zeros((reps, L, C), bool)
    for c, lab in ((1, 0), (2, 1)):
        miss = (second[:, idx, c, idx] == 0) & (first[:, idx, c, idx] > 0)
        filled[:, :, c] = miss
        second[:, idx, c, idx] = np.where(miss, first[:, idx, c, idx], second[:, idx, c, idx])
        relevant[:, idx, c, idx] = np.where(miss, first[:, idx, c, idx] * lab,
                                            relevant[:, idx, c, idx])
    return SampleCounts(base.population, base.patterns, base.assessable, base.fallible, first,
                        second, relevant, pop.run_ids, pop.strata, filled=filled)


def _hyper(rng: np.random.Generator, good, bad, n) -> np.ndarray:
    """Hypergeometric draws allowing n = 0 and empty urns."""
    good, bad, n = np.broadcast_arrays(np.asarray(good), np.asarray(bad), np.asarray(n))
    out = np.zeros(good.shape, np.int64)
    ok = n > 0
    out[ok] = rng.hypergeometric(good[ok], bad[ok], n[ok])
    return out


__all__ = ["Population", "Replicates", "auto_runs", "make_population", "simulate",
           "simulate_two_phase"]

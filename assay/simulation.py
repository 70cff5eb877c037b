"""Seeded simulation of a design against known truth: bias, RMSE and interval coverage.

Used by the tests and benchmarks, and by users planning a budget on a labelled pilot pool.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from assay.designs import build_design
from assay.core.measures import MEASURES, true_f_measure
from assay.estimation import estimate_all
from assay.evaluation import collect


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
    for r in range(reps):
        rng = np.random.default_rng(seed + r)
        des = build_design(design, n=n, predictions=predictions, score=score, prior=prior,
                           budget=budget, rng=rng, alpha=alpha, options=options)
        col = collect(des, lambda i: int(truth[i]), budget)
        res = estimate_all(des, col, predictions, confidence, measures, interval)
        for m, e in res.items():
            if e.defined:
                est[m][r], lo[m][r], hi[m][r] = e.estimate, e.ci_low, e.ci_high
        if on_rep is not None:
            on_rep(r)
    return {m: Replicates(m, true_f_measure(truth, predictions, a), est[m], lo[m], hi[m])
            for m, a in measures.items()}

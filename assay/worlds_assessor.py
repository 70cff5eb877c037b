"""The stratified (TREC) adversarial world of issue 11 (must-have 5): a two-run collection
whose assessor error is concentrated in one stratum, as a :class:`assay.simulation.Population`
(the pool worlds are in :mod:`assay.worlds`, which re-exports these names).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from assay.simulation import Population, make_population

__all__ = ["AssessorWorld", "assessor_error_world"]


@dataclass(frozen=True, eq=False)
class AssessorWorld:
    """A stratified two-run collection with fallible assessments, and the sampling regime it is
    evaluated under (first-phase ``assessments``, second-phase ``adjudications``)."""

    name: str
    population: Population
    assessments: int
    adjudications: int
    params: dict[str, Any]

    @property
    def truth(self) -> dict[str, np.ndarray]:
        return self.population.truth()


def assessor_error_world(rng: np.random.Generator, p_bottom: float = 0.001,
                         fpr_bottom: float = 0.02, fpr_other: float | Sequence[float] = 0.0,
                         fnr_bottom: float = 0.15, fnr_other: float | Sequence[float] = 0.15,
                         sizes: tuple[int, ...] = (1200, 1500, 1300, 96000),
                         p_top: tuple[float, float, float] = (0.85, 0.30, 0.55),
                         unassessable: float = 0.01, assessments: int = 1500,
                         adjudications: int = 300) -> AssessorWorld:
    """Breaks *assessor error spread evenly enough to be seen*: issue 11's hard regime of
    double sampling. Two runs A, B stratify 100,000 documents into 11/10/01/00 (the bottom
    stratum, returned by neither, holds 96%); relevance p_bottom = 0.1% in the bottom stratum,
    assessor false positives (2%) only there — twenty times its relevant documents — and
    false negatives 15% everywhere; 1,500 assessments, 300 adjudications. ``fpr_other`` and
    ``fnr_other`` (one rate, or one per upper stratum) set the error elsewhere. The population
    is :func:`assay.simulation.make_population`'s.

    >>> w = assessor_error_world(np.random.default_rng(10))
    >>> c = w.population.counts; int(c[3, 2]) > 10 * int(c[3, 3:].sum()), int(c[:3, 2].sum())
    (True, 0)
    """
    params = dict(p_bottom=p_bottom, fpr_bottom=fpr_bottom, fpr_other=fpr_other,
                  fnr_bottom=fnr_bottom, fnr_other=fnr_other, sizes=sizes, p_top=p_top,
                  unassessable=unassessable, assessments=assessments,
                  adjudications=adjudications)
    pat = np.array([[1, 1], [1, 0], [0, 1], [0, 0]], bool)
    L = len(sizes)
    fpr = list(np.broadcast_to(np.asarray(fpr_other, float), (L - 1,))) + [fpr_bottom]
    fnr = list(np.broadcast_to(np.asarray(fnr_other, float), (L - 1,))) + [fnr_bottom]
    pop = make_population(list(sizes), list(p_top) + [p_bottom], fpr, fnr, pat, rng,
                          unassessable=unassessable, run_ids=("A", "B"),
                          strata=("11", "10", "01", "00"))
    return AssessorWorld("assessor_error", pop, assessments, adjudications, params)

"""OASIS on a pool that stays on an engine (docs/engines.md, issue 14).

The design is :class:`assay.designs.oasis.OasisDesign` — the same strata, Beta posteriors,
instrumental distribution v (eq. 12, with its defensive share and detection floors, the floors
from the same per-stratum sums) and Hansen–Hurwitz weights —
with the per-item arrays replaced by facts the engine gives:

* **The strata and their prior.** CSF or equal-size strata from the engine's exact counts
  (:func:`assay.engines.plan.engine_strata`: the same partition as in memory), N_k and the
  predicted positives per stratum (λ_k = positives/N_k), and Σ p per stratum
  (:meth:`~assay.engines.base.Engine.segment_prior_sums`, p = logistic(score) or the
  ``probability`` column): π̂_k^(0) = Σ p / N_k (seed 002, Algorithm 2).
* **A draw with replacement.** OASIS draws a stratum k ~ v, then an item uniformly in P_k,
  with replacement. Here the uniform position r ∈ [0, N_k) is drawn by the Generator as in
  memory, and r's order of first appearance among stratum k's draws, u, names the stratum's
  u-th item in the run's hash order h(seed, key) (:class:`~assay.engines.plan.PrefixSampler`):
  i.i.d. uniform positions relabelled by a uniformly random permutation are still i.i.d.
  uniform, so a repeat of r is a repeat of its item and every draw has probability v_k/N_k,
  as in memory (the trick of :class:`assay.designs.importance.EngineImportanceDesign`). The
  first prefix pass fetches min(N_k, budget) items of every stratum (no stratum can need more
  distinct items than the budget) up to :data:`PREFETCH_ROWS`, so a run makes one pass.

The items drawn are another sample than in memory (hash order, not pool order), the same on
every engine for the same seed; the estimates agree in distribution.

>>> import pandas as pd
>>> from assay.engines import MemoryEngine
>>> eng = MemoryEngine(pd.DataFrame({"id": range(200), "score": [-i / 10 for i in range(200)],
...                                  "prediction": [int(i < 20) for i in range(200)]}))
>>> d = EngineOasisDesign(eng, 50, np.random.default_rng(1), seed=1, n_strata=4)
>>> xs = [d.draw() for _ in range(5)]
>>> d.strata.count, d.sampler.passes, all(0 < x.probability < 1 for x in xs)
(4, 1, True)
>>> m = d.manifest().extra
>>> m["floors"], m["floors_budget"], len(m["detection_floors"]) == d.strata.count
(True, 50, True)
"""
from __future__ import annotations

from typing import Any

import numpy as np

from assay.core.types import Draw, Kind
from assay.designs.oasis import (DEFAULT_DEFENSIVE, OasisDesign, OasisInit, _check_args,
                                 initial_f)

PREFETCH_ROWS = 250_000   # the first prefix pass takes min(N_k, budget) per stratum up to this


class EngineOasisDesign(OasisDesign):
    """:class:`OasisDesign` over a pool on ``engine`` (module docstring). A draw's ``index``
    is a row of ``sampler.items`` (the items fetched)."""

    def __init__(self, engine: Any, budget: int, rng: np.random.Generator, seed: int,
                 alpha: float = 0.5, epsilon: float = 1e-3, n_strata: int = 30,
                 strata: str = "csf", prior_strength: float | None = None,
                 decaying_prior: bool = True, v_star: str = "paper",
                 n_bins: int | None = None, defensive: float = DEFAULT_DEFENSIVE,
                 probability: str | None = None, floors: bool = True) -> None:
        from assay.engines.plan import PrefixSampler, engine_strata
        _check_args(alpha, epsilon, n_strata, strata, prior_strength, v_star)
        info = engine.describe()
        self.engine, self.seed, self.probability = engine, int(seed), probability
        self.rng, self.alpha, self.epsilon, self.n = rng, float(alpha), float(epsilon), info.rows
        self.n_strata_requested, self.n_bins = int(n_strata), n_bins
        self.decaying_prior, self.threshold, self.v_star_form = decaying_prior, 0.0, v_star
        self.engine_strata = engine_strata(engine, strata, n_strata, n_bins)
        es = self.engine_strata
        s1, s0 = engine.segment_prior_sums(es.edges, probability)
        sizes = es.sizes.astype(np.float64)
        pi0 = np.clip((s1 + s0) / sizes, 0.0, 1.0)
        lam = es.positives / sizes
        self.strata = es                        # count, sizes, method: all OASIS asks of it
        self.strata_method, self.base_strata_count, self.cross_fit = es.method, es.count, False
        self._sibling = np.arange(es.count)
        self._start_model(es.sizes, OasisInit(pi0, lam, initial_f(self.alpha, sizes, pi0, lam)),
                          prior_strength, defensive)
        self._floor_sums = (es.positives.astype(np.float64), s1, s0)
        self.floors = bool(floors)
        self._set_floors(int(budget) if floors else None)
        deep = np.minimum(es.sizes, int(budget))
        self.sampler = PrefixSampler(engine, es, self.seed,
                                     first=deep if int(deep.sum()) <= PREFETCH_ROWS else None)
        self._seen: list[dict[int, int]] = [{} for _ in range(es.count)]
        self._pred_rows = np.zeros(0, dtype=np.int64)

    @property
    def _predictions(self) -> np.ndarray:   # type: ignore[override]
        """The predictions of the items fetched (row i of ``sampler.items``)."""
        items = self.sampler.items
        if self._pred_rows.shape[0] != len(items):
            self._pred_rows = items["prediction"].to_numpy(dtype=np.int64)
        return self._pred_rows

    def draw(self) -> Draw:
        """Stratum k ~ v, a uniform position r in P_k (the same Generator calls as in memory),
        and r's item: the u-th of the stratum in hash order, u = r's order of first
        appearance (module docstring)."""
        v = self.instrumental()
        assert self._cum is not None
        k = int(np.searchsorted(self._cum, self.rng.random(), side="right"))
        k = min(k, self.strata.count - 1)
        r = int(self.rng.integers(self._sizes[k]))
        u = self._seen[k].setdefault(r, len(self._seen[k]))
        return Draw(self.sampler.item(k, u), float(v[k]) / float(self._sizes[k]), k,
                    Kind.SELECTION)

    def params(self) -> dict[str, Any]:
        return {**super().params(), "engine": self.engine.name}

    def manifest(self) -> Any:
        """The run manifest: hash spec, seed, edges, stratum sizes, pool fingerprint, and the
        settings that shape v: α (the F-measure v is optimal for; the floors depend on it too),
        ε, the prior's strength and decay, the v* form, the probability column (or None), the
        defensive share and the detection ``floors`` (on or off; when on, the budget they are
        for and the shares φ_k, full precision, as the latest :meth:`extend` set them), so
        another engine can rebuild the run's v and check it."""
        floors: dict[str, Any] = {"floors": self.floors}
        if self.floors and self.budget is not None:
            floors["floors_budget"] = int(self.budget)
            floors["detection_floors"] = [float(x) for x in self.phi]
        return self.engine_strata.manifest(self.engine, self.seed, design="oasis",
                                           alpha=self.alpha, epsilon=self.epsilon,
                                           prior_strength=float(self.eta),
                                           decaying_prior=self.decaying_prior,
                                           v_star=self.v_star_form, probability=self.probability,
                                           defensive=self.defensive, **floors)


__all__ = ["EngineOasisDesign"]

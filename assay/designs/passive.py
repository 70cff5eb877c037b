"""Passive (uniform) sampling, with replacement (q = 1/N; Raj's ordered estimator over the
distinct items, :meth:`assay.core.totals.WithReplacementSample.terms`) and without
(simple random sampling, the one-stratum case of :mod:`assay.designs.stratified`)."""
from __future__ import annotations

from typing import Any

import numpy as np

from assay.designs.base import Design, Draw, SparseShuffle
from assay.core.types import Kind


class UniformWithReplacement(Design):
    """Each draw picks any of the N items with probability 1/N."""

    name = "passive"

    def __init__(self, n: int, rng: np.random.Generator) -> None:
        self.n, self.rng = int(n), rng

    def params(self) -> dict[str, Any]:
        return {"design": "passive", "replace": True}

    def draw(self) -> Draw:
        return Draw(int(self.rng.integers(self.n)), 1.0 / self.n, 0, Kind.SELECTION)


class UniformWithoutReplacement(Design):
    """Simple random sampling without replacement of ``budget`` items (inclusion prob n/N)."""

    name = "passive"

    def __init__(self, n: int, budget: int, rng: np.random.Generator) -> None:
        self.n, self.rng = int(n), rng
        self.budget = int(min(budget, n))
        self._shuffle = SparseShuffle(self.n)

    def params(self) -> dict[str, Any]:
        return {"design": "passive", "replace": False, "budget": self.budget}

    def exhausted(self) -> bool:
        return self._shuffle.taken >= self.budget

    def draw(self) -> Draw:
        return Draw(self._shuffle.next(self.rng), self.budget / self.n, 0, Kind.INCLUSION)

    def extend(self, budget: int) -> None:
        """A larger simple random sample: the draws so far are its first members (the union
        of an SRS and an SRS of the rest is an SRS)."""
        self.budget = max(self.budget, int(min(budget, self.n)))

    def skip(self, draw: Draw) -> None:
        self.budget = min(self.budget + 1, self.n)

    def stratum_sizes(self) -> np.ndarray:
        return np.array([self.n])


class EngineUniformWithoutReplacement(Design):
    """:class:`UniformWithoutReplacement` on a pool that stays on an engine (docs/engines.md):
    the k-th draw is the pool's k-th item in hash order h(seed, key), the same item on every
    engine; a draw's ``index`` is a row of ``sampler.items``."""

    name = "passive"

    def __init__(self, engine: Any, budget: int, seed: int) -> None:
        from assay.engines.plan import PrefixSampler, engine_strata
        self.engine, self.seed = engine, int(seed)
        self.strata = engine_strata(engine, "none", 1)
        self.n = int(self.strata.sizes[0])
        self.budget = int(min(budget, self.n))
        self.sampler = PrefixSampler(engine, self.strata, self.seed,
                                     first=np.array([self.budget]))
        self.taken = 0

    def params(self) -> dict[str, Any]:
        return {"design": "passive", "replace": False, "budget": self.budget,
                "engine": self.engine.name}

    def manifest(self) -> Any:
        return self.strata.manifest(self.engine, self.seed, budget=self.budget)

    def exhausted(self) -> bool:
        return self.taken >= self.budget

    def draw(self) -> Draw:
        i = self.sampler.item(0, self.taken)
        self.taken += 1
        return Draw(i, self.budget / self.n, 0, Kind.INCLUSION)

    def extend(self, budget: int) -> None:
        self.budget = max(self.budget, int(min(budget, self.n)))

    def skip(self, draw: Draw) -> None:
        self.budget = min(self.budget + 1, self.n)

    def stratum_sizes(self) -> np.ndarray:
        return np.array([self.n])

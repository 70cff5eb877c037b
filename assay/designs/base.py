"""What every design shares: a draw record, the design interface, and a sparse
without-replacement sampler whose cost per draw does not grow with the pool."""
from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any

import numpy as np

from assay.core.types import Draw


class Design(ABC):
    """A sampling design over a pool of N items, driven by an explicit seeded Generator."""

    name: str = "design"
    adaptive: bool = False

    @abstractmethod
    def params(self) -> dict[str, Any]:
        """Everything needed to rebuild the design (saved with its draws)."""

    @abstractmethod
    def draw(self) -> Draw:
        """The next draw."""

    def exhausted(self) -> bool:
        """True when the design has no further draw planned."""
        return False

    def extend(self, budget: int) -> None:
        """Raise the budget (distinct labels) of a run already under way, keeping every draw
        made so far as the design's first draws. With-replacement designs just keep drawing
        (the budget only stops the run), so the default does nothing."""

    def update(self, draw: Draw, label: int) -> None:
        """Learn from a label (adaptive designs); static designs ignore it."""

    def skip(self, draw: Draw) -> None:
        """The annotator could not label this draw: plan a replacement (nonresponse is treated
        as missing at random within the stratum)."""

    def selection_strata(self) -> np.ndarray | None:
        """N_h of the strata within which a with-replacement design draws uniformly (OASIS):
        the interval's count rule uses them (:func:`assay.core.totals.sample_of`); None
        otherwise."""
        return None

    def stratum_sizes(self) -> np.ndarray | None:
        """N_h of the strata the design samples without replacement (what the stratified
        estimator needs beside the draws); None for with-replacement designs."""
        return None

    def strata_table(self) -> list[dict[str, Any]]:
        """Per-stratum facts for reports (empty for unstratified designs)."""
        return []

    def pool_size(self) -> int:
        """The number of items the design draws from: its ``n``, else the sum of its strata's
        sizes (what a sampling loop caps its distinct labels at).

        >>> from assay.designs import UniformWithoutReplacement
        >>> UniformWithoutReplacement(4, 2, np.random.default_rng(0)).pool_size()
        4
        """
        n = getattr(self, "n", None)
        if n:
            return int(n)
        sizes = self.stratum_sizes()
        if sizes is None:
            raise TypeError(f"{type(self).__name__} has neither n nor stratum sizes")
        return int(sizes.sum())

    def replicate(self, rng: np.random.Generator) -> "Design | None":
        """This design as built afresh with ``rng``, from a design not drawn from yet: where
        the set-up (strata, weights, allocation) depends on the pool and the settings only, it
        is shared rather than computed again, and the copy draws exactly what a design built
        with ``rng`` draws (tests/test_simulation_collect.py). None: build it again (the
        default)."""
        return None


class SparseShuffle:
    """Draws without replacement from ``range(n)`` by a lazy Fisher–Yates shuffle.

    Only swapped positions are stored, so memory grows with the number of draws, not with n,
    and each draw costs O(1).
    """

    __slots__ = ("n", "taken", "_swaps")

    def __init__(self, n: int) -> None:
        self.n, self.taken, self._swaps = int(n), 0, {}

    def next(self, rng: np.random.Generator) -> int:
        if self.taken >= self.n:
            raise IndexError("all items drawn")
        j = self.taken
        r = int(rng.integers(j, self.n))
        sw = self._swaps
        chosen = sw.get(r, r)
        sw[r] = sw.get(j, j)
        sw.pop(j, None)
        self.taken += 1
        return chosen

"""Static importance sampling with the asymptotically optimal instrumental distribution for F_α
(seed 002, eq. 5, after Sawade et al. 2010), mixed with the uniform distribution for support
(seed 002, eq. 6): q = ε/N + (1 − ε) q*. Draws are with replacement; estimation is
Hansen–Hurwitz (:class:`assay.core.totals.WithReplacementSample`)."""
from __future__ import annotations

from typing import Any

import numpy as np

from assay.designs.base import Design, Draw
from assay.designs.stratified import initial_f_guess, residual_sd
from assay.core.types import Kind

_CHUNK = 4096


class ImportanceDesign(Design):
    """Draws item i with probability q_i ∝ ε/N + (1 − ε) q*_i, with replacement."""

    name = "importance"

    def __init__(self, prior: np.ndarray, predictions: np.ndarray, rng: np.random.Generator,
                 alpha: float = 0.5, epsilon: float = 0.1) -> None:
        if not 0.0 < epsilon <= 1.0:
            raise ValueError(f"epsilon must be in (0, 1], got {epsilon}")
        self.rng, self.alpha, self.epsilon = rng, alpha, epsilon
        n = predictions.shape[0]
        self.n = n
        self.f_guess = initial_f_guess(prior, predictions, alpha)
        # q* in chunks written into the one array the design keeps (8 bytes/item)
        cum = np.empty(n, dtype=np.float64)
        chunk = 1 << 20
        for start in range(0, n, chunk):
            stop = min(n, start + chunk)
            cum[start:stop] = residual_sd(prior[start:stop], predictions[start:stop], alpha,
                                          self.f_guess)
        total = float(cum.sum())
        if total <= 0:
            cum.fill(1.0 / n)
        else:
            cum *= (1.0 - epsilon) / total
            cum += epsilon / n
        np.cumsum(cum, out=cum)
        cum /= cum[-1]
        self._cum = cum
        self._u = np.empty(0)
        self._k = 0

    def params(self) -> dict[str, Any]:
        return {"design": "importance", "alpha": self.alpha, "epsilon": self.epsilon}

    def probability(self, i: int) -> float:
        return float(self._cum[i] - (self._cum[i - 1] if i > 0 else 0.0))

    def draw(self) -> Draw:
        if self._k >= self._u.shape[0]:
            self._u = self.rng.random(_CHUNK)
            self._k = 0
        u = self._u[self._k]
        self._k += 1
        i = int(np.searchsorted(self._cum, u, side="right"))
        i = min(i, self.n - 1)
        return Draw(i, self.probability(i), 0, Kind.SELECTION)

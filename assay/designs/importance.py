"""Static importance sampling with the asymptotically optimal instrumental distribution for F_α
(seed 002, eq. 5, after Sawade et al. 2010), mixed with the uniform distribution for support
(seed 002, eq. 6): q = ε/N + (1 − ε) q*. Draws are with replacement; estimation is
Raj's ordered estimator over their distinct items, Hansen–Hurwitz's terms for each new item
(:meth:`assay.core.totals.WithReplacementSample.terms`)."""
from __future__ import annotations

import copy
from typing import Any

import numpy as np

from assay.designs.base import Design, Draw
from assay.core.allocation import initial_f_guess, residual_sd
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

    def replicate(self, rng: np.random.Generator) -> "ImportanceDesign":
        """The same q (a function of the prior and the predictions), drawn from ``rng``
        (:meth:`assay.designs.base.Design.replicate`)."""
        new = copy.copy(self)
        new.rng, new._u, new._k = rng, np.empty(0), 0
        return new

    def draw(self) -> Draw:
        if self._k >= self._u.shape[0]:
            self._u = self.rng.random(_CHUNK)
            self._k = 0
        u = self._u[self._k]
        self._k += 1
        i = int(np.searchsorted(self._cum, u, side="right"))
        i = min(i, self.n - 1)
        return Draw(i, self.probability(i), 0, Kind.SELECTION)


class EngineImportanceDesign(Design):
    """:class:`ImportanceDesign` on a pool that stays on an engine (docs/engines.md): draws
    with replacement with q_i = ε/N + (1 − ε) sd_i/Σsd, sd_i = :func:`residual_sd` at the
    initial F̂ (seed 002 eqs. 5–6), the same q as in memory.

    A draw picks a score bin (:meth:`~assay.engines.base.Engine.score_histogram`'s bins) —
    with probability ε in proportion to its size N_b, else to N_b·max_b sd — then a uniform
    r in [0, N_b), accepted (always for the uniform part, else with probability sd_i/max_b sd):
    the mixture of the uniform distribution and of sd (rejection sampling). The item of r: r's
    order of first appearance among the bin's proposals, v, names the bin's v-th item in hash
    order h(seed, key) — iid uniform draws relabelled by a random permutation, so still iid
    uniform — so a batch of proposals needs one prefix pass, and the same seed gives the same
    items on every engine. A draw's ``index`` is a row of ``sampler.items``.
    """

    name = "importance"

    def __init__(self, engine: Any, rng: np.random.Generator, seed: int, alpha: float = 0.5,
                 epsilon: float = 0.1, probability: str | None = None,
                 bins: int = 256, batch: int = 8192) -> None:
        from assay.engines.base import OrderKeys
        from assay.engines.plan import NO_EDGES, EngineStrata, PrefixSampler
        if not 0.0 < epsilon <= 1.0:
            raise ValueError(f"epsilon must be in (0, 1], got {epsilon}")
        self.engine, self.rng, self.seed = engine, rng, int(seed)
        self.alpha, self.epsilon, self.probability, self.batch = alpha, epsilon, probability, batch
        info = engine.describe()
        self.n = info.rows
        s1, s0 = engine.segment_prior_sums(NO_EDGES, probability)
        den = alpha * info.positives + (1.0 - alpha) * float(s1.sum() + s0.sum())
        self.f_guess = float(s1.sum()) / den if den > 0 else 0.5
        m = int(min(bins, self.n))
        counts, total, top, edges = engine.bin_residual_stats(m, alpha, self.f_guess, probability)
        # strata in ranking order: the top bin first
        self.sizes, self.top = counts[::-1].astype(np.int64), top[::-1]
        self.total_sd = float(total.sum())
        strata = EngineStrata(OrderKeys.score_cuts(edges[1:-1]), self.sizes,
                              np.zeros(m, dtype=np.int64), "bins")
        self.strata = strata
        self.sampler = PrefixSampler(engine, strata, self.seed)
        self._seen: list[dict[int, int]] = [{} for _ in range(m)]
        self._queue: list[Draw] = []
        self._sd: dict[int, float] = {}

    def params(self) -> dict[str, Any]:
        return {"design": "importance", "alpha": self.alpha, "epsilon": self.epsilon,
                "engine": self.engine.name}

    def manifest(self) -> Any:
        return self.strata.manifest(self.engine, self.seed, epsilon=self.epsilon,
                                    f_guess=self.f_guess)

    def _item_sd(self, idx: np.ndarray) -> np.ndarray:
        items = self.sampler.items
        new = [int(i) for i in idx if int(i) not in self._sd]
        if new:
            sub = items.iloc[new]
            if self.probability is None:
                p = 1.0 / (1.0 + np.exp(-sub["score"].to_numpy(dtype=np.float64)))
            else:
                ids = sub[list(self.engine.describe().id_columns)]
                p = np.clip(self.engine.fetch(ids)[self.probability].to_numpy(
                    dtype=np.float64), 0.0, 1.0)
            sd = residual_sd(p, sub["prediction"].to_numpy(), self.alpha, self.f_guess)
            self._sd.update(zip(new, sd.tolist()))
        return np.array([self._sd[int(i)] for i in idx])

    def _refill(self) -> None:
        rng, m, k = self.rng, self.batch, self.sizes.shape[0]
        ws = self.sizes * self.top
        uniform = rng.random(m) < self.epsilon if ws.sum() > 0 else np.ones(m, dtype=bool)
        b = np.where(uniform, rng.choice(k, m, p=self.sizes / self.sizes.sum()),
                     rng.choice(k, m, p=ws / ws.sum()) if ws.sum() > 0 else 0)
        r = rng.integers(0, self.sizes[b])
        u = rng.random(m)
        v = np.array([self._seen[bb].setdefault(int(rr), len(self._seen[bb]))
                      for bb, rr in zip(b.tolist(), r.tolist())])
        need = np.array([len(s) for s in self._seen], dtype=np.int64)
        self.sampler._fetch(need)                     # one pass for the whole batch
        idx = np.array([self.sampler.item(int(bb), int(vv)) for bb, vv in zip(b, v)])
        sd = self._item_sd(idx)
        keep = uniform | (u * self.top[b] <= sd)
        q = self.epsilon / self.n + (1.0 - self.epsilon) * (
            sd / self.total_sd if self.total_sd > 0 else 1.0 / self.n)
        self._queue = [Draw(int(i), float(qq), 0, Kind.SELECTION)
                       for i, qq in zip(idx[keep], q[keep])][::-1]

    def draw(self) -> Draw:
        while not self._queue:
            self._refill()
        return self._queue.pop()

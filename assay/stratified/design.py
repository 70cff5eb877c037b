"""Stratification by run-return pattern, allocation of an assessment budget, and sampling.

Seed 004 §2 (TREC Legal Track interactive task): one stratum per combination of runs returning a
document, 2^k strata for k runs, the *bottom* stratum being the documents returned by no run.
Within each stratum documents are drawn by simple random sampling without replacement, so a
sampled document of stratum l has inclusion probability n_l / N_l.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping, Sequence

import numpy as np

__all__ = ["Stratification", "stratify_by_runs", "stratify_by_labels",
           "StratifiedSample", "draw_sample"]


@dataclass(frozen=True)
class Stratification:
    """A partition of a collection: ``codes[i]`` is the stratum index of ``docnos[i]``.

    ``patterns[l, k]`` is True when run ``run_ids[k]`` returns every document of stratum l (only
    for run-pattern strata; None for user-given strata).
    """
    docnos: tuple[str, ...]
    codes: np.ndarray
    names: tuple[str, ...]
    run_ids: tuple[str, ...] = ()
    patterns: np.ndarray | None = None

    @property
    def sizes(self) -> np.ndarray:
        """N_l, the number of documents of each stratum."""
        return np.bincount(self.codes, minlength=len(self.names))

    @property
    def bottom(self) -> int | None:
        """Index of the bottom stratum (returned by no run), if any."""
        if self.patterns is None:
            return None
        hits = np.flatnonzero(~self.patterns.any(axis=1))
        return int(hits[0]) if hits.size else None

    def to_dict(self) -> dict:
        return {"strata": [{"name": n, "size": int(s)} for n, s in zip(self.names, self.sizes)],
                "run_ids": list(self.run_ids)}


def pattern_name(bits: Sequence[bool]) -> str:
    """Stratum name for a run-return pattern: one 0/1 digit per run, in run order ("10", "00")."""
    return "".join("1" if b else "0" for b in bits)


def stratify_by_runs(docnos: Sequence[str], returned: Mapping[str, set]) -> Stratification:
    """One stratum per non-empty run-return pattern (seed 004 §2: 2^k strata for k runs).

    ``returned`` maps run id -> set of docnos the run returns. Strata are named by their pattern
    (see :func:`pattern_name`) and ordered from the top stratum (all runs) to the bottom (none).
    """
    run_ids = tuple(returned)
    k = len(run_ids)
    bits = np.zeros((len(docnos), k), dtype=bool)
    index = {d: i for i, d in enumerate(docnos)}
    for j, r in enumerate(run_ids):
        idx = [index[d] for d in returned[r] if d in index]
        bits[idx, j] = True
    weights = 1 << np.arange(k - 1, -1, -1) if k else np.zeros(0, dtype=int)
    key = bits.astype(np.int64) @ weights.astype(np.int64) if k else np.zeros(len(docnos), np.int64)
    present = np.unique(key)[::-1]            # top stratum (all ones) first, bottom last
    codes = np.searchsorted(-present, -key)
    patterns = ((present[:, None] >> np.arange(k - 1, -1, -1)) & 1).astype(bool)
    names = tuple(pattern_name(p) for p in patterns)
    return Stratification(tuple(docnos), codes.astype(np.int64), names, run_ids, patterns)


def stratify_by_labels(docnos: Sequence[str], labels: Sequence[str]) -> Stratification:
    """User-given strata: ``labels[i]`` names the stratum of ``docnos[i]``."""
    names, codes = np.unique(np.asarray(labels, dtype=object).astype(str), return_inverse=True)
    return Stratification(tuple(docnos), codes.astype(np.int64), tuple(str(n) for n in names))


@dataclass(frozen=True)
class StratifiedSample:
    """Documents drawn by stratified SRS without replacement, with their inclusion probabilities."""
    docnos: tuple[str, ...]
    strata: tuple[str, ...]
    inclusion_probability: np.ndarray
    allocation: dict[str, int] = field(default_factory=dict)
    stratum_sizes: dict[str, int] = field(default_factory=dict)

    def to_dict(self) -> dict:
        return {"docnos": list(self.docnos), "strata": list(self.strata),
                "inclusion_probability": self.inclusion_probability.tolist(),
                "allocation": dict(self.allocation), "stratum_sizes": dict(self.stratum_sizes)}


def draw_sample(strat: Stratification, allocation: Sequence[int],
                rng: np.random.Generator) -> StratifiedSample:
    """Simple random sampling without replacement of n_l documents from each stratum l.

    The inclusion probability of a sampled document of stratum l is n_l / N_l.
    """
    if not isinstance(rng, np.random.Generator):
        raise TypeError("rng must be a numpy.random.Generator (seeded by the user)")
    sizes = strat.sizes
    allocation = np.asarray(allocation, dtype=np.int64)
    if np.any(allocation > sizes) or np.any(allocation < 0):
        raise ValueError("allocation must satisfy 0 <= n_l <= N_l")
    order = np.argsort(strat.codes, kind="stable")
    starts = np.concatenate([[0], np.cumsum(sizes)])
    docs, names, probs = [], [], []
    for l, name in enumerate(strat.names):
        members = order[starts[l]:starts[l + 1]]
        pick = members[np.sort(rng.choice(members.size, size=allocation[l], replace=False))]
        docs.extend(strat.docnos[i] for i in pick)
        names.extend([name] * allocation[l])
        probs.extend([allocation[l] / sizes[l]] * allocation[l])
    return StratifiedSample(tuple(docs), tuple(names), np.asarray(probs, float),
                            {n: int(a) for n, a in zip(strat.names, allocation)},
                            {n: int(s) for n, s in zip(strat.names, sizes)})

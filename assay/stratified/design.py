"""Seed 004's stratification of a document collection, and the stratified sample of documents.

Seed 004 §2 (TREC Legal Track interactive task): one stratum per combination of runs returning a
document, 2^k strata for k runs, the *bottom* stratum being the documents returned by no run.
The strata are the core's :class:`~assay.core.strata.Strata` (:func:`pattern_strata`,
:func:`named_strata`); this module maps document ids onto them. Within each stratum documents are
drawn by simple random sampling without replacement, so a sampled document of stratum l has
inclusion probability n_l / N_l.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping, Sequence

import numpy as np

from assay.core.strata import Strata, named_strata, pattern_strata

__all__ = ["DocumentSample", "draw_sample", "stratify_by_labels", "stratify_by_runs"]


def stratify_by_runs(docnos: Sequence[str], returned: Mapping[str, set]) -> Strata:
    """Run-return strata of the collection ``docnos`` (``returned``: run id → docnos it returns).

    >>> st = stratify_by_runs(["d1", "d2", "d3"], {"A": {"d1"}, "B": {"d1", "d3"}})
    >>> st.names, st.codes.tolist()
    (('11', '01', '00'), [0, 2, 1])
    """
    run_ids = tuple(returned)
    bits = np.zeros((len(docnos), len(run_ids)), dtype=bool)
    index = {d: i for i, d in enumerate(docnos)}
    for j, r in enumerate(run_ids):
        bits[[index[d] for d in returned[r] if d in index], j] = True
    return pattern_strata(bits, run_ids)


def stratify_by_labels(docnos: Sequence[str], labels: Sequence[str]) -> Strata:
    """User-given strata: ``labels[i]`` names the stratum of ``docnos[i]``.

    >>> stratify_by_labels(["a", "b", "c"], ["x", "y", "x"]).sizes.tolist()
    [2, 1]
    """
    if len(labels) != len(docnos):
        raise ValueError(f"{len(labels)} stratum labels for {len(docnos)} documents")
    return named_strata(labels)


@dataclass(frozen=True)
class DocumentSample:
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


def draw_sample(docnos: Sequence[str], strata: Strata, allocation: Sequence[int],
                rng: np.random.Generator) -> DocumentSample:
    """Simple random sampling without replacement of n_l documents from each stratum l.

    The inclusion probability of a sampled document of stratum l is n_l / N_l.

    >>> st = stratify_by_labels(["a", "b", "c"], ["x", "y", "x"])
    >>> draw_sample(["a", "b", "c"], st, [1, 1], np.random.default_rng(0)).strata
    ('x', 'y')
    """
    if not isinstance(rng, np.random.Generator):
        raise TypeError("rng must be a numpy.random.Generator (seeded by the user)")
    sizes = strata.sizes
    allocation = np.asarray(allocation, dtype=np.int64)
    if np.any(allocation > sizes) or np.any(allocation < 0):
        raise ValueError("allocation must satisfy 0 <= n_l <= N_l")
    names = strata.stratum_names
    docs, where, probs = [], [], []
    for h, name in enumerate(names):
        members = strata.members(h)
        pick = members[np.sort(rng.choice(members.size, size=allocation[h], replace=False))]
        docs.extend(docnos[i] for i in pick)
        where.extend([name] * allocation[h])
        probs.extend([allocation[h] / sizes[h]] * allocation[h])
    return DocumentSample(tuple(docs), tuple(where), np.asarray(probs, float),
                          {n: int(a) for n, a in zip(names, allocation)},
                          {n: int(s) for n, s in zip(names, sizes)})

"""A fixed TREC-style world for the ``assay stratified`` golden case (written afresh by each run).

Two topics over one collection of 3,000 documents: two runs, fallible qrels (3% false positives,
10% false negatives, 1% unassessable) and true qrels, all from one seeded numpy Generator, written
as plain text so that the same seed always gives the same bytes.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

TOPICS = ("101", "102")
DOCUMENTS = 3000
SEED = 20261122


def write_world(folder: Path, topics: tuple[str, ...] = TOPICS, n_docs: int = DOCUMENTS,
                seed: int = SEED) -> None:
    """Write docs.txt, runA.txt, runB.txt, qrels.txt (fallible) and truth.txt into ``folder``."""
    rng = np.random.default_rng(seed)
    docs = [f"D{i:05d}" for i in range(n_docs)]
    runs: dict[str, list[str]] = {"A": [], "B": []}
    fallible: list[str] = []
    true: list[str] = []
    for t in topics:
        rel = rng.random(n_docs) < 0.05
        returned = {"A": rng.random(n_docs) < np.where(rel, 0.7, 0.02),
                    "B": rng.random(n_docs) < np.where(rel, 0.5, 0.01)}
        for name, mask in returned.items():
            for r, i in enumerate(np.flatnonzero(mask)):
                runs[name].append(f"{t} Q0 {docs[i]} {r + 1} {1 / (r + 1):.5f} {name}")
        fal = np.where(rel, rng.random(n_docs) > 0.1, rng.random(n_docs) < 0.03).astype(int)
        fal[rng.random(n_docs) < 0.01] = -1
        fallible += [f"{t} 0 {docs[i]} {fal[i]}" for i in range(n_docs)]
        true += [f"{t} 0 {docs[i]} {int(rel[i])}" for i in range(n_docs)]
    files = {"docs.txt": docs, "runA.txt": runs["A"], "runB.txt": runs["B"],
             "qrels.txt": fallible, "truth.txt": true}
    for name, lines in files.items():
        (folder / name).write_bytes(("\n".join(lines) + "\n").encode("ascii"))

"""Several assessors per item: aggregation to one fallible label, and agreement.

The aggregated label is the *fallible* assessment fed to the estimators and to double
sampling; the authority (a person, or a panel) supplies the true labels. Nothing here assumes
the fallible assessors are people: an automatic (LLM) judge is just another worker.

* Majority vote, ties broken by a user-seeded generator or a fixed rule.
* Dawid & Skene (1979) EM, through crowd-kit (``crowdkit.aggregation.DawidSkene``); the
  per-worker confusion matrices give each worker's false-positive / false-negative rates.
* Fleiss' κ (Fleiss 1971): κ = (P̄ − P̄_e)/(1 − P̄_e), P_i = (Σ_j n_ij² − m_i)/(m_i(m_i − 1)),
  P̄_e = Σ_j p_j², averaging P_i over items with m_i ≥ 2 raters (variable m_i allowed).
* Krippendorff's α, nominal (Krippendorff 2011): α = 1 − (n − 1)·Σ_{c≠k} o_ck / Σ_{c≠k} n_c n_k,
  o_ck the coincidence matrix Σ_u (pairs c–k in unit u)/(m_u − 1).
Labels are 0/1; votes of −1 (unassessable) are not counted, and an item with no 0/1 vote
aggregates to −1 (kept and reported as unassessable downstream, not dropped).
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from assay.core.vote import Tie, majority

__all__ = ["Aggregate", "majority_vote", "dawid_skene", "fleiss_kappa", "krippendorff_alpha"]


@dataclass(frozen=True)
class Aggregate:
    """Aggregated labels per item, with optional per-worker error rates."""
    items: tuple[str, ...]
    labels: np.ndarray
    method: str
    worker_fpr: dict[str, float] | None = None
    worker_fnr: dict[str, float] | None = None

    def to_dict(self) -> dict:
        return {"items": list(self.items), "labels": self.labels.tolist(), "method": self.method,
                "worker_fpr": self.worker_fpr, "worker_fnr": self.worker_fnr}

    def as_dict(self) -> dict[str, int]:
        return dict(zip(self.items, self.labels.tolist()))


def _validate(items, workers, labels):
    items = np.asarray(items, dtype=object).astype(str)
    workers = np.asarray(workers, dtype=object).astype(str)
    labels = np.asarray(labels, np.int64)
    if not (len(items) == len(workers) == len(labels)):
        raise ValueError("items, workers and labels must have the same length")
    if np.any(~np.isin(labels, (-1, 0, 1))):
        raise ValueError("labels must be -1, 0 or 1")
    return items, workers, labels


def majority_vote(items: Sequence[str], workers: Sequence[str], labels: Sequence[int], *,
                  rng: np.random.Generator | None = None, tie: int | None = None) -> Aggregate:
    """Majority of the 0/1 votes per item; ties go to ``tie`` (0 or 1) or, if None, to a fair
    coin from the user-seeded ``rng`` (an error if a tie occurs without either)."""
    items, workers, labels = _validate(items, workers, labels)
    names, inv = np.unique(items, return_inverse=True)
    ones = np.bincount(inv, weights=(labels == 1), minlength=len(names))
    zeros = np.bincount(inv, weights=(labels == 0), minlength=len(names))
    ties = (ones == zeros) & (ones > 0)
    if ties.any() and tie is None and rng is None:
        raise ValueError(f"{int(ties.sum())} tied item(s): pass tie=0/1 or a seeded rng")
    rule = Tie.RANDOM if tie is None else (Tie.ONE if int(tie) == 1 else Tie.ZERO)
    out = majority(ones, zeros, tie=rule, rng=rng)
    return Aggregate(tuple(names.tolist()), out, "majority_vote")


def dawid_skene(items: Sequence[str], workers: Sequence[str], labels: Sequence[int], *,
                n_iter: int = 100, tol: float = 1e-5) -> Aggregate:
    """Dawid–Skene EM aggregation through crowd-kit; also returns per-worker error rates
    (θ_w = P(vote 1 | true 0), φ_w = P(vote 0 | true 1)) from its confusion matrices."""
    import pandas as pd
    from crowdkit.aggregation import DawidSkene

    items, workers, labels = _validate(items, workers, labels)
    keep = labels >= 0
    df = pd.DataFrame({"task": items[keep], "worker": workers[keep], "label": labels[keep]})
    names = np.unique(items)
    out = np.full(len(names), -1, np.int64)
    fpr: dict[str, float] = {}
    fnr: dict[str, float] = {}
    if len(df):
        ds = DawidSkene(n_iter=n_iter, tol=tol)
        with warnings.catch_warnings():      # crowd-kit's own pandas deprecations
            warnings.simplefilter("ignore", DeprecationWarning)
            warnings.simplefilter("ignore", FutureWarning)
            pred = ds.fit_predict(df)
        pos = {t: i for i, t in enumerate(names)}
        for t, v in pred.items():
            out[pos[str(t)]] = int(v)
        err = ds.errors_          # index (worker, observed label), columns true label
        for w in sorted(set(df["worker"])):
            sub = err.loc[w]
            fpr[w] = float(sub.loc[1, 0]) if (1 in sub.index and 0 in sub.columns) else 0.0
            fnr[w] = float(sub.loc[0, 1]) if (0 in sub.index and 1 in sub.columns) else 0.0
    return Aggregate(tuple(names.tolist()), out, "dawid_skene", fpr, fnr)


def _counts(items, labels) -> np.ndarray:
    """Item × category (0, 1) vote counts, −1 votes left out."""
    keep = labels >= 0
    names, inv = np.unique(items[keep], return_inverse=True)
    table = np.zeros((len(names), 2))
    np.add.at(table, (inv, labels[keep]), 1)
    return table


def _multi_vote_counts(items: Sequence[str], workers: Sequence[str], labels: Sequence[int],
                       measure: str) -> tuple[np.ndarray, np.ndarray]:
    """Vote counts per item and class, and votes per item, for items with at least two votes."""
    items, workers, labels = _validate(items, workers, labels)
    n = _counts(items, labels)
    m = n.sum(axis=1)
    if not (m >= 2).any():
        raise ValueError(f"{measure} needs items with at least two votes")
    return n[m >= 2], m[m >= 2]


def fleiss_kappa(items: Sequence[str], workers: Sequence[str], labels: Sequence[int]) -> float:
    """Fleiss' κ (formula in the module docstring); items with fewer than two votes ignored."""
    n, m = _multi_vote_counts(items, workers, labels, "Fleiss' kappa")
    P_i = ((n ** 2).sum(axis=1) - m) / (m * (m - 1))
    p_j = n.sum(axis=0) / m.sum()
    P_e = (p_j ** 2).sum()
    if P_e >= 1:
        return 1.0
    return float((P_i.mean() - P_e) / (1 - P_e))


def krippendorff_alpha(items: Sequence[str], workers: Sequence[str],
                       labels: Sequence[int]) -> float:
    """Krippendorff's α for nominal data (formula in the module docstring)."""
    n_uc, m = _multi_vote_counts(items, workers, labels, "Krippendorff's alpha")
    # coincidences o_ck = Σ_u n_uc (n_uk − [c = k]) / (m_u − 1)
    o = np.einsum("uc,uk,u->ck", n_uc, n_uc, 1 / (m - 1)) - np.diag((n_uc.T / (m - 1)).sum(axis=1))
    n_c = o.sum(axis=1)
    n = n_c.sum()
    off = ~np.eye(2, dtype=bool)
    d_e = (np.outer(n_c, n_c)[off]).sum()
    if d_e == 0:
        return 1.0
    return float(1 - (n - 1) * o[off].sum() / d_e)

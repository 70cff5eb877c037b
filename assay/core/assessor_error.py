"""Assessor error model of seed 004 §3: false-positive rate θ, false-negative rate φ.

With true proportion relevant p (q = 1 − p) in a stratum, the proportion assessed relevant is

    π = p(1 − φ) + qθ                                   (seed eq. 6)

and the naive estimate (the assessed proportion) has bias

    bias = π − p = qθ − pφ                               (seed eq. 7).

MSEs for a sample of n (seed eqs. 9–10): MSE(p̂_T) = pq/n without error, and
MSE(p̂_F) = π(1 − π)/n + (π − p)² with it. Bias *dominates* sampling error when it exceeds twice
the standard deviation of the naive estimator (the expected value then lies outside its 95%
interval, seed §3 and Fig. 3), i.e. beyond

    n* = 4π(1 − π)/(π − p)²   (with a finite stratum of M documents: 1/n* = (π−p)²/(4π(1−π)) + 1/M).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

__all__ = ["assessed_proportion", "naive_bias", "mse_true", "mse_fallible",
           "bias_dominance_sample_size", "StratumError", "ErrorEffect", "error_effect",
           "TABLE2"]


def assessed_proportion(p, fpr, fnr):
    """π = p(1 − φ) + (1 − p)θ (seed eq. 6).

    >>> round(float(assessed_proportion(0.1, 0.05, 0.2)), 4)
    0.125
    """
    p, fpr, fnr = (np.asarray(v, float) for v in (p, fpr, fnr))
    return p * (1 - fnr) + (1 - p) * fpr


def naive_bias(p, fpr, fnr):
    """Bias of the assessed proportion as an estimate of p: (1 − p)θ − pφ (seed eq. 7).

    >>> round(float(naive_bias(0.1, 0.05, 0.2)), 4)
    0.025
    """
    return assessed_proportion(p, fpr, fnr) - np.asarray(p, float)


def mse_true(p, n):
    """MSE of the sample proportion without assessor error, pq/n (seed eq. 9).

    >>> round(float(mse_true(0.1, 100)), 6)
    0.0009
    """
    p = np.asarray(p, float)
    return p * (1 - p) / np.asarray(n, float)


def mse_fallible(p, fpr, fnr, n):
    """MSE of the assessed proportion, π(1 − π)/n + (π − p)² (seed eq. 10).

    >>> round(float(mse_fallible(0.1, 0.05, 0.2, 100)), 6)
    0.001719
    """
    pi = assessed_proportion(p, fpr, fnr)
    return pi * (1 - pi) / np.asarray(n, float) + (pi - np.asarray(p, float)) ** 2


def bias_dominance_sample_size(p, fpr, fnr=0.0, *, factor: float = 2.0, population=None):
    """The sample size n* beyond which |bias| > ``factor`` × SD of the naive estimator.

    n* = factor²·π(1 − π)/(π − p)²; with a stratum of M documents (finite-population
    correction on the SD) 1/n* = (π − p)²/(factor²·π(1 − π)) + 1/M, and n* = M means bias never
    dominates. Returns inf where the bias is zero. Vectorised (seed 004 §3, Fig. 3).

    >>> round(float(bias_dominance_sample_size(0.1, 0.05, 0.2)))
    700
    """
    pi = assessed_proportion(p, fpr, fnr)
    b2 = (pi - np.asarray(p, float)) ** 2
    v = factor ** 2 * pi * (1 - pi)
    with np.errstate(divide="ignore", invalid="ignore"):
        inv = np.where(v > 0, b2 / np.where(v > 0, v, 1), np.inf)
        if population is not None:
            inv = inv + 1.0 / np.asarray(population, float)
        out = np.where(inv > 0, 1.0 / np.where(inv > 0, inv, 1), np.inf)
    return out[()] if np.ndim(out) == 0 else out


@dataclass(frozen=True)
class StratumError:
    """One stratum of an error-effect calculation: size, true p, θ, φ, which runs return it."""
    name: str
    size: float
    p: float
    fpr: float
    fnr: float
    returned_by: tuple[str, ...]

    def to_dict(self) -> dict:
        return {"name": self.name, "size": self.size, "p": self.p, "fpr": self.fpr,
                "fnr": self.fnr, "returned_by": list(self.returned_by)}


@dataclass(frozen=True)
class ErrorEffect:
    """True and error-affected yields per stratum and recall per run (seed 004 Table 2)."""
    true_yield: dict[str, float]
    assessed_yield: dict[str, float]
    assessed_proportion: dict[str, float]
    true_recall: dict[str, float]
    assessed_recall: dict[str, float]
    assessed_recall_true_bottom: dict[str, float]

    def to_dict(self) -> dict:
        return {k: dict(v) for k, v in self.__dict__.items()}


def error_effect(strata: Sequence[StratumError], runs: Sequence[str]) -> ErrorEffect:
    """Yields ρ_l = |l|·p_l and ρ̂_l = |l|·π_l, recall of each run under both, and recall with
    the errors everywhere but the bottom stratum (the stratum no run returns).

    >>> eff = error_effect(TABLE2, ("B", "K"))
    >>> sorted(eff.to_dict())[:2]
    ['assessed_proportion', 'assessed_recall']
    """
    rho = {s.name: s.size * s.p for s in strata}
    pis = {s.name: float(assessed_proportion(s.p, s.fpr, s.fnr)) for s in strata}
    rho_hat = {s.name: s.size * pis[s.name] for s in strata}
    bottom = {s.name for s in strata if not s.returned_by}
    mixed = {n: (rho[n] if n in bottom else rho_hat[n]) for n in rho}

    def recall(y: dict[str, float]) -> dict[str, float]:
        tot = sum(y.values())
        return {r: sum(y[s.name] for s in strata if r in s.returned_by) / tot for r in runs}

    return ErrorEffect(rho, rho_hat, pis, recall(rho), recall(rho_hat), recall(mixed))


#: Seed 004 Table 2 (Topic 202, teams B and K). Sizes are |l| = ρ̂_l/π_l from the table's
#: assessed yields (the printed sizes are rounded to two digits); p_l = ρ_l/|l| from its yields.
TABLE2 = (
    StratumError("b1k1", 1688.0, 1569 / 1688.0, 0.100, 0.15, ("B", "K")),
    StratumError("b1k0", 1724.0, 427 / 1724.0, 0.250, 0.10, ("B",)),
    StratumError("b0k1", 1310.0, 929 / 1310.0, 0.100, 0.50, ("K",)),
    StratumError("b0k0", 564315.0, 965 / 564315.0, 0.015, 0.25, ()),
)

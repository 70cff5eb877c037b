"""Estimates of a run: precision, recall and F1 from its draws and labels.

The one place where the sampling loop hands its draws to the estimators of :mod:`assay.core`.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from assay.core.estimators import MEASURES, Estimate, f_measure

if TYPE_CHECKING:
    from assay.designs import Design
    from assay.evaluation import Collected


def estimate_all(design: "Design", collected: "Collected", predictions: np.ndarray,
                 confidence: float, alphas: dict[str, float] | None = None,
                 interval: str = "auto") -> dict[str, Estimate]:
    """Precision, recall and F1 (or the measures given) from the draws so far."""
    alphas = alphas or MEASURES
    labels = np.asarray(collected.labels, dtype=np.int8)
    idx = np.fromiter((d.index for d in collected.draws), np.int64, len(collected.draws))
    pred = predictions[idx]
    sample = design.sample(collected.draws, labels)
    items = np.fromiter(collected.labelled.keys(), np.int64, len(collected.labelled))
    ilab = np.fromiter(collected.labelled.values(), np.int64, len(collected.labelled))
    ipred = predictions[items] if items.size else np.zeros(0)
    out = {}
    n_tp = int(np.count_nonzero(ipred * ilab > 0))
    for name, a in alphas.items():
        n_dom = int(np.count_nonzero(a * ipred + (1 - a) * ilab > 0))
        out[name] = f_measure(sample, labels, pred, a, confidence, name, interval, n_dom, n_tp)
    return out

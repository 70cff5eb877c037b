"""The false negatives' counts interval (assay.core.stratified_counts) where their strata are
labelled at large fractions f = n/N. Their events are read at Kish's effective count with the
finite-population weight, k* = (Σwc)²/Σw²(1 − f)c; the same weight undercovered for the false
positives (session 24: restaurant's precision at f ≈ ½). For the false negatives a large f
makes k* = (events seen)/(1 − f) large, and at ten or more the counts' interval steps aside for
the one it replaces (Clopper–Pearson at n*). Shapes: a census of 60 true positives, two small
strata of predicted negatives labelled at f = 0.5–0.9 holding 1–3 false negatives each, a
quiet tail of 5,000 labelled 100 times. Seeded simulation (seed 11), 1,000 samples per shape."""
from __future__ import annotations

import math

import numpy as np
import pytest

import assay.core.stratified_counts as sc
from assay.core.measures import f_measures
from assay.core.totals import StratifiedSample

TP = 60
SHAPES = {       # sizes, labelled, false negatives per stratum (stratum 0: the census)
    "f=0.75/0.8, 2+1": ([TP, 40, 60, 5000], [TP, 30, 48, 100], [0, 2, 1, 0]),
    "f=0.75/0.875, 2+2": ([TP, 80, 80, 5000], [TP, 60, 70, 100], [0, 2, 2, 0]),
    "f=0.5/0.75, 3+2": ([TP, 200, 400, 5000], [TP, 100, 300, 100], [0, 3, 2, 0]),
    "f=0.9/0.8, 1+2": ([TP, 20, 30, 5000], [TP, 18, 24, 100], [0, 1, 2, 0]),
}


def _draw(rng: np.random.Generator, sizes: list[int], labelled: list[int], fn: list[int]
          ) -> tuple[StratifiedSample, np.ndarray, np.ndarray]:
    stratum, lab, pred = [], [], []
    for h, (size, n) in enumerate(zip(sizes, labelled)):
        kinds = np.zeros(size, dtype=np.int64)          # 0 TN, 1 FN, 2 TP
        kinds[:fn[h]] = 1
        if h == 0:
            kinds[:] = 2
        got = rng.choice(kinds, size=n, replace=False)
        stratum.append(np.full(n, h))
        lab.append((got >= 1).astype(np.int8))
        pred.append((got == 2).astype(np.int8))
    return (StratifiedSample(stratum=np.concatenate(stratum), sizes=np.array(sizes)),
            np.concatenate(lab), np.concatenate(pred))


def test_many_events_at_large_f_leave_it_to_clopper_pearson() -> None:
    """4 false negatives seen at f = 0.75: k* = 4/(1 − 0.75) = 16 ≥ 10, so the counts'
    interval does not apply, and recall's interval is Clopper–Pearson's at n*."""
    sizes, labelled = [TP, 40, 5000], [TP, 30, 100]
    s = StratifiedSample(stratum=np.repeat([0, 1, 2], labelled), sizes=np.array(sizes))
    lab = np.r_[np.ones(TP), np.ones(4), np.zeros(26), np.zeros(100)]
    pred = np.r_[np.ones(TP), np.zeros(130)]
    w, free, partial, _ = sc._draw_parts(s)
    s1, s2 = sc._moments(w, free, lab * (1 - pred), partial)
    assert s1 * s1 / s2 == pytest.approx(16.0)
    assert sc.sparse_false_negative_interval(s, lab, pred, 0.0, 0.95) is None
    e = f_measures(s, lab, pred, 0.0)[0]
    assert e.method == "exact" and e.ci_low < e.estimate < e.ci_high


@pytest.mark.slow
@pytest.mark.parametrize("alpha", [0.0, 0.5])
@pytest.mark.parametrize("shape", list(SHAPES))
def test_recall_and_f1_cover_with_false_negatives_at_large_f(shape: str, alpha: float) -> None:
    """Coverage ≥ 95% − 3 binomial SE (0.929) over 1,000 samples. Measured (recall / F1):
    1.000 / 1.000, 0.996 / 0.996, 0.996 / 1.000, 1.000 / 1.000; the counts' interval took
    511, 28, 923 and 33 of the 1,000 samples (the rest: Clopper–Pearson at n*)."""
    sizes, labelled, fn = SHAPES[shape]
    rng = np.random.default_rng(11)
    truth = TP / (TP + (1 - alpha) * sum(fn))
    reps, hit, counted = 1000, 0, 0
    for _ in range(reps):
        e = f_measures(*_draw(rng, sizes, labelled, fn), alpha)[0]
        hit += e.ci_low <= truth <= e.ci_high
        counted += e.method == "counts"
    assert hit / reps >= 0.95 - 3 * math.sqrt(0.95 * 0.05 / reps), (hit, counted)

"""The false negatives' counts interval (assay.core.stratified_counts) where their strata are
labelled at large fractions f = n/N. Their events are read at Kish's effective count with the
finite-population weight, k* = (Σwc)²/Σw²(1 − f)c; the same weight undercovered for the false
positives (session 24: restaurant's precision at f ≈ ½). For the false negatives a large f
makes k* = (events seen)/(1 − f) large, and at ten or more the counts' interval steps aside for
the one it replaces (Clopper–Pearson at n*), joined with it after a model the labels
contradict (session 28). Shapes: a census of 60 true positives, two small
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


def _four_at_large_f() -> tuple[StratifiedSample, np.ndarray, np.ndarray]:
    """A census of the true positives, 4 false negatives in 30 of 40 (f = 0.75), a quiet tail
    of 5,000 labelled 100 times."""
    s = StratifiedSample(stratum=np.repeat([0, 1, 2], [TP, 30, 100]),
                         sizes=np.array([TP, 40, 5000]))
    lab = np.r_[np.ones(TP), np.ones(4), np.zeros(26), np.zeros(100)]
    pred = np.r_[np.ones(TP), np.zeros(130)]
    return s, lab, pred


def test_many_events_at_large_f_join_clopper_pearson_with_the_allowance() -> None:
    """4 false negatives seen at f = 0.75: k* = 4/(1 − 0.75) = 16 ≥ 10, so the counts'
    interval alone does not apply: recall's interval is Clopper–Pearson's at n*, and after a
    model the labels contradict, its union with the counts' interval with the neighbours'
    allowance (session 28: the quiet tail, 0 of 100 labelled next to 4 of 30, may hold
    4,900·½/101 ≈ 24.3 false negatives)."""
    s, lab, pred = _four_at_large_f()
    w, free, partial, _ = sc._draw_parts(s)
    s1, s2 = sc._moments(w, free, lab * (1 - pred), partial)
    assert s1 * s1 / s2 == pytest.approx(16.0)
    assert sc.sparse_false_negative_interval(s, lab, pred, 0.0, 0.95) is None
    many = sc.sparse_false_negative_interval(s, lab, pred, 0.0, 0.95, many=True)
    assert many is not None
    cp = f_measures(s, lab, pred, 0.0)[0]            # a stratified sample: Clopper–Pearson
    assert cp.method == "exact" and 0.8 < cp.ci_low < cp.estimate < cp.ci_high   # [0.822, 0.972]
    e = f_measures(s, lab, pred, 0.0, contradicted=True)[0]   # auto's fallback: the union
    assert e.method == "counts" and e.ci_low == many[0] < cp.ci_low
    assert e.ci_high == max(cp.ci_high, many[1])


@pytest.mark.slow
@pytest.mark.parametrize("alpha", [0.0, 0.5])
@pytest.mark.parametrize("shape", list(SHAPES))
def test_recall_and_f1_cover_with_false_negatives_at_large_f(shape: str, alpha: float) -> None:
    """Coverage ≥ 95% − 3 binomial SE (0.929) over 1,000 samples. Measured (recall / F1):
    1.000 / 1.000, 0.996 / 0.996, 0.996 / 1.000, 1.000 / 1.000; the counts' interval took
    511, 28, 923 and 33 of the 1,000 samples (the rest: Clopper–Pearson at n*). Session 28,
    its union with Clopper–Pearson's wherever k* ≥ 10 (as after a contradicted model):
    the same coverage, the counts' interval in 989, 1,000, 996 and 966 samples, recall
    half-width 0.10 → 0.16, 0.07 → 0.19, 0.16 → 0.17, 0.07 → 0.18 (the quiet tail's
    allowance)."""
    sizes, labelled, fn = SHAPES[shape]
    rng = np.random.default_rng(11)
    truth = TP / (TP + (1 - alpha) * sum(fn))
    reps, hit, counted = 1000, 0, 0
    for _ in range(reps):
        e = f_measures(*_draw(rng, sizes, labelled, fn), alpha)[0]
        hit += e.ci_low <= truth <= e.ci_high
        counted += e.method == "counts"
    assert hit / reps >= 0.95 - 3 * math.sqrt(0.95 * 0.05 / reps), (hit, counted)


def test_a_contradicted_model_hands_the_union_to_its_fallback() -> None:
    """`f_measure` with a rank model whose local check fails (the labels hold more matches than
    it allows) falls back to the design-based interval with ``contradicted``: the union of the
    sample above; with a model that fits, the model's own interval stands."""
    from types import SimpleNamespace

    from assay.core.measures import LOCAL_LEVEL, f_measure
    s, lab, pred = _four_at_large_f()

    def model(local_p: float) -> SimpleNamespace:
        fit = SimpleNamespace(p_value=0.5, local_p=local_p, local_stratum=1, deviance=1.0, df=1)
        res = SimpleNamespace(estimate=0.9, ci_low=0.88, ci_high=0.92, std_error=0.01, fit=fit)
        return SimpleNamespace(predictive=lambda alpha, confidence: res)
    fell = f_measure(s, lab, pred, 0.0, model=model(LOCAL_LEVEL / 10))
    assert fell.method == "counts" and fell.ci_low < 0.7       # Clopper–Pearson: 0.822
    assert fell.extra["model_interval"] == (0.88, 0.92)
    kept = f_measure(s, lab, pred, 0.0, model=model(0.9))
    assert (kept.method, kept.ci_low, kept.ci_high) == ("model", 0.88, 0.92)

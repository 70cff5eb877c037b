"""Unit tests of the estimators against hand computations."""
from __future__ import annotations

import math

import numpy as np
import pytest

from assay.core.intervals import korn_graubard_interval, ratio_interval
from assay.core.measures import f_measure, true_f_measure
from assay.core.totals import StratifiedSample, WithReplacementSample


def test_hansen_hurwitz_total_and_variance():
    q = np.array([0.5, 0.25, 0.25])
    v = np.array([1.0, 0.0, 1.0])
    total, var = WithReplacementSample(q).total(v)
    t = v / q
    assert total == pytest.approx(t.mean())
    assert var == pytest.approx(t.var(ddof=1) / 3)


def test_stratified_total_with_fpc():
    # stratum 0: N=10, sample (1, 0); stratum 1: N=4 fully enumerated (1, 1, 0, 1)
    s = StratifiedSample(stratum=np.array([0, 0, 1, 1, 1, 1]), sizes=np.array([10, 4]))
    total, var = s.total(np.array([1, 0, 1, 1, 0, 1], dtype=float))
    assert total == pytest.approx(10 * 0.5 + 4 * 0.75)
    # only stratum 0 contributes: N² (1 − n/N) s² / n = 100 · 0.8 · 0.5 / 2
    assert var == pytest.approx(100 * 0.8 * 0.5 / 2)


def test_f_measure_census_is_exact():
    labels = np.array([1, 1, 0, 0, 1])
    preds = np.array([1, 0, 1, 0, 1])
    s = StratifiedSample(stratum=np.zeros(5, dtype=np.int64), sizes=np.array([5]))
    for alpha in (0.0, 0.5, 1.0, 0.3):
        e = f_measure(s, labels, preds, alpha)
        assert e.estimate == pytest.approx(true_f_measure(labels, preds, alpha))
        assert e.std_error == 0.0


def test_undefined_without_positive():
    s = StratifiedSample(stratum=np.zeros(4, dtype=np.int64), sizes=np.array([100]))
    e = f_measure(s, np.zeros(4), np.zeros(4), 0.0)
    assert not e.defined and e.ci_low is None and e.method == "undefined"
    assert "no true positive" in e.note
    assert e.to_dict() == {"estimate": None, "ci_low": None, "ci_high": None, "assumes": None,
                           "assumption_free": None}


def test_interval_choice():
    lo, hi, method, _ = ratio_interval(0.5, 0.0025, 100, 0.95)       # n_eff = 100
    assert method == "delta" and (lo, hi) == pytest.approx((0.5 - 1.959964 * 0.05,
                                                            0.5 + 1.959964 * 0.05))
    lo, hi, method, n_eff = ratio_interval(1.0, 0.0, 3, 0.95)        # few, at the bound
    assert method == "exact" and hi == 1.0 and n_eff == 3
    assert lo == pytest.approx(0.025 ** (1 / 3))                     # Clopper–Pearson x = n = 3


def test_korn_graubard_matches_clopper_pearson_for_integers():
    from scipy.stats import binomtest
    for x, n in ((0, 10), (3, 10), (10, 10), (7, 50)):
        lo, hi = korn_graubard_interval(x / n, n, 0.95)
        ci = binomtest(x, n).proportion_ci(method="exact")
        assert (lo, hi) == pytest.approx((ci.low, ci.high), abs=1e-9)


def test_confidence_level_changes_width():
    s = WithReplacementSample(q=np.full(400, 1 / 1000))
    rng = np.random.default_rng(0)
    lab = (rng.random(400) < 0.3).astype(float)
    pred = (rng.random(400) < 0.5).astype(float)
    e90 = f_measure(s, lab, pred, 0.5, 0.90)
    e99 = f_measure(s, lab, pred, 0.5, 0.99)
    assert e99.ci_high - e99.ci_low > e90.ci_high - e90.ci_low
    assert math.isclose(e90.estimate, e99.estimate)


def test_unseen_positive_bound_states_the_assumption():
    from assay.core.totals import unseen_positive_bound
    # stratum 0: census (4 of 4); stratum 1: 3 of 100 labelled, none positive; stratum 2: a
    # positive seen; stratum 3: never sampled (not counted: nothing was assumed from labels)
    s = StratifiedSample(stratum=np.array([0, 0, 0, 0, 1, 1, 1, 2, 2]),
                         sizes=np.array([4, 100, 50, 10]))
    labels = np.array([1, 0, 0, 0, 0, 0, 0, 1, 0])
    out = unseen_positive_bound(s, labels, 0.95)
    assert out["unseen_strata"] == 1 and out["unseen_items"] == 97
    assert out["unseen_positive_bound"] == pytest.approx(97 * (1 - 0.05 ** (1 / 3)))
    e = f_measure(s, labels, np.array([1, 1, 0, 0, 0, 0, 0, 1, 0]), 0.0)
    assert "1 strata (97 unlabelled items)" in e.note


def test_the_labels_win_over_the_model():
    """Issue 11: a model whose global fit passes but whose excess test fails in one stratum
    (labels show more matches than it allows) gives way to the design-based estimate, which
    keeps the model's interval beside it and says why; a census is exact without the model."""
    from assay.core.calibration import FitCheck
    from assay.core.predictive import PredictiveResult

    class Model:
        def __init__(self, local_p):
            self.local_p = local_p

        def predictive(self, alpha, confidence):
            return PredictiveResult(0.9, 0.85, 0.95, 9.0, 1.0,
                                    fit=FitCheck(3.0, 5, 0.7, self.local_p, 2))
    s = StratifiedSample(stratum=np.repeat([0, 1], 4), sizes=np.array([8, 40]))
    lab = np.array([1, 1, 0, 1, 0, 1, 1, 0])
    pred = np.array([1, 1, 1, 0, 0, 0, 0, 0])
    kept = f_measure(s, lab, pred, 0.0, model=Model(0.5))
    assert kept.method == "model" and kept.assumes and "rank model" in kept.assumes
    fell = f_measure(s, lab, pred, 0.0, model=Model(0.01))
    assert fell.method != "model" and "the labels win" in fell.note
    assert fell.extra["model_interval"] == (0.85, 0.95)
    census = f_measure(s, lab, pred, 1.0, model=Model(0.5), n_domain=3, n_success=2,
                       domain_size=3)
    assert census.method == "census" and census.estimate == 2 / 3 and census.assumes is None

"""The rank calibration, the predictive estimator and the (experimental) auto design: exactness,
reproducibility and budget accounting. Their coverage is a benchmark, not yet a claim."""
from __future__ import annotations

import numpy as np

from assay.calibration import RankGrid, fit_hinge_calibration, fit_rank_calibration
from assay.designs import build_design
from assay.evaluation import collect, estimate_all
from assay.estimators import true_f_measure
from assay.predictive import StratumCounts, predictive_f_measure


def test_calibration_recovers_a_power_law():
    rng = np.random.default_rng(0)
    ranks = rng.integers(1, 100_000, size=20_000).astype(float)
    p = 1 / (1 + np.exp(-(4.0 - 1.2 * np.log(ranks))))
    y = (rng.random(ranks.size) < p).astype(float)
    cal = fit_rank_calibration(ranks, y)
    se = np.sqrt(np.diag(cal.cov))
    assert np.all(np.abs(cal.theta - [4.0, -1.2]) < 3 * se)


def test_hinge_finds_the_knee():
    rng = np.random.default_rng(1)
    ranks = np.arange(1, 50_001, dtype=float)
    lr = np.log(ranks)
    p = 1 / (1 + np.exp(-(1.0 - 1.5 * np.maximum(lr - np.log(100), 0))))
    y = (rng.random(ranks.size) < p).astype(float)
    cal = fit_hinge_calibration(ranks, y, np.log([25.0, 50.0, 100.0, 200.0, 400.0]))
    assert cal.knee == np.log(100.0)


def test_predictive_is_exact_on_a_census():
    bounds = np.array([0, 4, 8])
    counts = StratumCounts(bounds=bounds, pp=np.array([3, 0]), lab1=np.array([3, 0]),
                           lab0=np.array([1, 4]), tp=np.array([2, 0]), fn=np.array([1, 1]))
    cal = fit_rank_calibration(np.arange(1, 9.0), np.array([1, 1, 0, 1, 0, 1, 0, 0.0]))
    grid = RankGrid.build(bounds, cum_pred=np.array([0, 1, 2, 3, 3, 3, 3, 3, 3]))
    res = predictive_f_measure(counts, cal, grid, 0.5, 0.95)
    f1 = 2 * 2 / (2 * 2 + 1 + 2)      # TP 2, FP 1, FN 2
    assert res.estimate == res.ci_low == res.ci_high == f1


def test_auto_design_budget_census_and_reproducibility():
    rng = np.random.default_rng(3)
    n = 30_000
    score = rng.normal(size=n)
    truth = (rng.random(n) < 1 / (1 + np.exp(-(4 * score - 9)))).astype(np.int8)
    pred = (score > 2.2).astype(np.int8)

    def run(seed):
        des = build_design("auto", n=n, predictions=pred, score=score, prior=None, budget=400,
                           rng=np.random.default_rng(seed))
        col = collect(des, lambda i: int(truth[i]), 400)
        return des, col, estimate_all(des, col, pred, 0.95)

    des, col, est = run(5)
    assert col.distinct == 400 == len(col.draws)               # without replacement
    assert des.n_h[0] == des.strata.sizes[0]                    # the top stratum in full
    assert all(e.defined and e.ci_low <= e.estimate <= e.ci_high for e in est.values())
    assert est["f1"].method == "model" and "design_interval" in est["f1"].extra
    assert abs(est["f1"].estimate - true_f_measure(truth, pred, 0.5)) < 0.25
    _, col2, est2 = run(5)
    assert [d.index for d in col.draws] == [d.index for d in col2.draws]
    assert est2["f1"].estimate == est["f1"].estimate

"""Assessor error model (seed 004 §3) and the worked example of its Table 2."""
import numpy as np
import pytest

from assay.core.assessor_error import (TABLE2, assessed_proportion,
                                             bias_dominance_sample_size, error_effect,
                                             mse_fallible, mse_true, naive_bias)


def test_table2_worked_example():
    """Seed 004 Table 2: true recall 0.51 / 0.64; with errors outside the bottom stratum
    0.58 / 0.52 (ordering reversed); with the bottom stratum's one-in-sixty false positives
    0.18 / 0.16. Yields and assessed yields as printed (the table's rounding: within 0.5%)."""
    e = error_effect(TABLE2, ("B", "K"))
    assert {k: round(v, 2) for k, v in e.true_recall.items()} == {"B": 0.51, "K": 0.64}
    assert {k: round(v, 2) for k, v in e.assessed_recall_true_bottom.items()} == \
        {"B": 0.58, "K": 0.52}
    assert {k: round(v, 2) for k, v in e.assessed_recall.items()} == {"B": 0.18, "K": 0.16}
    printed = {"b1k1": 1346, "b1k0": 711, "b0k1": 503, "b0k0": 9174}
    for name, value in printed.items():
        assert e.assessed_yield[name] == pytest.approx(value, rel=0.005)
    assert sum(e.true_yield.values()) == pytest.approx(3890)
    assert sum(e.assessed_yield.values()) == pytest.approx(11734, rel=0.001)
    printed_pi = {"b1k1": 0.80, "b1k0": 0.41, "b0k1": 0.38, "b0k0": 0.016}
    for name, value in printed_pi.items():
        assert round(e.assessed_proportion[name], 3 if value < 0.1 else 2) == value
    # the score ratio is the same with and without the bottom-stratum error
    r1 = e.assessed_recall["B"] / e.assessed_recall["K"]
    r2 = e.assessed_recall_true_bottom["B"] / e.assessed_recall_true_bottom["K"]
    assert r1 == pytest.approx(r2)


def test_bias_formula_and_seed_examples():
    # eq. 6 and 7: π = p(1−φ) + qθ, bias = qθ − pφ
    assert assessed_proportion(0.3, 0.1, 0.2) == pytest.approx(0.3 * 0.8 + 0.7 * 0.1)
    assert naive_bias(0.3, 0.1, 0.2) == pytest.approx(0.7 * 0.1 - 0.3 * 0.2)
    # §3: p = 0.01, θ = φ = 0.05 overstates p about five-fold (seed prints π 0.049 / bias
    # 0.039; eq. 6 gives π = 0.059, bias = 0.049 — the seed's arithmetic slip, see docs)
    assert assessed_proportion(0.01, 0.05, 0.05) == pytest.approx(0.059)
    assert naive_bias(0.01, 0.05, 0.05) == pytest.approx(0.049)
    # Fig. 3: p = 0.001, θ = 0.01 -> bias dominates beyond "a few hundred" assessments
    assert 300 < bias_dominance_sample_size(0.001, 0.01) < 500
    assert bias_dominance_sample_size(0.2, 0.0, 0.0) == np.inf
    # a finite stratum: n* never exceeds M
    assert bias_dominance_sample_size(0.1, 0.001, population=1000) < 1000


def test_bias_dominance_threshold_simulation():
    """At n = n*(p=.005, θ=.02), the naive estimator's SD equals half its bias: 20,000 seeded
    binomial repetitions (MC SD has relative SE ≈ 0.5%); asserted within 3%. At 4·n* the 95%
    interval of the naive estimate covers the true p in under 5% of repetitions."""
    p, th = 0.005, 0.02
    n_star = int(round(bias_dominance_sample_size(p, th)))
    pi = float(assessed_proportion(p, th, 0.0))
    rng = np.random.default_rng(3)
    est = rng.binomial(n_star, pi, size=20000) / n_star
    assert est.std() == pytest.approx(naive_bias(p, th, 0.0) / 2, rel=0.03)
    # MSE formula (eq. 10) against Monte Carlo
    assert np.mean((est - p) ** 2) == pytest.approx(mse_fallible(p, th, 0.0, n_star), rel=0.03)
    big = 4 * n_star
    est = rng.binomial(big, pi, size=20000) / big
    se = np.sqrt(est * (1 - est) / big)
    assert np.mean(np.abs(est - p) <= 1.96 * se) < 0.05
    assert mse_true(0.5, 100) == pytest.approx(0.0025)

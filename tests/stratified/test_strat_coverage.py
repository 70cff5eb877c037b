"""Must-show simulations (issue 5): naive CIs collapse under a few percent of assessor error in a
large bottom stratum; double sampling restores coverage. All seeded and vectorised."""
import numpy as np
import pytest
from scipy.stats import norm

from assay.stratified import allocate_by_rule, allocate_adjudication, estimate_arrays
from assay.simulation import make_population, simulate_two_phase as simulate

PAT = np.array([[1, 1], [1, 0], [0, 1], [0, 0]], bool)
Z = norm.ppf(0.975)


def _population(p_bottom, seed):
    """100,000 documents: strata 11/10/01 (1,200/1,500/1,300) and a bottom stratum of 96,000;
    false-positive rates 3–5%, false-negative rates 5–10%, 1% unassessable."""
    rng = np.random.default_rng(seed)
    pop = make_population([1200, 1500, 1300, 96000], [0.85, 0.30, 0.55, p_bottom],
                          [0.03, 0.05, 0.03, 0.03], [0.05, 0.10, 0.10, 0.05], PAT, rng,
                          unassessable=0.01, run_ids=("A", "B"), strata=("11", "10", "01", "00"))
    return pop, rng


def _logit_cover(e, v, truth):
    lg = lambda x: np.log(x / (1 - x))  # noqa: E731
    return np.abs(lg(e) - lg(truth)) <= Z * np.sqrt(v) / (e * (1 - e))


def coverage_run(p_bottom, budget, adjudications, reps, seed, bottom_share=0.75):
    pop, rng = _population(p_bottom, seed)
    n = allocate_by_rule(pop.sizes, budget, "legal", bottom=3, bottom_share=bottom_share)
    sc = simulate(pop, n, adjudications, reps, rng,
                  allocate=lambda s: allocate_adjudication(s, adjudications, run=0))
    return pop.truth(), estimate_arrays(sc.naive()), estimate_arrays(sc)


def test_realistic_sizes_naive_collapses_double_sampling_covers():
    """100,000 documents, 1,500 assessments (bottom stratum capped at 75%: 1,108), 300
    adjudications allocated to minimise Var(recall of A); bottom stratum p = 0.02, θ = 0.03.
    5,000 seeded repetitions; tolerance 0.95 ± 0.0092 (3 binomial SDs, sqrt(.95·.05/5000)).
    Claims: the naive 95% recall CI covers the true recall in < 1% of repetitions (measured
    0.18% / 0.02%); the double-sampling 95% (logit) CI covers in 0.95 ± 0.0092 for both runs
    (measured 0.9436 / 0.9452); the delta-method variance of recall agrees with Monte Carlo
    within 10% (measured 0.96 / 0.93; the MC variance is heavy-tailed here, so fewer
    repetitions make this noisy); the yield is unbiased (within 3 MC standard errors). Recall,
    a ratio, carries a +1.3% relative bias at these sizes (not asserted; docs/stratified.md)."""
    reps = 5000
    truth, naive, ds = coverage_run(0.02, 1500, 300, reps, seed=4)
    nv_cov = _logit_cover(naive["recall"], naive["recall_var"], truth["recall"]).mean(axis=0)
    assert np.all(nv_cov < 0.01), nv_cov
    cov = _logit_cover(ds["recall"], ds["recall_var"], truth["recall"]).mean(axis=0)
    assert np.all(np.abs(cov - 0.95) <= 0.0092), cov
    ratio = ds["recall_var"].mean(axis=0) / ds["recall"].var(axis=0)
    assert np.all(np.abs(ratio - 1) <= 0.10), ratio
    y = ds["yield"]
    assert abs(y.mean() - truth["yield"]) <= 3 * y.std() / np.sqrt(reps)


def test_large_samples_all_metrics_calibrated():
    """Asymptotic regime (10,000 assessments, 3,000 adjudications; bottom p = 0.01), 2,000
    seeded repetitions. Claims: yield, recall, precision, F1 95% CIs cover in 0.95 ± 0.0146
    (3 binomial SDs at 2,000); delta-method variances within 10% of Monte Carlo; the yield
    unbiased within 3 MC SEs. Recall is a ratio of estimated totals, consistent with an O(1/n)
    bias: asserted below a tenth of its standard deviation (measured 0.0014, 0.3% relative,
    0.07 SD)."""
    reps = 2000
    truth, naive, ds = coverage_run(0.01, 10000, 3000, reps, seed=8, bottom_share=0.8)
    for m in ("recall", "precision", "f1"):
        e, v = ds[m], ds[m + "_var"]
        cov = _logit_cover(e, v, truth[m]).mean(axis=0)
        assert np.all(np.abs(cov - 0.95) <= 0.0146), (m, cov)
        ratio = v.mean(axis=0) / e.var(axis=0)
        assert np.all(np.abs(ratio - 1) <= 0.10), (m, ratio)
    e = ds["recall"]
    assert np.all(np.abs(e.mean(axis=0) - truth["recall"]) <= 0.1 * e.std(axis=0))
    y, v = ds["yield"], ds["yield_var"]
    assert abs(y.mean() - truth["yield"]) <= 3 * y.std() / np.sqrt(reps)
    assert abs((np.abs(y - truth["yield"]) <= Z * np.sqrt(v)).mean() - 0.95) <= 0.0146
    assert v.mean() / y.var() == pytest.approx(1, abs=0.10)
    assert np.all(_logit_cover(naive["recall"], naive["recall_var"], truth["recall"]).mean(0)
                  < 0.01)

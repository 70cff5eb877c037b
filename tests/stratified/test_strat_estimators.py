"""Stratified estimators of yield, recall, precision, F1 (seed 004 §2; Oard et al. 2008)."""
import numpy as np
import pytest
from scipy.stats import norm

from assay.stratified import (build_counts, estimate, estimate_arrays, mean_over_topics)
from assay.core.two_phase import interval
from assay.simulation import make_population, simulate_two_phase as simulate

PAT = np.array([[1, 1], [1, 0], [0, 1], [0, 0]], bool)


def _hand():
    """Four strata (patterns 11, 10, 01, 00), hand-made labels."""
    M = np.array([100, 200, 300, 10000])
    n = np.array([10, 20, 20, 50])
    r = np.array([8, 5, 10, 1])
    u = np.array([0, 1, 0, 2])                 # unassessable in the sample
    s, g, fal = [], [], []
    for l in range(4):
        labels = [1] * r[l] + [-1] * u[l] + [0] * (n[l] - r[l] - u[l])
        s += [l] * n[l]
        g += [l] * n[l]
        fal += labels
    return M, n, r, u, np.array(s), np.array(g), np.array(fal)


def test_point_estimates_by_hand():
    M, n, r, u, s, g, fal = _hand()
    sc = build_counts(M, PAT, s, g, fal, run_ids=("A", "B"), strata=("11", "10", "01", "00"))
    est = estimate(sc)
    Rl = M * r / n                                            # seed eq. 3
    assert est.yield_.estimate == pytest.approx(Rl.sum())    # seed eq. 1
    Nl = M * (n - u) / n                                      # assessable documents
    RA, RB = Rl[0] + Rl[1], Rl[0] + Rl[2]
    NA, NB = Nl[0] + Nl[1], Nl[0] + Nl[2]
    assert est.runs["A"]["recall"].estimate == pytest.approx(RA / Rl.sum())
    assert est.runs["B"]["precision"].estimate == pytest.approx(RB / NB)
    assert est.runs["A"]["f1"].estimate == pytest.approx(2 * RA / (NA + Rl.sum()))
    assert est.unassessable_share.estimate == pytest.approx((M * u / n).sum() / M.sum())
    assert [x["unassessable"] for x in est.strata] == u.tolist()


def test_variances_by_hand():
    """Var(R̂) = Σ M_l²(1 − n_l/M_l)s_l²/n_l; recall: Σ c_l² Var(R̂_l), c_l = (1[l∈A] − R)/R̂."""
    M, n, r, u, s, g, fal = _hand()
    sc = build_counts(M, PAT, s, g, fal, run_ids=("A", "B"))
    a = estimate_arrays(sc)
    p = r / n
    s2 = p * (1 - p) * n / (n - 1)
    var_l = M ** 2 * (1 - n / M) * s2 / n
    assert a["yield_var"] == pytest.approx(var_l.sum())
    Y = (M * r / n).sum()
    for k in range(2):
        c = (PAT[:, k] - a["recall"][k]) / Y
        assert a["recall_var"][k] == pytest.approx((c ** 2 * var_l).sum())


def test_without_adjudication_naive_and_double_sampling_agree():
    M, n, r, u, s, g, fal = _hand()
    true = np.full(len(fal), -2)
    sc = build_counts(M, PAT, s, g, fal, true, run_ids=("A", "B"))
    ds, nv = estimate(sc), estimate(sc.naive())
    assert ds.to_dict()["runs"] == nv.to_dict()["runs"]
    assert any("taken as true" in note for note in ds.notes)   # reported, not silent


def test_interval_methods():
    w = interval(0.5, 0.01, 0.95, method="wald")
    assert w.ci_low == pytest.approx(0.5 - norm.ppf(0.975) * 0.1)
    lg = interval(0.9, 0.0025, 0.95, method="logit")
    assert 0 < lg.ci_low < 0.9 < lg.ci_high < 1
    assert interval(1.0, 0.0, method="logit").ci_high == 1.0
    with pytest.raises(ValueError):
        interval(0.5, 0.1, 1.5)


def test_mean_over_topics():
    M, n, r, u, s, g, fal = _hand()
    t1 = estimate(build_counts(M, PAT, s, g, fal, run_ids=("A", "B")))
    t2 = estimate(build_counts(M, PAT, s, g, np.where(np.arange(len(fal)) < 3, 1, fal),
                               run_ids=("A", "B")))
    m = mean_over_topics([t1, t2])
    assert m.runs["A"]["recall"].estimate == pytest.approx(
        (t1.runs["A"]["recall"].estimate + t2.runs["A"]["recall"].estimate) / 2)
    assert m.runs["A"]["recall"].std_error == pytest.approx(
        np.hypot(t1.runs["A"]["recall"].std_error, t2.runs["A"]["recall"].std_error) / 2)


def test_stratified_estimators_without_assessor_error_simulation():
    """No assessor error, 2,000 seeded repetitions of a 4-stratum design (25,000 documents,
    1,600 assessments). Claims: the yield is unbiased (mean within 3 MC standard errors); the
    delta-method variances of yield, recall, precision and F1 agree with the Monte Carlo
    variance within 10%; 95% CIs (logit for ratios, Wald for yield) cover in 95% ± 1.5% of
    repetitions (3 binomial SDs for 2,000 repetitions: sqrt(.95·.05/2000) = 0.0049)."""
    rng = np.random.default_rng(2024)
    pop = make_population([1500, 2000, 1500, 20000], [0.8, 0.3, 0.5, 0.03], [0] * 4, [0] * 4,
                          PAT, rng, unassessable=0.02, run_ids=("A", "B"))
    reps = 2000
    sc = simulate(pop, [300, 300, 300, 700], None, reps, rng)
    a = estimate_arrays(sc)
    truth = pop.truth()
    z = norm.ppf(0.975)
    y = a["yield"]
    assert abs(y.mean() - truth["yield"]) <= 3 * y.std() / np.sqrt(reps)
    assert a["yield_var"].mean() / y.var() == pytest.approx(1, abs=0.10)
    cover = np.abs(y - truth["yield"]) <= z * np.sqrt(a["yield_var"])
    assert abs(cover.mean() - 0.95) <= 0.015
    for m in ("recall", "precision", "f1"):
        e, v = a[m], a[m + "_var"]
        ratio = v.mean(axis=0) / e.var(axis=0)
        assert np.all(np.abs(ratio - 1) <= 0.10), (m, ratio)
        lg = lambda x: np.log(x / (1 - x))  # noqa: E731
        cov = (np.abs(lg(e) - lg(truth[m])) <= z * np.sqrt(v) / (e * (1 - e))).mean(axis=0)
        assert np.all(np.abs(cov - 0.95) <= 0.015), (m, cov)
    u = a["unassessable"]
    assert abs(u.mean() - truth["unassessable"]) <= 3 * u.std() / np.sqrt(reps)


def test_user_strata_cutting_across_runs_by_hand():
    """Strata not aligned with the runs (domain estimation): point estimates and the
    linearised variance Σ_l M_l²(1 − n_l/M_l)s²_{u,l}/n_l, u_i = y_i(1[i∈A] − R)/R̂, by hand."""
    rng = np.random.default_rng(3)
    M = np.array([5000, 20000])
    n = np.array([60, 90])
    s = np.repeat([0, 1], n)
    pat = np.array([[0, 0], [1, 0], [0, 1], [1, 1]], bool)        # 4 return patterns
    g = rng.integers(0, 4, n.sum())
    y = (rng.random(n.sum()) < np.where(g > 0, 0.5, 0.1)).astype(int)
    sc = build_counts(M, pat, s, g, y, run_ids=("A", "B"), strata=("u", "v"))
    a = estimate_arrays(sc)
    inA = pat[g, 0]
    w = M[s] / n[s]
    Y = (w * y).sum()
    R = (w * y * inA).sum() / Y
    assert a["recall"][0] == pytest.approx(R)
    assert a["precision"][0] == pytest.approx((w * y * inA).sum() / (w * inA).sum())
    u = y * (inA - R) / Y
    var = sum(M[l] ** 2 * (1 - n[l] / M[l]) * u[s == l].var(ddof=1) / n[l] for l in range(2))
    assert a["recall_var"][0] == pytest.approx(var)
    nA = (w * inA).sum()
    P = a["precision"][0]
    up = (y - P) * inA / nA
    varp = sum(M[l] ** 2 * (1 - n[l] / M[l]) * up[s == l].var(ddof=1) / n[l] for l in range(2))
    assert a["precision_var"][0] == pytest.approx(varp)

"""Double sampling (Tenenbein 1970; seed 004 §4–5): MLEs, asymptotic variances, allocation,
appeals sub-strata."""
import numpy as np
import pytest
from scipy.stats import norm

from assay.stratified import (NOT_ADJUDICATED, allocate_adjudication, build_counts,
                              draw_adjudication, estimate, estimate_arrays, tenenbein,
                              tenenbein_variance)
from assay.core.assessor_error import mse_fallible
from assay.core.double_sampling import error_rates
from assay.core.two_phase import SampleCounts


def test_mle_formulas_by_hand():
    n11, n10, n01, n00, x, y = 40, 6, 5, 49, 310, 590
    t = tenenbein(n11, n10, n01, n00, x, y)
    N = 1000
    pi = (45 + 310) / N
    p = pi * 40 / 45 + (1 - pi) * 6 / 55
    assert t.pi == pytest.approx(pi)
    assert t.p == pytest.approx(p)
    assert t.fpr == pytest.approx(pi * (5 / 45) / (1 - p))
    assert t.fnr == pytest.approx((1 - pi) * (6 / 55) / p)
    # Var(p̂) in Tenenbein's closed form pq[(1−K)/n + K/N], K from the estimated parameters
    assert t.var_p == pytest.approx(tenenbein_variance(t.p, t.fpr, t.fnr, 100, N), rel=1e-9)
    # the conditional form uses the achieved n·1 = 45, n·0 = 55
    c = tenenbein(n11, n10, n01, n00, x, y, conditional=True)
    lam1, lam0 = 40 / 45, 6 / 55
    assert c.var_p == pytest.approx((lam1 - lam0) ** 2 * pi * (1 - pi) / N
                                    + pi ** 2 * lam1 * (1 - lam1) / 45
                                    + (1 - pi) ** 2 * lam0 * (1 - lam0) / 55)
    # per-stratum error rates for general cell layouts reduce to the conditional MLE
    first = np.array([[[0], [n10 + n00 + y], [n11 + n01 + x]]])
    second = np.array([[[0], [n10 + n00], [n11 + n01]]])
    rel = np.array([[[0], [n10], [n11]]])
    sc = SampleCounts(np.array([10 ** 6]), np.array([[True]]), np.array([False, True, True]),
                      np.array([-1, 0, 1]), first, second, rel, (), ("s",))
    (er,) = error_rates(sc)
    assert (er.p, er.fpr, er.fnr) == pytest.approx((c.p, c.fpr, c.fnr))
    assert (er.se_p ** 2, er.se_fpr ** 2, er.se_fnr ** 2) == pytest.approx(
        (c.var_p, c.var_fpr, c.var_fnr), rel=1e-9)
    assert er.naive_bias == pytest.approx(pi - p)
    K = t.p * (1 - t.p) * (1 - t.fpr - t.fnr) ** 2 / (t.pi * (1 - t.pi))
    assert t.K == pytest.approx(K)


def test_cell_estimator_equals_mle():
    """Double sampling for stratification with cells = fallible labels is Tenenbein's MLE.
    The variances agree when the subsample is representative (n·1/n = π̂): Cochran's
    estimator conditions on the achieved n·f where Tenenbein's plugs in nπ̂."""
    n11, n10, n01, n00, x, y = 30, 6, 5, 59, 315, 585
    t = tenenbein(n11, n10, n01, n00, x, y, population=50000)
    first = np.array([[[0], [n10 + n00 + y], [n11 + n01 + x]]])
    second = np.array([[[0], [n10 + n00], [n11 + n01]]])
    rel = np.array([[[0], [n10], [n11]]])
    sc = SampleCounts(np.array([50000]), np.array([[True]]), np.array([False, True, True]),
                      np.array([-1, 0, 1]), first, second, rel)
    a = estimate_arrays(sc)
    assert a["yield"] / 50000 == pytest.approx(t.p)
    # same variance up to the small-sample n/(n−1) factors of Cochran's estimator
    assert a["yield_var"] / 50000 ** 2 == pytest.approx(t.var_p, rel=0.03)


def test_full_adjudication_reduces_to_binomial_and_seed_fig8():
    """n = N: eq. 14 becomes pq/N (eq. 9). Seed §4 (Stratum h0i0k1, p=.61, θ=.16, φ=.83,
    N=113): SD 0.046 with full adjudication, ≈0.10 adjudicating 23 documents; an appeals
    process missing 10 of 57 false negatives has RMSE 0.10 (eq. 10)."""
    p, th, ph = 0.61, 0.16, 0.83
    assert tenenbein_variance(p, th, ph, 113, 113) == pytest.approx(p * (1 - p) / 113)
    assert np.sqrt(tenenbein_variance(p, th, ph, 113, 113)) == pytest.approx(0.046, abs=5e-4)
    assert np.sqrt(tenenbein_variance(p, th, ph, 23, 113)) == pytest.approx(0.10, abs=0.003)
    sd = np.sqrt(tenenbein_variance(p, th, ph, np.array([113, 28]), 113))
    assert sd[1] / sd[0] == pytest.approx(2.0, abs=0.02)   # quarter n, double SD
    rel = round(0.61 * 113)                                   # 69 relevant in the sample
    rmse = np.sqrt(mse_fallible(p, 0.0, 10 / rel, 113))
    assert rmse == pytest.approx(0.10, abs=0.002)


def _superpopulation(reps, N, n, p, th, ph, rng):
    probs = [p * (1 - ph), p * ph, (1 - p) * th, (1 - p) * (1 - th)]     # t1f1 t1f0 t0f1 t0f0
    sub = rng.multinomial(n, probs, size=reps)
    rest = rng.multinomial(N - n, probs, size=reps)
    x = rest[:, 0] + rest[:, 2]
    return sub[:, 0], sub[:, 1], sub[:, 2], sub[:, 3], x, (N - n) - x


def test_asymptotic_variances_match_monte_carlo():
    """4,000 seeded repetitions, N=3,000 assessed, n=600 adjudicated, p=.3, θ=.05, φ=.10.
    Claims: p̂ unbiased (mean within 3 MC SEs); the mean asymptotic variances of p̂, θ̂, φ̂
    agree with their Monte Carlo variances within 10% (MC SE of a variance ≈ sqrt(2/4000) =
    2.2%); Wald 95% coverage of p within 0.95 ± 0.0103 (3 binomial SDs at 4,000 reps)."""
    rng = np.random.default_rng(1970)
    reps, p, th, ph = 4000, 0.3, 0.05, 0.10
    t = tenenbein(*_superpopulation(reps, 3000, 600, p, th, ph, rng))
    assert abs(t.p.mean() - p) <= 3 * t.p.std() / np.sqrt(reps)
    for est, var in ((t.p, t.var_p), (t.fpr, t.var_fpr), (t.fnr, t.var_fnr)):
        assert var.mean() / est.var() == pytest.approx(1, abs=0.10)
    c = tenenbein(*_superpopulation(reps, 3000, 600, p, th, ph, rng), conditional=True)
    for est, var in ((c.p, c.var_p), (c.fpr, c.var_fpr), (c.fnr, c.var_fnr)):
        assert var.mean() / est.var() == pytest.approx(1, abs=0.10)
    exact = tenenbein_variance(p, th, ph, 600, 3000)
    assert exact / t.p.var() == pytest.approx(1, abs=0.10)
    z = norm.ppf(0.975)
    assert abs((np.abs(t.p - p) <= z * np.sqrt(t.var_p)).mean() - 0.95) <= 0.0103
    for est, truth in ((t.fpr, th), (t.fnr, ph)):
        assert abs(est.mean() - truth) <= 3 * est.std() / np.sqrt(reps)


def test_authority_unassessable_and_missing_cells_are_reported():
    M = np.array([1000])
    fal = np.array([1] * 10 + [0] * 30 + [-1] * 2)
    true = np.full(42, NOT_ADJUDICATED)
    true[:4] = [1, 1, 0, -1]
    sc = build_counts(M, np.array([[True]]), np.zeros(42, int), np.zeros(42, int), fal, true)
    assert any("unassessable by the authority" in n for n in sc.notes)
    assert any("no adjudication" in n for n in sc.notes)
    est = estimate(sc)
    assert est.notes == sc.notes


def test_adjudication_allocation_minimises_variance():
    """Allocation n_lc ∝ M_l N'_lc S_lc/N'_l: the expected variance of a run's recall is no
    larger than under proportional adjudication, and the bottom stratum's assessed-relevant
    cell (few documents, huge weight) is adjudicated at the highest rate."""
    M = np.array([1000, 1500, 1500, 96000])
    pat = np.array([[1, 1], [1, 0], [0, 1], [0, 0]], bool)
    first = np.zeros((4, 3, 4), int)
    for l, (n0, n1) in enumerate([(40, 160), (150, 100), (90, 110), (860, 40)]):
        first[l, 1, l], first[l, 2, l] = n0, n1
    sc = SampleCounts(M, pat, np.array([False, True, True]), np.array([-1, 0, 1]), first,
                      first, first * np.array([0, 0, 1])[None, :, None], ("A", "B"))
    alloc = allocate_adjudication(sc, 300, run=0, metric="recall", fpr=0.03, fnr=0.1)
    assert alloc.sum() == 300 and np.all(alloc[:, 0] == 0)
    assert np.all(alloc[:, 1:] >= 2)
    rates = alloc[:, 1:] / first.sum(axis=2)[:, 1:]
    assert rates[3, 1] == rates.max()
    # a prior θ above the bottom stratum's assessed proportion (40/900) must not starve its
    # assessed-relevant cell: it is capped at π/2, and that cell is still sampled at the top rate
    high = allocate_adjudication(sc, 300, run=0, metric="recall", fpr=0.10, fnr=0.1)
    rates = high[:, 1:] / first.sum(axis=2)[:, 1:]
    assert rates[3, 1] == rates.max()
    f1 = allocate_adjudication(sc, 300, run=1, metric="f1")
    assert f1.sum() == 300
    # draw: SRS within cells, reproducible
    s = np.repeat(np.arange(4), first.sum(axis=(1, 2)))
    cells = np.concatenate([np.repeat([1, 2], first[l, 1:, l]) for l in range(4)])
    d1 = draw_adjudication(s, cells, alloc, np.random.default_rng(3))
    d2 = draw_adjudication(s, cells, alloc, np.random.default_rng(3))
    assert np.array_equal(d1, d2) and len(np.unique(d1)) == 300
    for (l, c), k in np.ndenumerate(alloc):
        assert ((s[d1] == l) & (cells[d1] == c)).sum() == k


def test_appeals_substrata_unbiased_where_appeals_alone_are_biased():
    """Seed 004 §5. One stratum of 20,000 documents, p=.2, θ=.08, φ=.25; a party appeals 70% of
    the erroneous assessments and 3% of the correct ones. 1,000 seeded repetitions of 2,000
    assessments. Adjudicating *all and only* appealed documents is biased (bias > 3 MC SEs);
    double sampling with appealed / unappealed sub-strata (60 of each appealed cell, 100 of each
    unappealed one) is unbiased (within 3 MC SEs) and its 95% Wald interval covers the true
    yield in 0.95 ± 0.0207 of repetitions (3 binomial SDs at 1,000)."""
    rng = np.random.default_rng(5)
    Mtot, p, th, ph = 20000, 0.2, 0.08, 0.25
    t = rng.random(Mtot) < p
    f = np.where(t, rng.random(Mtot) > ph, rng.random(Mtot) < th).astype(int)
    wrong = t != f.astype(bool)
    appealed_pop = np.where(wrong, rng.random(Mtot) < 0.7, rng.random(Mtot) < 0.03)
    Y = t.sum()
    reps, n = 1000, 2000
    ds_est, ds_var, ap_est = np.empty(reps), np.empty(reps), np.empty(reps)
    z = norm.ppf(0.975)
    for b in range(reps):
        idx = rng.choice(Mtot, n, replace=False)
        fal, tt, ap = f[idx], t[idx].astype(int), appealed_pop[idx]
        # appeals only: flip the labels of appealed documents to the authority's
        fixed = np.where(ap, tt, fal)
        ap_est[b] = Mtot * fixed.mean()
        true = np.full(n, NOT_ADJUDICATED)
        cell = fal + 2 * ap
        for c, k in ((0, 100), (1, 100), (2, 60), (3, 60)):
            members = np.flatnonzero(cell == c)
            pick = rng.choice(members, min(k, members.size), replace=False)
            true[pick] = tt[pick]
        sc = build_counts([Mtot], np.array([[True]]), np.zeros(n, int), np.zeros(n, int), fal,
                          true, ap)
        a = estimate_arrays(sc)
        ds_est[b], ds_var[b] = a["yield"], a["yield_var"]
    se_ap = ap_est.std() / np.sqrt(reps)
    assert abs(ap_est.mean() - Y) > 3 * se_ap
    assert abs(ds_est.mean() - Y) <= 3 * ds_est.std() / np.sqrt(reps)
    assert abs((np.abs(ds_est - Y) <= z * np.sqrt(ds_var)).mean() - 0.95) <= 0.0207

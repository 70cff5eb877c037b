"""Small-count intervals of double sampling (issue 11, 'Honest intervals'): the Jeffreys
posterior-shape interval of :mod:`assay.core.small_counts` never has zero width unless both
phases are a census, and keeps coverage where adjudications find a handful of disagreements or
none, and in the hard regime (0.1% relevance in the bottom stratum, FP 2%, FN 15%). Seeded."""
import numpy as np
import pytest

from assay.core.double_sampling import NOT_ADJUDICATED, build_counts
from assay.core.small_counts import jeffreys_two_phase_intervals
from assay.core.two_phase import SampleCounts, estimate, estimate_arrays, interval
from assay.simulation import make_population, simulate_two_phase

PAT3 = np.array([[True], [True], [False]])


def _coverage(sc: SampleCounts, truth: dict, measures=("precision", "recall"),
              draws: int = 1500) -> dict:
    """Per measure of run A: per-repetition Jeffreys hits, delta-logit hits, Jeffreys
    half-widths, and whether the delta-method interval has zero width."""
    reps = sc.first.shape[0]
    out = {m: (np.zeros(reps, bool), np.zeros(reps, bool), np.zeros(reps), np.zeros(reps, bool))
           for m in measures}
    for b in range(reps):
        one = sc.one(b)
        r = estimate_arrays(one)
        iv = jeffreys_two_phase_intervals(one, draws=draws, seed=b, point=r).bounds
        for m in measures:
            t = truth[m][0]
            lo, hi = iv[m]
            d = interval(r[m][0], r[m + "_var"][0], method="logit")
            hj, hd, hw, zw = out[m]
            hj[b], hw[b] = lo[0] <= t <= hi[0], (hi[0] - lo[0]) / 2
            hd[b], zw[b] = d.ci_low <= t <= d.ci_high, d.ci_low == d.ci_high
    return out


def test_no_zero_width_unless_census():
    """Issue 11, point 2: strata assessed in full (census first phase) whose adjudications saw
    no disagreement. The delta-method interval of the corrected precision has zero width
    (the defect); the Jeffreys interval is wider than zero, holds the unchanged estimate, and
    becomes exact (zero width) only when every document is also adjudicated."""
    rng = np.random.default_rng(3)
    fal = np.array([1] * 40 + [0] * 20 + [1] * 5 + [0] * 95)
    stratum = np.repeat([0, 1], [60, 100])
    true = np.full(160, NOT_ADJUDICATED)
    pick = np.concatenate([rng.choice(40, 8, replace=False), 40 + rng.choice(20, 6, False)])
    true[pick] = fal[pick]                             # no disagreement seen
    true[60:] = np.where(np.arange(100) < 3, 1, fal[60:])   # bottom: fully adjudicated
    pats = np.array([[True], [False]])
    sc = build_counts([60, 100], pats, stratum, stratum, fal, true, run_ids=("A",))
    delta = estimate(sc, method="logit").runs["A"]["precision"]
    assert delta.ci_low == delta.ci_high == delta.estimate          # the defect, documented
    jef = estimate(sc).runs["A"]["precision"]
    assert jef.method == "jeffreys" and jef.estimate == delta.estimate
    assert jef.ci_low < jef.estimate <= jef.ci_high and jef.ci_high - jef.ci_low > 0.05
    assert jef.std_error > 0
    # every document adjudicated in a census: the estimate is exact and so is the interval
    full = build_counts([60, 100], pats, stratum, stratum, fal, fal, run_ids=("A",))
    ex = estimate(full).runs["A"]["precision"]
    assert ex.ci_low == ex.ci_high == ex.estimate == pytest.approx(40 / 60)
    # seeded: the same counts give the same interval
    again = estimate(sc).runs["A"]["precision"]
    assert (again.ci_low, again.ci_high) == (jef.ci_low, jef.ci_high)


@pytest.mark.slow
def test_few_disagreements_keep_coverage():
    """Run A returns two strata assessed in full (80 and 150 documents, relevance .85 / .5);
    the bottom stratum (4,000, relevance 2%) is sampled 300. FP 2%, FN 4%: 6 adjudications
    per stratum and assessed label see a disagreement only now and then. 1,000 seeded
    repetitions; tolerance 3 binomial SDs, 0.95 − 0.0207. Claims: the Jeffreys interval of
    A's corrected precision covers ≥ 0.929 (measured 1.000, mean half-width 0.10: conservative
    when the true error rates are far below 1/n) where the delta-method (logit) interval
    undercovers (< 0.929; measured 0.831, zero width in 17% of repetitions); recall likewise
    ≥ 0.929 (measured 0.993; delta 0.952)."""
    rng = np.random.default_rng(2024)
    pop = make_population([80, 150, 4000], [0.85, 0.5, 0.02], [0.02] * 3, [0.04] * 3, PAT3,
                          rng, run_ids=("A",), strata=("a", "b", "rest"))
    alloc = lambda s: np.array([[0, 6, 6]] * 3)  # noqa: E731
    sc = simulate_two_phase(pop, [80, 150, 300], 60, 1000, rng,
                            allocate=lambda s: np.minimum(alloc(s), s.first.sum(-1)))
    truth = pop.truth()
    tol = 3 * np.sqrt(0.95 * 0.05 / 1000)
    cov = _coverage(sc, truth)
    hj, hd, hw, zero = cov["precision"]
    assert hj.mean() >= 0.95 - tol, hj.mean()
    assert hd.mean() < 0.95 - tol and zero.mean() > 0.1, (hd.mean(), zero.mean())
    assert np.all(hw > 0)
    hj, hd, hw, _ = cov["recall"]
    assert hj.mean() >= 0.95 - tol and np.all(hw > 0), hj.mean()


@pytest.mark.slow
def test_hard_regime_recall_covers():
    """Issue 11's hard regime (assay.worlds.assessor_error_world, seed 11: 100,000 documents,
    0.1% relevance in the bottom stratum, FP 2% there, FN 15% everywhere; 1,500 assessments,
    300 adjudications allocated for Var(recall A)). 1,000 seeded repetitions; target ≥ 0.93 for
    both runs' corrected recall, tolerance 3 binomial SDs (0.0207) below 0.95 → asserted
    ≥ 0.93 (measured 0.991 / 0.989 with 1,500 draws; delta logit 0.921 / 0.890). The point
    estimate is the unchanged two-phase one."""
    from assay.core.allocation import allocate_by_rule
    from assay.core.double_sampling import allocate_adjudication
    from assay.worlds import assessor_error_world
    w = assessor_error_world(np.random.default_rng(11))
    pop = w.population
    n = allocate_by_rule(pop.sizes, w.assessments, "legal", bottom=3, bottom_share=0.75)
    sc = simulate_two_phase(pop, n, w.adjudications, 1000, np.random.default_rng(10011),
                            allocate=lambda s: allocate_adjudication(s, w.adjudications, run=0))
    t = pop.truth()["recall"]
    r = estimate_arrays(sc)
    hit = np.zeros((1000, 2), bool)
    for b in range(1000):
        pt = {k: v[b] for k, v in r.items()}
        lo, hi = jeffreys_two_phase_intervals(sc.one(b), draws=1500, seed=b,
                                              point=pt).bounds["recall"]
        assert np.all(lo <= pt["recall"]) and np.all(pt["recall"] <= hi)
        hit[b] = (lo <= t) & (t <= hi)
    assert np.all(hit.mean(axis=0) >= 0.93), hit.mean(axis=0)


def test_error_rate_standard_errors_not_zero_when_no_disagreement_seen():
    """error_rates (the per-stratum θ̂, φ̂ of the CLI's report): where the adjudications of a
    cell saw no disagreement, the plug-in standard error was 0; it is now the Jeffreys-adjusted
    one (λ̃ = (k + ½)/(n + 1) in the variance only), never above ½, and the rates themselves
    are unchanged."""
    from assay.core.double_sampling import error_rates
    fal = np.array([1] * 30 + [0] * 70)
    true = np.full(100, NOT_ADJUDICATED)
    true[:6] = 1                                      # 6 of 6 assessed relevant: no FP seen
    true[30:38] = 0                                   # 8 of 8 assessed not relevant: no FN seen
    sc = build_counts([1000], np.array([[True]]), np.zeros(100, int), np.zeros(100, int), fal,
                      true, run_ids=("A",))
    (er,) = error_rates(sc)
    assert er.fpr == 0.0 and er.fnr == 0.0 and er.p == pytest.approx(0.3)
    assert er.se_fpr > 0 and er.se_fnr > 0 and er.se_p > 0
    lam1 = 6.5 / 7                                   # Jeffreys-adjusted, variance only
    lam0 = 0.5 / 9
    w1, w0 = 0.3, 0.7
    var_p = (1 - 0) ** 2 * w1 * w0 / 100 + w1 ** 2 * lam1 * (1 - lam1) / 6 \
        + w0 ** 2 * lam0 * (1 - lam0) / 8
    assert er.se_p ** 2 == pytest.approx(var_p)
    # φ̂ over a near-empty class (2 relevant of 100): the delta method would give an SE of
    # about 3; it is capped at ½, the largest SD of a quantity in [0, 1] (Popoviciu)
    fal = np.array([1] * 2 + [0] * 98)
    true = np.full(100, NOT_ADJUDICATED)
    true[:2], true[2:12] = 1, 0
    sc = build_counts([1000], np.array([[True]]), np.zeros(100, int), np.zeros(100, int), fal,
                      true, run_ids=("A",))
    (er,) = error_rates(sc)
    assert er.fnr == 0.0 and er.se_fnr == 0.5 and 0 < er.se_p < 0.5


def test_many_strata_and_patterns_stay_small():
    """300 strata, each its own run-return pattern of 9 runs: the draws hold only the
    (stratum, cell, pattern) entries that occur (a dense draws × L × C × G array would be
    about 2·10⁹ numbers); every interval has positive width and holds its estimate."""
    rng = np.random.default_rng(0)
    L = 300
    pats = rng.random((L, 9)) < 0.5
    s = np.repeat(np.arange(L), 20)
    fal = (rng.random(s.size) < 0.3).astype(int)
    true = np.where(rng.random(s.size) < 0.3, fal ^ (rng.random(s.size) < 0.1), NOT_ADJUDICATED)
    sc = build_counts(rng.integers(50, 500, L), pats, s, s, fal, true,
                      run_ids=tuple("ABCDEFGHI"))
    est = estimate(sc)
    for run in est.runs.values():
        for e in run.values():
            assert e.ci_low < e.ci_high and e.ci_low <= e.estimate <= e.ci_high

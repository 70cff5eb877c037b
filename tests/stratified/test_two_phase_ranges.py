"""Random small two-phase samples (any assessor labels, any adjudications, cells left without
any, unassessable documents, strata mixing run-patterns): every interval of ``assay stratified estimate``'s estimator lies
in range around its estimate, and the assumption-free bounds lie in range (hypothesis)."""
import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from assay.core.double_sampling import NOT_ADJUDICATED, build_counts
from assay.core.two_phase import estimate
from assay.core.two_phase_bounds import run_bounds, yield_bounds


@st.composite
def _sample(draw):
    L = draw(st.integers(1, 4))
    rng = np.random.default_rng(draw(st.integers(0, 2 ** 31)))
    n_l = rng.integers(1, 15, L)
    M = n_l + rng.integers(0, 200, L)
    stratum = np.repeat(np.arange(L), n_l)
    n = len(stratum)
    patterns = np.array([[True, False], [False, True], [True, True], [False, False]])[:L]
    fallible = rng.choice([-1, 0, 1], n, p=[0.05, 0.6, 0.35])
    adj = rng.random(n) < draw(st.sampled_from([0.0, 0.2, 0.6, 1.0]))
    true = np.where(adj & (fallible >= 0), rng.choice([0, 1, -1], n, p=[0.5, 0.45, 0.05]),
                    NOT_ADJUDICATED)
    # run-pattern strata (one pattern per stratum), or user strata mixing the patterns
    pattern = rng.integers(0, L, n) if draw(st.booleans()) else stratum
    return M, patterns, stratum, pattern, fallible, true


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(s=_sample(), method=st.sampled_from(["jeffreys", "wald"]))
def test_random_two_phase_samples_give_intervals_in_range(s, method):
    M, patterns, stratum, pattern, fallible, true = s
    sc = build_counts(M, patterns, stratum, pattern, fallible, true, run_ids=("A", "B"))
    est = estimate(sc, 0.95, method)
    free = run_bounds(sc)
    for run, ms in est.runs.items():
        for m, e in ms.items():
            if e.estimate is None:
                continue
            assert 0.0 <= e.ci_low <= e.estimate <= e.ci_high <= 1.0, (run, m, e)
            assert 0.0 <= free[run][m][0] <= free[run][m][1] <= 1.0, (run, m, free[run][m])
    lo, hi = yield_bounds(sc)
    assert 0.0 <= lo <= hi <= float(np.sum(M))


def test_a_ratio_beyond_one_is_cut_and_said():
    """One stratum (user strata) whose assessed-relevant documents are half run A's, half not;
    the two adjudicated are both A's and relevant. The estimator pools the patterns within a
    cell, so A's precision came out 2.0 (wald's interval [2.0, 1.0]); it is cut to 1, the
    interval holds it, and a note says why."""
    stratum, pattern = np.zeros(10, int), np.array([0] * 5 + [1] * 5)
    sc = build_counts([100], np.array([[True], [False]]), stratum, pattern, np.ones(10, int),
                      np.array([1, 1] + [NOT_ADJUDICATED] * 8), run_ids=("A",))
    for method in ("jeffreys", "wald"):
        est = estimate(sc, 0.95, method)
        p = est.runs["A"]["precision"]
        assert p.estimate == 1.0 and p.ci_low <= p.estimate <= p.ci_high == 1.0
        assert any("precision estimate 2.0000 lies beyond [0, 1]" in n for n in est.notes)

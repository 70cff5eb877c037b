"""The assumption-free interval of ``assay stratified estimate`` (issue 11, must-have 3;
:mod:`assay.core.two_phase_bounds`): exact two-phase bounds that cover whatever the assessors'
error, the rarity of relevance or the sampling approximation; seeded simulations."""
import numpy as np
import pytest

from assay.core.allocation import allocate_by_rule
from assay.core.double_sampling import allocate_adjudication, build_counts
from assay.core.two_phase_bounds import (pattern_strata_sizes, run_bounds, topics_bounds,
                                         yield_bounds)
from assay.simulation import make_population, simulate_two_phase
from assay.worlds_assessor import assessor_error_world

MEASURES = ("recall", "precision", "f1")


def _hard(seed: int, reps: int, **kw):
    """Issue 11's hard regime of double sampling (0.1% bottom relevance, FP 2% there, FN
    15%), adjudications allocated for run A's recall, as bench/double_sampling.py."""
    w = assessor_error_world(np.random.default_rng(seed), **kw)
    pop = w.population
    n = allocate_by_rule(pop.sizes, w.assessments, "legal", bottom=3, bottom_share=0.75)
    sc = simulate_two_phase(pop, n, w.adjudications, reps, np.random.default_rng(seed + 1),
                            allocate=lambda s: allocate_adjudication(s, w.adjudications, run=0))
    return pop, sc


def _hits(pop, sc, reps: int) -> dict:
    truth, sizes = pop.truth(), np.diag(pop.sizes)
    hits = {(r, m): [] for r in pop.run_ids for m in MEASURES}
    for b in range(reps):
        bounds = run_bounds(sc.one(b), 0.95, pattern_sizes=sizes)
        for k, r in enumerate(pop.run_ids):
            for m in MEASURES:
                lo, hi = bounds[r][m]
                hits[(r, m)].append(lo - 1e-12 <= truth[m][k] <= hi + 1e-12)
    return {key: float(np.mean(v)) for key, v in hits.items()}


def test_covers_in_the_hard_regime():
    """60 repetitions: every run's recall, precision and F1 covered in every one (the bound
    holds with probability ≥ 0.95 by construction, so ≥ 0.95 − 3·0.028 at 60 is the least
    a correct bound shows)."""
    pop, sc = _hard(3, 60)
    cov = _hits(pop, sc, 60)
    assert min(cov.values()) >= 0.95 - 3 * np.sqrt(0.95 * 0.05 / 60), cov


@pytest.mark.slow
@pytest.mark.parametrize("kw", [{}, {"p_bottom": 0.005, "fnr_bottom": 0.5},
                                {"fpr_other": 0.02}])
def test_covers_where_the_approximations_break(kw):
    """200 repetitions on other seeds, in the hard regime, the world built to break the delta
    method (FN 50% in the bottom stratum) and FP everywhere: coverage ≥ 0.95 − 3 SE."""
    pop, sc = _hard(41, 200, **kw)
    cov = _hits(pop, sc, 200)
    assert min(cov.values()) >= 0.95 - 3 * np.sqrt(0.95 * 0.05 / 200), cov


def test_a_census_is_exact_and_a_naive_sample_trusts_the_assessments():
    """Strata assessed and adjudicated in full give the measure exactly; the naive counts (the
    assessments as truth) bound what the assessments say, not the truth."""
    pop = make_population([40, 60, 500], [0.8, 0.5, 0.0], [0.0] * 3, [0.0] * 3,
                          np.array([[True], [True], [False]]), np.random.default_rng(5),
                          run_ids=("A",))
    sc = simulate_two_phase(pop, [40, 60, 500], None, 1, np.random.default_rng(6))
    t = pop.truth()
    b = run_bounds(sc.one(0), 0.95, pattern_sizes=np.diag(pop.sizes))["A"]
    for m in MEASURES:
        assert b[m][0] == pytest.approx(t[m][0]) and b[m][1] == pytest.approx(t[m][0])
    assert yield_bounds(sc.one(0)) == (t["yield"], t["yield"])


def test_unknown_pattern_sizes_are_wider_never_narrower():
    """Without each stratum's documents per run-pattern (user strata), every unassessed
    document may hold the property: the bounds contain those of the run-pattern strata."""
    pop, sc = _hard(8, 5)
    for b in range(5):
        one = sc.one(b)
        known = run_bounds(one, 0.95, pattern_sizes=pattern_strata_sizes(one, np.arange(4)))
        unknown = run_bounds(one, 0.95)
        for r in pop.run_ids:
            for m in MEASURES:
                assert unknown[r][m][0] <= known[r][m][0] + 1e-12
                assert unknown[r][m][1] >= known[r][m][1] - 1e-12


def test_the_mean_over_topics_spends_the_error_over_them():
    """Two topics: the mean's bounds lie outside the mean of each topic's own 95% bounds
    (each topic takes half of each side's error)."""
    sc = build_counts([20, 200], np.array([[True], [False]]), np.array([0] * 10 + [1] * 20),
                      np.array([0] * 10 + [1] * 20), np.array([1] * 7 + [0] * 22 + [1]),
                      run_ids=("A",))
    ps = pattern_strata_sizes(sc, np.array([0, 1]))
    one = run_bounds(sc, 0.95, pattern_sizes=ps)["A"]
    both = topics_bounds([sc, sc], 0.95, [ps, ps])["A"]
    for m in MEASURES:
        assert both[m][0] <= one[m][0] and both[m][1] >= one[m][1]
    assert both["recall"][0] < one["recall"][0]


def test_a_cell_left_unadjudicated_is_bounded_by_its_size():
    """A cell the estimator fills from the assessments (no adjudication) may hold none to all
    of its N' documents: the bounds are those of the cell adjudicated in full, its low end
    with none relevant and its high end with all (session 30 found such cells taken as
    correct: recall covered 0.315)."""
    stratum = np.array([0] * 10 + [1] * 10)
    fallible = np.array([1] * 5 + [0] * 5 + [1] * 2 + [0] * 8)
    true = np.array([1, 0] + [-2] * 3 + [-2] * 5 + [1, -2, 0, 0] + [-2] * 6)
    args = ([20, 200], np.array([[True], [False]]), stratum, stratum, fallible)
    sc = build_counts(*args, true, run_ids=("A",))
    assert sc.filled.tolist() == [[False, True, False], [False, False, False]]
    assert sc.naive().filled is None
    ps = pattern_strata_sizes(sc, np.array([0, 1]))
    got = run_bounds(sc, 0.95, pattern_sizes=ps)["A"]["recall"]
    full = [run_bounds(build_counts(*args, np.where((stratum == 0) & (fallible == 0), v, true),
                                    run_ids=("A",)), 0.95, pattern_sizes=ps)["A"]["recall"]
            for v in (0, 1)]
    assert got == pytest.approx((full[0][0], full[1][1]))
    assert got[1] - got[0] > full[0][1] - full[0][0]


def test_covers_with_most_cells_unadjudicated():
    """8 adjudications spread in proportion over the hard regime's cells, so most cells get
    none and the estimator takes their assessments as correct (bench/two_phase_free_break.py:
    recall covered 0.315 before such cells were bounded by their size): 60 repetitions, every
    run and measure ≥ 0.95 − 3 SE."""
    w = assessor_error_world(np.random.default_rng(5))
    pop = w.population
    n = allocate_by_rule(pop.sizes, w.assessments, "legal", bottom=3, bottom_share=0.75)
    sc = simulate_two_phase(pop, n, 8, 60, np.random.default_rng(6))
    assert sc.filled.any(axis=(1, 2)).all()
    cov = _hits(pop, sc, 60)
    assert min(cov.values()) >= 0.95 - 3 * np.sqrt(0.95 * 0.05 / 60), cov

"""OASIS (seed 002): the instrumental distribution against hand computation, the Bayesian
updates, eq. 3 = the Hansen–Hurwitz ratio (the design's own F̂; the estimate is Raj's ordered
ratio), reproducibility, and consistency (seed 002 §5) by seeded simulation on a synthetic
pool and on real ER pools.

Consistency checks (repetitions stated per test): the mean F1 estimate over repetitions lies
within 3 standard errors of the truth at a moderate budget, and the RMSE falls as the budget of
distinct labels grows.
"""
from __future__ import annotations

import math

import numpy as np
import pytest

from assay.designs.base import Draw
from assay.designs.oasis import (DEFAULT_DEFENSIVE, OasisDesign, defensive_mixture,
                                 epsilon_greedy, initial_f, logistic, optimal_stratum_weights,
                                 posterior_mean)
from assay.core.strata import Strata, csf_strata
from assay.core.measures import f_measure, true_f_measure
from assay.core.totals import WithReplacementSample
from assay.estimation import estimate_all
from assay.designs.oasis_lockstep import collect_many
from assay.evaluation import collect

# --- a tiny pool: three equal strata of two items, by decreasing score -----------------------
SCORE = np.array([6.0, 5.0, 4.0, 3.0, 2.0, 1.0])
PRED = np.array([1, 1, 1, 0, 0, 0])
PRIOR = np.array([0.9, 0.7, 0.5, 0.3, 0.2, 0.0])
# strata {0,1}, {2,3}, {4,5}: π̂(0) = [0.8, 0.4, 0.1], λ = [1, 0.5, 0], ω = ⅓ each
# F̂(0) = 2(0.8·1 + 0.4·0.5) / (½·2·1.5 + ½·2·1.3) = 2/2.8 = 5/7 (Algorithm 2 line 10)
# v* at F = 5/7, α = ½ (formula after eq. 11), worked by hand:
#   k=0: √((5/14)²·0.2 + (2/7)²·0.8) = 0.301358
#   k=1: ½·(5/14)√0.4 + ½√((5/14)²·0.6 + (2/7)²·0.4) = 0.112939 + 0.165215 = 0.278154
#   k=2: (5/14)√0.1 = 0.112938;  normalised:
V_STAR_HAND = np.array([0.435205, 0.401695, 0.163100])
# the package's root-mean-square form differs only in the mixed stratum k=1:
V_RMS_HAND = np.array([0.432166, 0.405873, 0.161961])


def tiny(**kw) -> OasisDesign:
    """The published algorithm (no cross-fitting, no defensive mixture), checked by hand
    below."""
    kw.setdefault("n_strata", 3)
    kw.setdefault("strata", "equal")
    kw.setdefault("cross_fit", False)
    kw.setdefault("defensive", 0.0)
    return OasisDesign(PRIOR, PRED, SCORE, np.random.default_rng(0), **kw)


def test_initialisation_matches_algorithm_2():
    d = tiny()
    assert d.strata.count == 3
    assert [sorted(d.strata.members(h).tolist()) for h in range(3)] == [[0, 1], [2, 3], [4, 5]]
    np.testing.assert_allclose(d.pi0, [0.8, 0.4, 0.1])
    np.testing.assert_allclose(d.lam, [1.0, 0.5, 0.0])
    assert d.f0 == pytest.approx(5 / 7)
    assert d.f_hat() == pytest.approx(5 / 7)          # no draw yet: the guess
    np.testing.assert_allclose(d.gamma1, 2 * d.pi0)    # η = 2 per stratum by default
    np.testing.assert_allclose(d.gamma0, 2 * (1 - d.pi0))


def test_instrumental_distribution_by_hand():
    d = tiny(epsilon=1e-3)
    v = d.instrumental()
    np.testing.assert_allclose(v, 1e-3 / 3 + (1 - 1e-3) * V_STAR_HAND, atol=2e-6)
    assert v.sum() == pytest.approx(1.0)
    np.testing.assert_allclose(tiny(epsilon=1e-3, v_star="rms").instrumental(),
                               1e-3 / 3 + (1 - 1e-3) * V_RMS_HAND, atol=2e-6)
    # ε = 1: passive (eq. 12 with all weight on ω)
    np.testing.assert_allclose(tiny(epsilon=1.0).instrumental(), [1 / 3] * 3)


def test_v_star_forms_agree_on_pure_strata_and_floor_is_eps_omega():
    pi = np.array([0.9, 0.3, 0.01, 0.0])
    lam = np.array([1.0, 1.0, 0.0, 0.0])
    omega = np.array([0.01, 0.09, 0.4, 0.5])
    a = optimal_stratum_weights(0.5, 0.6, pi, lam, omega, "paper")
    b = optimal_stratum_weights(0.5, 0.6, pi, lam, omega, "rms")
    np.testing.assert_allclose(a, b)
    assert a[3] == 0.0                                     # π̂ = 0, λ = 0: v* vanishes …
    v = epsilon_greedy(a, omega, 0.01)
    assert v[3] == pytest.approx(0.01 * 0.5)               # … ε-greedy keeps ε ω_k (Remark 5.6)
    # every weight zero (F̂ = 0 and no positive anywhere): falls back to ω
    np.testing.assert_allclose(optimal_stratum_weights(0.5, 0.0, np.zeros(4), lam, omega),
                               omega)


def test_defensive_mixture_bounds_every_weight_by_the_prior_design():
    """The default (issue 11) mixes v* with the prior's static v*_0 (share d = 0.5): however
    the labels move v*, v_k ≥ (1 − ε) d v*_0,k, so each weight ω_k/v_k stays within
    1/((1 − ε) d) of the prior design's; d = 0 gives the published v exactly."""
    g = np.random.default_rng(3)
    s = g.normal(size=5000)
    pred = (s > 1.5).astype(int)
    y = (g.random(5000) < logistic(3 * s - 5)).astype(int)
    d = OasisDesign(None, pred, s, np.random.default_rng(2), n_strata=8)
    assert d.defensive == DEFAULT_DEFENSIVE == 0.5 and d.params()["defensive"] == 0.5
    v0 = optimal_stratum_weights(0.5, d.f0, d.pi0, d.lam, d.omega)
    np.testing.assert_allclose(d.v_prior, v0)
    for _ in range(400):
        dr = d.draw()
        d.update(dr, int(y[dr.index]))
    v = d.instrumental()
    assert v.sum() == pytest.approx(1.0)
    assert np.all(v >= (1 - d.epsilon) * 0.5 * v0 - 1e-15)
    assert np.max(d.omega / v) <= np.max(d.omega / v0) / ((1 - d.epsilon) * 0.5) + 1e-9
    # the same labels without the mixture: the published v (eq. 12 on v* alone)
    pub = OasisDesign(None, pred, s, np.random.default_rng(2), n_strata=8, defensive=0.0)
    pub.ones, pub.zeros = d.ones.copy(), d.zeros.copy()
    pub._num, pub._pred, pub._true = d._num, d._pred, d._true
    v_star = optimal_stratum_weights(0.5, pub.f_hat(), pub.pi_hat(), pub.lam, pub.omega)
    np.testing.assert_allclose(pub.instrumental(), epsilon_greedy(v_star, pub.omega, 1e-3))
    np.testing.assert_allclose(v, epsilon_greedy(defensive_mixture(v_star, v0, 0.5),
                                                 d.omega, 1e-3))
    assert "defensive" not in pub.params()
    with pytest.raises(ValueError, match="defensive"):
        OasisDesign(None, pred, s, np.random.default_rng(2), defensive=1.0)


def test_posterior_updates_eq10_and_decaying_prior_remark4():
    d = tiny(epsilon=1e-3)
    q0 = d.instrumental()[0] / 2
    d.update(Draw(0, q0, 0), 1)
    # one label in stratum 0: both forms give (1 + 1.6)/(1 + 2) = 13/15
    assert d.pi_hat()[0] == pytest.approx(13 / 15)
    assert d.f_hat() == pytest.approx(1.0)   # eq. 3 with one true positive
    # v after the update, by hand with F̂ = 1 and π̂ = [13/15, 0.4, 0.1]:
    raw = np.array([0.5 * math.sqrt(2 / 15),
                    0.5 * 0.5 * math.sqrt(0.4) + 0.5 * 0.5 * math.sqrt(0.6),
                    0.5 * math.sqrt(0.1)])
    np.testing.assert_allclose(d.instrumental(), 1e-3 / 3 + (1 - 1e-3) * raw / raw.sum())
    np.testing.assert_allclose(raw / raw.sum(), [0.263664, 0.507997, 0.228339], atol=2e-6)
    d.update(Draw(1, d.instrumental()[0] / 2, 0), 0)
    # two labels (1, 0): decaying prior (1 + 1.6/2)/(2 + 2/2) = 0.6; fixed prior 2.6/4 = 0.65
    assert d.pi_hat()[0] == pytest.approx(0.6)
    e = tiny(epsilon=1e-3, decaying_prior=False)
    e.update(Draw(0, 0.2, 0), 1)
    e.update(Draw(1, 0.2, 0), 0)
    assert e.pi_hat()[0] == pytest.approx(0.65)
    np.testing.assert_allclose(posterior_mean(np.array([0.0]), np.array([0.0]), np.array([0.3]),
                                              np.array([0.7]), True), [0.3])


def _raj_by_hand(items: list[int], q: np.ndarray, v: np.ndarray) -> float:
    """Raj's ordered estimator over draws with replacement, one draw at a time: the sum of v
    over the items labelled before the draw, plus v/q if its item is new; the mean of those."""
    seen: set[int] = set()
    labelled, terms = 0.0, []
    for i, qi, vi in zip(items, q, v):
        terms.append(labelled + (vi / qi if i not in seen else 0.0))
        if i not in seen:
            seen.add(i)
            labelled += vi
    return float(np.mean(terms))


def test_f_hat_is_eq3_and_the_estimate_raj_s_ordered_ratio():
    d = tiny(epsilon=0.2)
    labels = np.array([1, 0, 1, 1, 0, 0])
    col = collect(d, lambda i: int(labels[i]), budget=6)
    q = np.array([dr.probability for dr in col.draws])
    # Draw.probability = v_k / |P_k|, so w = (1/N)/q = ω_k / v_k (Algorithm 3 line 8)
    w = (1 / 6) / q
    ell = np.array(col.labels, dtype=float)
    yhat = PRED[[dr.index for dr in col.draws]].astype(float)
    eq3 = np.sum(w * ell * yhat) / (0.5 * np.sum(w * yhat) + 0.5 * np.sum(w * ell))
    assert d.f_hat() == pytest.approx(eq3)        # the design steers by eq. 3, as published
    hh = f_measure(WithReplacementSample(q), ell, yhat, 0.5)
    assert hh.estimate == pytest.approx(eq3)      # Hansen–Hurwitz without the draws' items
    # a budget of the whole pool labels every item of every stratum: a census, whose F1 is
    # known exactly (the Hansen–Hurwitz ratio of the draws would still vary with them)
    census = estimate_all(d, col, PRED, 0.95)["f1"]
    assert census.method == "census"
    assert census.estimate == census.ci_low == census.ci_high == \
        pytest.approx(true_f_measure(labels, PRED, 0.5))
    part = collect(tiny(epsilon=0.2), lambda i: int(labels[i]), budget=4)
    qp = np.array([dr.probability for dr in part.draws])
    items = [dr.index for dr in part.draws]
    ellp = np.array(part.labels, dtype=float)
    yp = PRED[items].astype(float)
    raj = _raj_by_hand(items, qp, ellp * yp) / (0.5 * _raj_by_hand(items, qp, yp)
                                                + 0.5 * _raj_by_hand(items, qp, ellp))
    assert len(set(items)) < len(items)           # an item drawn again: Raj's differs there
    assert estimate_all(tiny(epsilon=0.2), part, PRED, 0.95)["f1"].estimate == \
        pytest.approx(raj)


def test_same_seed_same_draws_and_params_rebuild():
    g = np.random.default_rng(7)
    n = 5000
    s = g.normal(size=n)
    pred = (s > 1.0).astype(np.int8)
    y = (g.random(n) < logistic(2 * s - 3)).astype(np.int8)

    def run(seed: int, **kw) -> list[int]:
        d = OasisDesign(None, pred, s, np.random.default_rng(seed), **kw)
        return [dr.index for dr in collect(d, lambda i: int(y[i]), 200).draws]

    assert run(3) == run(3)
    assert run(3) != run(4)
    d = OasisDesign(None, pred, s, np.random.default_rng(3), n_strata=20, epsilon=0.01)
    p = d.params()
    assert p["design"] == "oasis" and p["n_strata"] == 20 and p["epsilon"] == 0.01
    kw = {k: p[k] for k in ("alpha", "epsilon", "n_strata", "strata", "prior_strength",
                            "decaying_prior", "threshold", "v_star", "n_bins")}
    assert run(3, **kw) == run(3, n_strata=20, epsilon=0.01)


def test_prior_from_scores_threshold_and_bad_input():
    s = np.array([3.0, 1.0, -1.0, -3.0])
    pred = np.array([1, 1, 0, 0])
    d = OasisDesign(None, pred, s, np.random.default_rng(0), n_strata=2, strata="equal",
                    threshold=1.0, cross_fit=False)
    np.testing.assert_allclose(d.pi0, [np.mean(logistic(s[:2] - 1)), np.mean(logistic(s[2:] - 1))])
    with pytest.raises(ValueError, match="threshold"):
        OasisDesign(np.full(4, 0.5), pred, s, np.random.default_rng(0), threshold=1.0)
    with pytest.raises(ValueError, match="epsilon"):
        OasisDesign(None, pred, s, np.random.default_rng(0), epsilon=0.0)
    with pytest.raises(ValueError, match="score or a probability"):
        OasisDesign(None, pred, None, np.random.default_rng(0))
    with pytest.raises(ValueError, match="finite"):
        OasisDesign(None, pred, np.array([1.0, np.nan, 0.0, 0.0]), np.random.default_rng(0))
    assert initial_f(0.5, np.ones(2), np.zeros(2), np.zeros(2)) == 0.5   # 0/0: the package's 0.5


def test_draw_probability_is_v_over_stratum_size_and_strata_table():
    g = np.random.default_rng(1)
    s = g.normal(size=2000)
    d = OasisDesign(None, (s > 1).astype(int), s, np.random.default_rng(2))
    v = d.instrumental().copy()
    dr = d.draw()
    assert dr.probability == pytest.approx(v[dr.stratum] / d.strata.sizes[dr.stratum])
    assert dr.index in d.strata.members(dr.stratum)
    table = d.strata_table()
    assert len(table) == d.strata.count
    assert sum(r["instrumental_probability"] for r in table) == pytest.approx(1.0)


# --- consistency by seeded simulation (seed 002 §5) -------------------------------------------

def synthetic_pool(n: int = 100_000, rate: float = 0.02, seed: int = 12345):
    """Labels ~ Bernoulli(rate); score N(+1.5, 1) for matches, N(−1.5, 1) otherwise;
    prediction = score > 0.8. Uncalibrated scores: the prior is logistic(score)."""
    g = np.random.default_rng(seed)
    y = (g.random(n) < rate).astype(np.int8)
    s = np.where(y == 1, g.normal(1.5, 1.0, n), g.normal(-1.5, 1.0, n))
    return s, (s > 0.8).astype(np.int8), y


def replicate(prior, pred, score, truth_labels, budget: int, reps: int, seed: int = 0,
              strata: Strata | None = None) -> np.ndarray:
    """Final F1 estimates of ``reps`` seeded OASIS runs (seeds seed, seed+1, …)."""
    strata = strata if strata is not None else csf_strata(
        score if score is not None else prior, 30)
    out = np.full(reps, np.nan)
    designs = [OasisDesign(prior, pred, score, np.random.default_rng(seed + r),
                           precomputed_strata=strata) for r in range(reps)]
    for r, (d, col) in enumerate(zip(designs, collect_many(designs, truth_labels, budget))):
        e = estimate_all(d, col, pred, 0.95, {"f1": 0.5})["f1"]
        out[r] = e.estimate if e.defined else np.nan
    return out


def check_consistency(est_by_budget: dict[int, np.ndarray], truth: float, moderate: int) -> None:
    """Every run defined and the mean within 3 SE of the truth at ``moderate``; RMSE over the
    defined runs (the convention of :class:`assay.simulation.Replicates`) strictly falling with
    the budget, and the number of undefined runs (F1 = 0/0: no positive labelled yet) never
    rising."""
    e = est_by_budget[moderate]
    assert not np.isnan(e).any()
    se = e.std(ddof=1) / math.sqrt(e.size)
    assert abs(e.mean() - truth) <= 3 * se, (e.mean(), truth, se)
    budgets = sorted(est_by_budget)
    rmse = [float(np.sqrt(np.nanmean((est_by_budget[b] - truth) ** 2))) for b in budgets]
    assert all(a > b for a, b in zip(rmse, rmse[1:])), dict(zip(budgets, rmse))
    undefined = [int(np.isnan(est_by_budget[b]).sum()) for b in budgets]
    assert all(a >= b for a, b in zip(undefined, undefined[1:])), dict(zip(budgets, undefined))


@pytest.mark.slow
def test_consistency_synthetic():
    """40 repetitions at 500, 2000 and 8000 labels on a 100,000-item pool (2% matches)."""
    s, pred, y = synthetic_pool()
    truth = true_f_measure(y, pred, 0.5)
    strata = csf_strata(s, 30)
    est = {b: replicate(None, pred, s, y, b, 40, strata=strata) for b in (500, 2000, 8000)}
    check_consistency(est, truth, moderate=2000)
    check_consistency(est, truth, moderate=8000)


@pytest.mark.parametrize("name", ["restaurant", "abt_buy"])
def test_consistency_real_pools(er_frames, name):
    """40 repetitions at 250, 500 and 1000 labels; calibrated probability column as prior."""
    df = er_frames[name]
    pred, y = df["prediction"].to_numpy(), df["label"].to_numpy()
    truth = true_f_measure(y, pred, 0.5)
    prior, score = df["probability"].to_numpy(), df["score"].to_numpy()
    strata = csf_strata(score, 30)
    est = {b: replicate(prior, pred, score, y, b, 40, strata=strata) for b in (250, 500, 1000)}
    check_consistency(est, truth, moderate=1000)


@pytest.mark.slow
@pytest.mark.parametrize("name", ["restaurant", "dblp_acm", "abt_buy", "amazon_google",
                                  "tweets100k"])
def test_consistency_real_pools_slow(er_frames, name):
    """100 repetitions at 250, 1000 and 2000 labels on every real pool (score-stratified; the
    probability column as prior where the pool has one, else logistic(score)).

    restaurant (45 matches in 149,747 pairs, all in the top stratum of 559 items) failed from
    the defensive mixture's default (84f488b) to session 20, a strict xfail: at 2,000 labels
    the Hansen–Hurwitz F1 bias was -0.0037 ± 0.0012 on seeds 0-99 (about -0.0022 ± 0.0007
    over 300, 3 SE; s.d. 0.0116). Not the ratio's second-order bias (a Taylor or jackknife
    correction moved it 0.00015) nor the stopping rule (the same at a fixed 5,000 draws): the
    weights ω/v of the top stratum's thousands of draws change with the labels, and their
    spread dominates. Raj's ordered estimator (assay.core.totals.WithReplacementSample.terms),
    which counts each labelled item once at its value, gives -0.0010 ± 0.0006, -0.0005 ±
    0.0005, +0.0002 ± 0.0005 on seeds 0-99, 100-199, 200-299 (s.d. 0.0046-0.0056)."""
    df = er_frames[name]
    pred, y = df["prediction"].to_numpy(), df["label"].to_numpy()
    truth = true_f_measure(y, pred, 0.5)
    score = df["score"].to_numpy()
    prior = df["probability"].to_numpy() if "probability" in df.columns else None
    strata = csf_strata(score, 30)
    est = {b: replicate(prior, pred, score, y, b, 100, strata=strata) for b in (250, 1000, 2000)}
    check_consistency(est, truth, moderate=2000)


@pytest.mark.slow
def test_interval_coverage_synthetic():
    """200 repetitions at 2000 labels: the 95% intervals of estimate_all (Raj's ordered
    terms' linearised variance over the adaptive draws) cover the true F1 within the binomial tolerance
    (3 standard errors) of 0.95."""
    s, pred, y = synthetic_pool()
    truth = true_f_measure(y, pred, 0.5)
    strata = csf_strata(s, 30)
    reps, hits = 200, 0
    designs = [OasisDesign(None, pred, s, np.random.default_rng(5000 + r),
                           precomputed_strata=strata) for r in range(reps)]
    for d, col in zip(designs, collect_many(designs, y, 2000)):
        hits += estimate_all(d, col, pred, 0.95, {"f1": 0.5})["f1"].covers(truth)
    tol = 3 * math.sqrt(0.95 * 0.05 / reps)
    assert abs(hits / reps - 0.95) <= tol, hits / reps


# --- cross-fitting: a stratum's draws never depend on its own labels (issue 11) --------------

def test_cross_fit_halves_allocate_from_the_sibling_labels():
    g = np.random.default_rng(4)
    s = g.normal(size=3000)
    pred = (s > 1.5).astype(int)
    d = OasisDesign(None, pred, s, np.random.default_rng(0), n_strata=5, cross_fit=True)
    assert d.strata.count == 2 * d.base_strata_count
    assert d.params()["cross_fit"] and np.array_equal(d.stratum_sizes(), d.strata.sizes)
    halves = [set(d.strata.members(h).tolist()) for h in range(d.strata.count)]
    assert set().union(*halves) == set(range(3000)) and sum(map(len, halves)) == 3000
    h = d.strata.count - 1                         # a bottom half and its sibling
    sib = int(d._sibling[h])
    before = d.allocation_rate().copy()
    item = int(d.strata.members(h)[0])
    d.update(Draw(item, 1e-3, h), 1)               # a match labelled in half h ...
    after = d.allocation_rate()
    assert after[h] == before[h]                   # ... leaves h's own allocation rate alone
    assert after[sib] > before[sib]                # ... and raises its sibling's
    assert d.pi_hat()[h] > before[h]               # (h's own posterior learns, as published)
    published = OasisDesign(None, pred, s, np.random.default_rng(0), n_strata=5)
    assert published.strata.count == d.base_strata_count and published.stratum_sizes() is None
    assert "cross_fit" not in published.params()


def test_repeat_draws_add_nothing_to_the_distinct_item_estimate():
    g = np.random.default_rng(8)
    s = g.normal(size=4000)
    pred = (s > 1.0).astype(int)
    y = (g.random(4000) < logistic(2 * s - 2)).astype(int)
    d = OasisDesign(None, pred, s, np.random.default_rng(1), n_strata=6, cross_fit=True)
    col = collect(d, lambda i: int(y[i]), 300)
    assert len(col.draws) > col.distinct            # OASIS repeats items (with replacement)
    first = {}
    for dr, lab in zip(col.draws, col.labels):
        first.setdefault(dr.index, (dr, lab))
    once = [v[0] for v in first.values()]
    from assay.estimation import estimate_draws
    a = estimate_all(d, col, pred, 0.95)
    b = estimate_draws(d, once, [v[1] for v in first.values()], pred, 0.95)
    for m in ("precision", "recall", "f1"):
        assert (a[m].estimate, a[m].ci_low, a[m].ci_high) == pytest.approx(
            (b[m].estimate, b[m].ci_low, b[m].ci_high), rel=1e-12)


@pytest.mark.slow
def test_cross_fitting_removes_the_own_label_bias_of_the_distinct_item_estimate():
    """Issue 11, the cause: the distinct items of a stratum are a simple random sample of it
    only if the number of its draws does not depend on its own labels. Control world of
    assay.worlds (world seed 11), 2,000 labels, run seeds 7000–7029. Estimated as the stratified
    sample of the distinct items, the published design's count of false negatives is biased
    low (its allocation to a stratum rises with the false negatives found there: 5 in a
    741-item stratum came out as 2.3 on average over 100 runs, all 82 as 78.3); cross-fitted,
    the same estimator is unbiased (within 3 standard errors over 30 runs)."""
    from assay.core.totals import DistinctStratifiedSample
    from assay.core.types import Draws
    from assay.worlds import WORLDS
    w = WORLDS["realistic"](np.random.default_rng(11))
    f = w.frame
    s, pred, y = f["score"].to_numpy(), f["prediction"].to_numpy(), f["label"].to_numpy()
    fn_true = int(np.sum(y * (1 - pred)))
    strata = csf_strata(s, 30)
    reps = 30
    fn = {False: [], True: []}
    for cross_fit in fn:
        designs = [OasisDesign(None, pred, s, np.random.default_rng(7000 + r),
                               precomputed_strata=strata, cross_fit=cross_fit, defensive=0.0)
                   for r in range(reps)]
        for d, col in zip(designs, collect_many(designs, y, 2000)):
            dr = Draws.of(col.draws)
            sample = DistinctStratifiedSample.of(dr.item, dr.stratum, d.strata.sizes)
            lab = np.asarray(col.labels)
            fn[cross_fit].append(sample.total(lab * (1 - pred[dr.item]))[0])
    own, crossed = np.array(fn[False]), np.array(fn[True])
    assert fn_true - own.mean() > 3 * own.std(ddof=1) / math.sqrt(reps), own.mean()
    assert abs(crossed.mean() - fn_true) <= 3 * crossed.std(ddof=1) / math.sqrt(reps), \
        crossed.mean()


def test_settings_choose_the_published_design_or_the_defensive_default():
    """OasisSettings.defensive (0.5 by default; 0: the published design) reaches the design
    through the settings and the legacy options dict, and is validated."""
    from assay.designs import build_design
    from assay.designs.settings import OasisSettings, settings_from_options
    from assay.errors import AssayInputError
    assert OasisSettings().defensive == 0.5
    assert settings_from_options("oasis", {"defensive": 0.0}).defensive == 0.0
    with pytest.raises(AssayInputError, match="defensive"):
        OasisSettings(defensive=1.0)
    s = SCORE
    for d, expected in ((None, 0.5), (0.0, 0.0)):
        opts = {} if d is None else {"defensive": d}
        des = build_design("oasis", n=6, predictions=PRED, score=s, prior=None, budget=3,
                           rng=np.random.default_rng(0), options=opts)
        assert des.defensive == expected


@pytest.mark.slow
@pytest.mark.parametrize("world,budget,seed", [("realistic", 1000, 9000),
                                               ("realistic", 2000, 9000), ("ties", 500, 7000)])
def test_default_interval_coverage_on_an_untuned_world(world, budget, seed):
    """Issue 11: the default (defensive mixture d = 0.5, detection floors, the normal rule's
    failures counted within strata) on worlds of :mod:`assay.worlds` built from world seed
    12 (the design was chosen on seed 11), 200 runs (seeds ``seed`` + r): the primary 95%
    intervals of precision, recall and F1 cover in at least 0.95 − 3·SE of the runs,
    SE = √(0.95·0.05/200) = 0.0154 (0.904). Measured (precision / recall / F1):
    realistic at 1,000 labels 0.995 / 0.950 / 0.995 (session 11's default, without floors and
    count rule: 0.965 / 0.925 / 0.955; published, defensive=0: 0.965 / 0.910 / 0.915);
    realistic at 2,000 1.000 / 1.000 / 1.000 (before: 0.995 / 0.855 / 0.905, published
    1.000 / 0.395 / 0.505); ties at 500 (seeds 7000 + r) 0.995 / 0.920 / 0.975."""
    from assay.simulation import simulate
    from assay.worlds import WORLDS
    f = WORLDS[world](np.random.default_rng(12)).frame
    reps = 200
    res = simulate("oasis", f["label"].to_numpy(), f["prediction"].to_numpy(),
                   f["score"].to_numpy(), None, budget, reps, seed=seed)
    floor = 0.95 - 3 * math.sqrt(0.95 * 0.05 / reps)
    cover = {m: r.coverage() for m, r in res.items()}
    assert all(r.n_defined == reps for r in res.values())
    assert min(cover.values()) >= floor, cover


def test_detection_floors_hold_up_the_strata_below_the_top():
    """Issue 11: with a budget, OASIS gives the strata from the top down to the last one
    granted a detection floor (:func:`assay.designs.oasis.detection_shares`, the stratified
    design's floors) a share of draws φ_k that no label takes away until the stratum has
    φ_k·budget distinct labelled items: v ≥ φ/(1 + Σφ) over the floors still unmet, after a
    run of zeros below the top (which, as published, starves those strata: Remark 4). Without
    a budget, or with ``floors=False``, there are none; a run stored before the setting
    existed replays without them."""
    from assay.designs import build_design
    from assay.designs.settings import OasisSettings, settings_from_dict
    rng = np.random.default_rng(4)
    n = 20_000
    score = rng.normal(size=n)
    pred = (score > 2.2).astype(np.int64)
    prior = np.where(pred == 1, 0.8, 1e-4)
    des = OasisDesign(prior, pred, score, np.random.default_rng(0), budget=500)
    phi = des.phi
    assert phi.sum() > 0 and phi[1] > 0
    granted = np.flatnonzero(phi > 0)
    assert np.array_equal(granted, np.arange(granted.size))       # from the top, no gap
    for _ in range(300):
        d = des.draw()
        des.update(d, int(d.stratum == 0 and pred[d.index] == 1))
    v, live = des.instrumental(), des.active_floors()
    assert np.all(v >= live / (1.0 + live.sum()) - 1e-12)
    assert v.sum() == pytest.approx(1.0)
    done = des._labelled >= np.ceil(phi * 500 - 1e-9)     # a floor is paid in labels:
    assert np.all(live[done] == 0) and np.all(live[~done] == phi[~done])   # held until met
    assert OasisDesign(prior, pred, score, np.random.default_rng(0)).phi.sum() == 0.0
    assert OasisSettings().floors is True
    stored = OasisSettings().to_dict()
    del stored["floors"]
    assert settings_from_dict(stored).floors is False
    kw = dict(n=n, predictions=pred, score=score, prior=prior, budget=500,
              rng=np.random.default_rng(0))
    assert build_design(OasisSettings(), **kw).phi.sum() == pytest.approx(phi.sum())
    assert build_design(OasisSettings(floors=False), **kw).phi.sum() == 0.0
    assert "detection_floors" in des.params()


def test_the_count_rule_ignores_failures_in_strata_labelled_in_full():
    """OASIS's draws are uniform within strata, so the normal rule's ten failures are counted
    as the stratified design's (:func:`assay.core.rule_counts.moving_counts`): a false
    negative in a stratum whose items are all labelled counts nothing, one in a stratum
    labelled in part counts 1 − f_h (once, however often drawn)."""
    from assay.core.measures import f_measures
    rng = np.random.default_rng(2)
    top = np.arange(40)                                   # stratum 0: 40 items, all labelled
    below = 40 + rng.choice(4000, 60, replace=False)      # stratum 1: 60 of 4,000 labelled
    item = np.concatenate([top, top[:10], below])
    stratum = np.concatenate([np.zeros(50, int), np.ones(60, int)])
    q = np.where(stratum == 0, 0.6 / 40, 0.4 / 4000)
    ell = np.concatenate([np.r_[np.ones(30), np.zeros(10)], np.ones(10), np.zeros(60)])
    yhat = np.concatenate([np.r_[np.ones(15), np.zeros(25)], np.ones(10), np.zeros(60)])
    plain = f_measures(WithReplacementSample(q), ell, yhat, 0.0)[0]
    strat = f_measures(WithReplacementSample(q, stratum, item, np.array([40, 4000])), ell,
                       yhat, 0.0)[0]
    assert plain.method == "delta"          # 15 distinct false negatives: the rule holds …
    assert strat.method == "exact"          # … but all in a census stratum: none moves R̂
    assert strat.estimate == plain.estimate
    assert strat.ci_high - strat.ci_low > plain.ci_high - plain.ci_low

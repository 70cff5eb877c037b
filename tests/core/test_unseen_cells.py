"""The variance of what a stratum's draws saw none of (:mod:`assay.core.unseen_cells`)."""
from __future__ import annotations

import math

import numpy as np
import pytest

from assay.core.measures import f_measures
from assay.core.totals import StratifiedSample
from assay.core.unseen_cells import unseen_cell_variance

def _off_score_design():
    """The off_score world (world seed 11) and the stratified design's strata and n_h at
    2,000 labels: 6 of its 82 false negatives lie in two strata below the top, labelled 79
    of 741 and 116 of 1,088 items."""
    import assay
    from assay.designs import build_design
    from assay.designs.settings import StratifiedSettings
    from assay.worlds import WORLDS
    w = WORLDS["off_score"](np.random.default_rng(11))
    pool = assay.load_pool(w.frame.drop(columns="label"))
    des = build_design(StratifiedSettings(), n=pool.size, predictions=pool.prediction,
                       score=pool.score, prior=pool.prior_probability(), budget=2000,
                       rng=np.random.default_rng(0))
    return w, pool, des


def _sample(rng, w, pool, des):
    """One stratified sample of the design's n_h: the sample, labels, predictions, prior."""
    st = des.strata
    items = np.concatenate([rng.choice(st.members(h), int(des.n_h[h]), replace=False)
                            for h in range(st.count)])
    stratum = np.repeat(np.arange(st.count), des.n_h)
    return (StratifiedSample(stratum=stratum, sizes=st.sizes), w.frame["label"].to_numpy()[items],
            pool.prediction[items], pool.prior_probability()[items])


def test_a_prior_that_says_empty_and_a_census_add_nothing():
    s = StratifiedSample(stratum=np.repeat([0, 1], 5), sizes=np.array([5, 100]))
    zeros = np.zeros(10)
    prior = np.r_[np.full(5, 0.5), np.zeros(5)]      # stratum 0 is a census, 1 says empty
    v = unseen_cell_variance(s, zeros, np.zeros((10, 1)), prior, np.array([0.5]),
                             np.array([10.0]), 0.0)
    assert v.tolist() == [0.0]


def _expected(unseen, p, g):
    return (unseen * p * (1 - p) + (unseen * p) ** 2) * g * g


def _added(counts, sizes, labels, prior, r, x_total, alpha=0.0, predicted=0):
    """V_add of one system whose draws of two strata (``counts`` of ``sizes``) are all
    predicted ``predicted``."""
    s = StratifiedSample(stratum=np.repeat([0, 1], counts), sizes=np.array(sizes))
    n = sum(counts)
    return float(unseen_cell_variance(s, labels, np.full((n, 1), float(predicted)), prior,
                                      np.array([r]), np.array([x_total]), alpha)[0])


def test_a_prior_the_labels_contradict_is_recalibrated_on_them():
    # stratum 0: 100 of 200 labelled, 10 matches where the prior expects 50; stratum 1: 40 of
    # 1,000 labelled, none seen, the prior's rate 0.05: recalibrated by κ = 20.5 / 150.5
    v = _added([100, 40], [200, 1000], np.r_[np.ones(10), np.zeros(130)],
               np.r_[np.full(100, 0.5), np.full(40, 0.05)], 0.5, 20.0)
    kappa = (10 * 2 + 0.5) / (100 * 2 * 0.5 + 40 * 25 * 0.05 + 0.5)
    assert math.isclose(v, _expected(960, kappa * 0.05, 0.5 / 20), rel_tol=1e-12)


def test_a_cell_beyond_the_draws_reach_is_left_to_the_assumption_free_interval():
    # 2 labels of 5,000 items at a rate of 0.01: the draws expect 0.02 matches (< REACH)
    assert _added([100, 2], [100, 5000], np.r_[np.ones(10), np.zeros(92)],
                  np.r_[np.full(100, 0.1), np.full(2, 0.01)], 0.5, 10.0) == 0.0


def test_many_draws_that_all_say_no_overrule_a_prior_that_says_yes():
    # the prior is right in the top stratum (κ ≈ 1), wrong in stratum 1: 500 of 1,000 labelled,
    # none a match, where it says 0.3: the Jeffreys mean ½ / 501 of those labels wins
    v = _added([1000, 500], [10000, 1000], np.r_[np.ones(300), np.zeros(1200)],
               np.full(1500, 0.3), 0.5, 3000.0)
    assert math.isclose(v, _expected(500, 0.5 / 501, 0.5 / 3000), rel_tol=1e-12)


def test_precision_counts_unseen_false_positives_of_a_stratum_of_true_positives():
    # predicted positives: stratum 0, 50 of 100 labelled, 5 false positives (the prior's 0.9
    # says so); stratum 1, 20 of 200 labelled, all true positives: its 180 unlabelled ones
    # hold false positives at κ₀·0.1, capped at ½/21
    v = _added([50, 20], [100, 200], np.r_[np.zeros(5), np.ones(65)], np.full(70, 0.9), 0.95,
               300.0, alpha=1.0, predicted=1)
    kappa = (5 * 2 + 0.5) / (50 * 2 * 0.1 + 20 * 10 * 0.1 + 0.5)
    p = min(kappa * 0.1, 0.5 / 21)
    assert math.isclose(v, _expected(180, p, 1 / 300), rel_tol=1e-12)


@pytest.mark.slow
def test_recall_covers_where_a_few_false_negatives_hide_in_lightly_labelled_strata():
    """The off_score world's stratified design at 2,000 labels, 2,000 stratified samples of
    its n_h (seed 17): recall's interval without the prior covers about 0.917 (module
    docstring); with it, at least 0.95 − 3·√(.95·.05/2000) = 0.935, its mean half-width at
    most 15% wider."""
    w, pool, des = _off_score_design()
    rng = np.random.default_rng(17)
    truth = w.truth["recall"]
    reps = 2000
    hit = {False: 0, True: 0}
    width = {False: 0.0, True: 0.0}
    for _ in range(reps):
        s, lab, pred, pri = _sample(rng, w, pool, des)
        for use in (False, True):
            e = f_measures(s, lab, pred, 0.0, prior=pri if use else None)[0]
            hit[use] += e.ci_low <= truth <= e.ci_high
            width[use] += (e.ci_high - e.ci_low) / 2 / reps
    assert hit[False] / reps < 0.935                  # the failure this is for
    assert hit[True] / reps >= 0.95 - 3 * math.sqrt(0.95 * 0.05 / reps), hit
    assert width[True] <= 1.15 * width[False], width


def test_draws_with_replacement_within_strata_take_the_variance_of_their_distinct_items():
    """OASIS: draws made uniformly within strata (repeats free) add, over their distinct items
    as the stratified sample of them, what the stratified design's draws would add."""
    from assay.core.totals import WithReplacementSample
    rng = np.random.default_rng(4)
    sizes = np.array([200, 2000])
    # stratum 0: 600 draws of its 200 items (all labelled; of the 160 predicted negatives, 64
    # are matches where the prior says 0.4); stratum 1: 200 draws of 2,000 items, none a match,
    # where the prior says 0.002 (κ from stratum 0's labels ≈ 0.9)
    item = np.r_[np.arange(200), rng.integers(0, 200, 400), 200 + rng.integers(0, 2000, 200)]
    stratum = (item >= 200).astype(np.int64)
    truth = np.r_[np.ones(20), np.zeros(20), np.ones(64), np.zeros(96), np.zeros(2000)]
    prior = np.r_[np.full(200, 0.4), np.full(2000, 0.002)]
    q = np.where(stratum == 0, 0.75 / 200, 0.25 / 2000)
    s = WithReplacementSample(q, stratum, item, sizes)
    yhat = (item < 40).astype(float)[:, None]
    plain = f_measures(s, truth[item], yhat, 0.0)[0]
    wide = f_measures(s, truth[item], yhat, 0.0, prior=prior[item])[0]
    assert wide.estimate == plain.estimate
    sub, first = s.distinct_strata()
    r = np.array([plain.estimate])
    x_tot = s.total(truth[item][:, None])[0]
    add = unseen_cell_variance(sub, truth[item][first], yhat[first], prior[item][first], r,
                               x_tot, 0.0)[0]
    assert add > 0 and math.isclose(wide.std_error ** 2, plain.std_error ** 2 + add,
                                    rel_tol=1e-9)
    assert wide.ci_high - wide.ci_low > plain.ci_high - plain.ci_low

"""The adversarial worlds (assay.worlds, issue 11 must-have 5): reproducible from their seed,
with the properties their docstrings state, and the truth computed right. Fast (a few seconds)."""
from __future__ import annotations


import numpy as np
import pandas as pd
import pytest
from scipy.stats import mannwhitneyu

from assay.core.measures import true_f_measure
from assay.stratified import allocate_adjudication, allocate_by_rule, estimate_arrays
from assay.simulation import simulate_two_phase as simulate
from assay.worlds import (WORLDS, assessor_error_world, knee_rate, make_duplicate_scores,
                          make_miscalibrated, make_off_score, make_non_monotone, make_realistic,
                          make_score_blind, make_second_family, make_ties, make_ultra_rare,
                          make_weak_balanced, truth_of)

SMALL = {name: (200_000 if name == "ultra_rare" else 20_000) for name in WORLDS}


def rng(seed: int) -> np.random.Generator:
    return np.random.default_rng(seed)


def by_rank(w) -> pd.DataFrame:
    """The frame in the generator's rank order (rank 0 first)."""
    return w.frame.iloc[np.argsort(w.facts["rank"])].reset_index(drop=True)


def test_registry_defaults_and_docstrings():
    assert set(WORLDS) == {"realistic", "second_family", "score_blind", "ultra_rare", "ties",
                           "duplicate_scores", "weak_balanced", "miscalibrated",
                           "miscalibrated_probability", "non_monotone", "off_score",
                           "deep_bump"}
    for name, gen in WORLDS.items():
        assert gen.keywords["n"] == (1_000_000 if name == "ultra_rare" else 100_000)
        doc = gen.func.__doc__
        assert "breaks" in doc.lower() and ">>>" in doc, name


@pytest.mark.parametrize("name", sorted(WORLDS))
def test_reproducible_from_seed_and_well_formed(name):
    gen = WORLDS[name]
    a, b, c = (gen(rng(s), n=SMALL[name]) for s in (5, 5, 6))
    pd.testing.assert_frame_equal(a.frame, b.frame)
    assert a.truth == b.truth and a.params == b.params
    assert not a.frame["label"].equals(c.frame["label"])
    f = a.frame
    cols = ["id", "prediction", "score", "label"]
    assert list(f.columns) == cols + (["probability"] if name.endswith("probability") else [])
    assert f["id"].map(type).eq(str).all() and f["id"].is_unique
    assert f["prediction"].dtype == np.int8 and f["label"].dtype == np.int8
    assert f["score"].dtype == np.float64 and np.isfinite(f["score"]).all()
    assert set(f["prediction"].unique()) <= {0, 1} and set(f["label"].unique()) <= {0, 1}
    assert a.n == SMALL[name] and sorted(a.facts["rank"]) == list(range(a.n))
    # rows are shuffled: the file order is not the ranking
    assert abs(np.corrcoef(np.arange(a.n), f["score"])[0, 1]) < 0.05


@pytest.mark.parametrize("name", sorted(WORLDS))
def test_truth_is_computed_from_the_frame(name):
    w = WORLDS[name](rng(3), n=SMALL[name])
    y, p = w.frame["label"].to_numpy(), w.frame["prediction"].to_numpy()
    tp = int(((y == 1) & (p == 1)).sum())
    assert w.truth["precision"] == pytest.approx(tp / p.sum(), abs=1e-15)
    assert w.truth["recall"] == pytest.approx(tp / y.sum(), abs=1e-15)
    assert w.truth["f1"] == pytest.approx(true_f_measure(y, p, 0.5), abs=1e-15)
    assert w.facts["matches"] == y.sum() and w.facts["predicted"] == p.sum()


def test_truth_of_edge_cases():
    t = truth_of(np.zeros(4, int), np.array([1, 0, 0, 0]))
    assert np.isnan(t["precision"]) and t["recall"] == 0.0 and t["f1"] == 0.0
    assert truth_of(np.array([1, 1, 1]), np.array([1, 1, 0])) == pytest.approx(
        {"precision": 2 / 3, "recall": 1.0, "f1": 0.8})


def test_realistic_is_the_control():
    """F1 0.6–0.8 over seeds; a strict ranking; a rate that falls with the rank; a calibrated
    score (the expected matches Σ logistic(score) agree with the count)."""
    for seed in range(5):
        w = make_realistic(rng(seed))
        assert 0.6 <= w.truth["f1"] <= 0.8, w.truth
    f = by_rank(w)
    assert f["score"].is_monotonic_decreasing and f["score"].is_unique
    y = f["label"].to_numpy()
    rates = [y[a:b].mean() for a, b in ((0, 150), (150, 450), (450, 1500), (1500, 10_000))]
    assert all(r1 > r2 for r1, r2 in zip(rates, rates[1:])), rates
    assert y[10_000:].sum() <= 3
    expected = (1 / (1 + np.exp(-f["score"]))).sum()
    assert abs(y.sum() - expected) < 4 * np.sqrt(expected)
    assert (f["prediction"].to_numpy() == (np.arange(w.n) < 150)).all()


def test_knee_rate():
    r = knee_rate(1000, 10, 0.5, 2.0)
    assert (r[:10] == 0.5).all() and r[99] == pytest.approx(0.5 * 0.01)
    assert np.all(np.diff(r) <= 0)


def test_off_score_predictions_sit_in_the_band_and_are_false_positives():
    w = make_off_score(rng(1))
    lo, hi = w.facts["band"]
    f = by_rank(w)
    pred = f["prediction"].to_numpy()
    assert pred[:150].all() and not pred[150:lo].any() and not pred[hi:].any()
    assert int(pred[lo:hi].sum()) == w.facts["off_score"] == 64     # 0.3 of 214 predicted
    assert w.facts["off_score_fp"] >= 62                            # rate ~1e-4 in the band
    # the score sorts them where the top family's rate is low: ~40 times below the knee's
    assert float(f["score"].iloc[lo]) < float(f["score"].iloc[150]) - 3.5
    assert 0.55 < w.truth["precision"] < 0.68


def test_second_family_rate_rises_again_in_the_band():
    w = make_second_family(rng(1))
    lo, hi = w.facts["band"]
    assert (lo, hi) == (5_000, 20_000)
    fam = w.facts["family"]
    assert w.facts["second"] / w.facts["matches"] == pytest.approx(0.3, abs=0.01)
    f = by_rank(w)
    y = f["label"].to_numpy()
    ranks = np.sort(w.facts["rank"][fam == 2])
    assert ranks.min() >= lo and ranks.max() < hi
    assert y[lo:hi].mean() > 3 * max(y[2_000:lo].mean(), 1 / (lo - 2_000))
    # ~50 times the top family's rate at the band's start, more below it
    assert y[lo:hi].mean() > 40 * knee_rate(w.n, 150, 0.85, 2.5)[lo]
    assert not w.frame.loc[fam == 2, "prediction"].any()


def test_score_blind_share_and_spread():
    w = make_score_blind(rng(2))
    fam = w.facts["family"]
    assert w.facts["blind"] == (fam == 2).sum()
    assert w.facts["blind"] / w.facts["matches"] == pytest.approx(0.10, abs=0.01)
    r = w.facts["rank"][fam == 2] / w.n            # uniform over the ranking
    assert 0.35 < r.mean() < 0.65 and r.min() < 0.2 and r.max() > 0.8
    # the score ignores them: same scores by rank as the control drawn from the same seed
    ctrl = by_rank(make_realistic(rng(2)))
    assert np.array_equal(by_rank(w)["score"].to_numpy(), ctrl["score"].to_numpy())


def test_ultra_rare_few_dozen_in_a_million():
    w = make_ultra_rare(rng(4))
    assert w.n == 1_000_000 and 24 <= w.facts["matches"] <= 72
    assert w.facts["anywhere"] / w.facts["matches"] == pytest.approx(0.25, abs=0.03)
    r = w.facts["rank"][w.facts["family"] == 2]
    assert r.max() > 500_000 and w.facts["predicted"] == 25


def test_ties_thousands():
    w = make_ties(rng(5))
    s = w.frame["score"]
    counts = s.value_counts()
    assert s.nunique() <= 25 and counts.max() >= 10_000
    assert (counts[counts > 1].sum()) > 0.99 * w.n             # nearly every item is tied
    # the prediction is a threshold on the rounded score: no tie straddles it
    assert w.frame.groupby("score")["prediction"].nunique().max() == 1
    assert 140 <= w.facts["predicted"] <= 170


def test_duplicate_scores_in_the_top_region():
    w = make_duplicate_scores(rng(6))
    f = by_rank(w)
    top, rest = f["score"][:2000], f["score"][2000:]
    assert top.nunique() == 40 and (top.value_counts() == 50).all()
    assert rest.is_unique and top.min() > rest.max()
    assert w.frame.groupby("score")["prediction"].nunique().max() == 1
    assert w.facts["predicted"] == 150


def test_weak_balanced_auc_and_prevalence():
    w = make_weak_balanced(rng(7))
    f = w.frame
    y = f["label"].to_numpy().astype(bool)
    assert f["label"].mean() == pytest.approx(0.5, abs=0.01)
    u = mannwhitneyu(f["score"][y], f["score"][~y]).statistic / (y.sum() * (~y).sum())
    assert u == pytest.approx(0.6, abs=0.01) and w.facts["auc"] == pytest.approx(u, abs=1e-9)
    # the score is calibrated log-odds: deciles' match rate ≈ mean logistic(score)
    q = pd.qcut(f["score"], 10, labels=False)
    p = 1 / (1 + np.exp(-f["score"]))
    obs, exp = f["label"].groupby(q).mean(), p.groupby(q).mean()
    assert np.abs(obs - exp).max() < 0.03
    assert (f["prediction"] == (f["score"] > 0)).all()


def test_miscalibrated_inflates_and_keeps_the_ranking():
    base = make_realistic(rng(8))
    w = make_miscalibrated(rng(8))
    wp = make_miscalibrated(rng(8), probability=True)
    assert w.truth == base.truth and wp.truth == base.truth
    stated = (1 / (1 + np.exp(-w.frame["score"]))).sum()
    assert stated > 20 * w.facts["matches"]
    assert np.array_equal(np.argsort(w.facts["rank"]), np.argsort(base.facts["rank"]))
    pr = wp.frame["probability"]
    assert pr.between(0, 1).all() and np.allclose(pr, 1 / (1 + np.exp(-wp.frame["score"])))
    f = by_rank(w)
    tail = slice(5_000, None)
    assert (1 / (1 + np.exp(-f["score"][tail]))).mean() > 50 * f["label"][tail].mean() + 0.01


def test_non_monotone_dip_and_bump():
    w = make_non_monotone(rng(9))
    y = by_rank(w)["label"].to_numpy()
    assert y[:30].mean() < y[30:150].mean() - 0.2
    bump = y[2000:6000].mean()
    believed = knee_rate(w.n, 150, 0.85, 2.5)
    assert bump > 5 * believed[2000] and bump > 10 * y[6000:12000].mean()
    assert by_rank(w)["score"].is_monotonic_decreasing        # the score does not see it


def test_deep_bump_lies_deeper_and_holds_a_sizeable_share():
    """The bump at ranks 5,000–15,000: ~80 matches, a fifth or more of the world's, at a rate
    many times the believed one there; the score does not see it."""
    w = WORLDS["deep_bump"](rng(9))
    y = by_rank(w)["label"].to_numpy()
    bump = y[5000:15000]
    assert 60 <= bump.sum() <= 110 and bump.sum() >= 0.2 * y.sum()
    assert bump.mean() > 10 * knee_rate(w.n, 150, 0.85, 2.5)[5000]
    assert y[2000:5000].mean() < bump.mean() / 2
    assert by_rank(w)["score"].is_monotonic_decreasing and w.name == "deep_bump"


def test_assessor_error_world_error_in_one_stratum():
    w = assessor_error_world(rng(10))
    c = w.population.counts                  # (unassessable, t0f0, t0f1, t1f0, t1f1)
    assert c[:3, 2].sum() == 0               # no false positive above the bottom stratum
    non, rel = c[3, 1] + c[3, 2], c[3, 3] + c[3, 4]
    assert rel / (non + rel) == pytest.approx(0.001, abs=0.0004)
    assert c[3, 2] / non == pytest.approx(0.02, abs=0.002)
    fn = c[:, 3].sum() / (c[:, 3] + c[:, 4]).sum()
    assert fn == pytest.approx(0.15, abs=0.03)
    assert c[3, 2] > 10 * rel                # false positives swamp the bottom's relevant
    assert (w.assessments, w.adjudications) == (1500, 300)
    # what the double-sampling simulation needs
    n = allocate_by_rule(w.population.sizes, w.assessments, "legal", bottom=3,
                         bottom_share=0.75)
    sc = simulate(w.population, n, w.adjudications, 50, rng(11),
                  allocate=lambda s: allocate_adjudication(s, w.adjudications, run=0))
    est = estimate_arrays(sc)
    assert est["recall"].shape == (50, 2) and np.all(np.isfinite(est["recall_var"]))
    assert np.all((w.truth["recall"] > 0) & (w.truth["recall"] < 1))
    w2 = assessor_error_world(rng(10), fpr_other=(0.03, 0.05, 0.03))
    assert w2.population.counts[:3, 2].sum() > 0

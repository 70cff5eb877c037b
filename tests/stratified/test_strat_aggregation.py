"""Several assessors per item: majority vote, Dawid–Skene (crowd-kit), Fleiss κ,
Krippendorff α, and aggregated labels as the fallible input to double sampling."""
import numpy as np
import pandas as pd
import pytest
from scipy.stats import norm

from assay.stratified import NOT_ADJUDICATED, build_counts, estimate_arrays
from assay.labels.aggregation import (dawid_skene, fleiss_kappa, krippendorff_alpha,
                                          majority_vote)

FPR = np.array([0.05, 0.10, 0.20, 0.02, 0.30])
FNR = np.array([0.10, 0.20, 0.05, 0.30, 0.10])


def _votes(rng, n_items, p=0.3, per_item=5):
    truth = rng.random(n_items) < p
    items, workers, labels = [], [], []
    for w in range(5):
        take = rng.random(n_items) < per_item / 5
        idx = np.flatnonzero(take)
        lab = np.where(truth[idx], rng.random(idx.size) > FNR[w], rng.random(idx.size) < FPR[w])
        items += [f"d{i}" for i in idx]
        workers += [f"w{w}"] * idx.size
        labels += lab.astype(int).tolist()
    return truth, items, workers, labels


def test_majority_vote_ties_and_unassessable():
    items = ["a", "a", "b", "b", "c", "c", "c", "d"]
    workers = ["1", "2", "1", "2", "1", "2", "3", "1"]
    labels = [1, 1, 1, 0, 0, 0, 1, -1]
    mv = majority_vote(items, workers, labels, tie=1).as_dict()
    assert mv == {"a": 1, "b": 1, "c": 0, "d": -1}
    with pytest.raises(ValueError):
        majority_vote(items, workers, labels)
    r1 = majority_vote(items, workers, labels, rng=np.random.default_rng(1)).labels
    r2 = majority_vote(items, workers, labels, rng=np.random.default_rng(1)).labels
    assert np.array_equal(r1, r2)
    with pytest.raises(ValueError):
        majority_vote(["a"], ["1"], [2])


def test_fleiss_by_hand_and_krippendorff_against_crowdkit():
    # 4 items × 3 raters, counts (3,0) (0,3) (2,1) (1,2): P̄ = 2/3, P̄e = 1/2, κ = 1/3
    items = sum([[f"i{k}"] * 3 for k in range(4)], [])
    workers = ["a", "b", "c"] * 4
    labels = [1, 1, 1, 0, 0, 0, 1, 1, 0, 1, 0, 0]
    assert fleiss_kappa(items, workers, labels) == pytest.approx(1 / 3)
    from crowdkit.metrics.data import alpha_krippendorff
    rng = np.random.default_rng(9)
    _, items, workers, labels = _votes(rng, 300, per_item=3)
    ours = krippendorff_alpha(items, workers, labels)
    ref = alpha_krippendorff(pd.DataFrame({"task": items, "worker": workers, "label": labels}))
    assert ours == pytest.approx(ref, abs=1e-9)


def test_dawid_skene_recovers_worker_error_rates():
    """One seeded crowd of 3,000 items × ~5 votes: Dawid–Skene's per-worker false-positive and
    false-negative rates within 0.03 of the truth (binomial SE of each rate ≤ 0.016 at the
    ≥ 600 true-relevant / 1,800 not-relevant items a worker sees), and accuracy above majority
    vote's."""
    rng = np.random.default_rng(12)
    truth, items, workers, labels = _votes(rng, 3000)
    ds = dawid_skene(items, workers, labels)
    for w in range(5):
        assert ds.worker_fpr[f"w{w}"] == pytest.approx(FPR[w], abs=0.03)
        assert ds.worker_fnr[f"w{w}"] == pytest.approx(FNR[w], abs=0.03)
    order = np.array([int(i[1:]) for i in ds.items])
    acc_ds = (ds.labels == truth[order]).mean()
    mv = majority_vote(items, workers, labels, rng=rng)
    acc_mv = (mv.labels == truth[np.array([int(i[1:]) for i in mv.items])]).mean()
    assert acc_ds >= acc_mv


def test_aggregated_labels_feed_double_sampling():
    """The crowd's majority vote is the fallible assessor, a person the authority. One
    stratum of 20,000 documents (p = .1), 800 assessed by three random crowd workers each, 150
    adjudicated at random. 400 seeded repetitions: the double-sampling yield is unbiased
    (within 3 MC SEs), the naive one is not, and the 95% CI covers in 0.95 ± 0.0327 (3 binomial
    SDs at 400)."""
    rng = np.random.default_rng(77)
    M, p, n, m, reps = 20000, 0.1, 800, 150, 400
    truth_pop = rng.random(M) < p
    Y = truth_pop.sum()
    ds_est, ds_var, nv_est = [], [], []
    for _ in range(reps):
        idx = rng.choice(M, n, replace=False)
        t = truth_pop[idx]
        w = np.argsort(rng.random((n, 5)), axis=1)[:, :3]            # three workers per item
        vote = np.where(t[:, None], rng.random((n, 3)) > FNR[w], rng.random((n, 3)) < FPR[w])
        items = np.repeat([f"d{i:04d}" for i in range(n)], 3)
        agg = majority_vote(items, w.ravel().astype(str), vote.ravel().astype(int), tie=0)
        fal = agg.labels                                              # items sorted = index order
        true = np.full(n, NOT_ADJUDICATED)
        pick = rng.choice(n, m, replace=False)
        true[pick] = t[pick].astype(int)
        sc = build_counts([M], np.array([[True]]), np.zeros(n, int), np.zeros(n, int), fal, true)
        a, b = estimate_arrays(sc), estimate_arrays(sc.naive())
        ds_est.append(a["yield"])
        ds_var.append(a["yield_var"])
        nv_est.append(b["yield"])
    ds_est, ds_var, nv_est = map(np.asarray, (ds_est, ds_var, nv_est))
    assert abs(ds_est.mean() - Y) <= 3 * ds_est.std() / np.sqrt(reps)
    assert abs(nv_est.mean() - Y) > 3 * nv_est.std() / np.sqrt(reps)
    cover = np.abs(ds_est - Y) <= norm.ppf(0.975) * np.sqrt(ds_var)
    assert abs(cover.mean() - 0.95) <= 0.0327

"""Importance draws whose false negatives are a few heavy events (assay.core.weight_tiers): the
rule that picks the tiered interval, and recall's coverage on a world whose match rate rises
again below the top (bench/adversarial.py's ``non_monotone`` family) with other world and run
seeds than the bench's."""
from __future__ import annotations

import numpy as np
import pytest
from scipy.special import expit

import assay.core.measures as measures
from assay.core.measures import f_measures
from assay.core.totals import WithReplacementSample
from assay.core.weight_tiers import skew_count, tiered_f_interval
from assay.designs.importance import ImportanceDesign
from assay.worlds import make_non_monotone


def test_applies_only_to_a_skewed_false_negative_total() -> None:
    pred = np.r_[np.ones(80), np.zeros(220)]
    lab = np.r_[np.ones(80), np.zeros(200), 1.0, np.zeros(19)]
    heavy = np.r_[np.full(80, 10.0), np.full(200, 20.0), np.full(20, 400.0)]
    assert skew_count(heavy * lab * (1 - pred)) == 1.0
    assert tiered_f_interval(heavy, lab, pred, 1.0, 0.05) is None        # precision: no FN
    lo, hi = tiered_f_interval(heavy, lab, pred, 0.0, 0.05)
    assert lo < 80 * 10 / (80 * 10 + 400) < hi
    even = np.r_[np.full(80, 10.0), np.full(220, 20.0)]                  # twelve alike: normal
    lab12 = np.r_[np.ones(80), np.ones(12), np.zeros(208)]
    assert skew_count(even * lab12 * (1 - pred)) == 12.0
    assert tiered_f_interval(even, lab12, pred, 0.0, 0.05) is None


def test_estimator_totals_move_the_normal_part_only() -> None:
    w = np.r_[np.full(80, 10.0), np.full(200, 20.0), np.full(20, 400.0)]
    lab = np.r_[np.ones(80), np.ones(30), np.zeros(170), 1.0, np.zeros(19)]
    pred = np.r_[np.ones(80), np.zeros(220)]
    t = w.shape[0]
    hh = (800 / t, 0.0, (600 + 400) / t)
    assert tiered_f_interval(w, lab, pred, 0.0, 0.05, hh) == tiered_f_interval(
        w, lab, pred, 0.0, 0.05)
    lower_tp = tiered_f_interval(w, lab, pred, 0.0, 0.05, (hh[0] * 0.9, 0.0, hh[2]))
    assert lower_tp[1] < tiered_f_interval(w, lab, pred, 0.0, 0.05)[1]


def test_a_covariance_not_positive_definite_by_rounding_keeps_its_variances(monkeypatch) -> None:
    w = np.r_[np.full(80, 10.0), np.full(200, 20.0), np.full(20, 400.0)]
    lab = np.r_[np.ones(80), np.zeros(200), 1.0, np.zeros(19)]
    pred = np.r_[np.ones(80), np.zeros(220)]
    before = tiered_f_interval(w, lab, pred, 0.0, 0.05)

    def fail(*_: object) -> None:
        raise np.linalg.LinAlgError("not positive definite")
    monkeypatch.setattr(np.linalg, "cholesky", fail)
    assert tiered_f_interval(w, lab, pred, 0.0, 0.05) == pytest.approx(before, abs=1e-6)


def _runs(reps: int, world_seed: int, seed: int, budget: int = 2000):
    """Importance draws (the design's own q from logistic(score)) until ``budget`` distinct
    items, as assay.evaluate takes them; yields (sample, labels, predictions, truth)."""
    w = make_non_monotone(np.random.default_rng(world_seed))
    f = w.frame
    lab, pred = f["label"].to_numpy(), f["prediction"].to_numpy()
    truth = float((lab * pred).sum() / lab.sum())
    design = ImportanceDesign(expit(f["score"].to_numpy()), pred, np.random.default_rng(0))
    rng = np.random.default_rng(seed)
    for _ in range(reps):
        d = design.replicate(rng)
        draws, seen = [], set()
        while len(seen) < budget:
            draws.append(d.draw())
            seen.add(draws[-1].index)
        it = np.array([x.index for x in draws])
        q = np.array([x.probability for x in draws])
        yield WithReplacementSample(q=q, item=it, ordered=True), lab[it], pred[it], truth


@pytest.mark.slow
def test_recall_covers_where_the_bump_is_a_few_heavy_draws(monkeypatch) -> None:
    """400 runs on world seed 5 (the bench uses 11): the tiered interval covers recall at
    ≥ 0.93 (0.9675, half-width 0.099, in 99% of the runs); the delta interval it replaces, on
    the same runs, 0.930 at 0.091 (world seed 3, run seed 7: 0.9575 against 0.9275)."""
    samples = list(_runs(400, world_seed=5, seed=23))
    hit, tiers = 0, 0
    for s, lab, pred, truth in samples:
        e = f_measures(s, lab, pred, 0.0)[0]
        hit += int(e.ci_low <= truth <= e.ci_high)
        tiers += int(e.method == "tiers")
    monkeypatch.setattr(measures, "tiered_f_interval", lambda *a, **k: None)
    old = sum(int(e.ci_low <= truth <= e.ci_high) for s, lab, pred, truth in samples
              for e in f_measures(s, lab, pred, 0.0)[:1])
    assert tiers / len(samples) > 0.9
    assert hit / len(samples) >= 0.93
    assert old < hit

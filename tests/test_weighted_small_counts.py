"""Draws with replacement (importance, OASIS): the exact fallback's effective size must reflect
where an unseen failure would hide (assay.core.rule_counts.failure_region_size), not the count
of labelled items in the ratio's domain.

On the real restaurant pool (45 matches in 149,747 pairs, the prior the logistic of a score
that is not a probability) the importance design labels matches among the predicted positives
and almost nothing among the predicted negatives; before, a recall of 1 from those labels got a
Clopper–Pearson interval at the matches' count and covered the true recall (0.889) in 11% of
200 repetitions at 1,000 labels. Seeds other than the benchmark's (1000 + r): 5000 + r.
Tolerance: an exact procedure at 95% over 60 repetitions; we assert ≥ 0.95 − 3·√(.95·.05/60) =
0.866 (a one-sided check: the fallback is conservative by construction).
"""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest


ER = Path(__file__).resolve().parents[2] / "shared" / "data" / "er"
REPS = 60
LOW = 0.95 - 3 * math.sqrt(0.95 * 0.05 / REPS)


def _coverage(pool: str, reps: int = REPS, budget: int = 1000) -> dict[str, float]:
    import assay
    from assay.worlds import truth_of
    f = pd.read_parquet(ER / f"{pool}.parquet")
    f = f.assign(id=[f"r{i}" for i in range(len(f))])
    truth = truth_of(f["prediction"].to_numpy(), f["label"].to_numpy())
    pool_ = assay.load_pool(f[["id", "prediction", "score"]])
    hits = _hits(pool_, f["label"].to_numpy(), truth, "importance", budget, 5000, reps)
    return {m: h / reps for m, h in hits.items()}


def _hits(pool, labels: np.ndarray, truth: dict[str, float], design: str, budget: int,
          seed: int, reps: int) -> dict[str, int]:
    """How often the intervals of ``design`` cover ``truth`` (per measure) over ``reps`` runs
    seeded ``seed`` + r: :func:`assay.simulation.simulate`, whose estimates and intervals are
    :func:`assay.evaluate`'s bit for bit (tests/test_simulation_collect.py)."""
    from assay.simulation import simulate
    score = pool.score if pool.score is not None else pool.probability
    res = simulate(design, labels, pool.prediction, score, pool.prior_probability(), budget,
                   reps, seed=seed)
    return {m: int(np.sum((res[m].ci_low <= t) & (t <= res[m].ci_high)))
            for m, t in truth.items()}


@pytest.mark.slow
def test_importance_recall_interval_covers_where_false_negatives_are_rarely_drawn():
    cov = _coverage("restaurant")
    assert cov["recall"] >= LOW and cov["f1"] >= LOW, cov


def test_the_cap_leaves_well_sampled_ratios_alone():
    """A balanced pool drawn nearly uniformly: the cap is far above the domain's count, so
    the interval is the one of before (delta or exact at the count)."""
    from assay.core.rule_counts import failure_region_size
    from assay.core.totals import WithReplacementSample
    rng = np.random.default_rng(3)
    q = np.full(400, 1 / 1000)
    yhat = rng.integers(0, 2, (400, 1))
    ell = rng.integers(0, 2, 400)
    cap = failure_region_size(WithReplacementSample(q), yhat, ell[:, None].astype(float), 0.0)
    assert cap[0] > 100        # ~200 draws among the predicted negatives × X/N₀ ≈ 1


@pytest.mark.slow
def test_stratified_recall_covers_when_the_false_negatives_below_a_census_are_few():
    """Stratified draws (assay.core.rule_counts.moving_counts): on the ties world the top stratum
    (394 items, 54 false negatives) is labelled in full at 1,000 labels and 19 false negatives
    sit below it at rates of 0.1–2.4%. Counting the census's false negatives toward the delta
    rule's ten gave recall coverage 0.855 (world seed 11, seeds 1000 + r, 200 repetitions;
    0.855 also with world seed 0); with failures counted where the sample is partial, 1.00
    (bench/out/stratified_moving.md). Here another world (seed 5) and seeds 5000 + r, 200
    repetitions: ≥ 0.95 − 3·√(.95·.05/200) = 0.904."""
    reps, hits = 200, _ties_coverage(world_seed=5, budget=1000, reps=200)
    assert all(h / reps >= 0.95 - 3 * math.sqrt(0.95 * 0.05 / reps) for h in hits.values()), hits


def _ties_coverage(world_seed: int, budget: int, reps: int) -> dict[str, int]:
    """How often the default stratified design's recall and F1 intervals cover on the ties
    world of ``world_seed`` over ``reps`` runs (seeds 5000 + r)."""
    import assay
    from assay.worlds import WORLDS
    w = WORLDS["ties"](np.random.default_rng(world_seed))
    pool = assay.load_pool(w.frame.drop(columns=["label"]))
    return _hits(pool, w.frame["label"].to_numpy(), {m: w.truth[m] for m in ("recall", "f1")},
                 "stratified", budget, 5000, reps)


def test_census_failures_do_not_count_toward_the_normal_rule():
    """Ten false negatives in a fully labelled stratum and one in a stratum 30 of 3,000
    labelled: the count the delta rule sees is that one at 1 − f = 0.99; ten in a stratum
    labelled 19 of 20 count 0.5 (the hypergeometric variance's 1 − f)."""
    from assay.core.rule_counts import moving_counts
    from assay.core.totals import StratifiedSample
    stratum = np.array([0] * 20 + [1] * 30)
    ell = np.array([1] * 10 + [0] * 10 + [1] + [0] * 29)
    yhat = np.zeros((50, 1))
    fail, succ = moving_counts(StratifiedSample(stratum, np.array([20, 3000])), ell, yhat, 0.0)
    assert fail[0] == pytest.approx(0.99) and succ[0] > 10**6
    near = StratifiedSample(np.array([0] * 19 + [1] * 30), np.array([20, 3000]))
    fail, _ = moving_counts(near, np.array([1] * 10 + [0] * 9 + [1] + [0] * 29), yhat[:49], 0.0)
    assert fail[0] == pytest.approx(10 * 0.05 + 0.99)


def test_detection_floors_go_top_down_within_their_cost():
    """assay.core.allocation.floored_allocation: the Neyman allocation under bounds; a floor
    is granted to the first stratum below the top that its Neyman share leaves unable to see
    a count that matters; the strata above keep their share (a take-all stays whole); the
    floors stop where the anticipated variance would grow by more than FLOOR_COST; the sum
    is the budget and every n_h lies in [min(2, N_h), N_h]."""
    from assay.core.allocation import (FLOOR_COST, _anticipated_variance, detection_floor,
                                       floored_allocation)
    sizes = np.array([300, 460, 1039, 930, 5000, 30000])
    w = np.array([200.0, 10.0, 8.0, 5.0, 8.0, 20.0])
    plain = floored_allocation(800, sizes, w, 0.0)
    n = floored_allocation(800, sizes, w, 15.0)
    assert plain[0] == n[0] == 300                                   # take-all kept
    assert int(n.sum()) == 800 and np.all(n >= 2) and np.all(n <= sizes)
    assert n[1] == plain[1] >= detection_floor(460, 15.0, 0.1)      # sees 15 already
    assert n[2] >= detection_floor(1039, 15.0, 0.1) > plain[2]       # granted its floor
    assert n[3] < detection_floor(930, 15.0, 0.1)                    # too costly: stop
    assert n[-1] < plain[-1]                                         # paid by the tail
    assert (_anticipated_variance(n, sizes, w)
            <= (1 + FLOOR_COST) * _anticipated_variance(plain, sizes, w) + 1e-9)
    assert np.array_equal(floored_allocation(800, sizes, w, 0.5), plain)  # nothing to see


def test_detection_floor_sees_the_count_it_is_for():
    """With the floor's sample size, a stratum holding c matches shows none with probability
    ≤ β (hypergeometric, exact), and one label fewer is not enough for the binomial bound."""
    from scipy import stats
    from assay.core.allocation import detection_floor
    for size, c in [(460, 15), (1039, 15), (930, 8), (50, 3)]:
        n = detection_floor(size, float(c), 0.1)
        assert stats.hypergeom(size, c, n).pmf(0) <= 0.1
        assert (1 - c / size) ** (n - 1) > 0.1


@pytest.mark.slow
def test_stratified_recall_covers_at_500_labels_where_false_negatives_sit_below_the_top():
    """Stratified (CSF, Neyman) at 500 labels on the ties world: false negatives in the strata
    of 460–1,039 items just below the top stratum, at rates the plain allocation (two labels
    first, then by weight) rarely drew. Recall coverage before / after the Neyman allocation
    under bounds with detection floors (assay.core.allocation.floored_allocation): world seed
    11 (seeds 1000 + r, 400 repetitions) 0.907 / 0.940; world seed 5 (seeds 5000 + r, 200)
    0.905 / 0.945; here world seed 7, on which nothing was tuned (seeds 5000 + r, 400
    repetitions), 0.885 / 0.895, below 0.95 − 3·√(.95·.05/400) = 0.917: its 9 + 4 false
    negatives below the top are fewer than the count the floors are for (a tenth of the 152
    predicted positives), so its allocation hardly moved; it was a strict xfail until session
    17. With the variance of what a stratum's draws saw none of (assay.core.unseen_cells: the
    runs that missed those false negatives are the ones whose plug-in variance was short):
    recall 0.9275, F1 0.9925 (371 and 397 of 400)."""
    reps, hits = 400, _ties_coverage(world_seed=7, budget=500, reps=400)
    assert all(h / reps >= 0.95 - 3 * math.sqrt(0.95 * 0.05 / reps) for h in hits.values()), hits


def test_floors_are_a_saved_setting_and_old_runs_replay_without_them():
    """``floors`` is a field of StratifiedSettings (on by default), saved with every run; a run
    stored before the field existed was drawn without the floors and replays so; with the
    floors the allocation differs from the plain one on a pool whose prior sees no match
    below the top."""
    from assay.designs import build_design
    from assay.designs.settings import StratifiedSettings, settings_from_dict, settings_from_options
    stored = StratifiedSettings().to_dict()
    assert stored["floors"] is True
    del stored["floors"]                                   # a run stored before session 11 ...
    assert settings_from_dict(stored).floors is False      # ... replays as it was drawn
    assert settings_from_options("stratified", {"floors": False}).floors is False
    with pytest.raises(Exception, match="floors"):
        StratifiedSettings(floors="yes")                   # type: ignore[arg-type]
    rng = np.random.default_rng(3)
    score = rng.random(20_000)
    pred = (score > 0.99).astype(np.int8)
    prior = np.where(score > 0.99, 0.8, 1e-5)
    n_h = {f: build_design(StratifiedSettings(floors=f, by_prediction=False), n=score.size,
                           predictions=pred,
                           score=score, prior=prior, budget=400,
                           rng=np.random.default_rng(0)).n_h for f in (False, True)}
    assert n_h[True].sum() == n_h[False].sum() == 400
    assert not np.array_equal(n_h[True], n_h[False])


def test_with_replacement_delta_intervals_are_on_the_logit_scale():
    """Importance/OASIS draws (with replacement, unequal q): the delta interval is taken on the
    logit scale (assay.core.measures.WR_SCALE); a stratified sample keeps R̂ ± z·SE."""
    from assay.core.intervals import normal_interval
    from assay.core.measures import f_measures
    from assay.core.totals import StratifiedSample, WithReplacementSample
    rng = np.random.default_rng(11)
    n = 600
    ell = (rng.random(n) < 0.5).astype(float)
    yhat = np.where(rng.random(n) < 0.8, ell, 1 - ell)[:, None]
    q = rng.uniform(0.5, 2.0, n) / 100_000
    wr = f_measures(WithReplacementSample(q), ell, yhat, 0.0)[0]
    assert wr.method == "delta"
    lo, hi, _ = normal_interval(wr.estimate, wr.std_error ** 2, 0.95, method="logit")
    assert (wr.ci_low, wr.ci_high) == pytest.approx((lo, hi))
    assert wr.estimate - wr.ci_low > wr.ci_high - wr.estimate      # skewed toward 0.5
    st = f_measures(StratifiedSample(np.zeros(n, dtype=np.int64), np.array([50_000])), ell,
                    yhat, 0.0)[0]
    z = 1.959963984540054
    assert (st.ci_low, st.ci_high) == pytest.approx((st.estimate - z * st.std_error,
                                                     st.estimate + z * st.std_error))


WR_REPS = 200
WR_LOW = 0.95 - 3 * math.sqrt(0.95 * 0.05 / WR_REPS)     # 0.904


@pytest.mark.slow
@pytest.mark.parametrize("world,budget", [("ties", 500), ("realistic", 1000)])
def test_importance_f1_covers_on_worlds_where_the_symmetric_interval_did_not(world, budget):
    """The cells where the logit scale mattered most on the benchmark's seeds (1000 + r: F1
    0.895 → 0.925 on ties at 500 labels, 0.915 → 0.945 on realistic at 1,000), here on other
    seeds (world seed 12, repetitions 7000 + r)."""
    import assay
    from assay.worlds import WORLDS
    w = WORLDS[world](np.random.default_rng(12))
    pool = assay.load_pool(w.frame.drop(columns=["label"]))
    hits = _hits(pool, w.frame["label"].to_numpy(), {m: w.truth[m] for m in ("recall", "f1")},
                 "importance", budget, 7000, WR_REPS)
    cov = {m: h / WR_REPS for m, h in hits.items()}
    assert min(cov.values()) >= WR_LOW, cov

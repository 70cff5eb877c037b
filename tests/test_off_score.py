"""The ``off_score`` world (assay.worlds.make_off_score): a system whose predictions do not
follow the score the design sorts by. 64 of its 214 predicted positives, all false positives,
sit in the 5th–20th percentile of the ranking, in strata labelled so lightly that a run often
draws none of them; the ratio estimator of precision then forgets them and its interval stood
on the predicted positives drawn. At 1,000 labels (bench/adversarial.py, world seed 11, seeds
1000–1199): precision coverage stratified 0.87, OASIS 0.40 (F1 0.49), at 7cf5a5d.

The check of :mod:`assay.core.known_totals` compares the draws' estimate of the predicted
positives with their known count and, where they disagree, widens the interval of precision and
F1 for the ones missing (bench/out/pp_check_s15.md, 1,000 labels: precision 0.97 and 0.965, F1
0.975 and 0.985). Here other seeds (5000 + r), 100 repetitions; one-sided tolerance
0.95 − 3·√(.95·.05/100) = 0.885. Not met at 500 labels (bench/out/pp_check_off_s15.md):
precision stratified 0.67 → 0.83, OASIS 0.15 → 0.85 (F1 0.56 → 0.89): in the runs the check
does not fire, too few labels to tell the missing predicted positives from noise.

Session 16: the stratified design splits a score stratum by the prediction where the prediction
does not follow the score within it (:func:`assay.core.strata.by_prediction`,
:func:`assay.designs.stratified.within_parts`): the predicted positives are then counted
exactly. 500 labels, 200 repetitions (bench/out/by_prediction_off_s16.md): precision 0.835 →
0.95, F1 0.96 → 0.985 (RMSE 0.101 → 0.053). The check's test below keeps the score strata
(``by_prediction=False``, for OASIS too), which is what it tests.
"""
from __future__ import annotations

import math

import numpy as np
import pytest

REPS = 100
LOW = 0.95 - 3 * math.sqrt(0.95 * 0.05 / REPS)


@pytest.mark.slow
@pytest.mark.parametrize("design", ["stratified", "oasis"])
def test_precision_and_f1_cover_where_predictions_do_not_follow_the_score(design):
    import assay
    from assay.worlds import WORLDS
    w = WORLDS["off_score"](np.random.default_rng(11))
    pool, gold = assay.load_pool(w.frame.drop(columns="label")), w.frame[["id", "label"]]
    hits, joined = {"precision": 0, "f1": 0}, 0
    # the score strata, unsplit, for both designs (OASIS splits by the prediction by default
    # since session 17, and there, with Raj's estimator counting the labelled predicted
    # positives once each, the check fired in 0 of these 100 runs: 1 before; unsplit, ~half)
    options = {"by_prediction": False}
    for r in range(REPS):
        est = assay.evaluate(pool, gold, design=design, budget=1000, seed=5000 + r,
                             options=options, history=False, dataset="off_score").estimates
        for m in hits:
            hits[m] += int(est[m].ci_low <= w.truth[m] <= est[m].ci_high)
        joined += "predicted_positives_z" in est["precision"].extra
    assert joined > 0
    assert all(h / REPS >= LOW for h in hits.values()), (hits, joined)


@pytest.mark.slow
def test_strata_split_by_the_prediction_cover_at_500_labels():
    """The stratified design's default splits the band's score strata by the prediction: at
    500 labels precision, recall and F1 cover (other seeds than the benchmark's), and every
    predicted positive of a split stratum is counted exactly."""
    import assay
    from assay.worlds import WORLDS
    w = WORLDS["off_score"](np.random.default_rng(11))
    pool, gold = assay.load_pool(w.frame.drop(columns="label")), w.frame[["id", "label"]]
    hits = {"precision": 0, "recall": 0, "f1": 0}
    for r in range(REPS):
        res = assay.evaluate(pool, gold, design="stratified", budget=500, seed=5000 + r,
                             history=False, dataset="off_score")
        for m in hits:
            e = res.estimates[m]
            hits[m] += int(e.ci_low <= w.truth[m] <= e.ci_high)
    split = [row["size"] for row in res.strata if row["predicted"] == "positive"]
    assert res.params["by_prediction"] and sum(split) == w.facts["off_score"]
    assert all(h / REPS >= LOW for h in hits.values()), hits


def test_the_check_is_silent_where_the_draws_account_for_every_predicted_positive():
    """A census of the predicted positives' stratum (however the rest is sampled) gives their
    count exactly: z = 0; missing ones with no variance to explain them: z = ∞."""
    from assay.core.known_totals import contradicted, predicted_positives_check
    from assay.core.totals import StratifiedSample, WithReplacementSample
    s = StratifiedSample(stratum=np.r_[np.zeros(5, int), np.ones(20, int)],
                         sizes=np.array([5, 10_000]))
    pred = np.r_[np.ones(5), np.zeros(20)]
    assert predicted_positives_check(s, pred, np.array([5]))[0] == 0.0
    assert contradicted(predicted_positives_check(s, pred, np.array([9]))).tolist() == [True]
    # draws with replacement: 3 of 100 draws predicted positive at q = 1/1000 → X̂ = 30
    q = np.full(100, 1 / 1000)
    z = predicted_positives_check(WithReplacementSample(q), np.r_[np.ones(3), np.zeros(97)],
                                  np.array([30, 200]))
    assert z[0] == 0.0 and contradicted(z).tolist() == [False, True]

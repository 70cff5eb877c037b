"""Score strata split by the prediction where it does not follow the score
(:func:`assay.core.strata.by_prediction`, :class:`assay.designs.stratified.StratifiedDesign`)."""
from __future__ import annotations

import numpy as np

from assay.designs import build_design
from assay.designs.settings import StratifiedSettings, settings_from_dict


def _pool(off: bool):
    rng = np.random.default_rng(8)
    score = rng.normal(size=20_000)
    pred = (score > 2.0).astype(np.int64)
    if off:                                     # predicted positives scattered low down
        pred[np.argsort(score)[1000:1040]] = 1
    prior = 1.0 / (1.0 + np.exp(-3.0 * (score - 2.0)))
    return score, pred, prior


def _design(off: bool, split: bool):
    score, pred, prior = _pool(off)
    return build_design(StratifiedSettings(by_prediction=split), n=score.size,
                        predictions=pred, score=score, prior=prior, budget=400,
                        rng=np.random.default_rng(1)), pred


def test_a_threshold_keeps_the_score_strata_and_the_same_draws():
    a, _ = _design(False, True)
    b, _ = _design(False, False)
    assert np.array_equal(a.strata.order, b.strata.order)
    assert np.array_equal(a.n_h, b.n_h)
    assert [a.draw().index for _ in range(50)] == [b.draw().index for _ in range(50)]


def test_scattered_predicted_positives_get_parts_of_their_own():
    des, pred = _design(True, True)
    plain, _ = _design(True, False)
    parts = {row["predicted"] for row in des.strata_table()}
    assert "positive" in parts and des.params()["by_prediction"] is True
    assert des.strata.count > plain.strata.count and des.n_h.sum() == plain.n_h.sum() == 400
    codes = des.strata.codes                     # every part is pure unless a threshold's
    pure = np.bincount(codes, weights=pred) % np.bincount(codes) == 0
    mixed = [row["predicted"] == "mixed" for row in des.strata_table()]
    assert np.array_equal(~pure, np.array(mixed))
    assert np.all(des.n_h >= np.minimum(des.strata.sizes, 2))


def test_a_run_saved_before_the_split_replays_without_it():
    stored = StratifiedSettings().to_dict()
    assert stored["by_prediction"] is True
    del stored["by_prediction"]
    assert settings_from_dict(stored).by_prediction is False


def test_the_minimums_of_the_parts_leave_a_census_whole():
    from assay.designs.stratified import within_parts
    # score stratum 0: a part labelled in full (300 of 300) beside a large one; stratum 1's two
    # parts need 2 labels each of its 2: the excess comes from the large part, not the census
    n = within_parts(np.array([400, 2]), np.array([0, 0, 1, 1]),
                     np.array([300, 5000, 3, 4]), np.array([300.0, 100.0, 1.0, 1.0]))
    assert n.tolist() == [300, 98, 2, 2]


def test_no_stratum_to_split_returns_the_score_strata_themselves():
    from assay.core.strata import by_prediction, equal_size_strata
    st = equal_size_strata(np.linspace(1, 0, 10), 2)
    same, parent = by_prediction(st, np.array([1, 1, 0, 0, 0, 0, 0, 0, 0, 0]))
    assert same is st and parent.tolist() == [0, 1]

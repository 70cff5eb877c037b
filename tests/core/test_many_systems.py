"""One call estimates precision, recall and F1 of 50 systems from one shared sample, and agrees
with 50 single-system calls (issue "One core", must-show)."""
from __future__ import annotations

import numpy as np
import pytest

from assay.core.bounds import certain_bounds
from assay.core.measures import MEASURES, f_measure, f_measures
from assay.core.totals import sample_of
from assay.core.types import Draws, Kind
from assay.estimation import estimate_systems


def _world(seed: int, n: int = 20_000, m: int = 50):
    rng = np.random.default_rng(seed)
    truth = (rng.random(n) < 0.05).astype(np.int8)
    # 50 systems of varied quality: recall 0.3-0.95, false-positive rate 0.1%-5%
    rec = rng.uniform(0.3, 0.95, m)
    fpr = rng.uniform(0.001, 0.05, m)
    u = rng.random((n, m))
    pred = np.where(truth[:, None] == 1, u < rec, u < fpr).astype(np.int8)
    return rng, truth, pred


def _stratified_draws(rng, n, k=8, per=60):
    strata = rng.integers(0, k, n)
    sizes = np.bincount(strata, minlength=k)
    items, st, prob = [], [], []
    for h in range(k):
        members = np.flatnonzero(strata == h)
        pick = rng.choice(members, size=min(per, members.size), replace=False)
        items += pick.tolist()
        st += [h] * pick.size
        prob += [pick.size / members.size] * pick.size
    return Draws(np.array(items), np.array(st), np.array(prob), Kind.INCLUSION), sizes


@pytest.mark.parametrize("kind", ["inclusion", "selection"])
def test_fifty_systems_in_one_call_equal_fifty_single_calls(kind):
    rng, truth, pred = _world(7)
    n = truth.shape[0]
    if kind == "inclusion":
        draws, sizes = _stratified_draws(rng, n)
    else:
        q = np.where(pred.any(axis=1), 5.0, 1.0)
        q /= q.sum()
        items = rng.choice(n, size=600, p=q)
        draws, sizes = Draws(items, np.zeros(600, np.int64), q[items], Kind.SELECTION), None
    labels = truth[draws.item]
    many = estimate_systems(draws, labels, pred, sizes, bounds=False)
    sample = sample_of(draws, sizes)
    items, first = np.unique(draws.item, return_index=True)
    ilab = labels[first]
    for name, alpha in MEASURES.items():
        assert len(many[name]) == 50
        for j in range(50):
            ip = pred[items, j]
            one = f_measure(sample, labels, pred[draws.item, j], alpha, 0.95, name, "auto",
                            int(np.count_nonzero(alpha * ip + (1 - alpha) * ilab > 0)),
                            int(np.count_nonzero(ip * ilab > 0)),
                            domain_size=int(pred[:, j].sum()))
            got = many[name][j]
            assert got.method == one.method
            if "predicted_positives_z" in got.extra:
                # the check of assay.core.known_totals fired (estimation._checked): the
                # core's interval, widened, with a note saying so
                assert got.note.startswith(one.note) and "widened" in got.note
                assert got.ci_low <= one.ci_low + 1e-12 and got.ci_high >= one.ci_high - 1e-12
                pairs = ((got.estimate, one.estimate), (got.std_error, one.std_error))
            else:
                assert got.note == one.note
                # cut to what the labels make certain (estimation._certain)
                lo_c, hi_c = (float(b[0]) for b in certain_bounds(
                    ilab, pred[items][:, [j]], n, pred[:, [j]].sum(axis=0), {name: alpha})[name])
                pairs = ((got.estimate, one.estimate), (got.ci_low, max(one.ci_low, lo_c)),
                         (got.ci_high, min(one.ci_high, hi_c)), (got.std_error, one.std_error))
            for a, b in pairs:
                assert a == pytest.approx(b, rel=1e-12, abs=1e-15)
    # with the assumption-free intervals and the predicted-positives check
    # (assay.core.known_totals): the same per system as a call with its column alone
    full = estimate_systems(draws, labels, pred, sizes)
    for j in range(0, 50, 7):
        alone = estimate_systems(draws, labels, pred[:, [j]], sizes)
        for name in MEASURES:
            got, one = full[name][j], alone[name][0]
            assert (got.method, got.note, got.assumption_free) == \
                (one.method, one.note, one.assumption_free)
            assert (got.ci_low, got.ci_high) == pytest.approx((one.ci_low, one.ci_high),
                                                              rel=1e-12, abs=1e-15)


def test_vector_and_matrix_totals_agree_to_the_last_bit_for_one_system():
    rng, truth, pred = _world(3, m=1)
    draws, sizes = _stratified_draws(rng, truth.shape[0])
    labels = truth[draws.item]
    sample = sample_of(draws, sizes)
    a = f_measures(sample, labels, pred[draws.item, 0], 0.5)[0]
    b = f_measures(sample, labels, pred[draws.item], 0.5)[0]
    assert (a.estimate, a.ci_low, a.ci_high, a.std_error) == (b.estimate, b.ci_low, b.ci_high,
                                                              b.std_error)

"""OASIS runs side by side (assay.designs.oasis_lockstep) draw what each run draws alone through
the campaign, bit for bit: the same items, probabilities, strata, positions and labels, and
designs left in the same state (so the same estimates)."""
from __future__ import annotations

import numpy as np
import pytest

from assay.core.strata import csf_strata
from assay.core.types import Draws, DrawColumns, Kind
from assay.designs.oasis import OasisDesign
from assay.designs.oasis_lockstep import _lockstep_ok, collect_many
from assay.estimation import estimate_all
from assay.evaluation import collect
from assay.simulation import simulate
from assay.worlds import WORLDS


@pytest.fixture(scope="module")
def world():
    f = WORLDS["off_score"](np.random.default_rng(11)).frame
    return (f["score"].to_numpy(), f["prediction"].to_numpy(), f["label"].to_numpy())


CASES = [({}, 400), ({"budget": 400}, 400), ({"cross_fit": True}, 300),
         ({"by_prediction": True, "budget": 300}, 300),
         ({"decaying_prior": False, "defensive": 0.0, "epsilon": 0.05}, 200),
         ({"alpha": 0.0}, 150), ({"alpha": 1.0, "n_strata": 5}, 150),
         ({"v_star": "rms"}, 300), ({"v_star": "rms", "cross_fit": True, "defensive": 0.0}, 200)]


def _state(d: OasisDesign) -> tuple:
    return (d.ones.tolist(), d.zeros.tolist(), d._num, d._pred, d._true, d._labelled.tolist(),
            sorted(d._items), d._live.tolist(), d._any_live, d.instrumental().tolist())


@pytest.mark.parametrize("kw,budget", CASES)
def test_side_by_side_draws_are_each_runs_own(world, kw, budget):
    score, pred, y = world
    strata = csf_strata(score, kw.pop("n_strata", 30))

    def make():
        return [OasisDesign(None, pred, score, np.random.default_rng(40 + r),
                            precomputed_strata=strata, **kw) for r in range(6)]
    ours, alone = make(), make()
    assert _lockstep_ok(ours)
    side = collect_many(ours, y, budget)
    each = [collect(d, lambda i: int(y[i]), budget) for d in alone]
    for a, b, da, db in zip(side, each, ours, alone):
        assert isinstance(a.draws, DrawColumns)
        assert list(a.draws) == b.draws and a.labels == b.labels
        assert list(a.labelled.items()) == list(b.labelled.items())
        assert _state(da) == _state(db)
        ea = estimate_all(da, a, pred, 0.95)
        eb = estimate_all(db, b, pred, 0.95)
        assert {m: (e.estimate, e.ci_low, e.ci_high) for m, e in ea.items()} == \
               {m: (e.estimate, e.ci_low, e.ci_high) for m, e in eb.items()}


def test_a_large_pool_keeps_each_runs_items_in_a_set(world, monkeypatch):
    import assay.designs.oasis_lockstep as lockstep
    score, pred, y = world
    monkeypatch.setattr(lockstep, "GRID_BYTES", 0)
    strata = csf_strata(score, 30)
    ours = [OasisDesign(None, pred, score, np.random.default_rng(r), precomputed_strata=strata)
            for r in range(3)]
    alone = [OasisDesign(None, pred, score, np.random.default_rng(r), precomputed_strata=strata)
             for r in range(3)]
    for a, d, db in zip(collect_many(ours, y, 200), ours, alone):
        assert list(a.draws) == collect(db, lambda i: int(y[i]), 200).draws
        assert _state(d) == _state(db)


def test_runs_that_cannot_go_side_by_side_run_one_after_the_other(world):
    score, pred, y = world
    strata = csf_strata(score, 30)
    rms = [OasisDesign(None, pred, score, np.random.default_rng(r), precomputed_strata=strata,
                       v_star=form) for r, form in enumerate(("rms", "paper"))]
    mixed = [OasisDesign(None, pred, score, np.random.default_rng(0), precomputed_strata=strata),
             OasisDesign(None, pred, score, np.random.default_rng(1), precomputed_strata=strata,
                         epsilon=0.1)]
    started = [OasisDesign(None, pred, score, np.random.default_rng(0),
                           precomputed_strata=strata)]
    collect(started[0], lambda i: int(y[i]), 5)
    for designs in (rms, mixed, started, []):
        assert not _lockstep_ok(designs)
    out = collect_many(rms, y, 50)
    ref = [OasisDesign(None, pred, score, np.random.default_rng(r), precomputed_strata=strata,
                       v_star=form) for r, form in enumerate(("rms", "paper"))]
    assert [c.draws for c in out] == [collect(d, lambda i: int(y[i]), 50).draws for d in ref]


def test_simulate_gives_the_one_run_at_a_time_results(world, monkeypatch):
    import assay.simulation as simulation
    score, pred, y = world
    a = simulate("oasis", y, pred, score, None, 150, 5, seed=3)
    monkeypatch.setattr(simulation, "LOCKSTEP_RUNS", 2)     # batches of 2, 2 and 1
    b = simulate("oasis", y, pred, score, None, 150, 5, seed=3)
    monkeypatch.setattr("assay.designs.oasis_lockstep._lockstep_ok", lambda designs: False)
    c = simulate("oasis", y, pred, score, None, 150, 5, seed=3)
    for m in a:
        for x, z in ((a[m], c[m]), (b[m], c[m])):
            assert np.array_equal(x.estimate, z.estimate, equal_nan=True)
            assert np.array_equal(x.ci_low, z.ci_low, equal_nan=True)


def test_draw_columns_are_a_read_only_list_of_draws():
    cols = DrawColumns.first_phase(np.array([4, 2, 9]), np.array([0.5, 0.25, 0.125]),
                                   np.array([0, 1, 1]), np.array([7, 3, 11]), Kind.SELECTION)
    listed = list(cols)
    assert len(cols) == 3 and cols[-1] == listed[2] and cols[1:] == listed[1:]
    assert cols == listed and Draws.of(cols) is cols.columns
    ref = Draws.of(listed)
    for name in ("item", "stratum", "probability", "phase", "position"):
        got, want = getattr(Draws.of(cols), name), getattr(ref, name)
        assert got.dtype == want.dtype and np.array_equal(got, want)
    with pytest.raises(IndexError):
        cols[3]

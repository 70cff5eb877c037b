"""Structured sampling in the on-demand campaign (issue 12 must-have 4): a submission drawn by a
level's distribution (relation: the same share for each relation; entity: entity → fill →
mention), not only reweighted to it, on the KB-like world of tests/test_ondemand_structured.py.

Claims:
* ``OnDemandCampaign.submit(..., sampling="entity")`` draws every one of the submission's items
  from its entity-level distribution (kept in the store as its fill proposal) and makes exactly
  the draws of the store-free driver (``simulate.in_turn(..., sampling=...)``), so the driver's
  simulation measures the campaign;
* systems submitted in turn with entity-level sampling (two-stage rule): entity-level and
  instance-level precision unbiased within 3 Monte Carlo SE for every system, 90% intervals
  covering on average over systems at ≥ 0.90 − the binomial tolerance (200 repetitions, slow;
  a 10-repetition smoke version in the fast suite with coverage ≥ 0.80);
* an unknown sampling level, or structured sampling without structure columns, is an input
  error naming ``--sampling``.
"""
from __future__ import annotations

import math

import numpy as np
import pytest

from assay.ondemand import joint
from assay.ondemand.simulate import in_turn
from assay.ondemand.structured import level_density, structure_codes
from test_ondemand_structured import Z90, kb_world  # tests/ is on the path (rootdir)


def _world(m: int = 3):
    df, truth, memb = kb_world(m=m)
    rel, sub, fil = structure_codes(df, len(df))
    return df, truth, memb, {lv: level_density(memb, rel, sub, fil, lv)
                             for lv in ("instance", "relation", "entity")}


def test_campaign_draws_by_the_entity_distribution_as_the_driver(tmp_path):
    from assay.labels.sources import CallableLabels
    from assay.labels.store import LabelStore
    from assay.ondemand import OnDemandCampaign
    df, truth, memb, dens = _world()
    keys = np.array([f"i{k:05d}" for k in range(len(df))], dtype=object)
    gold = dict(zip(keys, truth.astype(int)))
    camp = OnDemandCampaign.create(LabelStore(tmp_path / "s.db"), "kb", half_width=0.08,
                                   seed=5)
    src = CallableLabels(lambda k: gold[k], "gold")
    for k in range(3):
        camp.submit(f"s{k}", keys[memb[:, k]], src, structure=df[memb[:, k]],
                    sampling="entity")
    d = camp.od.draws(camp.row.id)
    assert set(d["proposal"]) == {joint.FILL}
    fills = camp.od.fills(camp.row.id)
    pos = {s.id: k for k, s in enumerate(camp.od.systems(camp.row.id))}
    where = {k: i for i, k in enumerate(keys)}
    for sid, g in fills.groupby("system_id"):
        col = dens["entity"][:, pos[sid]]
        rows = g["item"].map(where).to_numpy()
        assert np.allclose(g["density"].to_numpy(), col[rows], rtol=0, atol=1e-15)
        assert np.isclose(col[rows].sum(), 1.0)
    sim = in_turn(memb, truth, 0.08, 0.90, seed=5, sampling=dens["entity"])
    assert d["item"].tolist() == keys[sim.item].tolist()
    rep = camp.report(level="entity")
    uni, at = sim.universe(memb, target=dens["entity"])
    est, _ = joint.estimate(uni, sim.src(3), at, sim.f, None, 0.90)
    for s, e in zip(rep.systems, est["precision"]):
        assert s.estimates["precision"].estimate == pytest.approx(e.estimate, abs=1e-12)


def test_sampling_level_is_checked(tmp_path):
    from assay.errors import AssayInputError
    from assay.labels.sources import CallableLabels
    from assay.labels.store import LabelStore
    from assay.ondemand import OnDemandCampaign
    camp = OnDemandCampaign.create(LabelStore(tmp_path / "s.db"), "kb", seed=1)
    src = CallableLabels(lambda k: 1, "gold")
    with pytest.raises(AssayInputError, match="--sampling"):
        camp.submit("a", ["x", "y"], src, sampling="document")
    with pytest.raises(AssayInputError, match="--sampling"):
        camp.submit("a", ["x", "y"], src, sampling="entity")


def _reps(reps: int, seed: int = 0, level: str = "entity", half_width: float = 0.06):
    df, truth, memb, dens = _world(m=4)
    m = memb.shape[1]
    true = {lv: dens[lv].T @ truth for lv in ("instance", level)}
    est = {lv: np.zeros((reps, m)) for lv in true}
    cov = {lv: np.zeros((reps, m)) for lv in true}
    for r in range(reps):
        sim = in_turn(memb, truth, half_width, 0.90, seed=seed + r, sampling=dens[level])
        for lv in true:
            uni, at = sim.universe(memb, target=None if lv == "instance" else dens[lv])
            e, _ = joint.estimate(uni, sim.src(m), at, sim.f, None, 0.90)
            est[lv][r] = [x.estimate for x in e["precision"]]
            cov[lv][r] = [x.covers(t) for x, t in zip(e["precision"], true[lv])]
    return true, est, cov


def _check(reps, true, est, cov, tol):
    for lv in true:
        se = est[lv].std(axis=0, ddof=1) / math.sqrt(reps)
        assert np.all(np.abs(est[lv].mean(axis=0) - true[lv]) <= 3 * se), (
            lv, est[lv].mean(0), true[lv], se)
        assert cov[lv].mean() >= 0.90 - tol, (lv, cov[lv].mean(axis=0))


def test_in_turn_entity_sampling_fast():
    _check(10, *_reps(10, seed=300), 0.10)


@pytest.mark.slow
def test_in_turn_entity_sampling_unbiased_and_covers():
    """400 repetitions (seeds 1000–1399). With 200 (seeds 1000–1199) and the blind second
    stage (planning.BLIND_SECOND_STAGE, session 9) the first system's instance-level precision
    was −3.01 SE off (the 3 SE check failed by a hair); with 400, −2.14 (instance) and −2.26
    (entity); on seeds 5000–5399 +0.01 and −1.11; the old rule (second stage sized from the
    system's own labels) gave +3.23 SE there. Not a bias (issue 12, measured): the blind rule
    cannot reach the first system's sizes (no label precedes it: its 505 draws from its
    entity-level fill are the same in every repetition), and on seeds 1000–1399 the estimate
    from those 505 draws alone is off as much (−0.0035, z −2.03) as the joint one (−0.0030,
    z −2.14; the other systems' draws add +0.0005 ± 0.0011); that estimator's bias under its
    fixed design is −0.0001 ± 0.0002 (40,000 redraws of 505 from the entity density), and the
    joint estimate with every set's size fixed at seed 1000's +0.0008 (z +1.15, 1,500
    redraws). The negative z is these seeds' draws of the first system."""
    reps = 400
    _check(reps, *_reps(reps, seed=1000), Z90 * math.sqrt(0.09 / reps))

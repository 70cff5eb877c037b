"""The simulations' loop (:func:`assay.simulation.collect_known`) draws what the campaign's
(:func:`assay.evaluation.collect`) draws, for every design, to the budget, to the pool's
end, and where the design runs out first."""
from __future__ import annotations

import numpy as np
import pytest

from assay.designs import build_design
from assay.evaluation import collect
from assay.simulation import collect_known

DESIGNS = [("passive", {}), ("passive", {"replace": True}), ("stratified", {}),
           ("stratified", {"allocation": "proportional", "strata": "equal"}),
           ("stratified", {"by_prediction": False}), ("importance", {}), ("auto", {}),
           ("oasis", {}), ("oasis", {"n_strata": 5, "floors": False})]


def _pool(n: int, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    score = rng.normal(size=n)
    truth = (rng.random(n) < 1 / (1 + np.exp(-3 * score - 2))).astype(np.int8)
    return score, (score > 0.5).astype(np.int8), truth


@pytest.mark.parametrize("design,options", DESIGNS)
@pytest.mark.parametrize("n,budget", [(3000, 200), (60, 60), (40, 100)])
def test_collect_known_draws_what_the_campaign_draws(design, options, n, budget):
    score, pred, truth = _pool(n, 5)
    prior = 1 / (1 + np.exp(-score))
    for seed in (0, 1):
        made = [build_design(design, n=n, predictions=pred, score=score, prior=prior,
                             budget=budget, rng=np.random.default_rng(seed), options=options)
                for _ in range(2)]
        a = collect(made[0], lambda i: int(truth[i]), budget)
        b = collect_known(made[1], truth, budget)
        assert b.draws == a.draws and b.labels == a.labels and b.labelled == a.labelled
        assert len(b.draws) > 0


@pytest.mark.parametrize("design,options", DESIGNS)
def test_a_replicate_draws_what_a_design_built_afresh_draws(design, options):
    """:meth:`assay.designs.base.Design.replicate` (the simulations share a design's set-up
    across repetitions): the copy of a design not drawn from draws, with its generator, what a
    design built with that generator draws; None where a design has no such copy."""
    score, pred, truth = _pool(3000, 6)
    prior = 1 / (1 + np.exp(-score))

    def build(seed: int):
        return build_design(design, n=3000, predictions=pred, score=score, prior=prior,
                            budget=300, rng=np.random.default_rng(seed), options=options)
    template = build(99)
    for seed in (0, 1, 2):
        copy = template.replicate(np.random.default_rng(seed))
        if copy is None:
            assert design in ("passive", "auto", "oasis")
            return
        a = collect_known(build(seed), truth, 300)
        b = collect_known(copy, truth, 300)
        assert b.draws == a.draws and b.labels == a.labels
        copy.extend(600)                      # a larger budget, as a fresh design extends
        fresh = build(seed)
        collect_known(fresh, truth, 300)
        fresh.extend(600)
        assert collect_known(copy, truth, 300).draws == collect_known(fresh, truth, 300).draws


@pytest.mark.parametrize("design", ["stratified", "importance", "auto", "oasis", "passive"])
def test_simulate_gives_what_evaluate_gives(design):
    """:func:`assay.simulation.simulate` (what the coverage tests loop over) and
    :func:`assay.evaluate` on the same pool, gold labels and seeds: the same estimates and
    intervals bit for bit."""
    import assay
    from assay.simulation import simulate
    from assay.worlds import WORLDS
    w = WORLDS["ties"](np.random.default_rng(3))
    pool = assay.load_pool(w.frame.drop(columns=["label"]))
    res = simulate(design, w.frame["label"].to_numpy(), pool.prediction, pool.score,
                   pool.prior_probability(), 300, 3, seed=40)
    for r in range(3):
        est = assay.evaluate(pool, w.frame[["id", "label"]], design=design, budget=300,
                             seed=40 + r, dataset="ties", history=False).estimates
        for m, e in est.items():
            got = (res[m].estimate[r], res[m].ci_low[r], res[m].ci_high[r])
            assert got == (e.estimate, e.ci_low, e.ci_high) or (
                np.isnan(got[0]) and not e.defined), (m, r)

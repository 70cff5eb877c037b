"""The campaign step API (issue 9 point 6): next_items → record → estimate, with and without a
store; recording twice is a no-op; skip and undo go through record; the caller's label source is
never touched."""
from __future__ import annotations

import numpy as np
import pytest
import pandas as pd

from assay.campaign import Campaign
from assay.runs import Undo
from assay.designs.settings import StratifiedSettings
from assay.evaluation import evaluate
from assay.formats.pool import load_pool
from assay.labels.store import Judgment, LabelStore, Status


def _pool(n: int = 1500):
    rng = np.random.default_rng(2)
    score = rng.normal(size=n)
    label = (rng.random(n) < 1 / (1 + np.exp(-(3 * score - 3)))).astype(int)
    df = pd.DataFrame({"id": [f"i{i}" for i in range(n)], "score": score,
                       "prediction": (score > 1).astype(int)})
    return load_pool(df), label, df


def test_step_api_matches_evaluate_and_recording_twice_is_a_no_op(tmp_path):
    pool, label, df = _pool()
    store = LabelStore(tmp_path / "c.db")
    camp = Campaign.open(store, pool, StratifiedSettings(), 3, "d", "gold", 120)
    steps = 0
    while True:
        reqs = camp.next_items(4)
        if not reqs:
            break
        assert len(reqs) == 1 and reqs[0].annotator == "gold" and reqs[0].draw.probability > 0
        j = Judgment(reqs[0].key, "gold", int(label[reqs[0].index]))
        camp.record([j])
        camp.record([j])                         # idempotent
        steps += 1
    camp.close()
    assert steps == 120 and camp.new == 120 and camp.collected.distinct == 120
    ref = evaluate(df, dict(zip(df["id"], label)), design="stratified", budget=120, seed=3)
    assert {k: e.to_dict() for k, e in camp.estimate().items()} == \
        {k: e.to_dict() for k, e in ref.estimates.items()}
    assert len(store.labels("d", "gold")) == 120


def test_skip_and_undo_go_through_record():
    pool, label, _ = _pool(300)
    camp = Campaign.open(None, pool, StratifiedSettings(n_strata=5), 1, "d", "ann", 6)
    first = camp.next_items()[0]
    camp.record([Judgment(first.key, "ann", 1)])
    second = camp.next_items()[0]
    camp.record([Undo("ann")])                   # take back the first answer
    again = camp.next_items()[0]
    assert again.key == first.key
    camp.record([Judgment(first.key, "ann", 0)])
    assert camp.next_items()[0].key == second.key
    camp.record([Judgment(second.key, "ann", None, Status.SKIPPED)])
    while reqs := camp.next_items():
        camp.record([Judgment(reqs[0].key, "ann", 0)])
    assert camp.collected.distinct == 6 and pool.index_of(second.key) in camp.collected.skipped
    assert camp.collected.labelled[pool.index_of(first.key)] == 0


SKIP_SCRIPT = {2: "skip", 3: "undo", 6: "skip", 7: "skip", 8: "undo", 9: "undo", 12: "skip"}


def _drive(store, pool, label, design, budget, stops=(), script=None):
    """Answer by ``script`` (default ``SKIP_SCRIPT``; else the truth), closing and reopening
    the stored run after each step in ``stops``; returns the final campaign."""
    script = SKIP_SCRIPT if script is None else script
    from assay.designs.settings import settings_from_options
    settings = settings_from_options(design, None)

    def open_():
        return Campaign.open(store, pool, settings, 5, "d", "ann", budget)
    camp, step = open_(), 0
    while reqs := camp.next_items():
        act = script.get(step)
        if act == "undo":
            camp.record([Undo("ann")])
        elif act == "skip":
            camp.record([Judgment(reqs[0].key, "ann", None, Status.SKIPPED)])
        else:
            camp.record([Judgment(reqs[0].key, "ann", int(label[reqs[0].index]))])
        step += 1
        if step in stops:
            camp.close()
            camp = open_()
    camp.close()
    return camp


@pytest.mark.parametrize("design", ["passive", "stratified", "auto", "importance", "oasis"])
def test_an_undone_skip_rejoins_the_sample_and_replays(tmp_path, design):
    """Skips taken back (twice in a row, too) re-ask their items, which join the sample; a
    stored run with undone skips resumes without a replay mismatch and ends where the run
    without interruption ends, with labels paid equal to the budget."""
    pool, label, _ = _pool(400)
    whole = _drive(LabelStore(tmp_path / "a.db"), pool, label, design, 20)
    cut = _drive(LabelStore(tmp_path / "b.db"), pool, label, design, 20, stops={6, 12, 14})
    seq = [pool.key(d.index) for d in whole.collected.draws]
    assert seq == [pool.key(d.index) for d in cut.collected.draws]
    assert whole.collected.distinct == 20 and whole.new == 20
    skipped = {pool.key(i) for i in whole.collected.skipped}
    assert len(skipped) == 1            # three skips, two taken back
    store = LabelStore(tmp_path / "b.db")
    assert len(store.labels("d", "ann")) == 20
    # stopped with a re-ask outstanding: the undo is dropped (the stored entry stands), no
    # mismatch, no label lost
    mid = _drive(LabelStore(tmp_path / "c.db"), pool, label, design, 20, stops={3, 5, 9})
    assert mid.collected.distinct == 20 and len(LabelStore(tmp_path / "c.db").labels(
        "d", "ann")) == 20


def _reopens(store, pool, design, budget):
    camp = Campaign.open(store, pool, __import__("assay.designs.settings", fromlist=["x"])
                         .settings_from_options(design, None), 5, "d", "ann", budget)
    assert camp.next_items() == []
    return camp


@pytest.mark.parametrize("design", ["passive", "stratified", "auto", "importance", "oasis"])
def test_undo_then_stop_never_breaks_a_stored_run(tmp_path, design):
    """Review findings: (1) undo a judgment, stop, and skip what comes next; (2) skip, judge
    the replacement, undo both, answer the replacement again and stop with the skip's re-ask
    outstanding; (4) take a skip back after the budget is complete. Every stored run reopens
    to the same sample, and the labels stored are those the campaign paid for."""
    pool, label, _ = _pool(400)
    for k, (script, stops) in enumerate([({9: "undo", 10: "skip"}, {10}),
                                         ({2: "skip", 4: "undo", 5: "undo"}, {7})]):
        store = LabelStore(tmp_path / f"s{k}.db")
        camp = _drive(store, pool, label, design, 20, stops=stops, script=script)
        again = _reopens(store, pool, design, 20)
        assert [d.index for d in again.collected.draws] == [d.index for d in camp.collected.draws]
        assert len(store.labels("d", "ann")) == camp.collected.distinct == 20
    store = LabelStore(tmp_path / "late.db")
    camp = _drive(store, pool, label, design, 20, script={19: "skip"})
    camp.record([Undo("ann")])
    camp.record([Undo("ann")])
    while reqs := camp.next_items():
        camp.record([Judgment(reqs[0].key, "ann", int(label[reqs[0].index]))])
    camp.close()
    again = _reopens(store, pool, design, 20)
    assert [d.index for d in again.collected.draws] == [d.index for d in camp.collected.draws]
    assert len(store.labels("d", "ann")) == camp.new == camp.collected.distinct


def test_a_panel_undo_cannot_drop_a_sampled_item(tmp_path):
    """Review finding (3): in a panel of two, b takes back a 1 and answers 0 on an item already
    in the sample (a tie: no label). Its draw is stored, so the earlier vote is kept, with a
    note; live and reopened runs agree."""
    pool, _, _ = _pool(400)
    store = LabelStore(tmp_path / "p.db")
    settings = StratifiedSettings()

    def open_():
        return Campaign.open(store, pool, settings, 5, "d", ["a", "b"], 20)
    camp = open_()
    for _ in range(10):
        r = camp.next_items()[0]
        camp.record([Judgment(r.key, r.annotator, 1)])
    camp.next_items()
    camp.record([Undo("b")])
    r = camp.next_items()[0]
    assert r.annotator == "b"
    camp.record([Judgment(r.key, "b", 0)])
    i = pool.index_of(r.key)
    assert camp.collected.labelled[i] == 1 and any("was kept" in n for n in camp.notes)
    camp.close()
    again = open_()
    again.next_items()
    assert again.collected.labelled[i] == 1
    assert [d.index for d in again.collected.draws] == [d.index for d in camp.collected.draws]


@pytest.mark.parametrize("design", [pytest.param("auto", marks=pytest.mark.slow), "stratified",
                                    "importance", "oasis", "passive"])
def test_a_run_without_history_has_the_same_draws_and_estimates(design):
    """evaluate(history=False) skips the estimates at the checkpoints, nothing else."""
    import assay
    from assay.worlds import WORLDS
    f = WORLDS["ties"](np.random.default_rng(3)).frame
    pool, gold = assay.load_pool(f.drop(columns=["label"])), f[["id", "label"]]
    full = assay.evaluate(pool, gold, design=design, budget=150, seed=2)
    bare = assay.evaluate(pool, gold, design=design, budget=150, seed=2, history=False)
    assert len(full.history) > 10 and len(bare.history) == 1
    assert bare.draws == full.draws and bare.draw_labels == full.draw_labels
    assert {m: e.to_dict() for m, e in bare.estimates.items()} == \
           {m: e.to_dict() for m, e in full.estimates.items()}

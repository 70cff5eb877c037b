"""Labels that disagree, pools that must not share labels, a re-scored pool, settings as data,
and no password in any message (issue 10 points 1, 4, 7; issue 9 point 5)."""
from __future__ import annotations

import dataclasses
import json
import sqlite3

import numpy as np
import pandas as pd
import pytest

from assay.runs import run_key
from assay.designs.settings import (AutoSettings, StratifiedSettings, settings_from_dict,
                                    settings_from_options)
from assay.errors import AssayInputError, LabelConflict, StoreError
from assay.evaluation import evaluate
from assay.labels.store import LabelStore


def _pool(n: int = 2000, seed: int = 5) -> tuple[pd.DataFrame, np.ndarray]:
    rng = np.random.default_rng(seed)
    score = rng.normal(size=n)
    label = (rng.random(n) < 1 / (1 + np.exp(-(3 * score - 3)))).astype(int)
    return pd.DataFrame({"id": [f"i{i}" for i in range(n)], "score": score,
                         "prediction": (score > 1).astype(int)}), label


def test_a_corrected_gold_file_is_not_ignored(tmp_path):
    df, label = _pool()
    pool, db = tmp_path / "pool.csv", str(tmp_path / "assay.db")
    df.to_csv(pool, index=False)
    gold, inverted = tmp_path / "gold.csv", tmp_path / "inverted.csv"
    pd.DataFrame({"id": df["id"], "label": label}).to_csv(gold, index=False)
    pd.DataFrame({"id": df["id"], "label": 1 - label}).to_csv(inverted, index=False)
    first = evaluate(pool, gold, design="stratified", budget=200, seed=1, store=db)
    with pytest.raises(LabelConflict, match=r"200 of the 200 labels of .*inverted.csv for items "
                                            r"already labelled by 'gold' in dataset 'pool' "
                                            r"disagree .*--on-conflict keep.*replace.*--annotator"):
        evaluate(pool, inverted, design="stratified", budget=200, seed=1, store=db)
    kept = evaluate(pool, inverted, design="stratified", budget=200, seed=1, store=db,
                    on_conflict="keep")
    assert kept.to_dict() == first.to_dict() and "were kept" in kept.estimates["f1"].note
    fresh = evaluate(pool, inverted, design="stratified", budget=200, seed=1)
    other = evaluate(pool, inverted, design="stratified", budget=200, seed=1, store=db,
                     annotator="gold-v2")
    assert other.to_dict() == fresh.to_dict() and other.new_labels == 200
    replaced = evaluate(pool, inverted, design="stratified", budget=200, seed=1, store=db,
                        on_conflict="replace")
    assert replaced.to_dict() == fresh.to_dict() and "replaced" in replaced.estimates["f1"].note
    stored = LabelStore(db).labels("pool", "gold")
    index = {k: i for i, k in enumerate(df["id"])}
    assert all(v == 1 - label[index[k]] for k, v in stored.items())


def test_pools_with_coinciding_ids_do_not_share_labels(tmp_path):
    a, la = _pool(500, seed=1)
    b, lb = _pool(500, seed=2)
    ids = [str(i) for i in range(500)]
    a, b = a.assign(id=ids), b.assign(id=ids)
    db = str(tmp_path / "assay.db")
    for name, df, lab in (("a", a, la), ("b", b, lb)):
        df.to_csv(tmp_path / f"{name}.csv", index=False)
        pd.DataFrame({"id": ids, "label": lab}).to_csv(tmp_path / f"{name}_gold.csv",
                                                       index=False)
    evaluate(tmp_path / "a.csv", tmp_path / "a_gold.csv", design="passive", budget=100, seed=1,
             store=db)
    res = evaluate(tmp_path / "b.csv", tmp_path / "b_gold.csv", design="passive", budget=100,
                   seed=1, store=db)
    assert res.new_labels == 100 and res.reused_labels == 0
    two = b.rename(columns={"id": "left_id"}).assign(right_id="x")
    with pytest.raises(StoreError, match=r"dataset 'a' holds items keyed by id columns \['id'\], "
                                         r"this pool by \['left_id', 'right_id'\]"):
        evaluate(two, {("0", "x"): 1}, design="passive", budget=1, store=db, dataset="a")


def test_a_rescored_pool_is_a_new_run_reusing_every_stored_label(tmp_path):
    df, label = _pool()
    truth = dict(zip(df["id"], label))
    db = str(tmp_path / "assay.db")
    first = evaluate(df, truth, design="stratified", budget=200, seed=4, store=db, dataset="d")
    rescored = df.assign(score=df["score"] + np.random.default_rng(0).normal(0, 0.3, len(df)))
    asked = []

    def gold(key: str) -> int:
        asked.append(key)
        return int(truth[key])

    second = evaluate(rescored, gold, design="stratified", budget=200, seed=4, store=db,
                      dataset="d", annotator="mapping")
    assert second.params["run"] != first.params["run"] and second.labels_used == 200
    assert second.reused_labels > 0 and len(asked) == second.new_labels
    assert (f"pool re-scored since run {first.params['run']}: a new run; "
            f"{second.reused_labels} stored labels reused where drawn"
            in second.estimates["f1"].note)


def test_settings_are_data():
    with pytest.raises(AssayInputError, match="unknown setting 'n_strat'"):
        settings_from_dict({"design": "stratified", "n_strat": 3})
    with pytest.raises(AssayInputError, match="n_strata"):
        StratifiedSettings(n_strata=0)
    df, label = _pool(300)
    with pytest.raises(AssayInputError, match="n_strata"):
        evaluate(df, dict(zip(df["id"], label)), design="stratified", budget=10,
                 options={"n_strata": 0})
    s = StratifiedSettings(n_strata=12)
    assert settings_from_dict(json.loads(json.dumps(s.to_dict()))) == s

    @dataclasses.dataclass(frozen=True)
    class WithANewField(StratifiedSettings):
        new_field: int = 7

    key = run_key(s, "d", "fp", 1, "gold")
    assert run_key(WithANewField(n_strata=12), "d", "fp", 1, "gold") == key
    assert run_key(StratifiedSettings(n_strata=13), "d", "fp", 1, "gold") != key
    assert settings_from_options("auto", {"strata": "csf", "epsilon": 0.1}) == AutoSettings()


def test_a_run_is_replayed_from_what_it_saved(tmp_path):
    df, label = _pool()
    truth = dict(zip(df["id"], label))
    db = str(tmp_path / "assay.db")
    first = evaluate(df, truth, design="stratified", budget=150, seed=9, store=db,
                     dataset="d", options={"n_strata": 12, "allocation": "proportional"})
    raw = sqlite3.connect(tmp_path / "assay.db")
    saved = json.loads(raw.execute("SELECT settings FROM assay_runs").fetchone()[0])
    assert saved == {"design": "stratified", "alpha": 0.5, "strata": "csf", "n_strata": 12,
                     "allocation": "proportional", "floors": True, "by_prediction": True}
    again = evaluate(df, truth, store=db, run=first.params["run"], budget=150)
    assert again.to_dict() == first.to_dict() and again.new_labels == 0
    more = evaluate(df, truth, store=db, run=first.params["run"], budget=300)
    assert more.labels_used == 300 and more.new_labels == 150
    assert more.params["run"] == first.params["run"]


def test_no_password_in_any_message(postgres_url):
    bad = postgres_url.replace("assay:assay@", "assay:Sup3rS3cret@")
    with pytest.raises(StoreError) as err:
        LabelStore(bad)
    assert "Sup3rS3cret" not in str(err.value) and "***" in str(err.value)
    df, label = _pool(100)
    with pytest.raises(AssayInputError) as err2:
        evaluate(df, dict(zip(df["id"], label)), design="passive", budget=5, store=bad)
    assert "Sup3rS3cret" not in str(err2.value)

"""Judgments vs statuses, the schema version and the migration of a 0.1.0 store (issue 9 point 4,
issue 10 points 7 and 10).

``tests/data/store_v0_1_0_skips.db`` was written by release 0.1.0 (commit bd65c11) on
``store_v0_1_0_skips_pool.parquet`` (600 items, its ``label`` column the truth):
dataset ``ds1``, annotator ``<lambda>``: a stratified run (budget 120, seed 1) then a passive
run (budget 80, seed 2), 181 distinct labels (145 zeros, 36 ones); dataset ``ds2``, annotator
``ann``: a stratified run (budget 60, seed 3) whose annotator skipped every 7th item:
60 labels (43 zeros, 17 ones) and 11 skips stored as label −1. 3 runs, 260 draws.
"""
from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pandas as pd
import pytest
from sqlalchemy import create_engine, text
from typer.testing import CliRunner

from assay.errors import AssayInputError, StoreError
from assay.evaluation import evaluate
from assay.labels.sources import LabelSource
from assay.labels.store import Judgment, LabelStore, Role, Status

DATA = Path(__file__).parent / "data"
V0 = DATA / "store_v0_1_0_skips.db"
V0_POOL = DATA / "store_v0_1_0_skips_pool.parquet"


class Counting(LabelSource):
    def __init__(self, truth: dict[str, int], annotator: str) -> None:
        self.truth, self.annotator, self.asked = truth, annotator, []

    def label(self, index: int, key: str) -> int:
        self.asked.append(key)
        return self.truth[key]


@pytest.fixture()
def v0_copy(tmp_path: Path) -> Path:
    dst = tmp_path / "old.db"
    shutil.copy(V0, dst)
    return dst


def test_v0_store_migrates_with_no_label_lost(v0_copy):
    store = LabelStore(v0_copy)
    assert store.previous_version == 0
    ds1 = store.labels("ds1", "<lambda>")
    assert len(ds1) == 181 and sum(ds1.values()) == 36
    ds2 = store.labels("ds2", "ann")
    assert len(ds2) == 60 and sum(ds2.values()) == 17
    assert store.statuses("ds2", "ann") == {k: Status.SKIPPED for k in store.statuses("ds2",
                                                                                       "ann")}
    assert len(store.statuses("ds2", "ann")) == 11
    raw = sqlite3.connect(v0_copy)
    tables = {r[0] for r in raw.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    assert "labels" not in tables                               # the old table is gone …
    assert raw.execute("SELECT count(*) FROM assay_judgments WHERE value < 0").fetchone()[0] == 0
    assert raw.execute("SELECT count(*) FROM assay_judgments").fetchone()[0] == 252  # … no row lost
    assert raw.execute("SELECT count(*) FROM assay_draws").fetchone()[0] == 260
    assert raw.execute("SELECT version FROM assay_schema").fetchone()[0] == 2   # 0 → 1 → 2
    assert raw.execute("SELECT sql FROM sqlite_master WHERE name = "
                       "'ix_judgment_dataset_annotator'").fetchone()[0] == (
        "CREATE INDEX ix_judgment_dataset_annotator ON assay_judgments (dataset, annotator)")
    store.close()
    assert LabelStore(v0_copy).previous_version == 2           # opening again: nothing to do


def test_v0_store_resumes_without_asking_again(v0_copy):
    # the store holds the labels of release 0.1.0's draws; this test is of the migration
    # (labels kept and reused by key), so it draws as 0.1.0 did: without the detection floors
    # (on by default since session 11; a rerun with them asks for the items they add), and
    # with score strata alone (strata split by the prediction: session 16)
    df = pd.read_parquet(V0_POOL)
    truth = dict(zip(df["id"], df["label"]))
    pool = df.drop(columns="label")
    oracle = Counting(truth, "<lambda>")
    res = evaluate(pool, oracle, design="stratified", budget=120, seed=1, store=str(v0_copy),
                   dataset="ds1", options={"floors": False, "by_prediction": False})
    assert oracle.asked == [] and res.new_labels == 0 and res.reused_labels == 120
    skipper = Counting(truth, "ann")
    res2 = evaluate(pool, skipper, design="stratified", budget=60, seed=3, store=str(v0_copy),
                    dataset="ds2", options={"floors": False, "by_prediction": False})
    assert skipper.asked == [] and res2.labels_used == 60     # the old skips are skips again


def test_statuses_are_not_labels(tmp_path):
    store = LabelStore(tmp_path / "s.db")
    store.record("d", [Judgment("a", "ann", 1), Judgment("b", "ann", None, Status.SKIPPED),
                       Judgment("c", "adj", 0, role=Role.ADJUDICATOR),
                       Judgment("e", "ann", None, Status.UNASSESSABLE)])
    assert store.labels("d", "ann") == {"a": 1}
    assert store.statuses("d", "ann") == {"b": Status.SKIPPED, "e": Status.UNASSESSABLE}
    roles = {j.item: j.role for j in store.judgments("d")}
    assert roles["c"] == Role.ADJUDICATOR and roles["a"] == Role.ASSESSOR
    with pytest.raises(ValueError):
        Judgment("x", "ann", -1, Status.SKIPPED)               # a status carries no value
    raw = sqlite3.connect(tmp_path / "s.db")
    assert raw.execute("SELECT count(*) FROM assay_judgments WHERE value IS NULL"
                       ).fetchone()[0] == 2


def test_foreign_labels_table_is_a_one_line_store_error(tmp_path):
    db = tmp_path / "foreign.db"
    con = sqlite3.connect(db)
    con.execute("CREATE TABLE labels (name TEXT, colour TEXT)")
    con.commit()
    with pytest.raises(StoreError, match="has a table 'labels' that is not assay's"):
        LabelStore(db)
    from assay.interfaces.cli import app
    pool = pd.DataFrame({"id": ["a", "b"], "prediction": [1, 0]})
    pool.to_csv(tmp_path / "p.csv", index=False)
    pool.assign(label=[1, 0])[["id", "label"]].to_csv(tmp_path / "g.csv", index=False)
    res = CliRunner().invoke(app, ["evaluate", str(tmp_path / "p.csv"), "--labels",
                                   str(tmp_path / "g.csv"), "--store", str(db)])
    assert res.exit_code == 2 and "Traceback" not in res.output
    assert "not assay's" in res.output and len(res.output.strip().splitlines()) <= 2
    assert con.execute("SELECT count(*) FROM sqlite_master").fetchone()[0] == 1  # untouched


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_names_too_long_and_big_seeds(backend, tmp_path, request):
    url = (str(tmp_path / "n.db") if backend == "sqlite"
           else request.getfixturevalue("postgres_url"))
    df = pd.DataFrame({"id": [f"i{i}" for i in range(50)], "prediction": [1, 0] * 25})
    gold = {f"i{i}": i % 3 == 0 for i in range(50)}
    with pytest.raises(StoreError, match="dataset name of 300 characters"):
        evaluate(df, gold, design="passive", budget=5, store=url, dataset="d" * 300)
    with pytest.raises(StoreError, match="annotator name of 201 characters"):
        evaluate(df, gold, design="passive", budget=5, store=url, annotator="a" * 201)
    with pytest.raises(AssayInputError, match="--seed"):
        evaluate(df, gold, design="passive", budget=5, store=url, seed=2**64)
    with pytest.raises(AssayInputError, match="--seed"):
        evaluate(df, gold, design="passive", budget=5, store=url, seed=-1)
    res = evaluate(df, gold, design="passive", budget=5, store=url, seed=2**63 - 1,
                   dataset=f"big-seed-{tmp_path.name}")
    assert res.labels_used == 5


def test_v0_layout_migrates_on_postgresql(postgres_url):
    """The same 0.1.0 rows, in 0.1.0's tables on a fresh PostgreSQL schema, migrate too."""
    eng = create_engine(postgres_url)
    src = sqlite3.connect(V0)
    schema = "v0_" + Path(postgres_url).name[-8:]
    with eng.begin() as conn:
        conn.execute(text(f"CREATE SCHEMA {schema}"))
    url = postgres_url + f"?options=-csearch_path%3D{schema}"
    eng = create_engine(url)
    with eng.begin() as conn:
        for (ddl,) in src.execute("SELECT sql FROM sqlite_master WHERE type='table'"):
            conn.execute(text(ddl.replace("DATETIME", "TIMESTAMP")))
        for table in ("labels", "runs", "draws"):
            cur = src.execute(f"SELECT * FROM {table}")
            cols = [c[0] for c in cur.description]
            rows = [dict(zip(cols, r)) for r in cur.fetchall()]
            conn.execute(text(f"INSERT INTO {table} ({', '.join(cols)}) VALUES "
                              f"({', '.join(':' + c for c in cols)})"), rows)
    eng.dispose()
    store = LabelStore(url)
    assert store.previous_version == 0
    assert len(store.labels("ds1", "<lambda>")) == 181 and len(store.statuses("ds2", "ann")) == 11
    assert "postgresql" in store.location and "assay:***@" in store.location
    store.close()


def test_the_independently_recorded_v0_store_migrates_and_resumes(tmp_path, er_frames):
    """``tests/data/store_v0_1_0.db``, written by another hand from release 0.1.0 on the real
    restaurant pool (its README gives the counts): no row lost, the skips are statuses, and the
    recorded run resumes on the current code with nothing asked again."""
    dst = tmp_path / "v010.db"
    shutil.copy(DATA / "store_v0_1_0.db", dst)
    store = LabelStore(dst)
    assert store.previous_version == 0
    assert len(store.labels("restaurant", "gold")) == 120
    assert len(store.labels("skips", "label")) == 40
    assert set(store.statuses("skips", "label").values()) == {Status.SKIPPED}
    assert len(store.statuses("skips", "label")) == 24
    raw = sqlite3.connect(dst)
    assert raw.execute("SELECT count(*) FROM assay_judgments").fetchone()[0] == 184
    assert raw.execute("SELECT count(*) FROM assay_draws").fetchone()[0] == 160
    store.close()
    df = er_frames["restaurant"]
    truth = {f"{a}\t{b}": int(v) for a, b, v in zip(df["left_id"], df["right_id"], df["label"])}
    store = LabelStore(dst)
    stored = set(store.labels("restaurant", "gold"))
    store.close()
    oracle = Counting(truth, "gold")
    res = evaluate(df.drop(columns="label"), oracle, budget=120, seed=5, store=str(dst),
                   dataset="restaurant")
    # the same arguments under today's defaults are another run (release 0.1.0 keyed its runs
    # otherwise, and drew without the tail knee and the exploration below matches): the same
    # first batch, and every stored label it draws is reused, none asked again
    assert not set(oracle.asked) & stored and res.labels_used == 120
    assert res.new_labels == len(oracle.asked) < 60
    # … and by its run id: release 0.1.0 stored its design's params (budget, n_strata,
    # pool_size beside the settings), which the settings set aside
    oracle = Counting(truth, "gold")
    res = evaluate(df.drop(columns="label"), oracle, budget=120, store=str(dst), run=1)
    assert oracle.asked == [] and res.new_labels == 0 and res.labels_used == 120

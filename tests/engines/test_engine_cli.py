"""``assay evaluate`` on the DuckDB engine: a Parquet file (--engine duckdb), a glob of files
and a table of a DuckDB database give the memory engine's estimates and the run's manifest;
what the engine cannot do is one line and exit code 2."""
from __future__ import annotations

import json

import duckdb
import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from assay.engines import MemoryEngine, RunManifest
from assay.engines.run import evaluate_on_engine
from assay.interfaces.cli import app

runner = CliRunner()


@pytest.fixture()
def files(tmp_path):
    rng = np.random.default_rng(1)
    n = 4000
    score = np.round(rng.normal(size=n), 3)
    label = (rng.random(n) < 1 / (1 + np.exp(-(3 * score - 3)))).astype(int)
    pool = pd.DataFrame({"id": np.arange(n) * 3, "score": score,
                         "prediction": (score > 0.8).astype(np.int8)})
    pool.to_parquet(tmp_path / "pool.parquet")
    pool.iloc[:1500].to_parquet(tmp_path / "part-1.parquet")
    pool.iloc[1500:].to_parquet(tmp_path / "part-2.parquet")
    con = duckdb.connect(str(tmp_path / "pool.duckdb"))
    con.execute(f"CREATE TABLE pairs AS SELECT * FROM read_parquet('{tmp_path / 'pool.parquet'}')")
    con.close()
    gold = pd.DataFrame({"id": pool["id"], "label": label})
    gold.to_csv(tmp_path / "gold.csv", index=False)
    return tmp_path, pool, gold


@pytest.mark.parametrize("design", ["stratified", "passive",
                                    pytest.param("auto", marks=pytest.mark.slow), "oasis"])
def test_evaluate_on_duckdb_matches_memory(files, design):
    tmp, pool, gold = files
    ref = evaluate_on_engine(MemoryEngine(pool), gold, design, 250, 6)
    for spec, extra in ((tmp / "pool.parquet", ["--engine", "duckdb"]),
                        (tmp / "part-*.parquet", []),
                        (f"{tmp / 'pool.duckdb'}:pairs", [])):
        out = tmp / "out.json"
        res = runner.invoke(app, ["evaluate", str(spec), "--labels", str(tmp / "gold.csv"),
                                  "--design", design, "--budget", "250", "--seed", "6",
                                  "--store", str(tmp / "s.db"), "--json", str(out), *extra])
        assert res.exit_code == 0, res.output
        doc = json.loads(out.read_text())
        assert doc["labels_used"] == 250 and doc["pool_size"] == 4000
        want = {m: ref.estimates[m].to_dict() for m in ("precision", "recall", "f1")}
        if design == "oasis":       # its prior's per-stratum sums are added in each engine's
            for m, e in want.items():   # order: the weights agree to the last bits only
                assert doc["estimates"][m] == {**e, **{k: pytest.approx(e[k], rel=1e-9)
                                                       for k in ("estimate", "ci_low",
                                                                 "ci_high") if k in e}}
        else:
            assert doc["estimates"] == want
        assert RunManifest.from_dict(doc["manifest"]).verify(MemoryEngine(pool)) == []


def test_engine_errors_are_one_line(files):
    tmp, _, _ = files
    for args, what in ((["--fpr", "0.1"], "not available on an engine"),
                       (["--design", "passive", "--replace"], "passive --replace")):
        res = runner.invoke(app, ["evaluate", str(tmp / "part-*.parquet"), "--labels",
                                  str(tmp / "gold.csv"), *args])
        assert res.exit_code == 2 and what in res.output, res.output
        assert "Traceback" not in res.output
    res = runner.invoke(app, ["evaluate", str(tmp / "nothing-*.parquet"), "--labels",
                              str(tmp / "gold.csv")])
    assert res.exit_code == 2 and "no file matches" in res.output
    res = runner.invoke(app, ["evaluate", str(tmp / "part-*.parquet"), "--labels",
                              str(tmp / "pool.parquet")])
    assert res.exit_code == 2 and "missing column 'label'" in res.output


def test_scores_spanning_more_than_a_double_are_one_line(files):
    """Scores at ±1.7e308 (max − min overflows): DuckDB's bin arithmetic failed with a cast
    error on NaN ('a value cannot be read'); now the pool is refused with what to do, and no
    output file is written."""
    tmp, pool, _ = files
    wide = pool.assign(score=pool["score"].where(pool.index > 1, [1.7e308, -1.7e308]
                                                 + [0.0] * (len(pool) - 2)))
    wide.to_parquet(tmp / "wide.parquet")
    out = tmp / "out.json"
    res = runner.invoke(app, ["evaluate", str(tmp / "wide.parquet"), "--labels",
                              str(tmp / "gold.csv"), "--engine", "duckdb", "--budget", "200",
                              "--json", str(out)])
    assert res.exit_code == 2 and "a range wider than a double holds" in res.output, res.output
    assert "Traceback" not in res.output and "wide.parquet" in res.output
    assert not out.exists()


def test_spark_missing_is_one_line(files, monkeypatch):
    """--engine spark without pyspark, or without Java: one line naming what to install,
    exit code 2, no session started."""
    import sys

    import assay.engines.spark_local as sl
    tmp, _, _ = files
    args = ["evaluate", str(tmp / "pool.parquet"), "--labels", str(tmp / "gold.csv"),
            "--engine", "spark", "--budget", "50"]
    monkeypatch.setattr(sl, "active_session", lambda: None)
    monkeypatch.setattr(sl, "missing_java", lambda env=None: "Java was not found (no java on "
                                                             "PATH, JAVA_HOME unset)")
    res = runner.invoke(app, args)
    assert res.exit_code == 2 and "Java was not found" in res.output, res.output
    assert "Traceback" not in res.output and len(res.output.strip().splitlines()) <= 2
    monkeypatch.setitem(sys.modules, "pyspark.sql", None)       # import fails
    res = runner.invoke(app, args)
    assert res.exit_code == 2 and "pyspark is not installed" in res.output, res.output
    assert "Traceback" not in res.output


@pytest.mark.slow
def test_evaluate_on_spark_matches_duckdb(files, spark):
    """``--engine spark`` on a Parquet file and on a glob (in the test session, which the run
    leaves running): the estimates and manifest of ``--engine duckdb``, design auto by
    default."""
    tmp, pool, _ = files
    docs = {}
    for name, spec in (("duckdb", tmp / "pool.parquet"), ("spark", tmp / "pool.parquet"),
                       ("spark-glob", tmp / "part-*.parquet")):
        out = tmp / f"{name}.json"
        res = runner.invoke(app, ["evaluate", str(spec), "--labels", str(tmp / "gold.csv"),
                                  "--engine", name.split("-")[0], "--budget", "200",
                                  "--seed", "4", "--json", str(out)])
        assert res.exit_code == 0, res.output
        docs[name] = json.loads(out.read_text())
    for name in ("spark", "spark-glob"):
        assert docs[name]["design"] == "auto"
        assert docs[name]["estimates"] == docs["duckdb"]["estimates"]
        assert docs[name]["manifest"]["sizes"] == docs["duckdb"]["manifest"]["sizes"]
        assert RunManifest.from_dict(docs[name]["manifest"]).verify(MemoryEngine(pool)) == []
    assert spark.sparkContext._jsc is not None          # the shared session still runs

"""Bad pools reach the user as one AssayInputError line naming the file (or table) and column;
a connection passed in is used without changing its settings."""
from __future__ import annotations

import duckdb
import numpy as np
import pandas as pd
import pytest

from assay.engines import DuckDBEngine, MemoryEngine, OrderKeys
from assay.errors import AssayInputError


def _frame(n: int = 50) -> pd.DataFrame:
    rng = np.random.default_rng(0)
    return pd.DataFrame({"id": np.arange(n), "score": rng.normal(size=n),
                         "prediction": rng.integers(0, 2, n).astype(np.int8)})


def _write(tmp_path, df: pd.DataFrame, name: str = "pool.parquet") -> str:
    path = tmp_path / name
    df.to_parquet(path)
    return str(path)


def _error(fn, *args, **kw) -> str:
    with pytest.raises(AssayInputError) as exc:
        eng = fn(*args, **kw)
        eng.describe()
    msg = str(exc.value)
    assert "\n" not in msg
    return msg


def test_missing_file_glob_and_folder(tmp_path):
    assert _error(DuckDBEngine, str(tmp_path / "nope.parquet")) == \
        f"{tmp_path / 'nope.parquet'}: file not found"
    assert "no file matches" in _error(DuckDBEngine, str(tmp_path / "x*.parquet"))
    sub = tmp_path / "d.parquet"
    sub.mkdir()
    assert "is a folder" in _error(DuckDBEngine, str(sub))


def test_unreadable_file(tmp_path):
    bad = tmp_path / "bad.parquet"
    bad.write_bytes(b"not parquet at all")
    assert _error(DuckDBEngine, str(bad)).startswith(f"{bad}: cannot be read")


@pytest.mark.parametrize("engine", ["duckdb", "memory"])
def test_missing_columns(tmp_path, engine):
    for drop, needle in (("score", "missing column 'score'"),
                         ("prediction", "missing column 'prediction'"),
                         ("id", "no id column found")):
        df = _frame().drop(columns=drop)
        msg = (_error(DuckDBEngine, _write(tmp_path, df)) if engine == "duckdb"
               else _error(MemoryEngine, df, source="pool.parquet"))
        assert needle in msg and "pool.parquet" in msg


@pytest.mark.parametrize("engine", ["duckdb", "memory"])
def test_non_numeric_score(tmp_path, engine):
    df = _frame().assign(score=lambda d: d["score"].astype(str))
    msg = (_error(DuckDBEngine, _write(tmp_path, df)) if engine == "duckdb"
           else _error(MemoryEngine, df, source="pool.parquet"))
    assert "pool.parquet" in msg and "column 'score' has type" in msg
    assert "expected a numeric score column" in msg


@pytest.mark.parametrize("engine", ["duckdb", "memory"])
def test_bad_values(tmp_path, engine):
    cases = [(lambda d: d.assign(score=d["score"].where(d.index != 3, np.nan)), "'score'"),
             (lambda d: d.assign(score=d["score"].where(d.index != 4, np.inf)), "'score'"),
             (lambda d: d.assign(prediction=d["prediction"].where(d.index != 5, 2)),
              "'prediction'")]
    for change, col in cases:
        df = change(_frame())
        msg = (_error(DuckDBEngine, _write(tmp_path, df)) if engine == "duckdb"
               else _error(MemoryEngine, df, source="pool.parquet"))
        assert "pool.parquet" in msg and col in msg


def test_float_ids_are_refused(tmp_path):
    df = _frame().assign(id=lambda d: d["id"] + 0.5)
    assert "id column 'id' has type DOUBLE" in _error(DuckDBEngine, _write(tmp_path, df))


def test_unknown_id_in_fetch(tmp_path):
    df = _frame()
    for eng in (MemoryEngine(df), DuckDBEngine(_write(tmp_path, df))):
        with pytest.raises(AssayInputError, match=r"no item with id \[999\]"):
            eng.fetch(pd.DataFrame({"id": [1, 999]}))


def test_user_connection_and_table_name_untouched(tmp_path):
    con = duckdb.connect()
    con.execute("SET threads = 1")
    con.register("frame", _frame(300))
    con.execute("CREATE TABLE items AS SELECT * FROM frame")
    con.unregister("frame")
    before = con.execute("SELECT current_setting('threads')").fetchone()
    tables = con.execute("SELECT table_name FROM information_schema.tables").fetchall()
    eng = DuckDBEngine("items", connection=con)
    mem = MemoryEngine(_frame(300))
    assert eng.describe().fingerprint == mem.describe().fingerprint
    edges = OrderKeys.score_cuts([0.0])
    pd.testing.assert_frame_equal(eng.stratum_prefix(edges, np.array([5, 5]), 1),
                                  mem.stratum_prefix(edges, np.array([5, 5]), 1))
    eng.fetch(pd.DataFrame({"id": [3]}))
    assert con.execute("SELECT current_setting('threads')").fetchone() == before
    assert con.execute("SELECT table_name FROM information_schema.tables").fetchall() == tables
    assert "items" in eng.describe().source
    with pytest.raises(AssayInputError, match="^nope: cannot be read"):
        DuckDBEngine("nope", connection=con)


def test_glob_of_several_files(tmp_path):
    df = _frame(400)
    for i in range(4):
        df.iloc[i * 100:(i + 1) * 100].to_parquet(tmp_path / f"part-{i}.parquet")
    eng = DuckDBEngine(str(tmp_path / "part-*.parquet"))
    assert eng.describe().fingerprint == MemoryEngine(df).describe().fingerprint


def test_every_pass_validates_first(tmp_path):
    df = _frame().assign(prediction=lambda d: d["prediction"].astype(np.int32).where(d.index != 9, 300))
    eng = DuckDBEngine(_write(tmp_path, df))
    with pytest.raises(AssayInputError, match="column 'prediction' has 1 value"):
        eng.segment_counts(OrderKeys.score_cuts([0.0]))
    with pytest.raises(AssayInputError, match="column 'prediction' has 1 value"):
        eng.stratum_prefix(OrderKeys.score_cuts([0.0]), np.array([1, 1]), 0)

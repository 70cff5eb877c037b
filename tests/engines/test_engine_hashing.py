"""assay-hash-v1: the shipped test vectors (written by a plain-Python reference,
make_hash_vectors.py) hold in numpy and in DuckDB SQL (doctests: tests/core/test_doctests.py)."""
from __future__ import annotations

from pathlib import Path

import duckdb
import numpy as np
import pandas as pd
import pytest

from assay.engines.hashing import hash64, hash_sql, key_from_int, key_from_text, key_sql

VECTORS = pd.read_csv(Path(__file__).with_name("hash_vectors.csv"), dtype=str,
                      keep_default_na=False)


def _u64(col: pd.Series) -> np.ndarray:
    return np.array([int(x) for x in col], dtype=np.uint64)


def test_vectors_cover_both_id_kinds_and_reserved_seeds():
    assert set(VECTORS["kind"]) == {"int", "text"}
    assert {str(2**64 - 1), "0"} <= set(VECTORS["seed"])


@pytest.mark.parametrize("kind", ["int", "text"])
def test_numpy_matches_vectors(kind):
    v = VECTORS[VECTORS["kind"] == kind]
    keys = (key_from_int(v["id"].astype(np.int64).to_numpy()) if kind == "int"
            else key_from_text(v["id"].tolist()))
    assert np.array_equal(keys, _u64(v["key"]))
    for seed, grp in v.groupby("seed"):
        k = _u64(grp["key"])
        assert np.array_equal(hash64(int(seed), k), _u64(grp["hash"])), seed


@pytest.mark.parametrize("kind", ["int", "text"])
def test_duckdb_matches_vectors(kind):
    v = VECTORS[VECTORS["kind"] == kind].reset_index(drop=True)
    con = duckdb.connect()
    frame = pd.DataFrame({"id": v["id"].astype(np.int64) if kind == "int" else v["id"],
                          "row": np.arange(len(v))})
    con.register("ids", frame)
    key = key_sql(["id"], kind == "int")
    got_keys = con.execute(f"SELECT {key} FROM ids ORDER BY row").fetchnumpy()
    assert np.array_equal(np.asarray(list(got_keys.values())[0], dtype=np.uint64), _u64(v["key"]))
    for seed, grp in v.groupby("seed"):
        rows = grp.index.tolist()
        res = con.execute(f"SELECT row, {hash_sql(int(seed), key)} AS h FROM ids "
                          f"WHERE row IN ({', '.join(map(str, rows))}) ORDER BY row").fetchall()
        assert [int(h) for _, h in res] == [int(x) for x in grp["hash"]], seed


def test_two_text_columns_hash_as_their_tab_joined_text():
    con = duckdb.connect()
    con.register("t", pd.DataFrame({"a": ["b000aoz7ko"], "b": ["http://www.google.com/base/feeds/x"]}))
    got = con.execute(f"SELECT {key_sql(['a', 'b'], False)} FROM t").fetchone()[0]
    row = VECTORS[VECTORS["id"] == "b000aoz7ko\thttp://www.google.com/base/feeds/x"].iloc[0]
    assert got == int(row["key"])


def test_hash_is_a_bijection_of_the_key_for_one_seed():
    keys = np.arange(200_000, dtype=np.uint64)
    assert np.unique(hash64(3, keys)).size == keys.size


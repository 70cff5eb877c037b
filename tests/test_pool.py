"""Each kind of bad pool or gold input gives its documented error (file, row, expectation)."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from assay.errors import AssayInputError
from assay.labels.sources import label_source
from assay.formats.pool import load_pool


def frame(**over):
    df = pd.DataFrame({"id": ["a", "b", "c", "d"], "prediction": [1, 0, 1, 0],
                       "score": [2.0, -1.0, 0.5, -3.0]})
    for k, v in over.items():
        df[k] = v
    return df


def test_loads_parquet_csv_frame_arrow(tmp_path):
    df = frame()
    df.to_parquet(tmp_path / "p.parquet")
    df.to_csv(tmp_path / "p.csv", index=False)
    for src in (tmp_path / "p.parquet", tmp_path / "p.csv", df, pa.Table.from_pandas(df)):
        pool = load_pool(src)
        assert pool.size == 4
        assert pool.prediction.tolist() == [1, 0, 1, 0]
        assert pool.keys() == ["a", "b", "c", "d"]


def test_two_id_columns_and_probability():
    df = pd.DataFrame({"left_id": [1, 1], "right_id": [2, 3], "prediction": [0, 1],
                       "probability": [0.1, 0.9]})
    pool = load_pool(df)
    assert pool.id_columns == ["left_id", "right_id"]
    assert pool.keys() == ["1\t2", "1\t3"]
    assert np.allclose(pool.prior_probability(), [0.1, 0.9])


def test_missing_prediction_column(tmp_path):
    path = tmp_path / "pool.csv"
    frame().drop(columns="prediction").to_csv(path, index=False)
    with pytest.raises(AssayInputError, match=r"pool\.csv: missing column 'prediction'"):
        load_pool(path)


def test_missing_id_column(tmp_path):
    path = tmp_path / "pool.csv"
    frame().drop(columns="id").to_csv(path, index=False)
    with pytest.raises(AssayInputError, match="no id column found"):
        load_pool(path)


def test_non_binary_prediction_names_line(tmp_path):
    path = tmp_path / "pool.csv"
    frame(prediction=[1, 0, 2, 0]).to_csv(path, index=False)
    with pytest.raises(AssayInputError) as e:
        load_pool(path)
    msg = str(e.value)
    assert "pool.csv" in msg and "line 4" in msg and "'prediction'" in msg and "0 or 1" in msg


def test_nan_score_names_row(tmp_path):
    path = tmp_path / "pool.parquet"
    frame(score=[1.0, np.nan, 0.0, 1.0]).to_parquet(path)
    with pytest.raises(AssayInputError, match=r"pool\.parquet, row 2: column 'score'.*finite"):
        load_pool(path)


def test_probability_out_of_range():
    with pytest.raises(AssayInputError, match=r"row 3: column 'probability'.*\[0.0, 1.0\]"):
        load_pool(frame(probability=[0.1, 0.2, 1.5, 0.3]))


def test_duplicate_ids_name_both_rows(tmp_path):
    path = tmp_path / "pool.csv"
    frame(id=["a", "b", "a", "d"]).to_csv(path, index=False)
    with pytest.raises(AssayInputError) as e:
        load_pool(path)
    msg = str(e.value)
    assert "line 4" in msg and "duplicate id ['a']" in msg and "first seen at line 2" in msg


def test_missing_file_and_unknown_type(tmp_path):
    with pytest.raises(AssayInputError, match="file not found"):
        load_pool(tmp_path / "nope.parquet")
    (tmp_path / "x.xlsx").write_text("x")
    with pytest.raises(AssayInputError, match="unknown file type"):
        load_pool(tmp_path / "x.xlsx")


def test_gold_errors(tmp_path):
    pool = load_pool(frame())
    bad = tmp_path / "gold.csv"
    pd.DataFrame({"id": ["a", "b"], "label": [1, 7]}).to_csv(bad, index=False)
    with pytest.raises(AssayInputError, match=r"gold\.csv, line 3: column 'label' has value 7"):
        label_source(bad, pool)
    pd.DataFrame({"id": ["a"], "truth": [1]}).to_csv(bad, index=False)
    with pytest.raises(AssayInputError, match="missing column 'label'"):
        label_source(bad, pool)
    gold = label_source(pd.DataFrame({"id": ["a", "b"], "label": [1, 0]}), pool)
    assert gold.label(0, "a") == 1
    with pytest.raises(AssayInputError, match="no label for item 'c'"):
        gold.label(2, "c")


def test_labels_as_mapping_and_callable():
    pool = load_pool(frame())
    m = label_source({"a": 1, "b": 0, "c": 1, "d": 0}, pool)
    assert [m.label(i, k) for i, k in enumerate(pool.keys())] == [1, 0, 1, 0]
    c = label_source(lambda key: int(key in ("a", "c")), pool)
    assert c.label(0, "a") == 1 and c.label(1, "b") == 0


@settings(max_examples=200, deadline=None)
@given(st.lists(st.one_of(st.text(alphabet=st.sampled_from(
    [" ", "\t", "\n", "\x1c", "\x85", "\u00a0", "\u2028", "\u3000", "a", "é", "7"]), max_size=3),
    st.none(), st.integers()), max_size=12))
def test_blank_ids_found_as_python_finds_them(values):
    """:func:`assay.formats.pool._blanks` (Arrow slices the first characters) marks exactly
    the values that Python's ``str.strip`` leaves empty, in text and mixed columns."""
    from assay.formats.pool import _blank, _blanks
    texts = [v for v in values if not isinstance(v, int)]
    for col in (pd.Series(values, dtype=object), pd.Series(texts, dtype=object),
                pd.Series(texts, dtype="string")):
        assert _blanks(col).tolist() == [_blank(v) for v in col.to_numpy(dtype=object)]

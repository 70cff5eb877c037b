"""Issue 10, point 2 (and the --id / delimiter hints of point 10): CSV/TSV ids are strings
exactly as written; numeric columns are still parsed and checked with row-naming errors.

On the release before (74dff40): ``007`` and ``7`` were duplicates, ``1.10`` was ``1.1``,
``00068`` became 68 (a CSV pool no longer matched a Parquet gold file with string ids),
``NA``/``null`` were empty ids, ``TRUE`` became ``True``; ``--id doc,sec`` and a
semicolon-delimited file got no hint.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from assay.errors import AssayInputError
from assay.formats.pool import load_pool
from assay.interfaces.cli import app
from assay.labels.sources import label_source

runner = CliRunner()


def write(path, text):
    path.write_text(text)
    return path


def test_ids_are_read_exactly_as_written(tmp_path):
    pool = load_pool(write(tmp_path / "p.csv", "id,prediction\n007,1\n7,0\n1.10,1\n1.1,0\n"
                                               "NA,1\nnull,0\nTRUE,1\n-0,0\n"))
    assert pool.keys() == ["007", "7", "1.10", "1.1", "NA", "null", "TRUE", "-0"]
    assert pool.prediction.tolist() == [1, 0, 1, 0, 1, 0, 1, 0]


def test_tsv_ids_too(tmp_path):
    pool = load_pool(write(tmp_path / "p.tsv", "left_id\tright_id\tprediction\n"
                                               "01\t1\t1\n1\t01\t0\n"))
    assert pool.keys() == ["01\t1", "1\t01"]


@pytest.mark.parametrize("text,line", [("id,prediction\n1,1\n,0\n", 3),
                                       ("id,prediction\n1,1\n2,0\n  ,1\n", 4)])
def test_empty_id_is_an_error_naming_the_line(tmp_path, text, line):
    with pytest.raises(AssayInputError, match=rf"p\.csv, line {line}: empty id"):
        load_pool(write(tmp_path / "p.csv", text))


@pytest.mark.parametrize("text,needle", [
    ("id,prediction\na,1\nb,yes\n", "line 3: column 'prediction' has value 'yes'"),
    ("id,prediction\na,1\nb,2\n", "line 3: column 'prediction' has value 2"),
    ("id,prediction,score\na,1,0.5\nb,0,inf\n", "line 3: column 'score' has value inf"),
    ("id,prediction,probability\na,1,0.5\nb,0,1.5\n", "line 3: column 'probability'"),
    ("id,prediction,score\na,1,\nb,0,1\n", "line 2: column 'score' has value ''"),
])
def test_numeric_columns_are_still_parsed_and_checked(tmp_path, text, needle):
    with pytest.raises(AssayInputError, match=needle):
        load_pool(write(tmp_path / "p.csv", text))


def test_numbers_and_truth_words_in_numeric_columns(tmp_path):
    pool = load_pool(write(tmp_path / "p.csv", "id,prediction,score,probability\n"
                                               "a,TRUE,1e-3,0.25\nb,false,-2,1\nc,1.0,+3,0\n"))
    assert pool.prediction.tolist() == [1, 0, 1]
    assert pool.score.tolist() == [0.001, -2.0, 3.0] and pool.probability.tolist() == [.25, 1, 0]


def test_csv_pool_matches_parquet_gold_with_string_ids(tmp_path):
    """The case of the issue: ids like 00068 on both sides, one CSV and one Parquet."""
    ids = [f"{i:05d}" for i in range(50, 250)]
    rng = np.random.default_rng(0)
    pd.DataFrame({"id": ids, "prediction": rng.integers(0, 2, 200)}).to_csv(tmp_path / "p.csv",
                                                                            index=False)
    pd.DataFrame({"id": ids, "label": rng.integers(0, 2, 200)}).to_parquet(tmp_path / "g.pq")
    res = runner.invoke(app, ["evaluate", str(tmp_path / "p.csv"), "--labels",
                              str(tmp_path / "g.pq"), "--budget", "200", "--store",
                              str(tmp_path / "s.db")])
    assert res.exit_code == 0, res.output
    assert "200 labels (200 new" in res.stdout


def test_parquet_pool_with_integer_ids_matches_gold_ids_as_text(tmp_path):
    pd.DataFrame({"id": [68, 7, 100], "prediction": [1, 0, 1]}).to_parquet(tmp_path / "p.pq")
    pool = load_pool(tmp_path / "p.pq")
    gold = label_source(write(tmp_path / "g.csv", "id,label\n68,1\n007,0\n100,1\n"), pool)
    assert gold.values.tolist() == [1, 0, 1]        # '007' read as the pool's integer 7
    floats = pd.DataFrame({"id": [68.0, 7.0, 100.0], "label": [0, 1, 0]})
    assert label_source(floats, pool).values.tolist() == [0, 1, 0]   # no '68.0'


def test_text_pool_does_not_guess_gold_ids(tmp_path):
    pool = load_pool(write(tmp_path / "p.csv", "id,prediction\n007,1\n7,0\n"))
    gold = label_source(write(tmp_path / "g.csv", "id,label\n7,1\n007,0\n"), pool)
    assert gold.values.tolist() == [0, 1]


def test_gold_sharing_no_id_with_the_pool_is_an_error(tmp_path):
    pool = load_pool(write(tmp_path / "p.csv", "id,prediction\n00068,1\n00069,0\n"))
    with pytest.raises(AssayInputError, match=r"g\.csv: none of its 2 ids is an id of the pool"):
        label_source(write(tmp_path / "g.csv", "id,label\n68,1\n69,0\n"), pool)


def test_empty_gold_and_empty_annotator_are_errors(tmp_path):
    pool = load_pool(write(tmp_path / "p.csv", "id,prediction\na,1\nb,0\n"))
    with pytest.raises(AssayInputError, match="no labels"):
        label_source(write(tmp_path / "g.csv", "id,label\n"), pool)
    with pytest.raises(AssayInputError, match=r"line 3: empty annotator"):
        label_source(write(tmp_path / "g.csv", "id,label,annotator\na,1,x\nb,0,\n"), pool)


@pytest.mark.parametrize("suffix,text,word", [
    (".csv", "id;prediction\n1;0\n", "semicolon"),
    (".csv", "id\tprediction\n1\t0\n", "tab"),
    (".tsv", "id,prediction\n1,0\n", "comma")])
def test_wrong_delimiter_gets_a_hint(tmp_path, suffix, text, word):
    with pytest.raises(AssayInputError, match=f"looks {word}-delimited"):
        load_pool(write(tmp_path / f"p{suffix}", text))


def test_id_with_a_comma_says_to_repeat_the_flag(tmp_path):
    path = write(tmp_path / "p.csv", "doc,sec,prediction\na,1,1\na,2,0\n")
    res = runner.invoke(app, ["evaluate", str(path), "--labels", str(path), "--id", "doc,sec",
                              "--store", str(tmp_path / "s.db")])
    assert res.exit_code == 2
    assert "repeat the flag: --id doc --id sec" in res.stderr and "Traceback" not in res.output
    assert load_pool(path, id_columns=["doc", "sec"]).keys() == ["a\t1", "a\t2"]
    literal = write(tmp_path / "q.csv", '"doc,sec",prediction\n"a,1",1\n')
    assert load_pool(literal, id_columns=["doc,sec"]).keys() == ["a,1"]


@pytest.mark.parametrize("text,needle", [
    ("id,prediction\n1,0\n2,0,5\n", "line 3: 3 fields where the header has 2"),
    ("id,prediction\n1,0\n2\n", "line 3: column 'prediction' has value ''"),
    ("id,id,prediction\n1,2,0\n", "column 'id' appears twice"),
    ("", "the file is empty")])
def test_ragged_rows_repeated_columns_and_empty_files(tmp_path, text, needle):
    with pytest.raises(AssayInputError) as e:
        load_pool(write(tmp_path / "p.csv", text))
    assert needle in str(e.value)


def test_binary_garbage_is_one_clear_error(tmp_path):
    (tmp_path / "p.csv").write_bytes(b"id,prediction\n\xff\xfe\x00\x01,1\n")
    with pytest.raises(AssayInputError, match="is not UTF-8 text"):
        load_pool(tmp_path / "p.csv")

"""Readers and writers of TREC runs, qrels, collections and sample files."""
import pytest

from assay.errors import AssayInputError as InputError
from assay.formats.trec import (SampleRow, read_collection, read_qrels,
                                   read_runs, read_sample, write_sample)


def _w(tmp, name, text):
    p = tmp / name
    p.write_text(text)
    return p


def test_runs(tmp_path):
    a = _w(tmp_path, "a", "1 Q0 d1 1 2.5 X\n1 Q0 d2 2 1.5 X\n2 Q0 d1 1 1 X\n\n")
    b = _w(tmp_path, "b", "1 Q0 d3 1 0.5 Y\n")
    r = read_runs([a, b])
    assert r.order == ["X", "Y"] and r.topics() == ["1", "2"]
    assert r.returned["1"]["X"] == {"d1", "d2"} and r.where[("1", "Y", "d3")] == (str(b), 1)
    dup = _w(tmp_path, "dup", "1 Q0 d1 1 2.5 X\n1 Q0 d1 2 1.5 X\n")
    with pytest.raises(InputError, match=r"dup:2: docno 'd1' returned twice .* line 1"):
        read_runs([dup])
    with pytest.raises(InputError, match="run id 'X' already used"):
        read_runs([a, _w(tmp_path, "c", "1 Q0 d9 1 1 X\n")])
    with pytest.raises(InputError, match="expected a numeric score"):
        read_runs([_w(tmp_path, "s", "1 Q0 d1 1 high X\n")])
    with pytest.raises(InputError, match="empty run file"):
        read_runs([_w(tmp_path, "e", "\n")])


def test_collection_and_qrels(tmp_path):
    assert read_collection(_w(tmp_path, "d", "a\n\nb\n")) == ["a", "b"]
    with pytest.raises(InputError, match=r"d2:3: duplicate docno 'a' \(first at line 1\)"):
        read_collection(_w(tmp_path, "d2", "a\nb\na\n"))
    with pytest.raises(InputError, match="one docno per line"):
        read_collection(_w(tmp_path, "d3", "a b\n"))
    q, lines = read_qrels(_w(tmp_path, "q", "1 0 a 1\n1 0 b -1\n2 0 a 0\n1 0 a 1\n"))
    assert q == {"1": {"a": 1, "b": -1}, "2": {"a": 0}} and lines[("1", "b")] == 2
    with pytest.raises(InputError, match="judged 0 here but 1 at line 1"):
        read_qrels(_w(tmp_path, "q2", "1 0 a 1\n1 0 a 0\n"))
    with pytest.raises(InputError, match="expected 4 fields"):
        read_qrels(_w(tmp_path, "q3", "1 a 1\n"))


def test_sample_round_trip_and_errors(tmp_path):
    rows = [SampleRow("a", "10", 0.25, "1"), SampleRow("b", "00", 1 / 3, "1")]
    p = tmp_path / "S.tsv"
    write_sample(p, rows)
    back = read_sample(p)
    assert [(r.docno, r.stratum, r.inclusion_probability, r.topic) for r in back] == \
        [("a", "10", 0.25, "1"), ("b", "00", 1 / 3, "1")]
    no_topic = _w(tmp_path, "n.tsv", "docno\tstratum\tinclusion_probability\na\tx\t0.5\n")
    assert read_sample(no_topic, default_topic="7")[0].topic == "7"
    with pytest.raises(InputError, match="no topic column"):
        read_sample(no_topic)
    with pytest.raises(InputError, match="missing inclusion_probability"):
        read_sample(_w(tmp_path, "h.tsv", "docno\tstratum\na\tx\n"))
    with pytest.raises(InputError, match="listed twice"):
        read_sample(_w(tmp_path, "t.tsv", "docno\tstratum\tinclusion_probability\ttopic\n"
                       "a\tx\t0.5\t1\na\tx\t0.5\t1\n"))
    with pytest.raises(InputError, match="expected 4 tab-separated fields"):
        read_sample(_w(tmp_path, "f.tsv", "docno\tstratum\tinclusion_probability\ttopic\n"
                       "a\tx\t0.5\n"))

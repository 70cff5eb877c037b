"""The Cold Start readers: every malformed-input kind is one KBPInputError naming file, line and
column; cs-score turns it into one stderr line and exit code 2, writing nothing."""
from __future__ import annotations

from pathlib import Path

import pytest

from assay.errors import AssayInputError
from assay.formats.kbp import (KBPInputError, entrypoint_uuid, expand, format_submission,
                               hop1_uuid, parse_provenance, parse_queries, parse_query_list,
                               parse_responses)
from assay.scorers.csscore import main

CASES = Path(__file__).resolve().parent / "cases"
Q = "CSSF15_ENG_501edb1b87"
GOOD_SUB = f"{Q}\tper:employee_or_member_of\trun1\tD1:0-20\tAcme\tORG\tD1:3-6\t1.0"
GOOD_ASSESS = f"A1\t{Q}:per:employee_or_member_of\tD1:0-20\tAcme\tD1:3-6\tC\tC\t{Q}:1"


def error(text: str, name: str = "f.tab") -> KBPInputError:
    with pytest.raises(KBPInputError) as info:
        parse_responses(text, name)
    assert isinstance(info.value, AssayInputError)
    assert "\n" not in str(info.value)
    return info.value


def sub(col: int, value: str) -> str:
    fields = GOOD_SUB.split("\t")
    fields[col - 1] = value
    return "\t".join(fields) + "\n"


def assess(col: int, value: str) -> str:
    fields = GOOD_ASSESS.split("\t")
    fields[col - 1] = value
    return "\t".join(fields) + "\n"


def test_good_lines_read_and_round_trip():
    rs = parse_responses("# comment\n\n" + GOOD_SUB + "\r\n", "run.tab")
    assert (rs[0].line, rs[0].runid, rs[0].confidence) == (3, "run1", "1.0")
    assert format_submission(rs[0]) == GOOD_SUB
    a = parse_responses(GOOD_ASSESS + "\n", "pool.tab")[0]
    assert (a.kind, a.judgment, a.ec) == ("assessment", "CORRECT", f"{Q}:1")


@pytest.mark.parametrize("col,value,words", [
    (1, "CS15_ENG_0001", "no SF query ID"),
    (1, "CSSF15_ENG_501edb1b8", "no SF query ID"),
    (2, "per:favourite_colour", "unknown slot name"),
    (2, "gpe:title", "unknown slot name"),
    (3, "run 1", "white space"),
    (4, "D1:20", "bad provenance"),
    (4, "D1:20-10", "end before start"),
    (5, " ", "empty column 5"),
    (6, "THING", "value type"),
    (7, "D1:3-6;D2:1-2", "bad provenance"),
    (8, "1.5", "not a number in (0, 1]"),
    (8, "0.0", "not a number in (0, 1]"),
    (8, "high", "not a number in (0, 1]"),
])
def test_submission_errors_name_line_and_column(col, value, words):
    e = error(GOOD_SUB + "\n" + sub(col, value))
    assert (e.line, e.column) == (2, col)
    assert str(e).startswith(f"f.tab, line 2, column {col}: ") and words in str(e)


def test_wrong_column_count_and_unknown_file_type():
    e = error(GOOD_SUB + "\n" + GOOD_SUB + "\textra\n")
    assert (e.line, e.column) == (2, 1) and "wrong number of columns (9)" in str(e)
    e = error("a\tb\tc\n")
    assert "unknown file type (3 columns)" in str(e)


@pytest.mark.parametrize("col,value,words", [
    (2, f"{Q}per:title", "not QUERYID:slot"),
    (6, "Y", "unknown judgment"),
    (7, "Q", "unknown judgment"),
    (8, "0", "equivalence class '0' of a C judgment"),
    (8, f"{Q}:x", "equivalence class"),
    (8, "CSSF15_ENG_0000000000:1", "equivalence class"),
])
def test_assessment_errors(col, value, words):
    e = error(GOOD_ASSESS + "\n" + assess(col, value))
    assert (e.line, e.column) == (2, col) and words in str(e)


def test_wrong_judgment_with_a_class_is_an_error():
    e = error(assess(6, "W"))
    assert e.column == 8 and "of a W judgment" in str(e)


def test_provenance_bounds_as_the_original_applies_them():
    p = parse_provenance("D1:0-10,D2:0-10,D3:0-10,D4:0-10,D5:0-10")
    assert len(p.triples) == 4                      # later triples dropped
    assert parse_provenance("D1:100-1000").triples[0].end == 249   # 150 characters at most
    assert parse_provenance("D2:5-9,D1:7-8,D1:7-10").key() == "D1:7-10,D1:7-8,D2:5-9"


XML = """<query_set>
  <query id="CS15_ENG_0001">
    <name>A &amp; B</name><docid>D1</docid><beg>0</beg><end>4</end>
    <name>AB</name><docid>D2</docid><beg>5</beg><end>6</end>
    <enttype>per</enttype>
    <slot0>per:employee_or_member_of</slot0>
    <slot1>org:city_of_headquarters</slot1>
  </query>
</query_set>
"""


def test_ldc_query_with_two_entry_points_expands():
    qs = parse_queries(XML, "q.xml")
    assert [e.name for e in qs[0].entrypoints] == ["A & B", "AB"]
    sf = expand(qs, "CSSF15_ENG")
    slots = ("per:employee_or_member_of", "org:city_of_headquarters")
    assert [q.full_id for q in sf] == [f"CSSF15_ENG_{entrypoint_uuid('D1', 0, 4, slots)}",
                                      f"CSSF15_ENG_{entrypoint_uuid('D2', 5, 6, slots)}"]
    assert {q.ldc_id for q in sf} == {"0001"}


@pytest.mark.parametrize("old,new,words,line", [
    ("<enttype>per</enttype>", "<enttype>per</enttyp>", "closed with", 5),
    ("<enttype>per</enttype>", "<colour>red</colour>", "not a recognized query field", 5),
    ("<slot0>per:employee_or_member_of</slot0>", "", "missing <slot0>", 2),
    ("<enttype>per</enttype>", "", "missing <enttype>", 2),
    ("<slot1>org:city_of_headquarters</slot1>", "<slot1>org:colour</slot1>", "unknown slot name", 7),
    ("<beg>0</beg>", "<beg>x</beg>", "not a valid offset", 3),
    ("<docid>D2</docid>", "", "lacks <docid>", 2),
    ("<name>AB</name>", "", "lacks <name>", 2),
    ("<beg>5</beg>", "<beg>9</beg>", "end 6 before beg 9", 2),
    ("&amp;", "&nbsp;", "unknown entity", 3),
    ('id="CS15_ENG_0001"', 'id="query one"', "no Cold Start query ID", 2),
])
def test_query_file_errors(old, new, words, line):
    with pytest.raises(KBPInputError) as info:
        parse_queries(XML.replace(old, new, 1), "q.xml")
    assert words in str(info.value) and info.value.line == line
    assert str(info.value).startswith(f"q.xml, line {line}")


def test_duplicate_and_missing_queries():
    body = XML.split("<query_set>")[1].split("</query_set>")[0]
    with pytest.raises(KBPInputError, match="duplicate query ID CS15_ENG_0001"):
        parse_queries(f"<query_set>{body}{body}</query_set>", "q.xml")
    with pytest.raises(KBPInputError, match="no queries found"):
        parse_queries("<query_set></query_set>", "q.xml")


@pytest.mark.parametrize("text,words,col", [
    (f"CS15_ENG_0001 {Q} 1 extra\n", "4 fields", 1),
    ("CS15_ENG_0001 query-one\n", "no SF query ID", 2),
    (f"CS15_ENG_0001 {Q} one\n", "hop 'one'", 3),
    (f"CS15_ENG_0001 {Q} 1\nCS15_ENG_0001 CSSF15_ENG_5a337e67e0 0\n", "conflicting hops", 3),
])
def test_query_list_errors(text, words, col):
    with pytest.raises(KBPInputError) as info:
        parse_query_list(text, "ids.txt")
    assert words in str(info.value) and info.value.column == col


def test_hop1_ids_of_the_reference_pool():
    # the pool's hop-1 query IDs are the parent's full ID and this hash (the original agrees:
    # it loads tests/kbp/cases/pool.tab, whose hop-1 lines need their parents' generated queries)
    pool = parse_responses((CASES / "pool.tab").read_text(), "pool.tab")
    hop0 = {(r.full_query_id, r.value, r.value_provenance.key()) for r in pool if r.level == 0}
    for r in (r for r in pool if r.level == 1):
        parent = r.full_query_id.rsplit("_", 1)[0]
        assert any(hop1_uuid(p, v, k) == r.query_id for p, v, k in hop0 if p == parent)


def run_cli(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_cli_malformed_run_is_one_line_exit_2_and_writes_nothing(tmp_path, capsys):
    bad = tmp_path / "bad.tab"
    bad.write_text(GOOD_SUB.replace("runA", "x") + "\n" + sub(8, "2.0"))
    target = tmp_path / "out.txt"
    code, out, err = run_cli(capsys, "-output_file", str(target), str(CASES / "sf_queries.xml"),
                             str(bad))
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and f"{bad}, line 2, column 8: confidence '2.0'" in err
    assert not target.exists()


def test_cli_hop1_before_its_parent(tmp_path, capsys):
    child = f"{Q}_{hop1_uuid(Q, 'Acme', 'D1:3-6')}"
    run = tmp_path / "run.tab"
    run.write_text(f"{child}\torg:city_of_headquarters\trun1\tD2:0-9\tBoston\tGPE\tD2:1-6\t1.0\n"
                   + GOOD_SUB + "\n")
    code, _out, err = run_cli(capsys, str(CASES / "sf_queries.xml"), str(run))
    assert code == 2 and "line 1, column 1: unknown query" in err and "earlier line" in err


@pytest.mark.parametrize("argv,words", [
    (["-bogus", "x.xml"], "Unknown switch: -bogus"),
    (["-tabs"], "files must be provided"),
    (["-right", "INCORRECT", "x.xml"], "unexpected choice 'INCORRECT' for RIGHT"),
    (["-ignore", "CORRECT", "x.xml"], "unexpected choice 'CORRECT' for IGNORE"),
    (["-discipline", "FUZZY", "x.xml"], "-discipline FUZZY"),
    (["-fields", "EC:COLOUR", "x.xml"], "unknown field 'COLOUR'"),
    (["-expand"], "needs a value"),
])
def test_cli_usage_errors(capsys, argv, words):
    code, out, err = run_cli(capsys, *argv)
    assert code == 2 and out == "" and words in err and err.count("\n") == 1


def test_cli_version_and_help(capsys):
    assert run_cli(capsys, "-version")[1] == "cs-score version 2.4.4\n"
    code, out, _ = run_cli(capsys, "-help")
    assert code == 0 and "-discipline" in out and "--fix-duplicates" in out


def test_expanded_assessments_name_their_own_columns():
    line = (CASES / "pool_expanded.tab").read_text().splitlines()[0]
    a = parse_responses(line + "\n", "x.tab")[0]
    assert (a.kind, a.judgment, a.ec) == ("assessment", "CORRECT", f"{Q}:1")
    f = line.split("\t")
    for col, value, words in [(5, "D01", "subject provenance"), (9, "Z", "unknown judgment"),
                              (11, "0", "equivalence class '0'"), (6, "D1:9-1", "end before")]:
        g = list(f)
        g[col - 1] = value
        e = error(line + "\n" + "\t".join(g) + "\n")
        assert (e.line, e.column) == (2, col) and words in str(e)


def test_document_lengths_as_cs_validatesf_docs(tmp_path):
    from assay.formats.kbp import read_doc_lengths
    docs = tmp_path / "docs.tsv"
    docs.write_text("D1\t100\nD2\t5\n")
    lengths = read_doc_lengths(docs)
    assert lengths == {"D1": 100, "D2": 5}
    assert parse_responses(GOOD_SUB + "\n", "f.tab", doc_lengths=lengths)
    with pytest.raises(KBPInputError, match=r"line 1, column 7: DOCID D9 is not a valid DOCID"):
        parse_responses(sub(7, "D9:1-2"), "f.tab", doc_lengths=lengths)
    with pytest.raises(KBPInputError, match=r"line 1, column 4: D2:0-20 lies beyond the end"):
        parse_responses(sub(4, "D2:0-20"), "f.tab", doc_lengths=lengths)
    with pytest.raises(KBPInputError, match=r"line 1, column 5: D2:3-9 lies beyond"):
        parse_responses(assess(5, "D2:3-9"), "f.tab", doc_lengths=lengths)
    docs.write_text("D1\tlong\n")
    with pytest.raises(KBPInputError, match="docs.tsv, line 1, column 2"):
        read_doc_lengths(docs)


def test_cli_wrong_slot_line_skipped_with_a_warning_and_its_child_an_error(tmp_path, capsys):
    bad = GOOD_SUB.replace("per:employee_or_member_of", "per:title")
    child = f"{Q}_{hop1_uuid(Q, 'Acme', 'D1:3-6')}"
    run = tmp_path / "run.tab"
    run.write_text(bad + "\n" + GOOD_SUB.replace("Acme", "Beta") + "\n")
    code, out, err = run_cli(capsys, str(CASES / "sf_queries.xml"), str(run))
    assert code == 0 and "line 1: slot per:title is not the requested slot" in err
    assert any(line.split()[:3] == [Q, "run1", "0"] for line in out.splitlines() if line)
    run.write_text(bad + "\n" + f"{child}\torg:city_of_headquarters\trun1\tD2:0-9\tBoston\tGPE"
                   "\tD2:1-6\t1.0\n")
    code, out, err = run_cli(capsys, str(CASES / "sf_queries.xml"), str(run))
    assert code == 2 and out == "" and "was skipped" in err and err.count("\n") == 1


def test_expanded_queries_written_and_read_back_score_as_the_sf_file(tmp_path, capsys):
    from assay.formats.kbp import format_queries, read_queries
    sf = expand(read_queries(CASES / "ldc_queries.xml"), "CSSF15_ENG")
    (tmp_path / "sf.xml").write_text(format_queries(sf))
    assert [q.full_id for q in read_queries(tmp_path / "sf.xml")] == [q.full_id for q in sf]
    args = [str(CASES / n) for n in ("pool.tab", "run1.tab", "run2.tab")]
    assert main([str(tmp_path / "sf.xml"), *args]) == 0
    out, _ = capsys.readouterr()
    assert out == (CASES.parent / "expected" / "sf_default.out").read_text()

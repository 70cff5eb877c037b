"""cs-score's documented choices where CS-Score v2.4.4 follows perl's hash order or has a bug
(docs/csscore.md): LDC-MAX ties, LDC-MEAN GT disagreements, the double-counted redundant answers
of single-valued slots, precision's denominator, and the unassessed parent looked at."""
from __future__ import annotations

from pathlib import Path

from assay.formats.kbp import entrypoint_uuid
from assay.scorers.csscore import Options, main, score_files

CASES = Path(__file__).resolve().parent / "cases"
FILES = [str(CASES / n) for n in ("sf_queries.xml", "pool.tab", "run1.tab", "run2.tab")]
C1 = "CSSF15_ENG_47ea883b4a"       # per:city_of_birth (single): Paris twice (one class), Lyon
A1 = "CSSF15_ENG_501edb1b87"


def row(text: str, ec: str, runid: str = "run1") -> list[str]:
    for line in text.splitlines():
        words = line.split()
        if words[:2] == [ec, runid]:
            return words
    raise AssertionError(f"no line {ec} {runid}")


HEAD = "EC RUNID LEVEL GT SUBMITTED CORRECT INCORRECT INEXACT PINCORRECT UNASSESSED DUP RIGHT WRONG IGNORED P R F".split()


def fields(text: str, ec: str, runid: str = "run1") -> dict[str, str]:
    return dict(zip(HEAD, row(text, ec, runid)))


def test_single_valued_redundant_counted_twice_by_default_once_when_fixed():
    old = fields(score_files(FILES, Options()).text, C1)
    new = fields(score_files(FILES, Options(fix_duplicates=True)).text, C1)
    assert (old["SUBMITTED"], old["DUP"], old["RIGHT"], old["WRONG"]) == ("3", "1", "1", "3")
    assert (new["SUBMITTED"], new["DUP"], new["RIGHT"], new["WRONG"]) == ("3", "1", "1", "2")
    assert old["P"] == new["P"] == "0.3333"          # 1 / (Submitted 3 - Ignored 0)


def test_precision_rule():
    both = fields(score_files(FILES, Options(fix_duplicates=True, fix_precision=True)).text, C1)
    assert both["P"] == "0.3333"                     # Right 1 / (Right 1 + Wrong 2)
    only = fields(score_files(FILES, Options(fix_precision=True)).text, C1)
    assert only["P"] == "0.2500"                     # Right 1 / (Right 1 + Wrong 3)


def test_unassessed_parent_looked_at_counts_in_no_category():
    # run1 answers A1 with the unassessed 'Omega Ltd' and a hop-1 answer under it: looking for
    # that answer's parent gives 'Omega Ltd' an empty assessment, as v2.4.4 does
    a1 = fields(score_files(FILES, Options()).text, A1)
    assert a1["SUBMITTED"] == "6" and a1["UNASSESSED"] == "0" and a1["IGNORED"] == "0"
    counted = sum(int(a1[k]) for k in ("CORRECT", "INCORRECT", "INEXACT", "PINCORRECT"))
    assert counted == 5                              # one answer in no category
    assert a1["P"] == "0.3333"                       # 2 / (6 - 0)


def _ldc_case(tmp_path: Path, run_lines: list[str]) -> list[str]:
    slots = ("per:title",)
    eps = [("Ann", "D1", 0, 2), ("Ann B", "D2", 0, 4)]
    a, b = (f"CSSF15_ENG_{entrypoint_uuid(d, s, e, slots)}" for _, d, s, e in eps)
    xml = ('<query_set><query id="CS15_ENG_0009">' + "".join(
        f"<name>{n}</name><docid>{d}</docid><beg>{s}</beg><end>{e}</end>" for n, d, s, e in eps)
        + "<enttype>per</enttype><slot0>per:title</slot0></query></query_set>\n")
    (tmp_path / "q.xml").write_text(xml)
    pool = [f"P1\t{a}:per:title\tD9:0-9\tmayor\tD9:1-5\tC\tC\t{a}:1",
            f"P2\t{b}:per:title\tD8:0-9\tmayor\tD8:1-5\tC\tC\t{b}:1",
            f"P3\t{b}:per:title\tD7:0-9\tchef\tD7:1-4\tW\tW\t0"]
    (tmp_path / "pool.tab").write_text("\n".join(pool) + "\n")
    (tmp_path / "run.tab").write_text("\n".join(
        line.format(a=a, b=b) for line in run_lines) + "\n")
    return [a, b]


def test_ldc_max_tie_takes_the_first_entry_point_and_says_so(tmp_path, capsys):
    a, b = _ldc_case(tmp_path, ["{a}\tper:title\tr\tD9:0-9\tmayor\tSTRING\tD9:1-5\t1.0",
                                "{b}\tper:title\tr\tD8:0-9\tmayor\tSTRING\tD8:1-5\t1.0"])
    code = main(["-expand", "CSSF15_ENG", str(tmp_path / "q.xml"), str(tmp_path / "pool.tab"),
                 str(tmp_path / "run.tab")])
    out, err = capsys.readouterr()
    assert code == 0
    first, second = sorted([a, b])
    assert f"LDC-MAX of CS15_ENG_0009 (r): entry points {first}, {second} tie at F1 1.0000; assay takes {first}" in err
    ldc_max = out.split("LDC-MAX:")[1].split("LDC-MEAN:")[0]
    assert "CS15_ENG_0009 " in ldc_max and ldc_max.count("CS15_ENG_0009 ") == 1


def test_ldc_mean_gt_disagreement_is_named(tmp_path, capsys):
    a, b = _ldc_case(tmp_path, ["{a}\tper:title\tr\tD9:0-9\tmayor\tSTRING\tD9:1-5\t1.0"])
    (tmp_path / "pool.tab").write_text(f"P1\t{a}:per:title\tD9:0-9\tmayor\tD9:1-5\tC\tC\t{a}:1\n"
                                       f"P3\t{b}:per:title\tD7:0-9\tchef\tD7:1-4\tW\tW\t0\n")
    main(["-expand", "CSSF15_ENG", str(tmp_path / "q.xml"), str(tmp_path / "pool.tab"),
          str(tmp_path / "run.tab")])
    _out, err = capsys.readouterr()
    assert "LDC-MEAN of CS15_ENG_0009 (r): entry points disagree" in err
    assert f"from {min(a, b)}" in err


def test_negative_precision_is_one_error_line_unless_fixed(tmp_path, capsys):
    c = C1
    pool = "".join(f"P{i}\t{c}:per:city_of_birth\tD{i}:0-9\tParis\tD{i}:1-5\tC\tC\t{c}:1\n"
                   for i in range(3))
    run = "".join(f"{c}\tper:city_of_birth\tr\tD{i}:0-9\tParis\tGPE\tD{i}:1-5\t1.0\n"
                  for i in range(3))
    (tmp_path / "pool.tab").write_text(pool)
    (tmp_path / "run.tab").write_text(run)
    args = ["-ignore", "UNASSESSED:DUPLICATE", "-wrong", "INCORRECT:INCORRECT_PARENT:INEXACT",
            "-queries", c, str(CASES / "sf_queries.xml"), str(tmp_path / "pool.tab"),
            str(tmp_path / "run.tab")]
    assert main(args) == 2
    out, err = capsys.readouterr()
    assert out == "" and "F1 is undefined" in err and err.count("\n") == 1
    assert main(["--fix-duplicates"] + args) == 0
    out, _ = capsys.readouterr()
    f = dict(zip(HEAD, row(out, c, "r")))
    assert (f["IGNORED"], f["P"], f["F"]) == ("2", "1.0000", "1.0000")


def test_verbose_names_the_right_answer_kept_among_classes(capsys):
    # run1 gives Denver and Austin, two classes of Beta LLC's single-valued city_of_headquarters:
    # which one -verbose shows as RIGHT follows perl's hash order in v2.4.4; assay keeps the last
    # in class order (Austin, line 11) and says so
    assert main(["-verbose", "-runids", "run1"] + FILES) == 0
    out, err = capsys.readouterr()
    assert f"-verbose, {A1}:2 (run1): right answers in several classes" in err
    assert "assay keeps line 11 as RIGHT" in err
    block = out.split(f"{A1}:2\n")[1].split("=" * 80)[0]
    austin = block.split("Austin")[-1]
    assert austin.split("POSTPOLICY ASSESSMENT:\t")[1].startswith("RIGHT")

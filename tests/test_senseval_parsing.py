"""Answer-line parsing, weights and C numerics, as measured on the original scorer2."""
from __future__ import annotations

import math

import numpy as np
import pytest

from assay.scorers.senseval import (Problem, atof, c_format, f32, parse_answer_line, parse_key,
                                    parse_sensemap, score_text, stdout_text)
from assay.scorers.senseval.cnum import NEG_NAN, c_div


# ----------------------------------------------------------------------------- C numerics
@pytest.mark.parametrize("text,value", [
    ("0.5", 0.5), ("94", 94.0), (".25", 0.25), ("1e2", 100.0), ("2.5E-1", 0.25), ("+3", 3.0),
    ("-1", -1.0), ("0.6)", 0.6), ("1e", 1.0), ("5.", 5.0), ("", 0.0), ("x", 0.0), (".", 0.0),
    ("0x10", 16.0), ("0x1p-1", 0.5), ("0x", 0.0), (" \t7", 7.0), ("inf", math.inf),
    ("-Infinity", -math.inf),
])
def test_atof_reads_longest_numeric_prefix(text, value):
    assert atof(text) == value


def test_atof_nan():
    assert math.isnan(atof("nan")) and math.isnan(atof("NaN(1)"))


def test_f32_rounds_like_a_c_float():
    for x in (0.1, 0.6, 1 / 3, 1e-40, 3.4e38, 1e39, -0.7):
        expected = np.float32(x) if abs(x) < 3.5e38 else np.float32(np.inf)
        assert f32(x) == float(expected)


def test_c_format_special_values():
    assert c_format(c_div(0.0, 0.0), 3) == "-nan" and c_format(NEG_NAN, 2) == "-nan"
    assert c_format(math.nan, 2) == "nan"
    assert c_format(c_div(1.0, 0.0), 2) == "inf" and c_format(c_div(-1.0, 0.0), 2) == "-inf"
    assert c_format(0.125, 2) == "0.12" and c_format(0.375, 2) == "0.38"  # exact ties to even


# ------------------------------------------------------------------------ answer lines
def test_parse_weights_and_tags():
    a = parse_answer_line("brother.n 00006 501566/0.5 501573/0.4\t503751/0.1", 5)
    assert a.id == "brother.n_00006" and a.index == 5
    assert a.tags == ("501566", "501573", "503751")
    assert a.weights == (0.5, 0.4, 0.1)


@pytest.mark.parametrize("line,tags", [
    ("brother.n 00002 501566     999997     !!", ("501566", "999997")),
    ("brother.n 00015 503751/94  999999/87             !! comment . . .", ("503751", "999999")),
    ("w.n 1 a!!b c", ("a",)),          # the comment starts at the first "!!", even inside a tag
    ("w.n 1 a b!!", ("a", "b")),
    ("w.n 1 1(0.6) 2(0.4)", ("1(0.6)", "2(0.4)")),   # no "/": just (unknown) tags
])
def test_parse_comments_and_literal_tags(line, tags):
    assert parse_answer_line(line, 0).tags == tags


def test_parse_id_uses_single_spaces():
    assert parse_answer_line("a.n  7 x", 0).id == "a.n_"          # double space: empty instance
    assert parse_answer_line("a.n 7", 0).tags == ()               # no tags
    assert parse_answer_line("a.n", 0).id == "a.n"
    assert parse_answer_line("!! a.n 7 x", 0).id == ""


def test_tag_without_weight_makes_all_weights_equal():
    result = score_text("w 1 a/0.9 b\n", "w 1 a\n")
    assert result.scored[0].guess == (("a", 0.5), ("b", 0.5))
    assert result.correct == 0.5 and result.attempted == 1.0


def test_weights_normalised_only_above_one():
    low = score_text("w 1 a/0.3 b/0.2\n", "w 1 a\n")
    assert low.attempted == f32(f32(0.3) + f32(0.2)) and low.correct == f32(0.3)
    high = score_text("w 1 a/94 b/87\n", "w 1 a\n")
    assert high.attempted == 1.0 and high.correct == f32(94 / 181)
    assert "guess = a/0.519 b/0.481" in stdout_text(high, verbose=True)


def test_u_and_p_are_ordinary_tags_and_unknown_tags_count_as_wrong():
    assert score_text("w 1 U\n", "w 1 U\n").correct == 1.0
    assert score_text("w 1 P\n", "w 1 s1 P\n").correct == 1.0
    for smap in (None, "s1\ns2 2 s1\n"):
        r = score_text("w 1 nosuch\n", "w 1 s1\n", smap)
        assert (r.correct, r.attempted, r.total) == (0.0, 1.0, 1.0)


def test_answer_problems():
    r = score_text("w 9 a\nw 1\nw 1 a\nw 1 a\n", "w 1 a\n")
    assert [u.problem for u in r.unscored] == [Problem.DOES_NOT_EXIST, Problem.INVALID_ANSWER,
                                              Problem.EXCLUDED]
    assert [u.index for u in r.unscored] == [0, 1, 3]
    assert r.correct == 1.0 and r.scored[0].index == 2


def test_second_answer_never_replaces_the_first():
    r = score_text("w 1 b\nw 1 a\n", "w 1 a\n")
    assert r.correct == 0.0 and r.unscored[0].problem is Problem.EXCLUDED


def test_credit_per_tag_capped_at_one_and_instance_capped_at_one():
    assert score_text("w 1 a/1 a/1\n", "w 1 a\n").correct == 1.0       # 0.5 + 0.5
    assert score_text("w 1 a/0.6 a/0.6\n", "w 1 a b\n").correct == f32(f32(0.6 / 1.2) * 2)
    r = score_text("w 1 a/0.8 b/0.1\n", "w 1 a a\n")                    # subscore 2 -> 1
    assert r.correct == f32(0.8)


def test_coarse_merges_duplicate_roots_and_weights():
    smap = "a 2 r\nb 2 r\nr\n"
    r = score_text("w 1 a/0.25 b/0.25 x/0.5\n", "w 1 a b\n", smap, "coarse")
    assert r.scored[0].guess == (("r", 0.5), ("x", 0.5))
    assert r.scored[0].key == ("r",)
    assert r.correct == 0.5


def test_minimal_applies_after_coarse_mapping():
    smap = "a 2 r\nb 2 r\nr\n"
    assert score_text("w 1 a\n", "w 1 a b\n", smap, "coarse", minimal=True).total == 1.0
    assert score_text("w 1 a\n", "w 1 a b\n", smap, "fine", minimal=True).total == 0.0


def test_mixed_uses_branching_product_along_the_path():
    smap = "r\nc 3 r\ng 2 c 3 r\n"
    assert score_text("w 1 r\n", "w 1 g\n", smap, "mixed").correct == f32(1 / 6)
    assert score_text("w 1 g\n", "w 1 r\n", smap, "mixed").correct == 1.0


# ---------------------------------------------------------------------- key and sense map
def test_parse_key_fields_and_blank_lines():
    (entry,) = parse_key(["", "art.n art.30003 P art%1:04:00::\tart%1:06:00::"])
    assert entry.id == "art.n_art.30003" and entry.line == 2
    assert entry.tags == ("P", "art%1:04:00::", "art%1:06:00::")


def test_sensemap_root_and_chain():
    smap = parse_sensemap(["material%3:00:04:: 2 material%3:00:01::", "x 2 y 3 z ", "q"])
    assert smap.root("material%3:00:04::") == "material%3:00:01::"
    assert smap.root("x") == "z" and smap.root("q") == "q" and smap.root("none") == "none"
    assert smap.subsumption32("z", "x") == f32(1 / 6) and smap.subsumption32("y", "x") == 0.5
    assert smap.subsumption32("x", "z") == 0.0

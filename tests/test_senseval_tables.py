"""Seed 003's scoring tables and the 16 published examples of scorescheme.txt."""
from __future__ import annotations

import pytest

from assay.scorers.senseval import Problem, score_text, stdout_text

# Sense inventory of seed 003, HOW IT WORKS: {1, 2, 3, 1.1, 1.2, 2.1, ..., 2.5}.
SEED_SENSEMAP = "\n".join(
    ["1", "1.1 2 1", "1.2 2 1", "2"] + [f"2.{i} 5 2" for i in range(1, 6)] + ["3"]) + "\n"

# (row, key tags, guess "tag/weight ...", F, C, M, multi-tag key "*").  Rows 18 and 20 follow the
# program, not the documentation: row 18 M is 0.6 (doc 0.3), row 20 is 0.0/0.6/0.3 (doc 0.6 x3).
SEED_TABLE = [
    (1, "1", "1/1.0", 1.0, 1.0, 1.0, False),
    (2, "1 3", "1/1.0", 1.0, 1.0, 1.0, True),
    (3, "1", "2/1.0", 0.0, 0.0, 0.0, False),
    (4, "1 2", "2/1.0", 1.0, 1.0, 1.0, True),
    (5, "1 3", "2/1.0", 0.0, 0.0, 0.0, True),
    (6, "1.1", "1.1/1.0", 1.0, 1.0, 1.0, False),
    (7, "1.1 3", "1.1/1.0", 1.0, 1.0, 1.0, True),
    (8, "1.1", "1.2/1.0", 0.0, 1.0, 0.0, False),
    (9, "1.1 3", "1.2/1.0", 0.0, 1.0, 0.0, True),
    (10, "1", "1.1/1.0", 0.0, 1.0, 1.0, False),
    (11, "1.1", "1/1.0", 0.0, 1.0, 0.5, False),
    (12, "2.1", "2/1.0", 0.0, 1.0, 0.2, False),
    (13, "1.1 1.2", "1.1/1.0", 1.0, 1.0, 1.0, True),
    (14, "1.1 1.2", "1/1.0", 0.0, 1.0, 1.0, True),
    (15, "2.1 2.2", "2/1.0", 0.0, 1.0, 0.4, True),
    (16, "1", "1/0.6 2/0.4", 0.6, 0.6, 0.6, False),
    (17, "2", "1/0.6 2/0.4", 0.4, 0.4, 0.4, False),
    (18, "1", "1.1/0.6 2/0.4", 0.0, 0.6, 0.6, False),
    (19, "1", "1.1/0.6 1.2/0.4", 0.0, 1.0, 1.0, False),
    (20, "1.1", "1/0.6 2/0.4", 0.0, 0.6, 0.3, False),
    (21, "1 3", "1/0.6 2/0.4", 0.6, 0.6, 0.6, True),
    (22, "1 2", "1/0.6 2/0.4", 1.0, 1.0, 1.0, True),
]
GRAINS = ("fine", "coarse", "mixed")


def _row(row: int, key: str, guess: str, grain: str, minimal: bool = False, **opts):
    return score_text(f"w.n {row} {guess}\n", f"w.n {row} {key}\n", SEED_SENSEMAP, grain, minimal,
                      **opts)


@pytest.mark.parametrize("row,key,guess,f,c,m,star", SEED_TABLE, ids=[f"row{r[0]}" for r in SEED_TABLE])
@pytest.mark.parametrize("grain", GRAINS)
def test_seed_table_row(row, key, guess, f, c, m, star, grain):
    expected = dict(zip(GRAINS, (f, c, m)))[grain]
    result = _row(row, key, guess, grain)
    assert result.correct == pytest.approx(expected, abs=1e-6)
    assert result.attempted == pytest.approx(1.0) and result.total == 1.0
    assert f'score for "w.n_{row}": {expected:.3f}' in stdout_text(result, verbose=True)


@pytest.mark.parametrize("row,key,guess,f,c,m,star", SEED_TABLE, ids=[f"row{r[0]}" for r in SEED_TABLE])
@pytest.mark.parametrize("grain", GRAINS)
def test_seed_table_minimal_drops_starred_rows(row, key, guess, f, c, m, star, grain):
    result = _row(row, key, guess, grain, minimal=True)
    if star and not (grain == "coarse" and row in (13, 14, 15)):
        assert result.total == 0.0 and result.scored == ()
        assert result.unscored[0].problem is Problem.EXCLUDED
    else:  # single-tag key, or (coarse) a key whose tags merge into one root before -m applies
        assert result.total == 1.0
        assert result.correct == pytest.approx(dict(zip(GRAINS, (f, c, m)))[grain], abs=1e-6)


def test_seed_table_as_one_file_prints_float_sums():
    answers = "".join(f"w.n {r:02d} {g}\n" for r, _, g, *_ in SEED_TABLE)
    key = "".join(f"w.n {r:02d} {k}\n" for r, k, *_ in SEED_TABLE)
    sums = {g: sum(row[3 + i] for row in SEED_TABLE) for i, g in enumerate(GRAINS)}
    for grain in GRAINS:
        result = score_text(answers, key, SEED_SENSEMAP, grain)
        assert f"{result.correct:.2f}" == f"{sums[grain]:.2f}"
        assert result.attempted == 22.0 and result.total == 22.0
    assert score_text(answers, key, SEED_SENSEMAP, "fine").correct == pytest.approx(8.6, abs=1e-5)


# Seed 003, last table: multiple key tags read conjunctively, weights are probabilities of
# appearance.  (row, key, guess, score, expected tags returned, key tags)
CONJUNCTIVE_TABLE = [
    (1, "1", "1/1.0", 1.0, 1.0, 1),
    (2, "1 3", "1/1.0", 1.0, 1.0, 2),
    (3, "1 3", "1/1.0 3/1.0", 2.0, 2.0, 2),
    (4, "3", "1/1.0 3/1.0", 1.0, 2.0, 1),
    (5, "1", "1/0.6", 0.6, 0.6, 1),
    (6, "1 3", "1/0.6", 0.6, 0.6, 2),
    (7, "1 3", "1/0.6 3/0.6", 1.2, 1.2, 2),
    (8, "1 3", "1/0.6 3/0.2", 0.8, 0.8, 2),
    (9, "3", "1/0.6 3/0.5", 0.5, 1.1, 1),
]


@pytest.mark.parametrize("row,key,guess,value,returned,tags", CONJUNCTIVE_TABLE,
                         ids=[f"row{r[0]}" for r in CONJUNCTIVE_TABLE])
@pytest.mark.parametrize("grain", GRAINS)
def test_conjunctive_table_row(row, key, guess, value, returned, tags, grain):
    result = _row(row, key, guess, grain, policy="conjunctive")
    assert result.correct == pytest.approx(value)
    assert result.attempted == pytest.approx(returned)   # precision's denominator
    assert result.total == tags                           # recall's denominator
    assert result.precision == pytest.approx(value / returned)
    assert result.recall == pytest.approx(value / tags)


def test_conjunctive_table_totals_and_header():
    answers = "".join(f"w.n {r} {g}\n" for r, _, g, *_ in CONJUNCTIVE_TABLE)
    key = "".join(f"w.n {r} {k}\n" for r, k, *_ in CONJUNCTIVE_TABLE)
    result = score_text(answers, key, policy="conjunctive")
    assert result.correct == pytest.approx(8.7)
    assert result.attempted == pytest.approx(10.3)
    assert result.total == 14
    text = stdout_text(result, verbose=False)
    assert 'Fine-grained conjunctive score for "<answers>" using key "<key>":' in text
    assert " precision: 0.845 (8.70 correct of 10.30 attempted)\n" in text
    assert " recall: 0.621 (8.70 correct of 14.00 in total)\n" in text


def test_conjunctive_mixed_partial_credit_unaffected():
    result = _row(1, "1.1 1.2", "1", "mixed", policy="conjunctive")  # 1/2 + 1/2
    assert result.correct == pytest.approx(1.0) and result.total == 2
    result = _row(1, "2.1", "2/0.5", "mixed", policy="conjunctive")  # 0.5 * 1/5
    assert result.correct == pytest.approx(0.1)


def test_conjunctive_rejects_weights_outside_unit_interval():
    from assay.scorers.senseval import SensevalInputError
    with pytest.raises(SensevalInputError, match=r"<answers>:1: probability of appearance"):
        _row(1, "1", "1/94", "fine", policy="conjunctive")


# scorescheme.txt (Melamed & Resnik), section 3: key {A, B}, fine-grained.
SCHEME_3 = [
    ("A", 1.0), ("A/.5 B/.5", 1.0), ("A/.3 C/.7", 0.3), ("A/.3 B/.4 C/.3", 0.7),
    ("A B C", 2 / 3),
]
# Section 4: senses 1, 2, 3 {3.1 {3.1a, 3.1b}, 3.2}, 4 {4.1, 4.2, 4.3}; mixed-grained.
SCHEME_MAP = ("1\n2\n3\n3.1 2 3\n3.1a 2 3.1 2 3\n3.1b 2 3.1 2 3\n3.2 2 3\n4\n"
              "4.1 3 4\n4.2 3 4\n4.3 3 4\n")
SCHEME_4 = [
    ("2", "3", 0.0), ("3", "3", 1.0), ("3", "3.1", 1.0), ("3", "3.1b", 1.0), ("3.1", "3", 0.5),
    ("3.1 3.2", "3", 1.0), ("3.1a", "3", 0.25), ("3.1a 4.2", "4", 1 / 3),
    ("3.1a 4.2", "3.1", 0.5), ("3.1a 4.2", "3.1 4.2", 0.75), ("3.1a 4.2", "3.1 4", 0.41666),
]


@pytest.mark.parametrize("guess,expected", SCHEME_3)
def test_scorescheme_section3(guess, expected):
    result = score_text(f"x y {guess}\n", "x y A B\n")
    assert result.correct == pytest.approx(expected, abs=1e-6)


@pytest.mark.parametrize("key,guess,expected", SCHEME_4)
def test_scorescheme_section4(key, guess, expected):
    result = score_text(f"x y {guess}\n", f"x y {key}\n", SCHEME_MAP, "mixed")
    assert result.correct == pytest.approx(expected, abs=1e-5)


def test_scorescheme_has_sixteen_examples():
    assert len(SCHEME_3) + len(SCHEME_4) == 16

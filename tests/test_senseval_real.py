"""The real Senseval-3 English lexical sample: a most-frequent-sense baseline from the train key."""
from __future__ import annotations

from collections import Counter, defaultdict
from pathlib import Path

import pytest

from assay.scorers.senseval import main, parse_sensemap, read_lines, score
from assay.scorers.senseval.cnum import f32

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "senseval"
TEST_KEY, TRAIN_KEY, SENSEMAP = (DATA / n for n in ("EnglishLS.test.key", "EnglishLS.train.key",
                                                    "EnglishLS.sensemap"))


def most_frequent_senses() -> dict[str, str]:
    """Per lexelt, the tag seen most often in the train key (ties: bytewise smallest)."""
    counts: dict[str, Counter] = defaultdict(Counter)
    for line in TRAIN_KEY.read_text().splitlines():
        lexelt, _, *tags = line.split()
        counts[lexelt].update(tags)
    return {lx: min(c.items(), key=lambda kv: (-kv[1], kv[0]))[0] for lx, c in counts.items()}


def test_key_sizes():
    assert len(TEST_KEY.read_text().splitlines()) == 3944


@pytest.fixture(scope="module")
def mfs_answers(tmp_path_factory) -> Path:
    mfs = most_frequent_senses()
    path = tmp_path_factory.mktemp("mfs") / "mfs.answers"
    path.write_text("".join(f"{lx} {inst} {mfs[lx]}\n" for lx, inst, *_ in
                            (ln.split() for ln in TEST_KEY.read_text().splitlines())))
    return path


# The exact lines scorer2 prints for the baseline (precision == recall: everything attempted).
EXPECTED = {
    ("fine", False): (" precision: 0.552 (2176.00 correct of 3944.00 attempted)",
                      " recall: 0.552 (2176.00 correct of 3944.00 in total)",
                      " attempted: 100.00 % (3944.00 attempted of 3944.00 in total)"),
    ("fine", True): (" precision: 0.542 (1972.00 correct of 3640.00 attempted)",
                     " recall: 0.542 (1972.00 correct of 3640.00 in total)",
                     " attempted: 100.00 % (3640.00 attempted of 3640.00 in total)"),
    ("coarse", False): (" precision: 0.645 (2543.00 correct of 3944.00 attempted)",
                        " recall: 0.645 (2543.00 correct of 3944.00 in total)",
                        " attempted: 100.00 % (3944.00 attempted of 3944.00 in total)"),
    ("coarse", True): (" precision: 0.643 (2405.00 correct of 3743.00 attempted)",
                       " recall: 0.643 (2405.00 correct of 3743.00 in total)",
                       " attempted: 100.00 % (3743.00 attempted of 3743.00 in total)"),
    ("mixed", False): (" precision: 0.619 (2440.50 correct of 3944.00 attempted)",
                       " recall: 0.619 (2440.50 correct of 3944.00 in total)",
                       " attempted: 100.00 % (3944.00 attempted of 3944.00 in total)"),
    ("mixed", True): (" precision: 0.611 (2225.50 correct of 3640.00 attempted)",
                      " recall: 0.611 (2225.50 correct of 3640.00 in total)",
                      " attempted: 100.00 % (3640.00 attempted of 3640.00 in total)"),
}


@pytest.mark.parametrize("grain,minimal", sorted(EXPECTED))
def test_mfs_baseline_printed_numbers(capsysbinary, mfs_answers, grain, minimal):
    argv = [str(mfs_answers), str(TEST_KEY), str(SENSEMAP), "-g", grain] + (["-m"] if minimal else [])
    assert main(argv) == 0
    out, err = capsysbinary.readouterr()
    lines = out.decode().split("\n")
    title = {"fine": "Fine", "coarse": "Coarse", "mixed": "Mixed"}[grain] + "-grained"
    assert lines[1] == (f'{title}{" minimal" if minimal else ""} score for "{mfs_answers}" '
                        f'using key "{TEST_KEY}":')
    assert tuple(lines[2:5]) == EXPECTED[grain, minimal]
    assert lines[0] == lines[5] == lines[6] == "" and len(lines) == 7
    if not minimal:
        assert err == b""


@pytest.mark.parametrize("grain", ["fine", "coarse", "mixed"])
def test_mfs_baseline_matches_an_independent_count(mfs_answers, grain):
    """Recompute each baseline in plain double precision from the raw files."""
    mfs = most_frequent_senses()
    smap = parse_sensemap(read_lines(SENSEMAP, "sense map"))
    total = 0.0
    for line in TEST_KEY.read_text().splitlines():
        lexelt, _, *key = line.split()
        guess = mfs[lexelt]
        if grain == "fine":
            total += guess in key
        elif grain == "coarse":
            total += smap.root(guess) in {smap.root(k) for k in key}
        else:
            total += min(1.0, sum(1.0 if guess == k or smap.subsumption64(k, guess) > 0
                                  else smap.subsumption64(guess, k) for k in key))
    result = score(mfs_answers, TEST_KEY, SENSEMAP, grain)
    assert result.correct == pytest.approx(total, abs=1e-3)
    assert result.precision == result.recall           # everything attempted
    assert result.attempted == result.total == 3944.0
    assert result.attempted_percent == 100.0


def test_single_precision_sums_print_like_c(tmp_path):
    """Three unweighted tags, one right, on every test instance: each scores float(1/3).

    Summed in C floats the total prints 1314.68; a double-precision port prints 1314.67.
    """
    answers = tmp_path / "thirds.answers"
    answers.write_text("".join(f"{lx} {inst} {tags[0]} zz.wrong1 zz.wrong2\n" for lx, inst, *tags in
                               (ln.split() for ln in TEST_KEY.read_text().splitlines())))
    result = score(answers, TEST_KEY)
    third = f32(1.0 / 3.0)
    assert all(s.score == third for s in result.scored)
    assert f"{result.correct:.2f}" == "1314.68"
    assert f"{3944 * third:.2f}" == "1314.67"                   # what a double sum would print
    assert result.attempted == 3944.0 and f"{result.precision:.3f}" == "0.333"

"""Issue 10, point 10 (scorer2): weights that are NaN, infinite or negative, and an empty key,
are one-line errors naming the file and line, exit 2 (the release before, 74dff40, scored them
without a word); ``--json`` is checked before scoring and written through assay.outputs."""
from __future__ import annotations

import pytest

from assay.scorers.senseval import main


def run(capsysbinary, *args):
    code = main([str(a) for a in args])
    out, err = capsysbinary.readouterr()
    return code, out.decode(), err.decode()


@pytest.mark.parametrize("answers,line,shown", [
    ("w 1 a/nan b\n", 1, "nan"),
    ("w 1 a/0.5\nw 2 a/-0.25 b/1\n", 2, "-0.25"),
    ("w 1 a/inf\n", 1, "inf"),
    ("w 1 a/1 b/-INFINITY\n", 1, "-inf"),
    ("w 1 a/1e39\n", 1, "1e+39"),            # finite as a double, infinite as scorer2's float
])
def test_bad_weights_are_one_line_naming_file_and_line(capsysbinary, tmp_path, answers, line,
                                                       shown):
    a, k = tmp_path / "answers", tmp_path / "key"
    a.write_text(answers)
    k.write_text("w 1 a\nw 2 b\n")
    code, out, err = run(capsysbinary, a, k)
    assert code == 2 and out == ""
    assert err.count("\n") == 1
    assert err.startswith(f"scorer2: {a}:{line}: weight {shown} of tag")


def test_good_weights_still_score(capsysbinary, tmp_path):
    a, k = tmp_path / "answers", tmp_path / "key"
    a.write_text("w 1 a/0 b/2\nw 2 b/0.5\n")
    k.write_text("w 1 a\nw 2 b\n")
    code, out, err = run(capsysbinary, a, k)
    assert code == 0 and "precision" in out


@pytest.mark.parametrize("key", ["", "\n\n  \n"])
def test_empty_key_is_an_error(capsysbinary, tmp_path, key):
    a, k = tmp_path / "answers", tmp_path / "key"
    a.write_text("w 1 a\n")
    k.write_text(key)
    code, out, err = run(capsysbinary, a, k)
    assert code == 2 and err == f"scorer2: {k}: the key is empty (expected lines 'lexelt " \
                                 "instance sense+')\n"


def test_json_output_checked_before_scoring(capsysbinary, tmp_path):
    a = tmp_path / "answers"
    a.write_text("w 1 a/nan\n")          # would fail later: the output is refused first
    code, out, err = run(capsysbinary, a, a, "--json", tmp_path)
    assert code == 2 and err.count("\n") == 1
    assert "cannot write JSON output: is a directory" in err

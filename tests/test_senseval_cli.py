"""The ``scorer2`` command: the original's arguments, stdout and stderr, byte for byte."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from assay.scorers.senseval import main
from assay.scorers.senseval.cli import USAGE

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "senseval"
REPO = Path(__file__).resolve().parents[1]


def run(capsysbinary, *argv: str) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out, err = capsysbinary.readouterr()
    return code, out.decode(), err.decode()


def write(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_bytes(text.encode())
    return str(path)


SAMPLE_STDERR = "".join(
    f'Unable to score answer for "{i}" (line {n}): Does not exist.\n' for n, i in [
        (9, "art.n_art.30031"), (10, "art.n_art.30034"), (11, "art.n_art.30037"),
        (12, "art.n_art.30040"), (13, "art.n_art.30043"), (14, "art.n_art.30046"),
        (15, "authority.n_authority.30043"), (16, "authority.n_authority.30046"),
        (17, "authority.n_authority.30050"), (18, "authority.n_authority.30053")])


def sample_report(title: str, answers: str, key: str) -> str:
    return (f'\n{title} score for "{answers}" using key "{key}":\n'
            " precision: 0.882 (7.50 correct of 8.50 attempted)\n"
            " recall: 0.395 (7.50 correct of 19.00 in total)\n"
            " attempted: 44.74 % (8.50 attempted of 19.00 in total)\n\n")


@pytest.mark.parametrize("flags,title", [((), "Fine-grained"), (("-g", "coarse"), "Coarse-grained"),
                                         (("-g", "mixed"), "Mixed-grained")])
def test_sample_task(capsysbinary, flags, title):
    a, k, s = (str(DATA / n) for n in ("sampletask.system.answers", "sampletask.key",
                                       "sampletask.sensemap"))
    code, out, err = run(capsysbinary, a, k, s, *flags)
    assert code == 0
    assert out == sample_report(title, a, k)
    assert err == SAMPLE_STDERR


def test_sample_task_minimal_and_verbose(capsysbinary):
    a, k = str(DATA / "sampletask.system.answers"), str(DATA / "sampletask.key")
    code, out, err = run(capsysbinary, a, k, "-m", "-v")
    blocks = out.split("\n\n")
    assert blocks[0] == ('Unable to score answer for "art.n_art.30003" (line 0): '
                         "Excluded or already scored.")
    assert blocks[2] == ('score for "art.n_art.30010": 0.500\n key   = work_of_art%1:06:00::\n'
                         " guess = work_of_art%1:06:00::/0.500")
    assert out.endswith(
        f'\nFine-grained minimal score for "{a}" using key "{k}":\n'
        " precision: 0.846 (5.50 correct of 6.50 attempted)\n"
        " recall: 0.423 (5.50 correct of 13.00 in total)\n"
        " attempted: 50.00 % (6.50 attempted of 13.00 in total)\n\n")
    assert err.splitlines()[:2] == [
        'Unable to score answer for "art.n_art.30003" (line 0): Excluded or already scored.',
        'Unable to score answer for "art.n_art.30006" (line 1): Excluded or already scored.']


def test_verbose_block_format(capsysbinary, tmp_path):
    a = write(tmp_path, "a", "w.n 1 s1/0.6 s2/0.4 !! note\nw.n 1 s1\nw.n 2\nx 1 s\n")
    k = write(tmp_path, "k", "w.n 1 s1 s3\nw.n 2 s2\n")
    code, out, err = run(capsysbinary, a, k, "-v")
    assert out == (
        'score for "w.n_1": 0.600\n key   = s1 s3\n guess = s1/0.600 s2/0.400\n\n'
        'Unable to score answer for "w.n_1" (line 1): Excluded or already scored.\n\n'
        'Unable to score answer for "w.n_2" (line 2): Invalid answer.\n\n'
        'Unable to score answer for "x_1" (line 3): Does not exist.\n\n'
        f'\nFine-grained score for "{a}" using key "{k}":\n'
        " precision: 0.600 (0.60 correct of 1.00 attempted)\n"
        " recall: 0.300 (0.60 correct of 2.00 in total)\n"
        " attempted: 50.00 % (1.00 attempted of 2.00 in total)\n\n")
    assert err == (
        'Unable to score answer for "w.n_1" (line 1): Excluded or already scored.\n'
        'Unable to score answer for "w.n_2" (line 2): Invalid answer.\n'
        'Unable to score answer for "x_1" (line 3): Does not exist.\n')


def test_zero_over_zero_prints_minus_nan(capsysbinary, tmp_path):
    a = write(tmp_path, "a", "")
    k = write(tmp_path, "k", "w 1 a b\n")
    code, out, _ = run(capsysbinary, a, k, "-m")
    assert out == (f'\nFine-grained minimal score for "{a}" using key "{k}":\n'
                   " precision: -nan (0.00 correct of 0.00 attempted)\n"
                   " recall: -nan (0.00 correct of 0.00 in total)\n"
                   " attempted: -nan % (0.00 attempted of 0.00 in total)\n\n")


def test_grain_without_sense_map_falls_back_to_fine(capsysbinary):
    a, k = str(DATA / "sampletask.system.answers"), str(DATA / "sampletask.key")
    code, out, err = run(capsysbinary, a, k, "-g", "mixed")
    assert err.startswith("Fine-grained scoring will be used since no sense map was given\n")
    assert out == sample_report("Fine-grained", a, k)


def test_arguments_like_the_original(capsysbinary):
    a, k, s = (str(DATA / n) for n in ("sampletask.system.answers", "sampletask.key",
                                       "sampletask.sensemap"))
    code, out, _ = run(capsysbinary, a, k, "-v", "-x", "-g", "coarse", s, "-m")  # any order
    assert code == 0 and "Coarse-grained minimal score" in out and "score for" in out
    code, out, _ = run(capsysbinary, a, k, "-g", "fine", s)   # assay accepts an explicit fine
    assert code == 0 and "\nFine-grained score" in out


def test_usage(capsysbinary):
    code, out, err = run(capsysbinary, "only-one")
    assert code == 2 and out == "" and err == USAGE
    assert err.startswith("\nThis scorer requires two command-line arguments in the\nfollowing")
    code, out, err = run(capsysbinary, "--help")
    assert code == 0 and "--policy" in out and "--json" in out


def test_json_output(capsysbinary, tmp_path):
    a, k, s = (str(DATA / n) for n in ("sampletask.system.answers", "sampletask.key",
                                       "sampletask.sensemap"))
    out_path = tmp_path / "score.json"
    code, out, _ = run(capsysbinary, a, k, s, "--json", str(out_path))
    assert code == 0 and out == sample_report("Fine-grained", a, k)
    doc = json.loads(out_path.read_text())
    assert doc["precision"] == pytest.approx(7.5 / 8.5, abs=1e-6)
    assert (doc["correct"], doc["attempted"], doc["total"]) == (7.5, 8.5, 19.0)
    assert doc["grain"] == "fine" and doc["policy"] == "disjunctive" and doc["minimal"] is False
    assert len(doc["scored"]) == 9 and len(doc["unscored"]) == 10
    assert doc["scored"][2] == {"line": 2, "id": "art.n_art.30010", "score": 0.5,
                                "attempted": 0.5, "key": ["work_of_art%1:06:00::"],
                                "guess": [{"tag": "work_of_art%1:06:00::", "weight": 0.5}]}
    assert doc["unscored"][0]["problem"] == "does_not_exist"
    code, out, _ = run(capsysbinary, a, k, s, "--json=-", "-v")
    assert json.loads(out) == doc


def test_json_nan_is_null(capsysbinary, tmp_path):
    code, out, _ = run(capsysbinary, write(tmp_path, "a", ""), write(tmp_path, "k", "w 1 a\n"),
                       "--json", "-")
    doc = json.loads(out)
    assert doc["precision"] is None and doc["recall"] == 0.0


def test_policy_and_filters_on_the_command_line(capsysbinary, tmp_path):
    a = write(tmp_path, "a", "w 1 a/0.6 c/0.2\nw 2 a\nw 3 x\n")
    k = write(tmp_path, "k", "w 1 a c\nw 2 b\nw 3 x\n")
    code, out, _ = run(capsysbinary, a, k, "--policy", "conjunctive")
    assert "\n precision: 0.643 (1.80 correct of 2.80 attempted)\n" in out
    assert "\n recall: 0.450 (1.80 correct of 4.00 in total)\n" in out
    lst = write(tmp_path, "i", "w 1\n2\n")
    code, out, err = run(capsysbinary, a, k, "--instances", lst)
    assert " recall: 0.400 (0.80 correct of 2.00 in total)" in out
    assert err == 'Unable to score answer for "w_3" (line 2): Excluded or already scored.\n'
    senses = write(tmp_path, "s", "c x\n")
    code, out, err = run(capsysbinary, a, k, "--senses", senses)
    assert " recall: 0.600 (1.20 correct of 2.00 in total)" in out
    code, out, err = run(capsysbinary, a, k, "--policy", "nonsense")
    assert code == 2 and out == "" and err.startswith("scorer2: --policy must be one of")


def test_console_scripts_share_main():
    text = (REPO / "pyproject.toml").read_text()
    assert 'scorer2 = "assay.scorers.senseval:main"' in text
    proc = subprocess.run([sys.executable, "-m", "assay.interfaces.cli", "senseval",
                           str(DATA / "sampletask.system.answers"), str(DATA / "sampletask.key")],
                          cwd=REPO, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert " recall: 0.395 (7.50 correct of 19.00 in total)\n" in proc.stdout
    assert proc.stderr == SAMPLE_STDERR

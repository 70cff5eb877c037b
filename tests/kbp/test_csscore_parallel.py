"""cs-score with runs scored in forked processes (``--jobs``): the same bytes and warnings as
one process on every reference case, and the same one-line error when scoring fails."""
from __future__ import annotations

import pytest

from assay.scorers.csscore import Options, main, score_files
from assay.scorers.csscore.api import PARALLEL_MIN_ANSWERS, _jobs

from test_csscore_reference import CASES, CASES_DIR, HERE


@pytest.mark.parametrize("name,args", CASES, ids=[n for n, _ in CASES])
def test_two_processes_byte_identical(name, args, capsysbinary, monkeypatch):
    monkeypatch.chdir(CASES_DIR)
    assert main(["--jobs", "2", *args]) == 0
    out, err = capsysbinary.readouterr()
    assert out == (HERE / "expected" / f"{name}.out").read_bytes()
    assert main(args) == 0
    assert capsysbinary.readouterr().err == err          # warnings and notes in the same order


def test_a_worker_error_is_raised_as_in_one_process(monkeypatch, capsys):
    # an error met while scoring run2 (patched in; forked workers inherit the patch): the
    # parent redoes the scoring in one process and reports it as one line, exit code 2
    from assay.errors import AssayInputError
    from assay.scorers.csscore import api
    real = api.score_run

    def failing(ld, opts, runid, to_score, notes=None):
        if runid == "run2":
            raise AssayInputError("run2: scoring failed")
        return real(ld, opts, runid, to_score, notes)

    monkeypatch.setattr(api, "score_run", failing)
    monkeypatch.chdir(CASES_DIR)
    args = ["sf_queries.xml", "pool.tab", "run1.tab", "run2.tab"]
    one = main(args), capsys.readouterr()
    two = main(["--jobs", "2", *args]), capsys.readouterr()
    assert one == two
    assert one[0] == 2 and one[1].out == "" and one[1].err == "cs-score: run2: scoring failed\n"


def test_jobs_default():
    assert _jobs(0, 100, PARALLEL_MIN_ANSWERS - 1) == 1
    assert _jobs(0, 1, 10 * PARALLEL_MIN_ANSWERS) == 1
    assert _jobs(3, 2, 10) == 2
    files = [str(CASES_DIR / f) for f in ("sf_queries.xml", "pool.tab", "run1.tab", "run2.tab")]
    assert score_files(files, Options(jobs=2)) == score_files(files, Options(jobs=1))

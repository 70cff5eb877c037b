"""``assay kbp score | ondemand | validate``: the reference cases byte for byte through
``assay kbp score``; the on-demand table through ``assay kbp ondemand``; CS-ValidateSF's checks
through ``assay kbp validate``; every bad input one line naming file/line/column (or the
option), exit code 2, no traceback, nothing written."""
from __future__ import annotations

import os
import shlex
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from assay.interfaces.cli import app

from test_ondemand_kbp import write_world

HERE = Path(__file__).resolve().parent
CASES = HERE / "cases"
runner = CliRunner()
RUN_LINE = "CSSF15_ENG_0458206f71\tper:title\trun1\tD1:0-9\tmayor\tSTRING\tD1:3-7\t0.9"


def _invoke(args, cwd=None):
    old = os.getcwd()
    try:
        if cwd:
            os.chdir(cwd)
        return runner.invoke(app, ["kbp", *map(str, args)])
    finally:
        os.chdir(old)


def _one_line_error(res, *needles):
    assert res.exit_code == 2, res.output
    text = res.output.strip()
    assert text.count("\n") == 0 and "Traceback" not in text, text
    for n in needles:
        assert n in text, text


@pytest.mark.parametrize("name", ["sf_default", "sf_tabs", "ldc_expand"])
def test_score_is_cs_score(name):
    args = {ln.split("\t")[0]: ln.split("\t")[1] for ln in (HERE / "cases.tsv").read_text()
            .splitlines() if ln and not ln.startswith("#")}[name]
    res = _invoke(["score", *shlex.split(args)], cwd=CASES)
    assert res.exit_code == 0
    assert res.stdout == (HERE / "expected" / f"{name}.out").read_text(encoding="utf-8")


def test_score_help():
    for flag in ("--help", "-help"):
        res = _invoke(["score", flag])
        assert res.exit_code == 0 and "-expand" in res.stdout and "-tabs" in res.stdout


def test_score_bad_input_one_line(tmp_path):
    bad = tmp_path / "run.tab"
    bad.write_text(RUN_LINE.replace("0.9", "1.5") + "\n")
    res = _invoke(["score", CASES / "sf_queries.xml", bad])
    _one_line_error(res, "run.tab", "line 1", "column 8")
    _one_line_error(_invoke(["score", "-nosuch", bad]), "-nosuch")


@pytest.mark.slow
def test_score_through_the_console_script(tmp_path):
    """The installed entry point: stderr one line, exit 2, stdout empty."""
    bad = tmp_path / "run.tab"
    bad.write_text(RUN_LINE + "\textra\n")
    p = subprocess.run([sys.executable, "-m", "assay.interfaces.cli", "kbp", "score",
                        str(CASES / "sf_queries.xml"), str(bad)], capture_output=True, text=True)
    assert p.returncode == 2 and p.stdout == ""
    assert p.stderr.count("\n") == 1 and "line 1" in p.stderr and "column 1" in p.stderr


def test_validate_ok_and_warnings():
    res = _invoke(["validate", "sf_queries.xml", "pool.tab", "run1.tab", "run2.tab"], cwd=CASES)
    assert res.exit_code == 0, res.output
    assert "run1.tab: 27 submission lines, runs run1: OK" in res.stdout
    assert "pool.tab: 26 assessment lines: OK" in res.stdout


# (line, column, a word of the message): one case per kind of line CS-ValidateSF rejects
BAD_LINES = {
    "columns": (RUN_LINE + "\tx", 1, "columns"),
    "query id": (RUN_LINE.replace("CSSF15_ENG_0458206f71", "CSSF15_ENG_xyz"), 1, "query ID"),
    "slot": (RUN_LINE.replace("per:title", "per:hobby"), 2, "slot"),
    "run id": (RUN_LINE.replace("run1", "run 1"), 3, "run ID"),
    "provenance": (RUN_LINE.replace("D1:0-9", "D1:0+9"), 4, "provenance"),
    "offsets": (RUN_LINE.replace("D1:3-7", "D1:7-3"), 7, "offset"),
    "value type": (RUN_LINE.replace("STRING", "THING"), 6, "value type"),
    "confidence": (RUN_LINE.replace("0.9", "0"), 8, "confidence"),
    "empty column": (RUN_LINE.replace("mayor", " "), 5, "empty"),
}


@pytest.mark.parametrize("kind", sorted(BAD_LINES))
def test_validate_rejects_each_kind_in_one_line(tmp_path, kind):
    text, col, word = BAD_LINES[kind]
    bad = tmp_path / "run.tab"
    bad.write_text(RUN_LINE + "\n" + text + "\n")
    _one_line_error(_invoke(["validate", bad]), "run.tab", "line 2", f"column {col}", word)


def test_validate_documents_and_queries(tmp_path):
    run = tmp_path / "run.tab"
    run.write_text(RUN_LINE + "\n")
    docs = tmp_path / "docs.tsv"
    docs.write_text("D1\t5\n")
    _one_line_error(_invoke(["validate", "--docs", docs, run]), "line 1", "column 4", "beyond")
    docs.write_text("D2\t500\n")
    _one_line_error(_invoke(["validate", "--docs", docs, run]), "line 1", "column 4", "DOCID")
    docs.write_text("D1\tmany\n")
    _one_line_error(_invoke(["validate", "--docs", docs, run]), "docs.tsv", "line 1")
    # an answer to a query the query file does not have
    _one_line_error(_invoke(["validate", CASES / "sf_queries.xml", run]), "run.tab", "line 1",
                    "unknown query")
    _one_line_error(_invoke(["validate", tmp_path / "none.tab"]), "none.tab")


def test_ondemand_table_and_errors(tmp_path):
    files, truth, _ = write_world(tmp_path, np.random.default_rng(4), queries=4, pooled=1,
                                  unpooled=1)
    gold = tmp_path / "gold.tsv"
    gold.write_text("".join(f"{k}\t{v}\n" for k, v in truth.items()))
    never = tmp_path / "never.tsv"
    base = ["ondemand", "--store", tmp_path / "od.db", "--half-width", "0.1"]
    res = _invoke([*base, "--campaign", "b", "--gold", gold, "--never-assessed", never, *files])
    assert res.exit_code == 0, res.output
    rows = [r.split("\t") for r in res.stdout.splitlines()]
    assert rows[0][:3] == ["run", "instances", "never_assessed"]
    assert [r[0] for r in rows[1:]] == ["run0", "run1"]
    assert int(rows[1][2]) == 0 and int(rows[2][2]) > 0       # run1 was not pooled
    assert "[" in rows[2][6]                                    # an interval
    assert {r.split("\t")[0] for r in never.read_text().splitlines()} == {"run1"}
    # no gold: the first drawn instance the pool did not assess is one error line
    _one_line_error(_invoke([*base, "--campaign", "a", *files]), "no label for instance")
    _one_line_error(_invoke([*base, "--campaign", "c", "--half-width", "2", *files]),
                    "--half-width")
    bad = tmp_path / "bad.tab"
    bad.write_text(RUN_LINE.replace("0.9", "7") + "\n")
    out = tmp_path / "never2.tsv"
    _one_line_error(_invoke([*base, "--campaign", "d", "--never-assessed", out, files[0], bad]),
                    "bad.tab", "line 1", "column 8")
    assert not out.exists()

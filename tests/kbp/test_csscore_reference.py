"""cs-score against the original CS-Score v2.4.4: byte-identical stdout on every reference case.

The cases are listed in tests/kbp/cases.tsv (name, arguments, what each covers); the expected
outputs in tests/kbp/expected/ were written by the perl original at a pinned commit
(bench/csscore_peer/setup.sh, run_peer.sh). Nothing here needs perl or the network.
"""
from __future__ import annotations

import os
import shlex
from pathlib import Path

import pytest

from assay.scorers.csscore import main

HERE = Path(__file__).resolve().parent
CASES_DIR = HERE / "cases"


def _cases() -> list[tuple[str, list[str]]]:
    out = []
    for line in (HERE / "cases.tsv").read_text().splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        name, args, _what = line.split("\t")
        out.append((name, shlex.split(args)))
    return out


CASES = _cases()


def test_every_case_has_an_expected_output():
    names = {n for n, _ in CASES}
    assert len(names) == len(CASES) >= 17
    assert names == {p.stem for p in (HERE / "expected").glob("*.out")}


@pytest.mark.parametrize("name,args", CASES, ids=[n for n, _ in CASES])
def test_byte_identical(name, args, capsysbinary, monkeypatch):
    monkeypatch.chdir(CASES_DIR)
    code = main(args)
    out, _err = capsysbinary.readouterr()
    assert code == 0
    expected = (HERE / "expected" / f"{name}.out").read_bytes()
    assert out == expected


def test_output_file_matches_stdout(tmp_path, monkeypatch, capsysbinary):
    monkeypatch.chdir(CASES_DIR)
    target = tmp_path / "score.txt"
    assert main(["-output_file", str(target), "-tabs", "sf_queries.xml", "pool.tab",
                 "run1.tab", "run2.tab"]) == 0
    assert capsysbinary.readouterr().out == b""
    assert target.read_bytes() == (HERE / "expected" / "sf_tabs.out").read_bytes()
    assert not [p for p in os.listdir(tmp_path) if p != "score.txt"]


def test_a_folder_stands_for_its_tab_txt_files(tmp_path, monkeypatch, capsysbinary):
    # as in the original, a folder argument means its *.tab.txt files, in sorted order
    runs = tmp_path / "runs"
    runs.mkdir()
    for name in ("run1", "run2"):
        (runs / f"{name}.tab.txt").write_bytes((CASES_DIR / f"{name}.tab").read_bytes())
    (runs / "notes.txt").write_text("not a run\n")
    monkeypatch.chdir(CASES_DIR)
    assert main(["sf_queries.xml", "pool.tab", str(runs)]) == 0
    out, _ = capsysbinary.readouterr()
    assert out == (HERE / "expected" / "sf_default.out").read_bytes()

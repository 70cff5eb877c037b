"""Hop-1 query IDs made lazily (docs/csscore.md, speed): a submission's generated query is
registered only when a later line may name it (newest first until met) or a parent walk needs
it. The result must be the loader's line-by-line one (every line through ``_add``): the same
output on every reference case and on generated cases whose hop-1 lines come long after their
parents, the same errors for a hop-1 line before its parent or naming no answer, and the same
for a skipped line (wrong slot) whose answer a later line repeats."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

from assay.scorers.csscore import load as load_mod
from assay.scorers.csscore import main
from test_csscore_reference import CASES, CASES_DIR

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench" / "csscore_peer"))
from speed import write_case  # noqa: E402


def _eager(ld, responses, runids):
    for r in responses:
        load_mod._add(ld, r, runids)


def _both(args, capsys, monkeypatch):
    outs = []
    for eager in (False, True):
        with monkeypatch.context() as m:
            if eager:
                m.setattr(load_mod, "_add_all", _eager)
            code = main(list(args))
            out, err = capsys.readouterr()
            outs.append((code, out, err))
    return outs


@pytest.mark.parametrize("name,args", CASES, ids=[n for n, _ in CASES])
def test_reference_cases_as_line_by_line(name, args, capsys, monkeypatch):
    monkeypatch.chdir(CASES_DIR)
    lazy, eager = _both(args, capsys, monkeypatch)
    assert lazy == eager and lazy[0] == 0


def _hop1_last(path: Path) -> None:
    """Move every hop-1 line of a run to its end (parents far behind, many answers pending)."""
    lines = path.read_text().splitlines()
    hop1 = [ln for ln in lines if ln.split("\t")[0].count("_") > 2]
    assert hop1
    path.write_text("\n".join([ln for ln in lines if ln not in hop1] + hop1) + "\n")


def test_generated_runs_hop1_far_from_parents(tmp_path, capsys, monkeypatch):
    files = write_case(tmp_path, runs=3, answers=300, nq=20, seed=5)
    _hop1_last(Path(files[3]))
    for args in (["-tabs", *files], ["-tabs", files[0], *files[2:], files[1]]):
        lazy, eager = _both(args, capsys, monkeypatch)
        assert lazy == eager and lazy[0] == 0 and lazy[1]


def test_hop1_line_before_its_parent_or_without_one(tmp_path, capsys, monkeypatch):
    files = write_case(tmp_path, runs=1, answers=200, nq=10, seed=6)
    run = Path(files[2])
    lines = run.read_text().splitlines()
    i = next(k for k, ln in enumerate(lines) if ln.split("\t")[0].count("_") > 2)
    run.write_text("\n".join([lines[i]] + lines[:i] + lines[i + 1:]) + "\n")
    lazy, eager = _both(["-tabs", *files], capsys, monkeypatch)
    assert lazy == eager and lazy[0] == 2 and "unknown query" in lazy[2]
    lines[i] = lines[i].split("\t", 1)[0][:-12] + "0" * 12 + "\t" + lines[i].split("\t", 1)[1]
    run.write_text("\n".join(lines) + "\n")
    lazy, eager = _both(["-tabs", *files], capsys, monkeypatch)
    assert lazy == eager and lazy[0] == 2 and "hop-0 answer must come" in lazy[2]


def test_skipped_line_then_the_same_answer(tmp_path, capsys, monkeypatch):
    """A line with a wrong slot makes its generated query (as the original does) but no
    parent link; a later line with the same answer and the right slot, then a hop-1 line."""
    files = write_case(tmp_path, runs=1, answers=100, nq=5, seed=7)
    run = Path(files[2])
    lines = run.read_text().splitlines()
    i = next(k for k, ln in enumerate(lines) if ln.split("\t")[0].count("_") > 2)
    parent = lines[i - 1].split("\t")
    wrong = parent.copy()
    wrong[1] = "per:title"
    run.write_text("\n".join(lines[:i - 1] + ["\t".join(wrong)] + lines[i - 1:]) + "\n")
    lazy, eager = _both(["-tabs", *files], capsys, monkeypatch)
    assert lazy == eager and lazy[0] == 0 and "line skipped" in lazy[2]

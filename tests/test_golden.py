"""Results unchanged: a fixed set of evaluations re-run on the installed ``assay`` and compared with
the outputs recorded from release 0.1.0 (commit bd65c11) by ``tests/golden/record.py`` into
``tests/golden/expected.json``.

The cases (``tests/golden/cases.py``): three real ER pools (restaurant, dblp_acm, abt_buy) x every
design (auto; passive, also with replacement; stratified csf+neyman and equal+proportional with 10
strata; importance; oasis) x seeds 3 and 11 at a budget of 300 labels, through ``assay.evaluate``;
``assay stratified design | adjudicate | estimate --json`` (with and without the adjudications) on
a fixed two-topic TREC world (``tests/golden/world.py``, regenerated here); ``scorer2`` on the real
Senseval-3 key with the most-frequent-sense baseline, fine/coarse/mixed, with and without ``-m``.
Only public entry points are used: ``assay.evaluate`` and the installed ``assay`` and ``scorer2``
commands (found beside ``sys.executable``).

What must be equal:
- floats (estimates, interval ends, standard errors, effective sizes, design-based estimates and
  intervals, draw probabilities, every number in the stratified JSON reports) to 10 significant
  digits. **A difference beyond that is a change of results: it must be explained case by case in
  the note of the change that causes it**, and only then may ``expected.json`` be re-recorded;
- integers, strings, interval methods and notes exactly;
- the sha256 of each run's full draw sequence (index, repr of its probability, stratum) exactly; a
  second hash of (index, stratum) alone tells a change of the items drawn from a change of their
  probabilities' last digits;
- the bytes of the stratified sample files (SAMPLE.tsv, ADJ.tsv) exactly, and scorer2's stdout
  exactly (its stderr by line count and hash). The stratified JSON reports are compared as
  documents (same keys, in any order; numbers as above).

An explained difference is listed in ``tests/golden/changes.json`` (case, place, recorded value,
value now, commit, why); there the value now is required instead of the recorded one. The only
ones so far are 22 precision interval ends in 18 ER cases, from 784d2f0 ('A census is exact').
"""
from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from golden import cases

EXPECTED = json.loads(cases.EXPECTED.read_text())
CHANGES = json.loads((cases.EXPECTED.parent / "changes.json").read_text())["changes"]


def _command(name: str) -> list[str]:
    """The installed console script ``name`` of this interpreter's environment."""
    path = shutil.which(name, path=str(Path(sys.executable).parent)) or shutil.which(name)
    if path is None:
        pytest.fail(f"the {name!r} command is not installed beside {sys.executable}")
    return [path]


def _check(case: str, diffs: list[cases.Difference]) -> None:
    """Fail unless every difference is an explained change to exactly its listed value, and
    every change listed for ``case`` is there."""
    listed = CHANGES.get(case, {})
    found = {where: now for where, _, now in diffs}
    bad = [f"{where}: recorded {old!r}, now {now!r}" for where, old, now in diffs
           if where not in listed or cases.differences(listed[where]["now"], now)]
    bad += [f"{where}: changes.json says {c['recorded']!r} -> {c['now']!r} ({c['commit']}), "
            f"but it is {'as recorded' if where not in found else repr(found[where])}"
            for where, c in listed.items() if where not in found]
    if bad:
        shown = "\n".join(bad[:40]) + (f"\n... {len(bad) - 40} more" if len(bad) > 40 else "")
        pytest.fail(f"{case}: {len(bad)} unexplained difference(s) from the recording of "
                    f"release 0.1.0 (explain each in tests/golden/changes.json):\n{shown}")


def test_the_cases_are_the_recorded_ones():
    assert EXPECTED["budget"] == cases.BUDGET and EXPECTED["seeds"] == list(cases.SEEDS)
    assert list(EXPECTED["er"]) == cases.er_case_ids()
    assert list(EXPECTED["scorer2"]) == [cases.senseval_case_id(g, m)
                                         for g, m in cases.SENSEVAL_CASES]
    assert len(EXPECTED["er"]) == 42
    known = set(EXPECTED["er"]) | {f"stratified/{n}" for n in cases.STRATIFIED_OUTPUTS}
    assert set(CHANGES) <= known


@pytest.mark.parametrize("case", [                       # auto's larger pools: slow (10-19 s)
    pytest.param(c, marks=pytest.mark.slow) if "/auto/" in c and c != "abt_buy/auto/3"
    else c for c in cases.er_case_ids()])
def test_er_evaluation_unchanged(case):
    expected = EXPECTED["er"][case]
    actual = cases.run_er_case(case)
    diffs = cases.differences(expected, actual)
    if expected["draws_sha256"] != actual["draws_sha256"]:
        same_items = expected["draws_items_sha256"] == actual["draws_items_sha256"]
        diffs.append(("draws", "the recorded sequence", "same items and strata, other "
                      "probabilities" if same_items else "other items or strata"))
    _check(case, diffs)


@pytest.fixture(scope="module")
def stratified(tmp_path_factory) -> dict:
    return cases.run_stratified(_command("assay"), tmp_path_factory.mktemp("trec_world"))


def test_stratified_world_is_regenerated_identically(stratified):
    """Not a result of assay: if this fails, the world generator (or numpy's Generator) changed
    and the stratified comparisons below say nothing."""
    assert stratified["world_sha256"] == EXPECTED["stratified"]["world_sha256"]


@pytest.mark.parametrize("name", [n for n in cases.STRATIFIED_OUTPUTS if n.endswith(".tsv")])
def test_stratified_sample_files_unchanged_byte_for_byte(stratified, name):
    assert stratified["exit_codes"] == EXPECTED["stratified"]["exit_codes"]
    assert stratified["files"][name] == EXPECTED["stratified"]["files"][name]


@pytest.mark.parametrize("name", [n for n in cases.STRATIFIED_OUTPUTS if n.endswith(".json")])
def test_stratified_estimates_unchanged(stratified, name):
    expected = json.loads(EXPECTED["stratified"]["files"][name])
    actual = json.loads(stratified["files"][name])
    _check(f"stratified/{name}", cases.differences(expected, actual))


@pytest.fixture(scope="module")
def senseval_folder(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("senseval")
    cases.write_mfs_answers(folder)
    return folder


@pytest.mark.parametrize("grain,minimal", cases.SENSEVAL_CASES,
                         ids=[cases.senseval_case_id(g, m) for g, m in cases.SENSEVAL_CASES])
def test_scorer2_output_unchanged(senseval_folder, grain, minimal):
    actual = cases.run_scorer2(_command("scorer2"), senseval_folder, grain, minimal)
    assert actual == EXPECTED["scorer2"][cases.senseval_case_id(grain, minimal)]

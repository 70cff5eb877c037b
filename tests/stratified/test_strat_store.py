"""``assay stratified estimate --store``: TREC assessments and adjudications are judgments in the
same label store as every other label (roles assessor and adjudicator; unassessable is a
status), reused by later estimates; files that disagree with the store are a conflict."""
from __future__ import annotations

import json

from typer.testing import CliRunner

from assay.interfaces.stratified_cli import app
from assay.labels.schema import Role, Status
from assay.labels.store import LabelStore

from tests.stratified.test_strat_cli import _design, _estimate, _write_world

runner = CliRunner()


def _adjudicate(tmp):
    return runner.invoke(app, ["adjudicate", "--sample", str(tmp / "SAMPLE.tsv"),
                               "--assessments", str(tmp / "qrels.txt"), "--budget", "150",
                               "--seed", "2", "--out", str(tmp / "ADJ.tsv")])


def _store_args(tmp, *extra):
    return ["estimate", "--runs", str(tmp / "runA.txt"), "--runs", str(tmp / "runB.txt"),
            "--collection", str(tmp / "docs.txt"), "--sample", str(tmp / "SAMPLE.tsv"),
            "--adjudication-sample", str(tmp / "ADJ.tsv"), "--json", str(tmp / "st.json"),
            "--store", str(tmp / "labels.db"), *extra]


def test_judgments_go_to_the_store_and_are_reused(tmp_path):
    _write_world(tmp_path)
    assert _design(tmp_path).exit_code == 0 and _adjudicate(tmp_path).exit_code == 0
    assert _estimate(tmp_path).exit_code == 0
    plain = json.loads((tmp_path / "out.json").read_text())
    r = runner.invoke(app, _store_args(tmp_path, "--assessments", str(tmp_path / "qrels.txt"),
                                       "--adjudications", str(tmp_path / "truth.txt")))
    assert r.exit_code == 0, r.output
    first = json.loads((tmp_path / "st.json").read_text())
    assert first["runs"] == plain["runs"] and first["yield"] == plain["yield"]
    store = LabelStore(tmp_path / "labels.db")
    js = store.judgments("trec")
    roles = {j.role for j in js}
    assert roles == {Role.ASSESSOR, Role.ADJUDICATOR}
    sampled = len((tmp_path / "SAMPLE.tsv").read_text().splitlines()) - 1
    assessed = [j for j in js if j.role == Role.ASSESSOR]
    assert len(assessed) == sampled                     # the sampled documents only
    assert any(j.status == Status.UNASSESSABLE and j.value is None for j in assessed)
    store.close()
    # the files are no longer needed: the store holds every judgment
    r = runner.invoke(app, _store_args(tmp_path))
    assert r.exit_code == 0, r.output
    again = json.loads((tmp_path / "st.json").read_text())
    assert again["runs"] == first["runs"] and again["yield"] == first["yield"]


def test_a_file_that_disagrees_with_the_store_is_a_conflict(tmp_path):
    _write_world(tmp_path)
    assert _design(tmp_path).exit_code == 0 and _adjudicate(tmp_path).exit_code == 0
    args = _store_args(tmp_path, "--assessments", str(tmp_path / "qrels.txt"),
                       "--adjudications", str(tmp_path / "truth.txt"))
    assert runner.invoke(app, args).exit_code == 0
    lines = (tmp_path / "qrels.txt").read_text().splitlines()
    flipped = [ln.rsplit(" ", 1)[0] + " " + ("0" if ln.endswith(" 1") else "1")
               if not ln.endswith("-1") else ln for ln in lines]
    (tmp_path / "qrels.txt").write_text("\n".join(flipped) + "\n")
    r = runner.invoke(app, args)
    assert r.exit_code == 2 and "differ from those stored" in r.output
    assert "Traceback" not in r.output
    r = runner.invoke(app, args + ["--replace-stored"])
    assert r.exit_code == 0, r.output

"""``assay stratified design | adjudicate | estimate``: formats, reproducibility, errors."""
import json

import numpy as np
import pytest
from typer.testing import CliRunner

from assay.interfaces.stratified_cli import app

runner = CliRunner()


def _write_world(tmp, topics=("101",), D=3000, seed=0):
    """Collection, two runs, fallible qrels (3% FP, 10% FN, 1% unassessable) and true qrels."""
    rng = np.random.default_rng(seed)
    docs = [f"D{i:05d}" for i in range(D)]
    (tmp / "docs.txt").write_text("\n".join(docs) + "\n")
    runs = {"A": [], "B": []}
    fal_lines, true_lines, truth = [], [], {}
    for t in topics:
        rel = rng.random(D) < 0.05
        ret = {"A": rng.random(D) < np.where(rel, 0.7, 0.02),
               "B": rng.random(D) < np.where(rel, 0.5, 0.01)}
        for name, mask in ret.items():
            for r, i in enumerate(np.flatnonzero(mask)):
                runs[name].append(f"{t} Q0 {docs[i]} {r + 1} {1 / (r + 1):.5f} {name}")
        fal = np.where(rel, rng.random(D) > 0.1, rng.random(D) < 0.03).astype(int)
        fal[rng.random(D) < 0.01] = -1
        fal_lines += [f"{t} 0 {docs[i]} {fal[i]}" for i in range(D)]
        true_lines += [f"{t} 0 {docs[i]} {int(rel[i])}" for i in range(D)]
        truth[t] = {k: (m & rel).sum() / rel.sum() for k, m in ret.items()}
    for name, lines in runs.items():
        (tmp / f"run{name}.txt").write_text("\n".join(lines) + "\n")
    (tmp / "qrels.txt").write_text("\n".join(fal_lines) + "\n")
    (tmp / "truth.txt").write_text("\n".join(true_lines) + "\n")
    return truth


def _design(tmp, seed=1, out="SAMPLE.tsv", budget=600):
    return runner.invoke(app, ["design", "--runs", str(tmp / "runA.txt"), str(tmp / "runB.txt"),
                               "--collection", str(tmp / "docs.txt"), "--budget", str(budget),
                               "--seed", str(seed), "--out", str(tmp / out)])


def _estimate(tmp, adj=True, extra=()):
    args = ["estimate", "--runs", str(tmp / "runA.txt"), "--runs", str(tmp / "runB.txt"),
            "--collection", str(tmp / "docs.txt"), "--sample", str(tmp / "SAMPLE.tsv"),
            "--assessments", str(tmp / "qrels.txt"), "--json", str(tmp / "out.json"), *extra]
    if adj:
        args += ["--adjudication-sample", str(tmp / "ADJ.tsv"),
                 "--adjudications", str(tmp / "truth.txt")]
    return runner.invoke(app, args)


def test_design_adjudicate_estimate_end_to_end(tmp_path):
    truth = _write_world(tmp_path)
    r = _design(tmp_path)
    assert r.exit_code == 0, r.output
    lines = (tmp_path / "SAMPLE.tsv").read_text().splitlines()
    assert lines[0].split("\t")[:3] == ["docno", "stratum", "inclusion_probability"]
    assert len(lines) == 601
    strata = {ln.split("\t")[1] for ln in lines[1:]}
    assert strata == {"11", "10", "01", "00"}
    # same seed, same sample; other seed, other sample
    assert _design(tmp_path, 1, "S2.tsv").exit_code == 0
    assert (tmp_path / "S2.tsv").read_text() == (tmp_path / "SAMPLE.tsv").read_text()
    assert _design(tmp_path, 2, "S3.tsv").exit_code == 0
    assert (tmp_path / "S3.tsv").read_text() != (tmp_path / "SAMPLE.tsv").read_text()
    r = runner.invoke(app, ["adjudicate", "--sample", str(tmp_path / "SAMPLE.tsv"),
                            "--assessments", str(tmp_path / "qrels.txt"), "--budget", "150",
                            "--seed", "3", "--out", str(tmp_path / "ADJ.tsv"),
                            "--runs", str(tmp_path / "runA.txt"), str(tmp_path / "runB.txt"),
                            "--target-run", "A"])
    assert r.exit_code == 0, r.output
    adj = (tmp_path / "ADJ.tsv").read_text().splitlines()
    assert len(adj) == 151 and adj[0] == lines[0]
    r = runner.invoke(app, ["adjudicate", "--sample", str(tmp_path / "SAMPLE.tsv"),
                            "--assessments", str(tmp_path / "qrels.txt"), "--budget", "150",
                            "--seed", "3", "--out", str(tmp_path / "ADJ2.tsv"),
                            "--runs", str(tmp_path / "runA.txt"), str(tmp_path / "runB.txt"),
                            "--target-run", "A"])
    assert r.exit_code == 0 and (tmp_path / "ADJ2.tsv").read_text() == "\n".join(adj) + "\n"
    sample = {ln.split("\t")[0]: float(ln.split("\t")[2]) for ln in lines[1:]}
    for ln in adj[1:]:
        d, _, p, _ = ln.split("\t")
        assert float(p) <= sample[d]                       # π1·π2 ≤ π1
    r = _estimate(tmp_path)
    assert r.exit_code == 0, r.output
    assert "(assumption-free [" in r.stderr and "trust the assumption-free ones" in r.stderr
    out = json.loads((tmp_path / "out.json").read_text())
    for run in ("A", "B"):
        for m in ("recall", "precision", "f1"):
            iv = out["runs"][run][m]
            assert iv["ci_low"] <= iv["estimate"] <= iv["ci_high"]
            assert set(out["runs"][run]["naive"][m]) >= {"estimate", "ci_low", "ci_high"}
            # issue 11, must-have 3: the primary names what it assumes; the assumption-free
            # interval (exact two-phase bounds) is beside it and holds the truth here
            for block, says in ((iv, "adjudications are correct"),
                                (out["runs"][run]["naive"][m], "assessments are correct")):
                assert says in block["assumes"]
                free = block["assumption_free"]
                assert 0 <= free["ci_low"] <= free["ci_high"] <= 1
            if m == "recall":
                free = iv["assumption_free"]
                assert free["ci_low"] <= truth["101"][run] <= free["ci_high"]
        rec = out["runs"][run]["recall"]
        assert rec["ci_low"] - 0.1 < truth["101"][run] < rec["ci_high"] + 0.1
    assert set(out["yield"]) >= {"estimate", "ci_low", "ci_high", "assumes", "assumption_free"}
    assert out["yield"]["assumption_free"]["ci_low"] <= out["yield"]["assumption_free"]["ci_high"]
    assert out["unassessable_share"]["estimate"] > 0
    rates = [st["error_rates"] for st in out["strata"] if "error_rates" in st]
    assert rates and all(0 <= r["fpr"] <= 1 and 0 <= r["fnr"] <= 1 for r in rates)
    # without adjudications the naive and corrected estimates agree
    assert _estimate(tmp_path, adj=False).exit_code == 0
    out = json.loads((tmp_path / "out.json").read_text())
    for run in ("A", "B"):
        assert out["runs"][run]["recall"] == out["runs"][run]["naive"]["recall"]


def test_several_topics_give_per_topic_results_and_mean(tmp_path):
    _write_world(tmp_path, topics=("101", "102"))
    assert _design(tmp_path).exit_code == 0
    r = _estimate(tmp_path, adj=False, extra=["--confidence", "0.9", "--interval", "wald"])
    assert r.exit_code == 0, r.output
    out = json.loads((tmp_path / "out.json").read_text())
    assert set(out["topics"]) == {"101", "102"} and out["mean_over_topics"] == 2
    mean = np.mean([out["topics"][t]["runs"]["A"]["recall"]["estimate"] for t in ("101", "102")])
    assert out["runs"]["A"]["recall"]["estimate"] == pytest.approx(mean)
    assert out["confidence"] == 0.9
    # the mean's assumption-free interval spends the error over the topics: wider than the
    # mean of the topics' own
    free = out["runs"]["A"]["recall"]["assumption_free"]
    own = [out["topics"][t]["runs"]["A"]["recall"]["assumption_free"] for t in ("101", "102")]
    assert free["ci_low"] <= np.mean([f["ci_low"] for f in own]) + 1e-12
    assert free["ci_high"] >= np.mean([f["ci_high"] for f in own]) - 1e-12
    assert "assessments are correct" in out["runs"]["A"]["recall"]["assumes"]
    assert "delta-method" in out["runs"]["A"]["recall"]["assumes"]


def test_cells_left_unadjudicated_are_named_and_not_trusted_by_the_bound(tmp_path):
    """Four adjudications with no minimum per cell leave most stratum × assessed-label cells
    without any: the estimate takes their assessments as correct and says how many documents
    that is, in the JSON and on the terminal; the assumption-free interval does not take them
    so, and holds the truth."""
    truth = _write_world(tmp_path)
    assert _design(tmp_path).exit_code == 0
    r = runner.invoke(app, ["adjudicate", "--sample", str(tmp_path / "SAMPLE.tsv"),
                            "--assessments", str(tmp_path / "qrels.txt"), "--budget", "4",
                            "--seed", "3", "--out", str(tmp_path / "ADJ.tsv"), "--runs",
                            str(tmp_path / "runA.txt"), str(tmp_path / "runB.txt"),
                            "--target-run", "A", "--min-per-cell", "0"])
    assert r.exit_code == 0, r.output
    r = _estimate(tmp_path)
    assert r.exit_code == 0, r.output
    out = json.loads((tmp_path / "out.json").read_text())
    empty = [n for n in out["notes"] if "no adjudication among" in n]
    docs = sum(int(n.split("among the ")[1].split(" ")[0]) for n in empty)
    said = f"the assessments of the {docs:,} document(s) in the {len(empty)} cell(s) with no"
    assert empty and said in r.stderr and "were never adjudicated" in r.stderr
    assert out["unadjudicated"] == {"cells": len(empty), "documents": docs}
    for run in ("A", "B"):
        for m in ("recall", "precision", "f1"):
            assert said in out["runs"][run][m]["assumes"]
        free = out["runs"][run]["recall"]["assumption_free"]
        assert free["ci_low"] <= truth["101"][run] <= free["ci_high"]
        naive = out["runs"][run]["naive"]["recall"]["assumption_free"]
        assert free["ci_high"] - free["ci_low"] > naive["ci_high"] - naive["ci_low"]


@pytest.mark.parametrize("case", ["run_fields", "unknown_doc", "bad_rel", "missing_file",
                                  "missing_assessment", "bad_prob"])
def test_bad_input_one_line_exit_2_nothing_written(tmp_path, case):
    _write_world(tmp_path, D=400)
    assert _design(tmp_path, budget=60).exit_code == 0
    expect = ""
    if case == "run_fields":
        with open(tmp_path / "runA.txt", "a") as fh:
            fh.write("101 Q0 D00001 7\n")
        n = len((tmp_path / "runA.txt").read_text().splitlines())
        expect = f"runA.txt:{n}: expected 6 fields"
    elif case == "unknown_doc":
        with open(tmp_path / "runB.txt", "a") as fh:
            fh.write("101 Q0 NOPE 999 0.1 B\n")
        expect = "docno 'NOPE' is not in the collection"
    elif case == "bad_rel":
        with open(tmp_path / "qrels.txt", "a") as fh:
            fh.write("101 0 D00001 2\n")
        expect = "expected rel -1, 0 or 1, got '2'"
    elif case == "missing_file":
        (tmp_path / "qrels.txt").unlink()
        expect = "qrels.txt: file not found"
    elif case == "missing_assessment":
        first = (tmp_path / "SAMPLE.tsv").read_text().splitlines()[1].split("\t")[0]
        kept = [ln for ln in (tmp_path / "qrels.txt").read_text().splitlines()
                if ln.split()[2] != first]
        (tmp_path / "qrels.txt").write_text("\n".join(kept) + "\n")
        expect = "SAMPLE.tsv:2: docno"
    elif case == "bad_prob":
        txt = (tmp_path / "SAMPLE.tsv").read_text().splitlines()
        f = txt[3].split("\t")
        f[2] = "1.5"
        txt[3] = "\t".join(f)
        (tmp_path / "SAMPLE.tsv").write_text("\n".join(txt) + "\n")
        expect = "SAMPLE.tsv:4: expected an inclusion_probability in (0, 1]"
    r = _estimate(tmp_path, adj=False)
    assert r.exit_code == 2
    err = r.stderr.strip()
    assert len(err.splitlines()) == 1 and err.startswith("error: ") and expect in err, err
    assert "Traceback" not in r.output
    assert not (tmp_path / "out.json").exists()
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


def test_design_errors_and_user_strata(tmp_path):
    _write_world(tmp_path, D=300)
    (tmp_path / "strata.tsv").write_text(
        "".join(f"D{i:05d}\t{'head' if i < 50 else 'tail'}\n" for i in range(300)))
    r = runner.invoke(app, ["design", "--runs", str(tmp_path / "runA.txt"), "--collection",
                            str(tmp_path / "docs.txt"), "--budget", "40", "--seed", "1",
                            "--out", str(tmp_path / "S.tsv"), "--strata",
                            str(tmp_path / "strata.tsv"), "--allocation", "proportional"])
    assert r.exit_code == 0, r.output
    rows = (tmp_path / "S.tsv").read_text().splitlines()[1:]
    assert {ln.split("\t")[1] for ln in rows} == {"head", "tail"}
    r = runner.invoke(app, ["design", "--runs", str(tmp_path / "runA.txt"), "--collection",
                            str(tmp_path / "docs.txt"), "--budget", "1", "--seed", "1",
                            "--out", str(tmp_path / "T.tsv")])
    assert r.exit_code == 2 and "below the minimum" in r.stderr
    assert not (tmp_path / "T.tsv").exists()


def test_appeals_substrata_from_the_command_line(tmp_path):
    _write_world(tmp_path)
    assert _design(tmp_path).exit_code == 0
    rows = [ln.split("\t") for ln in (tmp_path / "SAMPLE.tsv").read_text().splitlines()[1:]]
    (tmp_path / "appeals.txt").write_text("".join(f"101 {r[0]}\n" for r in rows[::7]))
    adj = ["docno\tstratum\tinclusion_probability\ttopic"]
    fal = {ln.split()[2]: ln.split()[3] for ln in (tmp_path / "qrels.txt").read_text().splitlines()}
    adj += ["\t".join(r) for r in rows[::3] if fal[r[0]] != "-1"]
    (tmp_path / "ADJ.tsv").write_text("\n".join(adj) + "\n")
    r = _estimate(tmp_path, extra=["--appeals", str(tmp_path / "appeals.txt")])
    assert r.exit_code == 0, r.output
    out = json.loads((tmp_path / "out.json").read_text())
    assert out["double_sampling"] and 0 < out["runs"]["A"]["recall"]["estimate"] <= 1


@pytest.mark.parametrize("step,extra,needle", [
    ("design", ["--bottom-share", "-1"], "--bottom-share"),
    ("design", ["--bottom-share", "nan"], "--bottom-share"),
    ("design", ["--min-per-stratum", "-3"], "--min-per-stratum"),
    ("design", ["--allocation", "neyman", "--prior", "11=5", "--prior", "10=0.1",
                "--prior", "01=0.1", "--prior", "00=0.01"], "--prior 11"),
    ("design", ["--seed", "-1"], "--seed"),
    ("adjudicate", ["--prior-fpr", "nan"], "--prior-fpr"),
    ("adjudicate", ["--prior-fnr", "7"], "--prior-fnr"),
    ("adjudicate", ["--min-per-cell", "-1"], "--min-per-cell"),
    ("adjudicate", ["--target-run", "A"], "--target-run: needs the run files"),
])
def test_bad_numbers_are_one_line_naming_the_option(tmp_path, step, extra, needle):
    """Session 31's audit: these ran (a negative share as 0, a prior of 5, a NaN error rate
    writing 56 of 100 adjudications) or failed with an internal message."""
    _write_world(tmp_path, D=600)
    args = {"design": ["design", "--runs", str(tmp_path / "runA.txt"), str(tmp_path / "runB.txt"),
                       "--collection", str(tmp_path / "docs.txt"), "--budget", "100",
                       "--out", str(tmp_path / "OUT.tsv")],
            "adjudicate": ["adjudicate", "--sample", str(tmp_path / "SAMPLE.tsv"),
                           "--assessments", str(tmp_path / "qrels.txt"), "--budget", "50",
                           "--out", str(tmp_path / "OUT.tsv")]}[step]
    if step == "adjudicate":
        assert _design(tmp_path, budget=100).exit_code == 0
    if "--seed" not in extra:
        args += ["--seed", "1"]
    r = runner.invoke(app, args + extra)
    assert r.exit_code == 2 and needle in r.output, r.output
    assert "Traceback" not in r.output and len(r.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "OUT.tsv").exists()


def test_the_same_run_file_twice_is_one_line(tmp_path):
    """Session 31's audit: `--runs runA.txt runA.txt` said a docno was returned twice by run A."""
    _write_world(tmp_path, D=300)
    r = runner.invoke(app, ["design", "--runs", str(tmp_path / "runA.txt"),
                            str(tmp_path / "runA.txt"), "--collection",
                            str(tmp_path / "docs.txt"), "--budget", "50", "--seed", "1",
                            "--out", str(tmp_path / "S.tsv")])
    assert r.exit_code == 2 and "given twice" in r.output, r.output
    assert not (tmp_path / "S.tsv").exists()

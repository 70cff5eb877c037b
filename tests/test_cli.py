"""The command line: the --json document, the report, and user errors as one line + exit 2."""
from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from assay.interfaces.cli import app

runner = CliRunner()


@pytest.fixture()
def files(tmp_path):
    rng = np.random.default_rng(0)
    n = 2000
    score = rng.normal(size=n)
    label = (rng.random(n) < 1 / (1 + np.exp(-(3 * score - 3)))).astype(int)
    pool = pd.DataFrame({"id": np.arange(n), "score": score,
                         "prediction": (score > 0.8).astype(int)})
    pool.to_csv(tmp_path / "pool.csv", index=False)
    pd.DataFrame({"id": np.arange(n), "label": label}).to_parquet(tmp_path / "gold.parquet")
    return tmp_path


@pytest.mark.parametrize("design", ["auto", "passive", "stratified", "importance", "oasis"])
def test_evaluate_json_and_report(files, design):
    out, rep = files / f"{design}.json", files / f"{design}.html"
    res = runner.invoke(app, ["evaluate", str(files / "pool.csv"), "--labels",
                              str(files / "gold.parquet"), "--design", design, "--budget", "300",
                              "--seed", "4", "--store", str(files / "s.db"), "--json", str(out),
                              "--report", str(rep)])
    assert res.exit_code == 0, res.output
    doc = json.loads(out.read_text())
    assert set(doc) == {"design", "seed", "labels_used", "pool_size", "confidence", "estimates"}
    assert doc["design"] == design and doc["seed"] == 4 and doc["labels_used"] == 300
    assert doc["pool_size"] == 2000 and doc["confidence"] == 0.95
    assert set(doc["estimates"]) == {"precision", "recall", "f1"}
    for v in doc["estimates"].values():
        assert set(v) == {"estimate", "ci_low", "ci_high", "assumes", "assumption_free"}
        assert v["ci_low"] <= v["estimate"] <= v["ci_high"]
        free = v["assumption_free"]                     # issue 11: two intervals, named
        assert set(free) == {"ci_low", "ci_high"} and 0 <= free["ci_low"] <= free["ci_high"] <= 1
        assert v["assumes"] is None or isinstance(v["assumes"], str)
    page = rep.read_text()
    assert page.startswith("<!doctype html>") and "data:image/png;base64," in page
    assert "Strata" in page and "Parameters" in page
    assert "The two intervals" in page and "assumption-free" in page      # issue 11, item 6
    if design == "auto":
        assert "design-based" in page
        assert "design-based assumes" in page   # it does without the model, not without
        #                                          an assumption (assay.interfaces.cli_run)
        assert "The model against the labels" in page


@pytest.mark.slow
def test_api_result_equals_cli_json(files):
    from assay import evaluate
    res = evaluate(files / "pool.csv", files / "gold.parquet", budget=300, seed=4,
                   confidence=0.9)        # the default design: auto, since the pool has scores
    out = files / "x.json"
    cli = runner.invoke(app, ["evaluate", str(files / "pool.csv"), "--labels",
                              str(files / "gold.parquet"), "--budget", "300", "--seed", "4",
                              "--confidence", "0.9", "--store", str(files / "t.db"),
                              "--json", str(out)])
    assert cli.exit_code == 0, cli.output
    assert json.loads(out.read_text()) == res.to_dict()
    assert res.design == "auto"
    assert len(res.history) > 5 and res.history[-1].labels_used == 300


@pytest.mark.parametrize("args,needle", [
    (["--budget", "10", "--labels", "MISSING.csv"], "MISSING.csv: file not found"),
    (["--budget", "10", "--confidence", "1.5"], "--confidence"),
    (["--budget", "10", "--design", "importance", "--epsilon", "0"], "epsilon"),
    (["--budget", "10", "--design", "oasis", "--epsilon", "1.5"], "--epsilon"),
    (["--budget", "10", "--design", "oasis", "--defensive", "1"], "--defensive"),
    (["--budget", "10", "--design", "oasis", "--defensive", "-0.1"], "--defensive"),
    (["--budget", "10", "--design", "oasis", "--defensive", "nan"], "--defensive"),
    (["--budget", "10", "--design", "auto", "--defensive", "0"], "--design oasis"),
    (["--budget", "10", "--defensive", "0.2"], "--design oasis"),
    (["--budget", "10", "--design", "importance", "--no-floors"], "--no-floors"),
])
def test_user_errors_exit_2_without_traceback(files, args, needle):
    full = ["evaluate", str(files / "pool.csv"), "--store", str(files / "e.db")]
    if "--labels" not in args:
        full += ["--labels", str(files / "gold.parquet")]
    res = runner.invoke(app, full + args)
    assert res.exit_code == 2
    assert needle in res.output and "Traceback" not in res.output


def test_bad_pool_row_reported(files):
    bad = files / "bad.csv"
    pd.DataFrame({"id": [1, 2, 3], "prediction": [0, 1, 5]}).to_csv(bad, index=False)
    res = runner.invoke(app, ["evaluate", str(bad), "--labels", str(files / "gold.parquet")])
    assert res.exit_code == 2
    assert "bad.csv, line 4: column 'prediction' has value 5" in res.output


def test_nothing_half_written_on_error(files):
    out = files / "never.json"
    res = runner.invoke(app, ["evaluate", str(files / "pool.csv"), "--labels",
                              str(files / "nope.csv"), "--json", str(out)])
    assert res.exit_code == 2 and not out.exists()


def test_label_at_the_terminal_with_skip_undo_and_resume(files):
    """y/n/s/u from the keyboard; q stops, and the same command resumes without re-asking."""
    from assay.labels.store import LabelStore
    store = str(files / "person.db")
    args = ["label", str(files / "pool.csv"), "--budget", "4", "--seed", "2", "--store", store,
            "--annotator", "ann", "--design", "passive"]
    first = runner.invoke(app, args, input="y\ns\nn\nu\ny\nq\n")
    assert first.exit_code == 0, first.output          # q stops calmly (issue 10, point 9)
    assert "match? [y]es" in first.output and "item" in first.output
    assert LabelStore(store).labels("pool", "ann") and \
        sorted(LabelStore(store).labels("pool", "ann").values()) == [1, 1]
    second = runner.invoke(app, args, input="n\nn\nn\n")
    assert second.exit_code == 0, second.output
    assert len(LabelStore(store).labels("pool", "ann")) == 4
    assert second.output.count("match? [y]es") == 2        # only the two missing items asked


@pytest.mark.slow
def test_panel_of_simulated_annotators(files):
    res = runner.invoke(app, ["evaluate", str(files / "pool.csv"), "--labels",
                              str(files / "gold.parquet"), "--budget", "200", "--votes", "3",
                              "--fpr", "0.1", "--fnr", "0.1", "--store", str(files / "v.db")],
                        terminal_width=400)
    assert res.exit_code == 0, res.output
    assert "majority of a panel of 3 annotators" in res.output
    from assay.labels.store import LabelStore
    names = ("simulated(fpr=0.1,fnr=0.1,seed=0)", "simulated(fpr=0.1,fnr=0.1,seed=1)")
    store = LabelStore(files / "v.db")
    assert all(len(store.labels("pool", n)) >= 200 for n in names)   # dataset: the pool's stem


def test_default_design_without_scores_is_passive(files):
    from assay import evaluate
    pool = pd.read_csv(files / "pool.csv").drop(columns=["score"])
    res = evaluate(pool, files / "gold.parquet", budget=100, seed=1)
    assert res.design == "passive"


@pytest.mark.slow
def test_the_report_shows_the_score_blind_audit_and_its_cost(files, tmp_path):
    """Issue 11, must-have 2 and 6: with ``audit_share`` the HTML report says how many labels
    the score-blind audit took (and their share of the budget) and marks them per stratum."""
    from assay import evaluate
    from assay.interfaces.report import render_html
    res = evaluate(files / "pool.csv", files / "gold.parquet", budget=300, seed=4,
                   options={"audit_share": 0.1})
    audit = sum(r.get("audit", 0) for r in res.strata)
    assert audit == 30
    page = render_html(res)
    assert f"Score-blind audit: 30 labels (10.0% of {res.labels_used:,})" in page
    plain = render_html(evaluate(files / "pool.csv", files / "gold.parquet", budget=300, seed=4))
    assert "Score-blind audit" not in plain


def _oasis_settings_seen(monkeypatch):
    """The settings each path builds from the command's options (memory: assay.evaluation;
    engines: assay.engines.run), recorded as they are made."""
    import assay.engines.run as engine_run
    import assay.evaluation as evaluation
    from assay.designs.settings import settings_from_options
    seen = []

    def spy(*args, **kwargs):
        seen.append(settings_from_options(*args, **kwargs))
        return seen[-1]
    monkeypatch.setattr(evaluation, "settings_from_options", spy)
    monkeypatch.setattr(engine_run, "settings_from_options", spy)
    return seen


@pytest.mark.parametrize("engine", ["memory", pytest.param("duckdb", marks=pytest.mark.slow)])
def test_oasis_defensive_and_epsilon_reach_the_design(files, monkeypatch, engine):
    """``--defensive`` and ``--epsilon`` are OASIS's d and ε on the in-memory and the engine
    path (each design keeps its default when they are not given; ``--epsilon`` stays
    importance's with ``--design importance``), and they change the draws."""
    from assay.designs.settings import ImportanceSettings, OasisSettings
    pd.read_csv(files / "pool.csv").to_parquet(files / "pool.parquet")
    seen = _oasis_settings_seen(monkeypatch)

    def run(name, *extra):
        out = files / f"{engine}_{name}.json"
        res = runner.invoke(app, ["evaluate", str(files / "pool.parquet"), "--engine", engine,
                                  "--labels", str(files / "gold.parquet"), "--budget", "200",
                                  "--seed", "3", "--store", str(files / f"{engine}_{name}.db"),
                                  "--json", str(out), *extra])
        assert res.exit_code == 0, res.output
        return json.loads(out.read_text())["estimates"]

    default = run("default", "--design", "oasis")
    assert seen[-1] == OasisSettings()
    assert run("half", "--design", "oasis", "--defensive", "0.5") == default
    published = run("published", "--design", "oasis", "--defensive", "0", "--epsilon", "0.01",
                    "--no-floors")
    assert seen[-1] == OasisSettings(defensive=0.0, epsilon=0.01, floors=False)
    assert published != default
    run("importance", "--design", "importance", "--epsilon", "0.2")
    assert seen[-1] == ImportanceSettings(epsilon=0.2)


def test_bad_oasis_option_on_the_engine_path_is_one_line(files):
    pd.read_csv(files / "pool.csv").to_parquet(files / "pool.parquet")
    res = runner.invoke(app, ["evaluate", str(files / "pool.parquet"), "--engine", "duckdb",
                              "--labels", str(files / "gold.parquet"), "--design", "oasis",
                              "--defensive", "2", "--store", str(files / "b.db")])
    assert res.exit_code == 2
    assert "--defensive" in res.output and "Traceback" not in res.output
    assert len(res.output.strip().splitlines()) == 1


def test_label_passes_the_design_options_to_the_saved_run(files):
    """``assay label`` has evaluate's design options: ``--epsilon`` and ``--defensive`` are
    OASIS's ε and d in the run it saves; without them OASIS keeps its defaults."""
    from assay.designs.settings import OasisSettings
    from assay.labels.store import LabelStore

    def saved(name, *extra):
        store = str(files / f"{name}.db")
        res = runner.invoke(app, ["label", str(files / "pool.csv"), "--budget", "2", "--store",
                                  store, "--annotator", "ann", "--design", "oasis", *extra],
                            input="y\nn\ny\nn\n")
        assert res.exit_code == 0, res.output
        return LabelStore(store).run_info(1)["settings"]

    assert saved("default") == OasisSettings().to_dict()
    assert saved("set", "--epsilon", "0.01", "--defensive", "0", "--n-strata", "10") == \
        OasisSettings(epsilon=0.01, defensive=0.0, n_strata=10).to_dict()


@pytest.mark.parametrize("command", ["evaluate", "label"])
@pytest.mark.parametrize("extra, option", [
    (["--design", "oasis", "--epsilon", "0"], "--epsilon"),
    (["--design", "importance", "--epsilon", "1.5"], "--epsilon"),
    (["--epsilon", "nan"], "--epsilon"),
    (["--design", "oasis", "--defensive", "1"], "--defensive"),
    (["--design", "oasis", "--defensive", "-0.1"], "--defensive"),
    (["--design", "stratified", "--defensive", "0.2"], "--defensive"),
    (["--n-strata", "0"], "--n-strata"),
])
def test_bad_design_option_is_one_line_naming_it(files, command, extra, option):
    """Both commands check the design options the same way (the settings' own checks; --n-strata
    by its typer option), before any file is read or label asked: one line naming the option,
    exit 2."""
    args = [command, str(files / "pool.csv"), "--store", str(files / "x.db"), *extra]
    if command == "evaluate":
        args += ["--labels", str(files / "gold.parquet")]
    res = runner.invoke(app, args, input="y\n" * 5)
    assert res.exit_code == 2, res.output
    assert res.output.strip().startswith("error: ") and option in res.output, res.output
    assert len(res.output.strip().splitlines()) == 1 and "match?" not in res.output
    assert not (files / "x.db").exists()

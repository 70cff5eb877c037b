"""``assay campaign new | exhaustive | submit | report``: a whole session through the CLI, the
JSON report's fields, the HTML report (every system's intervals, pooled beside open-world recall,
labels each cost, labels_total, an embedded plot), and bad input → one line naming the file/row/option, exit 2, nothing
written."""
from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from assay.interfaces.cli import app
from assay.labels.store import LabelStore
from assay.ondemand.simulate import world
from assay.ondemand.store import OnDemandStore

runner = CliRunner()


@pytest.fixture()
def files(tmp_path):
    w = world(5, m=3)
    keys = w.keys()
    for k in range(3):
        pd.DataFrame({"item": keys[w.memb[:, k]], "unit": w.unit[w.memb[:, k]]}).to_csv(
            tmp_path / f"sys{k}.csv", index=False)
    pd.DataFrame({"item": keys, "label": w.truth.astype(int)}).to_csv(tmp_path / "gold.csv",
                                                                      index=False)
    rows = []
    for u in np.random.default_rng(0).choice(500, 40, replace=False):
        rows += [(f"u{u}", k) for k in keys[(w.unit == u) & w.truth]] or [(f"u{u}", "")]
    pd.DataFrame(rows, columns=["unit", "item"]).to_csv(tmp_path / "units.csv", index=False)
    return tmp_path


def _ok(args):
    res = runner.invoke(app, ["campaign"] + [str(a) for a in args])
    assert res.exit_code == 0, res.output
    return res


def _fails(args, *words):
    res = runner.invoke(app, ["campaign"] + [str(a) for a in args])
    assert res.exit_code == 2, res.output
    lines = [x for x in res.output.splitlines() if x.strip()]
    assert len(lines) == 1 and "Traceback" not in res.output, res.output
    for w in words:
        assert w in lines[0], lines[0]
    return lines[0]


def test_session_and_json_report(files):
    db = files / "s.db"
    _ok(["new", "kb", "--store", db, "--corpus-units", 500, "--half-width", 0.06])
    for k in range(3):
        res = _ok(["submit", "kb", files / f"sys{k}.csv", "--system", f"s{k}", "--gold",
                   files / "gold.csv", "--store", db])
        assert f"s{k}:" in res.output and "precision" in res.output
    _ok(["exhaustive", "kb", files / "units.csv", "--store", db])
    _ok(["report", "kb", "--store", db, "--json", files / "r.json"])
    rep = json.loads((files / "r.json").read_text())
    assert rep["labels_total"] == sum(s["labels_used"] for s in rep["systems"]) > 0
    for s in rep["systems"]:
        for m in ("precision", "recall", "f1", "pooled_recall"):
            e = s[m]
            assert set(e) == {"estimate", "ci_low", "ci_high"}
            assert e["ci_low"] <= e["estimate"] <= e["ci_high"]
    assert "s2" in _ok(["report", "kb", "--store", db]).output
    _ok(["report", "kb", "--store", db, "--html", files / "r.html", "--json", files / "r2.json"])
    assert json.loads((files / "r2.json").read_text()) == rep
    page = (files / "r.html").read_text()
    _check_html(page, rep)


def _check_html(page, rep):
    import base64
    import re

    assert page.startswith("<!doctype html>") and page.rstrip().endswith("</html>")
    assert f"<b>{rep['labels_total']}</b> labels" in page
    pngs = re.findall(r'src="data:image/png;base64,([A-Za-z0-9+/=]+)"', page)
    assert len(pngs) == 1 and base64.b64decode(pngs[0]).startswith(b"\x89PNG")
    for col in ("labels it cost", "recall (open world)", "pooled recall (closed world)",
                "pooled − open-world", "precision", "F1"):
        assert f"<th>{col}</th>" in page
    for s in rep["systems"]:
        row = re.search(rf"<tr><td>{s['system']}</td>(.*?)</tr>", page).group(1)
        cells = re.findall(r"<td>(.*?)</td>", row)
        assert cells[2] == str(s["labels_used"])
        for m, c in (("precision", 4), ("recall", 5), ("pooled_recall", 6), ("f1", 8)):
            e = s[m]
            assert cells[c] == f"{e['estimate']:.3f} [{e['ci_low']:.3f}, {e['ci_high']:.3f}]"
        gap = s["pooled_recall"]["estimate"] - s["recall"]["estimate"]
        assert cells[7] == f"{gap:+.3f}"


def test_html_report_before_any_unit_and_of_an_empty_campaign(files):
    db = files / "s.db"
    _ok(["new", "kb", "--store", db])
    _ok(["report", "kb", "--store", db, "--html", files / "empty.html"])
    assert "no system submitted yet" in (files / "empty.html").read_text()
    _ok(["submit", "kb", files / "sys0.csv", "--system", "s0", "--gold", files / "gold.csv",
         "--store", db])
    res = _ok(["report", "kb", "--store", db, "--html", "-"])
    assert "<td>s0</td>" in res.output and "data:image/png;base64," in res.output
    assert "only the pooled (closed-world) recall is defined" in res.output


def test_bad_input_is_one_line_and_writes_nothing(files):
    db = files / "s.db"
    _ok(["new", "kb", "--store", db, "--corpus-units", 500])
    _fails(["new", "kb", "--store", db], "exists")
    _fails(["new", "x", "--store", db, "--half-width", 0.7], "--half-width")
    _fails(["report", "nope", "--store", db], "nope")
    _fails(["submit", "kb", files / "sys0.csv", "--system", "s0", "--gold", files / "gold.csv",
            "--store", db, "--key", "id"], "sys0.csv", "id")
    bad_gold = pd.read_csv(files / "gold.csv")
    bad_gold.loc[3, "label"] = 7
    bad_gold.to_csv(files / "bad_gold.csv", index=False)
    _fails(["submit", "kb", files / "sys0.csv", "--system", "s0", "--gold",
            files / "bad_gold.csv", "--store", db], "bad_gold.csv", "line 5")
    part = pd.read_csv(files / "gold.csv").iloc[:100]
    part.to_csv(files / "part_gold.csv", index=False)
    _fails(["submit", "kb", files / "sys0.csv", "--system", "s0", "--gold",
            files / "part_gold.csv", "--store", db], "no label for item")
    sub = pd.read_csv(files / "sys0.csv")
    sub.loc[2, "item"] = None
    sub.to_csv(files / "blank.csv", index=False)
    _fails(["submit", "kb", files / "blank.csv", "--system", "s0", "--gold",
            files / "gold.csv", "--store", db], "blank.csv", "line 4", "empty key")
    _fails(["exhaustive", "kb", files / "units.csv", "--store", db, "--corpus-units", 10],
           "--corpus-units")
    _fails(["report", "kb", "--store", db, "--json", files / "no" / "dir" / "r.json"],
           "--json")
    _fails(["report", "kb", "--store", db, "--html", files / "no" / "dir" / "r.html"],
           "--html", "r.html")
    _fails(["report", "kb", "--store", db, "--html", files], "--html")
    _fails(["report", "kb", "--store", db, "--json", files / "r.json", "--html",
            files / "no" / "r.html"], "--html")
    assert not (files / "r.json").exists()       # the JSON is not written when the HTML fails
    _fails(["report", "kb", "--store", db, "--json", files / "x", "--html", files / "x"],
           "--html")
    _fails(["report", "nope", "--store", db, "--html", files / "r.html"], "nope")
    assert not (files / "r.html").exists() and not (files / "x").exists()
    od = OnDemandStore(LabelStore(db))
    row = od.campaign("kb")
    assert od.systems(row.id) == [] and od.units(row.id) == {}
    assert od.draws(row.id).empty and row.corpus_units == 500
    assert not (files / "no").exists()


def test_report_by_level(files):
    """``report --level relation`` scores precision macro-averaged over the submissions'
    ``relation`` column from the same labels; a level it does not know is one line, exit 2."""
    db = files / "lv.db"
    _ok(["new", "kb", "--store", db, "--corpus-units", 500, "--half-width", 0.08])
    for k in range(2):
        df = pd.read_csv(files / f"sys{k}.csv")
        df["relation"] = np.where(df["unit"] % 2 == 0, "per:title", "org:founded")
        df["subject"] = "e" + (df["unit"] % 7).astype(str)
        df.to_csv(files / f"rel{k}.csv", index=False)
        _ok(["submit", "kb", files / f"rel{k}.csv", "--system", f"s{k}", "--gold",
             files / "gold.csv", "--store", db])
    inst = json.loads(_ok(["report", "kb", "--store", db, "--json", "-"]).output)
    rel = json.loads(_ok(["report", "kb", "--store", db, "--json", "-", "--level",
                          "relation"]).output)
    for a, b in zip(inst["systems"], rel["systems"]):
        assert a["system"] == b["system"] and 0.0 <= b["precision"]["estimate"] <= 1.0
    _fails(["report", "kb", "--store", db, "--level", "document"], "--level")


def test_submit_with_structured_sampling(files):
    """``submit --sampling relation`` draws the system's sample by its relation-level
    distribution (kept as its fill proposal); an unknown level, or a level the file has no
    structure columns for, is one line naming --sampling, exit 2, nothing written."""
    db = files / "smp.db"
    _ok(["new", "kb", "--store", db, "--corpus-units", 500, "--half-width", 0.1])
    args = ["submit", "kb", files / "sys0.csv", "--system", "s0", "--gold",
            files / "gold.csv", "--store", db, "--sampling"]
    _fails(args + ["document"], "--sampling")
    _fails(args + ["entity"], "--sampling")
    od = OnDemandStore(LabelStore(db))
    assert od.systems(od.campaign("kb").id) == []
    df = pd.read_csv(files / "sys0.csv")
    df["relation"] = np.where(df["unit"] % 3 == 0, "per:title", "org:founded")
    df.to_csv(files / "rel0.csv", index=False)
    _ok(["submit", "kb", files / "rel0.csv", "--system", "s0", "--gold", files / "gold.csv",
         "--store", db, "--sampling", "relation"])
    row = od.campaign("kb")
    assert set(od.draws(row.id)["proposal"]) == {"fill"}
    dens = od.fills(row.id)["density"]
    assert dens.sum() == pytest.approx(1.0) and dens.nunique() == 2   # two relations

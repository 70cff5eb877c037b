"""The admin's figures and a flagged annotator (issue 15): Fleiss' κ and Dawid–Skene of the
verification votes, the span F1 and the relation κ of exhaustive annotation leave out the work
of the annotators flagged now; the costs still count it (it was paid) and the cost page says
so."""
from __future__ import annotations

import json

import numpy as np
import pytest

from assay.labels.store import Judgment
from assay.service import flags, quality
from assay.service import exhaustive_store as xs
from assay.service.costs import campaign_costs
from assay.service.exhaustive_model import relation_kappa

from flag_world import BACKENDS, World, store_url
from test_exhaustive_flags import ACME, ANN, Docs

EMP = "per:employee_of"


@BACKENDS
def test_kappa_leaves_out_a_flagged_annotators_labels(tmp_path, request, backend):
    w = World(store_url(request, tmp_path, backend))
    truth = {f"q{i}": i % 2 for i in range(30)}
    js = [Judgment(k, who, v) for k, v in truth.items() for who in ("g1", "g2")]
    js += [Judgment(k, "g3", 1 - v if i < 3 else v) for i, (k, v) in enumerate(truth.items())]
    js += [Judgment(k, "bad", 1 - v if i < 20 else v) for i, (k, v) in enumerate(truth.items())]
    w.store.record(w.row.dataset, js)
    ones_all = np.array([2 * v + (1 - v if i < 3 else v) + (1 - v if i < 20 else v)
                         for i, v in enumerate(truth.values())])
    ones_kept = np.array([2 * v + (1 - v if i < 3 else v) for i, v in enumerate(truth.values())])
    rep = quality.report(w.store, w.row)
    assert rep.kappa == pytest.approx(quality.fleiss_kappa(np.c_[4 - ones_all, ones_all]))
    assert rep.left_out == 0
    w.flag("bad")
    rep = quality.report(w.store, w.row)
    assert rep.kappa == pytest.approx(quality.fleiss_kappa(np.c_[3 - ones_kept, ones_kept]))
    assert rep.left_out == 30 and rep.labels == 120
    assert {a.name: a.disagreements for a in rep.annotators}["bad"] == 17   # their row kept
    # (17: on q0-q2 g3 and bad are 2 against 2, no majority)
    assert flags.clear(w.store.engine, w.name, "bad", "root")
    assert quality.report(w.store, w.row).kappa == pytest.approx(
        quality.fleiss_kappa(np.c_[4 - ones_all, ones_all]))


@BACKENDS
def test_exhaustive_agreement_leaves_out_a_flagged_annotator(tmp_path, request, backend):
    """k = 3: ann2 and root mark the same two mentions and relation, ann1 marks Acme as a GPE
    and no relation (their PER-GPE task has the same spans). Counting ann1: span F1
    (0.5 + 0.5 + 1) / 3, relation κ of 3 raters; ann1 flagged: F1 1.0 over one pair, κ of
    ann2 and root only (undefined: one category)."""
    d = Docs(store_url(request, tmp_path, backend), k=3)
    gpe = {**ACME, "type": "GPE"}
    rel = json.dumps([{"subject": 0, "relation": "per:employee_of", "object": 1}])
    for who, ms, rs in (("ann1", [ANN, gpe], "[]"), ("ann2", [ANN, ACME], rel),
                        ("root", [ANN, ACME], rel)):
        r = d.post(who, "/exhaustive", unit="d1", mentions=json.dumps(ms), relations=rs)
        assert r.status_code == 303, r.text[:300]
    e = d.store.engine
    a = xs.agreement(e, d.name)
    assert (a.f1, a.documents, a.pairs) == (pytest.approx(2 / 3), 1, 3)
    three = relation_kappa({1: {"ann1": "", "ann2": EMP, "root": EMP}})      # same spans
    assert xs.relation_agreement(e, d.name) == (pytest.approx(three[0]), 1)
    d.flag("ann1")
    a = xs.agreement(e, d.name)
    assert (a.f1, a.documents, a.pairs) == (1.0, 1, 1)
    assert xs.relation_agreement(e, d.name) == (pytest.approx(float("nan"), nan_ok=True), 1)
    root, _ = d.client("root")
    page = root.get("/admin").text
    assert 'id="agreement-note"' in page and '<td class="agreement">1.000</td>' in page
    cost = root.get(f"/costs?campaign={d.name}").text
    assert 'id="flagged-paid"' in cost
    paid = {a.name: a.documents for a in campaign_costs(d.store, d.camp.row).annotators}
    assert paid["ann1"] == 1                                  # paid all the same

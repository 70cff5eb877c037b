"""The corpus-size check of an exhaustive finish and the recording of the document's truth are
one write transaction under the campaign's lock (issue 15): two finishes of different documents
cannot both pass the check, on SQLite and PostgreSQL."""
from __future__ import annotations

import json
from contextlib import contextmanager

from assay.service import exhaustive
from assay.service import exhaustive_store as xs

from flag_world import BACKENDS, store_url
from test_exhaustive_flags import ACME, ANN, EMPLOYED, Docs

RELATION = json.dumps([{"subject": 0, "relation": "per:employee_of", "object": 1}])


@BACKENDS
def test_two_finishes_cannot_both_pass_the_corpus_size_check(tmp_path, request, monkeypatch,
                                                             backend):
    """Documents k = 1, a corpus of one unit. ann1 finishes d1; right after its write
    transaction commits, ann2 finishes d2. ann1's truth is recorded with its work, so ann2's
    finish sees the corpus full: 400, nothing of ann2's written. Before, d1's truth was
    recorded after its transaction: ann2 passed the check and recorded d2, and ann1's finish
    answered 409 with its work written done and d1 without a truth."""
    d = Docs(store_url(request, tmp_path, backend), k=1)
    d.camp.od.set_corpus_units(d.camp.row.id, 1)
    real, other = exhaustive._writing, []

    @contextmanager
    def then_ann2(req, campaign, annotator, what):
        with real(req, campaign, annotator, what) as conn:
            yield conn
        if annotator == "ann1" and not other:           # ann1's transaction committed
            other.append(d.post("ann2", "/exhaustive", unit="d2", mentions="[]",
                                relations="[]"))
    monkeypatch.setattr(exhaustive, "_writing", then_ann2)
    r = d.post("ann1", "/exhaustive", unit="d1", mentions=json.dumps([ANN, ACME]),
               relations=RELATION)
    assert len(other) == 1
    assert (r.status_code, other[0].status_code) == (303, 400), (r.text[:300],
                                                                  other[0].text[:300])
    assert "corpus" in other[0].text
    assert d.truth() == {"d1": {EMPLOYED}}
    assert xs.work(d.store.engine, d.name, "d1", "ann1").state == "done"
    assert xs.work(d.store.engine, d.name, "d2", "ann2") is None

"""When a document's truth is settled (seed 001, k annotators per document): one annotator who
marks nothing does not settle a document of k = 3 (two more could still agree on an item)."""
from __future__ import annotations

import json
from urllib.parse import unquote

from assay.ondemand import OnDemandCampaign
from assay.service import exhaustive_store as xs
from assay.service import views
from assay.service.exhaustive_model import settled

from service_helpers import csrf_of

TEXT = "Ann Lee joined Acme Corp in 2010."
ANN = {"start": 0, "end": 7, "text": "Ann Lee", "type": "PER"}
ACME = {"start": 15, "end": 24, "text": "Acme Corp", "type": "ORG", "canonical": "Acme"}
EMPLOYED = [{"subject": 0, "relation": "per:employee_of", "object": 1}]


def test_settled_waits_while_the_ones_to_come_could_make_an_item_true():
    assert settled([[]], 3) is None                     # was [] (settled, no true item)
    assert settled([[], []], 3) == [] and settled([[]], 2) == [] and settled([[]], 1) == []
    assert settled([[], []], 5) is None and settled([[], [], []], 5) == []
    assert settled([["a"], ["a"]], 3) == ["a"]


def test_one_annotator_marking_nothing_does_not_settle_a_document_of_three(service):
    OnDemandCampaign.create(service.store, "docs", annotator="consensus", corpus_units=10)
    views.add_records(service.store, "docs", [{"id": "d1", "text": TEXT}])
    xs.set_documents_k(service.store.engine, "docs", 3)
    docs = OnDemandCampaign.open(service.store, "docs")

    def finish(who: str, ms: list, rel: list) -> str:
        c = service.client(who)
        r = c.post("/exhaustive", data={"csrf": csrf_of(c, "/exhaustive?campaign=docs"),
                                        "campaign": "docs", "unit": "d1",
                                        "mentions": json.dumps(ms),
                                        "relations": json.dumps(rel)})
        assert r.status_code == 303, r.text[:300]
        return unquote(r.headers["location"])
    assert "waiting for 2 more annotators" in finish("ann1", [], [])   # was "d1 done (0 ..."
    assert docs.od.units(docs.row.id) == {}
    assert "waiting for 1 more annotator" in finish("ann2", [ANN, ACME], EMPLOYED)
    assert "d1 done (1 true items)" in finish("root", [ANN, ACME], EMPLOYED)
    assert docs.od.units(docs.row.id) == {"d1": {"Ann Lee\tper:employee_of\tAcme"}}

"""Label Studio: the open items exported as tasks (no system name), a Label Studio export
imported as votes keyed by item and annotator; a bad export is one line and writes nothing.
And the service modules' doctests."""
from __future__ import annotations

import doctest
import importlib

import pytest

from assay.service import jobs, queue
from assay.service.auth import user_by_name

from service_helpers import csrf_of

MODULES = ["assay.service.auth", "assay.service.queue", "assay.service.quality",
           "assay.service.views", "assay.service.labelstudio", "assay.service.gold",
           "assay.service.costs", "assay.service.flags"]


@pytest.mark.parametrize("name", MODULES)
def test_doctests(name):
    res = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert res.failed == 0 and res.attempted > 0


def _ann(task, who, choice):
    return {"data": task["data"], "annotations": [{"completed_by": {"email": who}, "result": [
        {"from_name": "label", "to_name": "text", "type": "choices",
         "value": {"choices": [choice]}}]}]}


def test_export_and_import(service):
    jobs.submit(service.store, user_by_name(service.store.engine, "alice"), "kb", "sysA",
                "a.csv", service.output_csv(0))
    jobs.run_pending(service.store)
    root = service.client("root")
    got = root.get("/api/labelstudio/export?campaign=kb").json()
    tasks = got["tasks"]
    assert "<Choices name=\"label\"" in got["label_config"] and len(tasks) > 0
    assert "t1/" not in str(tasks)
    head = {"X-CSRF-Token": csrf_of(root)}
    bad = [_ann(tasks[0], "x@y", "yes"), _ann(tasks[1], "x@y", "maybe")]
    r = root.post("/api/labelstudio/import?campaign=kb", json=bad, headers=head)
    assert r.status_code == 400 and "task 2, annotation 1" in r.json()["error"]
    assert service.store.judgments("kb", "ls:x@y") == []
    done = [_ann(t, "x@y", "yes" if service.truth[t["data"]["item"]] else "no") for t in tasks]
    r = root.post("/api/labelstudio/import?campaign=kb", json=done, headers=head)
    assert r.status_code == 201 and r.json()["votes"] == len(tasks)
    labels = service.store.labels("kb", "ls:x@y")
    assert labels == {t["data"]["item"]: service.truth[t["data"]["item"]] for t in tasks}
    assert set(queue.decided(service.store, "kb")) == set(labels)         # k = 1
    assert service.client("alice").get("/api/labelstudio/export?campaign=kb").status_code == 403


def test_flagging_rule_and_kappa(service):
    """An annotator who disagrees with the majority on 12 of 40 items (30%, > 10) is flagged;
    one who disagrees on 8 of 40 (20%, not more than 10) is not (never both on one item);
    Fleiss' kappa as computed by hand from the same counts."""
    from assay.labels.store import Judgment
    from assay.service import quality
    truth = {f"q{i}": i % 2 for i in range(40)}
    js = [Judgment(k, w, v) for k, v in truth.items() for w in ("g1", "g2")]
    js += [Judgment(k, "bad", 1 - v if i < 12 else v) for i, (k, v) in enumerate(truth.items())]
    js += [Judgment(k, "ok", 1 - v if 12 <= i < 20 else v)
           for i, (k, v) in enumerate(truth.items())]
    service.store.record("kb", js)
    rep = quality.report(service.store, service.camp.row)
    flags = {a.name: (a.disagreements, a.flagged) for a in rep.annotators}
    assert flags == {"g1": (0, False), "g2": (0, False), "bad": (12, True), "ok": (8, False)}
    import numpy as np
    ones = np.array([2 * v + (1 - v if i < 12 else v) + (1 - v if 12 <= i < 20 else v)
                     for i, v in enumerate(truth.values())])
    assert rep.kappa == pytest.approx(quality.fleiss_kappa(np.c_[4 - ones, ones]))
    assert rep.items == 40 and rep.labels == 160 and rep.ds_differs == 0


def test_malformed_result_entry_is_one_400_line_and_an_import_is_all_or_nothing(service):
    """A result entry that is not an object (Label Studio export edited by hand) is a 400
    naming the task and annotation, not a 500; a vote refused in the middle of an import (an
    item already decided) keeps none of the import's votes."""
    from fastapi.testclient import TestClient

    from assay.service import auth
    from assay.service.app import create_app
    queue.enqueue(service.store, "kb", ["a", "b"], 1)
    _, tok = auth.new_token(service.store.engine, user_by_name(service.store.engine, "root"))
    c = TestClient(create_app(service.store), raise_server_exceptions=False)
    head = {"Authorization": f"Bearer {tok}"}
    body = [{"data": {"item": "a"}, "annotations": [{"completed_by": 1, "result": [
        {"from_name": "label", "type": "choices", "value": {"choices": ["yes"]}}]}]},
            {"data": {"item": "b"}, "annotations": [{"completed_by": 1, "result": ["oops"]}]}]
    r = c.post("/api/labelstudio/import?campaign=kb", json=body, headers=head)
    assert r.status_code == 400 and "task 2, annotation 1" in r.json()["error"]
    assert "\n" not in r.json()["error"]
    assert service.store.judgments("kb", "ls:1") == []
    queue.vote(service.store, service.camp.row, "ann1", "b", 0)          # k = 1: b decided
    body[1] = {"data": {"item": "b"}, "annotations": [{"completed_by": 1, "result": [
        {"from_name": "label", "type": "choices", "value": {"choices": ["no"]}}]}]}
    r = c.post("/api/labelstudio/import?campaign=kb", json=body, headers=head)
    assert r.status_code == 409 and "task 2, annotation 1" in r.json()["error"]
    assert service.store.judgments("kb", "ls:1") == []                  # not even a's vote
    assert queue.decided(service.store, "kb") == {"b": 0}

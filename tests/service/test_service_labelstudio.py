"""Label Studio: the open items exported as tasks (no system name), a Label Studio export
imported as votes keyed by item and annotator; a bad export is one line and writes nothing.
And the service modules' doctests."""
from __future__ import annotations

import doctest
import importlib

import pytest

from assay.service import jobs, queue
from assay.service.auth import user_by_name

from conftest import csrf_of

MODULES = ["assay.service.auth", "assay.service.queue", "assay.service.quality",
           "assay.service.views", "assay.service.labelstudio"]


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

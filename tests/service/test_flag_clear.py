"""An admin's clear of a flag is one write transaction (issue 15): the flag's clear, the open
queue items the annotator labelled decided again and the documents they finished settled
afresh are kept together or not at all, on SQLite and PostgreSQL."""
from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from assay.service import auth, flags, queue
from assay.service import exhaustive_store as xs
from assay.service.app import create_app

from flag_world import BACKENDS, store_url
from test_exhaustive_flags import Docs


@BACKENDS
def test_a_clear_is_one_transaction(tmp_path, request, monkeypatch, backend):
    """Queue k = 3: ann1 and ann2 decide b (1); ann1 is flagged (b reopens) and, flagged, has
    a finished document d2 with no truth (documents k = 1). A clear that fails while settling
    the documents (counted_works made to raise) leaves everything as it was: the flag live,
    b open, d2 with no truth. Then a clear that succeeds answers b redecided and d2 settled.
    Before (three transactions) the failed clear left the flag cleared and b decided."""
    d = Docs(store_url(request, tmp_path, backend), k=1)
    row, e = d.camp.row, d.store.engine
    queue.enqueue(d.store, d.name, ["b"], 3)
    for who in ("ann1", "ann2"):
        queue.vote(d.store, row, who, "b", 1)
    monkeypatch.setattr(flags, "flag_rule", lambda dd, c: True)
    assert flags.check(d.store, row, "ann1")
    monkeypatch.undo()
    assert queue.decided(d.store, d.name) == {}
    with e.begin() as conn:                     # finished while flagged: not settled
        xs.save(conn, d.name, "d2", "ann1", "done", [], {})
    tok = auth.new_token(e, auth.user_by_name(e, "root"))[1]
    c = TestClient(create_app(d.store), follow_redirects=False)
    head = {"Authorization": f"Bearer {tok}"}
    form = {"campaign": d.name, "annotator": "ann1"}

    def broken(*a, **k):
        raise RuntimeError("settling failed")
    monkeypatch.setattr(xs, "counted_works", broken)
    with pytest.raises(RuntimeError):
        c.post("/admin/flags/clear", data=form, headers=head)
    monkeypatch.undo()
    assert flags.flags(e, d.name)["ann1"].live
    assert queue.decided(d.store, d.name) == {} and d.truth() == {}
    r = c.post("/admin/flags/clear", data=form, headers=head)
    assert r.status_code == 200, r.text
    assert r.json() == {"campaign": d.name, "cleared": "ann1", "settled": ["d2"],
                        "redecided": ["b"]}
    assert not flags.flags(e, d.name)["ann1"].live
    assert queue.decided(d.store, d.name) == {"b": 1} and d.truth() == {"d2": set()}
    assert c.post("/admin/flags/clear", data=form, headers=head).status_code == 404

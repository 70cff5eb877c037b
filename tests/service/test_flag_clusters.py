"""The cross-document clustering page and a flagged annotator (issue 15): while the flag is
live their mentions are not shown at ``/clusters`` and ``POST /clusters`` leaves them as they
are; a clear shows them again."""
from __future__ import annotations

import json

from sqlalchemy import select

from assay.service import flags
from assay.service.schema import mentions_table

from flag_world import BACKENDS, store_url
from test_exhaustive_flags import ACME, ANN, Docs


@BACKENDS
def test_a_flagged_annotators_mentions_are_not_clustered(tmp_path, request, backend):
    d = Docs(store_url(request, tmp_path, backend), k=2)
    for who in ("ann1", "ann2"):
        r = d.post(who, "/exhaustive/mentions", unit="d1", mentions=json.dumps([ANN, ACME]))
        assert r.status_code == 303
    t = mentions_table
    with d.store.engine.connect() as conn:
        ids = {who: sorted(conn.execute(select(t.c.id).where(
            (t.c.campaign == d.name) & (t.c.annotator == who))).scalars().all())
            for who in ("ann1", "ann2")}
    d.flag("ann1")
    root, _ = d.client("root")
    page = root.get(f"/clusters?campaign={d.name}").text
    assert all(f'name="cluster_{i}"' in page for i in ids["ann2"])
    assert not any(f'name="cluster_{i}"' in page for i in ids["ann1"]), "flagged shown"
    r = d.post("root", "/clusters", **{f"cluster_{i}": "x" for i in ids["ann1"] + ids["ann2"]})
    assert r.status_code == 303
    with d.store.engine.connect() as conn:
        got = dict(conn.execute(select(t.c.id, t.c.cluster).where(
            t.c.campaign == d.name)).all())
    assert [got[i] for i in ids["ann1"]] == [None, None]
    assert [got[i] for i in ids["ann2"]] == ["x", "x"]
    assert flags.clear(d.store.engine, d.name, "ann1", "root")
    page = root.get(f"/clusters?campaign={d.name}").text
    assert all(f'name="cluster_{i}"' in page for i in ids["ann1"])

"""Finishing an exhaustive document (issue 15): the checks on what is stored are made inside
the finish's write transaction, so a finish that another annotator's settled the document
before it writes nothing; the finisher's lease of the document is released at once."""
from __future__ import annotations

import json
from contextlib import contextmanager
from urllib.parse import unquote

from sqlalchemy import select

from assay.service import exhaustive
from assay.service import exhaustive_store as xs
from assay.service.exhaustive_model import Mention
from assay.service.schema import leases_table

from flag_world import BACKENDS, store_url
from test_exhaustive_flags import ACME, ANN, EMPLOYED, Docs


def _before_first_write(monkeypatch, who: str, act) -> list[str]:
    """Run ``act`` just before ``who``'s first exhaustive write transaction opens (after the
    page's own checks): returns the list that records that it ran."""
    real, fired = exhaustive._writing, []

    @contextmanager
    def first(req, campaign, annotator, what):
        if annotator == who and not fired:
            fired.append(annotator)
            act()
        with real(req, campaign, annotator, what) as conn:
            yield conn
    monkeypatch.setattr(exhaustive, "_writing", first)
    return fired


RELATION = json.dumps([{"subject": 0, "relation": "per:employee_of", "object": 1}])


def _leases(d: Docs) -> list[tuple[str, str]]:
    le = leases_table
    with d.store.engine.connect() as conn:
        return sorted(conn.execute(select(le.c.item, le.c.annotator).where(
            le.c.campaign == d.name)).all())


@BACKENDS
def test_finishing_a_document_releases_its_lease(tmp_path, request, backend):
    """ann1 is shown d1 (a lease of 10 minutes), submits its mentions (still held: the
    relations are next), then finishes it: the lease is gone. It stayed before."""
    d = Docs(store_url(request, tmp_path, backend), k=2)
    c, _ = d.client("ann1")
    assert 'data-unit="d1"' in c.get(f"/exhaustive?campaign={d.name}").text
    assert _leases(d) == [("#doc:d1", "ann1")]
    r = d.post("ann1", "/exhaustive/mentions", unit="d1", mentions=json.dumps([ANN, ACME]))
    assert r.status_code == 303
    assert _leases(d) == [("#doc:d1", "ann1")]
    r = d.post("ann1", "/exhaustive", unit="d1", rel_0_1="per:employee_of")
    assert r.status_code == 303, r.text[:300]
    assert "waiting for 1 more annotator" in unquote(r.headers["location"])
    assert _leases(d) == []


@BACKENDS
def test_a_document_settled_between_the_checks_and_the_write_is_not_written(
        tmp_path, request, monkeypatch, backend):
    """k = 1. ann1's finish of d1 passes the page's first checks; then (just before its write
    transaction) ann2 finishes d1 and its truth is recorded. ann1's finish checks again in its
    transaction: 409, nothing of ann1's written. With the checks before the transaction ann1's
    work was written done on a settled document (303)."""
    d = Docs(store_url(request, tmp_path, backend), k=1)

    def settled_first() -> None:
        ms = [Mention(0, 7, "Ann Lee", "PER", "Ann Lee"),
              Mention(15, 24, "Acme Corp", "ORG", "Acme")]
        with d.store.engine.begin() as conn:
            xs.save(conn, d.name, "d1", "ann2", "done", ms, {(0, 1): "per:employee_of"})
        d.camp.annotate_units({"d1": [EMPLOYED]})
    fired = _before_first_write(monkeypatch, "ann1", settled_first)
    before = d.written()
    r = d.post("ann1", "/exhaustive", unit="d1", mentions=json.dumps([ANN, ACME]),
               relations=RELATION)
    assert fired == ["ann1"]
    assert r.status_code == 409, (r.status_code, r.text[:300])
    assert "d1 is settled" in r.text
    work, ments, truth, log = d.written()
    assert (work, ments, log) == before[:2] + before[3:]
    assert truth == {"d1": {EMPLOYED}}


@BACKENDS
def test_a_draft_does_not_overwrite_mentions_submitted_meanwhile(tmp_path, request,
                                                                 monkeypatch, backend):
    """ann1's draft passes the page's checks; ann1's mentions are submitted (another tab)
    just before the draft's write transaction: the draft answers 409 and the submitted work
    stays. With the stage checked before the transaction the draft put the work back to a
    draft (303) while its submitted mentions stayed in the mentions table."""
    d = Docs(store_url(request, tmp_path, backend), k=2)

    def submitted_first() -> None:
        with d.store.engine.begin() as conn:
            xs.save(conn, d.name, "d1", "ann1", "mentions",
                    [Mention(0, 7, "Ann Lee", "PER", "Ann Lee")])
    fired = _before_first_write(monkeypatch, "ann1", submitted_first)
    r = d.post("ann1", "/exhaustive/draft", unit="d1", mentions=json.dumps([ANN, ACME]))
    assert fired == ["ann1"]
    assert r.status_code == 409, (r.status_code, r.text[:300])
    w = xs.work(d.store.engine, d.name, "d1", "ann1")
    assert (w.state, [m.text for m in w.mentions]) == ("mentions", ["Ann Lee"])


@BACKENDS
def test_a_flagged_annotator_is_leased_no_document(tmp_path, request, backend):
    """The page checks the flag, then leases a document: an annotator flagged in between
    (the lease reads the flag again under the lock) gets none and holds no lease. It was
    given d1 and held it 10 minutes."""
    d = Docs(store_url(request, tmp_path, backend), k=2)
    d.flag("ann1")
    assert xs.lease(d.store.engine, d.name, "ann1", ["d1", "d2"]) is None
    assert _leases(d) == []

"""A flagged annotator on the exhaustive-annotation pages (seed 001; issue 15): the flag is read
again inside every write's transaction, under the campaign's lock, so an annotator flagged after
the page's first check gets nothing written (403); while the flag is live the documents they
finished make no truth and their drafts hold no document; an admin's clear restores both."""
from __future__ import annotations

import json
import uuid
from html import unescape
from urllib.parse import unquote

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import delete, select

from assay.labels.schema import now
from assay.labels.store import LabelStore
from assay.ondemand import OnDemandCampaign
from assay.service import auth, flags, migrate, views
from assay.service import exhaustive_store as xs
from assay.service.app import create_app
from assay.service.queue import _lock
from assay.service.schema import audit_table, flags_table, leases_table, mentions_table

from service_helpers import PASSWORD, USERS, csrf_of, login, waits_for

TEXT = "Ann Lee joined Acme Corp in 2010. Bo Chan lives in Paris."
ANN = {"start": 0, "end": 7, "text": "Ann Lee", "type": "PER"}
ACME = {"start": 15, "end": 24, "text": "Acme Corp", "type": "ORG", "canonical": "Acme"}
EMPLOYED = "Ann Lee\tper:employee_of\tAcme"


class Docs:
    """A campaign with two documents (d1: TEXT, d2) on a fresh store, clients by user."""

    def __init__(self, url: str, k: int) -> None:
        self.store = LabelStore(url)
        migrate.upgrade(self.store.engine)
        self.name = f"docs{uuid.uuid4().hex[:6]}"        # the PostgreSQL database is shared
        self.camp = OnDemandCampaign.create(self.store, self.name, annotator="consensus",
                                            corpus_units=10)
        views.add_records(self.store, self.name, [{"id": "d1", "text": TEXT},
                                                  {"id": "d2", "text": "It rained."}])
        xs.set_documents_k(self.store.engine, self.name, k)
        for who, role, team in USERS:
            if auth.user_by_name(self.store.engine, who) is None:
                auth.add_user(self.store.engine, who, role, PASSWORD, team)
        self.clients: dict[str, tuple[TestClient, str]] = {}

    def client(self, who: str) -> tuple[TestClient, str]:
        if who not in self.clients:
            c = TestClient(create_app(self.store), follow_redirects=False)
            login(c, who)
            self.clients[who] = (c, csrf_of(c, f"/exhaustive?campaign={self.name}"))
        return self.clients[who]

    def post(self, who: str, path: str, **fields: str):
        c, tok = self.client(who)
        return c.post(path, data={"csrf": tok, "campaign": self.name, **fields})

    def flag(self, who: str, conn=None) -> None:
        """A live flag of ``who``, as :func:`flags.check` writes it (under the lock; a
        cleared one is replaced)."""
        f = flags_table
        row = dict(campaign=self.name, annotator=who, flagged_at=now(), disagreements=11,
                   compared=11, cleared_at=None, cleared_by=None)
        if conn is None:
            with self.store.engine.begin() as c:
                _lock(c, self.name)
                self.flag(who, c)
            return
        conn.execute(delete(f).where((f.c.campaign == self.name) & (f.c.annotator == who)))
        conn.execute(f.insert().values(**row))

    def truth(self) -> dict[str, set[str]]:
        return self.camp.od.units(self.camp.row.id)

    def written(self) -> tuple:
        """Everything an exhaustive write of ann1 leaves: their work rows, the mentions
        table, the clusters given, the truth, and their exhaustive/clusters audit entries."""
        e = self.store.engine
        with e.connect() as conn:
            work = conn.execute(select(xs.work_table.c.unit, xs.work_table.c.state,
                                       xs.work_table.c.mentions,
                                       xs.work_table.c.updated_at).where(
                (xs.work_table.c.campaign == self.name)
                & (xs.work_table.c.annotator == "ann1"))).all()
            ments = conn.execute(select(mentions_table.c.annotator, mentions_table.c.unit,
                                        mentions_table.c.cluster).where(
                mentions_table.c.campaign == self.name)).all()
            log = conn.execute(select(audit_table.c.action).where(
                (audit_table.c.user == "ann1") & (audit_table.c.campaign == self.name)
                & (audit_table.c.action.like("exhaustive%")
                   | (audit_table.c.action == "clusters")))).scalars().all()
        return sorted(work), sorted(ments, key=str), self.truth(), sorted(log)


def _url(request, tmp_path, backend: str) -> str:
    return (str(tmp_path / "s.db") if backend == "sqlite"
            else request.getfixturevalue("postgres_url"))


BACKENDS = pytest.mark.parametrize("backend", ["sqlite", "postgresql"])


@BACKENDS
def test_a_flag_between_the_check_and_the_write_writes_nothing(tmp_path, request, monkeypatch,
                                                                backend):
    """The page's first check (flags.check) passes, then the annotator is flagged (a hook
    right after the check, as another request flagging them would): the write reads the flag
    in its own transaction and answers 403 with nothing written, on every writing page.
    Without the read in the transaction the four writes went through (303)."""
    d = Docs(_url(request, tmp_path, backend), k=2)
    r = d.post("ann2", "/exhaustive/mentions", unit="d1", mentions=json.dumps([ANN, ACME]))
    assert r.status_code == 303                      # ann2's unlinked mentions, to cluster
    r = d.post("ann1", "/exhaustive/draft", unit="d1", mentions=json.dumps([ANN]))
    assert r.status_code == 303
    with d.store.engine.connect() as conn:
        mid = conn.execute(select(mentions_table.c.id).where(
            mentions_table.c.campaign == d.name)).scalars().first()
    writes = [("/exhaustive/draft", {"unit": "d1", "mentions": json.dumps([ANN, ACME])}),
              ("/exhaustive/mentions", {"unit": "d1", "mentions": json.dumps([ANN, ACME])}),
              ("/exhaustive", {"unit": "d2", "mentions": "[]", "relations": "[]"}),
              ("/clusters", {f"cluster_{mid}": "lee"})]
    real = flags.check

    def then_flagged(store, camp, annotator):
        got = real(store, camp, annotator)
        if annotator == "ann1":
            d.flag("ann1")
        return got
    monkeypatch.setattr(flags, "check", then_flagged)
    before = d.written()
    assert [w[:2] for w in before[0]] == [("d1", "draft")]
    assert [json.loads(w[2])[0]["text"] for w in before[0]] == ["Ann Lee"]
    for path, fields in writes:
        r = d.post("ann1", path, **fields)
        assert r.status_code == 403, (path, r.status_code, r.text[:300])
        assert "'ann1' is flagged in campaign" in unescape(r.text), path
        assert d.written() == before, path
        assert flags.clear(d.store.engine, d.name, "ann1", "root")
    monkeypatch.setattr(flags, "check", real)        # no flag in between: the writes go on
    for path, fields in writes:
        assert d.post("ann1", path, **fields).status_code == 303, path
    assert d.truth() == {"d2": set()}     # nothing marked: no item can be 2 of k = 2
    work, ments, _, log = d.written()
    assert [w[:2] for w in work] == [("d1", "mentions"), ("d2", "done")]
    assert sorted((m.annotator, m.cluster or "") for m in ments) == [
        ("ann1", ""), ("ann1", ""), ("ann2", ""), ("ann2", "lee")]
    assert log == ["clusters", "exhaustive", "exhaustive-draft", "exhaustive-draft",
                   "exhaustive-mentions"]


@BACKENDS
def test_a_write_waits_for_a_flag_being_written_and_is_refused(tmp_path, request, backend):
    """A flag written under the campaign's lock (as flags.check does) while a draft is posted:
    the page's first check does not see it yet (PostgreSQL: it is not committed; SQLite: the
    check waits for it), the write waits for the lock, reads the flag and answers 403 with
    nothing written. On PostgreSQL the draft was written (303) when its transaction took no
    lock before reading the flag."""
    d = Docs(_url(request, tmp_path, backend), k=1)
    d.client("ann1")
    before = d.written()
    got = {}

    def draft() -> None:
        got["r"] = d.post("ann1", "/exhaustive/draft", unit="d1", mentions=json.dumps([ANN]))
    def flag(conn) -> None:
        _lock(conn, d.name)
        d.flag("ann1", conn)
    waits_for(d.store.engine, flag, draft)       # the draft waits for the lock
    assert got["r"].status_code == 403, got["r"].text[:300]
    assert d.written() == before


def test_a_flagged_annotators_finished_document_makes_no_truth_until_cleared(tmp_path, request):
    """k = 2. ann1 finishes d1 (employee_of), then is flagged; ann2 finishes d1 alike: counting
    ann1 that settled d1 (2 of 2 agree), now ann2 waits for one more and d1 is offered to a
    third annotator. The admin's clear counts ann1 again: d1's truth is recorded then."""
    d = Docs(_url(request, tmp_path, "sqlite"), k=2)
    r = d.post("ann1", "/exhaustive", unit="d1", mentions=json.dumps([ANN, ACME]),
               relations=json.dumps([{"subject": 0, "relation": "per:employee_of",
                                      "object": 1}]))
    assert "waiting for 1 more annotator" in unquote(r.headers["location"])
    d.flag("ann1")
    r = d.post("ann2", "/exhaustive/mentions", unit="d1", mentions=json.dumps([ANN, ACME]))
    r = d.post("ann2", "/exhaustive", unit="d1", rel_0_1="per:employee_of")
    assert r.status_code == 303
    assert "d1 done: waiting for 1 more annotator" in unquote(r.headers["location"])
    assert d.truth() == {}
    with d.store.engine.begin() as conn:       # ann2's lease on d1 expired: d1 is handed out
        conn.execute(delete(leases_table).where(leases_table.c.campaign == d.name))
    root, _ = d.client("root")
    assert 'data-unit="d1"' in root.get(f"/exhaustive?campaign={d.name}").text
    with d.store.engine.connect() as conn:
        assert set(xs.done_works(conn, d.name, "d1")) == {"ann1", "ann2"}   # kept
        assert set(xs.counted_works(conn, d.name, "d1")) == {"ann2"}
    c, tok = d.client("root")
    r = c.post("/admin/flags/clear", data={"csrf": tok, "campaign": d.name,
                                           "annotator": "ann1"})
    assert r.status_code == 303
    assert d.truth() == {"d1": {EMPLOYED}}
    assert 'data-unit="d1"' not in root.get(f"/exhaustive?campaign={d.name}").text


def test_a_flagged_annotators_disagreement_does_not_hold_a_document_back(tmp_path, request):
    """k = 2: ann1 finished d1 with member_of, then is flagged; ann2 and root then agree on
    employee_of: the truth is theirs. Counting ann1, ann2's finish settled d1 at once with no
    true item (each relation 1 of 2) and root was refused d1 (404)."""
    d = Docs(_url(request, tmp_path, "sqlite"), k=2)
    r = d.post("ann1", "/exhaustive", unit="d1", mentions=json.dumps([ANN, ACME]),
               relations=json.dumps([{"subject": 0, "relation": "per:member_of",
                                      "object": 1}]))
    assert "waiting for 1 more annotator" in unquote(r.headers["location"])
    d.flag("ann1")
    for who in ("ann2", "root"):
        r = d.post(who, "/exhaustive", unit="d1", mentions=json.dumps([ANN, ACME]),
                   relations=json.dumps([{"subject": 0, "relation": "per:employee_of",
                                          "object": 1}]))
        assert r.status_code == 303, r.text[:300]
    assert "d1 done (1 true items)" in unquote(r.headers["location"])
    assert d.truth() == {"d1": {EMPLOYED}}


def test_a_flagged_annotators_draft_holds_no_document(tmp_path, request):
    """ann1's draft on d1 sends the next annotator to d2 (nobody on it); once ann1 is flagged
    the draft holds d1 no more (the next annotator is given d1); after a clear it holds it
    again. Leases are expired between hand-outs so that only the draft is on d1."""
    d = Docs(_url(request, tmp_path, "sqlite"), k=1)
    r = d.post("ann1", "/exhaustive/draft", unit="d1", mentions=json.dumps([ANN]))
    assert r.status_code == 303
    e = d.store.engine

    def hand_out(who: str) -> str | None:
        with e.begin() as conn:
            conn.execute(delete(leases_table).where(leases_table.c.campaign == d.name))
        return xs.lease(e, d.name, who, ["d1", "d2"])
    assert hand_out("a") == "d2"
    d.flag("ann1")
    assert hand_out("b") == "d1"
    assert xs.offered(e, d.name, "b", set()).keys() == {"d1", "d2"}
    assert flags.clear(e, d.name, "ann1", "root")
    assert hand_out("c") == "d2"
    # on the page: ann1 flagged again, ann2 is shown d1
    d.flag("ann1")
    with e.begin() as conn:
        conn.execute(delete(leases_table).where(leases_table.c.campaign == d.name))
    c, _ = d.client("ann2")
    assert 'data-unit="d1"' in c.get(f"/exhaustive?campaign={d.name}").text
    assert xs.work(e, d.name, "d1", "ann1").state == "draft"           # kept


def test_the_token_clear_names_the_documents_settled(tmp_path, request):
    """``POST /admin/flags/clear`` with an API token answers the documents the clear settled."""
    d = Docs(_url(request, tmp_path, "sqlite"), k=1)
    d.flag("ann1")
    with d.store.engine.begin() as conn:    # a document ann1 finished, not settled (as when
        xs.save(conn, d.name, "d2", "ann1", "done", [], {})     # flagged before it was)
    assert d.truth() == {}
    tok = auth.new_token(d.store.engine, auth.user_by_name(d.store.engine, "root"))[1]
    c = TestClient(create_app(d.store), follow_redirects=False)
    r = c.post("/admin/flags/clear", data={"campaign": d.name, "annotator": "ann1"},
               headers={"Authorization": f"Bearer {tok}"})
    assert r.status_code == 200, r.text
    assert r.json() == {"campaign": d.name, "cleared": "ann1", "settled": ["d2"],
                        "redecided": []}
    assert d.truth() == {"d2": set()}

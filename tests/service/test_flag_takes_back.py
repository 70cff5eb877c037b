"""What was decided with a flagged annotator's work is decided afresh without it (issue 15,
:mod:`assay.service.resettle`), on SQLite and PostgreSQL: the queue items they labelled (the
campaign's recorded label following), and the documents they finished; while the flag is live
their votes count in no decision; a clear decides again what is still open."""
from __future__ import annotations

import json

from sqlalchemy import select

from assay.labels.schema import Status
from assay.labels.store import Judgment
from assay.service import flags, queue, resettle

from flag_world import BACKENDS, World, store_url
from test_exhaustive_flags import ACME, ANN, EMPLOYED, Docs


def _flag_by_the_rule(monkeypatch, store, camp, who: str) -> None:
    """flags.check writes the flag (the rule made to hold: the test is of what follows)."""
    monkeypatch.setattr(flags, "flag_rule", lambda d, c: True)
    assert flags.check(store, camp, who)
    monkeypatch.undo()


def _campaign_label(w: World, item: str):
    got = {j.item: j for j in w.store.judgments(w.row.dataset, w.row.annotator)}
    j = got.get(item)
    return None if j is None else (j.value, j.status)


@BACKENDS
def test_a_flag_takes_back_the_decisions_its_votes_made(tmp_path, request, monkeypatch,
                                                        backend):
    """k = 3. a and b: ann1 and ann2 agree (decided 1; a's label already recorded by the
    campaign); c: ann1 0 against ann2 and root's 1 (decided 1 without ann1 too). ann1 flagged:
    a and b reopen (one vote left, two needed), a's recorded label becomes a skip; c stays.
    d, voted 1 by ann1 before the flag and 0 by ann2 after, waits for one more vote, not two.
    root then decides a (the campaign's label follows: 1). A clear decides b again (ann1's
    vote counted). Without the fix a and b stayed decided with ann1's votes."""
    w = World(store_url(request, tmp_path, backend), k=3)
    queue.enqueue(w.store, w.name, ["a", "b", "c", "d"], 3)
    for who, item, v in (("ann1", "a", 1), ("ann2", "a", 1), ("ann1", "b", 1),
                         ("ann2", "b", 1), ("ann1", "c", 0), ("ann2", "c", 1),
                         ("root", "c", 1), ("ann1", "d", 1)):
        queue.vote(w.store, w.row, who, item, v)
    assert queue.decided(w.store, w.name) == {"a": 1, "b": 1, "c": 1}
    w.store.record(w.row.dataset, [Judgment("a", w.row.annotator, 1)])   # a job used a
    _flag_by_the_rule(monkeypatch, w.store, w.row, "ann1")
    assert queue.decided(w.store, w.name) == {"c": 1}
    assert queue.open_count(w.store, w.name) == (3, 1)
    assert _campaign_label(w, "a") == (None, Status.SKIPPED)
    queue.vote(w.store, w.row, "ann2", "d", 0)
    q = queue.queue_table
    with w.store.engine.connect() as conn:
        needed = dict(conn.execute(select(q.c.item, q.c.needed).where(
            q.c.campaign == w.name)).all())
    assert (needed["a"], needed["b"], needed["d"]) == (2, 2, 2)
    assert queue.next_item(w.store, w.row, "root") == "a"
    queue.vote(w.store, w.row, "root", "a", 1)
    assert queue.decided(w.store, w.name) == {"a": 1, "c": 1}
    assert _campaign_label(w, "a") == (1, Status.JUDGED)
    assert flags.clear(w.store.engine, w.name, "ann1", "root")
    assert resettle.cleared(w.store, w.row, "ann1") == ["b", "d"]
    assert queue.decided(w.store, w.name) == {"a": 1, "b": 1, "c": 1}
    assert "d" not in queue.undecidable(w.store, w.name)     # 1-1 of 3: one more needed


@BACKENDS
def test_a_flag_takes_back_a_documents_truth_its_work_made(tmp_path, request, monkeypatch,
                                                           backend):
    """k = 2: ann1 and ann2 finish d1 alike, its truth is recorded. ann1 flagged: ann2 alone
    does not settle d1, so its truth is taken back and d1 is offered again; root finishes it
    alike and the truth is recorded from ann2 and root. Without the fix d1 kept the truth
    ann1's work made and was offered to nobody."""
    d = Docs(store_url(request, tmp_path, backend), k=2)
    rel = json.dumps([{"subject": 0, "relation": "per:employee_of", "object": 1}])
    for who in ("ann1", "ann2"):
        r = d.post(who, "/exhaustive", unit="d1", mentions=json.dumps([ANN, ACME]),
                   relations=rel)
        assert r.status_code == 303
    assert d.truth() == {"d1": {EMPLOYED}}
    _flag_by_the_rule(monkeypatch, d.store, d.camp.row, "ann1")
    assert d.truth() == {}
    root, _ = d.client("root")
    assert 'data-unit="d1"' in root.get(f"/exhaustive?campaign={d.name}").text
    r = d.post("root", "/exhaustive", unit="d1", mentions=json.dumps([ANN, ACME]),
               relations=rel)
    assert r.status_code == 303 and d.truth() == {"d1": {EMPLOYED}}


def test_dawid_skene_leaves_out_a_flagged_annotators_votes(tmp_path, request, monkeypatch):
    """A campaign aggregating by Dawid–Skene: an item only the flagged ann1 labelled gets no
    Dawid–Skene label while the flag is live (it had one before, from ann1's vote alone)."""
    from assay.service.jobs import dawid_skene
    w = World(store_url(request, tmp_path, "sqlite"), k=3)
    js = [Judgment(i, who, v) for i, v in (("x", 1), ("y", 0), ("u", 1)) for who in
          ("ann2", "root")] + [Judgment(i, "ann1", v) for i, v in
                               (("x", 0), ("y", 1), ("u", 1), ("z", 1))]
    w.store.record(w.row.dataset, js)
    assert set(dawid_skene(w.store, w.name)) == {"x", "y", "u", "z"}
    w.flag("ann1")
    assert set(dawid_skene(w.store, w.name)) == {"x", "y", "u"}

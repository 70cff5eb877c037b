"""A job that read an item's decision just before a flag took it back records the flag's label,
not the one it read (issue 15): the job claims the campaign's label (a pending entry) before it
reads the queue, and the flag's transaction writes its decision into that claim, which the
job's record does not overwrite. A dawid-skene job run computes its labels again once the live
flags changed."""
from __future__ import annotations

import datetime as dt

from sqlalchemy import update

from assay.labels.schema import Status, now
from assay.labels.store import Judgment
from assay.service import flags, jobs, queue, views
from assay.service.schema import queue_table

from flag_world import World
from service_helpers import make_service, submit_output


def test_a_label_read_just_before_a_flag_is_not_recorded(tmp_path, monkeypatch):
    """k = 2: ann1 and ann2 decide every item of alice's output's first round. The job's
    label source reads the first item's decision, then (before the job records it) ann1 is
    flagged: every item reopens. The campaign's label of that item is a skip (marked on the
    scores as waiting), not the decision read; once root decides it again it is that
    decision. Before the fix the job recorded the label the flag took back (judged, while
    the item was open)."""
    svc = make_service(tmp_path, k=2)
    sid = submit_output(svc)
    store, row = svc.store, svc.camp.row
    assert jobs.run_pending(store) == 1
    for who in ("ann1", "ann2"):
        while (it := queue.next_item(store, row, who)) is not None:
            queue.vote(store, row, who, it, svc.truth.get(it, 0))
    decided = queue.decided(store, "kb")
    real, read, rule = jobs.QueueSource.label, [], flags.flag_rule

    def then_flag(self, index, key):
        got = real(self, index, key)
        if not read:
            read.append((key, got))
            monkeypatch.setattr(flags, "flag_rule", lambda d, c: True)
            assert flags.check(store, row, "ann1")
            monkeypatch.setattr(flags, "flag_rule", rule)
        return got
    monkeypatch.setattr(jobs.QueueSource, "label", then_flag)
    jobs.run_pending(store)
    [(item, value)] = read
    assert value == decided[item] and item not in queue.decided(store, "kb")
    mine = {j.item: j for j in store.judgments(row.dataset, row.annotator)}
    assert (mine[item].value, mine[item].status) == (None, Status.SKIPPED)
    assert views.relabelling(store, row)[""] >= 1
    monkeypatch.setattr(jobs.QueueSource, "label", real)
    while (it := queue.next_item(store, row, "root")) is not None:
        queue.vote(store, row, "root", it, decided.get(it, svc.truth.get(it, 0)))
    mine = {j.item: j for j in store.judgments(row.dataset, row.annotator)}
    assert (mine[item].value, mine[item].status) == (value, Status.JUDGED)
    assert jobs.submission(store.engine, sid).state in ("waiting", "pending", "done")


def test_a_dawid_skene_run_recomputes_its_labels_after_a_flag(tmp_path):
    """A dawid-skene campaign's label source computes its Dawid–Skene labels once per job run:
    x (ann1, ann2, root: 1) is read first; ann1 is then flagged; z (only ann1's vote, 1; the
    queue's decision 0) read after the flag is the queue's 0 — Dawid–Skene without ann1 gives
    z no label — not the 1 computed with ann1's vote before the flag (as before the fix)."""
    w = World(str(tmp_path / "s.db"), k=3)
    w.store.record(w.row.dataset, [Judgment("x", who, 1) for who in ("ann1", "ann2", "root")]
                   + [Judgment("z", "ann1", 1)])
    queue.enqueue(w.store, w.name, ["x", "z"], 3)
    q = queue_table
    with w.store.engine.begin() as conn:
        for item, v in (("x", 1), ("z", 0)):
            conn.execute(update(q).where((q.c.campaign == w.name) & (q.c.item == item)).values(
                value=v, resolved_at=now() - dt.timedelta(days=1)))
    src = jobs.QueueSource(w.store, w.name, w.row.annotator, "dawid-skene")
    assert src.label(0, "x") == 1
    w.flag("ann1")
    assert src.label(1, "z") == 0

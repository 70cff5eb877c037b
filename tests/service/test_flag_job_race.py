"""A job that read an item's decision just before a flag took it back records the flag's label,
not the one it read (issue 15): the job claims the campaign's label (a pending entry) before it
reads the queue, and the flag's transaction writes its decision into that claim, which the
job's record does not overwrite."""
from __future__ import annotations

from assay.labels.schema import Status
from assay.service import flags, jobs, queue, views

from service_helpers import csrf_of, make_service


def test_a_label_read_just_before_a_flag_is_not_recorded(tmp_path, monkeypatch):
    """k = 2: ann1 and ann2 decide every item of alice's output's first round. The job's
    label source reads the first item's decision, then (before the job records it) ann1 is
    flagged: every item reopens. The campaign's label of that item is a skip (marked on the
    scores as waiting), not the decision read; once root decides it again it is that
    decision. Before the fix the job recorded the label the flag took back (judged, while
    the item was open)."""
    svc = make_service(tmp_path, k=2)
    alice = svc.client("alice")
    r = alice.post("/api/submissions", headers={"X-CSRF-Token": csrf_of(alice, "/submit")},
                   data={"campaign": "kb", "system": "s"},
                   files={"file": ("o.csv", svc.output_csv(0))})
    sid = r.json()["id"]
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

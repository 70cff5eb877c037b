"""A finished system's estimate across a flag (issue 15): a label belongs to its item, and the
estimates are re-made from the label store at every view, so a draw whose label a flag took
back (its item reopened) is left out and marked on the scores (page and API) while it waits,
and counts again once a vote decides the item again; no replacement is drawn."""
from __future__ import annotations

from assay.service import flags, jobs, queue, views
from assay.service.auth import user_by_name

from service_helpers import make_service, submit_output


def test_a_finished_systems_draw_reopened_by_a_flag_is_marked_and_comes_back(tmp_path,
                                                                             monkeypatch):
    """k = 2: ann1 and ann2 label every item with the truth and alice's system finishes. ann1
    flagged: every item reopens (ann2's vote alone decides none). The scores say how many
    drawn items wait for a label again (the campaign's and the system's count; alice sees
    her system's), labels_used drops to 0; root votes as ann2 did on each: the labels come
    back (labels_used and the estimate as before the flag), the note is gone, the system's
    draws are the same. Before the fix nothing marked the missing labels."""
    svc = make_service(tmp_path, k=2)
    sid = submit_output(svc)
    alice = svc.client("alice")
    store, row = svc.store, svc.camp.row
    for _ in range(10):
        jobs.run_pending(store)
        if jobs.submission(store.engine, sid).state == "done":
            break
        for who in ("ann1", "ann2"):
            while (it := queue.next_item(store, row, who)) is not None:
                queue.vote(store, row, who, it, svc.truth.get(it, 0))
    assert jobs.submission(store.engine, sid).state == "done"
    root = user_by_name(store.engine, "root")
    first = views.scores_for(store, "kb", root)
    before = first.systems[0]
    draws = svc.camp.od.draws(row.id)
    decided = queue.decided(store, "kb")
    assert before.finished and before.labels_used == len(decided) > 0
    assert not any("wait" in x for x in first.notes)
    monkeypatch.setattr(flags, "flag_rule", lambda d, c: True)
    assert flags.check(store, row, "ann1")
    monkeypatch.undo()
    assert queue.decided(store, "kb") == {}
    n = len(decided)
    rep = views.scores_for(store, "kb", root)
    assert rep.systems[0].labels_used == 0
    assert any(f"{n} drawn items wait for a label again" in x for x in rep.notes)
    assert any(x.startswith(f"t1/s: {n} of its drawn items") for x in rep.notes)
    got = alice.get("/api/scores?campaign=kb").json()
    assert any(f"{n} drawn items wait" in x for x in got["notes"])
    assert any(x.startswith("t1/s: ") for x in got["notes"])
    assert f"{n} drawn items wait for a label again" in alice.get("/scores?campaign=kb").text
    assert views.relabelling(store, row) == {"": n, "t1/s": n}
    while (it := queue.next_item(store, row, "root")) is not None:
        queue.vote(store, row, "root", it, decided[it])
    assert queue.decided(store, "kb") == decided
    after = views.scores_for(store, "kb", root)
    assert not any("wait" in x for x in after.notes)
    assert views.relabelling(store, row) == {}
    s = after.systems[0]
    assert s.labels_used == before.labels_used and s.estimates == before.estimates
    assert svc.camp.od.draws(row.id).equals(draws)               # no replacement drawn

"""An item every unflagged annotator skipped closes *undecidable* though a flagged annotator never
answered it (issue 15): a flagged annotator is served nothing, so their answer is not awaited —
neither when the last unflagged annotator skips it (the vote) nor when the flag is written on
an item already skipped by the others (the flag's transaction), on SQLite and PostgreSQL."""
from __future__ import annotations

import json

from sqlalchemy import select

from assay.service import flags, queue
from assay.service.schema import audit_table

from flag_world import BACKENDS, World, store_url


@BACKENDS
def test_a_skip_closes_an_item_only_a_flagged_annotator_has_not_answered(tmp_path, request,
                                                                         backend):
    """k = 3, annotators ann1 and ann2; ann1 flagged. ann2 skips x: nobody left to ask (ann1
    is served nothing), x is undecidable and no job waits for it. Before the fix x stayed
    open, waiting for ann1."""
    w = World(store_url(request, tmp_path, backend), k=3)
    queue.enqueue(w.store, w.name, ["x"], 3)
    w.flag("ann1")
    assert queue.next_item(w.store, w.row, "ann1") is None
    queue.vote(w.store, w.row, "ann2", "x", None)
    assert queue.undecidable(w.store, w.name) == ["x"]
    assert queue.open_count(w.store, w.name) == (0, 1)


@BACKENDS
def test_a_flag_closes_the_items_left_waiting_only_for_its_annotator(tmp_path, request,
                                                                     monkeypatch, backend):
    """k = 3. x: ann2 skipped it, ann1 never answered (open, waiting for ann1). y: ann2
    skipped it, then ann1 labelled it 1 (open, one more vote needed). z: ann1 alone labelled
    it (open, ann2 still to answer). ann1 is flagged (flags.check, the rule made to hold): x
    and y close undecidable in the flag's transaction (audited, named in flag-redecided); z
    stays open for ann2. Before the fix x and y stayed open for ever."""
    w = World(store_url(request, tmp_path, backend), k=3)
    queue.enqueue(w.store, w.name, ["x", "y", "z"], 3)
    for who, item, v in (("ann2", "x", None), ("ann2", "y", None), ("ann1", "y", 1),
                         ("ann1", "z", 1)):
        queue.vote(w.store, w.row, who, item, v)
    assert queue.open_count(w.store, w.name) == (3, 0)
    monkeypatch.setattr(flags, "flag_rule", lambda d, c: True)
    assert flags.check(w.store, w.row, "ann1")
    monkeypatch.undo()
    assert queue.undecidable(w.store, w.name) == ["x", "y"]
    assert queue.open_count(w.store, w.name) == (1, 2)
    a = audit_table
    with w.store.engine.connect() as conn:
        rows = conn.execute(select(a.c.action, a.c.item, a.c.detail).where(
            (a.c.campaign == w.name) & a.c.action.in_(["undecidable", "flag-redecided"]))
            .order_by(a.c.id)).all()
    assert [(r.action, r.item) for r in rows if r.action == "undecidable"] == [
        ("undecidable", "x"), ("undecidable", "y")]
    redecided = [json.loads(r.detail) for r in rows if r.action == "flag-redecided"]
    assert [r["items"] for r in redecided] == [["x", "y"]]
    assert queue.next_item(w.store, w.row, "ann2") == "z"

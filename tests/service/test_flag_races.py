"""A flag and the votes under way (issue 15): a vote reads the annotator's flag under the
campaign's lock, so a vote posted while a flag is being written waits for it and is refused
(403, nothing written), on SQLite and on PostgreSQL."""
from __future__ import annotations

import pytest
from sqlalchemy import select

from assay.labels.schema import judgments_table
from assay.service import queue
from assay.service.queue import _lock_flag

from flag_world import BACKENDS, World, store_url
from service_helpers import waits_for


@BACKENDS
@pytest.mark.parametrize("what", ["vote", "undo"])
def test_a_vote_waits_for_a_flag_being_written_and_is_refused(tmp_path, request, backend,
                                                              what):
    """The flag is written (uncommitted) under the campaign's lock as flags.check writes it;
    a vote (an undo) posted then waits for it, reads it and is refused with nothing written.
    On PostgreSQL the vote read no flag (not committed yet) and was written at once when it
    took no lock before reading it."""
    w = World(store_url(request, tmp_path, backend), k=3)
    queue.enqueue(w.store, w.name, ["a", "b"], 3)
    queue.vote(w.store, w.row, "ann1", "a", 1)
    j = judgments_table

    def mine():
        with w.store.engine.connect() as conn:
            return conn.execute(select(j.c.item, j.c.value).where(
                (j.c.dataset == w.row.dataset) & (j.c.annotator == "ann1"))).all()
    before = mine()
    got = {}

    def act() -> None:
        try:
            if what == "vote":
                queue.vote(w.store, w.row, "ann1", "b", 0)
            else:
                queue.undo(w.store, w.row, "ann1")
            got["r"] = "written"
        except queue.QueueError as exc:
            got["r"] = exc
    def flag(conn) -> None:
        _lock_flag(conn, w.name)
        w.flag("ann1", conn)
    waits_for(w.store.engine, flag, act)         # the vote waits for the flag's transaction
    assert isinstance(got["r"], queue.QueueError), got
    assert got["r"].status == 403 and "'ann1' is flagged" in str(got["r"])
    assert mine() == before


@BACKENDS
def test_an_annotator_flagged_after_the_check_is_served_no_item(tmp_path, request, monkeypatch,
                                                                backend):
    """next_item's first check (flags.check) passes, then the annotator is flagged (as by
    another request, flags.check's write deleting their leases): the serve reads the flag
    again under the lock and leases nothing. Without that read ann1 was given an item and
    held its lease for 10 minutes though flagged."""
    from assay.service import flags
    from assay.service.schema import leases_table
    w = World(store_url(request, tmp_path, backend), k=3)
    queue.enqueue(w.store, w.name, ["a"], 3)
    real = flags.check

    def then_flagged(store, camp, annotator):
        got = real(store, camp, annotator)
        w.flag(annotator)
        return got
    monkeypatch.setattr(flags, "check", then_flagged)
    assert queue.next_item(w.store, w.row, "ann1") is None
    with w.store.engine.connect() as conn:
        assert conn.execute(select(leases_table.c.item).where(
            leases_table.c.campaign == w.name)).all() == []

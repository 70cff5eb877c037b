"""The flag rule's majority leaves out the labels of the other live-flagged annotators (issue 15):
their labels count in no decision, so they make no honest annotator look bad; the admin's
per-annotator rows (:func:`assay.service.quality.report`) count alike, a flagged annotator's
own row against the others' majority with their own labels, on SQLite and PostgreSQL."""
from __future__ import annotations

from assay.labels.store import Judgment
from assay.service import flags, quality

from flag_world import BACKENDS, World, store_url


@BACKENDS
def test_flagged_annotators_labels_make_no_honest_annotator_look_bad(tmp_path, request,
                                                                    backend):
    """20 items: g1 and g2 say 1, b1, b2 and b3 say 0. Counting every label the majority is 0
    and g1 disagrees on 20 of 20 (the rule holds); b1-b3 flagged, the majority is g1's and
    g2's: g1 disagrees on none and is not flagged by flags.check. b1's row: against g1, g2 and
    b1, 20 of 20 (before: 0 of 20, the flagged b2 and b3 made the majority). The one-statement
    count is the report's row for everyone. Before the fix g1 was flagged."""
    w = World(store_url(request, tmp_path, backend))
    items = [f"q{i}" for i in range(20)]
    w.store.record(w.row.dataset, [Judgment(i, who, v) for i in items for who, v in (
        ("g1", 1), ("g2", 1), ("b1", 0), ("b2", 0), ("b3", 0))])
    rows = {a.name: a for a in quality.report(w.store, w.row).annotators}
    assert (rows["g1"].disagreements, rows["g1"].compared, rows["g1"].flagged) == (20, 20, True)
    for b in ("b1", "b2", "b3"):
        w.flag(b)
    rows = {a.name: a for a in quality.report(w.store, w.row).annotators}
    assert (rows["g1"].disagreements, rows["g1"].compared, rows["g1"].flagged) == (0, 20, False)
    assert (rows["b1"].disagreements, rows["b1"].compared, rows["b1"].flagged) == (20, 20, True)
    with w.store.engine.connect() as conn:
        for a in rows.values():
            assert flags.disagreements(conn, w.row, a.name) == (a.disagreements, a.compared), a
    assert not flags.check(w.store, w.row, "g1")
    assert set(flags.flags(w.store.engine, w.name)) == {"b1", "b2", "b3"}
    assert flags.clear(w.store.engine, w.name, "b2", "root")     # b2's labels count again
    with w.store.engine.connect() as conn:                       # 2 against 1
        assert flags.disagreements(conn, w.row, "g1") == (0, 20)
    assert flags.clear(w.store.engine, w.name, "b3", "root")
    with w.store.engine.connect() as conn:                       # 2 against 2: no majority
        assert flags.disagreements(conn, w.row, "g1") == (0, 0)
